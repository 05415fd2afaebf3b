package kubelab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"ichor.lab/internal/ciliumlab"
)

// The Cilium and Calico cases of the cluster's Kubernetes API (ADR 0128 decisions 3 and 4; docs/lab.md, "The cluster's
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

// CNIFieldManager is the field manager of the stand-in's writes: Ichor's ichor-cni Job.
const CNIFieldManager = "ichor-cni"

// installCilium stands in for Ichor's ichor-cni Job (docs/lab.md, "The ichor-cni stand-in"): for
// each TalosCluster with spec.cni.preset cilium that names a sim cluster whose Kubernetes API the
// lab serves, it renders Cilium's objects from the stored values (the guide's values with
// spec.cni.cilium.values, as Helm would with Ichor's chart) and writes them as field manager
// ichor-cni. On a cluster without a CNI DaemonSet (the scenario's cni none, or flannel removed by
// E7's planned outage) that is the install: the DaemonSet then writes its CNI file on every node
// and the Nodes become Ready, as the agents starting would (networkModel). On a cluster that runs
// a Cilium it did not write (cilium-inline, cilium-helm) that is the takeover: the live ConfigMap
// cilium-config and DaemonSet cilium are replaced, each rendered Deployment created or replaced,
// and a hubble-relay or hubble-ui Deployment the values no longer enable deleted, as a Helm upgrade
// prunes. Idempotent: a cluster whose objects are already the stand-in's render is left alone.
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
		sc := c.Sim.Cluster(name)
		if sc == nil || sc.Kubernetes == nil {
			continue
		}
		running, err := c.cniDaemonSets(ctx)
		if err != nil {
			return err
		}
		var values map[string]any
		if tc.Spec.CNI.Cilium != nil {
			values = tc.Spec.CNI.Cilium.Values
		}
		objs := ciliumObjects(false, values, time.Now())
		switch {
		case len(running) == 0:
			for _, o := range objs {
				if err := c.Kube.Create(ctx, withManager(o.Collection), o.Object, nil); err != nil && !IsAlreadyExists(err) {
					return fmt.Errorf("cni stand-in: create %s: %w", o.What, err)
				}
			}
			c.logOnce("cni/"+name, "cni stand-in: Cilium installed in cluster "+name)
		case slices.Contains(running, 0): // cilium
			done, err := c.takenOver(ctx, objs)
			if err != nil || done {
				return err
			}
			if err := c.replaceCilium(ctx, objs); err != nil {
				return err
			}
			c.logOnce("cni-takeover/"+name, "cni stand-in: Cilium of cluster "+name+" taken over from spec.cni.cilium.values")
		}
	}
	return nil
}

func withManager(path string) string { return path + "?fieldManager=" + CNIFieldManager }

// liveObject is what the takeover reads of a live object: its data (a ConfigMap's) and managers.
type liveObject struct {
	Metadata struct {
		ManagedFields []struct {
			Manager string `json:"manager"`
		} `json:"managedFields"`
	} `json:"metadata"`
	Data map[string]string `json:"data"`
}

func (l liveObject) managedBy(manager string) bool {
	for _, f := range l.Metadata.ManagedFields {
		if f.Manager == manager {
			return true
		}
	}
	return false
}

// takenOver: the live ConfigMap cilium-config holds the render's data and it and the DaemonSet
// cilium were written by the stand-in.
func (c *Controller) takenOver(ctx context.Context, objs []KubeObject) (bool, error) {
	for _, o := range objs {
		if o.What != "configmap/cilium-config" && o.What != "daemonset/cilium" {
			continue
		}
		var live liveObject
		if err := c.Kube.Get(ctx, o.Collection+"/"+o.Name, &live); err != nil {
			if IsNotFound(err) {
				return false, nil
			}
			return false, fmt.Errorf("cni stand-in: read %s: %w", o.What, err)
		}
		if !live.managedBy(CNIFieldManager) {
			return false, nil
		}
		if o.What == "configmap/cilium-config" && !sameData(live.Data, o.Object["data"]) {
			return false, nil
		}
	}
	return true, nil
}

func sameData(live map[string]string, rendered any) bool {
	want, _ := rendered.(map[string]any)
	if len(live) != len(want) {
		return false
	}
	for k, v := range want {
		if s, _ := v.(string); live[k] != s {
			return false
		}
	}
	return true
}

