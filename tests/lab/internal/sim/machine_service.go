package sim

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/api/storage"
	"github.com/siderolabs/talos/pkg/machinery/role"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// gitSHA is what Version reports as the build commit for each Talos version.
var gitSHA = map[string]string{"v1.13.9": "3ebd10a7", "v1.14.0": "7a84d742", "v1.14.1": "2f86b9d2"}

type machineServer struct {
	machine.UnimplementedMachineServiceServer

	n *Node
}

func (m *machineServer) Version(context.Context, *emptypb.Empty) (*machine.VersionResponse, error) {
	tag := m.n.Spec.TalosVersion

	return &machine.VersionResponse{Messages: []*machine.Version{{
		Version: &machine.VersionInfo{
			Tag:       tag,
			Sha:       firstNonEmpty(gitSHA[tag], derivedHex("sha/"+tag, 4)),
			Built:     "",
			GoVersion: "go1.26.6",
			Os:        "linux",
			Arch:      "amd64",
		},
		Platform: &machine.PlatformInfo{Name: "metal", Mode: "metal"},
		Features: &machine.FeaturesInfo{Rbac: true},
	}}}, nil
}

func (m *machineServer) Hostname(context.Context, *emptypb.Empty) (*machine.HostnameResponse, error) {
	s := m.n.sim

	s.mu.Lock()
	defer s.mu.Unlock()

	return &machine.HostnameResponse{Messages: []*machine.Hostname{{Hostname: m.n.hostname()}}}, nil
}

// checkControlPlane is machinehelper.CheckControlplane.
func (n *Node) checkControlPlaneLocked(api string) error {
	if n.mode != ModeConfigured || n.facts == nil {
		return status.Errorf(codes.Unimplemented, "machine type is not set, cannot use %s API", api)
	}

	if !n.isControlPlane() {
		return status.Errorf(codes.Unimplemented, "%s is only available on control plane nodes", api)
	}

	return nil
}

// etcdCall runs f under the lock; when f says the local etcd hangs, it blocks until the caller
// gives up (the deadline of the call) or the node's etcd state changes.
func (n *Node) etcdCall(ctx context.Context, api string, f func() (bool, error)) error {
	s := n.sim

	for {
		s.mu.Lock()

		if err := n.checkControlPlaneLocked(api); err != nil {
			s.mu.Unlock()

			return err
		}

		hang, err := f()
		kick := n.kick
		s.mu.Unlock()

		if !hang {
			return err
		}

		select {
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-kick:
		}
	}
}

func (m *machineServer) EtcdMemberList(ctx context.Context, req *machine.EtcdMemberListRequest) (*machine.EtcdMemberListResponse, error) {
	var out *machine.EtcdMembers

	err := m.n.etcdCall(ctx, "member list", func() (bool, error) {
		var (
			hang bool
			err  error
		)

		out, hang, err = m.n.etcdMemberList(req.GetQueryLocal())

		return hang, err
	})
	if err != nil {
		return nil, err
	}

	return &machine.EtcdMemberListResponse{Messages: []*machine.EtcdMembers{out}}, nil
}

func (m *machineServer) EtcdStatus(ctx context.Context, _ *emptypb.Empty) (*machine.EtcdStatusResponse, error) {
	var out *machine.EtcdMemberStatus

	err := m.n.etcdCall(ctx, "etcd status", func() (bool, error) {
		var (
			hang bool
			err  error
		)

		out, hang, err = m.n.etcdStatus()

		return hang, err
	})
	if err != nil {
		return nil, err
	}

	return &machine.EtcdStatusResponse{Messages: []*machine.EtcdStatus{{MemberStatus: out}}}, nil
}

func (m *machineServer) EtcdLeaveCluster(ctx context.Context, _ *machine.EtcdLeaveClusterRequest) (*machine.EtcdLeaveClusterResponse, error) {
	err := m.n.etcdCall(ctx, "etcd leave", m.n.etcdLeave)
	if err != nil {
		return nil, err
	}

	m.n.sim.log.Printf("%s: left etcd", m.n.Spec.Name)

	return &machine.EtcdLeaveClusterResponse{Messages: []*machine.EtcdLeaveCluster{{}}}, nil
}

func (m *machineServer) EtcdRemoveMemberByID(ctx context.Context, req *machine.EtcdRemoveMemberByIDRequest) (*machine.EtcdRemoveMemberByIDResponse, error) {
	err := m.n.etcdCall(ctx, "etcd remove member", func() (bool, error) { return m.n.etcdRemoveMember(req.GetMemberId()) })
	if err != nil {
		return nil, err
	}

	m.n.sim.log.Printf("%s: removed etcd member %016x", m.n.Spec.Name, req.GetMemberId())

	return &machine.EtcdRemoveMemberByIDResponse{Messages: []*machine.EtcdRemoveMemberByID{{}}}, nil
}

