// lab-controller is the lab's stand-in for Ichor's controller. Every interval it reads the
// TalosMachines of the namespace and, for each approved machine, reports AdoptionHeld=True and
// Ready=False while it carries ichor.maesh.dev/hold-apply; once released, Ready=True when the node
// answers the authenticated Talos API (identity from the cluster's bundle Secret) with the
// cluster's ID and the machine's UUID, else Ready=False (NodeUnreachable, IdentityMismatch, ...).
// It writes only the status subresource (and, standing in for Ichor's discovery, re-records the
// maintenance fingerprint and inventory of a pending machine whose node was reset, with an Event:
// kubelab/discovery.go). The one thing it applies to a node is the provisioning
// of a released approved machine found in maintenance mode (kubelab/provision.go: the maintenance
// certificate pinned by status.maintenanceFingerprint, a configuration generated for the cluster).
//
//	lab-controller --kubeconfig STATE/kubeconfig [--sim STATE/sim.json] [--once]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"ichor.lab/internal/kubelab"
	"ichor.lab/internal/kubelab/talosread"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file (one file)")
	kubeContext := flag.String("context", "", "kubeconfig context (default: current-context)")
	simPath := flag.String("sim", "", "talos-sim's description (STATE/sim.json): node ports by address; optional")
	namespace := flag.String("namespace", kubelab.Namespace, "namespace of the Ichor objects")
	once := flag.Bool("once", false, "one pass, then exit (non-zero if the pass failed)")
	interval := flag.Duration("interval", 500*time.Millisecond, "time between passes")
	nodeTimeout := flag.Duration("node-timeout", 3*time.Second, "bound of each node read")
	flag.Parse()
	if *kubeconfig == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: lab-controller --kubeconfig FILE [--sim STATE/sim.json] [--namespace NS] [--once]")
		os.Exit(2)
	}
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s lab-controller: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
	}
	kc, err := kubelab.LoadKubeconfig(*kubeconfig, *kubeContext)
	if err != nil {
		logf("%v", err)
		os.Exit(3)
	}
	kc.Namespace = *namespace
	ctl := &kubelab.Controller{Kube: kc, Reader: &talosread.Reader{}, Logf: logf, NodeTimeout: *nodeTimeout}
	ctl.Provisioner = &kubelab.Provisioner{Client: kubelab.TalosMaintenance{}} // approved machines in maintenance mode
	ctl.Discovery = &kubelab.Discovery{Client: kubelab.TalosMaintenance{}}     // pending machines: refresh (discovery.go)
	if *simPath != "" {
		if ctl.Sim, err = kubelab.LoadSim(*simPath); err != nil {
			logf("%v", err)
			os.Exit(3)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *once {
		if err := ctl.Pass(ctx); err != nil {
			logf("%v", err)
			os.Exit(1)
		}
		return
	}
	logf("watching talosmachines in %s at %s every %s", kc.Namespace, kc.Server, *interval)
	lastErr := ""
	for {
		err := ctl.Pass(ctx)
		if ctx.Err() != nil {
			logf("stopped")
			return
		}
		switch {
		case err != nil && err.Error() != lastErr:
			logf("%v", err)
			lastErr = err.Error()
		case err == nil && lastErr != "":
			logf("pass ok again")
			lastErr = ""
		}
		select {
		case <-ctx.Done():
			logf("stopped")
			return
		case <-time.After(*interval):
		}
	}
}
