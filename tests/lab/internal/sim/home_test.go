package sim

import (
	"bytes"
	"context"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cosi-project/runtime/pkg/safe"
	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/client"
	clientconfig "github.com/siderolabs/talos/pkg/machinery/client/config"
	"github.com/siderolabs/talos/pkg/machinery/resources/cluster"
	"github.com/siderolabs/talos/pkg/machinery/resources/runtime"
)

// The home scenarios (tests/lab/scenarios/home*.yaml) brought up with Talos's client: the
// cluster of whole-cluster adoption and one variant per refusal. They run on 127.0.99.71-77
// instead of 127.0.0.51-57 (the addresses are rewritten), so that they do not meet a lab.

var homeNodes = []string{"home-cp-1", "home-cp-2", "home-cp-3", "home-w-1", "home-w-2", "home-w-3"}

// homeBundle is home's secrets bundle, made once and copied into each state folder.
var homeBundle []byte

type homeLab struct {
	t   *testing.T
	s   *Sim
	dir string
}

// loadHome reads a scenario file with its 127.0.0.5x addresses moved to 127.0.99.7x.
func loadHome(t *testing.T, file string) *Scenario {
	t.Helper()

	data, err := os.ReadFile(filepath.Join("../../scenarios", file))
	if err != nil {
		t.Fatal(err)
	}

	data = bytes.ReplaceAll(data, []byte("127.0.0.5"), []byte("127.0.99.7"))

	sc, err := ParseScenario(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}

	return sc
}

func startHome(t *testing.T, file string) *homeLab {
	t.Helper()

	sc := loadHome(t, file)
	dir := t.TempDir()

	if homeBundle != nil {
		if err := os.MkdirAll(filepath.Join(dir, "clusters", "home"), 0o755); err != nil {
			t.Fatal(err)
		}

		if err := os.WriteFile(filepath.Join(dir, "clusters", "home", "secrets.yaml"), homeBundle, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	var logs bytes.Buffer

	s, err := New(Options{StateDir: dir, Scenario: sc, Logger: log.New(&logs, "", log.Lmicroseconds)})
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}

	if err := s.Start(); err != nil {
		t.Fatalf("%s: start: %v", file, err)
	}

	t.Cleanup(func() {
		s.Close()

		if t.Failed() {
			t.Logf("%s simulator log:\n%s", file, logs.String())
		}
	})

	if homeBundle == nil {
		if homeBundle, err = os.ReadFile(filepath.Join(dir, "clusters", "home", "secrets.yaml")); err != nil {
			t.Fatal(err)
		}
	}

	return &homeLab{t: t, s: s, dir: dir}
}

func (h *homeLab) client(node string) *client.Client {
	h.t.Helper()

	cfg, err := clientconfig.Open(filepath.Join(h.dir, "clusters", "home", "talosconfig"))
	if err != nil {
		h.t.Fatal(err)
	}

	c, err := client.New(context.Background(), client.WithConfig(cfg), client.WithEndpoints(h.s.nodeByName(node).Spec.Address))
	if err != nil {
		h.t.Fatal(err)
	}

	h.t.Cleanup(func() { c.Close() }) //nolint:errcheck

	return c
}

func (h *homeLab) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	h.t.Cleanup(cancel)

	return ctx
}

// members are the IDs of the discovery Members node lists.
func (h *homeLab) members(node string) []string {
	h.t.Helper()

	list, err := safe.StateListAll[*cluster.Member](h.ctx(), h.client(node).COSI)
	if err != nil {
		h.t.Fatalf("List Members on %s: %v", node, err)
	}

	var ids []string

	for m := range list.All() {
		ids = append(ids, m.Metadata().ID())
	}

	return ids
}

func (h *homeLab) clusterID(node string) string {
	h.t.Helper()

	info, err := safe.StateGetByID[*cluster.Info](h.ctx(), h.client(node).COSI, cluster.InfoID)
	if err != nil {
		h.t.Fatalf("Get Infos on %s: %v", node, err)
	}

	return info.TypedSpec().ClusterID
}

