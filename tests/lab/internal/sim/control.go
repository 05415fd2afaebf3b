package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// The control API (HTTP/JSON on 127.0.0.1) lets tests look at nodes and change them out of band.

func (s *Sim) controlHandler() http.Handler {
	mux := http.NewServeMux()

	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /sim", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, s.Info()) })
	mux.HandleFunc("GET /nodes", s.handleNodes)
	mux.HandleFunc("GET /nodes/{name}", s.withNode(s.handleNode))
	mux.HandleFunc("GET /nodes/{name}/calls", s.withNode(s.handleCalls))
	mux.HandleFunc("DELETE /nodes/{name}/calls", s.withNode(s.handleClearCalls))
	mux.HandleFunc("GET /nodes/{name}/faults", s.withNode(s.handleFaults))
	mux.HandleFunc("POST /nodes/{name}/faults", s.withNode(s.handleAddFault))
	mux.HandleFunc("DELETE /nodes/{name}/faults", s.withNode(s.handleClearFaults))
	mux.HandleFunc("POST /nodes/{name}/etcd", s.withNode(s.handleNodeEtcd))
	mux.HandleFunc("POST /nodes/{name}/reset-behaviour", s.withNode(s.handleResetBehaviour))
	mux.HandleFunc("POST /nodes/{name}/config", s.withNode(s.handleConfigPatch))
	mux.HandleFunc("GET /nodes/{name}/config", s.withNode(s.handleGetConfig))
	mux.HandleFunc("POST /nodes/{name}/staged", s.withNode(s.handleStage))
	mux.HandleFunc("DELETE /nodes/{name}/staged", s.withNode(s.handleUnstage))
	mux.HandleFunc("GET /nodes/{name}/meta", s.withNode(s.handleMeta))
	mux.HandleFunc("POST /nodes/{name}/mode", s.withNode(s.handleMode))
	mux.HandleFunc("POST /nodes/{name}/cni", s.withNode(s.handleCNI))
	mux.HandleFunc("GET /clusters", s.handleClusters)
	mux.HandleFunc("POST /clusters/{name}/etcd", s.handleClusterEtcd)

	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)

	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v) //nolint:errcheck,errchkjson
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, map[string]string{"error": err.Error()})
}

func (s *Sim) withNode(h func(http.ResponseWriter, *http.Request, *Node)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n := s.nodeByName(r.PathValue("name"))
		if n == nil {
			writeError(w, http.StatusNotFound, fmt.Errorf("%w: %q", errNoSuchNode, r.PathValue("name")))

			return
		}

		h(w, r, n)
	}
}

func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()

	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("request body: %w", err)
	}

	return nil
}

func (s *Sim) handleNodes(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()

	out := make([]NodeState, 0, len(s.nodes))
	for _, n := range s.nodes {
		out = append(out, n.stateLocked())
	}
	s.mu.Unlock()

	writeJSON(w, http.StatusOK, out)
}

func (s *Sim) handleNode(w http.ResponseWriter, _ *http.Request, n *Node) {
	s.mu.Lock()
	st := n.stateLocked()
	s.mu.Unlock()

	writeJSON(w, http.StatusOK, st)
}

func (s *Sim) handleCalls(w http.ResponseWriter, _ *http.Request, n *Node) {
	s.mu.Lock()

	out := make([]CallRecord, 0, len(n.calls))
	for _, c := range n.calls {
		out = append(out, *c)
	}
	s.mu.Unlock()

	writeJSON(w, http.StatusOK, out)
}

func (s *Sim) handleClearCalls(w http.ResponseWriter, _ *http.Request, n *Node) {
	s.mu.Lock()
	n.calls = nil
	s.mu.Unlock()

	w.WriteHeader(http.StatusNoContent)
}

func (s *Sim) handleFaults(w http.ResponseWriter, _ *http.Request, n *Node) {
	s.mu.Lock()
	st := n.stateLocked()
	s.mu.Unlock()

	writeJSON(w, http.StatusOK, st.Faults)
}

func (s *Sim) handleAddFault(w http.ResponseWriter, r *http.Request, n *Node) {
	var f Fault

	if err := decodeBody(r, &f); err != nil {
		writeError(w, http.StatusBadRequest, err)

		return
	}

	if err := f.Validate(); err != nil {
		writeError(w, http.StatusBadRequest, err)

		return
	}

	s.mu.Lock()
	n.faults = append(n.faults, &f)
	added := f
	s.mu.Unlock()

	s.log.Printf("%s: fault %s on %s", n.Spec.Name, f.Kind, f.Method)
	writeJSON(w, http.StatusCreated, &added)
}

func (s *Sim) handleClearFaults(w http.ResponseWriter, _ *http.Request, n *Node) {
	s.mu.Lock()
	n.faults = nil
	s.mu.Unlock()

	w.WriteHeader(http.StatusNoContent)
}

