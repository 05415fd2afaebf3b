package sim

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Scenario is the YAML file that describes the simulated clusters and nodes.
type Scenario struct {
	// RebootDelay is the default time a node stays silent while it reboots (default 2s).
	RebootDelay Duration      `yaml:"rebootDelay,omitempty"`
	Clusters    []ClusterSpec `yaml:"clusters"`
	Nodes       []NodeSpec    `yaml:"nodes"`
}

// ClusterSpec describes one simulated Talos cluster (one secrets bundle).
type ClusterSpec struct {
	Name              string   `yaml:"name"`
	Contract          string   `yaml:"contract,omitempty"`
	TalosVersion      string   `yaml:"talosVersion,omitempty"`
	KubernetesVersion string   `yaml:"kubernetesVersion,omitempty"`
	Endpoint          string   `yaml:"endpoint,omitempty"`
	Ichor             bool     `yaml:"ichor,omitempty"`
	Etcd              string   `yaml:"etcd,omitempty"`
	Patches           []string `yaml:"patches,omitempty"`
	// Aescbc: the bundle's etcd encryption secret is aescbc, as for a cluster made before Talos
	// 1.3 (Talos keeps it across upgrades), not secretbox; its configurations carry
	// cluster.aescbcEncryptionSecret, so that the secrets scan has a value of that kind.
	Aescbc bool `yaml:"aescbc,omitempty"`
	// Kubernetes, when set, makes the lab's apiserver stand in for the cluster's own Kubernetes
	// API (lab-seed creates its Nodes and CNI objects; docs/lab.md, "The cluster's Kubernetes API").
	Kubernetes *KubernetesSpec `yaml:"kubernetes,omitempty"`
	// Base, when set, replaces Talos's generator for the cluster's nodes: a complete hand-written
	// machine configuration per role, the bundle's secrets filled in for ${NAME} placeholders
	// (BaseSecrets), the cluster's and the node's patches applied on top as usual.
	Base *BaseSpec `yaml:"base,omitempty"`
}

// BaseSpec is a hand-written base configuration per role (docs/lab.md, "A hand-written base").
type BaseSpec struct {
	ControlPlane string `yaml:"controlplane"`
	Worker       string `yaml:"worker"`
}

// ForRole is the base of a role ("" when none is written).
func (b *BaseSpec) ForRole(role string) string {
	if b == nil {
		return ""
	}

	if role == RoleControlPlane {
		return b.ControlPlane
	}

	return b.Worker
}

// KubernetesSpec is what the cluster's own Kubernetes API holds.
type KubernetesSpec struct {
	// Nodes: a Node per configured node of the cluster (default true).
	Nodes *bool `yaml:"nodes,omitempty" json:"nodes"`
	// CRDs: the Ichor CRDs (deploy/crds) stay installed (default true); false removes them, which
	// no cluster of the scenario may then be recorded in Ichor for.
	CRDs *bool `yaml:"crds,omitempty" json:"crds"`
	// CNI: flannel (Talos's default: its DaemonSet, ConfigMap and RBAC in kube-system), none,
	// cilium-inline (the Talos guide's Cilium objects, no record), cilium-helm (the same with a
	// Helm release record of ciliumValues) or calico (calico-node and calico-config).
	CNI string `yaml:"cni,omitempty" json:"cni"`
	// CiliumValues: the Helm values of the Cilium install (cilium-inline, cilium-helm), over the
	// Talos guide's; cilium-helm's record carries them as its user values.
	CiliumValues map[string]any `yaml:"ciliumValues,omitempty" json:"ciliumValues,omitempty"`
}

