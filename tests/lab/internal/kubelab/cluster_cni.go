package kubelab

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"ichor.lab/internal/ciliumlab"
)

// The Cilium and Calico cases of the cluster's Kubernetes API (issue 13; docs/lab.md, "The cluster's
// Kubernetes API"): the objects helm-record's building blocks make (ciliumlab), seeded like the
// others.

// ciliumObjects are the Talos guide's Cilium with `values` over the guide's values: ConfigMap
// cilium-config, DaemonSet cilium, the Deployments; with record, marked as helm install marks them
// and with the Helm release record of `values` that Helm's own storage code writes.
func ciliumObjects(record bool, values map[string]any, now time.Time) []KubeObject {
	const ns = "kube-system"
	var helm *ciliumlab.HelmMeta
	if record {
		helm = &ciliumlab.HelmMeta{Release: "cilium", Namespace: ns}
	}
	objs := ciliumlab.Render(ciliumlab.Merge(ciliumlab.GuideValues(), values), ns, helm)
	var out []KubeObject
	add := func(what, collection, name string, obj runtime.Object) {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			panic(fmt.Sprintf("kubelab: %s: %v", what, err)) // the objects are ours: a bug
		}
		delete(m, "status")
		out = append(out, KubeObject{What: what, Collection: collection, Name: name, Object: m})
	}
	objs.Config.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
	add("configmap/cilium-config", Path("", "v1", ns, "configmaps", ""), objs.Config.Name, objs.Config)
	objs.Agent.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"}
	add("daemonset/cilium", Path("apps", "v1", ns, "daemonsets", ""), objs.Agent.Name, objs.Agent)
	for _, d := range objs.Deployments {
		d.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}
		add("deployment/"+d.Name, Path("apps", "v1", ns, "deployments", ""), d.Name, d)
	}
	if record {
		mem := &memorySecrets{}
		if _, err := ciliumlab.WriteRecord(mem, ciliumlab.Record{
			Release: "cilium", Namespace: ns, Chart: "cilium", ChartVersion: ciliumlab.ChartVersion,
			Values: values,
		}, now); err != nil {
			panic(fmt.Sprintf("kubelab: the Helm record: %v", err))
		}
		for _, s := range mem.items {
			s.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}
			add("secret/"+s.Name, Path("", "v1", ns, "secrets", ""), s.Name, s)
		}
	}
	return out
}

// memorySecrets holds the Secrets Helm's storage driver writes, for seeding; only the calls a
// first revision makes (List to find none, Create) are served.
type memorySecrets struct {
	corev1client.SecretInterface
	items []*corev1.Secret
}

func (m *memorySecrets) List(context.Context, metav1.ListOptions) (*corev1.SecretList, error) {
	return &corev1.SecretList{}, nil
}

func (m *memorySecrets) Create(_ context.Context, s *corev1.Secret, _ metav1.CreateOptions) (*corev1.Secret, error) {
	m.items = append(m.items, s.DeepCopy())
	return s, nil
}

// calicoObjects are what the Calico manifest (calico.yaml) leaves in kube-system that detection
// reads: DaemonSet calico-node (k8s-app calico-node) and ConfigMap calico-config.
func calicoObjects(nodes, ready int) []KubeObject {
	const ns = "kube-system"
	labels := map[string]any{"k8s-app": "calico-node"}
	ds := map[string]any{
		"apiVersion": "apps/v1", "kind": "DaemonSet",
		"metadata": map[string]any{"name": "calico-node", "namespace": ns, "labels": labels},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{
					"hostNetwork": true,
					"containers": []any{map[string]any{
						"name": "calico-node", "image": "docker.io/calico/node:v3.29.1",
						"env": []any{map[string]any{"name": "CALICO_IPV4POOL_CIDR", "value": "10.244.0.0/16"}},
					}},
				},
			},
		},
	}
	return []KubeObject{
		{
			What: "configmap/calico-config", Collection: Path("", "v1", ns, "configmaps", ""), Name: "calico-config",
			Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "calico-config", "namespace": ns},
				"data":     map[string]any{"calico_backend": "bird", "veth_mtu": "0"},
			},
		},
		{
			What: "daemonset/calico-node", Collection: Path("apps", "v1", ns, "daemonsets", ""), Name: "calico-node",
			Object: ds,
			Status: map[string]any{
				"currentNumberScheduled": nodes, "desiredNumberScheduled": nodes, "numberMisscheduled": 0,
				"numberReady": ready, "numberAvailable": ready, "updatedNumberScheduled": nodes, "observedGeneration": 1,
			},
		},
	}
}

// installCilium stands in for Ichor's ichor-cni Job on a cluster without a CNI (issue 13, "No
// CNI"): once a TalosCluster with spec.cni.preset cilium names a sim cluster whose kubernetes block
// says cni none, it creates the Cilium objects (the guide's, with spec.cni.cilium.values) and
// makes every NotReady Node of that cluster Ready, as the agents starting would. Idempotent.
func (c *Controller) installCilium(ctx context.Context, clusters []TalosCluster) error {
	if c.Sim == nil {
		return nil
	}
	for _, tc := range clusters {
		if tc.Spec.CNI == nil || tc.Spec.CNI.Preset != "cilium" {
			continue
		}
		name := tc.Spec.ClusterName
		if name == "" {
			name = tc.Metadata.Name
		}
		var sc *SimCluster
		for i := range c.Sim.Clusters {
			if c.Sim.Clusters[i].Name == name && c.Sim.Clusters[i].Kubernetes != nil &&
				c.Sim.Clusters[i].Kubernetes.CNI == "none" {
				sc = &c.Sim.Clusters[i]
			}
		}
		if sc == nil {
			continue
		}
		var values map[string]any
		if tc.Spec.CNI.Cilium != nil {
			values = tc.Spec.CNI.Cilium.Values
		}
		for _, o := range ciliumObjects(false, values, time.Now()) {
			if err := c.Kube.Create(ctx, o.Collection, o.Object, nil); err != nil && !IsAlreadyExists(err) {
				return fmt.Errorf("cni stand-in: create %s: %w", o.What, err)
			}
		}
		for _, n := range c.Sim.Nodes {
			if n.Cluster != sc.Name || n.KubeNode != "notready" {
				continue
			}
			var node struct {
				Status struct {
					Conditions []map[string]any `json:"conditions"`
				} `json:"status"`
			}
			path := Path("", "v1", "", "nodes", n.Hostname)
			if err := c.Kube.Get(ctx, path, &node); err != nil {
				return fmt.Errorf("cni stand-in: node %s: %w", n.Hostname, err)
			}
			changed := false
			ts := time.Now().UTC().Format(time.RFC3339)
			for _, cond := range node.Status.Conditions {
				if cond["type"] == "Ready" && cond["status"] != "True" {
					cond["status"], cond["reason"], cond["message"] = "True", NodeReasonReady, "kubelet is posting ready status"
					cond["lastTransitionTime"], cond["lastHeartbeatTime"] = ts, ts
					changed = true
				}
			}
			if !changed {
				continue
			}
			if err := c.Kube.MergePatch(ctx, path+"/status", map[string]any{"status": map[string]any{"conditions": node.Status.Conditions}}, nil); err != nil {
				return fmt.Errorf("cni stand-in: node %s status: %w", n.Hostname, err)
			}
			c.logOnce("cni/"+n.Hostname, "cni stand-in: Cilium installed, node "+n.Hostname+" Ready")
		}
	}
	return nil
}
