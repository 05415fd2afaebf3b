// Package oracle renders the reference machine configurations that the C++ render
// (common/render) must equal: Talos's own generator (pkg/machinery config/generate) with the
// options Ichor maps from a TalosCluster, the settings Ichor owns, and the cluster's
// TalosConfigPatches applied by Talos's configpatcher. docs/render.md is the contract both follow.
package oracle

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	coreconfig "github.com/siderolabs/talos/pkg/machinery/config"
	configdoc "github.com/siderolabs/talos/pkg/machinery/config/config"
	"github.com/siderolabs/talos/pkg/machinery/config/configpatcher"
	"github.com/siderolabs/talos/pkg/machinery/config/container"
	"github.com/siderolabs/talos/pkg/machinery/config/encoder"
	"github.com/siderolabs/talos/pkg/machinery/config/generate"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"github.com/siderolabs/talos/pkg/machinery/config/machine"
	"github.com/siderolabs/talos/pkg/machinery/config/types/cri"
	"github.com/siderolabs/talos/pkg/machinery/config/types/k8s"
	"github.com/siderolabs/talos/pkg/machinery/config/types/runtime"
	"github.com/siderolabs/talos/pkg/machinery/config/types/v1alpha1"

	"gopkg.in/yaml.v3"
)

// Cases is a cases file (tests/golden/render/cases.yaml): clusters and patches by name, and the
// matrix of renders.
type Cases struct {
	Bundle   string                    `yaml:"bundle"`
	Clusters map[string]map[string]any `yaml:"clusters"`
	Patches  []map[string]any          `yaml:"patches"`
	Cases    []Case                    `yaml:"cases"`

	bundle *secrets.Bundle
}

// Case is one render of the matrix.
type Case struct {
	Name     string   `yaml:"name"`
	Cluster  string   `yaml:"cluster"`
	Role     string   `yaml:"role"`
	Machine  string   `yaml:"machine"`
	Contract string   `yaml:"contract"`
	Install  Install  `yaml:"install"`
	Patches  []string `yaml:"patches"`
}

// LoadCases reads a cases file and the secrets bundle it names (relative to the file).
func LoadCases(path string) (*Cases, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}

	var cf Cases
	if err = yaml.Unmarshal(data, &cf); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}

	if cf.bundle, err = secrets.LoadBundle(filepath.Join(filepath.Dir(path), cf.Bundle)); err != nil {
		return nil, err
	}

	return &cf, nil
}

// Render renders one case: the configuration, or a *PatchError when a patch does not apply.
func (cf *Cases) Render(c Case) ([]byte, error) {
	in, err := cf.input(c)
	if err != nil {
		return nil, err
	}

	return Render(in)
}

func (cf *Cases) input(c Case) (Input, error) {
	cluster, ok := cf.Clusters[c.Cluster]
	if !ok {
		return Input{}, fmt.Errorf("case %s: no cluster %q", c.Name, c.Cluster)
	}

	byName := map[string]map[string]any{}
	for _, p := range cf.Patches {
		byName[str(p, "metadata", "name")] = p
	}

	var patches []map[string]any

	for _, n := range c.Patches {
		p, ok := byName[n]
		if !ok {
			return Input{}, fmt.Errorf("case %s: no patch %q", c.Name, n)
		}

		patches = append(patches, p)
	}

	return Input{
		Cluster: cluster, Role: c.Role, Machine: c.Machine, Install: c.Install,
		Contract: c.Contract, Patches: patches, Bundle: cf.bundle,
	}, nil
}

// Install holds the install-time fields, which come from the node (never from the cluster).
type Install struct {
	Disk  string `yaml:"disk"`
	Image string `yaml:"image"`
	Wipe  bool   `yaml:"wipe"`
}

// Input is one render: a TalosCluster object, the node's role and install fields, the version
// contract ("" = the cluster's), the TalosConfigPatch objects to choose from, and the bundle.
type Input struct {
	Cluster  map[string]any
	Role     string
	Machine  string // the TalosMachine's name, for machine-layer patches
	Install  Install
	Contract string
	Patches  []map[string]any
	Bundle   *secrets.Bundle
}

// PatchError names the TalosConfigPatch that did not apply.
type PatchError struct {
	Patch string
	Err   error
}

