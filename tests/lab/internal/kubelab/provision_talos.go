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
	"github.com/siderolabs/talos/pkg/machinery/resources/block"
	"github.com/siderolabs/talos/pkg/machinery/resources/hardware"
	"github.com/siderolabs/talos/pkg/machinery/resources/network"
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

// Inventory reads, without a client certificate, what discovery records of a node in maintenance
// mode: its certificate's SPKI fingerprint, identity, physical links and disks.
func (TalosMaintenance) Inventory(ctx context.Context, endpoint string) (Inventory, error) {
	var (
		mu sync.Mutex
		fp string
	)
	conf := &tls.Config{
		InsecureSkipVerify: true, //nolint:gosec // maintenance mode: the identity is checked by the caller
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
		return Inventory{}, err
	}
	defer c.Close() //nolint:errcheck
	si, err := safe.StateGetByID[*hardware.SystemInformation](ctx, c.COSI, hardware.SystemInformationID)
	if err != nil {
		return Inventory{}, err
	}
	inv := Inventory{UUID: si.TypedSpec().UUID, Serial: si.TypedSpec().SerialNumber}
	links, err := safe.StateListAll[*network.LinkStatus](ctx, c.COSI)
	if err != nil {
		return Inventory{}, err
	}
	for l := range links.All() {
		s := l.TypedSpec()
		if !s.Physical() {
			continue
		}
		perm, hw := s.PermanentAddr.String(), s.HardwareAddr.String()
		mac := perm
		if len(s.PermanentAddr) == 0 {
			mac, perm = hw, ""
		}
		inv.MACs = append(inv.MACs, mac)
		inv.Links = append(inv.Links, DiscoveredLink{Name: l.Metadata().ID(), PermanentAddr: perm, HardwareAddr: hw})
	}
	disks, err := safe.StateListAll[*block.Disk](ctx, c.COSI)
	if err != nil {
		return Inventory{}, err
	}
	for d := range disks.All() {
		s := d.TypedSpec()
		inv.Disks = append(inv.Disks, DiscoveredDisk{Name: d.Metadata().ID(), DevPath: s.DevPath, Size: int64(s.Size),
			Model: s.Model, Serial: s.Serial})
	}
	mu.Lock()
	defer mu.Unlock()
	if fp == "" {
		return Inventory{}, errors.New("no server certificate seen")
	}
	inv.Fingerprint = fp
	return inv, nil
}
