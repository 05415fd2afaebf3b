// Package sim simulates Talos nodes for the lab: each node is a real gRPC server with Talos's
// TLS rules, built on Talos's own API types, config generator and secrets bundle.
package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"github.com/siderolabs/talos/pkg/machinery/role"
)

// Options configure a simulator.
type Options struct {
	StateDir string
	Scenario *Scenario
	Logger   *log.Logger
	// ControlAddr is where the control API listens (default 127.0.0.1:0, a free port).
	ControlAddr string
}

// Sim is the set of simulated clusters and nodes of one process.
type Sim struct {
	opts Options
	log  *log.Logger
	gen  *generator

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	control    *http.Server
	controlURL string

	mu       sync.Mutex // guards the state of every node and cluster
	clusters []*Cluster
	nodes    []*Node

	discovery map[[32]byte]bool // discoveryOnLocked's answers, by configuration digest
}

// Cluster is a simulated Talos cluster: a secrets bundle and its etcd.
type Cluster struct {
	sim  *Sim
	Spec ClusterSpec
	Name string

	Adhoc      bool // made when a maintenance node received the config of an unknown cluster
	Bundle     *secrets.Bundle
	ClusterID  string
	caCrt      []byte
	caKey      []byte
	secrets    string
	talosconf  string
	readerConf string

	// etcd, guarded by Sim.mu
	bootstrapped bool
	members      []*etcdMember
	leader       uint64
	joinSeq      int
}

// New generates (or reloads from the state folder) every bundle, talosconfig and machine
// configuration of the scenario. It starts nothing.
func New(opts Options) (*Sim, error) {
	if opts.Logger == nil {
		opts.Logger = log.New(os.Stderr, "talos-sim: ", log.LstdFlags|log.Lmicroseconds)
	}

	if opts.ControlAddr == "" {
		opts.ControlAddr = "127.0.0.1:0"
	}

	dir, err := filepath.Abs(opts.StateDir)
	if err != nil {
		return nil, err
	}

	opts.StateDir = dir

	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}

	ctx, cancel := context.WithCancel(context.Background())
	s := &Sim{opts: opts, log: opts.Logger, gen: newGenerator(), ctx: ctx, cancel: cancel}

	sc := opts.Scenario

	// a bundle holds an RSA-4096 service-account key (the generator's choice for contracts after
	// 1.6), which takes about a second: make the new ones in parallel
	clusters := make([]*Cluster, len(sc.Clusters))
	errs := make([]error, len(sc.Clusters))

	var wg sync.WaitGroup

	for i, cs := range sc.Clusters {
		wg.Add(1)

		go func() {
			defer wg.Done()

			clusters[i], errs[i] = s.prepareCluster(cs)
		}()
	}

	wg.Wait()

	for i, cs := range sc.Clusters {
		if errs[i] != nil {
			cancel()

			return nil, fmt.Errorf("cluster %q: %w", cs.Name, errs[i])
		}

		s.clusters = append(s.clusters, clusters[i])
	}

	for _, ns := range sc.Nodes {
		n, err := s.prepareNode(ns)
		if err != nil {
			cancel()

			return nil, fmt.Errorf("node %q: %w", ns.Name, err)
		}

		s.nodes = append(s.nodes, n)
	}

	// a bootstrapped cluster starts with every configured control plane as a member
	for _, c := range s.clusters {
		if !c.bootstrapped {
			continue
		}

		for _, n := range s.nodes {
			if n.cluster == c && n.mode == ModeConfigured && n.isControlPlane() {
				c.join(n)
			}
		}
	}

	return s, nil
}

