package sim

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosi-project/runtime/pkg/safe"
	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/resources/config"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestApplyInMaintenanceJoinsCluster(t *testing.T) {
	s := startSim(t, testScenario)
	ctx := callCtx(t)

	data, err := os.ReadFile(filepath.Join(stateDir, "nodes", "t1-w", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}

	m := insecureClient(t, "127.0.99.4")

	resp, err := m.ApplyConfiguration(ctx, &machine.ApplyConfigurationRequest{Data: data, Mode: machine.ApplyConfigurationRequest_AUTO})
	if err != nil {
		t.Fatalf("apply in maintenance: %v", err)
	}

	if msg := resp.GetMessages()[0]; msg.GetMode() != machine.ApplyConfigurationRequest_NO_REBOOT || msg.GetModeDetails() != "Applied configuration without a reboot" {
		t.Errorf("apply reply = %+v", msg)
	}

	waitFor(t, 3*time.Second, "configured", func() bool {
		st := nodeState(t, s, "t-maint")

		return st.Mode == ModeConfigured && st.Power == powerUp
	})

	if st := nodeState(t, s, "t-maint"); st.Cluster != "t1" || st.Role != RoleWorker {
		t.Errorf("after apply: %+v", st)
	}

	// now the cluster's talosconfig verifies it, and the machine config is the applied bytes
	c := talosClient(t, "t1", "talosconfig", "127.0.99.4")

	mc, err := safe.StateGetByID[*config.MachineConfig](callCtx(t), c.COSI, config.ActiveID)
	if err != nil {
		t.Fatalf("machine config: %v", err)
	}

	if b, _ := mc.Provider().Bytes(); string(b) != string(data) { //nolint:errcheck
		t.Error("machine config differs from the applied bytes")
	}
}

func TestApplyOutsideMaintenance(t *testing.T) {
	s := startSim(t, testScenario)
	ctx := callCtx(t)

	reader := talosClient(t, "t1", "talosconfig-reader", "127.0.99.2")

	_, err := reader.ApplyConfiguration(ctx, &machine.ApplyConfigurationRequest{Data: []byte("version: v1alpha1\n"), Mode: machine.ApplyConfigurationRequest_AUTO})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("reader apply: %v", err)
	}

	admin := talosClient(t, "t1", "talosconfig", "127.0.99.2")

	_, err = admin.ApplyConfiguration(ctx, &machine.ApplyConfigurationRequest{Data: []byte("apiVersion: v1alpha1\nkind: HostnameConfig\nhostname: x\n"), Mode: machine.ApplyConfigurationRequest_NO_REBOOT})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "doesn't contain v1alpha1 config") {
		t.Errorf("partial config outside maintenance: %v", err)
	}

	_, err = admin.ApplyConfiguration(ctx, &machine.ApplyConfigurationRequest{Data: []byte("{{ nonsense"), Mode: machine.ApplyConfigurationRequest_NO_REBOOT})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("garbage: %v", err)
	}

	current, err := os.ReadFile(filepath.Join(stateDir, "nodes", "t1-w", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}

	patched, err := ApplyPatch(current, "machine:\n  sysctls:\n    net.core.somaxconn: \"65535\"\n")
	if err != nil {
		t.Fatal(err)
	}

	if _, err := admin.ApplyConfiguration(ctx, &machine.ApplyConfigurationRequest{Data: patched, Mode: machine.ApplyConfigurationRequest_NO_REBOOT}); err != nil {
		t.Fatalf("admin apply: %v", err)
	}

	if st := nodeState(t, s, "t1-w"); st.ConfigSHA256 != configDigest(patched) || st.ConfigVersion != 2 {
		t.Errorf("after apply: %+v", st)
	}

	// and out of band through the control API
	if code := control(t, s, http.MethodPost, "/nodes/t1-w/config", "machine:\n  sysctls:\n    vm.max_map_count: \"262144\"\n", nil); code != http.StatusOK {
		t.Fatalf("POST config: %d", code)
	}

	mc, err := safe.StateGetByID[*config.MachineConfig](callCtx(t), admin.COSI, config.ActiveID)
	if err != nil {
		t.Fatal(err)
	}

	if got := mc.Config().Machine().Sysctls(); got["vm.max_map_count"] != "262144" || got["net.core.somaxconn"] != "65535" {
		t.Errorf("sysctls = %v", got)
	}
}