func (h *homeLab) version(node string) string {
	h.t.Helper()

	v, err := safe.StateGetByID[*runtime.Version](h.ctx(), h.client(node).COSI, "version")
	if err != nil {
		h.t.Fatalf("Get Versions on %s: %v", node, err)
	}

	return v.TypedSpec().Version
}

func (h *homeLab) etcdMembers(node string) (int, error) {
	resp, err := h.client(node).EtcdMemberList(h.ctx(), &machine.EtcdMemberListRequest{})
	if err != nil {
		return 0, err
	}

	return len(resp.GetMessages()[0].GetMembers()), nil
}

// docs is the node's running configuration, decoded.
func (h *homeLab) docs(node string) []map[string]any {
	h.t.Helper()

	h.s.mu.Lock()
	cfg := h.s.nodeByName(node).config
	h.s.mu.Unlock()

	docs, err := decodeDocs(cfg)
	if err != nil {
		h.t.Fatal(err)
	}

	return docs
}

// v1 is the v1alpha1 document of the node's configuration.
func (h *homeLab) v1(node string) map[string]any {
	for _, d := range h.docs(node) {
		if str(d, "version") == "v1alpha1" && str(d, "kind") == "" {
			return d
		}
	}

	h.t.Fatalf("%s: no v1alpha1 document", node)

	return nil
}

func (h *homeLab) hasKind(node, kind string) bool {
	for _, d := range h.docs(node) {
		if str(d, "kind") == kind {
			return true
		}
	}

	return false
}

func isCP(node string) bool { return strings.HasPrefix(node, "home-cp-") }

func TestHomeScenario(t *testing.T) {
	h := startHome(t, "home.yaml")

	if got := strings.Join(h.members("home-cp-1"), ","); got != strings.Join(homeNodes, ",") {
		t.Errorf("members on home-cp-1 = %s", got)
	}

	if got := strings.Join(h.members("home-w-3"), ","); got != strings.Join(homeNodes, ",") {
		t.Errorf("members on home-w-3 = %s", got)
	}

	if n, err := h.etcdMembers("home-cp-1"); err != nil || n != 3 {
		t.Errorf("etcd members = %d, %v", n, err)
	}

	id := h.clusterID("home-cp-1")

	for _, node := range homeNodes {
		if got := h.clusterID(node); got != id || got == "" {
			t.Errorf("%s: cluster ID %q, home-cp-1 has %q", node, got, id)
		}

		if got := h.version(node); got != "v1.13.9" {
			t.Errorf("%s: version %s", node, got)
		}

		d := h.v1(node)

		if got := str(d, "machine", "sysctls", "vm.max_map_count"); got != "262144" {
			t.Errorf("%s: sysctl vm.max_map_count = %q", node, got)
		}

		modules := list(d, "machine", "kernel", "modules")
		if hasModule := len(modules) == 1 && str(modules[0].(map[string]any), "name") == "nvme_tcp"; hasModule == isCP(node) {
			t.Errorf("%s: kernel modules %v", node, modules)
		}

		sans := list(d, "machine", "certSANs")
		if hasSANs := slices.Equal(sans, []any{"home-api.lab.example", "192.168.10.10"}); hasSANs != isCP(node) {
			t.Errorf("%s: certSANs %v", node, sans)
		}

		if mirror := h.hasKind(node, "RegistryMirrorConfig"); mirror != (node == "home-w-3") {
			t.Errorf("%s: RegistryMirrorConfig %v", node, mirror)
		}

		// Talos's defaults: flannel (no cni section) and discovery through the service registry
		if str(d, "cluster", "network", "cni", "name") != "" || str(d, "cluster", "discovery", "enabled") != "true" {
			t.Errorf("%s: cni %q, discovery %q", node, str(d, "cluster", "network", "cni", "name"), str(d, "cluster", "discovery", "enabled"))
		}
	}

	info := h.s.Info()
	if k := info.Clusters[0].Kubernetes; k == nil || !*k.Nodes || !*k.CRDs || k.CNI != CNIFlannel || info.Clusters[0].Ichor {
		t.Errorf("cluster in sim.json: %+v", info.Clusters[0])
	}

	for _, n := range info.Nodes {
		if n.KubeNode != KubeNodeReady {
			t.Errorf("%s: kubeNode %q", n.Name, n.KubeNode)
		}
	}
}