// replaceCilium writes the render over the live objects (PUT, creating what is missing) and
// deletes the Hubble Deployments the render leaves out.
func (c *Controller) replaceCilium(ctx context.Context, objs []KubeObject) error {
	rendered := map[string]bool{}
	for _, o := range objs {
		rendered[o.What] = true
		// The takeover marks what it wrote, as a Helm upgrade labels what it owns: a render equal
		// to the live object (an inline manifest made from the same values) is still a write, so
		// that the object records the stand-in as its manager.
		if md, ok := o.Object["metadata"].(map[string]any); ok {
			ann, _ := md["annotations"].(map[string]any)
			if ann == nil {
				ann = map[string]any{}
			}
			ann["lab.ichor.maesh.dev/taken-over-by"] = CNIFieldManager
			md["annotations"] = ann
		}
		err := c.Kube.Do(ctx, http.MethodPut, withManager(o.Collection+"/"+o.Name), ContentJSON, o.Object, nil)
		if IsNotFound(err) {
			err = c.Kube.Create(ctx, withManager(o.Collection), o.Object, nil)
		}
		if err != nil {
			return fmt.Errorf("cni stand-in: replace %s: %w", o.What, err)
		}
	}
	for _, d := range []string{"hubble-relay", "hubble-ui"} {
		if rendered["deployment/"+d] {
			continue
		}
		err := c.Kube.Do(ctx, http.MethodDelete, Path("apps", "v1", "kube-system", "deployments", d), "", nil, nil)
		if err != nil && !IsNotFound(err) {
			return fmt.Errorf("cni stand-in: delete deployment/%s: %w", d, err)
		}
	}
	return nil
}

// cniFiles: the file each CNI's DaemonSet in kube-system writes into /etc/cni/net.d of every
// node, and whether it moves the others aside (Cilium's cni.exclusive, default true).
var cniFiles = []struct {
	daemonSet, file string
	exclusive       bool
}{
	{"cilium", "05-cilium.conflist", true},
	{"kube-flannel", "10-flannel.conflist", false},
	{"calico-node", "10-calico.conflist", false},
}

// cniDaemonSets lists the CNI DaemonSets of kube-system that cniFiles knows.
func (c *Controller) cniDaemonSets(ctx context.Context) ([]int, error) {
	var list struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := c.Kube.Get(ctx, Path("apps", "v1", "kube-system", "daemonsets", ""), &list); err != nil {
		return nil, fmt.Errorf("cni: list daemonsets: %w", err)
	}
	var out []int
	for i, f := range cniFiles {
		for _, d := range list.Items {
			if d.Metadata.Name == f.daemonSet {
				out = append(out, i)
			}
		}
	}
	return out, nil
}

// simNodeState is what networkModel reads of a node from talos-sim's control API.
type simNodeState struct {
	Name            string   `json:"name"`
	ScenarioCluster string   `json:"scenarioCluster"`
	Mode            string   `json:"mode"`
	Power           string   `json:"power"`
	Hostname        string   `json:"hostname"`
	CNIConfs        []string `json:"cniConfs"`
	NetworkReady    bool     `json:"networkReady"`
}

