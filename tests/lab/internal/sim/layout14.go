package sim

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"

	"gopkg.in/yaml.v3"
)

// Layout14 is the lab's approximation of the Talos v1.14 multi-document layout (talos-api.md
// §5.3): a 1.13 configuration with fields moved out of the v1alpha1 document into the v1.14
// documents. talos-sim's 1.14 nodes run Talos's own 1.14 (machinery v1.14.1); this is what the C++
// render still writes at contract 1.14, and the render oracle uses it for that
// (tests/golden/render/layout14-gap.txt measures what separates the two):
//
//	cluster.id / secret            -> DiscoveryIdentityConfig{clusterID, clusterSecret}
//	cluster.discovery              -> DiscoveryServiceConfig{name: default, endpoint}
//	cluster.clusterName, endpoint  -> KubeClusterConfig{clusterName, endpoint}
//	cluster.ca / acceptedCAs       -> KubeAPIServerCAConfig{issuingCA{cert,key}, acceptedCAs} (raw PEM)
//	cluster.aggregatorCA           -> KubeAggregatorCAConfig (raw PEM)
//	cluster.serviceAccount         -> KubeServiceAccountConfig{issuer{privateKey}} (raw PEM)
//	cluster.secretboxEncryption... -> KubeEtcdEncryptionConfig{config: EncryptionConfiguration}
//	cluster.network (not cni)      -> KubeNetworkConfig{dnsDomain, podSubnets, serviceSubnets}
//	machine.install                -> UnattendedInstallConfig{installer.image, provisioning{diskSelector.match, wipe}}
//	machine.sysctls                -> SysctlConfig{params}
//	machine.features.kubePrism     -> KubePrismConfig{port}
//
// machine.type, machine.token, machine.ca, machine.certSANs, cluster.token and cluster.etcd.ca
// stay in v1alpha1. Comments are dropped. This is not Talos's generator: the field sets of the
// new documents follow the v1.14 documentation as far as the lab needs them.
func Layout14(data []byte) ([]byte, error) {
	docs, err := decodeNodes(data)
	if err != nil {
		return nil, err
	}

	var out []*yaml.Node

	for _, d := range docs {
		stripComments(d)

		if get(d, "version") != nil && get(d, "kind") == nil {
			out = append(out, d)
			out = append(out, moveTo14(d)...)

			continue
		}

		out = append(out, d)
	}

	var buf bytes.Buffer

	for i, d := range out {
		if i > 0 {
			buf.WriteString("---\n")
		}

		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(4)

		if err := enc.Encode(d); err != nil {
			return nil, err
		}

		if err := enc.Close(); err != nil {
			return nil, err
		}
	}

	return buf.Bytes(), nil
}

