package sim

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/siderolabs/crypto/x509"
	coreconfig "github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/role"
	"google.golang.org/grpc"
)

const (
	powerUp        = "up"
	powerOff       = "off"
	powerRebooting = "rebooting"

	// stages as MachineStatus reports them
	stageRunning     = "running"
	stageMaintenance = "maintenance"
	stageResetting   = "resetting"
	stageRebooting   = "rebooting"
	stageInstalling  = "installing"
	stageBooting     = "booting"
)

// Node is one simulated Talos node. Fields below the line are guarded by Sim.mu.
type Node struct {
	sim            *Sim
	Spec           NodeSpec
	configPath     string
	scenarioConfig []byte // the generated configuration (nil when the node has no cluster)
	ichorCluster   *Cluster

	srvMu sync.Mutex
	srv   *grpc.Server
	lis   *trackingListener

	// ---- guarded by Sim.mu
	mode   string // configured | maintenance
	power  string // up | off | rebooting
	stage  string
	config []byte // active configuration (nil: none)
	// the active configuration loaded by Talos's configloader, and the bytes it was loaded from
	// (runningProvider: machined keeps its running configuration loaded, so a dry run does not
	// parse it again)
	running       coreconfig.Provider
	runningFrom   []byte
	persistent    []byte           // on-disk configuration (differs after STAGED, and in a TRY window)
	tryEpoch      int              // counts TRY applies: a later apply cancels an earlier TRY's rollback
	meta          map[uint8][]byte // META values written through the API
	facts         *ConfigFacts
	cluster       *Cluster
	nodeID        string
	installed     bool
	etcd          string // desired etcd process state: running | down | hang
	etcdStopped   bool   // stopped by a leave or removal until the next boot
	memberID      uint64
	epoch         int // bumped on every boot and every stop; stale timers check it
	bootCount     int
	bootTime      time.Time
	configVersion int
	rebootDelay   time.Duration
	neverReturn   bool
	faults        []*Fault
	calls         []*CallRecord
	resetting     bool
	lastReset     *ResetStatus
	lastApply     *ApplyStatus
	bootErr       string
	kick          chan struct{}
	tlsConf       *tls.Config
	tlsPtr        atomic.Pointer[tls.Config] // read by TLS handshakes without Sim.mu
	forwardTLS    *tls.Config                // nil when the node cannot forward (workers, maintenance)
	maint         *maintenanceCert
	cniConfs      []string // /etc/cni/net.d (cni.go)
}

// ResetStatus is the outcome of the last Reset call, for the control API.
type ResetStatus struct {
	ActorID  string   `json:"actorId"`
	Graceful bool     `json:"graceful"`
	Reboot   bool     `json:"reboot"`
	Mode     string   `json:"mode"`
	Wipe     []string `json:"wipe"`
	State    string   `json:"state"` // running, leaving-etcd, rebooting, done, aborted, powered-off
	Error    string   `json:"error,omitempty"`
}

// ApplyStatus is the outcome of the last ApplyConfiguration call.
type ApplyStatus struct {
	Mode        string `json:"mode"`
	DryRun      bool   `json:"dryRun"`
	Maintenance bool   `json:"maintenance"`
	SHA256      string `json:"sha256"`
	Size        int    `json:"size"`
}

func (n *Node) hostname() string {
	if n.mode == ModeConfigured && n.facts != nil && n.facts.Hostname != "" {
		return n.facts.Hostname
	}

	return n.Spec.Hostname
}

func (n *Node) role() string {
	if n.mode == ModeConfigured && n.facts != nil {
		return n.facts.Role()
	}

	return ""
}

func (n *Node) isControlPlane() bool { return n.role() == RoleControlPlane }

// kickLocked wakes goroutines waiting for an out-of-band change (a hung reset).
func (n *Node) kickLocked() {
	close(n.kick)
	n.kick = make(chan struct{})
}

func configDigest(b []byte) string {
	if b == nil {
		return ""
	}

	sum := sha256.Sum256(b)

	return hex.EncodeToString(sum[:])
}

// enterMaintenanceLocked is the state after STATE was wiped: no configuration, a new node
// identity, no cluster. The etcd member (if any) stays registered in the cluster.
func (n *Node) enterMaintenanceLocked() {
	n.mode = ModeMaintenance
	n.config = nil
	n.persistent = nil
	n.facts = nil
	n.cluster = nil
	n.nodeID = NewNodeID()
	n.configVersion = 0
}

