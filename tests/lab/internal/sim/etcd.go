package sim

import (
	"fmt"
	"sort"

	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The simulated etcd of a cluster: a member list (the control planes that joined) and, per node,
// the state of its etcd process (running, down, hang). A member is started when its node is up,
// configured in the cluster and its etcd is running. All functions here run under Sim.mu.

type etcdMember struct {
	ID   uint64
	Name string // node hostname, as etcd member names in Talos
	Node *Node
}

func (m *etcdMember) started(c *Cluster) bool {
	n := m.Node

	return n.power == powerUp && n.mode == ModeConfigured && n.cluster == c && n.etcd == EtcdRunning && n.memberID == m.ID
}

// etcdError is an etcd failure as it reaches the Talos API: a gRPC status.
func etcdError(code codes.Code, format string, args ...any) error {
	return status.Errorf(code, format, args...)
}

func connRefused(addr string) error {
	return etcdError(codes.Unavailable,
		`connection error: desc = "transport: Error while dialing: dial tcp %s:2379: connect: connection refused"`, addr)
}

var (
	errNoLeader               = etcdError(codes.Unavailable, "etcdserver: no leader")
	errNotEnoughStartedMember = "etcdserver: re-configuration failed due to not enough started members"
)

func (c *Cluster) startedCount() int {
	count := 0

	for _, m := range c.members {
		if m.started(c) {
			count++
		}
	}

	return count
}

func (c *Cluster) hasQuorum() bool {
	return len(c.members) > 0 && c.startedCount() > len(c.members)/2
}

// leader is the started member with the lowest ID (or the forced leader), 0 without quorum.
func (c *Cluster) leaderID() uint64 {
	if !c.hasQuorum() {
		return 0
	}

	for _, m := range c.members {
		if m.ID == c.leader && m.started(c) {
			return m.ID
		}
	}

	var best uint64

	for _, m := range c.members {
		if m.started(c) && (best == 0 || m.ID < best) {
			best = m.ID
		}
	}

	c.leader = best

	return best
}

func (c *Cluster) member(id uint64) *etcdMember {
	for _, m := range c.members {
		if m.ID == id {
			return m
		}
	}

	return nil
}

// join adds n as a new member (after bootstrap, a join, or an EPHEMERAL wipe).
func (c *Cluster) join(n *Node) {
	c.joinSeq++
	id := DerivedMemberID(fmt.Sprintf("%s/%s/%d", c.Name, n.Spec.Name, c.joinSeq))
	c.members = append(c.members, &etcdMember{ID: id, Name: n.hostname(), Node: n})
	sort.Slice(c.members, func(i, j int) bool { return c.members[i].ID < c.members[j].ID })
	n.memberID = id
}

func (c *Cluster) remove(id uint64) {
	for i, m := range c.members {
		if m.ID == id {
			c.members = append(c.members[:i], c.members[i+1:]...)
			if m.Node.memberID == id {
				// a removed member shuts its etcd down and wipes its data
				m.Node.memberID = 0
				m.Node.etcd = EtcdDown
			}

			return
		}
	}
}

// mayRemove is etcd's strict reconfiguration check (IsReadyToRemoveVotingMember).
func (c *Cluster) mayRemove(id uint64) bool {
	members, started := 0, 0

	for _, m := range c.members {
		if m.ID == id {
			continue
		}

		members++

		if m.started(c) {
			started++
		}
	}

	return started >= members/2+1
}

// clientReachable says whether an etcd client built from the control-plane IPs gets anywhere.
func (c *Cluster) clientError() error {
	if len(c.members) == 0 || c.startedCount() == 0 {
		return connRefused(c.firstCPAddress())
	}

	if !c.hasQuorum() {
		return errNoLeader
	}

	return nil
}

func (c *Cluster) firstCPAddress() string {
	for _, m := range c.members {
		return m.Node.Spec.Address
	}

	return "127.0.0.1"
}

// etcdMemberList implements EtcdMemberList for node n. hang=true means: block until the caller
// gives up.
func (n *Node) etcdMemberList(queryLocal bool) (resp *machine.EtcdMembers, hang bool, err error) {
	c := n.cluster

	if n.etcd == EtcdHang {
		return nil, true, nil
	}

	if queryLocal && (n.memberID == 0 || n.etcd != EtcdRunning) {
		return nil, false, connRefused("127.0.0.1")
	}

	if err := c.clientError(); err != nil {
		return nil, false, err
	}

	out := &machine.EtcdMembers{}

	for _, m := range c.members {
		out.LegacyMembers = append(out.LegacyMembers, m.Name)
		out.Members = append(out.Members, &machine.EtcdMember{
			Id:         m.ID,
			Hostname:   m.Name,
			PeerUrls:   []string{fmt.Sprintf("https://%s:2380", m.Node.Spec.Address)},
			ClientUrls: []string{fmt.Sprintf("https://%s:2379", m.Node.Spec.Address)},
		})
	}

	return out, false, nil
}

// etcdStatus implements EtcdStatus (status of the local member).
func (n *Node) etcdStatus() (*machine.EtcdMemberStatus, bool, error) {
	if n.etcd == EtcdHang {
		return nil, true, nil
	}

	if n.memberID == 0 || n.etcd != EtcdRunning {
		return nil, false, status.Errorf(codes.Unavailable, "failed to query etcd status: %s", status.Convert(connRefused("127.0.0.1")).Message())
	}

	c := n.cluster
	leader := c.leaderID()

	st := &machine.EtcdMemberStatus{
		MemberId:         n.memberID,
		ProtocolVersion:  "3.6.5",
		StorageVersion:   "3.6.0",
		DbSize:           20 << 20,
		DbSizeInUse:      12 << 20,
		Leader:           leader,
		RaftIndex:        uint64(4000 + 10*len(c.members)),
		RaftTerm:         uint64(2 + c.joinSeq),
		RaftAppliedIndex: uint64(4000 + 10*len(c.members)),
	}

	if leader == 0 {
		st.Errors = []string{"etcdserver: no leader"}
	}

	return st, false, nil
}

// etcdLeave removes n from its cluster's etcd (EtcdLeaveCluster, and the leave step of a graceful
// reset).
func (n *Node) etcdLeave() (hang bool, err error) {
	if n.etcd == EtcdHang {
		return true, nil
	}

	c := n.cluster

	if n.memberID == 0 {
		return false, status.Error(codes.Unavailable, "failed to leave cluster: etcd member ID is not available: etcd has not joined the cluster")
	}

	if err := c.clientError(); err != nil {
		return false, status.Errorf(status.Code(err), "failed to leave cluster: %s", status.Convert(err).Message())
	}

	if !c.mayRemove(n.memberID) {
		return false, status.Error(codes.FailedPrecondition, "failed to leave cluster: "+errNotEnoughStartedMember)
	}

	c.remove(n.memberID)

	return false, nil
}

// etcdRemoveMember implements EtcdRemoveMemberByID.
func (n *Node) etcdRemoveMember(id uint64) (bool, error) {
	if n.etcd == EtcdHang {
		return true, nil
	}

	c := n.cluster

	if err := c.clientError(); err != nil {
		return false, status.Errorf(status.Code(err), "failed to remove member: %s", status.Convert(err).Message())
	}

	if c.member(id) == nil {
		return false, status.Error(codes.NotFound, "etcdserver: member not found")
	}

	if !c.mayRemove(id) {
		return false, status.Error(codes.FailedPrecondition, "failed to remove member: "+errNotEnoughStartedMember)
	}

	c.remove(id)

	return false, nil
}

// etcdForfeitLeadership moves leadership away from n when it leads; returns the new leader name.
func (n *Node) etcdForfeitLeadership() (string, bool, error) {
	if n.etcd == EtcdHang {
		return "", true, nil
	}

	c := n.cluster

	if n.memberID == 0 || n.etcd != EtcdRunning {
		return "", false, status.Errorf(codes.Unavailable, "failed to forfeit leadership: %s", status.Convert(connRefused("127.0.0.1")).Message())
	}

	if err := c.clientError(); err != nil {
		return "", false, status.Errorf(status.Code(err), "failed to forfeit leadership: %s", status.Convert(err).Message())
	}

	if c.leaderID() != n.memberID {
		return "", false, nil
	}

	for _, m := range c.members {
		if m.ID != n.memberID && m.started(c) {
			c.leader = m.ID

			return m.Name, false, nil
		}
	}

	return "", false, nil
}
