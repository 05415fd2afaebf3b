package sim

import (
	"bytes"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The realistic scenarios (tests/lab/scenarios/real-*.yaml, docs/lab.md "The realistic
// scenarios", issue 26 "The lab"): each loads, every node's configuration loads with Talos's
// configloader and passes Talos's validation as an installed metal node's would (a node rejects
// what does not), and together they set every setting of the list. They run on
// 127.0.98.x instead of 127.0.26.x (the addresses are rewritten), so that they do not meet a lab.

// realScenarios are the family, with the cluster each holds.
var realScenarios = map[string]string{
	"real-legacy.yaml":      "birch",
	"real-netdocs.yaml":     "cedar",
	"real-docs14.yaml":      "larch",
	"real-handwritten.yaml": "maple",
	"real-credentials.yaml": "rowan",
}

// realSetting is one setting of the list: the scenario that sets it and a check on one
// node's decoded configuration.
type realSetting struct {
	name, scenario, node string
	has                  func(docs []map[string]any) bool
}

func kind(k string, pred func(d map[string]any) bool) func([]map[string]any) bool {
	return func(docs []map[string]any) bool {
		for _, d := range docs {
			if str(d, "kind") == k && (pred == nil || pred(d)) {
				return true
			}
		}

		return false
	}
}

func v1path(path ...string) func([]map[string]any) bool {
	return func(docs []map[string]any) bool {
		for _, d := range docs {
			if str(d, "version") == "v1alpha1" && str(d, "kind") == "" {
				v := lookup(d, path...)
				if v == nil {
					return false
				}

				switch x := v.(type) {
				case []any:
					return len(x) > 0
				case map[string]any:
					return len(x) > 0
				case bool:
					return x
				default:
					return true
				}
			}
		}

		return false
	}
}

func has(key string) func(d map[string]any) bool {
	return func(d map[string]any) bool { return lookup(d, strings.Split(key, ".")...) != nil }
}

func named(n string) func(d map[string]any) bool {
	return func(d map[string]any) bool { return str(d, "name") == n }
}

var realSettings = []realSetting{
	{"bond", "real-netdocs.yaml", "cedar-cp-1", kind("BondConfig", nil)},
	{"VLAN", "real-netdocs.yaml", "cedar-w-1", kind("VLANConfig", nil)},
	{"link alias", "real-netdocs.yaml", "cedar-cp-2", kind("LinkAliasConfig", nil)},
	{"DHCP", "real-netdocs.yaml", "cedar-w-2", kind("DHCPv4Config", nil)},
	{"static addresses (document)", "real-netdocs.yaml", "cedar-cp-1", kind("VLANConfig", has("addresses"))},
	{"static routes (document)", "real-netdocs.yaml", "cedar-cp-1", kind("VLANConfig", has("routes"))},
	{"static addresses on a link", "real-netdocs.yaml", "cedar-w-1", kind("LinkConfig", has("addresses"))},
	{"Layer2 VIP on the control planes", "real-netdocs.yaml", "cedar-cp-3", kind("Layer2VIPConfig", nil)},
	{"v1alpha1 interfaces with a VIP", "real-legacy.yaml", "birch-cp-2", v1path("machine", "network", "interfaces")},
	{"v1alpha1 static routes", "real-legacy.yaml", "birch-w-1", v1path("machine", "network", "interfaces")},
	{"hostname per node (document)", "real-netdocs.yaml", "cedar-w-1", kind("HostnameConfig", has("hostname"))},
	{"hostname per node (v1alpha1)", "real-legacy.yaml", "birch-cp-1", v1path("machine", "network", "hostname")},
	{"resolvers (document)", "real-netdocs.yaml", "cedar-cp-1", kind("ResolverConfig", has("nameservers"))},
	{"resolvers (v1alpha1)", "real-legacy.yaml", "birch-cp-1", v1path("machine", "network", "nameservers")},
	{"time servers (document)", "real-netdocs.yaml", "cedar-cp-1", kind("TimeSyncConfig", nil)},
	{"time servers (v1alpha1)", "real-legacy.yaml", "birch-w-2", v1path("machine", "time", "servers")},
	{"ethernet settings", "real-netdocs.yaml", "cedar-w-1", kind("EthernetConfig", nil)},
	{"kubelet extraArgs", "real-legacy.yaml", "birch-w-1", v1path("machine", "kubelet", "extraArgs")},
	{"kubelet extraConfig", "real-legacy.yaml", "birch-cp-1", v1path("machine", "kubelet", "extraConfig")},
	{"kubelet extraMounts", "real-legacy.yaml", "birch-w-1", v1path("machine", "kubelet", "extraMounts")},
	{"kubelet nodeIP subnets", "real-legacy.yaml", "birch-cp-3", v1path("machine", "kubelet", "nodeIP", "validSubnets")},
	{"node labels", "real-legacy.yaml", "birch-w-1", v1path("machine", "nodeLabels", "topology.kubernetes.io/zone")},
	{"node annotations", "real-netdocs.yaml", "cedar-w-2", v1path("machine", "nodeAnnotations")},
	{"node taints", "real-netdocs.yaml", "cedar-w-2", v1path("machine", "nodeTaints")},
	{"machine.files", "real-legacy.yaml", "birch-w-2", v1path("machine", "files")},
	{"udev rules", "real-legacy.yaml", "birch-w-1", v1path("machine", "udev", "rules")},
	{"sysfs", "real-legacy.yaml", "birch-cp-1", v1path("machine", "sysfs")},
	{"Talos API access from Kubernetes", "real-legacy.yaml", "birch-cp-1", v1path("machine", "features", "kubernetesTalosAPIAccess", "enabled")},
	{"apiServer extraArgs", "real-legacy.yaml", "birch-cp-1", v1path("cluster", "apiServer", "extraArgs")},
	{"controllerManager extraArgs", "real-legacy.yaml", "birch-cp-2", v1path("cluster", "controllerManager", "extraArgs")},
	{"scheduler extraArgs", "real-legacy.yaml", "birch-cp-3", v1path("cluster", "scheduler", "extraArgs")},
	{"etcd extraArgs", "real-legacy.yaml", "birch-cp-1", v1path("cluster", "etcd", "extraArgs")},
	{"scheduler configuration", "real-netdocs.yaml", "cedar-cp-1", v1path("cluster", "scheduler", "config")},
	{"etcd advertised subnets", "real-netdocs.yaml", "cedar-cp-2", v1path("cluster", "etcd", "advertisedSubnets")},
	{"scheduling on control planes", "real-legacy.yaml", "birch-cp-1", v1path("cluster", "allowSchedulingOnControlPlanes")},
	{"CoreDNS disabled", "real-legacy.yaml", "birch-cp-1", v1path("cluster", "coreDNS", "disabled")},
	{"kube-proxy disabled under Cilium", "real-netdocs.yaml", "cedar-w-1", v1path("cluster", "proxy", "disabled")},
	{"user volume", "real-netdocs.yaml", "cedar-w-1", kind("UserVolumeConfig", nil)},
	{"raw volume", "real-netdocs.yaml", "cedar-w-2", kind("RawVolumeConfig", nil)},
	{"EPHEMERAL's VolumeConfig", "real-netdocs.yaml", "cedar-cp-1", kind("VolumeConfig", named("EPHEMERAL"))},
	{"swap", "real-netdocs.yaml", "cedar-w-1", kind("SwapVolumeConfig", nil)},
	{"zswap", "real-netdocs.yaml", "cedar-w-1", kind("ZswapConfig", nil)},
	{"watchdog", "real-legacy.yaml", "birch-cp-1", kind("WatchdogTimerConfig", nil)},
	{"disk encryption (v1alpha1)", "real-legacy.yaml", "birch-w-1", v1path("machine", "systemDiskEncryption")},
	{"disk encryption (document)", "real-netdocs.yaml", "cedar-cp-1", kind("VolumeConfig", has("encryption"))},
	{"image verification", "real-netdocs.yaml", "cedar-cp-1", kind("ImageVerificationConfig", nil)},
	{"network rules", "real-netdocs.yaml", "cedar-cp-1", kind("NetworkRuleConfig", nil)},
	{"network default action", "real-netdocs.yaml", "cedar-cp-1", kind("NetworkDefaultActionConfig", nil)},
	{"extra manifest", "real-legacy.yaml", "birch-cp-1", v1path("cluster", "extraManifests")},
	{"non-CNI inline manifest", "real-legacy.yaml", "birch-cp-1", v1path("cluster", "inlineManifests")},
	{"registry auth (document)", "real-credentials.yaml", "rowan-w-1", kind("RegistryAuthConfig", has("password"))},
	{"registry auth (v1alpha1)", "real-credentials.yaml", "rowan-cp-1", v1path("machine", "registries", "config")},
	{"WireGuard keys", "real-credentials.yaml", "rowan-cp-1", kind("WireguardConfig", has("privateKey"))},
	{"OIDC client secret", "real-credentials.yaml", "rowan-cp-1", v1path("cluster", "inlineManifests")},
	{"1.14 KubeletConfig", "real-docs14.yaml", "larch-w-1", kind("KubeletConfig", has("extraArgs"))},
	{"1.14 KubeAPIServerConfig", "real-docs14.yaml", "larch-cp-1", kind("KubeAPIServerConfig", has("extraArgs"))},
	{"1.14 KubeNetworkConfig", "real-docs14.yaml", "larch-cp-1", kind("KubeNetworkConfig", has("nodeCIDRMaskSizeIPv4"))},
	{"1.14 KubeNodeConfig labels", "real-docs14.yaml", "larch-w-1", kind("KubeNodeConfig", func(d map[string]any) bool {
		l, _ := lookup(d, "labels").(map[string]any) //nolint:errcheck

		return l["topology.kubernetes.io/zone"] != nil
	})},
	{"1.14 SysctlConfig", "real-docs14.yaml", "larch-w-1", kind("SysctlConfig", nil)},
	{"1.14 KernelModuleConfig", "real-docs14.yaml", "larch-w-1", kind("KernelModuleConfig", nil)},
	{"DHCP by a document that is only its name", "real-netdocs.yaml", "cedar-cp-1", kind("DHCPv4Config", func(d map[string]any) bool {
		return d["name"] == "eth3" && len(d) == 3
	})},
	{"host DNS in v1alpha1 beside a ResolverConfig document", "real-netdocs.yaml", "cedar-cp-2", v1path("machine", "features", "hostDNS", "resolveMemberNames")},
	{"1.14 without PodSecurity admission", "real-docs14.yaml", "larch-cp-1", func(docs []map[string]any) bool {
		return !kind("KubeAdmissionControlConfig", nil)(docs) && kind("KubeAPIServerConfig", nil)(docs)
	}},
	{"hand-written: no PodSecurity admission", "real-handwritten.yaml", "maple-cp-1", func(docs []map[string]any) bool {
		return !v1path("cluster", "apiServer", "admissionControl")(docs)
	}},
	{"hand-written: no exclude-from-external-load-balancers label", "real-handwritten.yaml", "maple-cp-1", func(docs []map[string]any) bool {
		return !v1path("machine", "nodeLabels", "node.kubernetes.io/exclude-from-external-load-balancers")(docs)
	}},
}

// loadReal reads a scenario file with its 127.0.26.x addresses moved to 127.0.98.x.
func loadReal(t *testing.T, file string) *Scenario {
	t.Helper()

	data, err := os.ReadFile(filepath.Join("../../scenarios", file))
	if err != nil {
		t.Fatal(err)
	}

	sc, err := ParseScenario(bytes.ReplaceAll(data, []byte("127.0.26."), []byte("127.0.98.")))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}

	return sc
}

func TestRealScenarios(t *testing.T) {
	files, err := filepath.Glob("../../scenarios/real-*.yaml")
	if err != nil {
		t.Fatal(err)
	}

	if len(files) != len(realScenarios) {
		t.Errorf("scenarios %v, want the %d of realScenarios", files, len(realScenarios))
	}

	configs := map[string]map[string][]map[string]any{} // scenario -> node -> documents

	for file, cluster := range realScenarios {
		sc := loadReal(t, file)

		if len(sc.Clusters) != 1 || sc.Clusters[0].Name != cluster || sc.Clusters[0].Ichor {
			t.Errorf("%s: want the one cluster %s, not recorded in Ichor", file, cluster)
		}

		cps, workers := 0, 0

		for _, n := range sc.Nodes {
			if n.Role == RoleControlPlane {
				cps++
			} else {
				workers++
			}
		}

		if cps != 3 || workers < 1 || workers > 3 {
			t.Errorf("%s: %d control planes and %d workers, want 3 and 1-3", file, cps, workers)
		}

		var logs bytes.Buffer

		dir := t.TempDir()

		s, err := New(Options{StateDir: dir, Scenario: sc, Logger: log.New(&logs, "", 0)})
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}

		configs[file] = map[string][]map[string]any{}

		for _, n := range s.nodes {
			name := n.Spec.Name

			p, err := LoadsWithConfigloader(n.config)
			if err != nil {
				t.Errorf("%s %s: Talos's configloader: %v", file, name, err)

				continue
			}

			if _, err := p.Validate(validationMode{installed: true}); err != nil {
				t.Errorf("%s %s: Talos's validation: %v", file, name, err)
			}

			facts, err := ParseConfigFacts(n.config)
			if err != nil || facts.Role() != n.Spec.Role || facts.ClusterName != cluster {
				t.Errorf("%s %s: facts %+v %v", file, name, facts, err)
			}

			if configs[file][name], err = decodeDocs(n.config); err != nil {
				t.Fatal(err)
			}
		}
	}

	for _, st := range realSettings {
		docs, ok := configs[st.scenario][st.node]
		if !ok {
			t.Errorf("%s: no node %s in %s", st.name, st.node, st.scenario)

			continue
		}

		if !st.has(docs) {
			t.Errorf("%s: not set on %s (%s)", st.name, st.node, st.scenario)
		}
	}
}

