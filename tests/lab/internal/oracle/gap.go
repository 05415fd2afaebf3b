package oracle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Gap14 is what separates the lab's layout14 approximation from Talos's own contract 1.14 for
// one case: the documents only one of them writes, and the v1alpha1 fields (leaf paths) only one
// of them keeps in the v1alpha1 document. It is written as text, one line per finding, so that
// the committed report (tests/golden/render/layout14-gap.txt) shows what remains of the
// approximation and fails the oracle's test when either side changes.
// A case at another contract has no gap ("").
func (cf *Cases) Gap14(c Case) (string, error) {
	in, err := cf.input(c)
	if err != nil || Contract(in) != "1.14" {
		return "", err
	}

	approx, err := Render(in)
	if err != nil {
		return "", err
	}

	talos, err := RenderTalos(in)
	if err != nil {
		return "", err
	}

	a, err := outline(approx)
	if err != nil {
		return "", err
	}

	t, err := outline(talos)
	if err != nil {
		return "", err
	}

	var out strings.Builder

	for _, k := range only(t.kinds, a.kinds) {
		fmt.Fprintf(&out, "%s: document only Talos writes: %s\n", c.Name, k)
	}

	for _, k := range only(a.kinds, t.kinds) {
		fmt.Fprintf(&out, "%s: document only the approximation writes: %s\n", c.Name, k)
	}

	for _, p := range only(a.v1alpha1, t.v1alpha1) {
		fmt.Fprintf(&out, "%s: v1alpha1 field Talos does not write: %s\n", c.Name, p)
	}

	for _, p := range only(t.v1alpha1, a.v1alpha1) {
		fmt.Fprintf(&out, "%s: v1alpha1 field only Talos writes: %s\n", c.Name, p)
	}

	for _, k := range both(a.kinds, t.kinds) {
		af, tf := a.fields[k], t.fields[k]

		for _, p := range keysOf(tf) {
			switch av, ok := af[p]; {
			case !ok:
				fmt.Fprintf(&out, "%s: %s: field only Talos writes: %s\n", c.Name, k, p)
			case av != tf[p]:
				fmt.Fprintf(&out, "%s: %s: field written differently: %s\n", c.Name, k, p)
			}
		}

		for _, p := range keysOf(af) {
			if _, ok := tf[p]; !ok {
				fmt.Fprintf(&out, "%s: %s: field Talos does not write: %s\n", c.Name, k, p)
			}
		}
	}

	return out.String(), nil
}

type docOutline struct {
	kinds    []string                     // "Kind" or "Kind/name" of every typed document
	fields   map[string]map[string]string // per typed document: leaf path -> value as YAML
	v1alpha1 []string                     // leaf paths of the v1alpha1 document
}

func outline(data []byte) (docOutline, error) {
	o := docOutline{fields: map[string]map[string]string{}}

	dec := yaml.NewDecoder(bytes.NewReader(data))

	for {
		var d map[string]any

		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}

		if err != nil {
			return o, err
		}

		if k, ok := d["kind"].(string); ok {
			if n, ok := d["name"].(string); ok {
				k += "/" + n
			}

			o.kinds = append(o.kinds, k)

			var paths []string

			leaves("", d, &paths)

			o.fields[k] = map[string]string{}

			for _, p := range paths {
				if p == "apiVersion" || p == "kind" || p == "name" {
					continue
				}

				v, _ := yaml.Marshal(at(d, p)) //nolint:errcheck

				o.fields[k][p] = string(v)
			}

			continue
		}

		leaves("", d, &o.v1alpha1)
	}

	slices.Sort(o.kinds)
	slices.Sort(o.v1alpha1)

	return o, nil
}

func leaves(prefix string, v any, out *[]string) {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		if v != nil {
			*out = append(*out, prefix)
		}

		return
	}

	for k, c := range m {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}

		leaves(p, c, out)
	}
}

// only returns the items of a that b lacks (both sorted).
func only(a, b []string) []string {
	var out []string

	for _, x := range a {
		if _, found := slices.BinarySearch(b, x); !found {
			out = append(out, x)
		}
	}

	return out
}

// GapReport is Gap14 of every case, in case order: the committed layout14-gap.txt.
func (cf *Cases) GapReport() (string, error) {
	var out strings.Builder

	out.WriteString("# What separates the lab's layout14 approximation from Talos's own contract 1.14\n" +
		"# (machinery v1.14.1), per 1.14 case of cases.yaml. Written by render-oracle --gap\n" +
		"# (regenerate.sh); docs/render.md, \"Intended differences\", says what it means.\n")

	for _, c := range cf.Cases {
		g, err := cf.Gap14(c)
		if err != nil {
			return "", fmt.Errorf("case %s: %w", c.Name, err)
		}

		out.WriteString(g)
	}

	return out.String(), nil
}

// both returns the items of a that b has too (both sorted).
func both(a, b []string) []string {
	var out []string

	for _, x := range a {
		if _, found := slices.BinarySearch(b, x); found {
			out = append(out, x)
		}
	}

	return out
}

func keysOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}

	slices.Sort(out)

	return out
}

// at is the value at a leaf path of leaves (keys joined by dots; a key may hold dots itself, so
// the path is matched key by key against the mapping).
func at(v any, path string) any {
	for path != "" {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}

		found := false

		for k, c := range m {
			if path == k || strings.HasPrefix(path, k+".") {
				v, path, found = c, strings.TrimPrefix(strings.TrimPrefix(path, k), "."), true

				break
			}
		}

		if !found {
			return nil
		}
	}

	return v
}

// RenderTalos14 is RenderTalos of a case at contract 1.14, or nil for a case at another contract.
func (cf *Cases) RenderTalos14(c Case) ([]byte, error) {
	in, err := cf.input(c)
	if err != nil || Contract(in) != "1.14" {
		return nil, err
	}

	return RenderTalos(in)
}
