package sim

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cosi-project/runtime/pkg/safe"
	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/meta"
	"github.com/siderolabs/talos/pkg/machinery/resources/block"
	"github.com/siderolabs/talos/pkg/machinery/resources/config"
	"github.com/siderolabs/talos/pkg/machinery/resources/network"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

func TestMetaKeysTalosOwnsAreRefused(t *testing.T) {
	s := startSim(t, testScenario)
	ctx := callCtx(t)
	c := talosClient(t, "t1", "talosconfig", "127.0.99.2")

	for _, key := range []uint8{meta.StateEncryptionConfig, meta.Upgrade, meta.DiskImageBootloader} {
		if err := c.MetaWrite(ctx, key, []byte("x")); status.Code(err) != codes.PermissionDenied {
			t.Errorf("write of key %d: %v", key, err)
		}

		if err := c.MetaDelete(ctx, key); status.Code(err) != codes.PermissionDenied {
			t.Errorf("delete of key %d: %v", key, err)
		}
	}

	if err := c.MetaWrite(ctx, meta.UserReserved1, []byte("mine")); err != nil {
		t.Fatalf("write of a user key: %v", err)
	}

	var got map[string]string
	control(t, s, http.MethodGet, "/nodes/t1-w/meta", "", &got)

	if got["0x0c"] != "mine" {
		t.Errorf("META = %v", got)
	}

	if err := c.MetaDelete(ctx, meta.UserReserved1); err != nil {
		t.Errorf("delete of a user key: %v", err)
	}

	var calls []CallRecord
	control(t, s, http.MethodGet, "/nodes/t1-w/calls", "", &calls)

	n := 0

	for _, r := range calls {
		if r.Method == "/machine.MachineService/MetaWrite" || r.Method == "/machine.MachineService/MetaDelete" {
			n++
		}
	}

	if n != 8 {
		t.Errorf("META calls in the call log = %d, want 8", n)
	}
}

func persistentDiffers(t *testing.T, ip string) bool {
	t.Helper()

	c := talosClient(t, "t1", "talosconfig", ip)
	ctx := callCtx(t)

	active, err := safe.StateGetByID[*config.MachineConfig](ctx, c.COSI, config.ActiveID)
	if err != nil {
		t.Fatal(err)
	}

	persistent, err := safe.StateGetByID[*config.MachineConfig](ctx, c.COSI, config.PersistentID)
	if err != nil {
		t.Fatal(err)
	}

	a, _ := active.Provider().Bytes()     //nolint:errcheck
	p, _ := persistent.Provider().Bytes() //nolint:errcheck

	return string(a) != string(p)
}

func TestStagedAndTryLeaveThePersistentConfigurationApart(t *testing.T) {
	s := startSim(t, testScenario)

	if persistentDiffers(t, "127.0.99.2") {
		t.Fatal("persistent differs at start")
	}

	if code := control(t, s, http.MethodPost, "/nodes/t1-w/staged", "machine: {sysctls: {vm.swappiness: \"3\"}}", nil); code != http.StatusOK {
		t.Fatalf("stage: %d", code)
	}

	if !persistentDiffers(t, "127.0.99.2") || !nodeState(t, s, "t1-w").Staged {
		t.Error("staged: the persistent configuration is the running one")
	}

	control(t, s, http.MethodDelete, "/nodes/t1-w/staged", "", nil)

	if persistentDiffers(t, "127.0.99.2") {
		t.Error("unstaged: still differs")
	}

	// a TRY window: running differs from persistent until the window ends, then rolls back
	c := talosClient(t, "t1", "talosconfig", "127.0.99.2")
	before := nodeState(t, s, "t1-w").ConfigSHA256

	data, err := ApplyPatch(mustConfig(t, s, "t1-w"), "machine: {sysctls: {vm.swappiness: \"4\"}}")
	if err != nil {
		t.Fatal(err)
	}

	_, err = c.ApplyConfiguration(callCtx(t), &machine.ApplyConfigurationRequest{
		Data: data, Mode: machine.ApplyConfigurationRequest_TRY, TryModeTimeout: durationpb.New(700 * time.Millisecond),
	})
	if err != nil {
		t.Fatalf("try: %v", err)
	}

	if !nodeState(t, s, "t1-w").Staged {
		t.Error("in the TRY window: not staged")
	}

	waitFor(t, 5*time.Second, "rollback", func() bool {
		st := nodeState(t, s, "t1-w")

		return !st.Staged && st.ConfigSHA256 == before
	})
}

func mustConfig(t *testing.T, s *Sim, name string) []byte {
	t.Helper()

	resp, err := http.Get(s.ControlURL() + "/nodes/" + name + "/config") //nolint:noctx
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close() //nolint:errcheck

	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}

	return data
}

func TestDefaultLinksAndDisks(t *testing.T) {
	s := startSim(t, testScenario)
	c := talosClient(t, "t1", "talosconfig", "127.0.99.2")
	ctx := callCtx(t)

	links, err := safe.StateListAll[*network.LinkStatus](ctx, c.COSI)
	if err != nil {
		t.Fatal(err)
	}

	var names []string
	for l := range links.All() {
		names = append(names, l.Metadata().ID())
	}

	if strings.Join(names, ",") != "eth0,eth1,eth2,eth3,lo" { // listed by ID
		t.Errorf("links = %v", names)
	}

	st := nodeState(t, s, "t1-w")
	if len(st.MACs) != 4 || st.MACs[0] != DerivedMAC("t1-w", 0) {
		t.Errorf("identity MACs = %v", st.MACs)
	}

	disks, err := safe.StateListAll[*block.Disk](ctx, c.COSI)
	if err != nil {
		t.Fatal(err)
	}

	var paths []string
	for d := range disks.All() {
		paths = append(paths, d.TypedSpec().DevPath+"/"+d.TypedSpec().Transport)
	}

	if strings.Join(paths, ",") != "/dev/nvme0n1/nvme,/dev/sda/virtio" {
		t.Errorf("disks = %v", paths)
	}
}
