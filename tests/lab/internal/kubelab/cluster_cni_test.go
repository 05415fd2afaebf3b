package kubelab

import (
	"testing"
	"time"
)

func TestClusterAPICNIObjects(t *testing.T) {
	whats := func(cni string, values map[string]any) map[string]KubeObject {
		sim := &Sim{Clusters: []SimCluster{{Name: "home", Kubernetes: &SimKubernetes{Nodes: true, CRDs: true, CNI: cni, CiliumValues: values}}}}
		objs, _ := ClusterAPIObjects(sim, time.Now())
		out := map[string]KubeObject{}
		for _, o := range objs {
			out[o.What] = o
		}
		return out
	}
	relay := map[string]any{"hubble": map[string]any{"relay": map[string]any{"enabled": true}}}
	inline := whats("cilium-inline", relay)
	for _, w := range []string{"configmap/cilium-config", "daemonset/cilium", "deployment/cilium-operator", "deployment/hubble-relay"} {
		if _, ok := inline[w]; !ok {
			t.Errorf("cilium-inline: no %s", w)
		}
	}
	if data := inline["configmap/cilium-config"].Object["data"].(map[string]any); data["ipam"] != "kubernetes" {
		t.Errorf("cilium-inline: ipam %v, want the guide's kubernetes", data["ipam"])
	}
	for w := range inline {
		if len(w) > 7 && w[:7] == "secret/" {
			t.Errorf("cilium-inline has a release record %s", w)
		}
	}
	helm := whats("cilium-helm", relay)
	rec, ok := helm["secret/sh.helm.release.v1.cilium.v1"]
	if !ok {
		t.Fatalf("cilium-helm: no release record among %v", helm)
	}
	if rec.Object["type"] != "helm.sh/release.v1" {
		t.Errorf("record type %v", rec.Object["type"])
	}
	if _, ok := whats("cilium-helm", nil)["deployment/hubble-relay"]; ok {
		t.Errorf("hubble-relay without the value")
	}
	if _, ok := whats("calico", nil)["daemonset/calico-node"]; !ok {
		t.Errorf("calico: no calico-node")
	}
	if n := len(whats("none", nil)); n != 0 {
		t.Errorf("none: %d objects", n)
	}
}
