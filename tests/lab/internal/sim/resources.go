package sim

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/cosi-project/runtime/pkg/resource"
	"github.com/cosi-project/runtime/pkg/resource/meta"
	configpb "github.com/siderolabs/talos/pkg/machinery/api/resource/config"
	configmachine "github.com/siderolabs/talos/pkg/machinery/config/machine"
	"github.com/siderolabs/talos/pkg/machinery/nethelpers"
	"github.com/siderolabs/talos/pkg/machinery/proto"
	"github.com/siderolabs/talos/pkg/machinery/resources/block"
	"github.com/siderolabs/talos/pkg/machinery/resources/cluster"
	"github.com/siderolabs/talos/pkg/machinery/resources/config"
	"github.com/siderolabs/talos/pkg/machinery/resources/etcd"
	"github.com/siderolabs/talos/pkg/machinery/resources/hardware"
	"github.com/siderolabs/talos/pkg/machinery/resources/network"
	"github.com/siderolabs/talos/pkg/machinery/resources/runtime"
)

// The COSI resources a simulated node serves, made with Talos's own resource types so that
// proto_spec (protoenc) and yaml_spec are exactly what Talos's server produces.

// rawMachineConfig is MachineConfigs.config.talos.dev holding the configuration bytes exactly
// as they were applied (machinery's MachineConfig needs a config.Provider, which a v1.14-layout
// configuration cannot be loaded into). Its spec marshals as Talos's does: MachineConfigSpec
// {yaml_marshalled} for protobuf and a YAML string scalar for yaml_spec.
type rawMachineConfig struct {
	md   resource.Metadata
	spec rawConfigSpec
}

type rawConfigSpec struct{ data []byte }

func (s rawConfigSpec) MarshalYAML() (any, error) { return string(s.data), nil }

func (s rawConfigSpec) MarshalProto() ([]byte, error) {
	return proto.Marshal(&configpb.MachineConfigSpec{YamlMarshalled: s.data})
}

func (r *rawMachineConfig) Metadata() *resource.Metadata { return &r.md }
func (r *rawMachineConfig) Spec() any                    { return r.spec }
func (r *rawMachineConfig) DeepCopy() resource.Resource {
	return &rawMachineConfig{md: r.md.Copy(), spec: rawConfigSpec{data: append([]byte(nil), r.spec.data...)}}
}

func newRawMachineConfig(id resource.ID, data []byte) *rawMachineConfig {
	r := &rawMachineConfig{
		md:   resource.NewMetadata(config.NamespaceName, config.MachineConfigType, id, resource.VersionUndefined),
		spec: rawConfigSpec{data: data},
	}
	r.md.Annotations().Set("talos.dev/yaml-spec", "1")

	return r
}

// resourceDefinitions are the types the lab serves, with Talos's definitions (sensitivity,
// default namespace, aliases).
var resourceDefinitions = func() map[resource.Type]meta.ResourceDefinitionSpec {
	providers := []meta.ResourceDefinitionProvider{
		&config.MachineConfig{},
		config.NewMachineType(),
		cluster.NewInfo(),
		cluster.NewIdentity(cluster.NamespaceName, cluster.LocalIdentity),
		cluster.NewMember(cluster.NamespaceName, ""),
		hardware.NewSystemInformation(hardware.SystemInformationID),
		network.NewLinkStatus(network.NamespaceName, ""),
		block.NewDisk(block.NamespaceName, ""),
		block.NewSystemDisk(block.NamespaceName, block.SystemDiskID),
		block.NewDiscoveredVolume(block.NamespaceName, ""),
		block.NewVolumeStatus(block.NamespaceName, ""),
		runtime.NewMachineStatus(),
		runtime.NewVersion(),
		etcd.NewMember(etcd.NamespaceName, etcd.LocalMemberID),
		&meta.ResourceDefinition{},
		&meta.Namespace{},
	}

	out := map[resource.Type]meta.ResourceDefinitionSpec{}

	for _, p := range providers {
		rd := p.ResourceDefinition()
		if err := rd.Fill(); err != nil {
			panic(err)
		}

		out[rd.Type] = rd
	}

	return out
}()

