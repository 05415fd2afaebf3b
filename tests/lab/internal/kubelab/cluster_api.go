package kubelab

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/constants"
)

// The cluster's own Kubernetes API. A scenario cluster with a kubernetes block (docs/lab.md, "The
// cluster's Kubernetes API") has the lab's apiserver stand in for the API its control planes
// serve: lab-seed creates there what a running Talos cluster's API holds and the whole-cluster
// adoption reads: a Node per node (what the kubelet registers and reports) and, with flannel,
// the objects Talos's bootstrap manifests create for it (reference/cni.md §1.1). No kubelet,
// scheduler or controller-manager runs, so these objects stay as written.

// KubeObject is one object of a cluster's API: created at Collection, then (when Status is set)
// its status subresource merge-patched, so a rerun converges.
type KubeObject struct {
	What       string         `json:"what"` // "node/home-cp-1"
	Collection string         `json:"collection"`
	Name       string         `json:"name"`
	Object     map[string]any `json:"object"`
	Status     map[string]any `json:"status,omitempty"`
}

// Reasons and message of a NotReady Node: the kubelet's, when the runtime's network is not ready
// (reference/cni.md §1.1, "No CNI").
const (
	NodeReasonReady    = "KubeletReady"
	NodeReasonNotReady = "KubeletNotReady"
	NodeNotReadyMsg    = "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"
)

// defaultPodSubnet is Talos's default cluster.network.podSubnets (machinery names the constant
// DefaultIPv4PodNet up to v1.13 and DefaultIPv4PodCIDR from v1.14, so it is written out here).
const defaultPodSubnet = "10.244.0.0/16"

// Flannel's object names on Talos (reference/cni.md §1.1).
const (
	FlannelNamespace = "kube-system"
	FlannelDaemonSet = "kube-flannel"
	FlannelConfigMap = "kube-flannel-cfg"
	FlannelAccount   = "flannel"
)

// ClusterAPIObjects are the objects of every sim cluster with a kubernetes block, in creation
// order; removeCRDs is true when one of them says crds: false. now stamps the Node conditions.
func ClusterAPIObjects(sim *Sim, now time.Time) (objs []KubeObject, removeCRDs bool) {
	for _, c := range sim.Clusters {
		k := c.Kubernetes
		if k == nil {
			continue
		}

		if !k.CRDs {
			removeCRDs = true
		}

		nodes, ready := 0, 0

		for i, n := range sim.Nodes {
			if n.Cluster != c.Name || !k.Nodes || n.KubeNode == "" || n.KubeNode == "absent" || n.Mode != "configured" {
				continue
			}

			objs = append(objs, kubeNode(&c, &n, podCIDR(i, len(sim.Nodes)), now))
			nodes++

			if n.KubeNode == "ready" {
				ready++
			}
		}

		switch k.CNI {
		case "flannel":
			objs = append(objs, flannelObjects(nodes, ready)...)
		case "cilium-inline", "cilium-helm":
			objs = append(objs, ciliumObjects(k.CNI == "cilium-helm", k.CiliumValues, now)...)
		case "calico":
			objs = append(objs, calicoObjects(nodes, ready)...)
		}
	}

	return objs, removeCRDs
}

// podCIDR is the pod range of the index-th of total nodes in defaultPodSubnet, as
// kube-controller-manager's allocator hands them out: a /24 each (its default
// --node-cidr-mask-size) while 256 fit, else a /26 each (the mask a cluster of up to 1,024 nodes
// on a /16 is run with), so that the bench's 1,000-node cluster gets valid, distinct ranges.
func podCIDR(index, total int) string {
	if total <= 256 {
		return fmt.Sprintf("10.244.%d.0/24", index)
	}

	return fmt.Sprintf("10.244.%d.%d/26", index/4, index%4*64)
}

