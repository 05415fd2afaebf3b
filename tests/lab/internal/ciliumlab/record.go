// Package ciliumlab puts a Cilium into the lab's apiserver: a Helm release record written by
// Helm's own storage code (helm.sh/helm/v3 pkg/storage over driver.Secrets, never by hand), and
// the Cilium objects as chart 1.19.6 renders them for the fields the adopt preflight compares
// (docs/cni.md). Nothing runs: there is no kubelet, so the objects only exist.
package ciliumlab

import (
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	helmtime "helm.sh/helm/v3/pkg/time"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// Record is what a release record is written from.
type Record struct {
	Release      string         // release name, e.g. cilium
	Namespace    string         // release namespace
	Chart        string         // chart name
	ChartVersion string         // chart version
	Values       map[string]any // the user-supplied values (the record's config); nil for none
	Manifest     string         // the rendered manifest the record keeps (optional)
}

// WriteRecord stores the next revision of the release through Helm's storage, as helm install
// (first revision) or helm upgrade (a later one: the deployed revision becomes superseded) does.
func WriteRecord(secrets corev1client.SecretInterface, r Record, now time.Time) (*release.Release, error) {
	if r.Release == "" || r.Chart == "" || r.ChartVersion == "" {
		return nil, fmt.Errorf("helm record: release, chart and chart version are required")
	}
	store := storage.Init(driver.NewSecrets(secrets))
	revision := 1
	if last, err := store.Last(r.Release); err == nil {
		revision = last.Version + 1
		if last.Info != nil && last.Info.Status == release.StatusDeployed {
			last.Info.Status = release.StatusSuperseded
			if err := store.Update(last); err != nil {
				return nil, fmt.Errorf("helm record: supersede revision %d: %w", last.Version, err)
			}
		}
	} else if err != driver.ErrReleaseNotFound {
		return nil, fmt.Errorf("helm record: read history: %w", err)
	}
	ts := helmtime.Time{Time: now}
	rel := &release.Release{
		Name:      r.Release,
		Namespace: r.Namespace,
		Version:   revision,
		Chart: &chart.Chart{Metadata: &chart.Metadata{
			APIVersion: chart.APIVersionV2,
			Name:       r.Chart,
			Version:    r.ChartVersion,
			AppVersion: r.ChartVersion,
		}},
		Config:   r.Values,
		Manifest: r.Manifest,
		Info: &release.Info{
			FirstDeployed: ts,
			LastDeployed:  ts,
			Status:        release.StatusDeployed,
			Description:   "Install complete",
		},
	}
	if revision > 1 {
		rel.Info.Description = "Upgrade complete"
	}
	if err := store.Create(rel); err != nil {
		return nil, fmt.Errorf("helm record: %w", err)
	}
	return rel, nil
}