// A dry run answers as machined does: validated, the diff against the running configuration,
// nothing applied; a configuration Talos's validation refuses is machined's InvalidArgument.
func TestApplyDryRun(t *testing.T) {
	s := startSim(t, testScenario)
	ctx := callCtx(t)
	admin := talosClient(t, "t1", "talosconfig", "127.0.99.2")

	current, err := os.ReadFile(filepath.Join(stateDir, "nodes", "t1-w", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}

	dry := func(data []byte) (*machine.ApplyConfiguration, error) {
		resp, err := admin.ApplyConfiguration(ctx, &machine.ApplyConfigurationRequest{Data: data, Mode: machine.ApplyConfigurationRequest_AUTO, DryRun: true})
		if err != nil {
			return nil, err
		}

		return resp.GetMessages()[0], nil
	}

	same, err := dry(current)
	if err != nil {
		t.Fatalf("dry run of the running configuration: %v", err)
	}

	if want := "Dry run summary:\nApplied configuration without a reboot (skipped in dry-run).\nConfig diff:\n\nNo changes."; same.GetModeDetails() != want {
		t.Errorf("mode details = %q, want %q", same.GetModeDetails(), want)
	}

	if same.GetMode() != machine.ApplyConfigurationRequest_NO_REBOOT || len(same.GetWarnings()) != 0 {
		t.Errorf("dry run reply = %+v", same)
	}

	patched, err := ApplyPatch(current, "machine:\n  sysctls:\n    net.core.somaxconn: \"65535\"\n")
	if err != nil {
		t.Fatal(err)
	}

	changed, err := dry(patched)
	if err != nil {
		t.Fatalf("dry run of a patched configuration: %v", err)
	}

	details := changed.GetModeDetails()
	if !strings.Contains(details, "\n--- a\n+++ b\n@@ ") || !strings.Contains(details, "\n+    sysctls:\n+        net.core.somaxconn: \"65535\"\n") {
		t.Errorf("diff of the patched configuration:\n%s", details)
	}

	invalid, err := ApplyPatch(current, "machine:\n  network:\n    kubespan:\n      enabled: true\ncluster:\n  discovery:\n    enabled: false\n")
	if err != nil {
		t.Fatal(err)
	}

	_, err = dry(invalid)
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "KubeSpan requires cluster discovery to be enabled") { // Talos v1.14.1 validation's words
		t.Errorf("dry run of an invalid configuration: %v", err)
	}

	st := nodeState(t, s, "t1-w")
	if st.ConfigSHA256 != configDigest(current) || st.ConfigVersion != 1 {
		t.Errorf("a dry run changed the node: %+v", st)
	}

	var calls []CallRecord
	if code := control(t, s, http.MethodGet, "/nodes/t1-w/calls", "", &calls); code != http.StatusOK {
		t.Fatalf("GET calls: %d", code)
	}

	dryRuns := 0

	for _, c := range calls {
		if c.Method != "/machine.MachineService/ApplyConfiguration" {
			continue
		}

		if r, ok := c.Request.(map[string]any); !ok || r["dryRun"] != true {
			t.Errorf("call log: %+v", c)
		}

		dryRuns++
	}

	if dryRuns != 3 {
		t.Errorf("call log has %d dry runs, want 3", dryRuns)
	}
}

// The node keeps its running configuration loaded for dry runs (runningProvider); once the
// configuration changes, a dry run diffs against the new one, not the one loaded before.
func TestApplyDryRunAfterTheConfigurationChanged(t *testing.T) {
	s := startSim(t, testScenario)
	ctx := callCtx(t)
	admin := talosClient(t, "t1", "talosconfig", "127.0.99.2")

	before, err := os.ReadFile(filepath.Join(stateDir, "nodes", "t1-w", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}

	dry := func(data []byte) string {
		resp, err := admin.ApplyConfiguration(ctx, &machine.ApplyConfigurationRequest{Data: data, Mode: machine.ApplyConfigurationRequest_AUTO, DryRun: true})
		if err != nil {
			t.Fatalf("dry run: %v", err)
		}

		return resp.GetMessages()[0].GetModeDetails()
	}

	if got := dry(before); !strings.HasSuffix(got, "No changes.") {
		t.Fatalf("dry run of the running configuration:\n%s", got)
	}

	if code := control(t, s, http.MethodPost, "/nodes/t1-w/config", "machine:\n  sysctls:\n    vm.max_map_count: \"262144\"\n", nil); code != http.StatusOK {
		t.Fatalf("POST config: %d", code)
	}

	// the configuration of before is now missing the sysctl the node runs with
	if got := dry(before); !strings.Contains(got, "\n-        vm.max_map_count: \"262144\"\n") {
		t.Errorf("dry run of the earlier configuration after the change:\n%s", got)
	}
}