// kubeNode is the Node the kubelet of n registers: named after the hostname (Talos's nodename),
// labels and taint as Talos's kubelet sets them, InternalIP the node's address, pod range cidr.
func kubeNode(c *SimCluster, n *SimNode, cidr string, now time.Time) KubeObject {
	labels := map[string]any{
		"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
		"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "kubernetes.io/hostname": n.Hostname,
	}
	spec := map[string]any{
		"podCIDR":  cidr,
		"podCIDRs": []any{cidr},
	}

	if n.Role == "controlplane" {
		labels["node-role.kubernetes.io/control-plane"] = ""
		labels["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
		spec["taints"] = []any{map[string]any{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}}
	}

	ts := now.UTC().Format(time.RFC3339)
	cond := func(typ, status, reason, msg string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg, "lastHeartbeatTime": ts, "lastTransitionTime": ts}
	}
	readyCond := cond("Ready", "True", NodeReasonReady, "kubelet is posting ready status")

	if n.KubeNode == "notready" {
		readyCond = cond("Ready", "False", NodeReasonNotReady, NodeNotReadyMsg)
	}

	resources := map[string]any{"cpu": "4", "memory": "8135072Ki", "pods": "110", "ephemeral-storage": "101430960Ki"}
	status := map[string]any{
		"conditions": []any{
			cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			readyCond,
		},
		"addresses": []any{
			map[string]any{"type": "InternalIP", "address": n.Address},
			map[string]any{"type": "Hostname", "address": n.Hostname},
		},
		"capacity":    resources,
		"allocatable": resources,
		"nodeInfo": map[string]any{
			"kubeletVersion":          c.KubernetesVersion,
			"kubeProxyVersion":        c.KubernetesVersion,
			"osImage":                 "Talos (" + n.TalosVersion + ")",
			"kernelVersion":           constants.DefaultKernelVersion,
			"containerRuntimeVersion": "containerd://" + constants.DefaultContainerdVersion,
			"operatingSystem":         "linux",
			"architecture":            "amd64",
			"machineID":               strings.ReplaceAll(n.UUID, "-", ""),
			"systemUUID":              n.UUID,
			"bootID":                  n.UUID,
		},
	}

	metadata := map[string]any{"name": n.Hostname, "labels": labels}
	if c.Kubernetes != nil && c.Kubernetes.CNI == "flannel" {
		// flannel's kube subnet manager annotates each Node it runs on; nothing removes the
		// annotations when flannel goes (E7: the trace of a flannel that ran).
		metadata["annotations"] = map[string]any{
			"flannel.alpha.coreos.com/backend-type":        "vxlan",
			"flannel.alpha.coreos.com/kube-subnet-manager": "true",
			"flannel.alpha.coreos.com/public-ip":           n.Address,
		}
	}

	return KubeObject{
		What:       "node/" + n.Hostname,
		Collection: Path("", "v1", "", "nodes", ""),
		Name:       n.Hostname,
		Object: map[string]any{
			"apiVersion": "v1", "kind": "Node",
			"metadata": metadata,
			"spec":     spec,
		},
		Status: status,
	}
}