// NodeSpec describes one simulated node.
type NodeSpec struct {
	Name         string       `yaml:"name"`
	Address      string       `yaml:"address"`
	Port         int          `yaml:"port,omitempty"`
	Cluster      string       `yaml:"cluster,omitempty"`
	Role         string       `yaml:"role,omitempty"`
	Mode         string       `yaml:"mode,omitempty"`
	Contract     string       `yaml:"contract,omitempty"`
	TalosVersion string       `yaml:"talosVersion,omitempty"`
	Hostname     string       `yaml:"hostname,omitempty"`
	Identity     IdentitySpec `yaml:"identity,omitempty"`
	Disks        []DiskSpec   `yaml:"disks,omitempty"`
	// Links are the node's physical links; by default eth0-eth3 with the identity's MACs.
	Links []LinkSpec `yaml:"links,omitempty"`
	// Staged are strategic-merge patches of the running configuration that make the persistent
	// one, as an apply-config --mode staged not yet rebooted into leaves a node.
	Staged       []string `yaml:"staged,omitempty"`
	InstallDisk  string   `yaml:"installDisk,omitempty"`
	InstallImage string   `yaml:"installImage,omitempty"`
	Patches      []string `yaml:"patches,omitempty"`
	Ichor        string   `yaml:"ichor,omitempty"`
	// Installed says whether a system disk (META, STATE, EPHEMERAL) exists. Defaults to true for
	// configured nodes and to false for maintenance nodes (a fresh ISO/PXE boot).
	Installed *bool `yaml:"installed,omitempty"`
	// Etcd overrides the cluster's etcd state for this control plane.
	Etcd string `yaml:"etcd,omitempty"`
	// KubeNode is the node's Kubernetes Node when its cluster has kubernetes.nodes: ready
	// (default), notready or absent.
	KubeNode string `yaml:"kubeNode,omitempty"`
}

// IdentitySpec is the hardware identity of a node; empty fields are derived from the node name.
type IdentitySpec struct {
	UUID   string   `yaml:"uuid,omitempty"`
	Serial string   `yaml:"serial,omitempty"`
	MACs   []string `yaml:"macs,omitempty"`
}

// LinkSpec is one physical link of a node: its name and MAC (derived from the node's name when
// empty).
type LinkSpec struct {
	Name string `yaml:"name"`
	MAC  string `yaml:"mac,omitempty"`
}

// defaultLinks is how many links (eth0, eth1, ...) a node without links: and identity.macs has.
const defaultLinks = 4