// setConfiguredLocked makes the node run with a full configuration.
func (n *Node) setConfiguredLocked(data []byte, facts *ConfigFacts) {
	n.mode = ModeConfigured
	n.config = data
	n.persistent = data
	n.facts = facts
	n.configVersion++
	n.cluster = n.sim.clusterForConfigLocked(facts)

	// etcd data of another cluster is of no use here: that member stays registered there
	if n.memberID != 0 && (n.cluster == nil || n.cluster.member(n.memberID) == nil) {
		n.memberID = 0
	}
}

// prepareBootLocked makes the per-boot state: certificates, stage.
func (n *Node) prepareBootLocked() error {
	n.epoch++
	n.bootCount++
	n.bootTime = time.Now()
	n.etcdStopped = false
	n.bootErr = ""
	n.bootCNIConfsLocked()

	if err := n.issueCertsLocked(); err != nil {
		n.bootErr = err.Error()

		return err
	}

	n.stage = stageRunning
	if n.mode == ModeMaintenance {
		n.stage = stageMaintenance
	}

	return nil
}

// issueCertsLocked makes the API certificates for the current mode and configuration: a per-boot
// maintenance certificate, or a server certificate from the OS CA (plus, on control planes, an
// os:impersonator client certificate for forwarding). New TLS handshakes use them at once.
func (n *Node) issueCertsLocked() error {
	n.forwardTLS = nil
	n.maint = nil

	ips := []net.IP{net.ParseIP(n.Spec.Address).To4(), net.ParseIP("127.0.0.1").To4()}

	if n.mode == ModeMaintenance {
		mc, err := newMaintenanceCert(append(ips, net.ParseIP("::1")), []string{n.Spec.Hostname})
		if err != nil {
			return err
		}

		n.maint = mc
		n.setTLSLocked(&tls.Config{
			MinVersion:             tls.VersionTLS12,
			NextProtos:             []string{"h2"},
			Certificates:           []tls.Certificate{*mc.cert},
			ClientAuth:             tls.NoClientCert,
			SessionTicketsDisabled: true,
		})

		return nil
	}

	ca, err := n.osCALocked()
	if err != nil {
		return err
	}

	dns := []string{n.hostname()}
	dns = append(dns, n.facts.CertSANs...)

	cert, err := issueServerCert(ca, ips, dns, n.hostname())
	if err != nil {
		return err
	}

	pool, err := certPool(append([][]byte{n.facts.OSCACrt}, n.facts.AcceptedCAs...)...)
	if err != nil {
		return err
	}

	n.setTLSLocked(&tls.Config{
		MinVersion:             tls.VersionTLS12,
		NextProtos:             []string{"h2"},
		Certificates:           []tls.Certificate{*cert},
		ClientAuth:             tls.RequireAndVerifyClientCert,
		ClientCAs:              pool,
		VerifyPeerCertificate:  verifyExtKeyUsage,
		SessionTicketsDisabled: true,
	})

	// control planes hold the OS CA key and can forward with an os:impersonator certificate
	if n.isControlPlane() && len(ca.Key) > 0 {
		client, err := issueClientCert(ca, n.hostname(), role.Impersonator)
		if err != nil {
			return err
		}

		roots, err := certPool(n.facts.OSCACrt)
		if err != nil {
			return err
		}

		n.forwardTLS = &tls.Config{
			MinVersion:   tls.VersionTLS12,
			Certificates: []tls.Certificate{*client},
			RootCAs:      roots,
		}
	}

	return nil
}

func (n *Node) setTLSLocked(c *tls.Config) {
	n.tlsConf = c
	n.tlsPtr.Store(c)
}

// osCALocked returns the OS CA that signs the node's server certificate: the key from the
// configuration (control planes), or the cluster's key (workers get their certificate from
// trustd on a control plane). A worker of an unknown cluster gets no certificate.
func (n *Node) osCALocked() (*x509.PEMEncodedCertificateAndKey, error) {
	if n.facts == nil || len(n.facts.OSCACrt) == 0 {
		return nil, errors.New("machine configuration has no machine.ca")
	}

	if len(n.facts.OSCAKey) > 0 {
		return &x509.PEMEncodedCertificateAndKey{Crt: n.facts.OSCACrt, Key: n.facts.OSCAKey}, nil
	}

	if n.cluster != nil && n.cluster.caKey != nil && bytes.Equal(n.cluster.caCrt, n.facts.OSCACrt) {
		return &x509.PEMEncodedCertificateAndKey{Crt: n.facts.OSCACrt, Key: n.cluster.caKey}, nil
	}

	return nil, errors.New("cannot obtain an API certificate: the OS CA key is unknown (no control plane of this cluster runs trustd)")
}

