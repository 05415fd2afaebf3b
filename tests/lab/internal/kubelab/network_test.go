package kubelab

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeNetwork is a Kubernetes API (kube-system DaemonSets, Nodes) and a talos-sim control API
// (GET /nodes, POST /nodes/NAME/cni) for networkModel.
type fakeNetwork struct {
	mu         sync.Mutex
	daemonSets []string
	nodes      map[string]map[string]any // Node name → its Ready condition
	sim        []simNodeState
	patches    int
}

func (f *fakeNetwork) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Method == "GET" && r.URL.Path == "/apis/apps/v1/namespaces/kube-system/daemonsets":
		var items []any
		for _, d := range f.daemonSets {
			items = append(items, map[string]any{"metadata": map[string]any{"name": d}})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"items": items})
	case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/api/v1/nodes/"):
		c, ok := f.nodes[strings.TrimPrefix(r.URL.Path, "/api/v1/nodes/")]
		if !ok {
			w.WriteHeader(404)
			_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "reason": "NotFound"})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status": map[string]any{"conditions": []any{c}}})
	case r.Method == "PATCH" && strings.HasPrefix(r.URL.Path, "/api/v1/nodes/"):
		var p struct {
			Status struct {
				Conditions []map[string]any `json:"conditions"`
			} `json:"status"`
		}
		_ = json.NewDecoder(r.Body).Decode(&p)
		f.nodes[strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/v1/nodes/"), "/status")] = p.Status.Conditions[0]
		f.patches++
		_, _ = w.Write([]byte("{}"))
	case r.Method == "GET" && r.URL.Path == "/sim/nodes":
		_ = json.NewEncoder(w).Encode(f.sim)
	case r.Method == "POST" && strings.HasPrefix(r.URL.Path, "/sim/nodes/"):
		name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/sim/nodes/"), "/cni")
		var req struct {
			Write     string `json:"write"`
			Exclusive bool   `json:"exclusive"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		for i := range f.sim {
			if f.sim[i].Name == name {
				f.sim[i].CNIConfs = append(f.sim[i].CNIConfs, req.Write)
				f.sim[i].NetworkReady = true
				_ = json.NewEncoder(w).Encode(f.sim[i])
			}
		}
	default:
		w.WriteHeader(404)
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "reason": "NotFound"})
	}
}

func (f *fakeNetwork) ready(node string) (string, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.nodes[node]
	msg, _ := c["message"].(string)
	return c["status"].(string), msg
}

func (f *fakeNetwork) set(name string, confs []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.sim {
		if f.sim[i].Name == name {
			f.sim[i].CNIConfs = confs
			f.sim[i].NetworkReady = len(confs) > 0
		}
	}
}

func TestNetworkModel(t *testing.T) {
	readyCond := map[string]any{"type": "Ready", "status": "True", "reason": NodeReasonReady, "message": "kubelet is posting ready status"}
	f := &fakeNetwork{
		nodes: map[string]map[string]any{
			"a": readyCond,
			// NotReady with the network's message, though its node has a CNI file (home-notready)
			"b": {"type": "Ready", "status": "False", "reason": NodeReasonNotReady, "message": NodeNotReadyMsg},
		},
		sim: []simNodeState{
			{Name: "a", ScenarioCluster: "home", Mode: "configured", Power: "up", Hostname: "a", CNIConfs: []string{"10-flannel.conflist"}, NetworkReady: true},
			{Name: "b", ScenarioCluster: "home", Mode: "configured", Power: "up", Hostname: "b", CNIConfs: []string{"10-flannel.conflist"}, NetworkReady: true},
		},
	}
	srv := httptest.NewServer(f)
	defer srv.Close()
	ctl := &Controller{
		Kube: &Client{Server: srv.URL, Namespace: "ichor-system", HTTP: srv.Client()},
		Sim:  &Sim{Control: srv.URL + "/sim", Clusters: []SimCluster{{Name: "home", Kubernetes: &SimKubernetes{Nodes: true, CNI: "flannel"}}}},
		Logf: func(string, ...any) {},
	}
	pass := func() {
		t.Helper()
		if err := ctl.networkModel(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	pass()
	if s, _ := f.ready("b"); s != "False" || f.patches != 0 {
		t.Errorf("the seeded Nodes were changed: b %s, %d patches", s, f.patches)
	}
	// flannel's file removed from a: NotReady for the network
	f.set("a", nil)
	pass()
	if s, m := f.ready("a"); s != "False" || !strings.Contains(m, "NetworkPluginNotReady") {
		t.Errorf("a without a CNI file: %s %q", s, m)
	}
	// Cilium's DaemonSet runs: its file on a, and a Ready again; b untouched
	f.mu.Lock()
	f.daemonSets = []string{"cilium", "coredns"}
	f.mu.Unlock()
	pass()
	if s, _ := f.ready("a"); s != "True" {
		t.Errorf("a with Cilium's file: %s", s)
	}
	if !slices.Contains(f.sim[0].CNIConfs, "05-cilium.conflist") || !slices.Contains(f.sim[1].CNIConfs, "05-cilium.conflist") {
		t.Errorf("Cilium's file not written: %v %v", f.sim[0].CNIConfs, f.sim[1].CNIConfs)
	}
	if s, _ := f.ready("b"); s != "False" {
		t.Errorf("b changed without a change of its network: %s", s)
	}
	n := f.patches
	pass()
	if f.patches != n {
		t.Errorf("a pass with nothing changed wrote %d patches", f.patches-n)
	}
}
