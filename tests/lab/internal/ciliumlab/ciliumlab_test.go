package ciliumlab

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// The record as the adopt tools read it (common/cni/helm_record.h): the Secret's data.release is
// Helm's base64 of gzip of the release JSON (the fake clientset keeps the bytes the API would
// base64 once more).
func decodeRecord(t *testing.T, data []byte) map[string]any {
	t.Helper()
	gz, err := base64.StdEncoding.DecodeString(string(data))
	if err != nil {
		t.Fatalf("base64: %v", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatalf("gzip: %v", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	var rel map[string]any
	if err := json.Unmarshal(raw, &rel); err != nil {
		t.Fatalf("json: %v", err)
	}
	return rel
}

func TestWriteRecordIsHelmsRecord(t *testing.T) {
	cs := fake.NewSimpleClientset()
	secrets := cs.CoreV1().Secrets("kube-system")
	values := map[string]any{"hubble": map[string]any{"relay": map[string]any{"enabled": true}}}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	if _, err := WriteRecord(secrets, Record{Release: "cilium", Namespace: "kube-system", Chart: "cilium",
		ChartVersion: ChartVersion, Values: values}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteRecord(secrets, Record{Release: "cilium", Namespace: "kube-system", Chart: "cilium",
		ChartVersion: ChartVersion, Values: values}, now); err != nil {
		t.Fatal(err)
	}
	s, err := secrets.Get(context.Background(), "sh.helm.release.v1.cilium.v2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Type) != "helm.sh/release.v1" || s.Labels["owner"] != "helm" || s.Labels["status"] != "deployed" {
		t.Fatalf("type %q labels %v", s.Type, s.Labels)
	}
	rel := decodeRecord(t, s.Data["release"])
	if rel["name"] != "cilium" || rel["version"] != float64(2) {
		t.Fatalf("release %v revision %v", rel["name"], rel["version"])
	}
	meta := rel["chart"].(map[string]any)["metadata"].(map[string]any)
	if meta["name"] != "cilium" || meta["version"] != ChartVersion {
		t.Fatalf("chart %v", meta)
	}
	config, _ := json.Marshal(rel["config"])
	if string(config) != `{"hubble":{"relay":{"enabled":true}}}` {
		t.Fatalf("config %s", config)
	}
	// Helm's own reader sees one deployed revision, the first superseded.
	store := storage.Init(driver.NewSecrets(secrets))
	dep, err := store.Deployed("cilium")
	if err != nil || dep.Version != 2 {
		t.Fatalf("deployed %v %v", dep, err)
	}
	first, err := store.Get("cilium", 1)
	if err != nil || first.Info.Status != release.StatusSuperseded {
		t.Fatalf("revision 1: %v %v", first, err)
	}
}

func TestWriteRecordWithoutValues(t *testing.T) {
	cs := fake.NewSimpleClientset()
	secrets := cs.CoreV1().Secrets("kube-system")
	if _, err := WriteRecord(secrets, Record{Release: "cilium", Namespace: "kube-system", Chart: "cilium",
		ChartVersion: ChartVersion}, time.Now()); err != nil {
		t.Fatal(err)
	}
	s, err := secrets.Get(context.Background(), "sh.helm.release.v1.cilium.v1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := decodeRecord(t, s.Data["release"])["config"]; ok && c != nil && len(c.(map[string]any)) != 0 {
		t.Fatalf("config %v", c)
	}
	if _, err := WriteRecord(secrets, Record{Release: "cilium"}, time.Now()); err == nil {
		t.Fatal("a record without a chart was written")
	}
}

func TestRenderGuideAndRelay(t *testing.T) {
	objs := Render(GuideValues(), "kube-system", nil)
	want := map[string]string{"ipam": "kubernetes", "kube-proxy-replacement": "true", "routing-mode": "tunnel",
		"tunnel-protocol": "vxlan", "enable-hubble": "true", "cgroup-root": "/sys/fs/cgroup", "cluster-id": "0",
		"cni-exclusive": "true", "enable-ipv4-masquerade": "true"}
	for k, v := range want {
		if objs.Config.Data[k] != v {
			t.Errorf("cilium-config %s = %q, want %q", k, objs.Config.Data[k], v)
		}
	}
	if _, ok := objs.Config.Data["tunnel-port"]; ok {
		t.Error("tunnel-port rendered at 0")
	}
	for _, c := range objs.Agent.Spec.Template.Spec.InitContainers {
		if c.Name == "mount-cgroup" {
			t.Error("mount-cgroup rendered with cgroup.autoMount.enabled false")
		}
	}
	env := objs.Agent.Spec.Template.Spec.Containers[0].Env
	if len(env) != 3 || env[1].Value != "localhost" || env[2].Value != "7445" {
		t.Errorf("agent env %v", env)
	}
	if len(objs.Deployments) != 1 || *objs.Deployments[0].Spec.Replicas != 2 {
		t.Fatalf("deployments %v", objs.Deployments)
	}
	relay := Render(Merge(GuideValues(), map[string]any{"hubble": map[string]any{"relay": map[string]any{"enabled": true}}}),
		"kube-system", &HelmMeta{Release: "cilium", Namespace: "kube-system"})
	if len(relay.Deployments) != 2 || relay.Deployments[1].Name != "hubble-relay" {
		t.Fatalf("relay deployments %v", relay.Deployments)
	}
	if relay.Agent.Labels["app.kubernetes.io/managed-by"] != "Helm" ||
		relay.Agent.Annotations["meta.helm.sh/release-name"] != "cilium" {
		t.Errorf("helm markers %v %v", relay.Agent.Labels, relay.Agent.Annotations)
	}
	// hubble.relay needs hubble.enabled, as the template's condition does.
	off := Render(map[string]any{"hubble": map[string]any{"enabled": false, "relay": map[string]any{"enabled": true}}}, "kube-system", nil)
	if len(off.Deployments) != 1 {
		t.Errorf("relay rendered with hubble off")
	}
}

func TestApplyCreatesAndReplaces(t *testing.T) {
	cs := fake.NewSimpleClientset()
	ctx := context.Background()
	if err := Apply(ctx, cs, Render(GuideValues(), "kube-system", nil), "talos"); err != nil {
		t.Fatal(err)
	}
	withRelay := Merge(GuideValues(), map[string]any{"hubble": map[string]any{"relay": map[string]any{"enabled": true}},
		"operator": map[string]any{"replicas": 1}})
	if err := Apply(ctx, cs, Render(withRelay, "kube-system", nil), "talos"); err != nil {
		t.Fatal(err)
	}
	op, err := cs.AppsV1().Deployments("kube-system").Get(ctx, "cilium-operator", metav1.GetOptions{})
	if err != nil || *op.Spec.Replicas != 1 {
		t.Fatalf("operator %v %v", op, err)
	}
	if _, err := cs.AppsV1().Deployments("kube-system").Get(ctx, "hubble-relay", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().DaemonSets("kube-system").Get(ctx, "cilium", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
}
