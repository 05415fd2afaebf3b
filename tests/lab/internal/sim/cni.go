package sim

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The node's /etc/cni/net.d (ADR 0128 E7; reference/cni.md §1.4; docs/lab.md, "CNI files and Node
// readiness"): the CNI configuration files a CNI's DaemonSet writes there, which containerd reads
// to report the network ready. Where they live decides whether they outlive a reboot: Talos 1.13
// and earlier keep /etc/cni as an overlay on EPHEMERAL, so a file survives a reboot (flannel's
// 10-flannel.conflist after flannel was removed); 1.14 mounts a fresh tmpfs at every boot. A wipe
// of EPHEMERAL removes them on any version. The sim only keeps the list: lab-controller writes a
// running CNI DaemonSet's file (POST /nodes/{name}/cni) and derives the Node's readiness from it.

// The files each scenario CNI has written before the scenario starts.
var scenarioCNIConfs = map[string][]string{
	CNIFlannel:      {"10-flannel.conflist"},
	CNICiliumInline: {"05-cilium.conflist"},
	CNICiliumHelm:   {"05-cilium.conflist"},
	CNICalico:       {"10-calico.conflist"},
	CNINone:         nil,
}

// cniOnTmpfs: Talos 1.14 and later mount a tmpfs on /etc/cni at every boot.
func cniOnTmpfs(talosVersion string) bool {
	major, minor, ok := versionMinor(talosVersion)

	return ok && (major > 1 || (major == 1 && minor >= 14))
}

// versionMinor reads "v1.13.9" as 1, 13.
func versionMinor(v string) (int, int, bool) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}

	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])

	return major, minor, err1 == nil && err2 == nil
}

// initialCNIConfsLocked: what the scenario's CNI left in /etc/cni/net.d of a configured node of a
// cluster whose Kubernetes API the lab stands in for.
func (n *Node) initialCNIConfsLocked(c *Cluster) {
	if c == nil || c.Spec.Kubernetes == nil || n.mode != ModeConfigured {
		return
	}

	n.cniConfs = slices.Clone(scenarioCNIConfs[c.Spec.Kubernetes.CNI])
}

// bootCNIConfsLocked runs at each boot after the first: on a tmpfs /etc/cni nothing survives.
func (n *Node) bootCNIConfsLocked() {
	if n.bootCount > 1 && cniOnTmpfs(n.Spec.TalosVersion) {
		n.cniConfs = nil
	}
}

type cniRequest struct {
	// Write: the file a CNI's pod writes (05-cilium.conflist, 10-flannel.conflist).
	Write string `json:"write"`
	// Exclusive: rename every other configuration to NAME.cilium_bak, as Cilium's cni.exclusive
	// (default true) does once its agent runs (reference/cni.md §1.4).
	Exclusive bool `json:"exclusive,omitempty"`
	// Remove: the files removed (by hand, or a pod that cleans up).
	Remove []string `json:"remove,omitempty"`
}

// handleCNI writes or removes CNI configuration files of a node that is up.
func (s *Sim) handleCNI(w http.ResponseWriter, r *http.Request, n *Node) {
	var req cniRequest

	if err := decodeBody(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)

		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	if n.power != powerUp || n.mode != ModeConfigured {
		writeError(w, http.StatusConflict, fmt.Errorf("node %s is not up and configured", n.Spec.Name))

		return
	}

	n.cniConfs = slices.DeleteFunc(n.cniConfs, func(f string) bool { return slices.Contains(req.Remove, f) })

	if req.Write != "" {
		if req.Exclusive {
			for i, f := range n.cniConfs {
				if f != req.Write && !strings.HasSuffix(f, ".cilium_bak") {
					n.cniConfs[i] = f + ".cilium_bak"
				}
			}
		}

		if !slices.Contains(n.cniConfs, req.Write) {
			n.cniConfs = append(n.cniConfs, req.Write)
			slices.Sort(n.cniConfs)
		}
	}

	writeJSON(w, http.StatusOK, n.stateLocked())
}

// NetworkReady is what containerd's CNI status reports: a configuration file is loaded (a
// *.cilium_bak file is not one).
func NetworkReady(confs []string) bool {
	for _, f := range confs {
		if strings.HasSuffix(f, ".conf") || strings.HasSuffix(f, ".conflist") || strings.HasSuffix(f, ".json") {
			return true
		}
	}

	return false
}