// TestHomeVariants: every home-*.yaml is home.yaml plus its one change (its header says which),
// and brought up, shows that change to Talos's client.
func TestHomeVariants(t *testing.T) {
	base := loadHome(t, "home.yaml")

	checks := map[string]func(t *testing.T, h *homeLab){
		"home-twoids.yaml": func(t *testing.T, h *homeLab) {
			a, b := h.clusterID("home-cp-1"), h.clusterID("home-w-3")
			if a == b || h.clusterID("home-w-1") != a || h.clusterID("home-w-2") != b {
				t.Errorf("cluster IDs: cp-1 %s, w-1 %s, w-2 %s, w-3 %s", a, h.clusterID("home-w-1"), h.clusterID("home-w-2"), b)
			}
			// discovery is per cluster ID: two groups
			if got := strings.Join(h.members("home-cp-1"), ","); got != "home-cp-1,home-cp-2,home-cp-3,home-w-1" {
				t.Errorf("members on home-cp-1 = %s", got)
			}
		},
		"home-twoversions.yaml": func(t *testing.T, h *homeLab) {
			if h.version("home-w-1") != "v1.13.8" || h.version("home-w-2") != "v1.13.9" {
				t.Errorf("versions %s %s", h.version("home-w-1"), h.version("home-w-2"))
			}
		},
		"home-old.yaml": func(t *testing.T, h *homeLab) {
			for _, n := range homeNodes {
				if v := h.version(n); v != "v1.11.6" {
					t.Errorf("%s: version %s", n, v)
				}
			}
		},
		"home-etcd-extra.yaml": func(t *testing.T, h *homeLab) {
			if n, err := h.etcdMembers("home-cp-1"); err != nil || n != 4 {
				t.Errorf("etcd members = %d, %v", n, err)
			}
			if m := h.members("home-cp-1"); len(m) != 0 {
				t.Errorf("members with discovery off: %v", m)
			}
		},
		"home-etcd-down.yaml": func(t *testing.T, h *homeLab) {
			if n, err := h.etcdMembers("home-cp-1"); err != nil || n != 3 {
				t.Errorf("etcd members = %d, %v", n, err)
			}
			if _, err := h.client("home-cp-3").EtcdStatus(h.ctx()); err == nil {
				t.Errorf("EtcdStatus on home-cp-3 answered")
			}
		},
		"home-noquorum.yaml": func(t *testing.T, h *homeLab) {
			if _, err := h.etcdMembers("home-cp-1"); err == nil || !strings.Contains(err.Error(), "etcdserver: no leader") {
				t.Errorf("EtcdMemberList without quorum: %v", err)
			}
		},
		"home-nonode.yaml": func(t *testing.T, h *homeLab) {
			for _, n := range h.s.Info().Nodes {
				if want := map[bool]string{true: KubeNodeAbsent, false: KubeNodeReady}[n.Name == "home-w-2"]; n.KubeNode != want {
					t.Errorf("%s: kubeNode %q", n.Name, n.KubeNode)
				}
			}
		},
		"home-notready.yaml": func(t *testing.T, h *homeLab) {
			for _, n := range h.s.Info().Nodes {
				if want := map[bool]string{true: KubeNodeNotReady, false: KubeNodeReady}[n.Name == "home-w-1"]; n.KubeNode != want {
					t.Errorf("%s: kubeNode %q", n.Name, n.KubeNode)
				}
			}
		},
		"home-nocrds.yaml": func(t *testing.T, h *homeLab) {
			if k := h.s.Info().Clusters[0].Kubernetes; *k.CRDs || !*k.Nodes {
				t.Errorf("kubernetes %+v", k)
			}
		},
		"home-carotation.yaml": func(t *testing.T, h *homeLab) {
			for _, n := range homeNodes {
				h.s.mu.Lock()
				accepted := len(h.s.nodeByName(n).facts.AcceptedCAs)
				h.s.mu.Unlock()
				if accepted != 1 {
					t.Errorf("%s: %d accepted CAs", n, accepted)
				}
			}
			_ = h.version("home-w-1") // the cluster's own talosconfig still reads the nodes
		},
		"home-classc-worker.yaml": func(t *testing.T, h *homeLab) {
			for _, n := range homeNodes {
				if got := acceptedKubernetesCAs(h.v1(n)); (got == 1) != (n == "home-w-2") {
					t.Errorf("%s: %d extra accepted Kubernetes CAs", n, got)
				}
			}
		},
		"home-classc-cp.yaml": func(t *testing.T, h *homeLab) {
			for _, n := range homeNodes {
				if got := acceptedKubernetesCAs(h.v1(n)); (got == 1) != (n == "home-cp-2") {
					t.Errorf("%s: %d extra accepted Kubernetes CAs", n, got)
				}
			}
		},
		"home-staged.yaml": func(t *testing.T, h *homeLab) {
			for _, n := range homeNodes {
				h.s.mu.Lock()
				st := h.s.nodeByName(n).stateLocked()
				h.s.mu.Unlock()
				if st.Staged != (n == "home-w-2") {
					t.Errorf("%s: staged %v", n, st.Staged)
				}
			}
		},
		"home-members.yaml": func(t *testing.T, h *homeLab) {
			if got := strings.Join(h.members("home-cp-1"), ","); got != "home-cp-1,home-cp-2,home-cp-3,home-w-1,home-w-2,home-w-4" {
				t.Errorf("members on home-cp-1 = %s", got)
			}
		},
	}

	files, err := filepath.Glob("../../scenarios/home-*.yaml")
	if err != nil {
		t.Fatal(err)
	}

	if len(files) != len(checks) {
		t.Errorf("%d home-*.yaml files, %d checks", len(files), len(checks))
	}

	for _, f := range files {
		name := filepath.Base(f)

		t.Run(name, func(t *testing.T) {
			check := checks[name]
			if check == nil {
				t.Fatalf("no check for %s", name)
			}

			sc := loadHome(t, name)
			sameAsHome(t, base, sc)
			check(t, startHome(t, name))
		})
	}
}