// boot prepares the per-boot state and starts serving.
func (n *Node) boot() error {
	s := n.sim

	s.mu.Lock()
	err := n.prepareBootLocked()

	if err != nil {
		n.power = powerOff
		n.stage = stageBooting
		s.mu.Unlock()
		s.log.Printf("%s: boot failed, node stays down: %v", n.Spec.Name, err)

		return err
	}

	n.power = powerUp
	if n.cluster != nil && n.mode == ModeConfigured {
		n.cluster.reconcileLocked()
	}

	mode := n.mode
	fp := ""

	if n.maint != nil {
		fp = n.maint.fingerprint
	}
	s.mu.Unlock()

	if err := n.startServing(); err != nil {
		s.mu.Lock()
		n.power = powerOff
		n.bootErr = err.Error()
		s.mu.Unlock()

		return err
	}

	if mode == ModeMaintenance {
		s.log.Printf("%s: up in maintenance mode on %s:%d (fingerprint %s)", n.Spec.Name, n.Spec.Address, n.Spec.Port, fp)
	} else {
		s.log.Printf("%s: up, configured, on %s:%d", n.Spec.Name, n.Spec.Address, n.Spec.Port)
	}

	return nil
}

func (n *Node) startServing() error {
	lis, err := net.Listen("tcp", fmt.Sprintf("%s:%d", n.Spec.Address, n.Spec.Port))
	if err != nil {
		return err
	}

	tl := &trackingListener{Listener: lis, conns: map[string]net.Conn{}}
	srv := n.newGRPCServer()

	n.srvMu.Lock()
	n.srv, n.lis = srv, tl
	n.srvMu.Unlock()

	go srv.Serve(tl) //nolint:errcheck

	return nil
}

// stopServing closes the listener and every connection: the node stops answering.
func (n *Node) stopServing() {
	n.srvMu.Lock()
	srv, lis := n.srv, n.lis
	n.srv, n.lis = nil, nil
	n.srvMu.Unlock()

	if srv != nil {
		srv.Stop()
	}

	// Stop closes only the listeners Serve has registered; when the node stops right after it
	// started, the Serve goroutine may not have run yet and would close it later. Close it here,
	// so that the address is free when stopServing returns (a restart binds it again at once).
	if lis != nil {
		lis.Listener.Close() //nolint:errcheck
	}
}

// powerCycle stops serving now; after delay it runs change (under Sim.mu) and boots again,
// unless the node was told never to return or another event superseded this one.
func (n *Node) powerCycle(delay time.Duration, stageDown string, change func()) {
	s := n.sim

	n.stopServing()

	s.mu.Lock()
	n.epoch++
	epoch := n.epoch
	n.power = powerRebooting
	n.stage = stageDown

	if n.cluster != nil {
		n.cluster.reconcileLocked()
	}
	s.mu.Unlock()

	s.goAfter(delay, func() {
		s.mu.Lock()

		if n.epoch != epoch {
			s.mu.Unlock()

			return
		}

		if change != nil {
			change()
		}

		if n.neverReturn {
			n.power = powerOff
			s.mu.Unlock()
			s.log.Printf("%s: does not come back (neverReturn)", n.Spec.Name)

			return
		}
		s.mu.Unlock()

		n.boot() //nolint:errcheck
	})
}

// trackingListener remembers accepted connections so that a "drop" fault can close the
// connection a call arrived on.
type trackingListener struct {
	net.Listener

	mu    sync.Mutex
	conns map[string]net.Conn
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}

	l.mu.Lock()
	l.conns[c.RemoteAddr().String()] = c
	l.mu.Unlock()

	return &trackedConn{Conn: c, l: l}, nil
}

func (l *trackingListener) drop(remote string) bool {
	l.mu.Lock()
	c := l.conns[remote]
	l.mu.Unlock()

	if c == nil {
		return false
	}

	c.Close() //nolint:errcheck

	return true
}

type trackedConn struct {
	net.Conn

	l    *trackingListener
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c.RemoteAddr().String())
		c.l.mu.Unlock()
	})

	return c.Conn.Close()
}

// isLocalTarget reports whether a `node` metadata value names this node.
func (n *Node) isLocalTarget(t string) bool {
	return t == n.Spec.Address || t == n.hostname() || t == n.Spec.Hostname
}

func memberHex(id uint64) string {
	if id == 0 {
		return ""
	}

	return fmt.Sprintf("%016x", id)
}

