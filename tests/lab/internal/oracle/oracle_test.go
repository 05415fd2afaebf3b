package oracle_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ichor.lab/internal/oracle"
)

// The committed render golden data is what the oracle writes today: a change of the oracle or of
// the cases must come with tests/golden/render/regenerate.sh.
func TestGoldenDataIsCurrent(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "golden", "render")

	cf, err := oracle.LoadCases(filepath.Join(dir, "cases.yaml"))
	if err != nil {
		t.Fatal(err)
	}

	for _, c := range cf.Cases {
		got, err := cf.Render(c)

		var pe *oracle.PatchError

		switch {
		case errors.As(err, &pe):
			want, rerr := os.ReadFile(filepath.Join(dir, "expected", c.Name+".error"))
			if rerr != nil || string(want) != pe.Error()+"\n" {
				t.Errorf("%s: error %q, committed %q (%v): run tests/golden/render/regenerate.sh", c.Name, pe.Error(), want, rerr)
			}
		case err != nil:
			t.Errorf("%s: %v", c.Name, err)
		default:
			want, rerr := os.ReadFile(filepath.Join(dir, "expected", c.Name+".yaml"))
			if rerr != nil || string(want) != string(got) {
				t.Errorf("%s: the oracle's output differs from the committed one (%v): run tests/golden/render/regenerate.sh", c.Name, rerr)
			}
		}
	}
}

// The committed layout14 gap report is what the oracle measures today: when the approximation or
// Talos's own 1.14 output changes, tests/golden/render/regenerate.sh rewrites it and docs/render.md
// says what remains.
func TestLayout14GapIsCurrent(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "golden", "render")

	cf, err := oracle.LoadCases(filepath.Join(dir, "cases.yaml"))
	if err != nil {
		t.Fatal(err)
	}

	got, err := cf.GapReport()
	if err != nil {
		t.Fatal(err)
	}

	if !strings.Contains(got, "document only Talos writes") {
		t.Errorf("no gap found; if the approximation is gone, remove this test: %s", got)
	}

	want, err := os.ReadFile(filepath.Join(dir, "layout14-gap.txt"))
	if err != nil || string(want) != got {
		t.Errorf("the gap report differs from the committed one (%v): run tests/golden/render/regenerate.sh\n%s", err, got)
	}

	n := 0

	for _, c := range cf.Cases {
		data, err := cf.RenderTalos14(c)
		if err != nil {
			t.Fatal(err)
		}

		if data == nil {
			continue
		}

		n++

		committed, err := os.ReadFile(filepath.Join(dir, "talos14", c.Name+".yaml"))
		if err != nil || string(committed) != string(data) {
			t.Errorf("%s: Talos's own 1.14 output differs from talos14/%s.yaml (%v): run tests/golden/render/regenerate.sh", c.Name, c.Name, err)
		}
	}

	if n == 0 {
		t.Error("no case at contract 1.14")
	}
}