// sameAsHome: the variant has home.yaml's six nodes (address, role) and cluster, and each
// patch list starts with home.yaml's.
func sameAsHome(t *testing.T, base, sc *Scenario) {
	t.Helper()

	if len(sc.Clusters) != 1 || sc.Clusters[0].Name != "home" || sc.Clusters[0].Ichor {
		t.Fatalf("clusters %+v", sc.Clusters)
	}

	if !prefix(base.Clusters[0].Patches, sc.Clusters[0].Patches) {
		t.Errorf("cluster patches differ from home.yaml's")
	}

	for i, bn := range base.Nodes {
		if i >= len(sc.Nodes) {
			t.Fatalf("node %s missing", bn.Name)
		}

		n := sc.Nodes[i]
		if n.Name != bn.Name || n.Address != bn.Address || n.Role != bn.Role {
			t.Errorf("node %d: %s %s %s, home.yaml has %s %s %s", i, n.Name, n.Address, n.Role, bn.Name, bn.Address, bn.Role)
		}

		if !prefix(bn.Patches, n.Patches) {
			t.Errorf("%s: patches differ from home.yaml's", n.Name)
		}
	}
}

func prefix(base, got []string) bool {
	if len(got) < len(base) {
		return false
	}

	for i := range base {
		if strings.TrimSpace(base[i]) != strings.TrimSpace(got[i]) {
			return false
		}
	}

	return true
}

// acceptedKubernetesCAs counts cluster.acceptedCAs of a v1alpha1 document.
func acceptedKubernetesCAs(v1 map[string]any) int {
	cluster, _ := v1["cluster"].(map[string]any)
	cas, _ := cluster["acceptedCAs"].([]any)

	return len(cas)
}
