package kubefault

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// Config is the set of faults the proxy applies. It comes from the command line, a rules file
// (the same JSON) or the control API's PUT /rules; replacing it resets every counter.
type Config struct {
	// KillAfterWrites: once the Nth write (a POST, PUT, PATCH or DELETE the apiserver answered
	// 2xx, not a dry run) has been answered, the process whose pid is in KillPidFile gets SIGKILL
	// before the answer is passed on, and the connection is dropped: the write is committed and
	// the caller dies before it learns so. 0: never.
	KillAfterWrites int    `json:"killAfterWrites,omitempty"`
	KillPidFile     string `json:"killPidFile,omitempty"`
	// GoneAfterWrites: the Nth write is answered, then the proxy closes its listener and every
	// connection (the apiserver gone between two writes) until POST /up. 0: never.
	GoneAfterWrites int    `json:"goneAfterWrites,omitempty"`
	Fail            []Rule `json:"fail,omitempty"`
}

// Rule answers matching requests with a Kubernetes Status error instead of the apiserver.
type Rule struct {
	Method string `json:"method"` // GET, POST, PUT, PATCH, DELETE; "*" any; "WRITE" any of the four writes
	Path   string `json:"path"`   // regular expression on the URL path, unanchored ("" matches all)
	Status int    `json:"status"` // HTTP status, 400..599
	// Reason of the Status body; default by status (409 AlreadyExists, 403 Forbidden, ...).
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"` // default: the apiserver's sentence for the reason
	// Nth: only the Nth request this rule matches (1-based); 0: every one.
	Nth int `json:"nth,omitempty"`
	// RetryAfter seconds: a Retry-After header and details.retryAfterSeconds (429: default 1).
	RetryAfter int `json:"retryAfter,omitempty"`
	// Forward: the request goes to the apiserver first (a write is committed), then the fault
	// replaces its answer. Default: the apiserver never sees the request.
	Forward bool `json:"forward,omitempty"`

	re *regexp.Regexp
}

// reasonStatus is the HTTP status of each Status reason the apiserver uses.
var reasonStatus = map[string]int{
	"BadRequest": 400, "Unauthorized": 401, "Forbidden": 403, "NotFound": 404,
	"MethodNotAllowed": 405, "NotAcceptable": 406, "AlreadyExists": 409, "Conflict": 409,
	"Gone": 410, "Expired": 410, "RequestEntityTooLarge": 413, "UnsupportedMediaType": 415,
	"Invalid": 422, "TooManyRequests": 429, "InternalError": 500, "ServiceUnavailable": 503,
	"Timeout": 504,
}

// defaultReason is the reason of an injected status when the rule names none. 409 is
// AlreadyExists (a create that someone else made first); use reason Conflict for an update.
var defaultReason = map[int]string{
	400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
	405: "MethodNotAllowed", 406: "NotAcceptable", 409: "AlreadyExists", 410: "Gone",
	413: "RequestEntityTooLarge", 415: "UnsupportedMediaType", 422: "Invalid",
	429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable", 504: "Timeout",
}

func isWriteMethod(m string) bool {
	switch m {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// ParseFail reads a --fail value: METHOD:PATH-REGEX:STATUS[:N]. STATUS is a number or a reason
// name ("409", "Conflict"); N selects the Nth matching request. The regular expression may hold
// colons; the last one or two fields are read as STATUS[:N].
func ParseFail(s string) (Rule, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 3 {
		return Rule{}, fmt.Errorf("--fail %q: want METHOD:PATH-REGEX:STATUS[:N]", s)
	}
	var r Rule
	r.Method = parts[0]
	rest := parts[1:]
	if len(rest) >= 3 {
		if n, err := strconv.Atoi(rest[len(rest)-1]); err == nil && n > 0 {
			if st, reason, ok := parseStatus(rest[len(rest)-2]); ok {
				r.Nth, r.Status, r.Reason = n, st, reason
				r.Path = strings.Join(rest[:len(rest)-2], ":")
			}
		}
	}
	if r.Status == 0 {
		st, reason, ok := parseStatus(rest[len(rest)-1])
		if !ok {
			return Rule{}, fmt.Errorf("--fail %q: status %q is neither 400..599 nor a Status reason", s, rest[len(rest)-1])
		}
		r.Status, r.Reason = st, reason
		r.Path = strings.Join(rest[:len(rest)-1], ":")
	}
	if err := r.validate(); err != nil {
		return Rule{}, fmt.Errorf("--fail %q: %w", s, err)
	}
	return r, nil
}

func parseStatus(s string) (int, string, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, "", n >= 400 && n <= 599
	}
	for reason, st := range reasonStatus {
		if strings.EqualFold(reason, s) {
			return st, reason, true
		}
	}
	return 0, "", false
}

func (r *Rule) validate() error {
	r.Method = strings.ToUpper(r.Method)
	switch r.Method {
	case "*", "WRITE", http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return fmt.Errorf("method %q: want GET, POST, PUT, PATCH, DELETE, WRITE or *", r.Method)
	}
	re, err := regexp.Compile(r.Path)
	if err != nil {
		return fmt.Errorf("path: %w", err)
	}
	r.re = re
	if r.Status < 400 || r.Status > 599 {
		return fmt.Errorf("status %d: want 400..599", r.Status)
	}
	if r.Reason == "" {
		r.Reason = defaultReason[r.Status]
	}
	if r.Nth < 0 || r.RetryAfter < 0 {
		return errors.New("nth and retryAfter must not be negative")
	}
	if r.RetryAfter == 0 && r.Status == http.StatusTooManyRequests {
		r.RetryAfter = 1
	}
	return nil
}

func (r *Rule) matches(method, path string) bool {
	switch r.Method {
	case "*":
	case "WRITE":
		if !isWriteMethod(method) {
			return false
		}
	default:
		if r.Method != method {
			return false
		}
	}
	return r.re.MatchString(path)
}

// Validate checks and completes a configuration (regular expressions compiled, default reasons).
func (c *Config) Validate() error {
	if c.KillAfterWrites < 0 || c.GoneAfterWrites < 0 {
		return errors.New("killAfterWrites and goneAfterWrites must not be negative")
	}
	if c.KillAfterWrites > 0 && c.KillPidFile == "" {
		return errors.New("killAfterWrites needs killPidFile")
	}
	for i := range c.Fail {
		if err := c.Fail[i].validate(); err != nil {
			return fmt.Errorf("fail[%d]: %w", i, err)
		}
	}
	return nil
}

// ParseConfig reads the JSON of a rules file or of PUT /rules (unknown fields are errors).
func ParseConfig(b []byte) (Config, error) {
	var c Config
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}