func (s *Sim) prepareCluster(cs ClusterSpec) (*Cluster, error) {
	dir := filepath.Join(s.opts.StateDir, "clusters", cs.Name)

	c := &Cluster{
		sim:          s,
		Spec:         cs,
		Name:         cs.Name,
		secrets:      filepath.Join(dir, "secrets.yaml"),
		talosconf:    filepath.Join(dir, "talosconfig"),
		readerConf:   filepath.Join(dir, "talosconfig-reader"),
		bootstrapped: cs.Etcd != EtcdDown,
	}

	b, created, err := loadOrCreateBundle(c.secrets, cs.Contract, cs.Aescbc)
	if err != nil {
		return nil, err
	}

	if created {
		s.log.Printf("cluster %s: new secrets bundle (contract %s)", cs.Name, cs.Contract)
	}

	c.Bundle = b
	c.ClusterID = b.Cluster.ID
	c.caCrt = b.Certs.OS.Crt
	c.caKey = b.Certs.OS.Key

	var endpoints []string

	for _, n := range s.opts.Scenario.ControlPlanes(cs.Name) {
		endpoints = append(endpoints, endpointOf(n))
	}

	if len(endpoints) == 0 {
		for _, n := range s.opts.Scenario.Nodes {
			if n.Cluster == cs.Name {
				endpoints = append(endpoints, endpointOf(&n))

				break
			}
		}
	}

	if err := writeTalosconfig(c.talosconf, cs.Name, endpoints, b, role.MakeSet(role.Admin)); err != nil {
		return nil, err
	}

	if err := writeTalosconfig(c.readerConf, cs.Name, endpoints, b, role.MakeSet(role.Reader)); err != nil {
		return nil, err
	}

	return c, nil
}

func endpointOf(n *NodeSpec) string {
	if n.Port == DefaultPort {
		return n.Address
	}

	return net.JoinHostPort(n.Address, strconv.Itoa(n.Port))
}

func (s *Sim) prepareNode(ns NodeSpec) (*Node, error) {
	dir := filepath.Join(s.opts.StateDir, "nodes", ns.Name)

	n := &Node{
		sim:         s,
		Spec:        ns,
		mode:        ns.Mode,
		power:       powerOff,
		stage:       stageBooting,
		installed:   *ns.Installed,
		rebootDelay: time.Duration(s.opts.Scenario.RebootDelay),
		kick:        make(chan struct{}),
	}

	var c *Cluster

	if ns.Cluster != "" {
		c = s.clusterByName(ns.Cluster)
		n.ichorCluster = c
		n.etcd = firstNonEmpty(ns.Etcd, c.Spec.Etcd)

		data, err := s.nodeConfig(dir, ns, c)
		if err != nil {
			return nil, err
		}

		n.scenarioConfig = data
		n.configPath = filepath.Join(dir, "config.yaml")
	} else {
		n.etcd = firstNonEmpty(ns.Etcd, EtcdRunning)
	}

	nodeID, err := persistentNodeID(filepath.Join(dir, "node-id"))
	if err != nil {
		return nil, err
	}

	n.nodeID = nodeID

	if ns.Mode == ModeConfigured {
		facts, err := ParseConfigFacts(n.scenarioConfig)
		if err != nil {
			return nil, err
		}

		n.mode = ModeConfigured
		n.config = n.scenarioConfig
		n.persistent = n.scenarioConfig

		for i, p := range ns.Staged {
			if n.persistent, err = ApplyPatch(n.persistent, p); err != nil {
				return nil, fmt.Errorf("node %q: staged[%d]: %w", ns.Name, i, err)
			}
		}
		n.facts = facts
		n.configVersion = 1
		n.cluster = c
		n.initialCNIConfsLocked(c)
	}

	return n, nil
}

// nodeConfig returns DIR/nodes/<name>/config.yaml, generating it on first start.
func (s *Sim) nodeConfig(dir string, ns NodeSpec, c *Cluster) ([]byte, error) {
	path := filepath.Join(dir, "config.yaml")

	if data, err := os.ReadFile(path); err == nil {
		return data, nil
	}

	var endpoints []string
	for _, cp := range s.opts.Scenario.ControlPlanes(c.Name) {
		endpoints = append(endpoints, cp.Address)
	}

	role := ns.Role
	if role == "" {
		role = RoleWorker
	}

	data, err := s.gen.Generate(GenParams{
		ClusterName:       c.Name,
		Endpoint:          c.Spec.Endpoint,
		KubernetesVersion: c.Spec.KubernetesVersion,
		Contract:          ns.Contract,
		Bundle:            c.Bundle,
		Endpoints:         endpoints,
		Role:              role,
		InstallDisk:       ns.InstallDisk,
		InstallImage:      ns.InstallImage,
		Base:              c.Spec.Base.ForRole(role),
		Patches:           append(append([]string{}, c.Spec.Patches...), ns.Patches...),
	})
	if err != nil {
		return nil, fmt.Errorf("generate machine configuration: %w", err)
	}

	if err := writeFileAtomic(path, data, 0o600); err != nil {
		return nil, err
	}

	return data, nil
}

