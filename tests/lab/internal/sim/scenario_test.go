package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseScenarioDefaults(t *testing.T) {
	sc, err := ParseScenario([]byte(`
clusters:
  - name: prod
nodes:
  - {name: prod-cp-1, address: 127.0.0.11, cluster: prod, role: controlplane}
  - {name: prod-w-1, address: 127.0.0.12, cluster: prod}
  - {name: fresh, address: 127.0.0.31, port: 50001}
`))
	if err != nil {
		t.Fatal(err)
	}

	c := sc.Clusters[0]
	if c.Contract != "1.13" || c.TalosVersion != "v1.13.9" || c.Endpoint != "https://127.0.0.11:6443" || c.Etcd != EtcdRunning || c.KubernetesVersion != "v1.34.4" {
		t.Errorf("cluster defaults: %+v", c)
	}

	cp, w, fresh := sc.Nodes[0], sc.Nodes[1], sc.Nodes[2]

	if cp.Mode != ModeConfigured || cp.Port != DefaultPort || cp.Hostname != "prod-cp-1" || cp.InstallDisk != "/dev/sda" ||
		cp.InstallImage != "ghcr.io/siderolabs/installer:v1.13.9" || !*cp.Installed || cp.Ichor != IchorNone {
		t.Errorf("node defaults: %+v", cp)
	}

	if w.Role != RoleWorker {
		t.Errorf("worker role default: %q", w.Role)
	}

	if fresh.Mode != ModeMaintenance || *fresh.Installed || fresh.Port != 50001 {
		t.Errorf("maintenance defaults: %+v", fresh)
	}

	// identities are derived from the name: stable across runs, distinct across nodes
	again, _ := ParseScenario([]byte("nodes:\n  - {name: fresh, address: 127.0.0.31}\n")) //nolint:errcheck
	if again.Nodes[0].Identity.UUID != fresh.Identity.UUID || again.Nodes[0].Identity.MACs[0] != fresh.Identity.MACs[0] {
		t.Error("identity is not deterministic")
	}

	if cp.Identity.UUID == w.Identity.UUID || cp.Identity.Serial == w.Identity.Serial || cp.Identity.MACs[0] == w.Identity.MACs[0] {
		t.Error("identities collide")
	}

	if !strings.HasPrefix(cp.Identity.MACs[0], "02:") {
		t.Errorf("MAC %s is not locally administered", cp.Identity.MACs[0])
	}

	if time.Duration(sc.RebootDelay) != 2*time.Second {
		t.Errorf("reboot delay %v", time.Duration(sc.RebootDelay))
	}
}

func TestParseScenarioErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"clusters:\n  - name: a\n    bogus: 1\n", "field bogus not found"},
		{"nodes:\n  - {name: a, address: 10.0.0.1}\n", "must be an IPv4 loopback address"},
		{"nodes:\n  - {name: a, address: 127.0.0.1}\n  - {name: a, address: 127.0.0.2}\n", "defined twice"},
		{"nodes:\n  - {name: a, address: 127.0.0.1}\n  - {name: b, address: 127.0.0.1}\n", "used twice"},
		{"nodes:\n  - {name: a, address: 127.0.0.1, cluster: nope}\n", `unknown cluster "nope"`},
		{"nodes:\n  - {name: a, address: 127.0.0.1, mode: configured}\n", "needs a cluster"},
		{"clusters:\n  - {name: a, contract: \"1.11\"}\n", "contract"},
		{"clusters:\n  - {name: a, etcd: sleepy}\n", "etcd"},
		{"clusters:\n  - {name: a}\nnodes:\n  - {name: w, address: 127.0.0.1, cluster: a, role: boss}\n", "role"},
		{"clusters:\n  - {name: a}\nnodes:\n  - {name: w, address: 127.0.0.1, cluster: a, ichor: maybe}\n", "ichor"},
		{"clusters:\n  - {name: a}\n", "endpoint is required"},
		{"clusters:\n  - {name: a, kubernetes: {nodes: true, bogus: 1}}\n", "field bogus not found"},
		{"clusters:\n  - {name: a, kubernetes: {cni: cilium}}\n", "kubernetes.cni"},
		{"clusters:\n  - {name: a, kubernetes: {crds: false}}\n  - {name: b, ichor: true}\n", "recorded in Ichor"},
		{"clusters:\n  - {name: a}\nnodes:\n  - {name: w, address: 127.0.0.1, cluster: a, kubeNode: ready}\n", "kubeNode needs a cluster with kubernetes.nodes"},
		{"clusters:\n  - {name: a, kubernetes: {nodes: false}}\nnodes:\n  - {name: w, address: 127.0.0.1, cluster: a, kubeNode: absent}\n", "kubeNode needs"},
		{"clusters:\n  - {name: a, kubernetes: {}}\nnodes:\n  - {name: w, address: 127.0.0.1, cluster: a, kubeNode: gone}\n", "kubeNode \"gone\""},
	} {
		if _, err := ParseScenario([]byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

func TestShippedScenarios(t *testing.T) {
	files, err := filepath.Glob("../../scenarios/*.yaml")
	if err != nil || len(files) < 3 {
		t.Fatalf("scenarios: %v %v", files, err)
	}

	for _, f := range files {
		if _, err := LoadScenario(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}

	sc, err := LoadScenario("../../scenarios/default.yaml")
	if err != nil {
		t.Fatal(err)
	}

	want := map[string]string{
		"prod-cp-1": "127.0.0.11 prod controlplane configured approved", "prod-w-1": "127.0.0.12 prod worker configured approved",
		"prod-w-2": "127.0.0.13 prod worker configured none", "prod-cp-2": "127.0.0.14 prod controlplane configured none", "lab-b-cp-1": "127.0.0.21 lab-b controlplane configured none",
		"maint-1": "127.0.0.31   maintenance none",
	}

	for _, n := range sc.Nodes {
		if got := strings.Join([]string{n.Address, n.Cluster, n.Role, n.Mode, n.Ichor}, " "); got != want[n.Name] {
			t.Errorf("%s: %q, want %q", n.Name, got, want[n.Name])
		}
	}

	if sc.Clusters[0].Name != "prod" || !sc.Clusters[0].Ichor || sc.Clusters[1].Name != "lab-b" || sc.Clusters[1].Ichor || sc.Clusters[1].Etcd != EtcdDown {
		t.Errorf("clusters: %+v", sc.Clusters)
	}
}

func TestBenchScenario(t *testing.T) {
	sc, err := BenchScenario(256)
	if err != nil {
		t.Fatal(err)
	}

	if cp := sc.Nodes[len(sc.Nodes)-1]; len(sc.Nodes) != 257 || cp.Address != BenchEndpoint || cp.Role != RoleControlPlane {
		t.Errorf("bench endpoint: %d nodes, last %+v", len(sc.Nodes), cp)
	}

	if sc.Nodes[0].Address != "127.0.1.1" || sc.Nodes[254].Address != "127.0.1.255" || sc.Nodes[255].Address != "127.0.2.1" {
		t.Errorf("bench addresses: %s %s %s", sc.Nodes[0].Address, sc.Nodes[254].Address, sc.Nodes[255].Address)
	}

	if _, err := BenchScenario(257); err == nil {
		t.Error("257 bench nodes accepted")
	}
}

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]uint64{"512": 512, "100GiB": 100 << 30, "1TiB": 1 << 40, "64 MiB": 64 << 20, "1GB": 1e9} {
		if got, err := ParseByteSize(in); err != nil || got != want {
			t.Errorf("%s: %d %v", in, got, err)
		}
	}

	if _, err := ParseByteSize("lots"); err == nil {
		t.Error("accepted lots")
	}
}

func TestStateFilesSurviveRestart(t *testing.T) {
	s := startSim(t, testScenario)
	info := s.Info()

	bundle, err := os.ReadFile(info.Clusters[0].SecretsBundle)
	if err != nil {
		t.Fatal(err)
	}

	if fi, _ := os.Stat(info.Clusters[0].SecretsBundle); fi.Mode().Perm() != 0o600 { //nolint:errcheck
		t.Errorf("secrets.yaml mode %v", fi.Mode().Perm())
	}

	if _, err := os.Stat(filepath.Join(stateDir, "sim.json")); err != nil {
		t.Errorf("sim.json: %v", err)
	}

	s.Close()

	if _, err := os.Stat(filepath.Join(stateDir, "sim.json")); !os.IsNotExist(err) {
		t.Errorf("sim.json after Close: %v", err)
	}

	s2 := startSim(t, testScenario)

	again, err := os.ReadFile(s2.Info().Clusters[0].SecretsBundle)
	if err != nil || string(again) != string(bundle) {
		t.Error("the bundle changed across a restart")
	}

	if s2.Info().Clusters[0].ClusterID != info.Clusters[0].ClusterID {
		t.Error("the cluster ID changed across a restart")
	}
}
