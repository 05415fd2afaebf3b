// Package kubelab is the Kubernetes side of the lab: a small REST client of the Kubernetes API
// (net/http + encoding/json, no client-go), the Ichor objects of deploy/crds, the seed that
// lab-seed writes from talos-sim's description (sim.json), and the reconcile loop of
// lab-controller, the stand-in for Ichor's controller.
package kubelab

// Namespace is where every Ichor object lives.
const Namespace = "ichor-system"

// Group and version of the Ichor API.
const (
	Group      = "ichor.maesh.dev"
	Version    = "v1alpha1"
	APIVersion = Group + "/" + Version
)

// Annotations and labels of the Ichor API that the lab uses.
const (
	AnnotationHoldApply   = "ichor.maesh.dev/hold-apply"
	AnnotationAllowDelete = "ichor.maesh.dev/allow-delete"
	AnnotationTrustFP     = "ichor.maesh.dev/trust-maintenance-fingerprint"
	LabelCluster          = "ichor.maesh.dev/cluster"
)
