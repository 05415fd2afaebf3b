package kubelab

import "time"

// ObjectMeta is the subset of metav1.ObjectMeta the lab uses.
type ObjectMeta struct {
	Name              string            `json:"name,omitempty"`
	Namespace         string            `json:"namespace,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
	Generation        int64             `json:"generation,omitempty"`
	ResourceVersion   string            `json:"resourceVersion,omitempty"`
	UID               string            `json:"uid,omitempty"`
	CreationTimestamp string            `json:"creationTimestamp,omitempty"`
}

// Condition has the shape of metav1.Condition.
type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"` // True, False, Unknown
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
	LastTransitionTime string `json:"lastTransitionTime"`
	Reason             string `json:"reason"`
	Message            string `json:"message"`
}

// Condition types and statuses of the Ichor API that the lab reports.
const (
	CondReady        = "Ready"
	CondAdoptionHeld = "AdoptionHeld"
	True             = "True"
	False            = "False"
)

// Secret is a core/v1 Secret (data values are base64 in JSON: []byte does that).
type Secret struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   ObjectMeta        `json:"metadata"`
	Type       string            `json:"type,omitempty"`
	Data       map[string][]byte `json:"data,omitempty"`
}

// Namespace is a core/v1 Namespace.
type NamespaceObj struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   ObjectMeta `json:"metadata"`
}

// TalosCluster mirrors deploy/crds/ichor.maesh.dev_talosclusters.yaml.
type TalosCluster struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Metadata   ObjectMeta          `json:"metadata"`
	Spec       TalosClusterSpec    `json:"spec"`
	Status     *TalosClusterStatus `json:"status,omitempty"`
}

type TalosClusterSpec struct {
	TalosVersion      string           `json:"talosVersion"`
	KubernetesVersion string           `json:"kubernetesVersion"`
	Endpoint          string           `json:"endpoint"`
	ClusterName       string           `json:"clusterName,omitempty"`
	VersionContract   string           `json:"versionContract,omitempty"`
	ControlPlane      ControlPlaneSpec `json:"controlPlane"`
	CNI               *CNISpec         `json:"cni,omitempty"`
	Registries        *RegistriesSpec  `json:"registries,omitempty"`
	Discovery         *DiscoverySpec   `json:"discovery,omitempty"`
	SecretsBundleRef  SecretsBundleRef `json:"secretsBundleRef"`
}

type ControlPlaneSpec struct {
	Count int `json:"count"`
}

type CNISpec struct {
	Preset string      `json:"preset,omitempty"` // cilium, unmanaged, none
	Cilium *CiliumSpec `json:"cilium,omitempty"`
}

type CiliumSpec struct {
	Values map[string]any `json:"values,omitempty"`
}

type RegistriesSpec struct {
	Mirrors map[string]RegistryMirror `json:"mirrors,omitempty"`
}

type RegistryMirror struct {
	Endpoints    []string `json:"endpoints,omitempty"`
	OverridePath bool     `json:"overridePath,omitempty"`
	SkipFallback bool     `json:"skipFallback,omitempty"`
}

type DiscoverySpec struct {
	Addresses []string `json:"addresses,omitempty"`
}

type SecretsBundleRef struct {
	Name string `json:"name"`
	Key  string `json:"key,omitempty"` // default bundle.yaml
}

// BundleKey is the default key of the bundle Secret.
const BundleKey = "bundle.yaml"

type TalosClusterStatus struct {
	Phase              string      `json:"phase,omitempty"`
	ObservedGeneration int64       `json:"observedGeneration,omitempty"`
	Conditions         []Condition `json:"conditions,omitempty"`
}

// TalosMachine mirrors deploy/crds/ichor.maesh.dev_talosmachines.yaml.
type TalosMachine struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Metadata   ObjectMeta          `json:"metadata"`
	Spec       TalosMachineSpec    `json:"spec"`
	Status     *TalosMachineStatus `json:"status,omitempty"`
}

// Approval values.
const (
	ApprovalPending  = "Pending"
	ApprovalApproved = "Approved"
	ApprovalRejected = "Rejected"
)

type TalosMachineSpec struct {
	Cluster  string           `json:"cluster"`
	Approval string           `json:"approval,omitempty"`
	Role     string           `json:"role,omitempty"`
	Address  string           `json:"address,omitempty"`
	Identity *MachineIdentity `json:"identity,omitempty"`
	Install  *MachineInstall  `json:"install,omitempty"`
}

type MachineIdentity struct {
	UUID   string   `json:"uuid,omitempty"`
	Serial string   `json:"serial,omitempty"`
	MACs   []string `json:"macs,omitempty"`
}

type MachineInstall struct {
	Disk  string `json:"disk,omitempty"`
	Image string `json:"image,omitempty"`
	Wipe  bool   `json:"wipe"`
}

type TalosMachineStatus struct {
	ObservedGeneration     int64            `json:"observedGeneration,omitempty"`
	MaintenanceFingerprint string           `json:"maintenanceFingerprint,omitempty"`
	DiscoveredDisks        []DiscoveredDisk `json:"discoveredDisks,omitempty"`
	DiscoveredLinks        []DiscoveredLink `json:"discoveredLinks,omitempty"`
	Conditions             []Condition      `json:"conditions,omitempty"`
}

type DiscoveredDisk struct {
	Name    string `json:"name,omitempty"`
	DevPath string `json:"devPath,omitempty"`
	Size    int64  `json:"size,omitempty"`
	Model   string `json:"model,omitempty"`
	Serial  string `json:"serial,omitempty"`
	Type    string `json:"type,omitempty"`
}

type DiscoveredLink struct {
	Name          string `json:"name,omitempty"`
	PermanentAddr string `json:"permanentAddr,omitempty"`
	HardwareAddr  string `json:"hardwareAddr,omitempty"`
}

// TalosMachineList is the list reply.
type TalosMachineList struct {
	Metadata struct {
		Continue string `json:"continue,omitempty"`
	} `json:"metadata"`
	Items []TalosMachine `json:"items"`
}

// TalosClusterList is the list reply.
type TalosClusterList struct {
	Items []TalosCluster `json:"items"`
}

// FindCondition returns the condition of type t, or nil.
func FindCondition(conds []Condition, t string) *Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// SetCondition returns conds with c set (added or replaced). LastTransitionTime is kept when the
// status does not change, else set to now.
func SetCondition(conds []Condition, c Condition, now time.Time) []Condition {
	out := make([]Condition, 0, len(conds)+1)
	replaced := false
	for _, old := range conds {
		if old.Type != c.Type {
			out = append(out, old)
			continue
		}
		replaced = true
		if old.Status == c.Status && old.LastTransitionTime != "" {
			c.LastTransitionTime = old.LastTransitionTime
		}
		if c.LastTransitionTime == "" {
			c.LastTransitionTime = now.UTC().Format(time.RFC3339)
		}
		out = append(out, c)
	}
	if !replaced {
		if c.LastTransitionTime == "" {
			c.LastTransitionTime = now.UTC().Format(time.RFC3339)
		}
		out = append(out, c)
	}
	return out
}

// RemoveCondition returns conds without type t.
func RemoveCondition(conds []Condition, t string) []Condition {
	out := make([]Condition, 0, len(conds))
	for _, c := range conds {
		if c.Type != t {
			out = append(out, c)
		}
	}
	return out
}
