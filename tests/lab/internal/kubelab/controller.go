package kubelab

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// NodeFacts is what the controller reads from a configured node over the authenticated API.
type NodeFacts struct {
	ClusterID   string // Infos.cluster.talos.dev "current" in namespace cluster
	ClusterName string
	UUID        string // SystemInformations.hardware.talos.dev "systeminformation"
}

// NodeReader reads a configured node with an os:admin identity made from the cluster's secrets
// bundle. endpoint is host:port.
type NodeReader interface {
	ReadNode(ctx context.Context, bundle []byte, endpoint string) (NodeFacts, error)
}

// Reasons of the Ready and AdoptionHeld conditions.
const (
	ReasonHoldApply         = "HoldApply"         // AdoptionHeld=True
	ReasonAdoptionHeld      = "AdoptionHeld"      // Ready=False while held
	ReasonIdentityVerified  = "IdentityVerified"  // Ready=True
	ReasonNodeUnreachable   = "NodeUnreachable"   // Ready=False: no answer, timeout
	ReasonIdentityMismatch  = "IdentityMismatch"  // Ready=False: other cluster ID or UUID, or another CA
	ReasonClusterNotFound   = "ClusterNotFound"   // Ready=False: no TalosCluster spec.cluster
	ReasonBundleUnavailable = "BundleUnavailable" // Ready=False: the bundle Secret is missing or unreadable
)

// NodeError is a NodeReader failure with the Ready reason it stands for.
type NodeError struct {
	Reason string // ReasonNodeUnreachable or ReasonIdentityMismatch
	Err    error
}

func (e *NodeError) Error() string { return e.Err.Error() }
func (e *NodeError) Unwrap() error { return e.Err }

// Controller is lab-controller's reconcile loop: it reports AdoptionHeld for held approved
// machines and Ready for released ones that answer with their cluster's identity. It writes
// status only and applies nothing to a node, except the Provisioner's configuration to an approved
// machine in maintenance mode.
type Controller struct {
	Kube        *Client
	Sim         *Sim // optional: the node port of an address (default 50000)
	Reader      NodeReader
	Logf        func(format string, args ...any)
	Now         func() time.Time
	NodeTimeout time.Duration // per node read, default 3 s
	Parallel    int           // machines reconciled at once, default 8
	Provisioner *Provisioner  // optional: provisions approved machines in maintenance mode (provision.go)
	Discovery   *Discovery    // optional: refreshes pending machines, as Ichor's discovery (discovery.go)

	mu      sync.Mutex
	last    map[string]string // machine → last logged outcome
	network map[string]bool   // sim node → its network as last seen (networkModel)
}

// DefaultTalosPort is the Talos API port (apid).
const DefaultTalosPort = 50000

// Pass reconciles every TalosMachine of the namespace once.
func (c *Controller) Pass(ctx context.Context) error {
	var machines TalosMachineList
	if err := c.Kube.Get(ctx, c.Kube.IchorPath("talosmachines", ""), &machines); err != nil {
		return fmt.Errorf("list talosmachines: %w", err)
	}
	var clusters TalosClusterList
	if err := c.Kube.Get(ctx, c.Kube.IchorPath("talosclusters", ""), &clusters); err != nil {
		return fmt.Errorf("list talosclusters: %w", err)
	}
	if err := c.installCilium(ctx, clusters.Items); err != nil {
		return err
	}
	netErr := c.networkModel(ctx) // reported with the machines' errors; it does not stop them
	env := &passEnv{c: c, clusters: map[string]*TalosCluster{}, bundles: map[string]bundleResult{}}
	for i := range clusters.Items {
		env.clusters[clusters.Items[i].Metadata.Name] = &clusters.Items[i]
	}
	par := c.Parallel
	if par <= 0 {
		par = 8
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	errs := make([]error, len(machines.Items))
	for i := range machines.Items {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = c.reconcile(ctx, &machines.Items[i], env)
		}(i)
	}
	wg.Wait()
	return errors.Join(append(errs, netErr, c.refreshPending(ctx, machines.Items, env.clusters))...)
}

// passEnv caches, for one pass, the clusters and their bundles.
type passEnv struct {
	c        *Controller
	clusters map[string]*TalosCluster
	mu       sync.Mutex
	bundles  map[string]bundleResult
}

