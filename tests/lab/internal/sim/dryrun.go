package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	coreconfig "github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/configdiff"
	"github.com/siderolabs/talos/pkg/machinery/textdiff"
	"gopkg.in/yaml.v3"
)

// dryRunDiff is machined's generateDiff (internal/app/machined/internal/server/v1alpha1): the
// running configuration against the one sent, both encoded by Talos's own encoder without
// comments, as a unified diff; "No changes." when they encode the same.
//
// A configuration that the lab's machinery cannot load (documents it has no type for, docs/lab.md)
// has no Talos encoding here: both sides are then decoded and encoded again as plain YAML
// documents (keys sorted, four spaces), so that the diff still shows changed values and not the
// formatting of whoever wrote the bytes.
//
// currentProvider, when not nil, is the running configuration already loaded (machined holds it
// loaded; Node.runningProvider keeps it so); nil loads it from current.
func dryRunDiff(current, sent []byte, sentProvider, currentProvider coreconfig.Provider) (string, error) {
	var (
		diff    string
		err     error
		loadErr error
	)

	if currentProvider == nil {
		currentProvider, loadErr = LoadsWithConfigloader(current)
	}

	if sentProvider != nil && loadErr == nil {
		diff, err = configdiff.DiffConfigs(currentProvider, sentProvider)
	} else {
		var a, b string

		if a, err = plainYAML(current); err == nil {
			if b, err = plainYAML(sent); err == nil {
				diff, err = textdiff.Diff(a, b)
			}
		}
	}

	if err != nil {
		return "", err
	}

	if diff == "" {
		diff = "No changes."
	}

	return "Config diff:\n\n" + diff, nil
}

// runningProvider is the node's running configuration current loaded by Talos's configloader:
// the one loaded for an earlier dry run when the configuration has not changed since, else loaded
// now and kept. nil when the configloader cannot load it (dryRunDiff then diffs plain YAML).
// Providers are not changed once loaded, so dry runs share one.
func (n *Node) runningProvider(current []byte) coreconfig.Provider {
	s := n.sim

	s.mu.Lock()
	p, from := n.running, n.runningFrom
	s.mu.Unlock()

	if p != nil && bytes.Equal(from, current) {
		return p
	}

	p, err := LoadsWithConfigloader(current)
	if err != nil {
		return nil
	}

	s.mu.Lock()
	n.running, n.runningFrom = p, current
	s.mu.Unlock()

	return p
}

func plainYAML(data []byte) (string, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))

	var out bytes.Buffer

	for first := true; ; {
		var d any

		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			return out.String(), nil
		}

		if err != nil {
			return "", fmt.Errorf("parse machine configuration: %w", err)
		}

		if d == nil {
			continue
		}

		if !first {
			out.WriteString("---\n")
		}

		first = false

		enc := yaml.NewEncoder(&out)
		enc.SetIndent(4)

		if err := enc.Encode(d); err != nil {
			return "", err
		}

		if err := enc.Close(); err != nil {
			return "", err
		}
	}
}
