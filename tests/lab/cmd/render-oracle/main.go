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

		return os.WriteFile(*newBundle, data, 0o644) // test-only secrets, committed
	}

	if *cases == "" || *out == "" {
		return errors.New("usage: render-oracle --cases FILE --out DIR | --new-bundle FILE")
	}

	cf, err := oracle.LoadCases(*cases)
	if err != nil {
		return err
	}

	if err = os.MkdirAll(*out, 0o755); err != nil {
		return err
	}

	for _, c := range cf.Cases {
		rendered, err := cf.Render(c)

		base := filepath.Join(*out, c.Name)
		_ = os.Remove(base + ".yaml")  //nolint:errcheck
		_ = os.Remove(base + ".error") //nolint:errcheck

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
