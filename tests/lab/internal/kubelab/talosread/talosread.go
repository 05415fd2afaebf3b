// Package talosread is lab-controller's read of a configured Talos node: an os:admin client
// certificate made from the cluster's secrets bundle (as Ichor's controller does), a TLS dial of
// the Talos API with Talos's own client, and COSI Gets of the cluster Info and the
// SystemInformation. It only reads.
package talosread

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/cosi-project/runtime/pkg/safe"
	"github.com/siderolabs/talos/pkg/machinery/client"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"github.com/siderolabs/talos/pkg/machinery/resources/cluster"
	"github.com/siderolabs/talos/pkg/machinery/resources/hardware"
	"github.com/siderolabs/talos/pkg/machinery/role"
	"go.yaml.in/yaml/v4"
	"google.golang.org/grpc"

	"ichor.lab/internal/kubelab"
)

// UserAgent is sent on every gRPC call, so that talos-sim's call log can tell the controller's
// reads from the tools' calls.
const UserAgent = "ichor-lab-controller"

// Reader implements kubelab.NodeReader.
type Reader struct {
	mu  sync.Mutex
	tls map[[32]byte]*tls.Config
}

// TLSConfig returns the client TLS configuration for a bundle: the bundle's Talos API CA as the
// only root and a fresh os:admin certificate signed by it (cached per bundle).
func (r *Reader) TLSConfig(bundle []byte) (*tls.Config, error) {
	sum := sha256.Sum256(bundle)
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.tls[sum]; ok {
		return c, nil
	}
	b := &secrets.Bundle{Clock: secrets.NewClock()}
	if err := yaml.NewDecoder(bytes.NewReader(bundle)).Decode(b); err != nil {
		return nil, fmt.Errorf("secrets bundle: %w", err)
	}
	if b.Certs == nil || b.Certs.OS == nil {
		return nil, errors.New("secrets bundle has no certs.os (Talos API CA)")
	}
	admin, err := b.GenerateTalosAPIClientCertificate(role.MakeSet(role.Admin))
	if err != nil {
		return nil, fmt.Errorf("os:admin certificate: %w", err)
	}
	pair, err := tls.X509KeyPair(admin.Crt, admin.Key)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b.Certs.OS.Crt) {
		return nil, errors.New("secrets bundle: bad certs.os.crt")
	}
	c := &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	if r.tls == nil {
		r.tls = map[[32]byte]*tls.Config{}
	}
	r.tls[sum] = c
	return c, nil
}

// ReadNode dials endpoint (host:port) and reads the cluster ID and the machine UUID.
func (r *Reader) ReadNode(ctx context.Context, bundle []byte, endpoint string) (kubelab.NodeFacts, error) {
	var f kubelab.NodeFacts
	tc, err := r.TLSConfig(bundle)
	if err != nil {
		return f, &kubelab.NodeError{Reason: kubelab.ReasonBundleUnavailable, Err: err}
	}
	c, err := client.New(ctx,
		client.WithEndpoints(endpoint),
		client.WithTLSConfig(tc.Clone()),
		client.WithGRPCDialOptions(grpc.WithUserAgent(UserAgent)),
	)
	if err != nil {
		return f, classify(err)
	}
	defer c.Close() //nolint:errcheck
	info, err := safe.StateGetByID[*cluster.Info](ctx, c.COSI, cluster.InfoID)
	if err != nil {
		return f, classify(fmt.Errorf("get %s: %w", cluster.InfoType, err))
	}
	f.ClusterID, f.ClusterName = info.TypedSpec().ClusterID, info.TypedSpec().ClusterName
	si, err := safe.StateGetByID[*hardware.SystemInformation](ctx, c.COSI, hardware.SystemInformationID)
	if err != nil {
		return f, classify(fmt.Errorf("get %s: %w", hardware.SystemInformationType, err))
	}
	f.UUID = si.TypedSpec().UUID
	return f, nil
}

// classify maps a failed dial or call to a Ready reason: a TLS refusal (another cluster's CA, a
// node in maintenance mode with its own certificate) is an identity mismatch, the rest unreachable.
func classify(err error) error {
	s := err.Error()
	for _, m := range []string{"x509:", "certificate", "tls:", "authentication handshake failed"} {
		if strings.Contains(s, m) && !strings.Contains(s, "context deadline exceeded") {
			return &kubelab.NodeError{Reason: kubelab.ReasonIdentityMismatch, Err: err}
		}
	}
	return &kubelab.NodeError{Reason: kubelab.ReasonNodeUnreachable, Err: err}
}
