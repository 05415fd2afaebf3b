package kubelab

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"go.yaml.in/yaml/v4"
)

type fakeMaint struct {
	mu      sync.Mutex
	nodes   map[string]MaintenanceNode // endpoint → node in maintenance mode
	applied map[string][]byte
	pins    map[string]string
}

func (f *fakeMaint) Probe(_ context.Context, endpoint string) (MaintenanceNode, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n, ok := f.nodes[endpoint]; ok {
		return n, nil
	}
	return MaintenanceNode{}, errors.New("tls: certificate required")
}

func (f *fakeMaint) Apply(_ context.Context, endpoint, fp string, cfg []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.applied == nil {
		f.applied, f.pins = map[string][]byte{}, map[string]string{}
	}
	f.applied[endpoint] = cfg
	f.pins[endpoint] = fp
	return nil
}

// mismatchReader fails every authenticated read the way a maintenance node does.
type mismatchReader struct{}

func (mismatchReader) ReadNode(context.Context, []byte, string) (NodeFacts, error) {
	return NodeFacts{}, &NodeError{Reason: ReasonIdentityMismatch, Err: errors.New("x509: certificate signed by unknown authority")}
}

func pinned(name, addr, uuid, fp string) TalosMachine {
	m := machine(name, ApprovalApproved, addr, uuid, false)
	m.Status = &TalosMachineStatus{MaintenanceFingerprint: fp}
	return m
}

func TestFingerprintAccepted(t *testing.T) {
	m := pinned("m", "a", "u", "A")
	if !FingerprintAccepted(&m, "A") || FingerprintAccepted(&m, "B") {
		t.Error("pin")
	}
	m.Metadata.Annotations = map[string]string{AnnotationTrustFP: "B"}
	if !FingerprintAccepted(&m, "B") || FingerprintAccepted(&m, "C") {
		t.Error("annotation naming the fingerprint")
	}
	m.Metadata.Annotations[AnnotationTrustFP] = "true"
	if !FingerprintAccepted(&m, "C") {
		t.Error("annotation true")
	}
	none := machine("n", ApprovalApproved, "a", "u", false)
	if !FingerprintAccepted(&none, "X") {
		t.Error("nothing recorded: trust on first use")
	}
}

