package kubelab

import (
	"context"
	"crypto/tls"
	"errors"
	"sync"

	"github.com/cosi-project/runtime/pkg/safe"
	cryptox509 "github.com/siderolabs/crypto/x509"
	machineapi "github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/client"
	"github.com/siderolabs/talos/pkg/machinery/resources/hardware"
	"google.golang.org/grpc"
)

// TalosMaintenance is the MaintenanceClient over Talos's own Go client, as talosctl --insecure
// (with --cert-fingerprint for the apply).
type TalosMaintenance struct{}

func dialMaintenance(ctx context.Context, endpoint string, conf *tls.Config) (*client.Client, error) {
	return client.New(ctx,
		client.WithEndpoints(endpoint),
		client.WithTLSConfig(conf),
		client.WithGRPCDialOptions(grpc.WithUserAgent(ProvisionUserAgent)),
	)
}

// Probe reads the SystemInformation without a client certificate and records the certificate's
// SPKI fingerprint.
func (TalosMaintenance) Probe(ctx context.Context, endpoint string) (MaintenanceNode, error) {
	var (
		mu sync.Mutex
		fp string
	)
	conf := &tls.Config{
		InsecureSkipVerify: true, //nolint:gosec // maintenance mode: the fingerprint is checked by the caller
		MinVersion:         tls.VersionTLS12,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) > 0 {
				mu.Lock()
				fp = cryptox509.SPKIFingerprint(cs.PeerCertificates[0]).String()
				mu.Unlock()
			}
			return nil
		},
	}
	c, err := dialMaintenance(ctx, endpoint, conf)
	if err != nil {
		return MaintenanceNode{}, err
	}
	defer c.Close() //nolint:errcheck
	si, err := safe.StateGetByID[*hardware.SystemInformation](ctx, c.COSI, hardware.SystemInformationID)
	if err != nil {
		return MaintenanceNode{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	if fp == "" {
		return MaintenanceNode{}, errors.New("no server certificate seen")
	}
	return MaintenanceNode{Fingerprint: fp, UUID: si.TypedSpec().UUID}, nil
}

// Apply sends the configuration over a connection pinned to the fingerprint.
func (TalosMaintenance) Apply(ctx context.Context, endpoint, fingerprint string, config []byte) error {
	want, err := cryptox509.ParseFingerprint(fingerprint)
	if err != nil {
		return err
	}
	conf := &tls.Config{
		InsecureSkipVerify: true, //nolint:gosec // pinned by VerifyConnection
		MinVersion:         tls.VersionTLS12,
		VerifyConnection:   cryptox509.MatchSPKIFingerprints(want),
	}
	c, err := dialMaintenance(ctx, endpoint, conf)
	if err != nil {
		return err
	}
	defer c.Close() //nolint:errcheck
	_, err = c.ApplyConfiguration(ctx, &machineapi.ApplyConfigurationRequest{
		Data: config,
		Mode: machineapi.ApplyConfigurationRequest_AUTO,
	})
	return err
}
