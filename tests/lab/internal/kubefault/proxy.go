// Package kubefault is the lab's fault-injecting proxy for the Kubernetes API
// (cmd/kube-fault-proxy): an HTTPS reverse proxy on loopback in front of the lab's kube-apiserver.
// It forwards every request with its own client identity, logs each request, and on the rules a
// test sets answers with a Status error instead of the apiserver, kills the tool under test between
// two of its writes, or goes away after a write. The faults thus come from outside the tool under
// test, at a chosen request, and the product carries no test hooks.
package kubefault

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options are the fixed parts of a proxy.
type Options struct {
	Upstream    *url.URL    // the apiserver, https://127.0.0.1:PORT
	UpstreamTLS *tls.Config // its CA and the client certificate every request is forwarded with
	ServerCert  tls.Certificate
	Listen      string        // default 127.0.0.1:0
	LogPath     string        // request log, one JSON Entry a line; "" for none
	PidWait     time.Duration // how long a kill waits for a pid in the pid file (default 10 s)
	Logf        func(format string, args ...any)
}

// Entry is one line of the request log, written when the answer is decided, before the client
// gets it (a kill's entry before the SIGKILL).
type Entry struct {
	Seq      int    `json:"seq"`
	Time     string `json:"time"`
	Method   string `json:"method"`
	Path     string `json:"path"`
	Query    string `json:"query,omitempty"`
	Status   int    `json:"status"`             // what the client got (0: nothing, the connection dropped)
	Upstream int    `json:"upstream,omitempty"` // the apiserver's status, when the request went there
	Write    int    `json:"write,omitempty"`    // the number of this committed write
	Fault    string `json:"fault,omitempty"`    // "kill pid=N", "gone", "fail 409 AlreadyExists (rule 1)", ...
	Ms       int64  `json:"ms"`
}

// State is what GET /state reports.
type State struct {
	Writes   int    `json:"writes"`
	Requests int    `json:"requests"`
	Gone     bool   `json:"gone"`
	Config   Config `json:"config"`
}

// Proxy is one running proxy. Create with New, then Start.
type Proxy struct {
	opts Options
	rp   *httputil.ReverseProxy
	srv  *http.Server
	addr string

	mu      sync.Mutex
	cfg     Config
	writes  int
	matches []int
	seq     int
	gone    bool
	ln      net.Listener
	conns   map[net.Conn]struct{}
	entries []Entry
	logFile *os.File
	closed  bool
}

type ctxKey int

const (
	connKey ctxKey = iota
	infoKey
)

// reqInfo follows one request from the handler to ModifyResponse or the error handler.
type reqInfo struct {
	entry Entry
	start time.Time
	rule  *Rule // a Forward rule that fired
	ruleN int
}

var errKilled = errors.New("kube-fault-proxy: the caller was killed")

// New checks the configuration and prepares a proxy (nothing listens yet).
func New(opts Options, cfg Config) (*Proxy, error) {
	if opts.Upstream == nil {
		return nil, errors.New("no upstream")
	}
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:0"
	}
	if opts.PidWait == 0 {
		opts.PidWait = 10 * time.Second
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Proxy{opts: opts, cfg: cfg, matches: make([]int, len(cfg.Fail)), conns: map[net.Conn]struct{}{}}
	if opts.LogPath != "" {
		f, err := os.OpenFile(opts.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		p.logFile = f
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(opts.Upstream)
			pr.Out.Host = opts.Upstream.Host
		},
		Transport: &http.Transport{
			TLSClientConfig:     opts.UpstreamTLS,
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     90 * time.Second,
		},
		FlushInterval:  -1, // watches stream through at once
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.errorHandler,
		ErrorLog:       nil,
	}
	p.srv = &http.Server{
		Handler:           http.HandlerFunc(p.serve),
		ReadHeaderTimeout: 30 * time.Second,
		// HTTP/1.1 only: one request per connection at a time, so "gone" and the kill act on
		// exactly the connection that carried the write.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey, c)
		},
		ConnState: p.connState,
		ErrorLog:  nil,
	}
	return p, nil
}

// Start listens on the configured loopback address and serves in the background.
func (p *Proxy) Start() error {
	ln, err := net.Listen("tcp", p.opts.Listen)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.addr = ln.Addr().String()
	p.mu.Unlock()
	p.serveOn(ln)
	return nil
}

