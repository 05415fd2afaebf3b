package kubelab

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The lab's stand-in for Ichor's discovery of pending machines (ADR 0128, amendment "discovery
// refreshes pending machines"): for every pending TalosMachine (neither approved nor rejected)
// whose address is in its cluster's spec.discovery.addresses, the node is probed without a client
// certificate. When it answers in maintenance mode with the machine's UUID, serial and set of
// MAC addresses and another certificate than status.maintenanceFingerprint records, the
// fingerprint, discoveredDisks and discoveredLinks are re-recorded (status only, never spec) and
// a Normal Event MaintenanceIdentityRefreshed on the machine names the old and the new
// fingerprint. Any other answer changes nothing and reports nothing. Ichor's discovery runs every
// five minutes; the stand-in runs on every pass, which only makes the tests quicker.
// Departures: no new machine is ever created (the lab's tests register machines themselves), and
// a CIDR entry of spec.discovery.addresses is not expanded (only an address entry counts).

// ReasonIdentityRefreshed is the reason of the Event.
const ReasonIdentityRefreshed = "MaintenanceIdentityRefreshed"

// DiscoveryComponent reports the Event.
const DiscoveryComponent = "ichor-lab-controller-discovery"

// Inventory is what a node in maintenance mode shows of itself without a client certificate.
type Inventory struct {
	Fingerprint string
	UUID        string
	Serial      string
	MACs        []string // of the physical links: the permanent address, else the hardware one
	Disks       []DiscoveredDisk
	Links       []DiscoveredLink
}

// InventoryClient reads a node in maintenance mode (a configured node refuses the handshake).
type InventoryClient interface {
	Inventory(ctx context.Context, endpoint string) (Inventory, error)
}

// Discovery is set on Controller.Discovery to run the stand-in.
type Discovery struct {
	Client InventoryClient
}

// inDiscovery reports whether address (host or host:port) is one of the cluster's discovery
// addresses, the same host and port however written.
func inDiscovery(tc *TalosCluster, address string) bool {
	if tc == nil || tc.Spec.Discovery == nil {
		return false
	}
	host, port := splitAddress(address)
	for _, e := range tc.Spec.Discovery.Addresses {
		if h, p := splitAddress(e); h == host && p == port {
			return true
		}
	}
	return false
}

func splitAddress(a string) (string, int) {
	a = strings.TrimSpace(a)
	if h, p, err := net.SplitHostPort(a); err == nil {
		if n, err := strconv.Atoi(p); err == nil {
			return h, n
		}
	}
	return strings.Trim(a, "[]"), DefaultTalosPort
}

func sameMACs(a, b []string) bool {
	norm := func(in []string) []string {
		out := make([]string, 0, len(in))
		for _, m := range in {
			out = append(out, strings.ToLower(m))
		}
		sort.Strings(out)
		return out
	}
	x, y := norm(a), norm(b)
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// refreshPending is the discovery pass over the machines of one list.
func (c *Controller) refreshPending(ctx context.Context, machines []TalosMachine, clusters map[string]*TalosCluster) error {
	if c.Discovery == nil || c.Discovery.Client == nil {
		return nil
	}
	var errs []error
	for i := range machines {
		m := &machines[i]
		if m.Spec.Approval == ApprovalApproved || m.Spec.Approval == ApprovalRejected || m.Spec.Identity == nil ||
			m.Spec.Address == "" || !inDiscovery(clusters[m.Spec.Cluster], m.Spec.Address) {
			continue
		}
		if err := c.refreshOne(ctx, m); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("discovery: %v", errs)
	}
	return nil
}

func (c *Controller) refreshOne(ctx context.Context, m *TalosMachine) error {
	timeout := c.NodeTimeout
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	inv, err := c.Discovery.Client.Inventory(pctx, c.Endpoint(m.Spec.Address))
	if err != nil {
		return nil // not in maintenance mode, or not answering: nothing changes
	}
	id := m.Spec.Identity
	old := ""
	if m.Status != nil {
		old = m.Status.MaintenanceFingerprint
	}
	if !strings.EqualFold(inv.UUID, id.UUID) || inv.Serial != id.Serial || !sameMACs(inv.MACs, id.MACs) ||
		inv.Fingerprint == "" || inv.Fingerprint == old {
		return nil
	}
	patch := map[string]any{"status": map[string]any{
		"maintenanceFingerprint": inv.Fingerprint,
		"discoveredDisks":        inv.Disks,
		"discoveredLinks":        inv.Links,
	}}
	var after TalosMachine
	if err := c.Kube.MergePatch(ctx, c.Kube.IchorPath("talosmachines", m.Metadata.Name)+"/status", patch, &after); err != nil {
		if IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("%s: status: %w", m.Metadata.Name, err)
	}
	shown := old
	if shown == "" {
		shown = "(none)"
	}
	c.logOnce(m.Metadata.Name, "refreshed: maintenance fingerprint "+shown+" -> "+inv.Fingerprint)
	return c.Kube.Create(ctx, Path("", "v1", c.Kube.Namespace, "events", ""), refreshEvent(&after, shown, inv.Fingerprint, c.now()), nil)
}

func (c *Controller) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func refreshEvent(m *TalosMachine, old, fp string, now time.Time) map[string]any {
	ts := now.UTC().Format(time.RFC3339)
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Event",
		"metadata": map[string]any{
			"name":      fmt.Sprintf("%s.%x", m.Metadata.Name, now.UnixNano()),
			"namespace": m.Metadata.Namespace,
		},
		"involvedObject": map[string]any{
			"apiVersion":      "ichor.maesh.dev/v1alpha1",
			"kind":            "TalosMachine",
			"name":            m.Metadata.Name,
			"namespace":       m.Metadata.Namespace,
			"uid":             m.Metadata.UID,
			"resourceVersion": m.Metadata.ResourceVersion,
		},
		"type":   "Normal",
		"reason": ReasonIdentityRefreshed,
		"message": fmt.Sprintf("maintenance certificate fingerprint changed from %s to %s (UUID, serial and MAC "+
			"addresses unchanged); status re-recorded by discovery", old, fp),
		"source":             map[string]any{"component": DiscoveryComponent},
		"reportingComponent": DiscoveryComponent,
		"reportingInstance":  DiscoveryComponent,
		"firstTimestamp":     ts,
		"lastTimestamp":      ts,
		"count":              1,
	}
}
