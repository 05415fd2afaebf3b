// Command talos-sim serves simulated Talos nodes for the lab (see docs/lab.md).
//
//	talos-sim --scenario FILE --state DIR
//	talos-sim --bench-nodes N --state DIR
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"ichor.lab/internal/sim"
)

func main() {
	os.Exit(run())
}

func run() int {
	var (
		scenario    = flag.String("scenario", "", "scenario YAML file")
		state       = flag.String("state", "", "state folder: bundles, talosconfigs, machine configs, sim.json")
		benchNodes  = flag.Int("bench-nodes", 0, "generator mode: one cluster \"bench\" with N workers on 127.0.1.1 and up (1..256)")
		controlAddr = flag.String("control", "127.0.0.1:0", "address of the control API")
	)

	flag.Parse()

	logger := log.New(os.Stderr, "talos-sim: ", log.Ltime|log.Lmicroseconds)

	if *state == "" || (*scenario == "") == (*benchNodes == 0) {
		fmt.Fprintln(os.Stderr, "usage: talos-sim (--scenario FILE | --bench-nodes N) --state DIR")

		return 2
	}

	var (
		sc  *sim.Scenario
		err error
	)

	if *benchNodes > 0 {
		sc, err = sim.BenchScenario(*benchNodes)
	} else {
		sc, err = sim.LoadScenario(*scenario)
	}

	if err != nil {
		logger.Printf("error: %v", err)

		return 2
	}

	s, err := sim.New(sim.Options{StateDir: *state, Scenario: sc, Logger: logger, ControlAddr: *controlAddr})
	if err != nil {
		logger.Printf("error: %v", err)

		return 1
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)

	if err := s.Start(); err != nil {
		logger.Printf("error: %v", err)
		s.Close()

		return 1
	}

	sig := <-sigs
	logger.Printf("%s: stopping", sig)
	s.Close()

	return 0
}