func (p *Proxy) serveOn(ln net.Listener) {
	tln := tls.NewListener(ln, &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{p.opts.ServerCert},
		NextProtos:   []string{"http/1.1"},
	})
	p.mu.Lock()
	p.ln = tln
	p.gone = false
	p.mu.Unlock()
	go func() { _ = p.srv.Serve(tln) }()
}

// URL is https://127.0.0.1:PORT.
func (p *Proxy) URL() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return "https://" + p.addr
}

// Close stops the proxy for good.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.srv.Close()
	if p.logFile != nil {
		_ = p.logFile.Close()
	}
	return err
}

// SetConfig replaces the faults and resets the write and match counters.
func (p *Proxy) SetConfig(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cfg, p.writes, p.matches = cfg, 0, make([]int, len(cfg.Fail))
	return nil
}

// State is the counters and the configuration.
func (p *Proxy) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return State{Writes: p.writes, Requests: p.seq, Gone: p.gone, Config: p.cfg}
}

// Entries is the request log so far.
func (p *Proxy) Entries() []Entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Entry(nil), p.entries...)
}

// Up listens again on the same address after "gone".
func (p *Proxy) Up() error {
	p.mu.Lock()
	gone, addr := p.gone, p.addr
	p.mu.Unlock()
	if !gone {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	p.serveOn(ln)
	p.opts.Logf("listening again on %s", addr)
	return nil
}

func (p *Proxy) connState(c net.Conn, s http.ConnState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch s {
	case http.StateNew:
		p.conns[c] = struct{}{}
	case http.StateClosed, http.StateHijacked:
		delete(p.conns, c)
	}
}

// goAway closes the listener and every connection but keep (whose answer is still to be sent;
// it closes after it, by Connection: close).
func (p *Proxy) goAway(keep net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gone = true
	if p.ln != nil {
		_ = p.ln.Close()
	}
	for c := range p.conns {
		if c != keep {
			_ = c.Close()
		}
	}
}

func (p *Proxy) record(e Entry) {
	line, _ := json.Marshal(e)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.entries = append(p.entries, e)
	if p.logFile != nil {
		_, _ = p.logFile.Write(append(line, '\n'))
	}
}

func (ri *reqInfo) finish(status int, fault string) Entry {
	ri.entry.Status = status
	if fault != "" {
		if ri.entry.Fault != "" {
			ri.entry.Fault += "; "
		}
		ri.entry.Fault += fault
	}
	ri.entry.Ms = time.Since(ri.start).Milliseconds()
	return ri.entry
}

func isDryRun(q url.Values) bool {
	for _, v := range q["dryRun"] {
		if v != "" {
			return true
		}
	}
	return false
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	ri := &reqInfo{start: time.Now()}
	ri.entry = Entry{Time: ri.start.UTC().Format(time.RFC3339Nano), Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery}
	var fired *Rule
	firedN := 0
	p.mu.Lock()
	p.seq++
	ri.entry.Seq = p.seq
	// Every rule counts the requests it matches, whether or not an earlier rule answered them.
	for i := range p.cfg.Fail {
		rule := &p.cfg.Fail[i]
		if !rule.matches(r.Method, r.URL.Path) {
			continue
		}
		p.matches[i]++
		if fired == nil && (rule.Nth == 0 || rule.Nth == p.matches[i]) {
			copied := *rule
			fired, firedN = &copied, i+1
		}
	}
	p.mu.Unlock()
	if fired != nil && !fired.Forward {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 4<<20))
		name := ""
		if r.Method == http.MethodPost {
			name = nameInBody(body)
		}
		st := injectedStatus(fired, r.Method, r.URL.Path, name)
		p.record(ri.finish(fired.Status, fmt.Sprintf("fail %d %s (rule %d)", fired.Status, fired.Reason, firedN)))
		writeStatus(w, st, fired.RetryAfter)
		return
	}
	ri.rule, ri.ruleN = fired, firedN
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), infoKey, ri)))
}

func writeStatus(w http.ResponseWriter, st status, retryAfter int) {
	b, _ := json.Marshal(st)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Kube-Fault-Proxy", "injected")
	if retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(retryAfter))
	}
	w.WriteHeader(st.Code)
	_, _ = w.Write(b)
}