func persistentNodeID(path string) (string, error) {
	if data, err := os.ReadFile(path); err == nil && len(bytes.TrimSpace(data)) > 0 {
		return string(bytes.TrimSpace(data)), nil
	}

	id := NewNodeID()

	return id, writeFileAtomic(path, []byte(id+"\n"), 0o600)
}

func (s *Sim) clusterByName(name string) *Cluster {
	for _, c := range s.clusters {
		if c.Name == name {
			return c
		}
	}

	return nil
}

func (s *Sim) nodeByName(name string) *Node {
	for _, n := range s.nodes {
		if n.Spec.Name == name {
			return n
		}
	}

	return nil
}

// clusterForConfigLocked finds the cluster whose OS CA signed a configuration, or makes an ad-hoc
// one for a configuration of an unknown cluster.
func (s *Sim) clusterForConfigLocked(f *ConfigFacts) *Cluster {
	if f == nil || len(f.OSCACrt) == 0 {
		return nil
	}

	for _, c := range s.clusters {
		if bytes.Equal(bytes.TrimSpace(c.caCrt), bytes.TrimSpace(f.OSCACrt)) {
			if c.caKey == nil && len(f.OSCAKey) > 0 {
				c.caKey = f.OSCAKey
			}

			return c
		}
	}

	name := firstNonEmpty(f.ClusterName, "adhoc")
	for i := 2; s.clusterByName(name) != nil; i++ {
		name = fmt.Sprintf("%s-%d", firstNonEmpty(f.ClusterName, "adhoc"), i)
	}

	c := &Cluster{
		sim:       s,
		Name:      name,
		Adhoc:     true,
		ClusterID: f.ClusterID,
		caCrt:     f.OSCACrt,
		caKey:     f.OSCAKey,
		Spec:      ClusterSpec{Name: name, Etcd: EtcdDown, Endpoint: f.Endpoint},
	}

	if len(c.caKey) == 0 {
		c.caKey = nil
	}

	s.clusters = append(s.clusters, c)
	s.log.Printf("ad-hoc cluster %q for a configuration of an unknown cluster", name)

	return c
}

// reconcileLocked lets configured control planes whose etcd should run join a bootstrapped
// cluster (the first one bootstraps it; later ones need quorum). A node whose old member is still
// registered cannot join again.
func (c *Cluster) reconcileLocked() {
	if !c.bootstrapped {
		return
	}

	for _, n := range c.sim.nodes {
		if n.cluster != c || n.power != powerUp || n.mode != ModeConfigured || !n.isControlPlane() {
			continue
		}

		if n.memberID != 0 || n.etcdStopped || n.etcd == EtcdDown || c.hasStaleMember(n) {
			continue
		}

		if len(c.members) == 0 || c.hasQuorum() {
			c.join(n)
		}
	}
}

func (c *Cluster) hasStaleMember(n *Node) bool {
	for _, m := range c.members {
		if m.Node == n && m.ID != n.memberID {
			return true
		}
	}

	return false
}

// Start boots every node, starts the control API and writes DIR/sim.json.
func (s *Sim) Start() error {
	simJSON := filepath.Join(s.opts.StateDir, "sim.json")
	os.Remove(simJSON) //nolint:errcheck

	for _, n := range s.nodes {
		if err := n.boot(); err != nil {
			return fmt.Errorf("node %s: %w", n.Spec.Name, err)
		}
	}

	lis, err := net.Listen("tcp", s.opts.ControlAddr)
	if err != nil {
		return fmt.Errorf("control API: %w", err)
	}

	s.controlURL = "http://" + lis.Addr().String()
	s.control = &http.Server{Handler: s.controlHandler(), ReadHeaderTimeout: 10 * time.Second}

	go s.control.Serve(lis) //nolint:errcheck

	data, err := json.MarshalIndent(s.Info(), "", "  ")
	if err != nil {
		return err
	}

	if err := writeFileAtomic(simJSON, append(data, '\n'), 0o644); err != nil {
		return err
	}

	s.log.Printf("ready: %d clusters, %d nodes, control API %s", len(s.clusters), len(s.nodes), s.controlURL)

	return nil
}

// ControlURL is the base URL of the control API (after Start).
func (s *Sim) ControlURL() string { return s.controlURL }

// Close stops every node and the control API and removes DIR/sim.json.
func (s *Sim) Close() {
	s.cancel()

	if s.control != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		s.control.Shutdown(ctx) //nolint:errcheck
		cancel()
	}

	for _, n := range s.nodes {
		n.stopServing()
	}

	s.wg.Wait()
	os.Remove(filepath.Join(s.opts.StateDir, "sim.json")) //nolint:errcheck
}

