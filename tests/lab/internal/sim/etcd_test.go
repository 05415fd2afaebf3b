package sim

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const threeCPScenario = `
rebootDelay: 100ms
clusters:
  - name: t1
nodes:
  - {name: t1-cpa, address: 127.0.99.11, cluster: t1, role: controlplane}
  - {name: t1-cpb, address: 127.0.99.12, cluster: t1, role: controlplane}
  - {name: t1-cpc, address: 127.0.99.13, cluster: t1, role: controlplane}
  - {name: t1-wa, address: 127.0.99.14, cluster: t1, role: worker}
`

func TestEtcdQuorumAndMembership(t *testing.T) {
	s := startSim(t, threeCPScenario)
	ctx := callCtx(t)
	c := talosClient(t, "t1", "talosconfig", "127.0.99.11")

	list := func() (*machine.EtcdMemberListResponse, error) {
		return c.EtcdMemberList(ctx, &machine.EtcdMemberListRequest{})
	}

	resp, err := list()
	if err != nil || len(resp.GetMessages()[0].GetMembers()) != 3 {
		t.Fatalf("member list: %v %v", resp, err)
	}

	// one member down: quorum holds
	control(t, s, http.MethodPost, "/nodes/t1-cpc/etcd", `{"state":"down"}`, nil)

	if _, err := list(); err != nil {
		t.Fatalf("member list with 2/3: %v", err)
	}

	// two down: no leader
	control(t, s, http.MethodPost, "/nodes/t1-cpb/etcd", `{"state":"down"}`, nil)

	if _, err := list(); status.Code(err) != codes.Unavailable || status.Convert(err).Message() != "etcdserver: no leader" {
		t.Fatalf("member list without quorum: %v", err)
	}

	b := talosClient(t, "t1", "talosconfig", "127.0.99.12")

	if _, err := b.EtcdStatus(ctx); status.Code(err) != codes.Unavailable {
		t.Errorf("status of a down member: %v", err)
	}

	control(t, s, http.MethodPost, "/nodes/t1-cpb/etcd", `{"state":"running"}`, nil)

	// remove the down member from a healthy one, as after a non-graceful reset
	st := nodeState(t, s, "t1-cpc")

	var id uint64

	for _, m := range resp.GetMessages()[0].GetMembers() {
		if m.GetHostname() == "t1-cpc" {
			id = m.GetId()
		}
	}

	if memberHex(id) != st.EtcdMemberID {
		t.Fatalf("member id %016x vs %s", id, st.EtcdMemberID)
	}

	if err := c.EtcdRemoveMemberByID(ctx, &machine.EtcdRemoveMemberByIDRequest{MemberId: id}); err != nil {
		t.Fatalf("remove member: %v", err)
	}

	if err := c.EtcdRemoveMemberByID(ctx, &machine.EtcdRemoveMemberByIDRequest{MemberId: id}); status.Code(err) != codes.NotFound {
		t.Errorf("remove unknown member: %v", err)
	}

	// a worker has no etcd
	w := talosClient(t, "t1", "talosconfig", "127.0.99.14")

	if _, err := w.EtcdMemberList(ctx, &machine.EtcdMemberListRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("worker member list: %v", err)
	}

	// leave from b: 2 members, both started; removing b leaves a with 1/1
	if err := b.EtcdLeaveCluster(ctx, &machine.EtcdLeaveClusterRequest{}); err != nil {
		t.Fatalf("leave: %v", err)
	}

	// a alone cannot leave (etcd's strict reconfiguration check)
	if err := c.EtcdLeaveCluster(ctx, &machine.EtcdLeaveClusterRequest{}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("last member leaving: %v", err)
	}

	// hang: the call blocks until the caller's deadline
	control(t, s, http.MethodPost, "/nodes/t1-cpa/etcd", `{"state":"hang"}`, nil)

	hctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()

	if _, err := c.EtcdMemberList(hctx, &machine.EtcdMemberListRequest{}); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("hung etcd: %v", err)
	}
}

func TestEtcdNeverBootstrapped(t *testing.T) {
	s := startSim(t, `
clusters:
  - {name: t1, etcd: down}
nodes:
  - {name: t1-cpa, address: 127.0.99.11, cluster: t1, role: controlplane}
`)
	ctx := callCtx(t)
	c := talosClient(t, "t1", "talosconfig", "127.0.99.11")

	_, err := c.EtcdMemberList(ctx, &machine.EtcdMemberListRequest{})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("member list before bootstrap: %v", err)
	}

	if _, err := c.EtcdStatus(ctx); status.Code(err) != codes.Unavailable {
		t.Fatalf("status before bootstrap: %v", err)
	}

	// etcd running through the control API bootstraps the cluster
	control(t, s, http.MethodPost, "/nodes/t1-cpa/etcd", `{"state":"running"}`, nil)

	resp, err := c.EtcdMemberList(ctx, &machine.EtcdMemberListRequest{})
	if err != nil || len(resp.GetMessages()[0].GetMembers()) != 1 {
		t.Fatalf("after bootstrap: %v %v", resp, err)
	}
}