func (p *Proxy) modifyResponse(resp *http.Response) error {
	ri, _ := resp.Request.Context().Value(infoKey).(*reqInfo)
	if ri == nil {
		return nil
	}
	ri.entry.Upstream = resp.StatusCode
	req := resp.Request
	committed := isWriteMethod(req.Method) && resp.StatusCode >= 200 && resp.StatusCode < 300 && !isDryRun(req.URL.Query())
	kill, gone := false, false
	var pidFile string
	p.mu.Lock()
	if committed {
		p.writes++
		ri.entry.Write = p.writes
		kill = p.cfg.KillAfterWrites == p.writes
		gone = p.cfg.GoneAfterWrites == p.writes
		pidFile = p.cfg.KillPidFile
	}
	p.mu.Unlock()

	if kill {
		pid, err := waitPid(pidFile, p.opts.PidWait)
		if err == nil {
			err = syscall.Kill(pid, 0)
		}
		if err != nil {
			// The answer goes through: the test sees its caller survive, and the log says why.
			ri.entry.Fault = "kill failed: " + err.Error()
			p.opts.Logf("write %d: kill failed: %v", ri.entry.Write, err)
		} else {
			p.record(ri.finish(0, fmt.Sprintf("kill pid=%d", pid)))
			p.opts.Logf("write %d (%s %s -> %d): SIGKILL to pid %d", ri.entry.Write, req.Method, req.URL.Path, resp.StatusCode, pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
			if !waitDead(pid, 5*time.Second) {
				p.opts.Logf("pid %d still alive 5 s after SIGKILL", pid)
			}
			return errKilled
		}
	}
	if ri.rule != nil {
		_ = resp.Body.Close()
		st := injectedStatus(ri.rule, req.Method, req.URL.Path, "")
		b, _ := json.Marshal(st)
		resp.StatusCode = st.Code
		resp.Status = fmt.Sprintf("%d %s", st.Code, http.StatusText(st.Code))
		resp.Header = http.Header{}
		resp.Header.Set("Content-Type", "application/json")
		resp.Header.Set("X-Kube-Fault-Proxy", "injected")
		if ri.rule.RetryAfter > 0 {
			resp.Header.Set("Retry-After", strconv.Itoa(ri.rule.RetryAfter))
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		ri.finish(0, fmt.Sprintf("fail %d %s after forwarding (rule %d)", st.Code, ri.rule.Reason, ri.ruleN))
	}
	fault := ""
	if gone {
		conn, _ := req.Context().Value(connKey).(net.Conn)
		p.goAway(conn)
		resp.Header.Set("Connection", "close")
		fault = "gone"
		p.opts.Logf("write %d (%s %s -> %d): gone until POST /up", ri.entry.Write, req.Method, req.URL.Path, resp.StatusCode)
	}
	p.record(ri.finish(resp.StatusCode, fault))
	return nil
}

func (p *Proxy) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errKilled) {
		panic(http.ErrAbortHandler) // drops the connection: the killed caller gets no answer
	}
	ri, _ := r.Context().Value(infoKey).(*reqInfo)
	if r.Context().Err() != nil { // the client went away first
		if ri != nil {
			p.record(ri.finish(0, "client gone: "+err.Error()))
		}
		return
	}
	st := status{Kind: "Status", APIVersion: "v1", Status: "Failure", Code: http.StatusBadGateway,
		Message: "kube-fault-proxy: the apiserver did not answer: " + err.Error()}
	if ri != nil {
		p.record(ri.finish(http.StatusBadGateway, "upstream error: "+err.Error()))
	}
	writeStatus(w, st, 0)
}

// waitPid reads a positive pid from file, waiting up to d for it to be written.
func waitPid(file string, d time.Duration) (int, error) {
	deadline := time.Now().Add(d)
	for {
		b, err := os.ReadFile(file)
		if err == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && pid > 1 && pid != os.Getpid() {
				return pid, nil
			}
		}
		if time.Now().After(deadline) {
			if err != nil {
				return 0, fmt.Errorf("no pid in %s after %s: %w", file, d, err)
			}
			return 0, fmt.Errorf("no pid in %s after %s (content %q)", file, d, strings.TrimSpace(string(b)))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitDead waits until pid is gone or a zombie (its parent, not this proxy, reaps it).
func waitDead(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		// "PID (COMM) STATE ...": COMM may hold spaces and parentheses; the state follows the last ')'.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X') {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
}
