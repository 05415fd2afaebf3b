package sim

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cosi-project/runtime/pkg/safe"
	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/resources/cluster"
	"github.com/siderolabs/talos/pkg/machinery/resources/hardware"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func wipeRequest(graceful bool, labels ...string) *machine.ResetRequest {
	req := &machine.ResetRequest{Graceful: graceful, Reboot: true, Mode: machine.ResetRequest_SYSTEM_DISK}
	for _, l := range labels {
		req.SystemPartitionsToWipe = append(req.SystemPartitionsToWipe, &machine.ResetPartitionSpec{Label: l, Wipe: true})
	}

	return req
}

func TestResetWorkerToMaintenance(t *testing.T) {
	s := startSim(t, testScenario)
	ctx := callCtx(t)
	c := talosClient(t, "t1", "talosconfig", "127.0.99.2")

	before := nodeState(t, s, "t1-w")

	resp, err := c.ResetGenericWithResponse(ctx, wipeRequest(true, "STATE", "EPHEMERAL"))
	if err != nil {
		t.Fatalf("Reset: %v", err)
	}

	if resp.GetMessages()[0].GetActorId() == "" {
		t.Fatal("no actor id")
	}

	// the node goes silent for the reboot delay, then answers in maintenance mode
	waitFor(t, 3*time.Second, "maintenance mode", func() bool {
		st := nodeState(t, s, "t1-w")

		return st.Mode == ModeMaintenance && st.Power == powerUp
	})

	after := nodeState(t, s, "t1-w")
	if after.NodeID == before.NodeID || after.UUID != before.UUID || after.Serial != before.Serial || after.MACs[0] != before.MACs[0] {
		t.Errorf("identity after reset: before %+v after %+v", before, after)
	}

	if after.LastReset == nil || after.LastReset.State != "done" || after.ConfigSHA256 != "" {
		t.Errorf("after reset: %+v", after)
	}

	m := insecureClient(t, "127.0.99.2")

	id, err := safe.StateGetByID[*cluster.Identity](ctx, m.COSI, cluster.LocalIdentity)
	if err != nil || id.TypedSpec().NodeID != after.NodeID {
		t.Errorf("identity resource: %v %v", id, err)
	}

	si, err := safe.StateGetByID[*hardware.SystemInformation](ctx, m.COSI, hardware.SystemInformationID)
	if err != nil || si.TypedSpec().UUID != before.UUID {
		t.Errorf("system information: %v %v", si, err)
	}

	// the old talosconfig no longer verifies the node
	if _, err := c.Version(callCtx(t)); status.Code(err) != codes.Unavailable {
		t.Errorf("cluster CA against the reset node: %v", err)
	}
}

func TestResetEphemeralKeepsConfig(t *testing.T) {
	s := startSim(t, testScenario)
	c := talosClient(t, "t1", "talosconfig", "127.0.99.2")
	before := nodeState(t, s, "t1-w")

	if _, err := c.ResetGenericWithResponse(callCtx(t), wipeRequest(false, "EPHEMERAL")); err != nil {
		t.Fatal(err)
	}

	waitFor(t, 3*time.Second, "reboot", func() bool { return nodeState(t, s, "t1-w").BootCount == before.BootCount+1 })

	after := nodeState(t, s, "t1-w")
	if after.Mode != ModeConfigured || after.ConfigSHA256 != before.ConfigSHA256 || after.NodeID != before.NodeID {
		t.Errorf("after EPHEMERAL wipe: %+v", after)
	}

	if _, err := c.Version(callCtx(t)); err != nil {
		t.Errorf("Version after reboot: %v", err)
	}
}

func TestResetGracefulSoleControlPlaneAborts(t *testing.T) {
	s := startSim(t, testScenario)
	c := talosClient(t, "t1", "talosconfig", "127.0.99.1")

	if _, err := c.ResetGenericWithResponse(callCtx(t), wipeRequest(true, "STATE", "EPHEMERAL")); err != nil {
		t.Fatal(err)
	}

	waitFor(t, 3*time.Second, "abort", func() bool {
		r := nodeState(t, s, "t1-cp").LastReset

		return r != nil && r.State == "aborted"
	})

	st := nodeState(t, s, "t1-cp")
	if st.Mode != ModeConfigured || st.EtcdMemberID == "" || !strings.Contains(st.LastReset.Error, "not enough started members") {
		t.Errorf("after aborted reset: %+v %+v", st, st.LastReset)
	}

	if _, err := c.Version(callCtx(t)); err != nil {
		t.Errorf("node should still answer: %v", err)
	}
}

