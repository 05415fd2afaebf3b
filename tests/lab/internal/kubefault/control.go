package kubefault

import (
	"encoding/json"
	"io"
	"net/http"
)

// ControlHandler is the proxy's control API (plain HTTP, served on its own loopback listener):
//
//	GET  /healthz    ok
//	GET  /state      {"writes", "requests", "gone", "config"}
//	GET  /rules      the Config
//	PUT  /rules      replace the Config (JSON as a rules file); resets the write and match counters
//	GET  /requests   the request log so far, a JSON array of Entry
//	POST /up         after "gone": listen again on the same address
//
// Errors are {"error": "..."} with 400 (bad body) or 500.
func (p *Proxy) ControlHandler() http.Handler {
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	fail := func(w http.ResponseWriter, code int, err error) {
		reply(w, code, map[string]string{"error": err.Error()})
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /state", func(w http.ResponseWriter, _ *http.Request) {
		reply(w, http.StatusOK, p.State())
	})
	mux.HandleFunc("GET /rules", func(w http.ResponseWriter, _ *http.Request) {
		reply(w, http.StatusOK, p.State().Config)
	})
	mux.HandleFunc("PUT /rules", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			fail(w, http.StatusBadRequest, err)
			return
		}
		cfg, err := ParseConfig(b)
		if err == nil {
			err = p.SetConfig(cfg)
		}
		if err != nil {
			fail(w, http.StatusBadRequest, err)
			return
		}
		p.opts.Logf("rules replaced: %s", b)
		reply(w, http.StatusOK, p.State().Config)
	})
	mux.HandleFunc("GET /requests", func(w http.ResponseWriter, _ *http.Request) {
		e := p.Entries()
		if e == nil {
			e = []Entry{}
		}
		reply(w, http.StatusOK, e)
	})
	mux.HandleFunc("POST /up", func(w http.ResponseWriter, _ *http.Request) {
		if err := p.Up(); err != nil {
			fail(w, http.StatusInternalServerError, err)
			return
		}
		reply(w, http.StatusOK, p.State())
	})
	return mux
}
