package kubelab

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// kubeconfig is the subset of a v1 kubeconfig the lab reads.
type kubeconfig struct {
	CurrentContext string `yaml:"current-context"`
	Clusters       []struct {
		Name    string `yaml:"name"`
		Cluster struct {
			Server                   string `yaml:"server"`
			CertificateAuthority     string `yaml:"certificate-authority"`
			CertificateAuthorityData string `yaml:"certificate-authority-data"`
			InsecureSkipTLSVerify    bool   `yaml:"insecure-skip-tls-verify"`
			TLSServerName            string `yaml:"tls-server-name"`
		} `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		Name string `yaml:"name"`
		User struct {
			ClientCertificate     string `yaml:"client-certificate"`
			ClientCertificateData string `yaml:"client-certificate-data"`
			ClientKey             string `yaml:"client-key"`
			ClientKeyData         string `yaml:"client-key-data"`
			Token                 string `yaml:"token"`
			TokenFile             string `yaml:"tokenFile"`
		} `yaml:"user"`
	} `yaml:"users"`
	Contexts []struct {
		Name    string `yaml:"name"`
		Context struct {
			Cluster   string `yaml:"cluster"`
			User      string `yaml:"user"`
			Namespace string `yaml:"namespace"`
		} `yaml:"context"`
	} `yaml:"contexts"`
}

// LoadKubeconfig builds a Client from one kubeconfig file and its current context (or the named
// one): server, CA (data or file), client certificate (data or file), token or tokenFile. Relative
// paths are relative to the file's directory. The namespace is the context's, else ichor-system.
func LoadKubeconfig(path, contextName string) (*Client, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(raw, &kc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dir := filepath.Dir(path)
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	if contextName == "" {
		contextName = kc.CurrentContext
	}
	if contextName == "" {
		return nil, fmt.Errorf("%s: no current-context", path)
	}
	c := &Client{Namespace: Namespace}
	var clusterName, userName string
	found := false
	for _, x := range kc.Contexts {
		if x.Name == contextName {
			clusterName, userName, found = x.Context.Cluster, x.Context.User, true
			if x.Context.Namespace != "" {
				c.Namespace = x.Context.Namespace
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("%s: context %q not found", path, contextName)
	}
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	found = false
	for _, x := range kc.Clusters {
		if x.Name != clusterName {
			continue
		}
		found = true
		c.Server = strings.TrimRight(x.Cluster.Server, "/")
		tlsConf.InsecureSkipVerify = x.Cluster.InsecureSkipTLSVerify
		tlsConf.ServerName = x.Cluster.TLSServerName
		ca, err := dataOrFile(x.Cluster.CertificateAuthorityData, rel(x.Cluster.CertificateAuthority))
		if err != nil {
			return nil, fmt.Errorf("%s: cluster %q CA: %w", path, clusterName, err)
		}
		if ca != nil {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(ca) {
				return nil, fmt.Errorf("%s: cluster %q: no certificate in the CA data", path, clusterName)
			}
			tlsConf.RootCAs = pool
		}
	}
	if !found || c.Server == "" {
		return nil, fmt.Errorf("%s: cluster %q not found or has no server", path, clusterName)
	}
	for _, x := range kc.Users {
		if x.Name != userName {
			continue
		}
		crt, err := dataOrFile(x.User.ClientCertificateData, rel(x.User.ClientCertificate))
		if err != nil {
			return nil, fmt.Errorf("%s: user %q certificate: %w", path, userName, err)
		}
		key, err := dataOrFile(x.User.ClientKeyData, rel(x.User.ClientKey))
		if err != nil {
			return nil, fmt.Errorf("%s: user %q key: %w", path, userName, err)
		}
		if crt != nil || key != nil {
			pair, err := tls.X509KeyPair(crt, key)
			if err != nil {
				return nil, fmt.Errorf("%s: user %q: %w", path, userName, err)
			}
			tlsConf.Certificates = []tls.Certificate{pair}
		}
		c.Token = x.User.Token
		if c.Token == "" && x.User.TokenFile != "" {
			t, err := os.ReadFile(rel(x.User.TokenFile))
			if err != nil {
				return nil, fmt.Errorf("%s: user %q: %w", path, userName, err)
			}
			c.Token = strings.TrimSpace(string(t))
		}
	}
	c.HTTP = &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: tlsConf, MaxIdleConnsPerHost: 8, IdleConnTimeout: 90 * time.Second},
	}
	return c, nil
}

func dataOrFile(data, file string) ([]byte, error) {
	if data != "" {
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(data))
		if err != nil {
			return nil, errors.New("bad base64")
		}
		return b, nil
	}
	if file != "" {
		return os.ReadFile(file)
	}
	return nil, nil
}