func (e *PatchError) Error() string { return fmt.Sprintf("TalosConfigPatch %s: %v", e.Patch, e.Err) }

// Contract is the version contract a render uses: the input's, else spec.versionContract, else
// the minor version of spec.talosVersion.
func Contract(in Input) string {
	if in.Contract != "" {
		return in.Contract
	}

	if c := str(in.Cluster, "spec", "versionContract"); c != "" {
		return c
	}

	v := strings.TrimPrefix(str(in.Cluster, "spec", "talosVersion"), "v")
	parts := strings.SplitN(v, ".", 3)

	if len(parts) >= 2 {
		return parts[0] + "." + parts[1]
	}

	return ""
}

// Render runs the generator and the patches and encodes the result without comments. Every
// contract is Talos's own (machinery v1.14.1; 1.14 is config.TalosVersion1_14), and the patches
// apply to the generated documents, as the C++ render does.
func Render(in Input) ([]byte, error) { return render(in) }

//nolint:gocyclo,cyclop
func render(in Input) ([]byte, error) {
	contract := Contract(in)

	var vc *coreconfig.VersionContract

	switch {
	case contract == "1.12":
		vc = coreconfig.TalosVersion1_12
	case contract == "1.13":
		vc = coreconfig.TalosVersion1_13
	case contract == "1.14":
		vc = coreconfig.TalosVersion1_14
	default:
		return nil, fmt.Errorf("unsupported version contract %q", contract)
	}

	name := str(in.Cluster, "spec", "clusterName")
	if name == "" {
		name = str(in.Cluster, "metadata", "name")
	}

	preset := str(in.Cluster, "spec", "cni", "preset")
	if preset == "" {
		preset = "cilium"
	}

	opts := []generate.Option{
		generate.WithVersionContract(vc),
		generate.WithSecretsBundle(in.Bundle),
		generate.WithInstallDisk(in.Install.Disk),
		generate.WithInstallImage(in.Install.Image),
		generate.WithKubePrismPort(7445),
		generate.WithClusterDiscovery(true),
	}

	mirrors, _ := lookup(in.Cluster, "spec", "registries", "mirrors").(map[string]any) //nolint:errcheck
	hosts := make([]string, 0, len(mirrors))

	for h := range mirrors {
		hosts = append(hosts, h)
	}

	sort.Strings(hosts)

	for _, h := range hosts {
		m, _ := mirrors[h].(map[string]any) //nolint:errcheck

		var eps []string

		for _, e := range list(m, "endpoints") {
			eps = append(eps, fmt.Sprint(e))
		}

		opts = append(opts, generate.WithRegistryMirror(h, eps...))
	}

	gen, err := generate.NewInput(name, str(in.Cluster, "spec", "endpoint"),
		strings.TrimPrefix(str(in.Cluster, "spec", "kubernetesVersion"), "v"), opts...)
	if err != nil {
		return nil, err
	}

	typ := machine.TypeWorker
	if in.Role == "controlplane" {
		typ = machine.TypeControlPlane
	}

	cfg, err := gen.Config(typ)
	if err != nil {
		return nil, err
	}

	cfg, err = ichorSettings(cfg, preset, mirrors, in.Install)
	if err != nil {
		return nil, err
	}

	out := configpatcher.WithConfig(cfg)

	for _, p := range Select(in.Patches, str(in.Cluster, "metadata", "name"), in.Role, in.Machine) {
		pname := str(p, "metadata", "name")

		patch, err := configpatcher.LoadPatch([]byte(str(p, "spec", "patch")))
		if err != nil {
			return nil, &PatchError{pname, err}
		}

		if out, err = configpatcher.Apply(out, []configpatcher.Patch{patch}); err != nil {
			return nil, &PatchError{pname, err}
		}

		// A JSON 6902 patch leaves bytes; loading them checks that the result is a configuration.
		if _, err = out.Config(); err != nil {
			return nil, &PatchError{pname, err}
		}
	}

	final, err := out.Config()
	if err != nil {
		return nil, err
	}

	data, err := final.EncodeBytes(encoder.WithComments(encoder.CommentsDisabled))
	if err != nil {
		return nil, err
	}

	return data, nil
}

