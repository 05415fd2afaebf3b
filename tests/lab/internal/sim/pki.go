package sim

import (
	"crypto/tls"
	stdx509 "crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/siderolabs/crypto/x509"
	clientconfig "github.com/siderolabs/talos/pkg/machinery/client/config"
	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"github.com/siderolabs/talos/pkg/machinery/constants"
	"github.com/siderolabs/talos/pkg/machinery/role"
	"go.yaml.in/yaml/v4"
)

// contractOf maps a scenario contract ("1.13") to the generator's version contract; "1.14" is
// Talos's own (machinery v1.14.1).
func contractOf(c string) *config.VersionContract {
	switch c {
	case "1.12":
		return config.TalosVersion1_12
	case "1.14":
		return config.TalosVersion1_14
	default:
		return config.TalosVersion1_13
	}
}

// loadOrCreateBundle reads the cluster's secrets.yaml, or generates a new bundle and writes it
// (mode 0600) the way `talosctl gen secrets` does; with aescbc, the way it did before Talos 1.3
// (an aescbc encryption secret in place of secretbox's: a bundle holds one of the two).
func loadOrCreateBundle(path, contract string, aescbc bool) (*secrets.Bundle, bool, error) {
	if _, err := os.Stat(path); err == nil {
		b, err := secrets.LoadBundle(path)
		if err != nil {
			return nil, false, fmt.Errorf("load %s: %w", path, err)
		}

		return b, false, nil
	}

	b, err := secrets.NewBundle(secrets.NewClock(), contractOf(contract))
	if err != nil {
		return nil, false, err
	}

	if aescbc {
		// Both are 32 random bytes in base64 (cis.CreateEncryptionToken).
		b.Secrets.AESCBCEncryptionSecret = b.Secrets.SecretboxEncryptionSecret
		b.Secrets.SecretboxEncryptionSecret = ""
	}

	data, err := yaml.Marshal(b)
	if err != nil {
		return nil, false, err
	}

	if err := writeFileAtomic(path, data, 0o600); err != nil {
		return nil, false, err
	}

	return b, true, nil
}

// writeTalosconfig writes a talosconfig with one context named after the cluster and a client
// certificate for the given roles, unless the file already exists.
func writeTalosconfig(path, context string, endpoints []string, b *secrets.Bundle, roles role.Set) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}

	cert, err := b.GenerateTalosAPIClientCertificate(roles)
	if err != nil {
		return err
	}

	cfg := clientconfig.NewConfig(context, endpoints, b.Certs.OS.Crt, cert)

	data, err := cfg.Bytes()
	if err != nil {
		return err
	}

	return writeFileAtomic(path, data, 0o600)
}

// issueServerCert makes an apid server certificate signed by the OS CA, as a control plane does:
// Ed25519, SANs = node IPs + 127.0.0.1 + hostname, CN = hostname, EKU serverAuth.
func issueServerCert(ca *x509.PEMEncodedCertificateAndKey, ips []net.IP, dnsNames []string, cn string) (*tls.Certificate, error) {
	authority, err := x509.NewCertificateAuthorityFromCertificateAndKey(ca)
	if err != nil {
		return nil, fmt.Errorf("OS CA: %w", err)
	}

	kp, err := x509.NewKeyPair(authority,
		x509.IPAddresses(ips),
		x509.DNSNames(dnsNames),
		x509.CommonName(cn),
		x509.NotAfter(time.Now().Add(x509.DefaultCertificateValidityDuration)),
		x509.KeyUsage(stdx509.KeyUsageDigitalSignature),
		x509.ExtKeyUsage([]stdx509.ExtKeyUsage{stdx509.ExtKeyUsageServerAuth}),
	)
	if err != nil {
		return nil, err
	}

	return kp.Certificate, nil
}

