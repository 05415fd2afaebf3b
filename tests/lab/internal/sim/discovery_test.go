package sim

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cosi-project/runtime/pkg/safe"
	configmachine "github.com/siderolabs/talos/pkg/machinery/config/machine"
	"github.com/siderolabs/talos/pkg/machinery/resources/cluster"
)

// discoveryScenario: d1 with discovery on everywhere but d1-w2, and d2, another cluster, on
// 127.0.99.61-64.
const discoveryScenario = `
rebootDelay: 200ms
clusters:
  - name: d1
  - name: d2
nodes:
  - {name: d1-cp, address: 127.0.99.61, cluster: d1, role: controlplane}
  - {name: d1-w1, address: 127.0.99.62, cluster: d1, role: worker, hostname: d1-worker-1}
  - name: d1-w2
    address: 127.0.99.63
    cluster: d1
    patches: ["cluster:\n  discovery:\n    enabled: false\n"]
  - {name: d2-cp, address: 127.0.99.64, cluster: d2, role: controlplane}
`

// memberIDs lists Members.cluster.talos.dev on a node with Talos's client and types.
func memberIDs(t *testing.T, cl, file, endpoint string) (ids []string, byID map[string]*cluster.Member) {
	t.Helper()

	c := talosClient(t, cl, file, endpoint)

	list, err := safe.StateListAll[*cluster.Member](callCtx(t), c.COSI)
	if err != nil {
		t.Fatalf("List Members on %s: %v", endpoint, err)
	}

	byID = map[string]*cluster.Member{}

	for m := range list.All() {
		ids = append(ids, m.Metadata().ID())
		byID[m.Metadata().ID()] = m
	}

	return ids, byID
}

func TestDiscoveryMembers(t *testing.T) {
	s := startSim(t, discoveryScenario)

	ids, members := memberIDs(t, "d1", "talosconfig-reader", "127.0.99.61")
	if got := strings.Join(ids, ","); got != "d1-cp,d1-worker-1" {
		t.Fatalf("members on d1-cp = %s, want d1-cp,d1-worker-1 (d1-w2 has discovery off, d2-cp is another cluster)", got)
	}

	cp, w := members["d1-cp"].TypedSpec(), members["d1-worker-1"].TypedSpec()

	if cp.NodeID != nodeState(t, s, "d1-cp").NodeID || w.NodeID != nodeState(t, s, "d1-w1").NodeID || cp.NodeID == w.NodeID {
		t.Errorf("node IDs: cp %q, w %q", cp.NodeID, w.NodeID)
	}

	if cp.MachineType != configmachine.TypeControlPlane || cp.ControlPlane == nil || cp.ControlPlane.APIServerPort != 6443 {
		t.Errorf("cp: %+v", cp)
	}

	if w.MachineType != configmachine.TypeWorker || w.ControlPlane != nil || w.Hostname != "d1-worker-1" {
		t.Errorf("worker: %+v", w)
	}

	if len(w.Addresses) != 1 || w.Addresses[0].String() != "127.0.99.62" || w.OperatingSystem != "Talos (v1.13.9)" {
		t.Errorf("worker addresses %v, os %q", w.Addresses, w.OperatingSystem)
	}

	// a worker lists the same members; a node with discovery off lists none
	if ids, _ := memberIDs(t, "d1", "talosconfig", "127.0.99.62"); strings.Join(ids, ",") != "d1-cp,d1-worker-1" {
		t.Errorf("members on d1-w1 = %v", ids)
	}

	if ids, _ := memberIDs(t, "d1", "talosconfig", "127.0.99.63"); len(ids) != 0 {
		t.Errorf("members on d1-w2 (discovery off) = %v", ids)
	}

	if ids, _ := memberIDs(t, "d2", "talosconfig", "127.0.99.64"); strings.Join(ids, ",") != "d2-cp" {
		t.Errorf("members on d2-cp = %v", ids)
	}

	// a powered-off member stays (the registry keeps it for its TTL); one reset into
	// maintenance has no configuration and is gone
	if code := control(t, s, http.MethodPost, "/nodes/d1-w1/mode", `{"mode":"off"}`, nil); code != http.StatusOK {
		t.Fatalf("mode off: %d", code)
	}

	if ids, _ := memberIDs(t, "d1", "talosconfig", "127.0.99.61"); strings.Join(ids, ",") != "d1-cp,d1-worker-1" {
		t.Errorf("members with d1-w1 off = %v", ids)
	}

	if code := control(t, s, http.MethodPost, "/nodes/d1-w1/mode", `{"mode":"maintenance"}`, nil); code != http.StatusOK {
		t.Fatalf("mode maintenance: %d", code)
	}

	waitFor(t, 5*time.Second, "d1-w1 out of the members", func() bool {
		ids, _ := memberIDs(t, "d1", "talosconfig", "127.0.99.61")

		return strings.Join(ids, ",") == "d1-cp"
	})
}