// NodeState is the control API's view of a node.
type NodeState struct {
	Name                   string   `json:"name"`
	Address                string   `json:"address"`
	Port                   int      `json:"port"`
	Cluster                string   `json:"cluster"`
	ScenarioCluster        string   `json:"scenarioCluster"`
	Role                   string   `json:"role"`
	Mode                   string   `json:"mode"`
	Power                  string   `json:"power"`
	Stage                  string   `json:"stage"`
	Hostname               string   `json:"hostname"`
	UUID                   string   `json:"uuid"`
	Serial                 string   `json:"serial"`
	MACs                   []string `json:"macs"`
	NodeID                 string   `json:"nodeId"`
	TalosVersion           string   `json:"talosVersion"`
	Contract               string   `json:"contract"`
	Installed              bool     `json:"installed"`
	InstallDisk            string   `json:"installDisk"`
	InstallImage           string   `json:"installImage"`
	Ichor                  string   `json:"ichor"`
	Etcd                   string   `json:"etcd"`
	EtcdStopped            bool     `json:"etcdStopped"`
	EtcdMemberID           string   `json:"etcdMemberId"`
	MaintenanceFingerprint string   `json:"maintenanceFingerprint,omitempty"`
	ConfigSHA256           string   `json:"configSha256"`
	ConfigVersion          int      `json:"configVersion"`
	// Staged: the persistent configuration is not the running one (a STAGED apply, a TRY window).
	Staged      bool         `json:"staged"`
	ConfigPath  string       `json:"configPath,omitempty"`
	RebootDelay string       `json:"rebootDelay"`
	NeverReturn bool         `json:"neverReturn"`
	Faults      []*Fault     `json:"faults"`
	Resetting   bool         `json:"resetting"`
	LastReset   *ResetStatus `json:"lastReset,omitempty"`
	LastApply   *ApplyStatus `json:"lastApply,omitempty"`
	BootCount   int          `json:"bootCount"`
	BootTime    string       `json:"bootTime"`
	BootError   string       `json:"bootError,omitempty"`
	Calls       int          `json:"calls"`
	// CNIConfs: the files in /etc/cni/net.d (cni.go); NetworkReady: whether containerd would
	// report the network ready with them.
	CNIConfs     []string `json:"cniConfs"`
	NetworkReady bool     `json:"networkReady"`
}

func (n *Node) stateLocked() NodeState {
	st := NodeState{
		Name:            n.Spec.Name,
		Address:         n.Spec.Address,
		Port:            n.Spec.Port,
		ScenarioCluster: n.Spec.Cluster,
		Role:            n.role(),
		Mode:            n.mode,
		Power:           n.power,
		Stage:           n.stage,
		Hostname:        n.hostname(),
		UUID:            n.Spec.Identity.UUID,
		Serial:          n.Spec.Identity.Serial,
		MACs:            slices.Clone(n.Spec.Identity.MACs),
		NodeID:          n.nodeID,
		TalosVersion:    n.Spec.TalosVersion,
		Contract:        n.Spec.Contract,
		Installed:       n.installed,
		InstallDisk:     n.Spec.InstallDisk,
		InstallImage:    n.Spec.InstallImage,
		Ichor:           n.Spec.Ichor,
		Etcd:            n.etcd,
		EtcdStopped:     n.etcdStopped,
		EtcdMemberID:    memberHex(n.memberID),
		ConfigSHA256:    configDigest(n.config),
		ConfigVersion:   n.configVersion,
		Staged:          n.persistent != nil && configDigest(n.persistent) != configDigest(n.config),
		ConfigPath:      n.configPath,
		RebootDelay:     n.rebootDelay.String(),
		NeverReturn:     n.neverReturn,
		Faults:          copyFaults(n.faults),
		Resetting:       n.resetting,
		LastReset:       copyPtr(n.lastReset),
		LastApply:       copyPtr(n.lastApply),
		BootCount:       n.bootCount,
		BootTime:        n.bootTime.UTC().Format(time.RFC3339Nano),
		BootError:       n.bootErr,
		Calls:           len(n.calls),
		CNIConfs:        slices.Clone(n.cniConfs),
		NetworkReady:    NetworkReady(n.cniConfs),
	}

	if n.cluster != nil {
		st.Cluster = n.cluster.Name
	}

	if n.facts != nil {
		st.InstallDisk = firstNonEmpty(n.facts.InstallDisk, st.InstallDisk)
		st.InstallImage = firstNonEmpty(n.facts.InstallImage, st.InstallImage)
	}

	if n.maint != nil && n.power == powerUp {
		st.MaintenanceFingerprint = n.maint.fingerprint
	}

	if st.LastReset != nil {
		st.LastReset.Wipe = slices.Clone(st.LastReset.Wipe)
	}

	return st
}

// copyPtr copies *p so that the copy can be encoded after Sim.mu is released.
func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}

	v := *p

	return &v
}

func copyFaults(faults []*Fault) []*Fault {
	out := make([]*Fault, 0, len(faults))
	for _, f := range faults {
		out = append(out, copyPtr(f))
	}

	return out
}