func TestProvisionMismatchAndApply(t *testing.T) {
	api := &fakeAPI{patches: map[string][]Condition{}, machines: []TalosMachine{
		pinned("stale", "127.0.0.21", "u1", "OLD"),
		pinned("wrong-uuid", "127.0.0.22", "u2", "FP2"),
		pinned("configured", "127.0.0.23", "u3", "FP3"),
	}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	fm := &fakeMaint{nodes: map[string]MaintenanceNode{
		"127.0.0.21:50000": {Fingerprint: "NEW", UUID: "U1"},
		"127.0.0.22:50000": {Fingerprint: "FP2", UUID: "other"},
	}}
	ctl := &Controller{Kube: &Client{Server: srv.URL, Namespace: "ichor-system", HTTP: srv.Client()},
		Reader: mismatchReader{}, Provisioner: &Provisioner{Client: fm}}
	if err := ctl.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	conds := api.patches["stale"]
	if r := FindCondition(conds, CondReady); r == nil || r.Reason != ReasonMaintenanceIdentityChanged ||
		!strings.Contains(r.Message, "NEW, not the recorded OLD") {
		t.Errorf("stale: Ready %+v", r)
	}
	if c := FindCondition(conds, CondMaintenanceIdentityChanged); c == nil || c.Status != True {
		t.Errorf("stale: %s %+v", CondMaintenanceIdentityChanged, c)
	}
	if r := FindCondition(api.patches["wrong-uuid"], CondReady); r == nil || r.Reason != ReasonIdentityMismatch ||
		!strings.Contains(r.Message, "in maintenance mode with UUID") {
		t.Errorf("wrong-uuid: Ready %+v", r)
	}
	if r := FindCondition(api.patches["configured"], CondReady); r == nil || r.Reason != ReasonIdentityMismatch {
		t.Errorf("configured (not in maintenance): Ready %+v", r)
	}
	if len(fm.applied) != 0 {
		t.Errorf("applied %v", fm.applied)
	}

	// The pin refreshed (as reclaim or discovery does): the MaintenanceIdentityChanged condition goes
	// away and provisioning starts (it fails here: the fake apiserver's bundle is not a real one).
	api.mu.Lock()
	api.machines[0].Status.MaintenanceFingerprint = "NEW"
	api.mu.Unlock()
	if err := ctl.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	conds = api.patches["stale"]
	if c := FindCondition(conds, CondMaintenanceIdentityChanged); c != nil {
		t.Errorf("condition kept after the pin was refreshed: %+v", c)
	}
	if r := FindCondition(conds, CondReady); r == nil || r.Reason != ReasonProvisionFailed {
		t.Errorf("stale after refresh: Ready %+v", r)
	}
}

func TestProvisionAppliesAGeneratedConfig(t *testing.T) {
	b, err := secrets.NewBundle(secrets.NewClock(), config.TalosVersion1_13)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := yaml.NewEncoder(&buf).Encode(b); err != nil {
		t.Fatal(err)
	}
	tc := &TalosCluster{Metadata: ObjectMeta{Name: "prod"}, Spec: TalosClusterSpec{TalosVersion: "v1.13.9",
		KubernetesVersion: "v1.34.4", Endpoint: "https://127.0.0.11:6443", VersionContract: "1.13"}}
	m := pinned("m", "127.0.0.21", "u1", "FP")
	m.Status.DiscoveredDisks = []DiscoveredDisk{{Name: "vda", DevPath: "/dev/vda"}}
	fm := &fakeMaint{nodes: map[string]MaintenanceNode{"127.0.0.21:50000": {Fingerprint: "FP", UUID: "u1"}}}
	ctl := &Controller{Provisioner: &Provisioner{Client: fm}}
	readErr := &NodeError{Reason: ReasonIdentityMismatch, Err: errors.New("tls")}
	o := ctl.provisionIfMaintenance(context.Background(), &m, tc, buf.Bytes(), "127.0.0.21:50000", readErr)
	if o == nil || o.ready.Reason != ReasonProvisioning {
		t.Fatalf("outcome %+v", o)
	}
	if fm.pins["127.0.0.21:50000"] != "FP" {
		t.Errorf("apply not pinned: %v", fm.pins)
	}
	cfg, err := configloader.NewFromBytes(fm.applied["127.0.0.21:50000"])
	if err != nil {
		t.Fatal(err)
	}
	if cfg.K8sClusterConfig().ClusterName() != "prod" || cfg.Machine().Type().String() != "worker" ||
		cfg.DiscoveryIdentityConfig().ClusterID() != b.Cluster.ID {
		t.Errorf("config: cluster %q, type %s, id %q", cfg.K8sClusterConfig().ClusterName(), cfg.Machine().Type(),
			cfg.DiscoveryIdentityConfig().ClusterID())
	}
	if d := cfg.Machine().Install().Disk(); d != "/dev/vda" {
		t.Errorf("install disk %q", d)
	}
	// A second pass right after does not apply again.
	fm.applied = nil
	if o := ctl.provisionIfMaintenance(context.Background(), &m, tc, buf.Bytes(), "127.0.0.21:50000", readErr); o == nil || o.ready.Reason != ReasonProvisioning || fm.applied != nil {
		t.Errorf("re-applied: %+v %v", o, fm.applied)
	}
	// Not in maintenance mode, or another failure than a TLS refusal: the read's outcome stands.
	if o := ctl.provisionIfMaintenance(context.Background(), &m, tc, buf.Bytes(), "127.0.0.99:50000", readErr); o != nil {
		t.Errorf("not in maintenance: %+v", o)
	}
	if o := ctl.provisionIfMaintenance(context.Background(), &m, tc, buf.Bytes(), "127.0.0.21:50000",
		&NodeError{Reason: ReasonNodeUnreachable, Err: errors.New("refused")}); o != nil {
		t.Errorf("unreachable: %+v", o)
	}
}