type bundleResult struct {
	data []byte
	id   string
	err  error
}

func (e *passEnv) bundle(ctx context.Context, tc *TalosCluster) bundleResult {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, ok := e.bundles[tc.Metadata.Name]; ok {
		return r
	}
	r := func() bundleResult {
		key := tc.Spec.SecretsBundleRef.Key
		if key == "" {
			key = BundleKey
		}
		var sec Secret
		if err := e.c.Kube.Get(ctx, Path("", "v1", tc.Metadata.Namespace, "secrets", tc.Spec.SecretsBundleRef.Name), &sec); err != nil {
			return bundleResult{err: fmt.Errorf("secret %s: %w", tc.Spec.SecretsBundleRef.Name, err)}
		}
		data, ok := sec.Data[key]
		if !ok {
			return bundleResult{err: fmt.Errorf("secret %s has no key %s", tc.Spec.SecretsBundleRef.Name, key)}
		}
		id, err := BundleClusterID(data)
		if err != nil {
			return bundleResult{err: fmt.Errorf("secret %s key %s: %w", tc.Spec.SecretsBundleRef.Name, key, err)}
		}
		return bundleResult{data: data, id: id}
	}()
	e.bundles[tc.Metadata.Name] = r
	return r
}

// BundleClusterID returns cluster.id of a Talos secrets bundle (talosctl gen secrets format).
func BundleClusterID(bundle []byte) (string, error) {
	var b struct {
		Cluster struct {
			ID string `yaml:"id"`
		} `yaml:"cluster"`
	}
	if err := yaml.Unmarshal(bundle, &b); err != nil {
		return "", err
	}
	if b.Cluster.ID == "" {
		return "", errors.New("no cluster.id in the secrets bundle")
	}
	return b.Cluster.ID, nil
}

// IsHeld tells whether the machine carries the hold-apply annotation (any value but "false").
func IsHeld(m *TalosMachine) bool {
	v, ok := m.Metadata.Annotations[AnnotationHoldApply]
	return ok && v != "false"
}

// outcome is the status a reconcile wants; nil conditions means "leave the status alone".
type outcome struct {
	ready   Condition
	held    *Condition  // nil: AdoptionHeld removed
	extra   []Condition // the provisioning's own conditions (provision.go); others of theirs are removed
	summary string
}

func (c *Controller) reconcile(ctx context.Context, m *TalosMachine, env *passEnv) error {
	var o *outcome
	switch {
	case m.Spec.Approval != ApprovalApproved:
		// Pending and rejected machines: Ichor's discovery and approval are not simulated.
		return nil
	case IsHeld(m):
		o = c.reportHold(m)
	default:
		o = c.reconcileReleased(ctx, m, env)
	}
	return c.writeStatus(ctx, m, o)
}

func (c *Controller) reportHold(m *TalosMachine) *outcome {
	return &outcome{
		held: &Condition{Type: CondAdoptionHeld, Status: True, Reason: ReasonHoldApply,
			Message: "apply is held by the annotation " + AnnotationHoldApply},
		ready: Condition{Type: CondReady, Status: False, Reason: ReasonAdoptionHeld,
			Message: "the machine is held; nothing is applied until the hold is released"},
		summary: "held (AdoptionHeld=True, Ready=False)",
	}
}

func notReady(reason, format string, args ...any) *outcome {
	msg := fmt.Sprintf(format, args...)
	return &outcome{ready: Condition{Type: CondReady, Status: False, Reason: reason, Message: msg},
		summary: "Ready=False " + reason + ": " + msg}
}