// namespaces are the namespaces a Talos node registers.
var namespaces = []string{
	"cluster", "cluster-raw", "config", "controlplane", "cri", "etcd", "files", "hardware", "k8s",
	"kubespan", "meta", "network", "network-config", "perf", "runtime", "secrets", "security", "siderolink",
}

type owned struct {
	r     resource.Resource
	owner string
}

// resourcesLocked builds every resource of the node in its current state.
//
//nolint:gocyclo,cyclop
func (n *Node) resourcesLocked(typ resource.Type) []resource.Resource {
	var list []owned

	is := func(t resource.Type) bool { return typ == "" || typ == t }

	add := func(r resource.Resource, owner string) { list = append(list, owned{r, owner}) }

	configured := n.mode == ModeConfigured && n.facts != nil

	if n.config != nil && is(config.MachineConfigType) {
		add(newRawMachineConfig(config.ActiveID, n.config), "")
	}

	if n.persistent != nil && is(config.MachineConfigType) {
		add(newRawMachineConfig(config.PersistentID, n.persistent), "")
	}

	if configured && is(config.MachineTypeType) {
		mt := config.NewMachineType()

		switch n.facts.MachineType {
		case "controlplane":
			mt.SetMachineType(configmachine.TypeControlPlane)
		case "init":
			mt.SetMachineType(configmachine.TypeInit)
		default:
			mt.SetMachineType(configmachine.TypeWorker)
		}

		add(mt, "config.MachineTypeController")
	}

	if configured && is(cluster.InfoType) {
		if n.facts.ClusterID != "" || n.facts.ClusterName != "" {
			info := cluster.NewInfo()
			info.TypedSpec().ClusterID = n.facts.ClusterID
			info.TypedSpec().ClusterName = n.facts.ClusterName
			add(info, "cluster.InfoController")
		}
	}

	if is(cluster.IdentityType) {
		ident := cluster.NewIdentity(cluster.NamespaceName, cluster.LocalIdentity)
		ident.TypedSpec().NodeID = n.nodeID
		add(ident, "cluster.NodeIdentityController")
	}

	for _, m := range when(is(cluster.MemberType), n.membersLocked) {
		add(m, "cluster.MemberController")
	}

	if is(hardware.SystemInformationType) {
		si := hardware.NewSystemInformation(hardware.SystemInformationID)
		*si.TypedSpec() = hardware.SystemInformationSpec{
			Manufacturer: "QEMU",
			ProductName:  "Standard PC (Q35 + ICH9, 2009)",
			Version:      "pc-q35-8.2",
			SerialNumber: n.Spec.Identity.Serial,
			UUID:         n.Spec.Identity.UUID,
			WakeUpType:   "Power Switch",
		}
		add(si, "hardware.SystemInfoController")
	}

	for _, l := range when(is(network.LinkStatusType), n.linksLocked) {
		add(l, "network.LinkStatusController")
	}

	for _, d := range when(is(block.DiskType), n.disksLocked) {
		add(d, "block.DisksController")
	}

	if n.installed && is(block.SystemDiskType) {
		sd := block.NewSystemDisk(block.NamespaceName, block.SystemDiskID)
		dev := n.installDiskLocked()
		sd.TypedSpec().DevPath = dev
		sd.TypedSpec().DiskID = strings.TrimPrefix(dev, "/dev/")
		add(sd, "block.SystemDiskController")
	}

	for _, dv := range when(is(block.DiscoveredVolumeType), n.discoveredLocked) {
		add(dv, "block.DiscoveryController")
	}

	for _, v := range when(is(block.VolumeStatusType), n.volumesLocked) {
		vs := block.NewVolumeStatus(block.NamespaceName, v.id)
		spec := vs.TypedSpec()
		spec.Phase = v.phase
		spec.Type = block.VolumeTypePartition
		spec.Location = v.location
		spec.ParentLocation = v.parentLocation
		spec.PartitionIndex = v.index
		spec.MountLocation = v.mount
		spec.Filesystem = v.fs
		spec.UUID = v.uuid
		spec.PartitionUUID = v.partUUID

		if v.size > 0 {
			spec.SetSize(v.size)
		}

		add(vs, "block.VolumeManagerController")
	}

	if is(runtime.MachineStatusType) {
		ms := runtime.NewMachineStatus()
		ms.TypedSpec().Stage = machineStage(n.stage)
		ms.TypedSpec().Status.Ready = n.stage == stageRunning || n.stage == stageMaintenance
		add(ms, "runtime.MachineStatusController")
	}

	if is(runtime.VersionType) {
		ver := runtime.NewVersion()
		ver.TypedSpec().Version = n.Spec.TalosVersion
		ver.TypedSpec().Name = "Talos"
		add(ver, "runtime.VersionController")
	}

	if configured && n.isControlPlane() && n.memberID != 0 && is(etcd.MemberType) {
		m := etcd.NewMember(etcd.NamespaceName, etcd.LocalMemberID)
		m.TypedSpec().MemberID = etcd.FormatMemberID(n.memberID)
		add(m, "etcd.MemberController")
	}

	for _, rd := range when(is(meta.ResourceDefinitionType), func() map[resource.Type]meta.ResourceDefinitionSpec { return resourceDefinitions }) {
		r, err := meta.NewResourceDefinition(rd)
		if err == nil {
			add(r, "")
		}
	}

	for _, ns := range when(is(meta.NamespaceType), func() []string { return namespaces }) {
		add(meta.NewNamespace(ns, meta.NamespaceSpec{}), "")
	}

	out := make([]resource.Resource, 0, len(list))

	for _, o := range list {
		md := o.r.Metadata()
		ver := 1
		if md.Type() == config.MachineConfigType {
			ver = max(n.configVersion, 1)
		}

		if v, err := resource.ParseVersion(strconv.Itoa(ver)); err == nil {
			md.SetVersion(v)
		}

		md.SetCreated(n.bootTime)
		md.SetUpdated(n.bootTime)

		if o.owner != "" {
			md.SetOwner(o.owner) //nolint:errcheck
		}

		out = append(out, o.r)
	}

	return out
}

