package kubefault

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"ichor.lab/internal/kubelab"
)

// testPKI is a CA with a server certificate for the fake apiserver and an admin client
// certificate, PEM, as tests/lab/kube/start makes them.
type testPKI struct {
	caCert, caKey, adminCert, adminKey []byte
	ca                                 *x509.Certificate
	caPriv                             *ecdsa.PrivateKey
	pool                               *x509.CertPool
}

func newPKI(t *testing.T) *testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	p := &testPKI{ca: ca, caPriv: key, pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	p.caCert = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	kb, _ := x509.MarshalPKCS8PrivateKey(key) // openssl genpkey writes PKCS#8, as the lab's ca.key
	p.caKey = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb})
	p.adminCert, p.adminKey = p.issue(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "lab-admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	return p
}

func (p *testPKI) issue(t *testing.T, tmpl *x509.Certificate) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = big.NewInt(time.Now().UnixNano())
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, key.Public(), p.caPriv)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// seen is one request the fake apiserver received.
type seen struct {
	method, path, user string
}

// fakeAPI is an apiserver stand-in that requires a client certificate of the test CA: POST
// answers 201 with the body, GET 200, PUT to a path with "conflict" 409, other writes 200.
type fakeAPI struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []seen
}

func newFakeAPI(t *testing.T, p *testPKI) *fakeAPI {
	t.Helper()
	f := &fakeAPI{}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user := ""
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			user = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.seen = append(f.seen, seen{r.Method, r.URL.Path, user})
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPost:
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write(body)
		case r.Method == http.MethodPut && strings.Contains(r.URL.Path, "conflict"):
			w.WriteHeader(http.StatusConflict)
			_, _ = io.WriteString(w, `{"kind":"Status","reason":"Conflict","code":409}`)
		default:
			_, _ = io.WriteString(w, `{"kind":"Thing","apiVersion":"v1"}`)
		}
	}))
	serverCert, serverKey := p.issue(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: "kube-apiserver"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	pair, err := tls.X509KeyPair(serverCert, serverKey)
	if err != nil {
		t.Fatal(err)
	}
	f.srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: p.pool}
	f.srv.StartTLS()
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.seen...)
}

type harness struct {
	pki    *testPKI
	api    *fakeAPI
	proxy  *Proxy
	client *http.Client
	dir    string
}

func start(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := &harness{pki: newPKI(t), dir: t.TempDir()}
	h.api = newFakeAPI(t, h.pki)
	up, _ := url.Parse(h.api.srv.URL)
	upTLS, err := UpstreamTLS(h.pki.caCert, h.pki.adminCert, h.pki.adminKey)
	if err != nil {
		t.Fatal(err)
	}
	serving, err := ServingCert(h.pki.caCert, h.pki.caKey)
	if err != nil {
		t.Fatal(err)
	}
	h.proxy, err = New(Options{Upstream: up, UpstreamTLS: upTLS, ServerCert: serving,
		LogPath: filepath.Join(h.dir, "requests.log"), PidWait: 3 * time.Second, Logf: t.Logf}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.proxy.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.proxy.Close() })
	// The client trusts only the test CA: the proxy's certificate is verified, never skipped.
	h.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: h.pki.pool, MinVersion: tls.VersionTLS12},
	}}
	return h
}

const machines = "/apis/ichor.maesh.dev/v1alpha1/namespaces/ichor-system/talosmachines"

func (h *harness) do(t *testing.T, method, path, body string) (*http.Response, []byte, error) {
	t.Helper()
	req, err := http.NewRequest(method, h.proxy.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

func (h *harness) mustDo(t *testing.T, method, path, body string, want int) []byte {
	t.Helper()
	resp, b, err := h.do(t, method, path, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d (%s)", method, path, resp.StatusCode, want, b)
	}
	return b
}

func (h *harness) logLines(t *testing.T) []Entry {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(h.dir, "requests.log"))
	if err != nil {
		t.Fatal(err)
	}
	var out []Entry
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if l == "" {
			continue
		}
		var e Entry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, e)
	}
	return out
}

