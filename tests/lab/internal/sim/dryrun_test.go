package sim

import (
	"strings"
	"testing"
)

// Documents the lab's machinery cannot load (no type for their kind) are diffed as plain
// YAML: the changed value shows, the writer's formatting and key order do not.
func TestDryRunDiffOfDocumentsTheMachineryCannotLoad(t *testing.T) {
	current := []byte("apiVersion: v1alpha1\nkind: LabOnlyConfig\nb: 1\na: {x: \"1\"}\n")
	same := []byte("apiVersion: v1alpha1\nkind: LabOnlyConfig\na:\n  x: \"1\"\nb: 1\n")
	changed := []byte("apiVersion: v1alpha1\nkind: LabOnlyConfig\na:\n  x: \"2\"\nb: 1\n")

	if _, err := LoadsWithConfigloader(current); err == nil {
		t.Fatal("the machinery loads the test documents: the test would not reach the fallback")
	}

	got, err := dryRunDiff(current, same, nil, nil)
	if err != nil || got != "Config diff:\n\nNo changes." {
		t.Errorf("same documents: %q, %v", got, err)
	}

	got, err = dryRunDiff(current, changed, nil, nil)
	if err != nil || !strings.Contains(got, "\n-    x: \"1\"\n+    x: \"2\"\n") || strings.Contains(got, "\n-b: 1") {
		t.Errorf("changed value: %q, %v", got, err)
	}
}
