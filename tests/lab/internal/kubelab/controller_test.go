package kubelab

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSetCondition(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := SetCondition(nil, Condition{Type: "Ready", Status: "False", Reason: "A"}, t0)
	if c[0].LastTransitionTime != "2026-01-01T00:00:00Z" {
		t.Fatalf("%+v", c)
	}
	c = SetCondition(c, Condition{Type: "Ready", Status: "False", Reason: "B"}, t0.Add(time.Hour))
	if c[0].LastTransitionTime != "2026-01-01T00:00:00Z" || c[0].Reason != "B" {
		t.Errorf("same status must keep the transition time: %+v", c)
	}
	c = SetCondition(c, Condition{Type: "Ready", Status: "True", Reason: "C"}, t0.Add(time.Hour))
	if c[0].LastTransitionTime != "2026-01-01T01:00:00Z" {
		t.Errorf("new status must move the transition time: %+v", c)
	}
	c = SetCondition(c, Condition{Type: "AdoptionHeld", Status: "True", Reason: "H"}, t0)
	if len(c) != 2 || len(RemoveCondition(c, "AdoptionHeld")) != 1 {
		t.Errorf("%+v", c)
	}
}

func TestEndpoint(t *testing.T) {
	c := &Controller{Sim: &Sim{Nodes: []SimNode{{Address: "127.0.0.11", Port: 50123}}}}
	for in, want := range map[string]string{
		"127.0.0.11":      "127.0.0.11:50123",
		"127.0.0.12":      "127.0.0.12:50000",
		"127.0.0.12:6000": "127.0.0.12:6000",
		"fd00::1":         "[fd00::1]:50000",
		"https://h:7":     "h:7",
	} {
		if got := c.Endpoint(in); got != want {
			t.Errorf("Endpoint(%q) = %q, want %q", in, got, want)
		}
	}
}