// TestRealContracts: the family covers Talos 1.12, 1.13 and 1.14, and real-docs14 is written in
// 1.14's documents only: its v1alpha1 document keeps what 1.14 leaves there, no Kubernetes field.
func TestRealContracts(t *testing.T) {
	var contracts []string

	for file := range realScenarios {
		contracts = append(contracts, loadReal(t, file).Clusters[0].Contract)
	}

	slices.Sort(contracts)

	if got := strings.Join(slices.Compact(contracts), " "); got != "1.12 1.13 1.14" {
		t.Errorf("contracts %s, want 1.12 1.13 1.14", got)
	}

	sc := loadReal(t, "real-docs14.yaml")

	s, err := New(Options{StateDir: t.TempDir(), Scenario: sc, Logger: log.New(&bytes.Buffer{}, "", 0)})
	if err != nil {
		t.Fatal(err)
	}

	for _, n := range s.nodes {
		docs, err := decodeDocs(n.config)
		if err != nil {
			t.Fatal(err)
		}

		for _, d := range docs {
			if str(d, "version") != "v1alpha1" || str(d, "kind") != "" {
				continue
			}

			for _, path := range [][]string{{"machine", "kubelet"}, {"machine", "nodeLabels"}, {"machine", "sysctls"}, {"machine", "kernel"},
				{"cluster", "apiServer"}, {"cluster", "controllerManager"}, {"cluster", "scheduler"}, {"cluster", "network"}, {"cluster", "proxy"}} {
				if lookup(d, path...) != nil {
					t.Errorf("%s: v1alpha1 %s set, want it in a 1.14 document", n.Spec.Name, strings.Join(path, "."))
				}
			}
		}
	}
}