// reconcileReleased checks a released approved machine: the node must answer the authenticated
// API with the cluster's ID and the machine's UUID.
//
// When the read is refused by TLS and a Provisioner is set, a node in maintenance mode is
// provisioned (provision.go); a later read confirms the result.
func (c *Controller) reconcileReleased(ctx context.Context, m *TalosMachine, env *passEnv) *outcome {
	tc := env.clusters[m.Spec.Cluster]
	if tc == nil {
		return notReady(ReasonClusterNotFound, "no TalosCluster %q in %s", m.Spec.Cluster, c.Kube.Namespace)
	}
	b := env.bundle(ctx, tc)
	if b.err != nil {
		return notReady(ReasonBundleUnavailable, "%v", b.err)
	}
	if m.Spec.Address == "" {
		return notReady(ReasonNodeUnreachable, "spec.address is empty")
	}
	endpoint := c.Endpoint(m.Spec.Address)
	timeout := c.NodeTimeout
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	facts, err := c.Reader.ReadNode(rctx, b.data, endpoint)
	cancel()
	if err != nil {
		if o := c.provisionIfMaintenance(ctx, m, tc, b.data, endpoint, err); o != nil {
			return o
		}
		reason := ReasonNodeUnreachable
		var ne *NodeError
		if errors.As(err, &ne) && ne.Reason != "" {
			reason = ne.Reason
		}
		return notReady(reason, "%s: %v", endpoint, err)
	}
	if facts.ClusterID != b.id {
		return notReady(ReasonIdentityMismatch, "%s answers with cluster ID %q (cluster %q), not %s's %q",
			endpoint, facts.ClusterID, facts.ClusterName, tc.Metadata.Name, b.id)
	}
	if want := uuidOf(m); want != "" && !strings.EqualFold(facts.UUID, want) {
		return notReady(ReasonIdentityMismatch, "%s answers with UUID %q, not the machine's %q", endpoint, facts.UUID, want)
	}
	return &outcome{
		ready: Condition{Type: CondReady, Status: True, Reason: ReasonIdentityVerified,
			Message: fmt.Sprintf("%s answers with cluster ID %s and UUID %s", endpoint, facts.ClusterID, facts.UUID)},
		summary: "Ready=True",
	}
}

func uuidOf(m *TalosMachine) string {
	if m.Spec.Identity == nil {
		return ""
	}
	return m.Spec.Identity.UUID
}

// Endpoint is host:port of the node's Talos API for an address: an address with a port is kept,
// else the port talos-sim gives that address, else 50000.
func (c *Controller) Endpoint(address string) string {
	if u, err := url.Parse(address); err == nil && u.Host != "" && u.Scheme != "" {
		address = u.Host
	}
	if _, _, err := net.SplitHostPort(address); err == nil {
		return address
	}
	port := DefaultTalosPort
	if c.Sim != nil {
		if n := c.Sim.NodeByAddress(address); n != nil && n.Port != 0 {
			port = n.Port
		}
	}
	return net.JoinHostPort(strings.Trim(address, "[]"), strconv.Itoa(port))
}

// writeStatus patches the status subresource when the conditions change.
func (c *Controller) writeStatus(ctx context.Context, m *TalosMachine, o *outcome) error {
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	var old []Condition
	var oldGen int64
	if m.Status != nil {
		old, oldGen = m.Status.Conditions, m.Status.ObservedGeneration
	}
	gen := m.Metadata.Generation
	conds := append([]Condition(nil), old...)
	o.ready.ObservedGeneration = gen
	conds = SetCondition(conds, o.ready, now)
	if o.held != nil {
		o.held.ObservedGeneration = gen
		conds = SetCondition(conds, *o.held, now)
	} else {
		conds = RemoveCondition(conds, CondAdoptionHeld)
	}
	for _, t := range provisionConditionTypes {
		conds = RemoveCondition(conds, t)
	}
	for _, x := range o.extra {
		x.ObservedGeneration = gen
		conds = SetCondition(conds, x, now)
	}
	c.logOnce(m.Metadata.Name, o.summary)
	if oldGen == gen && sameConditions(old, conds) {
		return nil
	}
	patch := map[string]any{"status": map[string]any{"observedGeneration": gen, "conditions": conds}}
	if err := c.Kube.MergePatch(ctx, c.Kube.IchorPath("talosmachines", m.Metadata.Name)+"/status", patch, nil); err != nil {
		if IsNotFound(err) {
			return nil // deleted meanwhile
		}
		return fmt.Errorf("%s: status: %w", m.Metadata.Name, err)
	}
	return nil
}

func sameConditions(a, b []Condition) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		y := FindCondition(b, x.Type)
		if y == nil || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message ||
			x.ObservedGeneration != y.ObservedGeneration {
			return false
		}
	}
	return true
}

func (c *Controller) logOnce(name, summary string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[string]string{}
	}
	if c.last[name] == summary {
		return
	}
	c.last[name] = summary
	if c.Logf != nil {
		c.Logf("%s: %s", name, summary)
	}
}