func obj(name string) string {
	return fmt.Sprintf(`{"apiVersion":"ichor.maesh.dev/v1alpha1","kind":"TalosMachine","metadata":{"name":%q}}`, name)
}

func TestForwardsVerifiedWithTheAdminIdentityAndLogs(t *testing.T) {
	h := start(t, Config{})
	h.mustDo(t, http.MethodGet, machines, "", http.StatusOK)
	h.mustDo(t, http.MethodPost, machines, obj("a"), http.StatusCreated)
	got := h.api.requests()
	if len(got) != 2 || got[0] != (seen{"GET", machines, "lab-admin"}) || got[1] != (seen{"POST", machines, "lab-admin"}) {
		t.Fatalf("apiserver saw %+v", got)
	}
	log := h.logLines(t)
	if len(log) != 2 || log[0].Method != "GET" || log[0].Status != 200 || log[0].Write != 0 ||
		log[1].Method != "POST" || log[1].Status != 201 || log[1].Upstream != 201 || log[1].Write != 1 || log[1].Path != machines {
		t.Fatalf("log %+v", log)
	}
	// A client that does not trust the lab's CA refuses the proxy: TLS is real.
	insecure := &http.Client{Timeout: 5 * time.Second}
	if _, err := insecure.Get(h.proxy.URL() + machines); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a client without the CA: %v", err)
	}
}

func TestKubeconfigWorksThroughTheProxy(t *testing.T) {
	h := start(t, Config{})
	kc := filepath.Join(h.dir, "kubeconfig")
	if err := WriteKubeconfig(kc, h.proxy.URL(), h.pki.caCert, h.pki.adminCert, h.pki.adminKey, "ichor-system"); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(kc); st.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig mode %v", st.Mode())
	}
	c, err := kubelab.LoadKubeconfig(kc, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Server != h.proxy.URL() || c.Namespace != "ichor-system" {
		t.Fatalf("kubeconfig server %s namespace %s", c.Server, c.Namespace)
	}
	var out map[string]any
	if err := c.Get(context.Background(), machines+"/x", &out); err != nil {
		t.Fatal(err)
	}
	if got := h.api.requests(); len(got) != 1 || got[0].user != "lab-admin" {
		t.Fatalf("apiserver saw %+v", got)
	}
}

// sleeper is a child process to kill; Wait tells how it ended.
func sleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

func killedBySIGKILL(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

func TestKillAfterWritesKillsBeforeTheAnswer(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "tool.pid")
	h := start(t, Config{KillAfterWrites: 2, KillPidFile: pidFile})
	victim := sleeper(t)

	h.mustDo(t, http.MethodPost, machines, obj("one"), http.StatusCreated)               // write 1
	h.mustDo(t, http.MethodGet, machines+"/one", "", http.StatusOK)                      // a read
	h.mustDo(t, http.MethodPost, machines+"?dryRun=All", obj("dry"), http.StatusCreated) // not committed
	h.mustDo(t, http.MethodPut, machines+"/conflict", obj("conflict"), http.StatusConflict)
	// The pid file is written late: the proxy waits for it (the tool's pid is written after it starts).
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = os.WriteFile(pidFile, []byte(fmt.Sprintf("%d\n", victim.Process.Pid)), 0o644)
	}()
	resp, _, err := h.do(t, http.MethodPost, machines, obj("two"))
	if err == nil {
		t.Fatalf("the killed write was answered: %d", resp.StatusCode)
	}
	// The apiserver committed the write, and the victim was dead before the connection dropped.
	if got := h.api.requests(); len(got) != 5 || got[4].method != "POST" {
		t.Fatalf("apiserver saw %+v", got)
	}
	if !waitDead(victim.Process.Pid, 0) {
		t.Fatal("the victim still runs after the connection dropped")
	}
	if err := victim.Wait(); !killedBySIGKILL(err) {
		t.Fatalf("victim ended with %v, want SIGKILL", err)
	}
	log := h.logLines(t)
	last := log[len(log)-1]
	if len(log) != 5 || last.Write != 2 || last.Status != 0 || last.Upstream != 201 ||
		last.Fault != fmt.Sprintf("kill pid=%d", victim.Process.Pid) {
		t.Fatalf("log %+v", log)
	}
	if log[2].Write != 0 || log[3].Write != 0 {
		t.Fatalf("a dry run or a refused write was counted: %+v", log)
	}
	// Only the Nth write kills: the next one is answered.
	h.mustDo(t, http.MethodPost, machines, obj("three"), http.StatusCreated)
	if st := h.proxy.State(); st.Writes != 3 {
		t.Fatalf("writes %d", st.Writes)
	}
}

