package kubelab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/encoder"
	"github.com/siderolabs/talos/pkg/machinery/config/generate"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	machinetype "github.com/siderolabs/talos/pkg/machinery/config/machine"
	"go.yaml.in/yaml/v4"
)

// The provisioning of approved machines found in maintenance mode, the way Ichor's controller
// does it (ADR 0108 section 5, ADR 0128 "discovery refreshes pending machines"): the maintenance
// certificate must be the one recorded in status.maintenanceFingerprint (or the one the
// ichor.maesh.dev/trust-maintenance-fingerprint annotation accepts), the node must carry the
// machine's UUID; then a configuration generated for the cluster (Talos's generator, the
// cluster's secrets bundle) is applied over the pinned insecure connection, and the node boots
// configured, which the authenticated read of reconcileReleased then reports Ready.

// Condition type and reasons of the provisioning.
const (
	CondMaintenanceIdentityChanged    = "MaintenanceIdentityChanged"
	ReasonMaintenanceIdentityChanged  = "MaintenanceIdentityChanged" // Ready=False
	ReasonFingerprintMismatch         = "FingerprintMismatch"        // MaintenanceIdentityChanged=True
	ReasonProvisioning                = "Provisioning"               // Ready=False: configuration applied
	ReasonProvisionFailed             = "ProvisionFailed"            // Ready=False: generate or apply failed
	ProvisionUserAgent                = "ichor-lab-controller"
	provisionReapplyAfter             = 20 * time.Second
	trustAnyMaintenanceFingerprintVal = "true"
)

// provisionConditionTypes are the conditions only the provisioning sets; any other outcome
// removes them.
var provisionConditionTypes = []string{CondMaintenanceIdentityChanged}

// MaintenanceNode is what a node in maintenance mode shows without a client certificate.
type MaintenanceNode struct {
	Fingerprint string // SPKI fingerprint of its certificate (talosctl --cert-fingerprint form)
	UUID        string
}

// MaintenanceClient talks to nodes in maintenance mode (insecure TLS, pinned where it matters).
type MaintenanceClient interface {
	// Probe answers only for a node in maintenance mode (a configured node wants a client
	// certificate and refuses the handshake).
	Probe(ctx context.Context, endpoint string) (MaintenanceNode, error)
	// Apply sends ApplyConfiguration (mode AUTO) over a connection pinned to fingerprint.
	Apply(ctx context.Context, endpoint, fingerprint string, config []byte) error
}

// Provisioner provisions approved machines in maintenance mode. Set Controller.Provisioner.
type Provisioner struct {
	Client MaintenanceClient

	mu      sync.Mutex
	applied map[string]time.Time // machine → when its configuration was applied
}

// provisionIfMaintenance is called when the authenticated read of an approved, released machine
// failed. It returns nil when the node is not in maintenance mode (the read's outcome stands).
func (c *Controller) provisionIfMaintenance(ctx context.Context, m *TalosMachine, tc *TalosCluster,
	bundle []byte, endpoint string, readErr error) *outcome {
	p := c.Provisioner
	var ne *NodeError
	if p == nil || p.Client == nil || !errors.As(readErr, &ne) || ne.Reason != ReasonIdentityMismatch {
		return nil
	}
	timeout := c.NodeTimeout
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	node, err := p.Client.Probe(pctx, endpoint)
	if err != nil {
		return nil
	}
	if want := uuidOf(m); want != "" && !strings.EqualFold(node.UUID, want) {
		return notReady(ReasonIdentityMismatch, "%s answers in maintenance mode with UUID %q, not the machine's %q",
			endpoint, node.UUID, want)
	}
	if !FingerprintAccepted(m, node.Fingerprint) {
		msg := fmt.Sprintf("%s presents maintenance certificate fingerprint %s, not the recorded %s; accept it with "+
			"the annotation %s: %s", endpoint, node.Fingerprint, m.Status.MaintenanceFingerprint, AnnotationTrustFP, node.Fingerprint)
		o := notReady(ReasonMaintenanceIdentityChanged, "%s", msg)
		o.extra = []Condition{{Type: CondMaintenanceIdentityChanged, Status: True, Reason: ReasonFingerprintMismatch, Message: msg}}
		return o
	}
	if when, ok := p.appliedAt(m.Metadata.Name); ok && time.Since(when) < provisionReapplyAfter {
		return provisioning(endpoint, node.Fingerprint)
	}
	cfg, err := GenerateMachineConfig(bundle, tc, m)
	if err != nil {
		return notReady(ReasonProvisionFailed, "generating the configuration of %s: %v", m.Metadata.Name, err)
	}
	if err := p.Client.Apply(pctx, endpoint, node.Fingerprint, cfg); err != nil {
		return notReady(ReasonProvisionFailed, "%s: ApplyConfiguration: %v", endpoint, err)
	}
	p.mu.Lock()
	if p.applied == nil {
		p.applied = map[string]time.Time{}
	}
	p.applied[m.Metadata.Name] = time.Now()
	p.mu.Unlock()
	return provisioning(endpoint, node.Fingerprint)
}

