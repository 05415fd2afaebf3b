package kubelab

import (
	"encoding/json"
	"fmt"
	"os"
)

// Sim is talos-sim's description of what it runs (STATE/sim.json).
type Sim struct {
	Control  string       `json:"control"`
	Pid      int          `json:"pid"`
	Clusters []SimCluster `json:"clusters"`
	Nodes    []SimNode    `json:"nodes"`
}

type SimCluster struct {
	Name              string `json:"name"`
	Contract          string `json:"contract"`
	TalosVersion      string `json:"talosVersion"`
	KubernetesVersion string `json:"kubernetesVersion"`
	Endpoint          string `json:"endpoint"`
	ClusterID         string `json:"clusterID"`
	SecretsBundle     string `json:"secretsBundle"`
	Talosconfig       string `json:"talosconfig"`
	ReaderTalosconfig string `json:"readerTalosconfig"`
	Ichor             bool   `json:"ichor"`
	Etcd              string `json:"etcd"`
	// Kubernetes: the lab's apiserver stands in for this cluster's own API (nil: it does not).
	Kubernetes *SimKubernetes `json:"kubernetes,omitempty"`
}

// SimKubernetes is a scenario cluster's kubernetes block, defaults filled in by talos-sim.
type SimKubernetes struct {
	Nodes bool   `json:"nodes"`
	CRDs  bool   `json:"crds"`
	CNI   string `json:"cni"` // flannel, none, cilium-inline, cilium-helm, calico
	// CiliumValues: the Cilium install's Helm values (cilium-inline, cilium-helm).
	CiliumValues map[string]any `json:"ciliumValues,omitempty"`
}

type SimNode struct {
	Name         string   `json:"name"`
	Address      string   `json:"address"`
	Port         int      `json:"port"`
	Cluster      string   `json:"cluster"`
	Role         string   `json:"role"`
	Mode         string   `json:"mode"` // configured, maintenance, ...
	Hostname     string   `json:"hostname"`
	UUID         string   `json:"uuid"`
	Serial       string   `json:"serial"`
	MACs         []string `json:"macs"`
	InstallDisk  string   `json:"installDisk"`
	InstallImage string   `json:"installImage"`
	TalosVersion string   `json:"talosVersion"`
	Contract     string   `json:"contract"`
	Ichor        string   `json:"ichor"`    // approved, pending, none
	KubeNode     string   `json:"kubeNode"` // ready, notready, absent; "" without kubernetes.nodes
}

// LoadSim reads sim.json.
func LoadSim(path string) (*Sim, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Sim
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}

// Cluster returns the cluster named name, or nil.
func (s *Sim) Cluster(name string) *SimCluster {
	for i := range s.Clusters {
		if s.Clusters[i].Name == name {
			return &s.Clusters[i]
		}
	}
	return nil
}

// NodeByAddress returns the node listening on address, or nil.
func (s *Sim) NodeByAddress(address string) *SimNode {
	for i := range s.Nodes {
		if s.Nodes[i].Address == address {
			return &s.Nodes[i]
		}
	}
	return nil
}
