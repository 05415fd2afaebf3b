// kube-fault-proxy is an HTTPS reverse proxy on 127.0.0.1 in front of the lab's kube-apiserver that
// injects faults from the test side (internal/kubefault): Status errors on chosen requests, a
// SIGKILL to the tool under test between two of its writes, the apiserver gone after a write. It
// serves a certificate signed by the lab's CA (STATE/kube/pki/ca.{crt,key}), so TLS stays
// verified, and forwards every request with the lab's admin client certificate.
//
//	kube-fault-proxy --dir DIR [--state STATE] [--listen 127.0.0.1:0] [--namespace ichor-system]
//	    [--kill-after-writes N --kill-pid-file FILE] [--gone-after-writes N]
//	    [--fail METHOD:PATH-REGEX:STATUS[:N]]... [--retry-after S] [--rules FILE]
//
// It writes DIR/kubeconfig (for the tool under test), DIR/requests.log (one JSON line a request)
// and, once both listeners are up, DIR/proxy.json {"url", "control", "pid", "kubeconfig", "log",
// "upstream"} (atomically; removed on SIGTERM or SIGINT). The control API (plain HTTP, loopback)
// changes the faults between steps: see kubefault.ControlHandler.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"ichor.lab/internal/kubefault"
)

type failFlags []string

func (f *failFlags) String() string     { return strings.Join(*f, ",") }
func (f *failFlags) Set(v string) error { *f = append(*f, v); return nil }

func main() {
	var fails failFlags
	state := flag.String("state", os.Getenv("ICHOR_LAB_STATE"), "the lab's state directory (kube/apiserver-url, kube/pki/)")
	dir := flag.String("dir", "", "directory for kubeconfig, requests.log and proxy.json (required)")
	upstream := flag.String("upstream", "", "the apiserver URL (default: STATE/kube/apiserver-url)")
	listen := flag.String("listen", "127.0.0.1:0", "loopback address to serve on")
	namespace := flag.String("namespace", "ichor-system", "namespace of the written kubeconfig's context")
	killAfter := flag.Int("kill-after-writes", 0, "SIGKILL the pid in --kill-pid-file once the Nth write is committed, before it is answered")
	killPidFile := flag.String("kill-pid-file", "", "file holding the pid to kill (read when the kill is due)")
	goneAfter := flag.Int("gone-after-writes", 0, "close the listener and every connection once the Nth write is answered")
	retryAfter := flag.Int("retry-after", 0, "Retry-After seconds for the --fail rules (429: default 1)")
	rulesFile := flag.String("rules", "", "initial faults, JSON as PUT /rules; the flags add to it")
	flag.Var(&fails, "fail", "METHOD:PATH-REGEX:STATUS[:N]: a Status error instead of the apiserver (repeatable)")
	flag.Parse()
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s kube-fault-proxy: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
	}
	if *dir == "" || *state == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: kube-fault-proxy --dir DIR [--state STATE] [--kill-after-writes N --kill-pid-file FILE] [--gone-after-writes N] [--fail METHOD:PATH-REGEX:STATUS[:N]]... [--rules FILE]")
		os.Exit(2)
	}
	cfg, err := config(*rulesFile, *killAfter, *killPidFile, *goneAfter, *retryAfter, fails)
	if err != nil {
		logf("%v", err)
		os.Exit(2)
	}
	if err := run(logf, *state, *dir, *upstream, *listen, *namespace, cfg); err != nil {
		logf("%v", err)
		os.Exit(1)
	}
}

func config(rulesFile string, killAfter int, killPidFile string, goneAfter, retryAfter int, fails []string) (kubefault.Config, error) {
	var cfg kubefault.Config
	if rulesFile != "" {
		b, err := os.ReadFile(rulesFile)
		if err != nil {
			return cfg, err
		}
		if cfg, err = kubefault.ParseConfig(b); err != nil {
			return cfg, fmt.Errorf("%s: %w", rulesFile, err)
		}
	}
	if killAfter != 0 {
		cfg.KillAfterWrites = killAfter
	}
	if killPidFile != "" {
		abs, err := filepath.Abs(killPidFile)
		if err != nil {
			return cfg, err
		}
		cfg.KillPidFile = abs
	}
	if goneAfter != 0 {
		cfg.GoneAfterWrites = goneAfter
	}
	for _, f := range fails {
		r, err := kubefault.ParseFail(f)
		if err != nil {
			return cfg, err
		}
		if retryAfter > 0 {
			r.RetryAfter = retryAfter
		}
		cfg.Fail = append(cfg.Fail, r)
	}
	return cfg, cfg.Validate()
}

func run(logf func(string, ...any), state, dir, upstream, listen, namespace string, cfg kubefault.Config) error {
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(state, "kube", name)) }
	if upstream == "" {
		b, err := read("apiserver-url")
		if err != nil {
			return err
		}
		upstream = strings.TrimSpace(string(b))
	}
	up, err := url.Parse(upstream)
	if err != nil || up.Scheme != "https" || !loopback(up.Hostname()) {
		return fmt.Errorf("upstream %q: want https://127.0.0.x:PORT", upstream)
	}
	if h, _, err := net.SplitHostPort(listen); err != nil || !loopback(h) {
		return fmt.Errorf("--listen %q: want a loopback address", listen)
	}
	var pem [4][]byte
	for i, name := range []string{"pki/ca.crt", "pki/ca.key", "pki/admin.crt", "pki/admin.key"} {
		if pem[i], err = read(name); err != nil {
			return err
		}
	}
	serving, err := kubefault.ServingCert(pem[0], pem[1])
	if err != nil {
		return err
	}
	upTLS, err := kubefault.UpstreamTLS(pem[0], pem[2], pem[3])
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return err
	}
	logPath := filepath.Join(dir, "requests.log")
	p, err := kubefault.New(kubefault.Options{
		Upstream: up, UpstreamTLS: upTLS, ServerCert: serving, Listen: listen, LogPath: logPath, Logf: logf,
	}, cfg)
	if err != nil {
		return err
	}
	if err := p.Start(); err != nil {
		return err
	}
	defer p.Close()
	ctlLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ctl := &http.Server{Handler: p.ControlHandler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = ctl.Serve(ctlLn) }()
	defer ctl.Close()

	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := kubefault.WriteKubeconfig(kubeconfig, p.URL(), pem[0], pem[2], pem[3], namespace); err != nil {
		return err
	}
	desc, _ := json.MarshalIndent(map[string]any{
		"url": p.URL(), "control": "http://" + ctlLn.Addr().String(), "pid": os.Getpid(),
		"kubeconfig": kubeconfig, "log": logPath, "upstream": upstream,
	}, "", "  ")
	descPath := filepath.Join(dir, "proxy.json")
	if err := os.WriteFile(descPath+".tmp", append(desc, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.Rename(descPath+".tmp", descPath); err != nil {
		return err
	}
	defer os.Remove(descPath)
	rules, _ := json.Marshal(cfg)
	logf("serving %s -> %s, control http://%s, faults %s", p.URL(), upstream, ctlLn.Addr(), rules)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	logf("stopped")
	return nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
