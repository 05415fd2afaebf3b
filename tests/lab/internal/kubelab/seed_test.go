package kubelab

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func testSim() *Sim {
	return &Sim{
		Control: "http://127.0.0.1:1",
		Clusters: []SimCluster{
			{Name: "prod", Contract: "1.13", TalosVersion: "v1.13.9", KubernetesVersion: "v1.34.4",
				Endpoint: "https://127.0.0.11:6443", ClusterID: "cid-prod", SecretsBundle: "/b/prod.yaml", Ichor: true},
			{Name: "lab-b", Contract: "1.12", TalosVersion: "v1.12.6", KubernetesVersion: "v1.33.1",
				Endpoint: "https://127.0.0.21:6443", ClusterID: "cid-b", SecretsBundle: "/b/lab-b.yaml", Ichor: false},
		},
		Nodes: []SimNode{
			{Name: "prod-cp-2", Address: "127.0.0.12", Port: 50000, Cluster: "prod", Role: "controlplane", UUID: "u2", Serial: "s2",
				MACs: []string{"02:00:00:00:00:02"}, InstallDisk: "/dev/sda", InstallImage: "ghcr.io/siderolabs/installer:v1.13.9", Ichor: "approved"},
			{Name: "prod-cp-1", Address: "127.0.0.11", Port: 50000, Cluster: "prod", Role: "controlplane", UUID: "u1", Serial: "s1",
				MACs: []string{"02:00:00:00:00:01"}, InstallDisk: "/dev/sda", InstallImage: "ghcr.io/siderolabs/installer:v1.13.9", Ichor: "approved"},
			{Name: "prod-w-1", Address: "127.0.0.13", Cluster: "prod", Role: "worker", UUID: "u3", Ichor: "pending"},
			{Name: "prod-w-2", Address: "127.0.0.14", Cluster: "prod", Role: "worker", UUID: "u4", Ichor: "none"},
			{Name: "prod-cp-9", Address: "127.0.0.19", Cluster: "prod", Role: "controlplane", UUID: "u9", Ichor: "pending"},
			{Name: "b-cp-1", Address: "127.0.0.21", Cluster: "lab-b", Role: "controlplane", UUID: "u5", Ichor: "approved"},
		},
	}
}

func readFake(p string) ([]byte, error) {
	if p == "/b/prod.yaml" {
		return []byte("cluster:\n  id: cid-prod\n"), nil
	}
	return nil, errors.New("unexpected read of " + p)
}

func TestBuildSeed(t *testing.T) {
	s, err := BuildSeed(testSim(), readFake)
	if err != nil {
		t.Fatal(err)
	}
	if s.Namespace.Metadata.Name != "ichor-system" {
		t.Errorf("namespace %q", s.Namespace.Metadata.Name)
	}
	if len(s.Secrets) != 1 || s.Secrets[0].Metadata.Name != "prod-secrets" || s.Secrets[0].Metadata.Namespace != "ichor-system" ||
		string(s.Secrets[0].Data["bundle.yaml"]) != "cluster:\n  id: cid-prod\n" {
		t.Errorf("secrets %+v", s.Secrets)
	}
	if len(s.Clusters) != 1 {
		t.Fatalf("clusters %+v", s.Clusters)
	}
	c := s.Clusters[0]
	if c.APIVersion != "ichor.maesh.dev/v1alpha1" || c.Kind != "TalosCluster" || c.Metadata.Name != "prod" {
		t.Errorf("cluster meta %+v", c)
	}
	want := TalosClusterSpec{TalosVersion: "v1.13.9", KubernetesVersion: "v1.34.4", Endpoint: "https://127.0.0.11:6443",
		VersionContract: "1.13", ControlPlane: ControlPlaneSpec{Count: 2}, CNI: &CNISpec{Preset: "cilium"},
		SecretsBundleRef: SecretsBundleRef{Name: "prod-secrets", Key: "bundle.yaml"}}
	gotJSON, _ := json.Marshal(c.Spec)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("cluster spec\n got %s\nwant %s", gotJSON, wantJSON)
	}
	var names []string
	for _, m := range s.Machines {
		names = append(names, m.Metadata.Name+"="+m.Spec.Approval)
		if m.Metadata.Labels[LabelCluster] != m.Spec.Cluster || m.Metadata.Namespace != "ichor-system" {
			t.Errorf("%s: labels %v ns %q", m.Metadata.Name, m.Metadata.Labels, m.Metadata.Namespace)
		}
	}
	if got := strings.Join(names, " "); got != "prod-cp-1=Approved prod-cp-2=Approved prod-cp-9=Pending prod-w-1=Pending" {
		t.Errorf("machines %s", got)
	}
	m := s.Machines[0]
	if m.Spec.Role != "controlplane" || m.Spec.Address != "127.0.0.11" || m.Spec.Identity.UUID != "u1" ||
		m.Spec.Identity.Serial != "s1" || len(m.Spec.Identity.MACs) != 1 || m.Spec.Install.Disk != "/dev/sda" ||
		m.Spec.Install.Image != "ghcr.io/siderolabs/installer:v1.13.9" {
		t.Errorf("machine %+v", m.Spec)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "b-cp-1") {
		t.Errorf("warnings %v", s.Warnings)
	}
}

