package sim

import (
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cosi-project/runtime/pkg/resource"
	"github.com/cosi-project/runtime/pkg/safe"
	"github.com/cosi-project/runtime/pkg/state"
	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/client"
	clientconfig "github.com/siderolabs/talos/pkg/machinery/client/config"
	"github.com/siderolabs/talos/pkg/machinery/resources/cluster"
	"github.com/siderolabs/talos/pkg/machinery/resources/config"
	"github.com/siderolabs/talos/pkg/machinery/resources/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// testScenario: two clusters from different bundles and a maintenance node, on 127.0.99.x.
const testScenario = `
rebootDelay: 200ms
clusters:
  - name: t1
    contract: "1.13"
  - name: t2
    contract: "1.12"
nodes:
  - {name: t1-cp, address: 127.0.99.1, cluster: t1, role: controlplane}
  - {name: t1-w, address: 127.0.99.2, cluster: t1, role: worker}
  - {name: t2-cp, address: 127.0.99.3, cluster: t2, role: controlplane}
  - {name: t-maint, address: 127.0.99.4, mode: maintenance}
`

// talosClient is Talos's own Go client with a talosconfig the simulator wrote.
func talosClient(t *testing.T, cluster, file, endpoint string) *client.Client {
	t.Helper()

	cfg, err := clientconfig.Open(clusterFile(cluster, file))
	if err != nil {
		t.Fatal(err)
	}

	c, err := client.New(context.Background(), client.WithConfig(cfg), client.WithEndpoints(endpoint))
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { c.Close() }) //nolint:errcheck

	return c
}

func insecureClient(t *testing.T, endpoint string) *client.Client {
	t.Helper()

	c, err := client.New(context.Background(),
		client.WithTLSConfig(&tls.Config{InsecureSkipVerify: true}), //nolint:gosec
		client.WithEndpoints(endpoint))
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { c.Close() }) //nolint:errcheck

	return c
}

func callCtx(t *testing.T) context.Context {
	t.Helper()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)

	return ctx
}

func TestConfiguredNodeWithTalosClient(t *testing.T) {
	s := startSim(t, testScenario)
	ctx := callCtx(t)
	c := talosClient(t, "t1", "talosconfig", "127.0.99.1")

	ver, err := c.Version(ctx)
	if err != nil {
		t.Fatalf("Version: %v", err)
	}

	if got := ver.GetMessages()[0].GetVersion().GetTag(); got != "v1.13.9" {
		t.Errorf("tag = %q", got)
	}

	// MachineConfig: admin reads the bytes exactly as generated
	mc, err := safe.StateGetByID[*config.MachineConfig](ctx, c.COSI, config.ActiveID)
	if err != nil {
		t.Fatalf("COSI Get MachineConfigs: %v", err)
	}

	want, err := os.ReadFile(s.nodeByName("t1-cp").configPath)
	if err != nil {
		t.Fatal(err)
	}

	got, err := mc.Provider().Bytes()
	if err != nil {
		t.Fatal(err)
	}

	if string(got) != string(want) {
		t.Errorf("machine config differs from config.yaml (%d vs %d bytes)", len(got), len(want))
	}

	if mc.Config().Machine().Type().String() != "controlplane" {
		t.Errorf("machine type = %s", mc.Config().Machine().Type())
	}

	info, err := safe.StateGetByID[*cluster.Info](ctx, c.COSI, cluster.InfoID)
	if err != nil {
		t.Fatalf("COSI Get Infos: %v", err)
	}

	if info.TypedSpec().ClusterName != "t1" || info.TypedSpec().ClusterID != s.clusterByName("t1").ClusterID {
		t.Errorf("info = %+v", info.TypedSpec())
	}

	// List streams, and block resources live in namespace runtime
	vols, err := c.COSI.List(ctx, resource.NewMetadata("runtime", "VolumeStatuses.block.talos.dev", "", resource.VersionUndefined))
	if err != nil {
		t.Fatalf("COSI List VolumeStatuses: %v", err)
	}

	var ids []string
	for _, v := range vols.Items {
		ids = append(ids, v.Metadata().ID())
	}

	if strings.Join(ids, ",") != "EPHEMERAL,META,STATE" {
		t.Errorf("volumes = %v", ids)
	}

	members, err := c.EtcdMemberList(ctx, &machine.EtcdMemberListRequest{})
	if err != nil {
		t.Fatalf("EtcdMemberList: %v", err)
	}

	if n := len(members.GetMessages()[0].GetMembers()); n != 1 {
		t.Errorf("etcd members = %d", n)
	}

	// unknown types and missing resources fail as on Talos
	_, err = c.COSI.Get(ctx, resource.NewMetadata("runtime", "Nonsense.talos.dev", "x", resource.VersionUndefined))
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), `resource type "Nonsense.talos.dev" is not supported`) {
		t.Errorf("unknown type: %v", err)
	}

	_, err = c.COSI.Get(ctx, resource.NewMetadata("config", config.MachineConfigType, "nope", resource.VersionUndefined))
	if !state.IsNotFoundError(err) || !strings.Contains(err.Error(), "resource MachineConfigs.config.talos.dev(config/nope@undefined) doesn't exist") {
		t.Errorf("missing resource: %v", err)
	}

	// the call log saw it all, with the admin role
	var calls []CallRecord

	control(t, s, http.MethodGet, "/nodes/t1-cp/calls", "", &calls)

	if len(calls) < 5 || calls[0].Method != "/machine.MachineService/Version" || calls[0].Role != "os:admin" || calls[0].Code != "OK" {
		t.Errorf("calls = %+v", calls)
	}
}