// networkModel stands in for the CNI pods and the kubelets of the sim clusters whose Kubernetes
// API the lab serves (docs/lab.md, "CNI files and Node readiness"): a CNI DaemonSet in kube-system
// writes its file on every node that is up and lacks it, and each Node's Ready condition follows
// a change of its node's network as containerd reports it (a CNI file in /etc/cni/net.d,
// talos-sim's cni.go): when the network goes, a Ready Node becomes NotReady with the kubelet's
// NetworkPluginNotReady message; when it comes, a Node NotReady for that reason becomes Ready. Only
// changes count: the scenario's seeded Nodes stay as seeded until their node's network changes
// (home-notready's NotReady Node runs flannel's file all along).
func (c *Controller) networkModel(ctx context.Context) error {
	if c.Sim == nil || c.Sim.Control == "" {
		return nil
	}
	served := false
	for _, sc := range c.Sim.Clusters {
		served = served || (sc.Kubernetes != nil && sc.Kubernetes.Nodes)
	}
	if !served {
		return nil
	}
	running, err := c.cniDaemonSets(ctx)
	if err != nil {
		return err
	}
	var nodes []simNodeState
	if err := simControl(ctx, http.MethodGet, c.Sim.Control+"/nodes", nil, &nodes); err != nil {
		return fmt.Errorf("cni: talos-sim nodes: %w", err)
	}
	for _, n := range nodes {
		sc := c.Sim.Cluster(n.ScenarioCluster)
		if sc == nil || sc.Kubernetes == nil || !sc.Kubernetes.Nodes || n.Mode != "configured" || n.Power != "up" {
			continue
		}
		// The node's network before this pass writes a file is its baseline: when the lab-controller
		// first sees a node in the pass that also writes its first CNI file (the adoption's
		// TalosCluster came before the controller's first pass, as on a loaded machine), taking the
		// state after the write as the baseline would leave the Node NotReady for ever.
		c.mu.Lock()
		if c.network == nil {
			c.network = map[string]bool{}
		}
		if _, seen := c.network[n.Name]; !seen {
			c.network[n.Name] = n.NetworkReady
		}
		c.mu.Unlock()
		for _, i := range running {
			f := cniFiles[i]
			if slices.Contains(n.CNIConfs, f.file) {
				continue
			}
			var st simNodeState
			body := map[string]any{"write": f.file, "exclusive": f.exclusive}
			if err := simControl(ctx, http.MethodPost, c.Sim.Control+"/nodes/"+n.Name+"/cni", body, &st); err != nil {
				return fmt.Errorf("cni: %s writes %s on %s: %w", f.daemonSet, f.file, n.Name, err)
			}
			n = st
			c.logOnce("cni-file/"+n.Name+"/"+f.file, fmt.Sprintf("cni: %s wrote %s on %s", f.daemonSet, f.file, n.Name))
		}
		c.mu.Lock()
		last := c.network[n.Name]
		c.mu.Unlock()
		if last == n.NetworkReady {
			continue
		}
		if err := c.nodeNetwork(ctx, n); err != nil {
			return err // the change is seen again next pass
		}
		c.mu.Lock()
		c.network[n.Name] = n.NetworkReady
		c.mu.Unlock()
	}
	return nil
}

// nodeNetwork sets the Ready condition of n's Node from n's network, as its kubelet would.
func (c *Controller) nodeNetwork(ctx context.Context, n simNodeState) error {
	var node struct {
		Status struct {
			Conditions []map[string]any `json:"conditions"`
		} `json:"status"`
	}
	path := Path("", "v1", "", "nodes", n.Hostname)
	if err := c.Kube.Get(ctx, path, &node); err != nil {
		if IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("cni: node %s: %w", n.Hostname, err)
	}
	changed := false
	ts := time.Now().UTC().Format(time.RFC3339)
	for _, cond := range node.Status.Conditions {
		if cond["type"] != "Ready" {
			continue
		}
		msg, _ := cond["message"].(string)
		switch {
		case cond["status"] == "True" && !n.NetworkReady:
			cond["status"], cond["reason"], cond["message"] = "False", NodeReasonNotReady, NodeNotReadyMsg
			c.logOnce("cni/"+n.Hostname, "cni: node "+n.Hostname+" NotReady: no CNI configuration")
		case cond["status"] != "True" && n.NetworkReady && strings.Contains(msg, "NetworkPluginNotReady"):
			cond["status"], cond["reason"], cond["message"] = "True", NodeReasonReady, "kubelet is posting ready status"
			c.logOnce("cni/"+n.Hostname, "cni: node "+n.Hostname+" Ready: "+strings.Join(n.CNIConfs, ", "))
		default:
			continue
		}
		cond["lastTransitionTime"], cond["lastHeartbeatTime"] = ts, ts
		changed = true
	}
	if !changed {
		return nil
	}
	patch := map[string]any{"status": map[string]any{"conditions": node.Status.Conditions}}
	if err := c.Kube.MergePatch(ctx, path+"/status", patch, nil); err != nil {
		return fmt.Errorf("cni: node %s status: %w", n.Hostname, err)
	}
	return nil
}

// simControl calls talos-sim's control API (loopback), bounded.
func simControl(ctx context.Context, method, url string, body, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close() //nolint:errcheck
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, strings.TrimSpace(string(data)))
	}
	return json.Unmarshal(data, out)
}
