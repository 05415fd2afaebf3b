package kubelab

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

// Seed is what lab-seed creates, in creation order.
type Seed struct {
	Namespace NamespaceObj
	Secrets   []Secret
	Clusters  []TalosCluster
	Machines  []TalosMachine
	// ClusterAPI: the objects of the clusters whose own Kubernetes API the lab's apiserver
	// stands in for (cluster_api.go); RemoveCRDs when one of them has kubernetes.crds false.
	ClusterAPI []KubeObject `json:",omitempty"`
	RemoveCRDs bool         `json:",omitempty"`
	Warnings   []string
}

// BundleSecretName is the name of a cluster's bundle Secret.
func BundleSecretName(cluster string) string { return cluster + "-secrets" }

// BuildSeed makes the objects for every sim cluster with "ichor": true: its bundle Secret
// (<cluster>-secrets, key bundle.yaml = the secretsBundle file), its TalosCluster, and a
// TalosMachine per node of it whose "ichor" is "approved" or "pending". readFile reads the bundle
// files (os.ReadFile in lab-seed).
func BuildSeed(sim *Sim, readFile func(string) ([]byte, error)) (*Seed, error) {
	s := &Seed{Namespace: NamespaceObj{APIVersion: "v1", Kind: "Namespace", Metadata: ObjectMeta{Name: Namespace}}}
	ichor := map[string]bool{}
	for _, c := range sim.Clusters {
		if !c.Ichor {
			continue
		}
		ichor[c.Name] = true
		bundle, err := readFile(c.SecretsBundle)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: secrets bundle: %w", c.Name, err)
		}
		labels := map[string]string{LabelCluster: c.Name}
		s.Secrets = append(s.Secrets, Secret{
			APIVersion: "v1", Kind: "Secret",
			Metadata: ObjectMeta{Name: BundleSecretName(c.Name), Namespace: Namespace, Labels: labels},
			Type:     "Opaque",
			Data:     map[string][]byte{BundleKey: bundle},
		})
		cp := 0
		for _, n := range sim.Nodes {
			if n.Cluster == c.Name && n.Role == "controlplane" && n.Ichor == "approved" {
				cp++
			}
		}
		if cp < 1 {
			s.Warnings = append(s.Warnings, fmt.Sprintf("cluster %s has no approved control plane; controlPlane.count set to 1", c.Name))
			cp = 1
		}
		s.Clusters = append(s.Clusters, TalosCluster{
			APIVersion: APIVersion, Kind: "TalosCluster",
			Metadata: ObjectMeta{Name: c.Name, Namespace: Namespace, Labels: labels},
			Spec: TalosClusterSpec{
				TalosVersion:      c.TalosVersion,
				KubernetesVersion: c.KubernetesVersion,
				Endpoint:          c.Endpoint,
				VersionContract:   c.Contract,
				ControlPlane:      ControlPlaneSpec{Count: cp},
				CNI:               &CNISpec{Preset: "cilium"},
				SecretsBundleRef:  SecretsBundleRef{Name: BundleSecretName(c.Name), Key: BundleKey},
			},
		})
	}
	for _, n := range sim.Nodes {
		var approval string
		switch n.Ichor {
		case "approved":
			approval = ApprovalApproved
		case "pending":
			approval = ApprovalPending
		default:
			continue
		}
		if !ichor[n.Cluster] {
			s.Warnings = append(s.Warnings, fmt.Sprintf("node %s is %s but its cluster %q is not an Ichor cluster; skipped", n.Name, n.Ichor, n.Cluster))
			continue
		}
		m := TalosMachine{
			APIVersion: APIVersion, Kind: "TalosMachine",
			Metadata: ObjectMeta{Name: n.Name, Namespace: Namespace, Labels: map[string]string{LabelCluster: n.Cluster}},
			Spec: TalosMachineSpec{
				Cluster:  n.Cluster,
				Approval: approval,
				Role:     n.Role,
				Address:  n.Address,
				Install:  &MachineInstall{Disk: n.InstallDisk, Image: n.InstallImage, Wipe: false},
			},
		}
		if n.UUID != "" || n.Serial != "" || len(n.MACs) > 0 {
			m.Spec.Identity = &MachineIdentity{UUID: n.UUID, Serial: n.Serial, MACs: append([]string(nil), n.MACs...)}
		}
		s.Machines = append(s.Machines, m)
	}
	sort.SliceStable(s.Machines, func(i, j int) bool { return s.Machines[i].Metadata.Name < s.Machines[j].Metadata.Name })
	s.ClusterAPI, s.RemoveCRDs = ClusterAPIObjects(sim, time.Now())
	return s, nil
}

// Apply creates the seed's objects; an object that exists already is left as it is.
// logf reports each object ("created" or "exists").
func (s *Seed) Apply(ctx context.Context, c *Client, logf func(string, ...any)) error {
	create := func(path, what string, obj any) error {
		err := c.Create(ctx, path, obj, nil)
		switch {
		case err == nil:
			logf("created %s", what)
		case IsAlreadyExists(err):
			logf("exists  %s", what)
		default:
			return fmt.Errorf("create %s: %w", what, err)
		}
		return nil
	}
	if err := create(Path("", "v1", "", "namespaces", ""), "namespace/"+Namespace, s.Namespace); err != nil {
		return err
	}
	for _, o := range s.Secrets {
		if err := create(Path("", "v1", o.Metadata.Namespace, "secrets", ""), "secret/"+o.Metadata.Name, o); err != nil {
			return err
		}
	}
	for _, o := range s.Clusters {
		if err := create(Path(Group, Version, o.Metadata.Namespace, "talosclusters", ""), "taloscluster/"+o.Metadata.Name, o); err != nil {
			return err
		}
	}
	for _, o := range s.Machines {
		if err := create(Path(Group, Version, o.Metadata.Namespace, "talosmachines", ""), "talosmachine/"+o.Metadata.Name, o); err != nil {
			return err
		}
	}
	return ApplyClusterAPI(ctx, c, s.ClusterAPI, s.RemoveCRDs, logf)
}

// WriteLabJSON writes out = the sim description at simPath plus "kubeconfig", "state" and
// "kubeApiserver" (written to a temporary file, then renamed).
func WriteLabJSON(simPath, out, kubeconfig, state, server string) error {
	raw, err := os.ReadFile(simPath)
	if err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("%s: %w", simPath, err)
	}
	for k, v := range map[string]string{"kubeconfig": kubeconfig, "state": state, "kubeApiserver": server} {
		b, _ := json.Marshal(v)
		m[k] = b
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

// TalosconfigExports returns "export TALOSCONFIG_<CLUSTER>='path'" for every sim cluster with a
// talosconfig; CLUSTER is the name upper-cased with every other character than A-Z, 0-9 as "_".
func TalosconfigExports(sim *Sim) []string {
	var out []string
	for _, c := range sim.Clusters {
		if c.Talosconfig == "" {
			continue
		}
		out = append(out, "export "+EnvName("TALOSCONFIG_", c.Name)+"="+ShellQuote(c.Talosconfig))
	}
	return out
}

// EnvName is prefix + name upper-cased, other characters than A-Z and 0-9 replaced by "_".
func EnvName(prefix, name string) string {
	b := []byte(strings.ToUpper(name))
	for i, ch := range b {
		if (ch < 'A' || ch > 'Z') && (ch < '0' || ch > '9') {
			b[i] = '_'
		}
	}
	return prefix + string(b)
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