// fakeAPI is a tiny apiserver: lists, the bundle Secret, and PATCH of talosmachines/*/status.
type fakeAPI struct {
	mu       sync.Mutex
	machines []TalosMachine
	patches  map[string][]Condition
	nPatches int
	// discovery.go: prod's spec.discovery.addresses, and the Events created
	discovery []string
	statuses  map[string]TalosMachineStatus
	events    []map[string]any
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	const base = "/apis/ichor.maesh.dev/v1alpha1/namespaces/ichor-system/"
	switch {
	case r.Method == "GET" && r.URL.Path == base+"talosmachines":
		_ = json.NewEncoder(w).Encode(TalosMachineList{Items: f.machines})
	case r.Method == "GET" && r.URL.Path == base+"talosclusters":
		_ = json.NewEncoder(w).Encode(TalosClusterList{Items: []TalosCluster{{Metadata: ObjectMeta{Name: "prod", Namespace: "ichor-system"},
			Spec: TalosClusterSpec{SecretsBundleRef: SecretsBundleRef{Name: "prod-secrets"},
				Discovery: &DiscoverySpec{Addresses: f.discovery}}}}})
	case r.Method == "POST" && r.URL.Path == "/api/v1/namespaces/ichor-system/events":
		var e map[string]any
		_ = json.NewDecoder(r.Body).Decode(&e)
		f.events = append(f.events, e)
		_, _ = w.Write([]byte("{}"))
	case r.Method == "GET" && r.URL.Path == "/api/v1/namespaces/ichor-system/secrets/prod-secrets":
		_ = json.NewEncoder(w).Encode(Secret{Data: map[string][]byte{"bundle.yaml": []byte("cluster:\n  id: cid-prod\n")}})
	case r.Method == "PATCH" && strings.HasPrefix(r.URL.Path, base+"talosmachines/") && strings.HasSuffix(r.URL.Path, "/status"):
		if r.Header.Get("Content-Type") != ContentMergePatch {
			http.Error(w, "bad content type", 415)
			return
		}
		name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, base+"talosmachines/"), "/status")
		var p struct {
			Status TalosMachineStatus `json:"status"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &p); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		f.nPatches++
		f.patches[name] = p.Status.Conditions
		if f.statuses != nil {
			f.statuses[name] = p.Status
		}
		for i := range f.machines {
			if f.machines[i].Metadata.Name == name {
				st := p.Status
				f.machines[i].Status = &st
				_ = json.NewEncoder(w).Encode(f.machines[i])
				return
			}
		}
		_, _ = w.Write([]byte("{}"))
	default:
		w.WriteHeader(404)
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "reason": "NotFound", "message": r.URL.Path + " not found"})
	}
}

type fakeReader map[string]NodeFacts

func (f fakeReader) ReadNode(_ context.Context, bundle []byte, endpoint string) (NodeFacts, error) {
	if !strings.Contains(string(bundle), "cid-prod") {
		return NodeFacts{}, errors.New("wrong bundle")
	}
	if n, ok := f[endpoint]; ok {
		return n, nil
	}
	return NodeFacts{}, &NodeError{Reason: ReasonNodeUnreachable, Err: errors.New("connection refused")}
}

func machine(name, approval, addr, uuid string, held bool) TalosMachine {
	m := TalosMachine{Metadata: ObjectMeta{Name: name, Generation: 1},
		Spec: TalosMachineSpec{Cluster: "prod", Approval: approval, Address: addr, Identity: &MachineIdentity{UUID: uuid}}}
	if held {
		m.Metadata.Annotations = map[string]string{AnnotationHoldApply: "true"}
	}
	return m
}

func TestControllerPass(t *testing.T) {
	api := &fakeAPI{patches: map[string][]Condition{}, machines: []TalosMachine{
		machine("held", ApprovalApproved, "127.0.0.11", "u1", true),
		machine("ok", ApprovalApproved, "127.0.0.12", "u2", false),
		machine("other-uuid", ApprovalApproved, "127.0.0.13", "u3", false),
		machine("other-cluster", ApprovalApproved, "127.0.0.14", "u4", false),
		machine("down", ApprovalApproved, "127.0.0.15", "u5", false),
		machine("pending", ApprovalPending, "127.0.0.16", "u6", false),
		{Metadata: ObjectMeta{Name: "lost", Generation: 1}, Spec: TalosMachineSpec{Cluster: "gone", Approval: ApprovalApproved, Address: "127.0.0.17"}},
	}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	var logs []string
	var lmu sync.Mutex
	ctl := &Controller{
		Kube: &Client{Server: srv.URL, Namespace: "ichor-system", HTTP: srv.Client()},
		Reader: fakeReader{
			"127.0.0.11:50000": {ClusterID: "cid-prod", UUID: "u1"},
			"127.0.0.12:50000": {ClusterID: "cid-prod", UUID: "U2"},
			"127.0.0.13:50000": {ClusterID: "cid-prod", UUID: "zzz"},
			"127.0.0.14:50000": {ClusterID: "cid-b", ClusterName: "lab-b", UUID: "u4"},
		},
		Logf: func(f string, a ...any) { lmu.Lock(); logs = append(logs, f); lmu.Unlock() },
	}
	if err := ctl.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	check := func(name, ready, reason, held string) {
		t.Helper()
		conds := api.patches[name]
		r := FindCondition(conds, "Ready")
		if r == nil || r.Status != ready || r.Reason != reason || r.ObservedGeneration != 1 || r.LastTransitionTime == "" {
			t.Errorf("%s: Ready %+v, want %s %s", name, r, ready, reason)
		}
		h := FindCondition(conds, "AdoptionHeld")
		switch {
		case held == "" && h != nil:
			t.Errorf("%s: AdoptionHeld %+v, want none", name, h)
		case held != "" && (h == nil || h.Status != held || h.Reason != ReasonHoldApply):
			t.Errorf("%s: AdoptionHeld %+v, want %s", name, h, held)
		}
	}
	check("held", "False", ReasonAdoptionHeld, "True")
	check("ok", "True", ReasonIdentityVerified, "")
	check("other-uuid", "False", ReasonIdentityMismatch, "")
	check("other-cluster", "False", ReasonIdentityMismatch, "")
	check("down", "False", ReasonNodeUnreachable, "")
	check("lost", "False", ReasonClusterNotFound, "")
	if _, ok := api.patches["pending"]; ok {
		t.Error("a pending machine got a status")
	}
	if api.nPatches != 6 {
		t.Errorf("%d patches, want 6", api.nPatches)
	}
	// a second pass with nothing changed writes nothing
	if err := ctl.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if api.nPatches != 6 {
		t.Errorf("second pass wrote: %d patches", api.nPatches)
	}
	// release the hold: AdoptionHeld goes away and Ready turns True
	api.mu.Lock()
	api.machines[0].Metadata.Annotations = nil
	api.mu.Unlock()
	if err := ctl.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	check("held", "True", ReasonIdentityVerified, "")
	if len(logs) != 7 {
		t.Errorf("logs %v", logs)
	}
}

func TestLoadKubeconfigAndClient(t *testing.T) {
	var gotAuth string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		if r.Method == "POST" {
			w.WriteHeader(409)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"x exists","reason":"AlreadyExists","code":409}`))
			return
		}
		_, _ = w.Write([]byte(`{"items":[]}`))
	}))
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tok"), []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kc := `apiVersion: v1
kind: Config
current-context: a
clusters:
- name: c
  cluster:
    server: ` + srv.URL + `/
    certificate-authority: ca.crt
users:
- name: u
  user:
    tokenFile: tok
contexts:
- name: a
  context: {cluster: c, user: u, namespace: other}
- name: b
  context: {cluster: c, user: u}
`
	p := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadKubeconfig(p, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Namespace != "other" || c.Server != srv.URL {
		t.Errorf("client %+v", c)
	}
	var l TalosMachineList
	if err := c.Get(context.Background(), c.IchorPath("talosmachines", ""), &l); err != nil {
		t.Fatal(err)
	}
	if gotAuth != "Bearer s3cret" {
		t.Errorf("Authorization %q", gotAuth)
	}
	err = c.Create(context.Background(), c.IchorPath("talosmachines", ""), map[string]any{}, nil)
	if !IsAlreadyExists(err) || !strings.Contains(err.Error(), "x exists") {
		t.Errorf("err %v", err)
	}
	c2, err := LoadKubeconfig(p, "b")
	if err != nil || c2.Namespace != "ichor-system" {
		t.Errorf("context b: %v %+v", err, c2)
	}
	if _, err := LoadKubeconfig(p, "nope"); err == nil {
		t.Error("unknown context accepted")
	}
}