// when returns f() when cond holds, the zero value otherwise.
func when[T any](cond bool, f func() T) T {
	if !cond {
		var zero T

		return zero
	}

	return f()
}

func machineStage(s string) runtime.MachineStage {
	switch s {
	case stageRunning:
		return runtime.MachineStageRunning
	case stageMaintenance:
		return runtime.MachineStageMaintenance
	case stageResetting:
		return runtime.MachineStageResetting
	case stageRebooting:
		return runtime.MachineStageRebooting
	case stageInstalling:
		return runtime.MachineStageInstalling
	case stageBooting:
		return runtime.MachineStageBooting
	default:
		return runtime.MachineStageUnknown
	}
}

// linksLocked: lo plus one physical ethernet link per MAC (permanentAddr = hardwareAddr).
func (n *Node) linksLocked() []*network.LinkStatus {
	lo := network.NewLinkStatus(network.NamespaceName, "lo")
	*lo.TypedSpec() = network.LinkStatusSpec{
		Index:            1,
		Type:             nethelpers.LinkLoopbck,
		Flags:            nethelpers.LinkFlags(net.FlagUp | net.FlagLoopback | net.FlagRunning),
		HardwareAddr:     nethelpers.HardwareAddr(make(net.HardwareAddr, 6)),
		PermanentAddr:    nethelpers.HardwareAddr(make(net.HardwareAddr, 6)),
		BroadcastAddr:    nethelpers.HardwareAddr(make(net.HardwareAddr, 6)),
		MTU:              65536,
		QueueDisc:        "noqueue",
		OperationalState: nethelpers.OperStateUnknown,
		LinkState:        true,
	}

	out := []*network.LinkStatus{lo}

	for i, spec := range n.Spec.Links {
		mac, err := parseMAC(spec.MAC)
		if err != nil {
			continue
		}

		l := network.NewLinkStatus(network.NamespaceName, spec.Name)
		*l.TypedSpec() = network.LinkStatusSpec{
			Index:            uint32(2 + i), //nolint:gosec
			Type:             nethelpers.LinkEther,
			Flags:            nethelpers.LinkFlags(net.FlagUp | net.FlagBroadcast | net.FlagRunning | net.FlagMulticast),
			HardwareAddr:     nethelpers.HardwareAddr(mac),
			PermanentAddr:    nethelpers.HardwareAddr(mac),
			BroadcastAddr:    nethelpers.HardwareAddr(net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}),
			MTU:              1500,
			QueueDisc:        "pfifo_fast",
			OperationalState: nethelpers.OperStateUp,
			BusPath:          fmt.Sprintf("0000:00:%02x.0", 3+i),
			PCIID:            "1AF4:1000",
			Driver:           "virtio_net",
			DriverVersion:    "1.0.0",
			Product:          "Virtio network device",
			Vendor:           "Red Hat, Inc.",
			LinkState:        true,
			SpeedMegabits:    -1,
			Port:             nethelpers.Other,
			Duplex:           nethelpers.Unknown,
			AltNames:         []string{fmt.Sprintf("enp0s%d", 3+i)},
		}

		out = append(out, l)
	}

	return out
}