// goAfter runs f after d unless the simulator is closed first.
func (s *Sim) goAfter(d time.Duration, f func()) {
	s.wg.Add(1)

	go func() {
		defer s.wg.Done()

		t := time.NewTimer(d)
		defer t.Stop()

		select {
		case <-t.C:
			f()
		case <-s.ctx.Done():
		}
	}()
}

// Info is the content of DIR/sim.json.
type Info struct {
	Control  string        `json:"control"`
	PID      int           `json:"pid"`
	StateDir string        `json:"stateDir"`
	Clusters []ClusterInfo `json:"clusters"`
	Nodes    []NodeInfo    `json:"nodes"`
}

// ClusterInfo describes one cluster in sim.json.
type ClusterInfo struct {
	Name              string `json:"name"`
	Contract          string `json:"contract"`
	TalosVersion      string `json:"talosVersion"`
	KubernetesVersion string `json:"kubernetesVersion"`
	Endpoint          string `json:"endpoint"`
	ClusterID         string `json:"clusterID"`
	SecretsBundle     string `json:"secretsBundle"`
	Talosconfig       string `json:"talosconfig"`
	ReaderTalosconfig string `json:"readerTalosconfig"`
	Ichor             bool   `json:"ichor"`
	Etcd              string `json:"etcd"`
	// Kubernetes is the scenario's kubernetes block (absent when the scenario has none).
	Kubernetes *KubernetesSpec `json:"kubernetes,omitempty"`
}

// NodeInfo describes one node in sim.json (its state at start).
type NodeInfo struct {
	Name         string   `json:"name"`
	Address      string   `json:"address"`
	Port         int      `json:"port"`
	Cluster      string   `json:"cluster"`
	Role         string   `json:"role"`
	Mode         string   `json:"mode"`
	Hostname     string   `json:"hostname"`
	UUID         string   `json:"uuid"`
	Serial       string   `json:"serial"`
	MACs         []string `json:"macs"`
	InstallDisk  string   `json:"installDisk"`
	InstallImage string   `json:"installImage"`
	TalosVersion string   `json:"talosVersion"`
	Contract     string   `json:"contract"`
	Ichor        string   `json:"ichor"`
	Config       string   `json:"config,omitempty"`
	KubeNode     string   `json:"kubeNode,omitempty"`
}

// Info returns what sim.json holds.
func (s *Sim) Info() Info {
	s.mu.Lock()
	defer s.mu.Unlock()

	info := Info{Control: s.controlURL, PID: os.Getpid(), StateDir: s.opts.StateDir, Clusters: []ClusterInfo{}, Nodes: []NodeInfo{}}

	for _, c := range s.clusters {
		if c.Adhoc {
			continue
		}

		info.Clusters = append(info.Clusters, ClusterInfo{
			Name:              c.Name,
			Contract:          c.Spec.Contract,
			TalosVersion:      c.Spec.TalosVersion,
			KubernetesVersion: c.Spec.KubernetesVersion,
			Endpoint:          c.Spec.Endpoint,
			ClusterID:         c.ClusterID,
			SecretsBundle:     c.secrets,
			Talosconfig:       c.talosconf,
			ReaderTalosconfig: c.readerConf,
			Ichor:             c.Spec.Ichor,
			Etcd:              c.Spec.Etcd,
			Kubernetes:        c.Spec.Kubernetes,
		})
	}

	for _, n := range s.nodes {
		info.Nodes = append(info.Nodes, NodeInfo{
			Name:         n.Spec.Name,
			Address:      n.Spec.Address,
			Port:         n.Spec.Port,
			Cluster:      n.Spec.Cluster,
			Role:         n.Spec.Role,
			Mode:         n.mode,
			Hostname:     n.Spec.Hostname,
			UUID:         n.Spec.Identity.UUID,
			Serial:       n.Spec.Identity.Serial,
			MACs:         n.Spec.Identity.MACs,
			InstallDisk:  n.Spec.InstallDisk,
			InstallImage: n.Spec.InstallImage,
			TalosVersion: n.Spec.TalosVersion,
			Contract:     n.Spec.Contract,
			Ichor:        n.Spec.Ichor,
			Config:       n.configPath,
			KubeNode:     n.Spec.KubeNode,
		})
	}

	return info
}
