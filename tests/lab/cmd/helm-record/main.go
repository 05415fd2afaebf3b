// helm-record puts a Cilium into the lab's apiserver, as the CNI cases of docs/lab.md need it:
//
//	helm-record --kubeconfig FILE --record [--release cilium] [--chart cilium] [--version 1.19.6] [--values FILE]
//	helm-record --kubeconfig FILE --objects [--guide] [--values FILE] [--manager talos|helm|cilium]
//
// --record writes the next revision of a Helm release record with Helm's own storage code
// (helm.sh/helm/v3 pkg/storage over driver.Secrets), the values file as the record's user values.
// --objects creates the Cilium objects (ConfigMap cilium-config, DaemonSet cilium, Deployment
// cilium-operator, hubble-relay and hubble-ui when enabled) as chart 1.19.6 renders them for the
// fields the adopt preflight compares, from the chart defaults, the Talos guide's values
// (--guide) and the values file; with --record they carry Helm's markers. Both may be given.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"ichor.lab/internal/ciliumlab"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file")
	kubeContext := flag.String("context", "", "kubeconfig context (default: current-context)")
	namespace := flag.String("namespace", "kube-system", "release and object namespace")
	record := flag.Bool("record", false, "write a Helm release record")
	objects := flag.Bool("objects", false, "create the Cilium objects")
	releaseName := flag.String("release", "cilium", "release name")
	chartName := flag.String("chart", "cilium", "chart name")
	version := flag.String("version", ciliumlab.ChartVersion, "chart version")
	valuesFile := flag.String("values", "", "values file (YAML): the record's values and the objects' overrides")
	guide := flag.Bool("guide", false, "objects: start from the Talos guide's values (Ichor's owned values)")
	manager := flag.String("manager", "", "objects: field manager (default: helm with --record, else talos)")
	flag.Parse()
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "helm-record: "+format+"\n", args...)
		os.Exit(1)
	}
	if *kubeconfig == "" || (!*record && !*objects) || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: helm-record --kubeconfig FILE (--record | --objects) [--values FILE] [flags]")
		os.Exit(2)
	}
	var values map[string]any
	if *valuesFile != "" {
		data, err := os.ReadFile(*valuesFile)
		if err != nil {
			fail("%v", err)
		}
		if err := yaml.Unmarshal(data, &values); err != nil {
			fail("%s: %v", *valuesFile, err)
		}
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: *kubeconfig}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: *kubeContext}).ClientConfig()
	if err != nil {
		fail("%v", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fail("%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if *record {
		rel, err := ciliumlab.WriteRecord(cs.CoreV1().Secrets(*namespace), ciliumlab.Record{
			Release: *releaseName, Namespace: *namespace, Chart: *chartName, ChartVersion: *version,
			Values: values}, time.Now())
		if err != nil {
			fail("%v", err)
		}
		fmt.Fprintf(os.Stderr, "helm-record: %s/sh.helm.release.v1.%s.v%d (chart %s %s, %d top-level values)\n",
			*namespace, rel.Name, rel.Version, *chartName, *version, len(values))
	}
	if *objects {
		user := values
		if *guide {
			user = ciliumlab.Merge(ciliumlab.GuideValues(), values)
		}
		var helm *ciliumlab.HelmMeta
		m := *manager
		if *record {
			helm = &ciliumlab.HelmMeta{Release: *releaseName, Namespace: *namespace}
			if m == "" {
				m = "helm"
			}
		} else if m == "" {
			m = "talos"
		}
		objs := ciliumlab.Render(user, *namespace, helm)
		if err := ciliumlab.Apply(ctx, cs, objs, m); err != nil {
			fail("%v", err)
		}
		fmt.Fprintf(os.Stderr, "helm-record: Cilium objects in %s (%d Deployments, field manager %s)\n",
			*namespace, len(objs.Deployments), m)
	}
}