// issueClientCert makes a client certificate (EKU clientAuth only) for the given roles.
func issueClientCert(ca *x509.PEMEncodedCertificateAndKey, cn string, roles ...role.Role) (*tls.Certificate, error) {
	authority, err := x509.NewCertificateAuthorityFromCertificateAndKey(ca)
	if err != nil {
		return nil, err
	}

	orgs := make([]string, 0, len(roles))
	for _, r := range roles {
		orgs = append(orgs, string(r))
	}

	kp, err := x509.NewKeyPair(authority,
		x509.CommonName(cn),
		x509.Organization(orgs...),
		x509.NotAfter(time.Now().Add(x509.DefaultCertificateValidityDuration)),
		x509.KeyUsage(stdx509.KeyUsageDigitalSignature),
		x509.ExtKeyUsage([]stdx509.ExtKeyUsage{stdx509.ExtKeyUsageClientAuth}),
	)
	if err != nil {
		return nil, err
	}

	return kp.Certificate, nil
}

// maintenanceCert is a per-boot random self-signed Ed25519 CA and a server certificate it signs
// (CN maintenance-service.talos.dev), as MaintenanceRootSecrets and the maintenance API
// certificate of Talos.
type maintenanceCert struct {
	cert        *tls.Certificate
	caPEM       []byte
	fingerprint string // SPKI fingerprint of the server certificate (talosctl --cert-fingerprint)
}

func newMaintenanceCert(ips []net.IP, dnsNames []string) (*maintenanceCert, error) {
	ca, err := x509.NewSelfSignedCertificateAuthority()
	if err != nil {
		return nil, err
	}

	kp, err := x509.NewKeyPair(ca,
		x509.IPAddresses(ips),
		x509.DNSNames(dnsNames),
		x509.CommonName(constants.MaintenanceServiceCommonName),
		x509.NotAfter(time.Now().Add(x509.DefaultCertificateValidityDuration)),
		x509.KeyUsage(stdx509.KeyUsageDigitalSignature),
		x509.ExtKeyUsage([]stdx509.ExtKeyUsage{stdx509.ExtKeyUsageServerAuth}),
	)
	if err != nil {
		return nil, err
	}

	fp, err := x509.SPKIFingerprintFromDER(kp.Certificate.Certificate[0])
	if err != nil {
		return nil, err
	}

	return &maintenanceCert{cert: kp.Certificate, caPEM: ca.CrtPEM, fingerprint: fp.String()}, nil
}

// certPool builds a pool from PEM certificates.
func certPool(pems ...[]byte) (*stdx509.CertPool, error) {
	pool := stdx509.NewCertPool()

	for _, p := range pems {
		if len(p) == 0 {
			continue
		}

		if !pool.AppendCertsFromPEM(p) {
			return nil, errors.New("invalid CA certificate PEM")
		}
	}

	return pool, nil
}

// verifyExtKeyUsage is apid's check (internal/app/apid/service.go): every non-CA certificate of
// the verified chain must have ExtKeyUsage exactly [clientAuth].
func verifyExtKeyUsage(_ [][]byte, verifiedChains [][]*stdx509.Certificate) error {
	if len(verifiedChains) == 0 {
		return errors.New("no verified chains")
	}

	for _, cert := range verifiedChains[0] {
		if cert.IsCA {
			continue
		}

		if len(cert.ExtKeyUsage) != 1 || cert.ExtKeyUsage[0] != stdx509.ExtKeyUsageClientAuth {
			return fmt.Errorf("certificate %q is missing the client auth extended key usage", cert.Subject)
		}
	}

	return nil
}

// writeFileAtomic writes data to a temporary file in the same folder and renames it into place.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}

	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}

	defer os.Remove(tmp.Name()) //nolint:errcheck

	if _, err := tmp.Write(data); err != nil {
		tmp.Close() //nolint:errcheck

		return err
	}

	if err := tmp.Chmod(mode); err != nil {
		tmp.Close() //nolint:errcheck

		return err
	}

	if err := tmp.Close(); err != nil {
		return err
	}

	return os.Rename(tmp.Name(), path)
}