// DiskSpec is one block device of a node.
type DiskSpec struct {
	Name       string   `yaml:"name"`
	Size       ByteSize `yaml:"size,omitempty"`
	Model      string   `yaml:"model,omitempty"`
	Serial     string   `yaml:"serial,omitempty"`
	WWID       string   `yaml:"wwid,omitempty"`
	Transport  string   `yaml:"transport,omitempty"`
	Rotational bool     `yaml:"rotational,omitempty"`
	Readonly   bool     `yaml:"readonly,omitempty"`
	CDROM      bool     `yaml:"cdrom,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("2s").
type Duration time.Duration

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: invalid duration %q", n.Line, n.Value)
	}

	*d = Duration(v)

	return nil
}

// MarshalYAML implements yaml.Marshaler.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// ByteSize is a size in bytes, written as a number or with a binary suffix ("100GiB").
type ByteSize uint64

// UnmarshalYAML implements yaml.Unmarshaler.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}

	*b = ByteSize(v)

	return nil
}

// ParseByteSize parses "1073741824", "100GiB", "512MiB", "1TiB".
func ParseByteSize(s string) (uint64, error) {
	units := []struct {
		suffix string
		mult   uint64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"B", 1}}

	s = strings.TrimSpace(s)

	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseUint(strings.TrimSpace(num), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("invalid size %q", s)
			}

			return v * u.mult, nil
		}
	}

	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q", s)
	}

	return v, nil
}

// Roles, modes and states used in scenarios.
const (
	RoleControlPlane = "controlplane"
	RoleWorker       = "worker"

	ModeConfigured  = "configured"
	ModeMaintenance = "maintenance"

	EtcdRunning = "running"
	EtcdDown    = "down"
	EtcdHang    = "hang"

	KubeNodeReady    = "ready"
	KubeNodeNotReady = "notready"
	KubeNodeAbsent   = "absent"

	CNIFlannel      = "flannel"
	CNINone         = "none"
	CNICiliumInline = "cilium-inline"
	CNICiliumHelm   = "cilium-helm"
	CNICalico       = "calico"

	IchorApproved = "approved"
	IchorPending  = "pending"
	IchorNone     = "none"

	DefaultPort       = 50000
	defaultK8sVersion = "v1.34.4"
)

// talosVersionForContract is the Talos version a node of a contract reports unless told otherwise.
var talosVersionForContract = map[string]string{
	"1.12": "v1.12.11",
	"1.13": "v1.13.9",
	"1.14": "v1.14.1",
}

// LoadScenario reads, validates and completes a scenario file.
func LoadScenario(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}

	sc, err := ParseScenario(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}

	return sc, nil
}

// ParseScenario parses scenario YAML strictly (unknown fields are errors), fills defaults and
// validates cross references.
func ParseScenario(data []byte) (*Scenario, error) {
	var sc Scenario

	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)

	if err := dec.Decode(&sc); err != nil {
		return nil, err
	}

	if err := sc.complete(); err != nil {
		return nil, err
	}

	return &sc, nil
}

// BenchEndpoint is the address of the bench cluster's control plane: not one of the n workers,
// it is the endpoint the bench reaches them through (bench/run, through one endpoint).
const BenchEndpoint = "127.0.3.254"

// BenchScenario is the generator mode: one cluster "bench" with n workers on 127.0.1.1 and up,
// then its control plane on BenchEndpoint (last, so that it forwards to the workers).
func BenchScenario(n int) (*Scenario, error) {
	if n < 1 || n > 256 {
		return nil, fmt.Errorf("--bench-nodes must be between 1 and 256, got %d", n)
	}

	sc := &Scenario{Clusters: []ClusterSpec{{Name: "bench", Contract: "1.13"}}}

	for i := range n {
		addr := fmt.Sprintf("127.0.%d.%d", 1+i/255, 1+i%255)
		sc.Nodes = append(sc.Nodes, NodeSpec{
			Name:    fmt.Sprintf("bench-w-%d", i+1),
			Address: addr,
			Cluster: "bench",
			Role:    RoleWorker,
		})
	}

	sc.Nodes = append(sc.Nodes, NodeSpec{
		Name:    "bench-cp-1",
		Address: BenchEndpoint,
		Cluster: "bench",
		Role:    RoleControlPlane,
	})
	sc.Clusters[0].Endpoint = "https://" + sc.Nodes[0].Address + ":6443"

	if err := sc.complete(); err != nil {
		return nil, err
	}

	return sc, nil
}

//nolint:gocyclo
func (sc *Scenario) complete() error {
	if sc.RebootDelay == 0 {
		sc.RebootDelay = Duration(2 * time.Second)
	}

	clusters := map[string]*ClusterSpec{}

	for i := range sc.Clusters {
		c := &sc.Clusters[i]

		if c.Name == "" {
			return fmt.Errorf("clusters[%d]: name is required", i)
		}

		if _, dup := clusters[c.Name]; dup {
			return fmt.Errorf("cluster %q: defined twice", c.Name)
		}

		clusters[c.Name] = c

		if c.Contract == "" {
			c.Contract = "1.13"
		}

		if _, ok := talosVersionForContract[c.Contract]; !ok {
			return fmt.Errorf("cluster %q: contract %q is not one of 1.12, 1.13, 1.14", c.Name, c.Contract)
		}

		if c.TalosVersion == "" {
			c.TalosVersion = talosVersionForContract[c.Contract]
		}

		if c.KubernetesVersion == "" {
			c.KubernetesVersion = defaultK8sVersion
		}

		if !strings.HasPrefix(c.KubernetesVersion, "v") {
			c.KubernetesVersion = "v" + c.KubernetesVersion
		}

		if c.Etcd == "" {
			c.Etcd = EtcdRunning
		}

		if !oneOf(c.Etcd, EtcdRunning, EtcdDown, EtcdHang) {
			return fmt.Errorf("cluster %q: etcd %q is not one of running, down, hang", c.Name, c.Etcd)
		}

		for j, p := range c.Patches {
			if strings.TrimSpace(p) == "" {
				return fmt.Errorf("cluster %q: patches[%d] is empty", c.Name, j)
			}
		}

		if err := completeKubernetes(c); err != nil {
			return err
		}

		if c.Base != nil && (strings.TrimSpace(c.Base.ControlPlane) == "" || strings.TrimSpace(c.Base.Worker) == "") {
			return fmt.Errorf("cluster %q: base needs both controlplane and worker", c.Name)
		}
	}

	if err := checkCRDs(sc.Clusters); err != nil {
		return err
	}

	names := map[string]bool{}
	endpoints := map[string]bool{}

	for i := range sc.Nodes {
		n := &sc.Nodes[i]

		if n.Name == "" {
			return fmt.Errorf("nodes[%d]: name is required", i)
		}

		if names[n.Name] {
			return fmt.Errorf("node %q: defined twice", n.Name)
		}

		names[n.Name] = true

		addr, err := netip.ParseAddr(n.Address)
		if err != nil || !addr.Is4() || !addr.IsLoopback() {
			return fmt.Errorf("node %q: address %q must be an IPv4 loopback address (127.x.y.z)", n.Name, n.Address)
		}

		if n.Port == 0 {
			n.Port = DefaultPort
		}

		ep := fmt.Sprintf("%s:%d", n.Address, n.Port)
		if endpoints[ep] {
			return fmt.Errorf("node %q: address %s is used twice", n.Name, ep)
		}

		endpoints[ep] = true

		if n.Hostname == "" {
			n.Hostname = n.Name
		}

		var cl *ClusterSpec

		if n.Cluster != "" {
			cl = clusters[n.Cluster]
			if cl == nil {
				return fmt.Errorf("node %q: unknown cluster %q", n.Name, n.Cluster)
			}
		}

		if n.Mode == "" {
			n.Mode = ModeConfigured
			if cl == nil {
				n.Mode = ModeMaintenance
			}
		}

		if !oneOf(n.Mode, ModeConfigured, ModeMaintenance) {
			return fmt.Errorf("node %q: mode %q is not one of configured, maintenance", n.Name, n.Mode)
		}

		if n.Mode == ModeConfigured && cl == nil {
			return fmt.Errorf("node %q: a configured node needs a cluster", n.Name)
		}

		if n.Role == "" && cl != nil {
			n.Role = RoleWorker
		}

		if n.Role != "" && !oneOf(n.Role, RoleControlPlane, RoleWorker) {
			return fmt.Errorf("node %q: role %q is not one of controlplane, worker", n.Name, n.Role)
		}

		if n.Contract == "" {
			n.Contract = "1.13"
			if cl != nil {
				n.Contract = cl.Contract
			}
		}

		if _, ok := talosVersionForContract[n.Contract]; !ok {
			return fmt.Errorf("node %q: contract %q is not one of 1.12, 1.13, 1.14", n.Name, n.Contract)
		}

		if n.TalosVersion == "" {
			n.TalosVersion = talosVersionForContract[n.Contract]
			if cl != nil && cl.Contract == n.Contract {
				n.TalosVersion = cl.TalosVersion
			}
		}

		if n.Installed == nil {
			v := n.Mode == ModeConfigured
			n.Installed = &v
		}

		if len(n.Disks) == 0 {
			n.Disks = []DiskSpec{
				{Name: "sda"},
				{Name: "nvme0n1", Size: ByteSize(500 * 1000 * 1000 * 1000), Model: "QEMU NVMe Ctrl", Transport: "nvme"},
			}
		}

		for j := range n.Disks {
			completeDisk(n, j)
		}

		if n.InstallDisk == "" {
			n.InstallDisk = "/dev/" + n.Disks[0].Name
		}

		if n.InstallImage == "" {
			n.InstallImage = "ghcr.io/siderolabs/installer:" + n.TalosVersion
		}

		if n.Ichor == "" {
			n.Ichor = IchorNone
		}

		if !oneOf(n.Ichor, IchorApproved, IchorPending, IchorNone) {
			return fmt.Errorf("node %q: ichor %q is not one of approved, pending, none", n.Name, n.Ichor)
		}

		if n.Etcd != "" && !oneOf(n.Etcd, EtcdRunning, EtcdDown, EtcdHang) {
			return fmt.Errorf("node %q: etcd %q is not one of running, down, hang", n.Name, n.Etcd)
		}

		if err := completeKubeNode(n, cl); err != nil {
			return err
		}

		if err := completeIdentity(n); err != nil {
			return err
		}
	}

	for i := range sc.Clusters {
		c := &sc.Clusters[i]
		if c.Endpoint == "" {
			cps := sc.ControlPlanes(c.Name)
			if len(cps) == 0 {
				return fmt.Errorf("cluster %q: endpoint is required when the cluster has no control plane", c.Name)
			}

			c.Endpoint = "https://" + cps[0].Address + ":6443"
		}
	}

	return nil
}

// ControlPlanes returns the control-plane nodes of a cluster, in scenario order.
func (sc *Scenario) ControlPlanes(cluster string) []*NodeSpec {
	var out []*NodeSpec

	for i := range sc.Nodes {
		if sc.Nodes[i].Cluster == cluster && sc.Nodes[i].Role == RoleControlPlane {
			out = append(out, &sc.Nodes[i])
		}
	}

	return out
}

func completeKubernetes(c *ClusterSpec) error {
	k := c.Kubernetes
	if k == nil {
		return nil
	}

	yes := true

	if k.Nodes == nil {
		k.Nodes = &yes
	}

	if k.CRDs == nil {
		k.CRDs = &yes
	}

	if k.CNI == "" {
		k.CNI = CNIFlannel
	}

	if !oneOf(k.CNI, CNIFlannel, CNINone, CNICiliumInline, CNICiliumHelm, CNICalico) {
		return fmt.Errorf("cluster %q: kubernetes.cni %q is not one of flannel, none, cilium-inline, cilium-helm, calico", c.Name, k.CNI)
	}

	if k.CiliumValues != nil && k.CNI != CNICiliumInline && k.CNI != CNICiliumHelm {
		return fmt.Errorf("cluster %q: kubernetes.ciliumValues is for cni cilium-inline or cilium-helm", c.Name)
	}

	return nil
}

// checkCRDs: the lab has one apiserver, so removing the Ichor CRDs for one cluster removes them
// for all, and lab-seed could not record another cluster in Ichor.
func checkCRDs(clusters []ClusterSpec) error {
	var without, recorded string

	for _, c := range clusters {
		if c.Kubernetes != nil && !*c.Kubernetes.CRDs {
			without = c.Name
		}

		if c.Ichor {
			recorded = c.Name
		}
	}

	if without != "" && recorded != "" {
		return fmt.Errorf("cluster %q: kubernetes.crds false removes the Ichor CRDs from the lab's one apiserver, but cluster %q is recorded in Ichor (ichor: true)", without, recorded)
	}

	return nil
}

func completeKubeNode(n *NodeSpec, cl *ClusterSpec) error {
	hasNodes := cl != nil && cl.Kubernetes != nil && *cl.Kubernetes.Nodes

	if n.KubeNode == "" {
		if hasNodes {
			n.KubeNode = KubeNodeReady
		}

		return nil
	}

	if !hasNodes {
		return fmt.Errorf("node %q: kubeNode needs a cluster with kubernetes.nodes", n.Name)
	}

	if !oneOf(n.KubeNode, KubeNodeReady, KubeNodeNotReady, KubeNodeAbsent) {
		return fmt.Errorf("node %q: kubeNode %q is not one of ready, notready, absent", n.Name, n.KubeNode)
	}

	return nil
}

func completeDisk(n *NodeSpec, j int) {
	d := &n.Disks[j]
	if d.Name == "" {
		d.Name = fmt.Sprintf("sd%c", 'a'+j)
	}

	if d.Size == 0 {
		d.Size = ByteSize(100 << 30)
	}

	if d.Model == "" {
		d.Model = "QEMU HARDDISK"
	}

	if d.Serial == "" {
		d.Serial = "QM" + strings.ToUpper(derivedHex(n.Name+"/disk/"+d.Name, 5))
	}

	if d.Transport == "" {
		d.Transport = "virtio"
	}
}

func completeIdentity(n *NodeSpec) error {
	id := &n.Identity
	if id.UUID == "" {
		id.UUID = DerivedUUID("uuid/" + n.Name)
	}

	if id.Serial == "" {
		id.Serial = strings.ToUpper(derivedHex("serial/"+n.Name, 6))
	}

	// The identity's MACs are the physical links' (as the inspection reads them): links: names
	// them, else identity.macs gives eth0, eth1, ..., else eth0-eth3 with derived MACs.
	switch {
	case len(n.Links) > 0:
		id.MACs = nil

		for i := range n.Links {
			l := &n.Links[i]
			if l.Name == "" {
				return fmt.Errorf("node %q: links[%d] has no name", n.Name, i)
			}

			if l.MAC == "" {
				l.MAC = DerivedMAC(n.Name, i)
			}

			id.MACs = append(id.MACs, l.MAC)
		}
	case len(id.MACs) == 0:
		for i := range defaultLinks {
			id.MACs = append(id.MACs, DerivedMAC(n.Name, i))
		}

		fallthrough
	default:
		n.Links = nil
		for i, mac := range id.MACs {
			n.Links = append(n.Links, LinkSpec{Name: fmt.Sprintf("eth%d", i), MAC: mac})
		}
	}

	for _, mac := range id.MACs {
		if _, err := parseMAC(mac); err != nil {
			return fmt.Errorf("node %q: %w", n.Name, err)
		}
	}

	return nil
}

func oneOf(v string, allowed ...string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}

	return false
}

var errNoSuchNode = errors.New("no such node")
