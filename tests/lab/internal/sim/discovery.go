package sim

import (
	"crypto/sha256"
	"net/netip"
	"sort"

	configmachine "github.com/siderolabs/talos/pkg/machinery/config/machine"
	"github.com/siderolabs/talos/pkg/machinery/resources/cluster"
)

// Talos discovery (reference/cni.md §5.1): a node whose configuration enables discovery lists, as
// Members.cluster.talos.dev in namespace "cluster", every node that shares its cluster ID and also
// has discovery on, itself included. The lab has no discovery service: the members are computed
// from the simulated nodes, as the service registry would hand them out.
//
// A member is a node whose configuration is still there (mode configured), whatever its power:
// the service registry keeps an affiliate for 30 minutes after its node went silent. A node reset
// into maintenance loses its configuration and with it its membership. The ID is the node's
// Kubernetes node name (its hostname), as Talos's MemberController names members.

// discoveryOnLocked reports whether a configuration turns discovery on with at least one
// registry, caching the answer per configuration (a List of Members reads every node's).
func (s *Sim) discoveryOnLocked(config []byte) bool {
	if config == nil {
		return false
	}

	key := sha256.Sum256(config)
	if v, ok := s.discovery[key]; ok {
		return v
	}

	v := discoveryEnabled(config)

	if s.discovery == nil {
		s.discovery = map[[32]byte]bool{}
	}

	s.discovery[key] = v

	return v
}

// discoveryEnabled reads cluster.discovery of the v1alpha1 document (enabled, and not both
// registries disabled), or a DiscoveryServiceConfig document (the v1.14 layout).
func discoveryEnabled(config []byte) bool {
	docs, err := decodeDocs(config)
	if err != nil {
		return false
	}

	for _, d := range docs {
		if str(d, "kind") == "DiscoveryServiceConfig" {
			return true
		}
	}

	for _, d := range docs {
		if str(d, "version") != "v1alpha1" || str(d, "kind") != "" {
			continue
		}

		if str(d, "cluster", "discovery", "enabled") != "true" {
			return false
		}

		service := str(d, "cluster", "discovery", "registries", "service", "disabled") != "true"
		kube := str(d, "cluster", "discovery", "registries", "kubernetes", "disabled") != "true"

		return service || kube
	}

	return false
}

// membersLocked are the Members node n lists (none when its own discovery is off).
func (n *Node) membersLocked() []*cluster.Member {
	s := n.sim

	if n.mode != ModeConfigured || n.facts == nil || n.facts.ClusterID == "" || !s.discoveryOnLocked(n.config) {
		return nil
	}

	var out []*cluster.Member

	for _, m := range s.nodes {
		if m.mode != ModeConfigured || m.facts == nil || m.facts.ClusterID != n.facts.ClusterID {
			continue
		}

		if !s.discoveryOnLocked(m.config) {
			continue
		}

		mem := cluster.NewMember(cluster.NamespaceName, m.hostname())
		spec := mem.TypedSpec()
		spec.NodeID = m.nodeID
		spec.Hostname = m.hostname()
		spec.OperatingSystem = "Talos (" + m.Spec.TalosVersion + ")"

		if addr, err := netip.ParseAddr(m.Spec.Address); err == nil {
			spec.Addresses = []netip.Addr{addr}
		}

		switch m.facts.MachineType {
		case "controlplane":
			spec.MachineType = configmachine.TypeControlPlane
			spec.ControlPlane = &cluster.ControlPlane{APIServerPort: 6443}
		case "init":
			spec.MachineType = configmachine.TypeInit
			spec.ControlPlane = &cluster.ControlPlane{APIServerPort: 6443}
		default:
			spec.MachineType = configmachine.TypeWorker
		}

		out = append(out, mem)
	}

	sort.Slice(out, func(i, j int) bool { return out[i].Metadata().ID() < out[j].Metadata().ID() })

	return out
}