func TestReaderRoles(t *testing.T) {
	startSim(t, testScenario)
	ctx := callCtx(t)
	c := talosClient(t, "t1", "talosconfig-reader", "127.0.99.1")

	if _, err := c.Version(ctx); err != nil {
		t.Fatalf("reader Version: %v", err)
	}

	if _, err := c.EtcdStatus(ctx); err != nil {
		t.Fatalf("reader EtcdStatus: %v", err)
	}

	_, err := safe.StateGetByID[*config.MachineConfig](ctx, c.COSI, config.ActiveID)
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("reader read the machine config: %v", err)
	}

	if _, err := safe.StateGetByID[*config.MachineType](ctx, c.COSI, config.MachineTypeID); err != nil {
		t.Errorf("reader MachineType: %v", err)
	}

	_, err = c.ResetGenericWithResponse(ctx, &machine.ResetRequest{Graceful: false, Reboot: true})
	if status.Code(err) != codes.PermissionDenied || status.Convert(err).Message() != "not authorized" {
		t.Errorf("reader Reset: %v", err)
	}
}

func TestMaintenanceNodeWithInsecureClient(t *testing.T) {
	startSim(t, testScenario)
	ctx := callCtx(t)
	c := insecureClient(t, "127.0.99.4")

	ver, err := c.Version(ctx)
	if err != nil {
		t.Fatalf("Version: %v", err)
	}

	if ver.GetMessages()[0].GetVersion().GetTag() != "v1.13.9" {
		t.Errorf("version = %v", ver)
	}

	if _, err := c.Disks(ctx); err != nil {
		t.Errorf("Disks: %v", err)
	}

	ms, err := safe.StateGetByID[*runtime.MachineStatus](ctx, c.COSI, runtime.MachineStatusID)
	if err != nil {
		t.Fatalf("MachineStatus: %v", err)
	}

	if ms.TypedSpec().Stage != runtime.MachineStageMaintenance {
		t.Errorf("stage = %s", ms.TypedSpec().Stage)
	}

	_, err = c.ResetGenericWithResponse(ctx, &machine.ResetRequest{Reboot: true})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("Reset in maintenance: %v", err)
	}

	_, err = safe.StateGetByID[*config.MachineConfig](ctx, c.COSI, config.ActiveID)
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("sensitive resource in maintenance: %v", err)
	}

	// `node` metadata is ignored in maintenance
	if _, err := c.Version(client.WithNode(ctx, "127.0.99.1")); err != nil {
		t.Errorf("routing in maintenance: %v", err)
	}
}

func TestWrongCAFails(t *testing.T) {
	startSim(t, testScenario)
	ctx := callCtx(t)

	// t2's talosconfig against t1's node: the server certificate is from another CA
	c := talosClient(t, "t2", "talosconfig", "127.0.99.1")

	_, err := c.Version(ctx)
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Fatalf("wrong CA: %v", err)
	}

	// a maintenance node is not signed by the cluster CA either
	c = talosClient(t, "t1", "talosconfig", "127.0.99.4")

	if _, err := c.Version(ctx); status.Code(err) != codes.Unavailable {
		t.Fatalf("cluster CA against maintenance node: %v", err)
	}
}

