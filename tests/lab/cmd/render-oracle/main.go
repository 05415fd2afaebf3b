// Command render-oracle writes the reference machine configurations of the render golden data
// (tests/golden/render/): for each case of a cases file, Talos's own generator and configpatcher
// through internal/oracle. tests/golden/render/regenerate.sh runs it.
//
//	render-oracle --cases tests/golden/render/cases.yaml --out tests/golden/render/expected
//	render-oracle --new-bundle tests/golden/render/secrets.yaml
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"gopkg.in/yaml.v3"

	"ichor.lab/internal/oracle"
)

type caseFile struct {
	Bundle   string                    `yaml:"bundle"`
	Clusters map[string]map[string]any `yaml:"clusters"`
	Patches  []map[string]any          `yaml:"patches"`
	Cases    []struct {
		Name     string         `yaml:"name"`
		Cluster  string         `yaml:"cluster"`
		Role     string         `yaml:"role"`
		Machine  string         `yaml:"machine"`
		Contract string         `yaml:"contract"`
		Install  oracle.Install `yaml:"install"`
		Patches  []string       `yaml:"patches"`
	} `yaml:"cases"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "render-oracle:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		cases     = flag.String("cases", "", "cases file")
		out       = flag.String("out", "", "output folder: <case>.yaml, or <case>.error when the render fails")
		newBundle = flag.String("new-bundle", "", "write a new secrets bundle (contract 1.13) to this file and exit")
	)

	flag.Parse()

	if *newBundle != "" {
		b, err := secrets.NewBundle(secrets.NewClock(), config.TalosVersion1_13)
		if err != nil {
			return err
		}

		data, err := yaml.Marshal(b)
		if err != nil {
			return err
		}

		return os.WriteFile(*newBundle, data, 0o600)
	}

	if *cases == "" || *out == "" {
		return errors.New("usage: render-oracle --cases FILE --out DIR | --new-bundle FILE")
	}

	data, err := os.ReadFile(*cases)
	if err != nil {
		return err
	}

	var cf caseFile
	if err = yaml.Unmarshal(data, &cf); err != nil {
		return fmt.Errorf("%s: %w", *cases, err)
	}

	bundle, err := secrets.LoadBundle(filepath.Join(filepath.Dir(*cases), cf.Bundle))
	if err != nil {
		return err
	}

	byName := map[string]map[string]any{}
	for _, p := range cf.Patches {
		byName[str(p, "metadata", "name")] = p
	}

	if err = os.MkdirAll(*out, 0o755); err != nil {
		return err
	}

	for _, c := range cf.Cases {
		cluster, ok := cf.Clusters[c.Cluster]
		if !ok {
			return fmt.Errorf("case %s: no cluster %q", c.Name, c.Cluster)
		}

		var patches []map[string]any

		for _, n := range c.Patches {
			p, ok := byName[n]
			if !ok {
				return fmt.Errorf("case %s: no patch %q", c.Name, n)
			}

			patches = append(patches, p)
		}

		rendered, err := oracle.Render(oracle.Input{
			Cluster: cluster, Role: c.Role, Machine: c.Machine, Install: c.Install,
			Contract: c.Contract, Patches: patches, Bundle: bundle,
		})

		base := filepath.Join(*out, c.Name)
		_ = os.Remove(base + ".yaml")
		_ = os.Remove(base + ".error")

		var pe *oracle.PatchError

		switch {
		case errors.As(err, &pe):
			err = os.WriteFile(base+".error", []byte(pe.Error()+"\n"), 0o644)
		case err != nil:
			return fmt.Errorf("case %s: %w", c.Name, err)
		default:
			err = os.WriteFile(base+".yaml", rendered, 0o644)
		}

		if err != nil {
			return err
		}
	}

	return nil
}

func str(m map[string]any, path ...string) string {
	var cur any = m

	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return ""
		}

		cur = mm[p]
	}

	s, _ := cur.(string) //nolint:errcheck

	return s
}
