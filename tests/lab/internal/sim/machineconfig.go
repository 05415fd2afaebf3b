package sim

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/siderolabs/crypto/x509"
	coreconfig "github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
	"github.com/siderolabs/talos/pkg/machinery/config/configpatcher"
	"github.com/siderolabs/talos/pkg/machinery/config/encoder"
	"github.com/siderolabs/talos/pkg/machinery/config/generate"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"github.com/siderolabs/talos/pkg/machinery/config/machine"
	"gopkg.in/yaml.v3"
)

// configComments are the comments `talosctl gen config` writes by default (docs and examples).
const configComments = encoder.CommentsDocs | encoder.CommentsExamples

// GenParams is everything the generator needs for one node's machine configuration.
type GenParams struct {
	ClusterName       string
	Endpoint          string
	KubernetesVersion string // "v1.34.4" or "1.34.4"
	Contract          string // "1.12", "1.13", "1.14"
	Bundle            *secrets.Bundle
	Endpoints         []string // talosconfig endpoints (control-plane addresses)
	Role              string
	InstallDisk       string
	InstallImage      string
	Patches           []string // strategic-merge patches, applied in order
	// Base, when not empty, is a complete hand-written configuration used instead of the
	// generator's (its ${NAME} placeholders filled from Bundle, BaseSecrets).
	Base string
}

// generator caches the generator's output per (bundle, role, contract, install) so that many
// nodes of one cluster (bench mode) do not run the generator again and again.
type generator struct {
	mu    sync.Mutex
	cache map[string]coreconfig.Provider
}

func newGenerator() *generator { return &generator{cache: map[string]coreconfig.Provider{}} }

// Generate runs Talos's generator for the role and contract, applies the patches with Talos's
// configpatcher (strategic merge) and encodes as `talosctl gen config` does. Contract 1.14 is
// Talos's own (the documents of machinery v1.14.1), as the C++ render writes it.
func (g *generator) Generate(p GenParams) ([]byte, error) {
	if p.Base != "" {
		return generateFromBase(p)
	}

	base, err := g.base(p)
	if err != nil {
		return nil, err
	}

	patches, err := filledPatches(p)
	if err != nil {
		return nil, err
	}

	return applyPatches(base, patches, configComments)
}

// filledPatches fills the ${NAME} placeholders of BaseSecrets in each patch that has one, as the
// owner's templating step fills a patch kept in git with a value of the bundle (an
// EncryptionConfiguration of their own form around the cluster's secretbox key). A patch with a
// placeholder may not hold another `$` (os.Expand reads `$patch` as a placeholder too).
func filledPatches(p GenParams) ([]string, error) {
	out := make([]string, len(p.Patches))

	for i, text := range p.Patches {
		if !strings.Contains(text, "${") {
			out[i] = text

			continue
		}

		filled, err := FillBaseSecrets(text, p.Bundle)
		if err != nil {
			return nil, fmt.Errorf("patch %d: %w", i+1, err)
		}

		out[i] = filled
	}

	return out, nil
}

