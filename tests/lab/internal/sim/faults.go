package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// Fault is an injected misbehaviour of one node, matched on the full gRPC method name ("*" for
// any). Count 0 means until cleared.
type Fault struct {
	Method    string `json:"method"`
	Kind      string `json:"kind"` // hang | delay | error | drop
	Delay     string `json:"delay,omitempty"`
	Code      string `json:"code,omitempty"`
	Message   string `json:"message,omitempty"`
	Count     int    `json:"count,omitempty"`
	Remaining int    `json:"remaining,omitempty"`

	delay time.Duration
	code  codes.Code
}

var codeNames = func() map[string]codes.Code {
	m := map[string]codes.Code{}

	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		m[strings.ToLower(c.String())] = c
	}

	return m
}()

// ParseCode accepts "Unavailable", "UNAVAILABLE", "unavailable" or "14".
func ParseCode(s string) (codes.Code, error) {
	key := strings.ToLower(strings.ReplaceAll(s, "_", ""))
	for name, c := range codeNames {
		if strings.ReplaceAll(name, "_", "") == key {
			return c, nil
		}
	}

	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err == nil && n >= 0 && n <= int(codes.Unauthenticated) {
		return codes.Code(n), nil //nolint:gosec
	}

	return 0, fmt.Errorf("unknown gRPC code %q", s)
}

// Validate checks and completes a fault from the control API.
func (f *Fault) Validate() error {
	if f.Method == "" {
		f.Method = "*"
	}

	if f.Method != "*" && !strings.HasPrefix(f.Method, "/") {
		return fmt.Errorf("method %q must be a full gRPC method name (\"/machine.MachineService/Version\") or \"*\"", f.Method)
	}

	if f.Count < 0 {
		return errors.New("count must not be negative")
	}

	f.Remaining = f.Count

	switch f.Kind {
	case "hang", "drop":
	case "delay":
		d, err := time.ParseDuration(f.Delay)
		if err != nil || d < 0 {
			return fmt.Errorf("delay %q is not a duration", f.Delay)
		}

		f.delay = d
	case "error":
		f.code = codes.Unavailable

		if f.Code != "" {
			c, err := ParseCode(f.Code)
			if err != nil {
				return err
			}

			f.code = c
		}

		if f.Message == "" {
			f.Message = "injected fault"
		}
	default:
		return fmt.Errorf("kind %q is not one of hang, delay, error, drop", f.Kind)
	}

	return nil
}

// takeFault returns the first fault for method and uses one of its counts.
func (n *Node) takeFault(method string) *Fault {
	s := n.sim

	s.mu.Lock()
	defer s.mu.Unlock()

	for i, f := range n.faults {
		if f.Method != "*" && f.Method != method {
			continue
		}

		if f.Count > 0 {
			f.Remaining--
			if f.Remaining <= 0 {
				n.faults = append(n.faults[:i], n.faults[i+1:]...)
			}
		}

		return f
	}

	return nil
}

// injectFault acts out a matching fault: hang until the caller gives up, sleep, fail, or close
// the connection the call came on.
func (n *Node) injectFault(ctx context.Context, method string) error {
	f := n.takeFault(method)
	if f == nil {
		return nil
	}

	switch f.Kind {
	case "hang":
		<-ctx.Done()

		return status.FromContextError(ctx.Err()).Err()
	case "delay":
		t := time.NewTimer(f.delay)
		defer t.Stop()

		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
	case "error":
		return status.Error(f.code, f.Message)
	case "drop":
		if p, ok := peer.FromContext(ctx); ok {
			n.srvMu.Lock()
			lis := n.lis
			n.srvMu.Unlock()

			if lis != nil {
				lis.drop(p.Addr.String())
			}
		}

		return status.Error(codes.Unavailable, "connection dropped by fault injection")
	}

	return nil
}