func TestSeedMachineJSON(t *testing.T) {
	s, err := BuildSeed(testSim(), readFake)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(s.Machines[0])
	got := string(b)
	for _, want := range []string{`"apiVersion":"ichor.maesh.dev/v1alpha1"`, `"kind":"TalosMachine"`,
		`"install":{"disk":"/dev/sda","image":"ghcr.io/siderolabs/installer:v1.13.9","wipe":false}`,
		`"labels":{"ichor.maesh.dev/cluster":"prod"}`, `"approval":"Approved"`} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in %s", want, got)
		}
	}
	if strings.Contains(got, `"status"`) {
		t.Errorf("status in a created object: %s", got)
	}
	// the Secret's data is base64 in JSON
	b, _ = json.Marshal(s.Secrets[0])
	if !strings.Contains(string(b), `"bundle.yaml":"Y2x1c3RlcjoKICBpZDogY2lkLXByb2QK"`) {
		t.Errorf("secret JSON %s", b)
	}
}

func TestSeedNoControlPlane(t *testing.T) {
	sim := testSim()
	sim.Nodes = nil
	s, err := BuildSeed(sim, readFake)
	if err != nil {
		t.Fatal(err)
	}
	if s.Clusters[0].Spec.ControlPlane.Count != 1 || len(s.Warnings) != 1 {
		t.Errorf("count %d warnings %v", s.Clusters[0].Spec.ControlPlane.Count, s.Warnings)
	}
}

func TestSeedBundleMissing(t *testing.T) {
	_, err := BuildSeed(testSim(), func(string) ([]byte, error) { return nil, errors.New("nope") })
	if err == nil || !strings.Contains(err.Error(), "prod") {
		t.Errorf("err %v", err)
	}
}

func TestBundleClusterID(t *testing.T) {
	id, err := BundleClusterID([]byte("cluster:\n    id: abc=\n    secret: s\nsecrets:\n    bootstraptoken: x\n"))
	if err != nil || id != "abc=" {
		t.Errorf("id %q err %v", id, err)
	}
	if _, err := BundleClusterID([]byte("certs: {}\n")); err == nil {
		t.Error("no error without cluster.id")
	}
}

func TestTalosconfigExports(t *testing.T) {
	sim := &Sim{Clusters: []SimCluster{{Name: "prod", Talosconfig: "/s/prod/talosconfig"}, {Name: "lab-b.x", Talosconfig: "/s/it's"}, {Name: "none"}}}
	got := strings.Join(TalosconfigExports(sim), "\n")
	want := "export TALOSCONFIG_PROD='/s/prod/talosconfig'\nexport TALOSCONFIG_LAB_B_X='/s/it'\\''s'"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