func (m *machineServer) EtcdForfeitLeadership(ctx context.Context, _ *machine.EtcdForfeitLeadershipRequest) (*machine.EtcdForfeitLeadershipResponse, error) {
	var leader string

	err := m.n.etcdCall(ctx, "etcd forfeit leadership", func() (bool, error) {
		var (
			hang bool
			err  error
		)

		leader, hang, err = m.n.etcdForfeitLeadership()

		return hang, err
	})
	if err != nil {
		return nil, err
	}

	return &machine.EtcdForfeitLeadershipResponse{Messages: []*machine.EtcdForfeitLeadership{{Member: leader}}}, nil
}

func (m *machineServer) Reset(_ context.Context, req *machine.ResetRequest) (*machine.ResetResponse, error) {
	actorID, err := m.n.reset(req)
	if err != nil {
		return nil, err
	}

	return &machine.ResetResponse{Messages: []*machine.Reset{{ActorId: actorID}}}, nil
}

func (m *machineServer) Reboot(_ context.Context, _ *machine.RebootRequest) (*machine.RebootResponse, error) {
	n := m.n
	s := n.sim

	s.mu.Lock()
	delay := n.rebootDelay
	s.mu.Unlock()

	actorID := RandomUUID()

	s.log.Printf("%s: reboot requested", n.Spec.Name)

	s.goAfter(sequenceDelay, func() {
		n.powerCycle(delay, stageRebooting, func() {
			// a staged configuration becomes active on reboot
			if n.mode == ModeConfigured && n.persistent != nil && configDigest(n.persistent) != configDigest(n.config) {
				if facts, err := ParseConfigFacts(n.persistent); err == nil {
					n.setConfiguredLocked(n.persistent, facts)
				}
			}
		})
	})

	return &machine.RebootResponse{Messages: []*machine.Reboot{{ActorId: actorID}}}, nil
}

// validationMode is the RuntimeMode handed to the config validator (metal, not a container).
type validationMode struct{ installed bool }

func (v validationMode) String() string        { return "metal" }
func (v validationMode) RequiresInstall() bool { return !v.installed }
func (v validationMode) InContainer() bool     { return false }

//nolint:gocyclo,cyclop
func (m *machineServer) ApplyConfiguration(ctx context.Context, req *machine.ApplyConfigurationRequest) (*machine.ApplyConfigurationResponse, error) {
	n := m.n
	s := n.sim
	roles := rolesFrom(ctx)

	s.mu.Lock()
	inMaintenance := n.mode == ModeMaintenance
	installed := n.installed
	delay := n.rebootDelay
	s.mu.Unlock()

	if !inMaintenance && !roles.Includes(role.Admin) {
		return nil, errNotAuthorized
	}

	facts, err := ParseConfigFacts(req.GetData())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}

	var warnings []string

	provider, loadErr := LoadsWithConfigloader(req.GetData())
	if loadErr != nil && !isLayout14(facts) {
		return nil, status.Error(codes.InvalidArgument, loadErr.Error())
	}

	if !inMaintenance && !facts.HasV1Alpha1 {
		return nil, status.Error(codes.InvalidArgument, "the applied machine configuration doesn't contain v1alpha1 config, did you mean to patch the machine config instead?")
	}

	if provider != nil {
		warnings, err = provider.Validate(validationMode{installed: installed})
		if err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
	}

	mode := req.GetMode()
	modeName := strings.ToLower(mode.String())

	if inMaintenance && mode == machine.ApplyConfigurationRequest_REBOOT {
		mode = machine.ApplyConfigurationRequest_NO_REBOOT
	}

	details := "Applied configuration with a reboot"

	switch mode { //nolint:exhaustive
	case machine.ApplyConfigurationRequest_TRY, machine.ApplyConfigurationRequest_NO_REBOOT:
		details = "Applied configuration without a reboot"
	case machine.ApplyConfigurationRequest_STAGED:
		details = "Staged configuration to be applied after the next reboot"
	case machine.ApplyConfigurationRequest_AUTO:
		mode = machine.ApplyConfigurationRequest_NO_REBOOT
		details = "Applied configuration without a reboot"
		modeName = fmt.Sprintf("%s(%s)", modeName, mode)
	}

	if req.GetDryRun() {
		s.mu.Lock()
		current := append([]byte(nil), n.config...)
		s.mu.Unlock()

		diff, err := dryRunDiff(current, req.GetData(), provider, n.runningProvider(current))
		if err != nil {
			return nil, fmt.Errorf("failed to generate diff: %w", err)
		}

		// machined answers a dry run without the validation warnings (v1alpha1_server.go)
		return &machine.ApplyConfigurationResponse{Messages: []*machine.ApplyConfiguration{{
			Mode:        mode,
			ModeDetails: fmt.Sprintf("Dry run summary:\n%s (skipped in dry-run).\n%s", details, diff),
		}}}, nil
	}

	s.log.Printf("%s: apply config request: mode %s", n.Spec.Name, strings.ToLower(modeName))

	data := append([]byte(nil), req.GetData()...)

	s.mu.Lock()
	n.lastApply = &ApplyStatus{Mode: modeName, Maintenance: inMaintenance, SHA256: configDigest(data), Size: len(data)}

	switch {
	case inMaintenance && !facts.HasV1Alpha1:
		// a partial config (e.g. network documents only): the node stays in maintenance
		n.config = data
		n.configVersion++
		s.mu.Unlock()
	case inMaintenance:
		s.mu.Unlock()
		// the node installs (if needed) and boots with the configuration
		s.goAfter(sequenceDelay, func() {
			n.powerCycle(delay, stageInstalling, func() {
				n.setConfiguredLocked(data, facts)
				n.installed = true
			})
		})
	case mode == machine.ApplyConfigurationRequest_STAGED:
		n.persistent = data
		s.mu.Unlock()
	case mode == machine.ApplyConfigurationRequest_TRY:
		// the configuration runs, the persistent one stays, until the window ends (rollback) or
		// another apply replaces both
		persistent := n.persistent
		n.applyLiveLocked(data, facts)
		n.persistent = persistent
		n.tryEpoch++
		epoch := n.tryEpoch
		s.mu.Unlock()
		s.goAfter(tryTimeout(req), func() { n.endTry(epoch) })
	case mode == machine.ApplyConfigurationRequest_REBOOT:
		n.persistent = data
		s.mu.Unlock()
		s.goAfter(sequenceDelay, func() {
			n.powerCycle(delay, stageRebooting, func() { n.setConfiguredLocked(data, facts) })
		})
	default:
		n.tryEpoch++
		n.applyLiveLocked(data, facts)
		s.mu.Unlock()
	}

	return &machine.ApplyConfigurationResponse{Messages: []*machine.ApplyConfiguration{{
		Mode:        mode,
		ModeDetails: details,
		Warnings:    warnings,
	}}}, nil
}