func TestResetNotGracefulKeepsMember(t *testing.T) {
	s := startSim(t, testScenario)
	c := talosClient(t, "t1", "talosconfig", "127.0.99.1")

	if _, err := c.ResetGenericWithResponse(callCtx(t), wipeRequest(false, "STATE", "EPHEMERAL")); err != nil {
		t.Fatal(err)
	}

	waitFor(t, 3*time.Second, "maintenance", func() bool { return nodeState(t, s, "t1-cp").Mode == ModeMaintenance })

	var clusters []ClusterState

	control(t, s, http.MethodGet, "/clusters", "", &clusters)

	for _, cl := range clusters {
		if cl.Name == "t1" && (len(cl.Members) != 1 || cl.Members[0].Started || cl.Quorum) {
			t.Errorf("t1 etcd after non-graceful reset: %+v", cl)
		}
	}
}

func TestResetGracefulWithEtcdDownOrHung(t *testing.T) {
	s := startSim(t, testScenario)
	c := talosClient(t, "t1", "talosconfig", "127.0.99.1")

	control(t, s, http.MethodPost, "/nodes/t1-cp/etcd", `{"state":"hang"}`, nil)

	if _, err := c.ResetGenericWithResponse(callCtx(t), wipeRequest(true, "STATE", "EPHEMERAL")); err != nil {
		t.Fatal(err)
	}

	time.Sleep(300 * time.Millisecond)

	st := nodeState(t, s, "t1-cp")
	if st.LastReset.State != "leaving-etcd" || st.Stage != stageResetting || st.Power != powerUp {
		t.Fatalf("hung reset: %+v %+v", st, st.LastReset)
	}

	// etcd comes back down: the leave fails and the reset aborts, nothing wiped
	control(t, s, http.MethodPost, "/nodes/t1-cp/etcd", `{"state":"down"}`, nil)

	waitFor(t, 3*time.Second, "abort", func() bool { return nodeState(t, s, "t1-cp").LastReset.State == "aborted" })

	if st := nodeState(t, s, "t1-cp"); st.Mode != ModeConfigured || st.Stage != stageRunning {
		t.Errorf("after abort: %+v", st)
	}
}

func TestResetValidationAndNeverReturn(t *testing.T) {
	s := startSim(t, testScenario)
	ctx := callCtx(t)
	c := talosClient(t, "t1", "talosconfig", "127.0.99.2")

	_, err := c.ResetGenericWithResponse(ctx, wipeRequest(false, "BOGUS"))
	if status.Code(err) != codes.Unknown || !strings.Contains(err.Error(), `failed to get volume status with label "BOGUS"`) {
		t.Errorf("bogus label: %v", err)
	}

	req := wipeRequest(false, "STATE")
	req.Mode = machine.ResetRequest_USER_DISKS

	if _, err = c.ResetGenericWithResponse(ctx, req); err == nil || !strings.Contains(err.Error(), "USER_DISKS doesn't support SystemPartitionsToWipe") {
		t.Errorf("USER_DISKS with partitions: %v", err)
	}

	control(t, s, http.MethodPost, "/nodes/t1-w/reset-behaviour", `{"neverReturn":true,"rebootDelay":"50ms"}`, nil)

	if _, err := c.ResetGenericWithResponse(ctx, wipeRequest(false, "STATE", "EPHEMERAL")); err != nil {
		t.Fatal(err)
	}

	waitFor(t, 2*time.Second, "power off", func() bool { return nodeState(t, s, "t1-w").Power == powerOff })

	// it stays down until told otherwise
	time.Sleep(200 * time.Millisecond)

	if st := nodeState(t, s, "t1-w"); st.Power != powerOff {
		t.Errorf("neverReturn node came back: %+v", st)
	}

	control(t, s, http.MethodPost, "/nodes/t1-w/mode", `{"mode":"configured"}`, nil)

	if _, err := c.Version(callCtx(t)); err != nil {
		t.Errorf("after mode configured: %v", err)
	}
}
