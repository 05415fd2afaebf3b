package oracle_test

import (
	"errors"
	"os"
	"path/filepath"
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
