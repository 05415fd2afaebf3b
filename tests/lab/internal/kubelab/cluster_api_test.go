package kubelab

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"
)

func homeSim() *Sim {
	node := func(name, addr, role, kube string) SimNode {
		return SimNode{Name: name, Address: addr, Cluster: "home", Role: role, Mode: "configured", Hostname: name,
			UUID: "0c1d-" + name, TalosVersion: "v1.13.9", KubeNode: kube}
	}

	return &Sim{
		Clusters: []SimCluster{
			{Name: "home", KubernetesVersion: "v1.34.4", Kubernetes: &SimKubernetes{Nodes: true, CRDs: true, CNI: "flannel"}},
			{Name: "prod", KubernetesVersion: "v1.34.4", Ichor: true},
		},
		Nodes: []SimNode{
			node("home-cp-1", "127.0.0.51", "controlplane", "ready"),
			node("home-w-1", "127.0.0.54", "worker", "notready"),
			node("home-w-2", "127.0.0.55", "worker", "absent"),
			{Name: "prod-cp-1", Address: "127.0.0.11", Cluster: "prod", Role: "controlplane", Mode: "configured", Hostname: "prod-cp-1"},
		},
	}
}

// field digs a JSON path out of an object (after a JSON round trip, as the apiserver gets it).
func field(t *testing.T, obj any, path ...string) any {
	t.Helper()

	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}

	var cur any
	if err := json.Unmarshal(b, &cur); err != nil {
		t.Fatal(err)
	}

	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}

		cur = m[p]
	}

	return cur
}

func condition(t *testing.T, status map[string]any, typ string) map[string]any {
	t.Helper()

	for _, c := range field(t, status, "conditions").([]any) {
		if m := c.(map[string]any); m["type"] == typ {
			return m
		}
	}

	t.Fatalf("no %s condition", typ)

	return nil
}

func TestClusterAPIObjects(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	objs, removeCRDs := ClusterAPIObjects(homeSim(), now)

	var whats []string
	for _, o := range objs {
		whats = append(whats, o.What)
	}

	// no Node for the absent one nor for a cluster without a kubernetes block
	want := "node/home-cp-1 node/home-w-1 serviceaccount/flannel clusterrole/flannel clusterrolebinding/flannel configmap/kube-flannel-cfg daemonset/kube-flannel"
	if got := strings.Join(whats, " "); got != want || removeCRDs {
		t.Fatalf("objects %s (removeCRDs %v), want %s", got, removeCRDs, want)
	}

	cp, w := objs[0], objs[1]
	if cp.Collection != "/api/v1/nodes" || cp.Name != "home-cp-1" || field(t, cp.Object, "kind") != "Node" {
		t.Errorf("cp node %+v", cp)
	}

	labels := field(t, cp.Object, "metadata", "labels").(map[string]any)
	if _, ok := labels["node-role.kubernetes.io/control-plane"]; !ok || labels["kubernetes.io/hostname"] != "home-cp-1" {
		t.Errorf("cp labels %v", labels)
	}

	if _, ok := field(t, w.Object, "metadata", "labels").(map[string]any)["node-role.kubernetes.io/control-plane"]; ok {
		t.Errorf("worker has the control-plane role label")
	}

	if r := condition(t, cp.Status, "Ready"); r["status"] != "True" || r["lastTransitionTime"] != "2026-12-01T12:00:00Z" {
		t.Errorf("cp Ready %v", r)
	}

	if r := condition(t, w.Status, "Ready"); r["status"] != "False" || r["reason"] != "KubeletNotReady" || !strings.Contains(r["message"].(string), "NetworkPluginNotReady") {
		t.Errorf("worker Ready %v", r)
	}

	if got := field(t, cp.Status, "nodeInfo", "kubeletVersion"); got != "v1.34.4" {
		t.Errorf("kubeletVersion %v", got)
	}

	addrs := field(t, w.Status, "addresses").([]any)
	if a := addrs[0].(map[string]any); a["type"] != "InternalIP" || a["address"] != "127.0.0.54" {
		t.Errorf("addresses %v", addrs)
	}

	ds := objs[len(objs)-1]
	if ds.Collection != "/apis/apps/v1/namespaces/kube-system/daemonsets" || field(t, ds.Object, "metadata", "labels", "k8s-app") != "flannel" {
		t.Errorf("daemonset %+v", ds)
	}

	if got := field(t, ds.Status, "desiredNumberScheduled"); got != 2.0 || field(t, ds.Status, "numberReady") != 1.0 || field(t, ds.Status, "numberUnavailable") != 1.0 {
		t.Errorf("daemonset status %v", ds.Status)
	}

	cm := objs[len(objs)-2]
	if net := field(t, cm.Object, "data", "net-conf.json").(string); !strings.Contains(net, `"Network": "10.244.0.0/16"`) || !strings.Contains(net, `"Type": "vxlan"`) {
		t.Errorf("net-conf.json %s", net)
	}

	// crds: false asks for their removal; cni: none leaves flannel out
	sim := homeSim()
	sim.Clusters[0].Kubernetes = &SimKubernetes{Nodes: true, CRDs: false, CNI: "none"}

	objs, removeCRDs = ClusterAPIObjects(sim, now)
	if len(objs) != 2 || !removeCRDs {
		t.Errorf("cni none, crds false: %d objects, removeCRDs %v", len(objs), removeCRDs)
	}
}

// TestPodCIDR: a /24 each while 256 nodes fit in 10.244.0.0/16, a /26 each above, every range
// distinct and inside the /16 up to 1,024 nodes (the bench's 1,000-node cluster).
func TestPodCIDR(t *testing.T) {
	if got := podCIDR(255, 256); got != "10.244.255.0/24" {
		t.Fatalf("podCIDR(255, 256) = %s", got)
	}

	_, pods, _ := net.ParseCIDR(defaultPodSubnet)
	seen := map[string]bool{}

	for i := 0; i < 1024; i++ {
		c := podCIDR(i, 1000)

		ip, n, err := net.ParseCIDR(c)
		if err != nil || !pods.Contains(ip) || n.IP.String() != ip.String() || seen[c] {
			t.Fatalf("podCIDR(%d, 1000) = %s: invalid, outside %s or repeated (%v)", i, c, defaultPodSubnet, err)
		}

		if ones, _ := n.Mask.Size(); ones != 26 {
			t.Fatalf("podCIDR(%d, 1000) = %s, not a /26", i, c)
		}

		seen[c] = true
	}
}