// tryTimeout is the TRY window: the request's, else Talos's default (constants.ConfigTryTimeout).
func tryTimeout(req *machine.ApplyConfigurationRequest) time.Duration {
	if d := req.GetTryModeTimeout(); d != nil && d.AsDuration() > 0 {
		return d.AsDuration()
	}

	return time.Minute
}

// endTry rolls a TRY back to the persistent configuration, unless another apply came after it.
func (n *Node) endTry(epoch int) {
	s := n.sim

	s.mu.Lock()
	defer s.mu.Unlock()

	if n.tryEpoch != epoch || n.mode != ModeConfigured || n.persistent == nil {
		return
	}

	if facts, err := ParseConfigFacts(n.persistent); err == nil {
		n.applyLiveLocked(n.persistent, facts)
	}
}

// applyLiveLocked replaces the running configuration without a reboot; new connections get a
// server certificate from the (possibly new) OS CA.
func (n *Node) applyLiveLocked(data []byte, facts *ConfigFacts) {
	n.setConfiguredLocked(data, facts)

	if err := n.refreshCertsLocked(); err != nil {
		n.sim.log.Printf("%s: new configuration: %v", n.Spec.Name, err)
	}
}

// refreshCertsLocked re-issues the API certificates for the current configuration; new
// connections use them, open ones keep theirs.
func (n *Node) refreshCertsLocked() error {
	return n.issueCertsLocked()
}

func isLayout14(f *ConfigFacts) bool {
	for _, k := range f.Kinds {
		switch k {
		case "DiscoveryIdentityConfig", "KubeClusterConfig", "KubeAPIServerCAConfig", "KubeAggregatorCAConfig",
			"KubeServiceAccountConfig", "KubeNetworkConfig", "UnattendedInstallConfig", "SysctlConfig",
			"KubePrismConfig", "KubeEtcdEncryptionConfig":
			return true
		}
	}

	return false
}

type storageServer struct {
	storage.UnimplementedStorageServiceServer

	n *Node
}

func (st *storageServer) Disks(context.Context, *emptypb.Empty) (*storage.DisksResponse, error) {
	n := st.n
	s := n.sim

	s.mu.Lock()
	defer s.mu.Unlock()

	out := &storage.Disks{}

	for _, d := range n.Spec.Disks {
		typ := storage.Disk_SSD

		switch {
		case d.CDROM:
			typ = storage.Disk_CD
		case strings.HasPrefix(d.Name, "nvme"):
			typ = storage.Disk_NVME
		case d.Rotational:
			typ = storage.Disk_HDD
		}

		out.Disks = append(out.Disks, &storage.Disk{
			Size:       uint64(d.Size),
			Model:      d.Model,
			DeviceName: "/dev/" + d.Name,
			Serial:     d.Serial,
			Wwid:       d.WWID,
			Type:       typ,
			BusPath:    busPath(n.Spec.Disks, d.Name),
			SystemDisk: n.installed && "/dev/"+d.Name == n.installDiskLocked(),
			Subsystem:  "/sys/class/block",
			Readonly:   d.Readonly,
		})
	}

	return &storage.DisksResponse{Messages: []*storage.Disks{out}}, nil
}

func (n *Node) installDiskLocked() string {
	if n.facts != nil && n.facts.InstallDisk != "" {
		return n.facts.InstallDisk
	}

	return n.Spec.InstallDisk
}

func busPath(disks []DiskSpec, name string) string {
	for i, d := range disks {
		if d.Name == name {
			return fmt.Sprintf("/pci0000:00/0000:00:%02x.0/virtio%d", 5+i, 2+i)
		}
	}

	return ""
}