func TestRouting(t *testing.T) {
	startSim(t, testScenario)
	ctx := callCtx(t)
	cp := talosClient(t, "t1", "talosconfig", "127.0.99.1")

	// one-to-one through the control plane: the worker answers
	host, err := cp.MachineClient.Hostname(client.WithNode(ctx, "127.0.99.2"), nil)
	if err != nil {
		t.Fatalf("node proxy: %v", err)
	}

	if h := host.GetMessages()[0]; h.GetHostname() != "t1-w" || h.GetMetadata().GetHostname() != "" {
		t.Errorf("proxied hostname = %+v", h)
	}

	// COSI through `node` works
	if _, err := safe.StateGetByID[*runtime.MachineStatus](client.WithNode(ctx, "t1-w"), cp.COSI, runtime.MachineStatusID); err != nil {
		t.Errorf("COSI with node: %v", err)
	}

	// fan-out fills metadata.hostname; a failing target is an entry, not an error
	resp, err := cp.MachineClient.Hostname(client.WithNodes(ctx, "127.0.99.1", "127.0.99.2", "127.0.99.3"), nil)
	if err != nil {
		t.Fatalf("nodes fan-out: %v", err)
	}

	msgs := resp.GetMessages()
	if len(msgs) != 3 || msgs[0].GetMetadata().GetHostname() != "127.0.99.1" || msgs[1].GetHostname() != "t1-w" {
		t.Fatalf("fan-out = %+v", msgs)
	}

	if msgs[2].GetMetadata().GetError() == "" || msgs[2].GetMetadata().GetStatus().GetCode() != int32(codes.Unavailable) {
		t.Errorf("other cluster's node in fan-out = %+v", msgs[2])
	}

	_, err = safe.StateGetByID[*runtime.MachineStatus](client.WithNodes(ctx, "127.0.99.2"), cp.COSI, runtime.MachineStatusID)
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "one-2-many proxying is not supported for method /cosi.resource.State/Get") {
		t.Errorf("COSI with nodes: %v", err)
	}

	// a forwarded stream (COSI List) goes over the connection the control plane keeps for its
	// target, as the unary calls do: no dial after the first call to that target
	before := dials.Load()

	for i := range 2 {
		if _, err := safe.StateListAll[*runtime.MachineStatus](client.WithNode(ctx, "t1-w"), cp.COSI); err != nil {
			t.Fatalf("COSI List with node (%d): %v", i, err)
		}
	}

	if d := dials.Load() - before; d != 0 {
		t.Errorf("two forwarded Lists dialled %d connection(s), want 0 (the kept backend)", d)
	}

	// a worker cannot forward
	w := talosClient(t, "t1", "talosconfig", "127.0.99.2")

	_, err = w.Version(client.WithNode(ctx, "127.0.99.1"))
	if status.Code(err) != codes.PermissionDenied || status.Convert(err).Message() != "no request forwarding" {
		t.Errorf("worker forwarding: %v", err)
	}

	if _, err := w.Version(client.WithNode(ctx, "127.0.99.2")); err != nil {
		t.Errorf("worker naming itself: %v", err)
	}
}

func TestFaultsAndCallLog(t *testing.T) {
	s := startSim(t, testScenario)
	c := talosClient(t, "t1", "talosconfig", "127.0.99.2")

	if code := control(t, s, http.MethodPost, "/nodes/t1-w/faults",
		`{"method":"/machine.MachineService/Version","kind":"error","code":"Unavailable","message":"boom","count":1}`, nil); code != http.StatusCreated {
		t.Fatalf("POST faults: %d", code)
	}

	_, err := c.Version(callCtx(t))
	if status.Code(err) != codes.Unavailable || status.Convert(err).Message() != "boom" {
		t.Fatalf("error fault: %v", err)
	}

	if _, err := c.Version(callCtx(t)); err != nil {
		t.Fatalf("count 1 fault fired twice: %v", err)
	}

	control(t, s, http.MethodPost, "/nodes/t1-w/faults", `{"method":"*","kind":"hang"}`, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()

	if _, err := c.Version(ctx); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("hang fault: %v", err)
	}

	control(t, s, http.MethodDelete, "/nodes/t1-w/faults", "", nil)
	control(t, s, http.MethodPost, "/nodes/t1-w/faults", `{"kind":"drop","count":1}`, nil)

	if _, err := c.Version(callCtx(t)); status.Code(err) != codes.Unavailable {
		t.Fatalf("drop fault: %v", err)
	}

	// The dropped call is recorded when the server side of it ends, which can be a moment after
	// the client saw the connection go: wait (bounded) until no call is still Running.
	var calls []CallRecord

	for deadline := time.Now().Add(5 * time.Second); ; {
		control(t, s, http.MethodGet, "/nodes/t1-w/calls", "", &calls)
		running := false
		for _, call := range calls {
			running = running || call.Code == "Running"
		}
		if !running || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}

	var codesSeen []string
	for _, call := range calls {
		// the hung call ends as DeadlineExceeded or Canceled, whichever side notices first
		codesSeen = append(codesSeen, strings.Replace(call.Code, "DeadlineExceeded", "Canceled", 1))
	}

	if strings.Join(codesSeen, ",") != "Unavailable,OK,Canceled,Unavailable" {
		t.Errorf("call codes = %v", codesSeen)
	}

	control(t, s, http.MethodDelete, "/nodes/t1-w/calls", "", nil)
	control(t, s, http.MethodGet, "/nodes/t1-w/calls", "", &calls)

	if len(calls) != 0 {
		t.Errorf("calls after DELETE = %d", len(calls))
	}
}