// flannelObjects are what Talos's bootstrap manifest 05-flannel creates (reference/cni.md §1.1):
// ServiceAccount, ClusterRole and ClusterRoleBinding flannel, ConfigMap kube-flannel-cfg and
// DaemonSet kube-flannel in kube-system, labelled k8s-app=flannel. The DaemonSet's status says
// one pod per Node, ready on the Ready ones (no controller would write it).
func flannelObjects(nodes, ready int) []KubeObject {
	image := "ghcr.io/siderolabs/flannel:v" + constants.FlannelVersion
	app := map[string]any{"k8s-app": "flannel"}
	node := map[string]any{"k8s-app": "flannel", "tier": "node"}
	meta := func(name string, labels map[string]any, namespaced bool) map[string]any {
		m := map[string]any{"name": name, "labels": labels}
		if namespaced {
			m["namespace"] = FlannelNamespace
		}

		return m
	}
	netConf := fmt.Sprintf(`{
  "Network": "%s",
  "EnableNFTables": true,
  "Backend": {
    "Type": "vxlan",
    "Port": 4789
  }
}`, defaultPodSubnet)
	cniConf := `{
  "name": "cbr0",
  "cniVersion": "1.0.0",
  "plugins": [
    {
      "type": "flannel",
      "delegate": {
        "hairpinMode": true,
        "isDefaultGateway": true
      }
    },
    {
      "type": "portmap",
      "capabilities": {
        "portMappings": true
      }
    }
  ]
}`
	cfgVolume := map[string]any{"name": "flannel-cfg", "mountPath": "/etc/kube-flannel/"}
	daemonSet := map[string]any{
		"apiVersion": "apps/v1", "kind": "DaemonSet",
		"metadata": meta(FlannelDaemonSet, node, true),
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": node},
			"template": map[string]any{
				"metadata": map[string]any{"labels": node},
				"spec": map[string]any{
					"hostNetwork":        true,
					"priorityClassName":  "system-node-critical",
					"serviceAccountName": FlannelAccount,
					"tolerations": []any{
						map[string]any{"effect": "NoSchedule", "operator": "Exists"},
						map[string]any{"effect": "NoExecute", "operator": "Exists"},
					},
					"initContainers": []any{map[string]any{
						"name": "install-config", "image": image, "command": []any{"cp"},
						"args":         []any{"-f", "/etc/kube-flannel/cni-conf.json", "/etc/cni/net.d/10-flannel.conflist"},
						"volumeMounts": []any{map[string]any{"name": "cni", "mountPath": "/etc/cni/net.d"}, cfgVolume},
					}},
					"containers": []any{map[string]any{
						"name": "kube-flannel", "image": image, "command": []any{"/opt/bin/flanneld"},
						"args": []any{"--ip-masq", "--kube-subnet-mgr"},
						"env": []any{
							map[string]any{"name": "POD_NAME", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.name"}}},
							map[string]any{"name": "POD_NAMESPACE", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.namespace"}}},
							map[string]any{"name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1"},
							map[string]any{"name": "KUBERNETES_SERVICE_PORT", "value": fmt.Sprint(constants.DefaultKubePrismPort)},
						},
						"resources":       map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "50Mi"}},
						"securityContext": map[string]any{"privileged": false, "capabilities": map[string]any{"add": []any{"NET_ADMIN", "NET_RAW"}}},
						"volumeMounts":    []any{map[string]any{"name": "run", "mountPath": "/run/flannel"}, cfgVolume},
					}},
					"volumes": []any{
						map[string]any{"name": "run", "hostPath": map[string]any{"path": "/run/flannel"}},
						map[string]any{"name": "cni", "hostPath": map[string]any{"path": "/etc/cni/net.d"}},
						map[string]any{"name": "flannel-cfg", "configMap": map[string]any{"name": FlannelConfigMap}},
					},
				},
			},
		},
	}
	dsStatus := map[string]any{
		"currentNumberScheduled": nodes, "desiredNumberScheduled": nodes, "numberMisscheduled": 0,
		"numberReady": ready, "numberAvailable": ready, "updatedNumberScheduled": nodes, "observedGeneration": 1,
	}

	if nodes > ready {
		dsStatus["numberUnavailable"] = nodes - ready
	}

	return []KubeObject{
		{
			What: "serviceaccount/" + FlannelAccount, Collection: Path("", "v1", FlannelNamespace, "serviceaccounts", ""), Name: FlannelAccount,
			Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(FlannelAccount, app, true)},
		},
		{
			What: "clusterrole/" + FlannelAccount, Collection: "/apis/rbac.authorization.k8s.io/v1/clusterroles", Name: FlannelAccount,
			Object: map[string]any{
				"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": meta(FlannelAccount, app, false),
				"rules": []any{
					map[string]any{"apiGroups": []any{""}, "resources": []any{"pods", "nodes", "namespaces"}, "verbs": []any{"get", "list", "watch"}},
					map[string]any{"apiGroups": []any{""}, "resources": []any{"nodes/status"}, "verbs": []any{"patch"}},
				},
			},
		},
		{
			What: "clusterrolebinding/" + FlannelAccount, Collection: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", Name: FlannelAccount,
			Object: map[string]any{
				"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": meta(FlannelAccount, app, false),
				"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": FlannelAccount},
				"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": FlannelAccount, "namespace": FlannelNamespace}},
			},
		},
		{
			What: "configmap/" + FlannelConfigMap, Collection: Path("", "v1", FlannelNamespace, "configmaps", ""), Name: FlannelConfigMap,
			Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(FlannelConfigMap, node, true),
				"data": map[string]any{"cni-conf.json": cniConf, "net-conf.json": netConf},
			},
		},
		{
			What: "daemonset/" + FlannelDaemonSet, Collection: Path("apps", "v1", FlannelNamespace, "daemonsets", ""), Name: FlannelDaemonSet,
			Object: daemonSet, Status: dsStatus,
		},
	}
}