func (n *Node) disksLocked() []*block.Disk {
	var out []*block.Disk

	for _, d := range n.Spec.Disks {
		r := block.NewDisk(block.NamespaceName, d.Name)
		spec := r.TypedSpec()
		spec.DevPath = "/dev/" + d.Name
		spec.SetSize(uint64(d.Size))
		spec.IOSize = 512
		spec.SectorSize = 512
		spec.Readonly = d.Readonly
		spec.CDROM = d.CDROM
		spec.Model = d.Model
		spec.Serial = d.Serial
		spec.WWID = d.WWID
		spec.BusPath = busPath(n.Spec.Disks, d.Name)
		spec.SubSystem = "/sys/class/block"
		spec.Transport = d.Transport
		spec.Rotational = d.Rotational
		spec.Modalias = "virtio:d00000002v00001AF4"
		spec.Symlinks = []string{"/dev/disk/by-path/pci-" + strings.TrimPrefix(busPath(n.Spec.Disks, d.Name), "/pci0000:00/")}

		out = append(out, r)
	}

	return out
}

type volume struct {
	id, label      string
	location       string
	parentLocation string
	index          int
	fs             block.FilesystemType
	fsName         string
	mount          string
	size, offset   uint64
	phase          block.VolumePhase
	uuid, partUUID string
	partType       string
}

// systemVolumesLocked is the Talos partition layout of the install disk: EFI, META, STATE,
// EPHEMERAL (the rest of the disk).
func (n *Node) systemVolumesLocked() (disk DiskSpec, vols []volume) {
	dev := n.installDiskLocked()

	disk = n.Spec.Disks[0]

	for _, d := range n.Spec.Disks {
		if "/dev/"+d.Name == dev {
			disk = d
		}
	}

	part := func(i int) string {
		if strings.HasPrefix(disk.Name, "nvme") || strings.HasPrefix(disk.Name, "mmcblk") {
			return fmt.Sprintf("/dev/%sp%d", disk.Name, i)
		}

		return fmt.Sprintf("/dev/%s%d", disk.Name, i)
	}

	const (
		mib = 1 << 20
		gib = 1 << 30
	)

	efi, metaSize, state := uint64(gib), uint64(mib), uint64(100*mib)
	rest := uint64(disk.Size) - efi - metaSize - state - 2*mib

	seed := n.Spec.Name + "/" + n.nodeID

	vols = []volume{
		{id: "EFI", label: "EFI", index: 1, fs: block.FilesystemTypeVFAT, fsName: "vfat", size: efi, offset: mib, partType: "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"},
		{id: "META", label: "META", index: 2, fsName: "talosmeta", size: metaSize, offset: mib + efi, partType: "0FC63DAF-8483-4772-8E79-3D69D8477DE4"},
		{id: "STATE", label: "STATE", index: 3, fs: block.FilesystemTypeXFS, fsName: "xfs", mount: "/system/state", size: state, offset: mib + efi + metaSize, partType: "0FC63DAF-8483-4772-8E79-3D69D8477DE4"},
		{id: "EPHEMERAL", label: "EPHEMERAL", index: 4, fs: block.FilesystemTypeXFS, fsName: "xfs", mount: "/var", size: rest, offset: mib + efi + metaSize + state, partType: "0FC63DAF-8483-4772-8E79-3D69D8477DE4"},
	}

	for i := range vols {
		vols[i].location = part(vols[i].index)
		vols[i].parentLocation = "/dev/" + disk.Name
		vols[i].partUUID = DerivedUUID("partuuid/" + seed + "/" + vols[i].id)

		if vols[i].fsName != "talosmeta" {
			vols[i].uuid = DerivedUUID("fsuuid/" + seed + "/" + vols[i].id)
		}

		vols[i].phase = block.VolumePhaseReady
	}

	if n.mode == ModeMaintenance {
		// no configuration: EPHEMERAL is located but not provisioned or mounted
		vols[3].phase = block.VolumePhaseLocated
		vols[3].mount = ""
	}

	return disk, vols
}