type etcdRequest struct {
	State string `json:"state"`
}

// setEtcdLocked changes the etcd process state of a node; "running" on a cluster that was never
// bootstrapped bootstraps it.
func (n *Node) setEtcdLocked(state string) {
	n.etcd = state

	if state == EtcdRunning {
		n.etcdStopped = false

		if n.cluster != nil && !n.cluster.bootstrapped {
			n.cluster.bootstrapped = true
		}
	}

	if n.cluster != nil {
		n.cluster.reconcileLocked()
	}

	n.kickLocked()
}

func (s *Sim) handleNodeEtcd(w http.ResponseWriter, r *http.Request, n *Node) {
	var req etcdRequest

	if err := decodeBody(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)

		return
	}

	if !oneOf(req.State, EtcdRunning, EtcdDown, EtcdHang) {
		writeError(w, http.StatusBadRequest, fmt.Errorf("state %q is not one of running, down, hang", req.State))

		return
	}

	s.mu.Lock()
	n.setEtcdLocked(req.State)
	st := n.stateLocked()
	s.mu.Unlock()

	s.log.Printf("%s: etcd %s", n.Spec.Name, req.State)
	writeJSON(w, http.StatusOK, st)
}

func (s *Sim) handleClusterEtcd(w http.ResponseWriter, r *http.Request) {
	var req etcdRequest

	if err := decodeBody(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)

		return
	}

	if !oneOf(req.State, EtcdRunning, EtcdDown, EtcdHang) {
		writeError(w, http.StatusBadRequest, fmt.Errorf("state %q is not one of running, down, hang", req.State))

		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	var c *Cluster

	for _, cl := range s.clusters {
		if cl.Name == r.PathValue("name") {
			c = cl
		}
	}

	if c == nil {
		writeError(w, http.StatusNotFound, fmt.Errorf("no such cluster: %q", r.PathValue("name")))

		return
	}

	for _, n := range s.nodes {
		if n.cluster == c || (n.cluster == nil && n.ichorCluster == c) {
			n.setEtcdLocked(req.State)
		}
	}

	writeJSON(w, http.StatusOK, c.stateLocked())
}

// ClusterState is the control API's view of a cluster and its etcd.
type ClusterState struct {
	Name         string         `json:"name"`
	Adhoc        bool           `json:"adhoc"`
	ClusterID    string         `json:"clusterID"`
	Bootstrapped bool           `json:"bootstrapped"`
	Quorum       bool           `json:"quorum"`
	Leader       string         `json:"leader"`
	Members      []MemberStatus `json:"members"`
}

// MemberStatus is one etcd member.
type MemberStatus struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Node    string `json:"node"`
	Started bool   `json:"started"`
}

func (c *Cluster) stateLocked() ClusterState {
	st := ClusterState{
		Name: c.Name, Adhoc: c.Adhoc, ClusterID: c.ClusterID, Bootstrapped: c.bootstrapped,
		Quorum: c.hasQuorum(), Leader: memberHex(c.leaderID()), Members: []MemberStatus{},
	}

	for _, m := range c.members {
		st.Members = append(st.Members, MemberStatus{ID: memberHex(m.ID), Name: m.Name, Node: m.Node.Spec.Name, Started: m.started(c)})
	}

	return st
}

func (s *Sim) handleClusters(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()

	out := make([]ClusterState, 0, len(s.clusters))
	for _, c := range s.clusters {
		out = append(out, c.stateLocked())
	}
	s.mu.Unlock()

	writeJSON(w, http.StatusOK, out)
}

type resetBehaviour struct {
	NeverReturn *bool  `json:"neverReturn"`
	RebootDelay string `json:"rebootDelay"`
}

func (s *Sim) handleResetBehaviour(w http.ResponseWriter, r *http.Request, n *Node) {
	var req resetBehaviour

	if err := decodeBody(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)

		return
	}

	var delay time.Duration

	if req.RebootDelay != "" {
		d, err := time.ParseDuration(req.RebootDelay)
		if err != nil || d < 0 {
			writeError(w, http.StatusBadRequest, fmt.Errorf("rebootDelay %q is not a duration", req.RebootDelay))

			return
		}

		delay = d
	}

	s.mu.Lock()
	if req.NeverReturn != nil {
		n.neverReturn = *req.NeverReturn
	}

	if req.RebootDelay != "" {
		n.rebootDelay = delay
	}

	st := n.stateLocked()
	s.mu.Unlock()

	writeJSON(w, http.StatusOK, st)
}

