package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stateDir is shared by every test of the package so that a cluster's secrets bundle (an
// RSA-4096 key inside, about a second to make) is generated once per cluster name.
var stateDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "talos-sim-test-")
	if err != nil {
		panic(err)
	}

	stateDir = dir
	code := m.Run()

	os.RemoveAll(dir) //nolint:errcheck
	os.Exit(code)
}

// startSim starts a simulator for a scenario and stops it when the test ends.
func startSim(t *testing.T, scenario string) *Sim {
	t.Helper()

	sc, err := ParseScenario([]byte(scenario))
	if err != nil {
		t.Fatalf("scenario: %v", err)
	}

	var logs bytes.Buffer

	s, err := New(Options{StateDir: stateDir, Scenario: sc, Logger: log.New(&logs, "", log.Lmicroseconds)})
	if err != nil {
		t.Fatalf("new: %v", err)
	}

	if err := s.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}

	t.Cleanup(func() {
		s.Close()

		if t.Failed() {
			t.Logf("simulator log:\n%s", logs.String())
		}
	})

	return s
}

func clusterFile(cluster, name string) string {
	return filepath.Join(stateDir, "clusters", cluster, name)
}

func control(t *testing.T, s *Sim, method, path, body string, out any) int {
	t.Helper()

	req, err := http.NewRequest(method, s.ControlURL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}

	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}

	defer resp.Body.Close() //nolint:errcheck

	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}

	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}

	return resp.StatusCode
}

func nodeState(t *testing.T, s *Sim, name string) NodeState {
	t.Helper()

	var st NodeState

	if code := control(t, s, http.MethodGet, "/nodes/"+name, "", &st); code != http.StatusOK {
		t.Fatalf("GET /nodes/%s: %d", name, code)
	}

	return st
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()

	deadline := time.Now().Add(timeout)

	for time.Now().Before(deadline) {
		if cond() {
			return
		}

		time.Sleep(20 * time.Millisecond)
	}

	t.Fatalf("timed out waiting for %s", what)
}
