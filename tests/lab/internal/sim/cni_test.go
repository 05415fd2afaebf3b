package sim

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/api/machine"
)

// Flannel's CNI file by Talos version (reference/cni.md §1.4): it survives a reboot on 1.13 (an
// overlay on EPHEMERAL), not on 1.14 (a tmpfs at every boot); a wipe of EPHEMERAL removes it.
const cniScenario = `
rebootDelay: 100ms
clusters:
  - name: c13
    contract: "1.13"
    talosVersion: v1.13.9
    kubernetes: {cni: flannel}
  - name: c14
    contract: "1.13"
    talosVersion: v1.14.0
    kubernetes: {cni: flannel}
  - name: cnone
    contract: "1.13"
    kubernetes: {cni: none}
nodes:
  - {name: c13-cp, address: 127.0.99.41, cluster: c13, role: controlplane}
  - {name: c14-cp, address: 127.0.99.42, cluster: c14, role: controlplane}
  - {name: cnone-cp, address: 127.0.99.43, cluster: cnone, role: controlplane}
`

func TestCNIFileAcrossReboots(t *testing.T) {
	s := startSim(t, cniScenario)

	for name, want := range map[string][]string{"c13-cp": {"10-flannel.conflist"}, "c14-cp": {"10-flannel.conflist"}, "cnone-cp": nil} {
		st := nodeState(t, s, name)
		if !slices.Equal(st.CNIConfs, want) || st.NetworkReady != (want != nil) {
			t.Errorf("%s at start: %v ready %v, want %v", name, st.CNIConfs, st.NetworkReady, want)
		}
	}

	reboot := func(cluster, name, addr string) {
		t.Helper()

		before := nodeState(t, s, name).BootCount
		c := talosClient(t, cluster, "talosconfig", addr)

		if _, err := c.MachineClient.Reboot(context.Background(), &machine.RebootRequest{}); err != nil {
			t.Fatalf("%s: reboot: %v", name, err)
		}

		waitFor(t, 10*time.Second, name+" back up", func() bool {
			st := nodeState(t, s, name)

			return st.BootCount > before && st.Power == powerUp
		})
	}

	reboot("c13", "c13-cp", "127.0.99.41")
	reboot("c14", "c14-cp", "127.0.99.42")

	if st := nodeState(t, s, "c13-cp"); !slices.Equal(st.CNIConfs, []string{"10-flannel.conflist"}) || !st.NetworkReady {
		t.Errorf("Talos 1.13 after a reboot: %v ready %v, want the file kept (EPHEMERAL)", st.CNIConfs, st.NetworkReady)
	}

	if st := nodeState(t, s, "c14-cp"); len(st.CNIConfs) != 0 || st.NetworkReady {
		t.Errorf("Talos 1.14 after a reboot: %v ready %v, want none (tmpfs)", st.CNIConfs, st.NetworkReady)
	}

	// Cilium's agent writes its file and moves the others aside (cni.exclusive).
	var st NodeState
	if code := control(t, s, http.MethodPost, "/nodes/c13-cp/cni", `{"write": "05-cilium.conflist", "exclusive": true}`, &st); code != http.StatusOK {
		t.Fatalf("POST cni: %d", code)
	}

	if want := []string{"05-cilium.conflist", "10-flannel.conflist.cilium_bak"}; !slices.Equal(st.CNIConfs, want) || !st.NetworkReady {
		t.Errorf("after Cilium: %v ready %v, want %v", st.CNIConfs, st.NetworkReady, want)
	}

	if code := control(t, s, http.MethodPost, "/nodes/c13-cp/cni", `{"remove": ["05-cilium.conflist"]}`, &st); code != http.StatusOK || st.NetworkReady {
		t.Errorf("only a .cilium_bak left: code %d, %v ready %v, want not ready", code, st.CNIConfs, st.NetworkReady)
	}

	if code := control(t, s, http.MethodPost, "/nodes/c13-cp/cni", `{"write": "x.conf", "bogus": 1}`, nil); code != http.StatusBadRequest {
		t.Errorf("an unknown field: %d, want 400", code)
	}
}

func TestCNIFileWipedWithEphemeral(t *testing.T) {
	n := &Node{cniConfs: []string{"10-flannel.conflist"}}
	n.applyWipeLocked([]string{"EPHEMERAL"}, false)

	if len(n.cniConfs) != 0 {
		t.Errorf("after an EPHEMERAL wipe: %v", n.cniConfs)
	}
}