func (s *Sim) handleGetConfig(w http.ResponseWriter, _ *http.Request, n *Node) {
	s.mu.Lock()
	data := n.config
	s.mu.Unlock()

	if data == nil {
		writeError(w, http.StatusNotFound, errors.New("the node has no configuration"))

		return
	}

	w.Header().Set("Content-Type", "application/yaml")
	w.Write(data) //nolint:errcheck
}

// handleStage stages the running configuration with a Talos strategic-merge patch (YAML body) as
// the persistent one, as `talosctl patch mc --mode staged` does: it runs after the next reboot.
func (s *Sim) handleStage(w http.ResponseWriter, r *http.Request, n *Node) {
	patch, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)

		return
	}

	s.mu.Lock()
	current := n.config
	s.mu.Unlock()

	if current == nil {
		writeError(w, http.StatusConflict, errors.New("the node has no configuration"))

		return
	}

	staged, err := ApplyPatch(current, string(patch))
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, err)

		return
	}

	s.mu.Lock()
	n.persistent = staged
	st := n.stateLocked()
	s.mu.Unlock()

	s.log.Printf("%s: configuration staged through the control API", n.Spec.Name)
	writeJSON(w, http.StatusOK, st)
}

// handleUnstage makes the persistent configuration the running one again (as an apply of the
// running one with --mode no-reboot does).
func (s *Sim) handleUnstage(w http.ResponseWriter, _ *http.Request, n *Node) {
	s.mu.Lock()
	n.persistent = n.config
	n.tryEpoch++
	st := n.stateLocked()
	s.mu.Unlock()

	writeJSON(w, http.StatusOK, st)
}

// handleMeta lists the META keys written through the API (key: value as text).
func (s *Sim) handleMeta(w http.ResponseWriter, _ *http.Request, n *Node) {
	s.mu.Lock()
	out := map[string]string{}

	for k, v := range n.meta {
		out[fmt.Sprintf("0x%02x", k)] = string(v)
	}
	s.mu.Unlock()

	writeJSON(w, http.StatusOK, out)
}

// handleConfigPatch changes the node's running configuration out of band with a Talos
// strategic-merge patch (YAML body), as if someone had run `talosctl patch mc --mode no-reboot`.
func (s *Sim) handleConfigPatch(w http.ResponseWriter, r *http.Request, n *Node) {
	patch, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)

		return
	}

	s.mu.Lock()
	current := n.config
	s.mu.Unlock()

	if current == nil {
		writeError(w, http.StatusConflict, errors.New("the node has no configuration"))

		return
	}

	patched, err := ApplyPatch(current, string(patch))
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, err)

		return
	}

	facts, err := ParseConfigFacts(patched)
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, err)

		return
	}

	s.mu.Lock()
	if n.mode == ModeConfigured && facts.HasV1Alpha1 {
		n.applyLiveLocked(patched, facts)
	} else {
		n.config = patched
		n.persistent = patched
		n.configVersion++
	}

	st := n.stateLocked()
	s.mu.Unlock()

	s.log.Printf("%s: configuration patched through the control API", n.Spec.Name)
	writeJSON(w, http.StatusOK, st)
}

type modeRequest struct {
	Mode string `json:"mode"`
}

// handleMode forces a node into a mode: maintenance (as after a STATE wipe), configured (back to
// its scenario configuration), off (stops answering) or on (boots in its current mode).
func (s *Sim) handleMode(w http.ResponseWriter, r *http.Request, n *Node) {
	var req modeRequest

	if err := decodeBody(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)

		return
	}

	switch req.Mode {
	case ModeMaintenance, ModeConfigured, "off", "on":
	default:
		writeError(w, http.StatusBadRequest, fmt.Errorf("mode %q is not one of maintenance, configured, off, on", req.Mode))

		return
	}

	if req.Mode == ModeConfigured && n.scenarioConfig == nil {
		writeError(w, http.StatusConflict, errors.New("the node has no scenario configuration (no cluster)"))

		return
	}

	n.stopServing()

	s.mu.Lock()
	n.epoch++
	n.resetting = false
	n.kickLocked()

	switch req.Mode {
	case ModeMaintenance:
		n.enterMaintenanceLocked()
	case ModeConfigured:
		facts, err := ParseConfigFacts(n.scenarioConfig)
		if err == nil {
			n.setConfiguredLocked(n.scenarioConfig, facts)
			n.installed = true
		}
	case "off":
		n.power = powerOff
		n.stage = "shutting down"
	}

	if n.cluster != nil {
		n.cluster.reconcileLocked()
	}
	s.mu.Unlock()

	if req.Mode != "off" {
		if err := n.boot(); err != nil {
			writeError(w, http.StatusInternalServerError, err)

			return
		}
	}

	s.mu.Lock()
	st := n.stateLocked()
	s.mu.Unlock()

	s.log.Printf("%s: mode %s through the control API", n.Spec.Name, req.Mode)
	writeJSON(w, http.StatusOK, st)
}
