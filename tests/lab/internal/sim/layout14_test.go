package sim

import (
	"strings"
	"testing"

	cosiv1alpha1 "github.com/cosi-project/runtime/api/v1alpha1"
	configpb "github.com/siderolabs/talos/pkg/machinery/api/resource/config"
	"google.golang.org/protobuf/proto"
	"gopkg.in/yaml.v3"
)

// A node of contract 1.14 runs Talos's own 1.14 configuration (machinery v1.14.1's generator).
func TestLayout14Node(t *testing.T) {
	s := startSim(t, `
clusters:
  - {name: t1, endpoint: "https://127.0.99.1:6443"}
nodes:
  - {name: t1-cp14, address: 127.0.99.21, cluster: t1, role: controlplane, contract: "1.14"}
  - {name: t1-w14, address: 127.0.99.22, cluster: t1, role: worker, contract: "1.14"}
`)

	cl := s.clusterByName("t1")

	for _, name := range []string{"t1-cp14", "t1-w14"} {
		n := s.nodeByName(name)
		docs, err := decodeDocs(n.scenarioConfig)
		if err != nil {
			t.Fatal(err)
		}

		kinds := map[string]map[string]any{}

		var v1 map[string]any

		for _, d := range docs {
			if k := str(d, "kind"); k != "" {
				kinds[k] = d
			} else {
				v1 = d
			}
		}

		for _, k := range []string{"DiscoveryIdentityConfig", "KubeClusterConfig", "KubeAPIServerCAConfig", "KubeNetworkConfig", "UnattendedInstallConfig", "KubePrismConfig", "HostnameConfig"} {
			if kinds[k] == nil {
				t.Errorf("%s: no %s document", name, k)
			}
		}

		if str(kinds["DiscoveryIdentityConfig"], "clusterID") != cl.ClusterID {
			t.Errorf("%s: clusterID moved wrong", name)
		}

		// Talos 1.14 gives a control plane the issuing CA, a worker the CA among the accepted ones.
		caCert := str(kinds["KubeAPIServerCAConfig"], "issuingCA", "cert")
		if accepted, ok := kinds["KubeAPIServerCAConfig"]["acceptedCAs"].([]any); ok && len(accepted) > 0 && name == "t1-w14" {
			caCert, _ = accepted[0].(string) //nolint:errcheck
		}

		if !strings.HasPrefix(caCert, "-----BEGIN CERTIFICATE-----") {
			t.Errorf("%s: KubeAPIServerCAConfig cert is not raw PEM", name)
		}

		if kinds["KubeletConfig"] == nil {
			t.Errorf("%s: not Talos's own 1.14 (no KubeletConfig)", name)
		}

		for _, gone := range [][]string{{"cluster", "id"}, {"cluster", "secret"}, {"cluster", "ca"}, {"cluster", "clusterName"}, {"machine", "install"}, {"cluster", "network"}} {
			if lookup(v1, gone...) != nil {
				t.Errorf("%s: %v still in v1alpha1", name, gone)
			}
		}

		for _, kept := range [][]string{{"machine", "type"}, {"machine", "token"}, {"machine", "ca", "crt"}, {"cluster", "token"}} {
			if lookup(v1, kept...) == nil {
				t.Errorf("%s: %v missing from v1alpha1", name, kept)
			}
		}

		facts, err := ParseConfigFacts(n.scenarioConfig)
		if err != nil || facts.ClusterID != cl.ClusterID || facts.ClusterName != "t1" || facts.InstallDisk != "/dev/sda" || facts.Endpoint != "https://127.0.99.1:6443" {
			t.Errorf("%s: facts %+v %v", name, facts, err)
		}
	}

	cp := s.nodeByName("t1-cp14")
	docs, _ := decodeDocs(cp.scenarioConfig) //nolint:errcheck

	var haveSA, haveAgg, haveEnc bool

	for _, d := range docs {
		switch str(d, "kind") {
		case "KubeServiceAccountConfig":
			haveSA = strings.Contains(str(d, "issuer", "privateKey"), "PRIVATE KEY-----")
		case "KubeAggregatorCAConfig":
			haveAgg = true
		case "KubeEtcdEncryptionConfig":
			haveEnc = true
		}
	}

	if !haveSA || !haveAgg || !haveEnc {
		t.Errorf("control plane documents: sa=%v aggregator=%v encryption=%v", haveSA, haveAgg, haveEnc)
	}

	if lookup(docs[0], "cluster", "etcd", "ca") == nil {
		t.Error("cluster.etcd.ca must stay in v1alpha1")
	}

	// the node serves it: the MachineConfig spec is the bytes, yaml_spec a YAML string scalar
	c := talosClient(t, "t1", "talosconfig", "127.0.99.21")

	resp, err := cosiv1alpha1.NewStateClient(c.Conn()).Get(callCtx(t), &cosiv1alpha1.GetRequest{
		Namespace: "config", Type: "MachineConfigs.config.talos.dev", Id: "v1alpha1",
	})
	if err != nil {
		t.Fatalf("Get: %v", err)
	}

	var spec configpb.MachineConfigSpec
	if err := proto.Unmarshal(resp.GetResource().GetSpec().GetProtoSpec(), &spec); err != nil {
		t.Fatal(err)
	}

	if string(spec.GetYamlMarshalled()) != string(cp.scenarioConfig) {
		t.Error("proto_spec is not the config bytes")
	}

	var scalar string
	if err := yaml.Unmarshal([]byte(resp.GetResource().GetSpec().GetYamlSpec()), &scalar); err != nil || scalar != string(cp.scenarioConfig) {
		t.Errorf("yaml_spec is not the config as a string scalar: %v", err)
	}

	if resp.GetResource().GetMetadata().GetAnnotations()["talos.dev/yaml-spec"] != "1" {
		t.Error("missing talos.dev/yaml-spec annotation")
	}
}