func (p *Provisioner) appliedAt(name string) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.applied[name]
	return t, ok
}

func provisioning(endpoint, fp string) *outcome {
	return &outcome{
		ready: Condition{Type: CondReady, Status: False, Reason: ReasonProvisioning,
			Message: fmt.Sprintf("configuration applied to %s in maintenance mode (certificate fingerprint %s); "+
				"waiting for it to boot configured", endpoint, fp)},
		summary: "Ready=False Provisioning: configuration applied to " + endpoint,
	}
}

// FingerprintAccepted tells whether a node in maintenance mode presenting fp may be provisioned as
// machine m: fp is the recorded status.maintenanceFingerprint, nothing was recorded (trust on
// first use), or the annotation ichor.maesh.dev/trust-maintenance-fingerprint names fp (or is
// "true").
func FingerprintAccepted(m *TalosMachine, fp string) bool {
	pinned := ""
	if m.Status != nil {
		pinned = m.Status.MaintenanceFingerprint
	}
	if pinned == "" || pinned == fp {
		return true
	}
	trust := strings.TrimSpace(m.Metadata.Annotations[AnnotationTrustFP])
	return trust == fp || trust == trustAnyMaintenanceFingerprintVal
}

// GenerateMachineConfig generates the machine's configuration for its cluster with Talos's
// generator: the cluster's secrets bundle, name (spec.clusterName, else the object's name),
// endpoint, Kubernetes version and version contract (1.12 or 1.13; later contracts get 1.13's
// configuration, which every node reads), the machine's role (worker when unset: a machine
// registered from maintenance mode has none) and install disk and image (else the first
// discovered disk and the installer of the cluster's Talos version).
func GenerateMachineConfig(bundle []byte, tc *TalosCluster, m *TalosMachine) (out []byte, err error) {
	b := &secrets.Bundle{Clock: secrets.NewClock()}
	if err := yaml.NewDecoder(bytes.NewReader(bundle)).Decode(b); err != nil {
		return nil, fmt.Errorf("secrets bundle: %w", err)
	}
	if b.Cluster == nil || b.Secrets == nil || b.TrustdInfo == nil || b.Certs == nil || b.Certs.OS == nil ||
		b.Certs.K8s == nil || b.Certs.Etcd == nil {
		return nil, errors.New("secrets bundle: incomplete (cluster, secrets, trustdinfo and certs are needed)")
	}
	defer func() { // the generator assumes a well-formed bundle; a bad one must not stop the controller
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("generator: %v", r)
		}
	}()
	name := tc.Spec.ClusterName
	if name == "" {
		name = tc.Metadata.Name
	}
	contract := config.TalosVersion1_13
	if tc.Spec.VersionContract == "1.12" {
		contract = config.TalosVersion1_12
	}
	typ := machinetype.TypeWorker
	if m.Spec.Role == "controlplane" {
		typ = machinetype.TypeControlPlane
	}
	disk, image := "", ""
	if m.Spec.Install != nil {
		disk, image = m.Spec.Install.Disk, m.Spec.Install.Image
	}
	if disk == "" && m.Status != nil && len(m.Status.DiscoveredDisks) > 0 {
		disk = m.Status.DiscoveredDisks[0].DevPath
	}
	if disk == "" {
		disk = "/dev/sda"
	}
	if image == "" {
		image = "ghcr.io/siderolabs/installer:" + tc.Spec.TalosVersion
	}
	in, err := generate.NewInput(name, tc.Spec.Endpoint, strings.TrimPrefix(tc.Spec.KubernetesVersion, "v"),
		generate.WithVersionContract(contract),
		generate.WithSecretsBundle(b),
		generate.WithInstallDisk(disk),
		generate.WithInstallImage(image),
	)
	if err != nil {
		return nil, err
	}
	cfg, err := in.Config(typ)
	if err != nil {
		return nil, err
	}
	return cfg.EncodeBytes(encoder.WithComments(encoder.CommentsDisabled))
}