// generateFromBase is Generate for a hand-written base: the placeholders filled in and loaded by
// Talos's configloader; without patches the file's own bytes (what a node applied it to serves),
// else the patches applied and the result encoded by Talos without comments, as talosctl patch
// leaves it (Talos's encoder writes unset fields such as install.wipe as null).
func generateFromBase(p GenParams) ([]byte, error) {
	text, err := FillBaseSecrets(p.Base, p.Bundle)
	if err != nil {
		return nil, err
	}

	base, err := configloader.NewFromBytes([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("base: %w", err)
	}

	if len(p.Patches) == 0 {
		// applied as written (talosctl apply-config -f), a node keeps and serves the file's bytes
		return []byte(text), nil
	}

	patches, err := filledPatches(p)
	if err != nil {
		return nil, err
	}

	return applyPatches(base, patches, encoder.CommentsDisabled)
}

// BaseSecrets are the placeholders a hand-written base may use for the bundle's values, as a
// templating step (envsubst, sops) fills them into a file kept in git: certificates and keys
// base64-encoded PEM as the v1alpha1 document holds them, tokens and IDs as they are.
func BaseSecrets(b *secrets.Bundle) map[string]string {
	enc := func(v []byte) string { return base64.StdEncoding.EncodeToString(v) }

	m := map[string]string{
		"CLUSTER_ID":          b.Cluster.ID,
		"CLUSTER_SECRET":      b.Cluster.Secret,
		"CLUSTER_TOKEN":       b.Secrets.BootstrapToken,
		"MACHINE_TOKEN":       b.TrustdInfo.Token,
		"SECRETBOX_KEY":       b.Secrets.SecretboxEncryptionSecret,
		"AESCBC_KEY":          b.Secrets.AESCBCEncryptionSecret,
		"SERVICE_ACCOUNT_KEY": enc(b.Certs.K8sServiceAccount.Key),
	}

	for name, ca := range map[string]*x509.PEMEncodedCertificateAndKey{
		"MACHINE_CA": b.Certs.OS, "CLUSTER_CA": b.Certs.K8s, "AGGREGATOR_CA": b.Certs.K8sAggregator, "ETCD_CA": b.Certs.Etcd,
	} {
		m[name+"_CRT"], m[name+"_KEY"] = enc(ca.Crt), enc(ca.Key)
	}

	return m
}

// FillBaseSecrets replaces each ${NAME} of BaseSecrets in text; an unknown ${NAME} is an error.
func FillBaseSecrets(text string, b *secrets.Bundle) (string, error) {
	vals := BaseSecrets(b)

	var missing []string

	out := os.Expand(text, func(name string) string {
		v, ok := vals[name]
		if !ok {
			missing = append(missing, name)
		}

		return v
	})

	if len(missing) > 0 {
		return "", fmt.Errorf("base: unknown placeholder ${%s}", strings.Join(missing, "}, ${"))
	}

	return out, nil
}

// applyPatches applies strategic-merge patches to a copy of base with Talos's configpatcher and
// encodes the result.
func applyPatches(base coreconfig.Provider, texts []string, comments encoder.CommentsFlags) ([]byte, error) {
	p := GenParams{Patches: texts}

	cfg := base.Clone()

	if len(p.Patches) > 0 {
		patches := make([]configpatcher.Patch, 0, len(p.Patches))

		for i, text := range p.Patches {
			patch, err := configpatcher.LoadPatch([]byte(text))
			if err != nil {
				return nil, fmt.Errorf("patch %d: %w", i+1, err)
			}

			patches = append(patches, patch)
		}

		out, err := configpatcher.Apply(configpatcher.WithConfig(cfg), patches)
		if err != nil {
			return nil, fmt.Errorf("apply patches: %w", err)
		}

		if cfg, err = out.Config(); err != nil {
			return nil, err
		}
	}

	data, err := cfg.EncodeBytes(encoder.WithComments(comments))
	if err != nil {
		return nil, err
	}

	return data, nil
}

func (g *generator) base(p GenParams) (coreconfig.Provider, error) {
	key := fmt.Sprintf("%p|%s|%s|%s|%s|%s|%s|%s", p.Bundle, p.ClusterName, p.Endpoint, p.KubernetesVersion, p.Contract, p.Role, p.InstallDisk, p.InstallImage)

	g.mu.Lock()
	defer g.mu.Unlock()

	if cfg, ok := g.cache[key]; ok {
		return cfg, nil
	}

	typ := machine.TypeWorker
	if p.Role == RoleControlPlane {
		typ = machine.TypeControlPlane
	}

	in, err := generate.NewInput(p.ClusterName, p.Endpoint, strings.TrimPrefix(p.KubernetesVersion, "v"),
		generate.WithVersionContract(contractOf(p.Contract)),
		generate.WithSecretsBundle(p.Bundle),
		generate.WithEndpointList(p.Endpoints),
		generate.WithInstallDisk(p.InstallDisk),
		generate.WithInstallImage(p.InstallImage),
	)
	if err != nil {
		return nil, err
	}

	cfg, err := in.Config(typ)
	if err != nil {
		return nil, err
	}

	g.cache[key] = cfg

	return cfg, nil
}

// ApplyPatch applies one strategic-merge patch (YAML) to a configuration the configloader can
// load, and encodes the result without comments.
func ApplyPatch(data []byte, patch string) ([]byte, error) {
	p, err := configpatcher.LoadPatch([]byte(patch))
	if err != nil {
		return nil, fmt.Errorf("patch: %w", err)
	}

	out, err := configpatcher.Apply(configpatcher.WithBytes(data), []configpatcher.Patch{p})
	if err != nil {
		return nil, err
	}

	cfg, err := out.Config()
	if err != nil {
		return nil, err
	}

	return cfg.EncodeBytes(encoder.WithComments(encoder.CommentsDisabled))
}

// ConfigFacts are the facts the simulator needs from a machine configuration, read from the raw
// YAML so that both the v1alpha1 layout and the v1.14 multi-document layout work.
type ConfigFacts struct {
	HasV1Alpha1  bool
	MachineType  string // controlplane, worker, init
	OSCACrt      []byte // PEM
	OSCAKey      []byte // PEM, empty on workers
	AcceptedCAs  [][]byte
	ClusterName  string
	ClusterID    string
	Endpoint     string
	InstallDisk  string
	InstallImage string
	Hostname     string
	CertSANs     []string
	Kinds        []string // kinds of the typed documents, in order
}

// Role returns "controlplane" or "worker" ("init" counts as control plane).
func (f *ConfigFacts) Role() string {
	switch f.MachineType {
	case "controlplane", "init":
		return RoleControlPlane
	default:
		return RoleWorker
	}
}

// ParseConfigFacts reads the facts from a (possibly multi-document) machine configuration.
//
//nolint:gocyclo
func ParseConfigFacts(data []byte) (*ConfigFacts, error) {
	docs, err := decodeDocs(data)
	if err != nil {
		return nil, err
	}

	f := &ConfigFacts{}

	for _, d := range docs {
		if str(d, "version") == "v1alpha1" && str(d, "kind") == "" {
			f.HasV1Alpha1 = true
			f.MachineType = str(d, "machine", "type")
			f.OSCACrt = b64(str(d, "machine", "ca", "crt"))
			f.OSCAKey = b64(str(d, "machine", "ca", "key"))

			for _, ca := range list(d, "machine", "acceptedCAs") {
				if m, ok := ca.(map[string]any); ok {
					if crt := b64(str(m, "crt")); len(crt) > 0 {
						f.AcceptedCAs = append(f.AcceptedCAs, crt)
					}
				}
			}

			for _, s := range list(d, "machine", "certSANs") {
				if v, ok := s.(string); ok {
					f.CertSANs = append(f.CertSANs, v)
				}
			}

			f.ClusterName = firstNonEmpty(f.ClusterName, str(d, "cluster", "clusterName"))
			f.ClusterID = firstNonEmpty(f.ClusterID, str(d, "cluster", "id"))
			f.Endpoint = firstNonEmpty(f.Endpoint, str(d, "cluster", "controlPlane", "endpoint"))
			f.InstallDisk = firstNonEmpty(f.InstallDisk, str(d, "machine", "install", "disk"))
			f.InstallImage = firstNonEmpty(f.InstallImage, str(d, "machine", "install", "image"))
			f.Hostname = firstNonEmpty(f.Hostname, str(d, "machine", "network", "hostname"))

			continue
		}

		kind := str(d, "kind")
		if kind == "" {
			continue
		}

		f.Kinds = append(f.Kinds, kind)

		switch kind {
		case "DiscoveryIdentityConfig":
			f.ClusterID = firstNonEmpty(str(d, "clusterID"), f.ClusterID)
		case "KubeClusterConfig":
			f.ClusterName = firstNonEmpty(str(d, "clusterName"), f.ClusterName)
			f.Endpoint = firstNonEmpty(str(d, "endpoint"), f.Endpoint)
		case "HostnameConfig":
			f.Hostname = firstNonEmpty(str(d, "hostname"), f.Hostname)
		case "UnattendedInstallConfig":
			f.InstallImage = firstNonEmpty(str(d, "installer", "image"), f.InstallImage)
			if m := str(d, "provisioning", "diskSelector", "match"); m != "" {
				if _, disk, ok := strings.Cut(m, `disk.dev_path == "`); ok {
					f.InstallDisk = firstNonEmpty(strings.TrimSuffix(strings.Fields(disk)[0], `"`), f.InstallDisk)
				}
			}
		}
	}

	return f, nil
}

// LoadsWithConfigloader reports whether Talos's configloader (machinery v1.14.1) accepts data.
func LoadsWithConfigloader(data []byte) (coreconfig.Provider, error) {
	return configloader.NewFromBytes(data)
}

func decodeDocs(data []byte) ([]map[string]any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))

	var docs []map[string]any

	for {
		var d map[string]any

		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}

		if err != nil {
			return nil, fmt.Errorf("parse machine configuration: %w", err)
		}

		if d != nil {
			docs = append(docs, d)
		}
	}
}

func lookup(m map[string]any, path ...string) any {
	var cur any = m

	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}

		cur = mm[p]
	}

	return cur
}

func str(m map[string]any, path ...string) string {
	switch v := lookup(m, path...).(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

func list(m map[string]any, path ...string) []any {
	l, _ := lookup(m, path...).([]any) //nolint:errcheck

	return l
}

func b64(s string) []byte {
	if s == "" {
		return nil
	}

	out, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil
	}

	return out
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}

	return ""
}
