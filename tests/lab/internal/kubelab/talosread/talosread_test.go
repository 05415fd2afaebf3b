package talosread

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/cosi-project/runtime/api/v1alpha1"
	"github.com/cosi-project/runtime/pkg/state"
	"github.com/cosi-project/runtime/pkg/state/impl/inmem"
	"github.com/cosi-project/runtime/pkg/state/impl/namespaced"
	"github.com/cosi-project/runtime/pkg/state/protobuf/server"
	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"github.com/siderolabs/talos/pkg/machinery/resources/cluster"
	"github.com/siderolabs/talos/pkg/machinery/resources/hardware"
	"go.yaml.in/yaml/v4"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"ichor.lab/internal/kubelab"
)

func newBundle(t *testing.T) (*secrets.Bundle, []byte) {
	t.Helper()
	b, err := secrets.NewBundle(secrets.NewClock(), config.TalosVersionCurrent)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := yaml.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, raw
}

// fakeNode serves the COSI State API over mTLS with a serving certificate of the bundle's OS CA,
// the way a configured Talos node does.
func fakeNode(t *testing.T, b *secrets.Bundle, clusterID, uuid string) string {
	t.Helper()
	ca, err := tls.X509KeyPair(b.Certs.OS.Crt, b.Certs.OS.Key)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(ca.Certificate[0])
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "node"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, pub, ca.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	creds := credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: priv}},
		ClientCAs:    pool, ClientAuth: tls.RequireAndVerifyClientCert,
	})
	st := state.WrapCore(namespaced.NewState(inmem.Build))
	info := cluster.NewInfo()
	info.TypedSpec().ClusterID, info.TypedSpec().ClusterName = clusterID, "prod"
	si := hardware.NewSystemInformation(hardware.SystemInformationID)
	si.TypedSpec().UUID = uuid
	ctx := context.Background()
	if err := st.Create(ctx, info); err != nil {
		t.Fatal(err)
	}
	if err := st.Create(ctx, si); err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(creds))
	v1alpha1.RegisterStateServer(srv, server.NewState(st))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l) //nolint:errcheck
	t.Cleanup(srv.Stop)
	return l.Addr().String()
}

func TestReadNode(t *testing.T) {
	b, raw := newBundle(t)
	addr := fakeNode(t, b, b.Cluster.ID, "uuid-1")
	id, err := kubelab.BundleClusterID(raw)
	if err != nil || id != b.Cluster.ID {
		t.Fatalf("BundleClusterID %q %v, want %q", id, err, b.Cluster.ID)
	}
	r := &Reader{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, err := r.ReadNode(ctx, raw, addr)
	if err != nil {
		t.Fatal(err)
	}
	if f.ClusterID != b.Cluster.ID || f.UUID != "uuid-1" || f.ClusterName != "prod" {
		t.Errorf("facts %+v", f)
	}

	// another cluster's bundle: the TLS handshake fails, an identity mismatch
	_, other := newBundle(t)
	_, err = r.ReadNode(ctx, other, addr)
	var ne *kubelab.NodeError
	if !errors.As(err, &ne) || ne.Reason != kubelab.ReasonIdentityMismatch {
		t.Errorf("other bundle: %v", err)
	}

	// nothing listens: unreachable
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := l.Addr().String()
	l.Close()
	_, err = r.ReadNode(ctx, raw, dead)
	if !errors.As(err, &ne) || ne.Reason != kubelab.ReasonNodeUnreachable {
		t.Errorf("dead endpoint: %v", err)
	}
}