func TestKillWithoutPidAnswersAndSaysSo(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "missing.pid")
	h := start(t, Config{KillAfterWrites: 1, KillPidFile: pidFile})
	h.proxy.opts.PidWait = 100 * time.Millisecond
	h.mustDo(t, http.MethodPost, machines, obj("a"), http.StatusCreated)
	log := h.logLines(t)
	if len(log) != 1 || !strings.HasPrefix(log[0].Fault, "kill failed: no pid in "+pidFile) {
		t.Fatalf("log %+v", log)
	}
}

func status_(t *testing.T, b []byte) status {
	t.Helper()
	var st status
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("not a Status: %s", b)
	}
	return st
}

func TestFailRules(t *testing.T) {
	mustRule := func(s string) Rule {
		r, err := ParseFail(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	h := start(t, Config{Fail: []Rule{
		mustRule("POST:/talosmachines$:409"),
		mustRule("DELETE:talosmachines/:403"),
		mustRule("GET:/secrets:429:1"),
		mustRule("PATCH:.*:503"),
	}})

	// 409 on a create: AlreadyExists naming the object of the body; the apiserver never saw it.
	resp, b, err := h.do(t, http.MethodPost, machines, obj("prod-w-2"))
	if err != nil || resp.StatusCode != 409 {
		t.Fatalf("409: %v %v", resp, err)
	}
	st := status_(t, b)
	if st.Kind != "Status" || st.Reason != "AlreadyExists" || st.Code != 409 || st.Details == nil ||
		st.Details.Name != "prod-w-2" || st.Details.Group != "ichor.maesh.dev" || st.Details.Kind != "talosmachines" ||
		st.Message != `talosmachines.ichor.maesh.dev "prod-w-2" already exists` || resp.Header.Get("X-Kube-Fault-Proxy") != "injected" {
		t.Fatalf("409 body %s", b)
	}

	// 403 Forbidden, in the apiserver's words.
	resp, b, _ = h.do(t, http.MethodDelete, machines+"/m1", "")
	st = status_(t, b)
	if resp.StatusCode != 403 || st.Reason != "Forbidden" ||
		st.Message != `talosmachines.ichor.maesh.dev "m1" is forbidden: User "lab-admin" cannot delete resource "talosmachines" in API group "ichor.maesh.dev" in the namespace "ichor-system"` {
		t.Fatalf("403: %d %s", resp.StatusCode, b)
	}

	// 429 with Retry-After on the first matching request only; the retry goes through.
	secrets := "/api/v1/namespaces/ichor-system/secrets/s1"
	resp, b, _ = h.do(t, http.MethodGet, secrets, "")
	st = status_(t, b)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" || st.Reason != "TooManyRequests" ||
		st.Details == nil || st.Details.RetryAfterSeconds != 1 || st.Details.Group != "" || st.Details.Kind != "secrets" {
		t.Fatalf("429: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	h.mustDo(t, http.MethodGet, secrets, "", http.StatusOK)

	// 503 on every match.
	for i := 0; i < 2; i++ {
		resp, b, _ = h.do(t, http.MethodPatch, machines+"/m1/status", "{}")
		if st = status_(t, b); resp.StatusCode != 503 || st.Reason != "ServiceUnavailable" {
			t.Fatalf("503 #%d: %d %s", i, resp.StatusCode, b)
		}
	}

	// Only the one GET that passed reached the apiserver.
	if got := h.api.requests(); len(got) != 1 || got[0].method != "GET" || got[0].path != secrets {
		t.Fatalf("apiserver saw %+v", got)
	}
	faults := []string{}
	for _, e := range h.logLines(t) {
		faults = append(faults, fmt.Sprintf("%s %d %s", e.Method, e.Status, e.Fault))
	}
	want := []string{
		"POST 409 fail 409 AlreadyExists (rule 1)", "DELETE 403 fail 403 Forbidden (rule 2)",
		"GET 429 fail 429 TooManyRequests (rule 3)", "GET 200 ", "PATCH 503 fail 503 ServiceUnavailable (rule 4)",
		"PATCH 503 fail 503 ServiceUnavailable (rule 4)",
	}
	if strings.Join(faults, "|") != strings.Join(want, "|") {
		t.Fatalf("log:\n%s\nwant:\n%s", strings.Join(faults, "\n"), strings.Join(want, "\n"))
	}
}

func TestFailAfterForwardingCommitsTheWrite(t *testing.T) {
	h := start(t, Config{Fail: []Rule{{Method: "WRITE", Path: "talosmachines", Status: 503, Forward: true, RetryAfter: 2}}})
	resp, b, err := h.do(t, http.MethodPost, machines, obj("x"))
	if err != nil || resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "2" || status_(t, b).Reason != "ServiceUnavailable" {
		t.Fatalf("%v %v %s", resp, err, b)
	}
	if got := h.api.requests(); len(got) != 1 || got[0].method != "POST" {
		t.Fatalf("apiserver saw %+v", got)
	}
	log := h.logLines(t)
	if len(log) != 1 || log[0].Upstream != 201 || log[0].Status != 503 || log[0].Write != 1 ||
		log[0].Fault != "fail 503 ServiceUnavailable after forwarding (rule 1)" {
		t.Fatalf("log %+v", log)
	}
}

func TestGoneAfterWrites(t *testing.T) {
	h := start(t, Config{GoneAfterWrites: 1})
	// A second client holds an idle keep-alive connection: "gone" closes it too.
	other := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: h.pki.pool}}}
	if resp, err := other.Get(h.proxy.URL() + machines); err != nil {
		t.Fatal(err)
	} else {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// The write is answered in full, then nothing listens.
	b := h.mustDo(t, http.MethodPost, machines, obj("w"), http.StatusCreated)
	if !bytes.Contains(b, []byte(`"w"`)) {
		t.Fatalf("answer %s", b)
	}
	if !h.proxy.State().Gone {
		t.Fatal("not gone")
	}
	addr := strings.TrimPrefix(h.proxy.URL(), "https://")
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("still accepting connections")
	}
	if _, err := other.Get(h.proxy.URL() + machines); err == nil {
		t.Fatal("the other client still reached the apiserver")
	}
	if _, _, err := h.do(t, http.MethodGet, machines, ""); err == nil {
		t.Fatal("the connection of the write stayed open")
	}
	if got := h.api.requests(); len(got) != 2 {
		t.Fatalf("apiserver saw %+v", got)
	}
	log := h.logLines(t)
	if len(log) != 2 || log[1].Fault != "gone" || log[1].Status != 201 || log[1].Write != 1 {
		t.Fatalf("log %+v", log)
	}
	// POST /up on the control API: back on the same address.
	ctl := httptest.NewServer(h.proxy.ControlHandler())
	defer ctl.Close()
	resp, err := http.Post(ctl.URL+"/up", "application/json", nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST /up: %v %v", resp, err)
	}
	resp.Body.Close()
	h.mustDo(t, http.MethodGet, machines, "", http.StatusOK)
}

func TestControlReplacesRules(t *testing.T) {
	h := start(t, Config{})
	ctl := httptest.NewServer(h.proxy.ControlHandler())
	defer ctl.Close()
	put := func(body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPut, ctl.URL+"/rules", strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	h.mustDo(t, http.MethodPost, machines, obj("before"), http.StatusCreated)
	if resp := put(`{"fail": [{"method": "POST", "path": "talosmachines", "status": 409, "reason": "Conflict", "nth": 1}]}`); resp.StatusCode != 200 {
		t.Fatalf("PUT /rules: %d", resp.StatusCode)
	}
	_, b, _ := h.do(t, http.MethodPost, machines, obj("a"))
	if st := status_(t, b); st.Reason != "Conflict" || !strings.HasPrefix(st.Message, `Operation cannot be fulfilled on talosmachines.ichor.maesh.dev "a"`) {
		t.Fatalf("after PUT /rules: %s", b)
	}
	h.mustDo(t, http.MethodPost, machines, obj("b"), http.StatusCreated) // nth 1 only
	for _, bad := range []string{`{"fail": [{"method": "GET", "path": "(", "status": 500}]}`, `{"fial": []}`,
		`{"killAfterWrites": 1}`, `{"fail": [{"method": "GET", "status": 200}]}`} {
		if resp := put(bad); resp.StatusCode != 400 {
			t.Fatalf("PUT /rules %s: %d, want 400", bad, resp.StatusCode)
		}
	}
	resp, err := http.Get(ctl.URL + "/state")
	if err != nil {
		t.Fatal(err)
	}
	var st State
	_ = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	// The counters restarted with the new rules: one write ("b") since.
	if st.Writes != 1 || st.Requests != 3 || len(st.Config.Fail) != 1 {
		t.Fatalf("state %+v", st)
	}
	resp, err = http.Get(ctl.URL + "/requests")
	if err != nil {
		t.Fatal(err)
	}
	var entries []Entry
	_ = json.NewDecoder(resp.Body).Decode(&entries)
	resp.Body.Close()
	if len(entries) != 3 || entries[1].Status != 409 {
		t.Fatalf("requests %+v", entries)
	}
}

func TestParseFail(t *testing.T) {
	for _, c := range []struct {
		in           string
		method, path string
		status, nth  int
		reason       string
		retryAfter   int
		wantErr      bool
	}{
		{in: "POST:/talosmachines$:409", method: "POST", path: "/talosmachines$", status: 409, reason: "AlreadyExists"},
		{in: "post:talosconfigpatches:409:2", method: "POST", path: "talosconfigpatches", status: 409, nth: 2, reason: "AlreadyExists"},
		{in: "PUT:x:Conflict", method: "PUT", path: "x", status: 409, reason: "Conflict"},
		{in: "*::503", method: "*", path: "", status: 503, reason: "ServiceUnavailable"},
		{in: "GET:.*:429", method: "GET", path: ".*", status: 429, reason: "TooManyRequests", retryAfter: 1},
		{in: "WRITE:a:b:403:3", method: "WRITE", path: "a:b", status: 403, nth: 3, reason: "Forbidden"},
		{in: "GET:a:1:500", method: "GET", path: "a:1", status: 500, reason: "InternalError"},
		{in: "GET:x", wantErr: true},
		{in: "GET:x:200", wantErr: true},
		{in: "FETCH:x:500", wantErr: true},
		{in: "GET:(:500", wantErr: true},
		{in: "GET:x:Teapot", wantErr: true},
	} {
		r, err := ParseFail(c.in)
		if c.wantErr {
			if err == nil {
				t.Errorf("%s: no error", c.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if r.Method != c.method || r.Path != c.path || r.Status != c.status || r.Nth != c.nth || r.Reason != c.reason || r.RetryAfter != c.retryAfter {
			t.Errorf("%s: got %+v", c.in, r)
		}
	}
}

func TestParseResourcePath(t *testing.T) {
	for in, want := range map[string]resourcePath{
		"/api/v1/namespaces/ns/secrets/s":                           {namespace: "ns", resource: "secrets", name: "s"},
		"/api/v1/nodes":                                             {resource: "nodes"},
		"/apis/ichor.maesh.dev/v1alpha1/namespaces/ns/tm/m/st":      {group: "ichor.maesh.dev", namespace: "ns", resource: "tm", name: "m", subresource: "st"},
		"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x": {group: "apiextensions.k8s.io", resource: "customresourcedefinitions", name: "x"},
		"/api/v1/namespaces/ns":                                     {resource: "namespaces", name: "ns"},
	} {
		if got, ok := parseResourcePath(in); !ok || got != want {
			t.Errorf("%s: %+v %v", in, got, ok)
		}
	}
	if _, ok := parseResourcePath("/readyz"); ok {
		t.Error("/readyz is not a resource path")
	}
}
