package kubelab

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
)

type fakeInventory map[string]Inventory // endpoint → node in maintenance mode

func (f fakeInventory) Inventory(_ context.Context, endpoint string) (Inventory, error) {
	if n, ok := f[endpoint]; ok {
		return n, nil
	}
	return Inventory{}, errors.New("tls: certificate required")
}

func pendingAt(name, addr, uuid, fp string) TalosMachine {
	m := machine(name, ApprovalPending, addr, uuid, false)
	m.Metadata.Namespace = "ichor-system"
	m.Spec.Identity.Serial = "S-" + name
	m.Spec.Identity.MACs = []string{"02:00:00:00:00:01"}
	m.Status = &TalosMachineStatus{MaintenanceFingerprint: fp}
	return m
}

func TestDiscoveryRefreshesPendingMachines(t *testing.T) {
	api := &fakeAPI{patches: map[string][]Condition{}, statuses: map[string]TalosMachineStatus{},
		discovery: []string{"127.0.0.41", "127.0.0.42:50000", "127.0.0.43", "127.0.0.44", "127.0.0.46"},
		machines: []TalosMachine{
			pendingAt("reset", "127.0.0.41", "u1", "OLD"),
			pendingAt("same-fp", "127.0.0.42", "u2", "FP2"),
			pendingAt("other-serial", "127.0.0.43", "u3", "OLD3"),
			pendingAt("configured", "127.0.0.44", "u4", "OLD4"),
			pendingAt("not-listed", "127.0.0.45", "u5", "OLD5"),
			pinned("approved", "127.0.0.46", "u6", "OLD6"),
		}}
	api.machines[5].Spec.Identity.Serial = "S-approved"
	srv := httptest.NewServer(api)
	defer srv.Close()
	inv := func(uuid, serial, fp string) Inventory {
		return Inventory{Fingerprint: fp, UUID: uuid, Serial: serial, MACs: []string{"02:00:00:00:00:01"},
			Disks: []DiscoveredDisk{{Name: "sda", DevPath: "/dev/sda", Size: 1 << 30}},
			Links: []DiscoveredLink{{Name: "eth0", PermanentAddr: "02:00:00:00:00:01", HardwareAddr: "02:00:00:00:00:01"}}}
	}
	fi := fakeInventory{
		"127.0.0.41:50000": inv("U1", "S-reset", "NEW"),
		"127.0.0.42:50000": inv("u2", "S-same-fp", "FP2"),
		"127.0.0.43:50000": inv("u3", "another", "NEW3"),
		"127.0.0.45:50000": inv("u5", "S-not-listed", "NEW5"),
		"127.0.0.46:50000": inv("u6", "S-approved", "NEW6"),
	}
	ctl := &Controller{Kube: &Client{Server: srv.URL, Namespace: "ichor-system", HTTP: srv.Client()},
		Reader: fakeReader{}, Discovery: &Discovery{Client: fi}}
	if err := ctl.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, ok := api.statuses["reset"]
	if !ok || st.MaintenanceFingerprint != "NEW" || len(st.DiscoveredDisks) != 1 || st.DiscoveredDisks[0].DevPath != "/dev/sda" ||
		len(st.DiscoveredLinks) != 1 || st.DiscoveredLinks[0].PermanentAddr != "02:00:00:00:00:01" {
		t.Errorf("reset: status %+v (written: %v)", st, ok)
	}
	for _, name := range []string{"same-fp", "other-serial", "configured", "not-listed"} {
		if s, ok := api.statuses[name]; ok {
			t.Errorf("%s: status written: %+v", name, s)
		}
	}
	if s, ok := api.statuses["approved"]; ok && s.MaintenanceFingerprint == "NEW6" {
		t.Errorf("approved: the pin was re-recorded: %+v", s)
	}
	if len(api.events) != 1 {
		t.Fatalf("events: %v", api.events)
	}
	e := api.events[0]
	obj, _ := e["involvedObject"].(map[string]any)
	msg, _ := e["message"].(string)
	if e["reason"] != ReasonIdentityRefreshed || e["type"] != "Normal" || obj["kind"] != "TalosMachine" || obj["name"] != "reset" ||
		!strings.Contains(msg, "from OLD to NEW") {
		t.Errorf("event %v", e)
	}
	// A second pass finds the fingerprint recorded: nothing more.
	if err := ctl.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(api.events) != 1 {
		t.Errorf("a second pass wrote another Event: %v", api.events)
	}
}

func TestInDiscovery(t *testing.T) {
	tc := &TalosCluster{Spec: TalosClusterSpec{Discovery: &DiscoverySpec{Addresses: []string{"10.0.0.1", "10.0.0.2:50001", "[fd00::1]", "10.0.1.0/24"}}}}
	for addr, want := range map[string]bool{"10.0.0.1": true, "10.0.0.1:50000": true, "10.0.0.2": false, "10.0.0.2:50001": true,
		"fd00::1": true, "[fd00::1]:50000": true, "10.0.1.5": false} {
		if got := inDiscovery(tc, addr); got != want {
			t.Errorf("%s: %v, want %v", addr, got, want)
		}
	}
	if inDiscovery(&TalosCluster{}, "10.0.0.1") {
		t.Error("no discovery spec")
	}
}