// ichorSettings sets what the generator has no option for: no CNI under Ichor's Cilium and the
// none preset (machinery v1.14 dropped WithClusterCNIConfig; from contract 1.14 the CNI is the
// KubeFlannelCNIConfig document, so no CNI is no such document), kube-proxy off under Ichor's
// Cilium, the node's wipe flag, and a mirror's overridePath and skipFallback.
//
//nolint:gocyclo,cyclop
func ichorSettings(cfg coreconfig.Provider, preset string, mirrors map[string]any, inst Install) (coreconfig.Provider, error) {
	var docs []configdoc.Document

	noCNI := preset == "cilium" || preset == "none"

	for _, d := range cfg.Clone().Documents() {
		switch t := d.(type) {
		case *v1alpha1.Config:
			if noCNI && t.ClusterConfig.ClusterNetwork != nil {
				t.ClusterConfig.ClusterNetwork.CNI = &v1alpha1.CNIConfig{CNIName: "none"} //nolint:staticcheck // contracts before 1.14
			}

			if preset == "cilium" && t.ClusterConfig.ClusterNetwork != nil { // before 1.14 (the legacy kube-proxy fields)
				if t.ClusterConfig.ProxyConfig == nil {
					t.ClusterConfig.ProxyConfig = &v1alpha1.ProxyConfig{} //nolint:staticcheck
				}

				t.ClusterConfig.ProxyConfig.Disabled = new(true) //nolint:staticcheck
			}

			if inst.Wipe && t.MachineConfig.MachineInstall != nil {
				t.MachineConfig.MachineInstall.InstallWipe = new(true) //nolint:staticcheck
			}
		case *k8s.KubeFlannelCNIConfigV1Alpha1:
			if noCNI {
				continue
			}
		case *k8s.KubeProxyConfigV1Alpha1:
			if preset == "cilium" {
				t.ProxyEnabled = new(false)
			}
		case *runtime.UnattendedInstallConfigV1Alpha1:
			if inst.Wipe {
				t.ProvisioningSpec.Wipe = new(true)
			}
		case *cri.RegistryMirrorConfigV1Alpha1:
			m, _ := mirrors[t.MetaName].(map[string]any) //nolint:errcheck
			if b, ok := m["skipFallback"].(bool); ok && b {
				t.RegistrySkipFallback = new(true)
			}

			if b, ok := m["overridePath"].(bool); ok && b {
				for i := range t.RegistryEndpoints {
					t.RegistryEndpoints[i].EndpointOverridePath = new(true)
				}
			}
		}

		docs = append(docs, d)
	}

	return container.New(docs...)
}

// Select returns the patches of the cluster that apply to the role and machine, in the order
// the controller applies them: layer cluster, role, machine; within a layer by spec.order, then
// by name.
func Select(patches []map[string]any, cluster, role, machineName string) []map[string]any {
	rank := map[string]int{"cluster": 0, "role": 1, "machine": 2}

	var out []map[string]any

	for _, p := range patches {
		if str(p, "spec", "cluster") != cluster {
			continue
		}

		switch str(p, "spec", "layer") {
		case "cluster":
		case "role":
			if str(p, "spec", "role") != role {
				continue
			}
		case "machine":
			if machineName == "" || str(p, "spec", "machine") != machineName {
				continue
			}
		default:
			continue
		}

		out = append(out, p)
	}

	slices.SortStableFunc(out, func(a, b map[string]any) int {
		if d := rank[str(a, "spec", "layer")] - rank[str(b, "spec", "layer")]; d != 0 {
			return d
		}

		if d := num(a, "spec", "order") - num(b, "spec", "order"); d != 0 {
			return d
		}

		return strings.Compare(str(a, "metadata", "name"), str(b, "metadata", "name"))
	})

	return out
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
	case nil:
		return ""
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

func num(m map[string]any, path ...string) int {
	switch v := lookup(m, path...).(type) {
	case int:
		return v
	case int64:
		return int(v)
	case float64:
		return int(v)
	default:
		return 0
	}
}

func list(m map[string]any, path ...string) []any {
	l, _ := lookup(m, path...).([]any) //nolint:errcheck

	return l
}
