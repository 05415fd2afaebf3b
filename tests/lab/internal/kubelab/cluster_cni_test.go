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

// The stand-in's takeover is done when the live ConfigMap holds the render's data and it and the
// DaemonSet carry the ichor-cni manager: a render from other values is not.
func TestCiliumTakeoverDone(t *testing.T) {
	relay := map[string]any{"hubble": map[string]any{"relay": map[string]any{"enabled": true}}}
	cm := func(values map[string]any) any {
		for _, o := range ciliumObjects(false, values, time.Now()) {
			if o.What == "configmap/cilium-config" {
				return o.Object["data"]
			}
		}
		t.Fatal("no ConfigMap rendered")
		return nil
	}
	live := map[string]string{}
	for k, v := range cm(relay).(map[string]any) {
		live[k] = v.(string)
	}
	if !sameData(live, cm(relay)) {
		t.Errorf("the same render differs")
	}
	off := map[string]any{"hubble": map[string]any{"enabled": false}}
	if sameData(live, cm(off)) {
		t.Errorf("a render with hubble off is the same data")
	}
	var l liveObject
	l.Metadata.ManagedFields = append(l.Metadata.ManagedFields, struct {
		Manager string `json:"manager"`
	}{"talos"})
	if l.managedBy(CNIFieldManager) {
		t.Errorf("talos's object counted as the stand-in's")
	}
	var relayed bool
	for _, o := range ciliumObjects(false, relay, time.Now()) {
		relayed = relayed || o.What == "deployment/hubble-relay"
	}
	if !relayed {
		t.Errorf("no hubble-relay rendered from hubble.relay.enabled")
	}
}