// ApplyClusterAPI creates the objects (an existing one is left as it is) and merge-patches each
// status, then, when removeCRDs, deletes every CustomResourceDefinition of the Ichor group and
// waits until the apiserver no longer has them.
func ApplyClusterAPI(ctx context.Context, c *Client, objs []KubeObject, removeCRDs bool, logf func(string, ...any)) error {
	for _, o := range objs {
		err := c.Create(ctx, o.Collection, o.Object, nil)

		switch {
		case err == nil:
			logf("created %s", o.What)
		case IsAlreadyExists(err):
			logf("exists  %s", o.What)
		default:
			return fmt.Errorf("create %s: %w", o.What, err)
		}

		if o.Status != nil {
			if err := c.MergePatch(ctx, o.Collection+"/"+o.Name+"/status", map[string]any{"status": o.Status}, nil); err != nil {
				return fmt.Errorf("status of %s: %w", o.What, err)
			}
		}
	}

	if removeCRDs {
		return removeIchorCRDs(ctx, c, logf)
	}

	return nil
}

const crdCollection = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

func removeIchorCRDs(ctx context.Context, c *Client, logf func(string, ...any)) error {
	var list struct {
		Items []struct {
			Metadata ObjectMeta `json:"metadata"`
			Spec     struct {
				Group string `json:"group"`
				Names struct {
					Plural string `json:"plural"`
				} `json:"names"`
				Versions []struct {
					Name   string `json:"name"`
					Served bool   `json:"served"`
				} `json:"versions"`
			} `json:"spec"`
		} `json:"items"`
	}

	if err := c.Get(ctx, crdCollection, &list); err != nil {
		return fmt.Errorf("list CRDs: %w", err)
	}

	var names []string

	for _, crd := range list.Items {
		if crd.Spec.Group != Group {
			continue
		}

		names = append(names, crd.Metadata.Name)

		// A CRD deleted while the apiserver still sets up its storage (just after kubectl apply
		// made it) fails its finalizer with "storage is (re)initializing", which then retries
		// with a growing backoff, past this program's deadline. So each served version must
		// answer a list first.
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}

			path := "/apis/" + Group + "/" + v.Name + "/" + crd.Spec.Names.Plural
			for c.Get(ctx, path, nil) != nil {
				select {
				case <-ctx.Done():
					return fmt.Errorf("CRD %s never served %s: %w", crd.Metadata.Name, path, ctx.Err())
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
	}

	for _, name := range names {
		if err := c.Do(ctx, http.MethodDelete, crdCollection+"/"+name, "", nil, nil); err != nil && !IsNotFound(err) {
			return fmt.Errorf("delete CRD %s: %w", name, err)
		}

		logf("deleted crd/%s (kubernetes.crds: false)", name)
	}

	// the apiextensions server finalises a deleted CRD itself (no controller-manager needed)
	for _, name := range names {
		for {
			err := c.Get(ctx, crdCollection+"/"+name, nil)
			if IsNotFound(err) {
				break
			}

			if err != nil && ctx.Err() != nil {
				return fmt.Errorf("CRD %s not gone: %w", name, err)
			}

			select {
			case <-ctx.Done():
				return fmt.Errorf("CRD %s not gone: %w", name, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}

	return nil
}
