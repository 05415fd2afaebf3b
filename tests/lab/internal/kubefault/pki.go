package kubefault

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// ServingCert issues, in memory, a certificate for 127.0.0.1 and localhost signed by the given CA
// (the lab's STATE/kube/pki/ca.{crt,key}), so that a client that trusts the lab's CA verifies
// the proxy as it verifies the apiserver.
func ServingCert(caCertPEM, caKeyPEM []byte) (tls.Certificate, error) {
	ca, err := tls.X509KeyPair(caCertPEM, caKeyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("CA: %w", err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("CA: %w", err)
	}
	signer, ok := ca.PrivateKey.(crypto.Signer)
	if !ok {
		return tls.Certificate{}, errors.New("CA: the key cannot sign")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "kube-fault-proxy"},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(30 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, key.Public(), signer)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der, caCert.Raw}, PrivateKey: key}, nil
}

// UpstreamTLS is the client side towards the apiserver: its CA, and the client certificate every
// forwarded request carries.
func UpstreamTLS(caCertPEM, clientCertPEM, clientKeyPEM []byte) (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caCertPEM) {
		return nil, errors.New("no certificate in the CA file")
	}
	pair, err := tls.X509KeyPair(clientCertPEM, clientKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("client certificate: %w", err)
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, Certificates: []tls.Certificate{pair}}, nil
}

// WriteKubeconfig writes (mode 0600) a kubeconfig for the tool under test: server = the proxy,
// the given CA, the given client certificate, context "lab" with the namespace.
func WriteKubeconfig(path, server string, caCertPEM, clientCertPEM, clientKeyPEM []byte, namespace string) error {
	b64 := base64.StdEncoding.EncodeToString
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: lab-fault-proxy
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: lab-admin
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: lab
  context:
    cluster: lab-fault-proxy
    user: lab-admin
    namespace: %s
current-context: lab
`, server, b64(caCertPEM), b64(clientCertPEM), b64(clientKeyPEM), namespace)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(kc), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