// volumesLocked are the VolumeStatuses: META, STATE, EPHEMERAL (waiting, without a location,
// when nothing is installed).
func (n *Node) volumesLocked() []volume {
	if !n.installed {
		return []volume{
			{id: "META", phase: block.VolumePhaseWaiting},
			{id: "STATE", phase: block.VolumePhaseWaiting},
			{id: "EPHEMERAL", phase: block.VolumePhaseWaiting},
		}
	}

	_, vols := n.systemVolumesLocked()

	return vols[1:]
}

func (n *Node) volumeLocked(id string) *volume {
	for _, v := range n.volumesLocked() {
		if v.id == id {
			return &v
		}
	}

	return nil
}

func (n *Node) discoveredLocked() []*block.DiscoveredVolume {
	var out []*block.DiscoveredVolume

	sysDisk, vols := n.systemVolumesLocked()

	for _, d := range n.Spec.Disks {
		dv := block.NewDiscoveredVolume(block.NamespaceName, d.Name)
		spec := dv.TypedSpec()
		spec.DevPath = "/dev/" + d.Name
		spec.DevicePath = "/sys/devices" + busPath(n.Spec.Disks, d.Name) + "/block/" + d.Name
		spec.Type = "disk"
		spec.SetSize(uint64(d.Size))
		spec.SectorSize = 512
		spec.IOSize = 512

		if n.installed && d.Name == sysDisk.Name {
			spec.Name = "gpt"
			spec.UUID = DerivedUUID("disk/" + n.Spec.Name + "/" + n.nodeID)
		}

		out = append(out, dv)

		if !n.installed || d.Name != sysDisk.Name {
			continue
		}

		for _, v := range vols {
			id := strings.TrimPrefix(v.location, "/dev/")
			p := block.NewDiscoveredVolume(block.NamespaceName, id)
			ps := p.TypedSpec()
			ps.DevPath = v.location
			ps.DevicePath = spec.DevicePath + "/" + id
			ps.Parent = d.Name
			ps.ParentDevPath = "/dev/" + d.Name
			ps.Type = "partition"
			ps.Offset = v.offset
			ps.SetSize(v.size)
			ps.SectorSize = 512
			ps.IOSize = 512
			ps.Name = v.fsName
			ps.UUID = v.uuid
			ps.PartitionUUID = v.partUUID
			ps.PartitionType = v.partType
			ps.PartitionLabel = v.label
			ps.PartitionIndex = uint(v.index) //nolint:gosec

			if v.fs != block.FilesystemTypeNone {
				ps.Label = v.label
				ps.BlockSize = 4096
				ps.FilesystemBlockSize = 4096
				ps.ProbedSize = v.size
			}

			out = append(out, p)
		}
	}

	return out
}
