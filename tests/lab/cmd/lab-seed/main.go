// lab-seed creates the Ichor objects that talos-sim's description calls for: for each cluster
// with "ichor": true its bundle Secret, its TalosCluster and a TalosMachine per node that Ichor
// knows (approved or pending). Idempotent: objects that exist are left alone.
//
//	lab-seed --kubeconfig STATE/kubeconfig --sim STATE/sim.json [--lab-json STATE/lab.json --state STATE]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"ichor.lab/internal/kubelab"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file (one file)")
	kubeContext := flag.String("context", "", "kubeconfig context (default: current-context)")
	simPath := flag.String("sim", "", "talos-sim's description (STATE/sim.json)")
	labJSON := flag.String("lab-json", "", "also write this file: sim.json plus kubeconfig, state and kubeApiserver")
	state := flag.String("state", "", "lab state directory (recorded in --lab-json)")
	dryRun := flag.Bool("dry-run", false, "print the objects as JSON on stdout; write nothing")
	exports := flag.Bool("exports", false, "print \"export TALOSCONFIG_<CLUSTER>=...\" lines (every sim cluster) on stdout")
	flag.Parse()
	if *simPath == "" || (*kubeconfig == "" && !*dryRun) || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: lab-seed --kubeconfig FILE --sim STATE/sim.json [--lab-json FILE --state DIR] [--dry-run]")
		os.Exit(2)
	}
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "lab-seed: "+format+"\n", args...) }
	fail := func(err error) { logf("%v", err); os.Exit(1) }

	sim, err := kubelab.LoadSim(*simPath)
	if err != nil {
		fail(err)
	}
	seed, err := kubelab.BuildSeed(sim, os.ReadFile)
	if err != nil {
		fail(err)
	}
	for _, w := range seed.Warnings {
		logf("warning: %s", w)
	}
	if *dryRun {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(seed); err != nil {
			fail(err)
		}
		return
	}
	kc, err := kubelab.LoadKubeconfig(*kubeconfig, *kubeContext)
	if err != nil {
		fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := seed.Apply(ctx, kc, logf); err != nil {
		fail(err)
	}
	logf("%d cluster(s), %d machine(s), %d object(s) of clusters' own APIs", len(seed.Clusters), len(seed.Machines), len(seed.ClusterAPI))
	if *labJSON != "" {
		abs := func(p string) string {
			if a, err := filepath.Abs(p); err == nil {
				return a
			}
			return p
		}
		st := *state
		if st != "" {
			st = abs(st)
		}
		if err := kubelab.WriteLabJSON(*simPath, *labJSON, abs(*kubeconfig), st, kc.Server); err != nil {
			fail(err)
		}
	}
	if *exports {
		for _, line := range kubelab.TalosconfigExports(sim) {
			fmt.Println(line)
		}
	}
}