//nolint:gocyclo,cyclop
func moveTo14(root *yaml.Node) []*yaml.Node {
	var docs []*yaml.Node

	newDoc := func(kind string) *yaml.Node {
		d := mapping()
		set(d, "apiVersion", scalar("v1alpha1"))
		set(d, "kind", scalar(kind))
		docs = append(docs, d)

		return d
	}

	cluster := get(root, "cluster")
	mach := get(root, "machine")

	if cluster != nil {
		if id, secret := get(cluster, "id"), get(cluster, "secret"); id != nil || secret != nil {
			d := newDoc("DiscoveryIdentityConfig")
			setIf(d, "clusterID", id)
			setIf(d, "clusterSecret", secret)
			del(cluster, "id")
			del(cluster, "secret")
		}

		if disc := get(cluster, "discovery"); disc != nil {
			enabled := get(disc, "enabled")
			svcDisabled := get(disc, "registries", "service", "disabled")

			if enabled != nil && enabled.Value == "true" && (svcDisabled == nil || svcDisabled.Value != "true") {
				endpoint := "https://discovery.talos.dev/"
				if ep := get(disc, "registries", "service", "endpoint"); ep != nil {
					endpoint = ep.Value
				}

				d := newDoc("DiscoveryServiceConfig")
				set(d, "name", scalar("default"))
				set(d, "endpoint", scalar(endpoint))
			}

			del(cluster, "discovery")
		}

		name, endpoint := get(cluster, "clusterName"), get(cluster, "controlPlane", "endpoint")
		if name != nil || endpoint != nil {
			d := newDoc("KubeClusterConfig")
			setIf(d, "clusterName", name)
			setIf(d, "endpoint", endpoint)
			del(cluster, "clusterName")

			if cp := get(cluster, "controlPlane"); cp != nil {
				del(cp, "endpoint")

				if len(cp.Content) == 0 {
					del(cluster, "controlPlane")
				}
			}
		}

		if ca := get(cluster, "ca"); ca != nil {
			d := newDoc("KubeAPIServerCAConfig")
			set(d, "issuingCA", pemPair(ca))

			if acc := get(cluster, "acceptedCAs"); acc != nil && acc.Kind == yaml.SequenceNode {
				seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
				for _, item := range acc.Content {
					if crt := get(item, "crt"); crt != nil {
						seq.Content = append(seq.Content, rawPEM(crt))
					}
				}

				set(d, "acceptedCAs", seq)
			}

			del(cluster, "ca")
			del(cluster, "acceptedCAs")
		}

		if agg := get(cluster, "aggregatorCA"); agg != nil {
			d := newDoc("KubeAggregatorCAConfig")
			set(d, "issuingCA", pemPair(agg))
			del(cluster, "aggregatorCA")
		}

		if sa := get(cluster, "serviceAccount", "key"); sa != nil {
			d := newDoc("KubeServiceAccountConfig")
			issuer := mapping()
			set(issuer, "privateKey", rawPEM(sa))
			set(d, "issuer", issuer)
			del(cluster, "serviceAccount")
		}

		for _, field := range []struct{ key, provider string }{
			{"secretboxEncryptionSecret", "secretbox"},
			{"aescbcEncryptionSecret", "aescbc"},
		} {
			secret := get(cluster, field.key)
			if secret == nil {
				continue
			}

			d := newDoc("KubeEtcdEncryptionConfig")
			set(d, "config", encryptionConfiguration(field.provider, secret.Value))
			del(cluster, field.key)
		}

		if netw := get(cluster, "network"); netw != nil {
			d := newDoc("KubeNetworkConfig")

			for _, k := range []string{"dnsDomain", "podSubnets", "serviceSubnets"} {
				setIf(d, k, get(netw, k))
				del(netw, k)
			}

			if len(netw.Content) == 0 {
				del(cluster, "network")
			}
		}
	}

	if mach != nil {
		if inst := get(mach, "install"); inst != nil && get(inst, "diskSelector") == nil {
			d := newDoc("UnattendedInstallConfig")

			if img := get(inst, "image"); img != nil {
				installer := mapping()
				set(installer, "image", img)
				set(d, "installer", installer)
			}

			prov := mapping()

			if disk := get(inst, "disk"); disk != nil {
				sel := mapping()
				set(sel, "match", scalar(fmt.Sprintf("disk.dev_path == %q", disk.Value)))
				set(prov, "diskSelector", sel)
			}

			if wipe := get(inst, "wipe"); wipe != nil {
				set(prov, "wipe", wipe)
			}

			set(d, "provisioning", prov)
			del(mach, "install")
		}

		if sysctls := get(mach, "sysctls"); sysctls != nil {
			d := newDoc("SysctlConfig")
			set(d, "params", sysctls)
			del(mach, "sysctls")
		}

		if prism := get(mach, "features", "kubePrism"); prism != nil {
			if enabled := get(prism, "enabled"); enabled != nil && enabled.Value == "true" {
				d := newDoc("KubePrismConfig")
				port := get(prism, "port")
				if port == nil {
					port = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "7445"}
				}

				set(d, "port", port)
			}

			del(get(mach, "features"), "kubePrism")
		}
	}

	return docs
}

func encryptionConfiguration(provider, secret string) *yaml.Node {
	var n yaml.Node

	text := fmt.Sprintf(`resources:
    - providers:
        - %s:
            keys:
                - name: key1
                  secret: %q
      resources:
        - secrets
`, provider, secret)

	if err := yaml.Unmarshal([]byte(text), &n); err != nil {
		panic(err) // static text
	}

	return n.Content[0]
}

// pemPair turns a v1alpha1 {crt, key} (base64 of PEM) into {cert, key} with raw PEM strings.
func pemPair(n *yaml.Node) *yaml.Node {
	out := mapping()

	if crt := get(n, "crt"); crt != nil {
		set(out, "cert", rawPEM(crt))
	}

	if key := get(n, "key"); key != nil && key.Value != "" {
		set(out, "key", rawPEM(key))
	}

	return out
}

func rawPEM(n *yaml.Node) *yaml.Node {
	b, err := base64.StdEncoding.DecodeString(n.Value)
	if err != nil {
		return scalar(n.Value)
	}

	s := scalar(string(bytes.TrimRight(b, "\n")))
	s.Style = yaml.LiteralStyle

	return s
}

func decodeNodes(data []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))

	var out []*yaml.Node

	for {
		var doc yaml.Node

		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}

		if err != nil {
			return nil, fmt.Errorf("parse machine configuration: %w", err)
		}

		if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
			out = append(out, doc.Content[0])
		}
	}
}

func stripComments(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""

	for _, c := range n.Content {
		stripComments(c)
	}
}

func mapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"} }

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }

func get(n *yaml.Node, path ...string) *yaml.Node {
	for _, p := range path {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}

		var next *yaml.Node

		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == p {
				next = n.Content[i+1]

				break
			}
		}

		n = next
	}

	return n
}

func set(n *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content[i+1] = v

			return
		}
	}

	n.Content = append(n.Content, scalar(key), v)
}

func setIf(n *yaml.Node, key string, v *yaml.Node) {
	if v != nil {
		set(n, key, v)
	}
}

func del(n *yaml.Node, key string) {
	if n == nil {
		return
	}

	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content = append(n.Content[:i], n.Content[i+2:]...)

			return
		}
	}
}