// TestHandwrittenBase: a base's placeholders are filled from the bundle, an unknown one is refused,
// and the base replaces the generator (none of its comments, none of its defaults).
func TestHandwrittenBase(t *testing.T) {
	sc := loadReal(t, "real-handwritten.yaml")

	s, err := New(Options{StateDir: t.TempDir(), Scenario: sc, Logger: log.New(&bytes.Buffer{}, "", 0)})
	if err != nil {
		t.Fatal(err)
	}

	n := s.nodeByName("maple-cp-1")
	if bytes.Contains(n.config, []byte("# ")) || bytes.Contains(n.config, []byte("${")) {
		t.Errorf("maple-cp-1: generator comments or placeholders left:\n%s", n.config)
	}

	// without patches the base's bytes as written; patched, Talos's encoding (wipe: null)
	filled, err := FillBaseSecrets(sc.Clusters[0].Base.ControlPlane, s.clusterByName("maple").Bundle)
	if err != nil || string(n.config) != filled {
		t.Errorf("maple-cp-1: not the base as written (%v)", err)
	}

	if w := s.nodeByName("maple-w-1").config; !bytes.Contains(w, []byte("wipe: null")) || !bytes.Contains(w, []byte("node.lab.example/class")) {
		t.Errorf("maple-w-1: not Talos's encoding of the patched base:\n%s", w)
	}

	facts, err := ParseConfigFacts(n.config)
	if err != nil {
		t.Fatal(err)
	}

	bundle := s.clusterByName("maple").Bundle
	if !bytes.Equal(facts.OSCACrt, bundle.Certs.OS.Crt) || !bytes.Equal(facts.OSCAKey, bundle.Certs.OS.Key) || facts.ClusterID != bundle.Cluster.ID {
		t.Error("maple-cp-1: the bundle's OS CA and cluster ID not filled in")
	}

	if _, err := FillBaseSecrets("machine:\n  token: ${MACHINE_TOKN}\n", bundle); err == nil || !strings.Contains(err.Error(), "${MACHINE_TOKN}") {
		t.Errorf("an unknown placeholder: %v", err)
	}

	for _, sc := range []string{"clusters:\n  - name: a\n    endpoint: https://127.0.0.1:6443\n    base: {controlplane: \"version: v1alpha1\"}\n"} {
		if _, err := ParseScenario([]byte(sc)); err == nil || !strings.Contains(err.Error(), "base needs both") {
			t.Errorf("a base without a worker: %v", err)
		}
	}
}
