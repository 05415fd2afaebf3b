package sim

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"time"

	cosiv1alpha1 "github.com/cosi-project/runtime/api/v1alpha1"
	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/api/storage"
	"github.com/siderolabs/talos/pkg/machinery/constants"
	"github.com/siderolabs/talos/pkg/machinery/role"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// errNotAuthorized is the error of Talos's authorizer.
var errNotAuthorized = status.Error(codes.PermissionDenied, "not authorized")

// rules is the part of machined's per-method role table (internal/app/machined/pkg/system/
// services/machined.go) that covers the methods the lab serves. Missing methods need admin.
var rules = map[string]role.Set{
	"/machine.MachineService/ApplyConfiguration":    role.MakeSet(role.Admin, role.Reader), // reader: maintenance only, checked in the handler
	"/machine.MachineService/EtcdForfeitLeadership": role.MakeSet(role.Admin),
	"/machine.MachineService/EtcdLeaveCluster":      role.MakeSet(role.Admin),
	"/machine.MachineService/EtcdMemberList":        role.MakeSet(role.Admin, role.Operator, role.Reader, role.EtcdBackup),
	"/machine.MachineService/EtcdRemoveMemberByID":  role.MakeSet(role.Admin),
	"/machine.MachineService/EtcdStatus":            role.MakeSet(role.Admin, role.Operator, role.Reader, role.EtcdBackup),
	"/machine.MachineService/Events":                role.MakeSet(role.Admin, role.Operator, role.Reader),
	"/machine.MachineService/Hostname":              role.MakeSet(role.Admin, role.Operator, role.Reader),
	"/machine.MachineService/Reboot":                role.MakeSet(role.Admin, role.Operator),
	"/machine.MachineService/Reset":                 role.MakeSet(role.Admin),
	"/machine.MachineService/Shutdown":              role.MakeSet(role.Admin, role.Operator),
	"/machine.MachineService/Upgrade":               role.MakeSet(role.Admin),
	"/machine.MachineService/Version":               role.MakeSet(role.Admin, role.Operator, role.Reader),

	"/cosi.resource.State/Create":  role.MakeSet(role.Admin),
	"/cosi.resource.State/Destroy": role.MakeSet(role.Admin),
	"/cosi.resource.State/Get":     role.MakeSet(role.Admin, role.Operator, role.Reader),
	"/cosi.resource.State/List":    role.MakeSet(role.Admin, role.Operator, role.Reader),
	"/cosi.resource.State/Update":  role.MakeSet(role.Admin),
	"/cosi.resource.State/Watch":   role.MakeSet(role.Admin, role.Operator, role.Reader),

	"/storage.StorageService/Disks":           role.MakeSet(role.Admin, role.Operator, role.Reader),
	"/storage.StorageService/BlockDeviceWipe": role.MakeSet(role.Admin, role.Reader),
}

// Authorize applies the role table: the caller needs one of the method's roles.
func Authorize(method string, roles role.Set) error {
	allowed, ok := rules[method]
	if !ok {
		allowed = role.MakeSet(role.Admin)
	}

	if allowed.IncludesAny(roles) {
		return nil
	}

	return errNotAuthorized
}

type rolesKey struct{}

func rolesFrom(ctx context.Context) role.Set {
	r, _ := ctx.Value(rolesKey{}).(role.Set) //nolint:errcheck

	return r
}

func (n *Node) newGRPCServer() *grpc.Server {
	creds := credentials.NewTLS(&tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return n.tlsPtr.Load(), nil
		},
	})

	srv := grpc.NewServer(
		grpc.Creds(creds),
		grpc.ForceServerCodecV2(newServerCodec()),
		grpc.MaxRecvMsgSize(constants.GRPCMaxMessageSize),
		grpc.MaxSendMsgSize(constants.GRPCMaxMessageSize),
		grpc.UnaryInterceptor(n.unaryInterceptor),
		grpc.StreamInterceptor(n.streamInterceptor),
	)

	machine.RegisterMachineServiceServer(srv, &machineServer{n: n})
	storage.RegisterStorageServiceServer(srv, &storageServer{n: n})
	cosiv1alpha1.RegisterStateServer(srv, &cosiServer{n: n})

	return srv
}

// peerRoles works out the caller's roles as apid does: reader in maintenance, otherwise the
// Subject O of the client certificate, or the forwarded talos-role metadata when the certificate
// carries os:impersonator.
func (n *Node) peerRoles(ctx context.Context) role.Set {
	s := n.sim

	s.mu.Lock()
	maintenance := n.mode == ModeMaintenance
	s.mu.Unlock()

	p, ok := peer.FromContext(ctx)
	if !ok {
		return role.MakeSet()
	}

	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.PeerCertificates) == 0 {
		if maintenance {
			return role.MakeSet(role.Reader)
		}

		return role.MakeSet()
	}

	roles, _ := role.Parse(info.State.PeerCertificates[0].Subject.Organization)

	if roles.Includes(role.Impersonator) {
		if md, ok := metadata.FromIncomingContext(ctx); ok {
			if forwarded := md.Get(constants.APIAuthzRoleMetadataKey); len(forwarded) > 0 {
				roles, _ = role.Parse(forwarded)
			}
		}
	}

	return roles
}

func (n *Node) unaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	roles := n.peerRoles(ctx)
	rec := n.recordCall(ctx, info.FullMethod, roles, req)

	resp, err := n.unary(ctx, req, info, handler, roles)

	n.finishCall(rec, err)

	return resp, err
}

func (n *Node) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler, roles role.Set) (any, error) {
	if err := n.injectFault(ctx, info.FullMethod); err != nil {
		return nil, err
	}

	rt, err := n.route(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}

	switch rt.kind {
	case routeOne2One:
		return n.forwardUnary(ctx, info.FullMethod, req, rt.targets[0], roles)
	case routeOne2Many:
		return n.fanOutUnary(ctx, info.FullMethod, req, rt.targets, roles)
	}

	if err := Authorize(info.FullMethod, roles); err != nil {
		return nil, err
	}

	return handler(context.WithValue(ctx, rolesKey{}, roles), req)
}

type wrappedStream struct {
	grpc.ServerStream

	ctx context.Context //nolint:containedctx
}

func (w *wrappedStream) Context() context.Context { return w.ctx }

func (n *Node) streamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx := ss.Context()
	roles := n.peerRoles(ctx)
	rec := n.recordCall(ctx, info.FullMethod, roles, nil)

	err := n.stream(srv, ss, info, handler, roles)

	n.finishCall(rec, err)

	return err
}

func (n *Node) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler, roles role.Set) error {
	ctx := ss.Context()

	if err := n.injectFault(ctx, info.FullMethod); err != nil {
		return err
	}

	rt, err := n.route(ctx, info.FullMethod)
	if err != nil {
		return err
	}

	switch rt.kind {
	case routeOne2One:
		return n.forwardStream(ss, info.FullMethod, rt.targets[0], roles)
	case routeOne2Many:
		return status.Errorf(codes.Unimplemented, "one-2-many streaming is not simulated for method %s", info.FullMethod)
	}

	if err := Authorize(info.FullMethod, roles); err != nil {
		return err
	}

	return handler(srv, &wrappedStream{ServerStream: ss, ctx: context.WithValue(ctx, rolesKey{}, roles)})
}

// CallRecord is one entry of a node's call log.
type CallRecord struct {
	Method     string `json:"method"`
	Role       string `json:"role"`
	Time       string `json:"time"`
	Code       string `json:"code"`
	Message    string `json:"message,omitempty"`
	DurationMS int64  `json:"durationMs"`
	Node       string `json:"node,omitempty"`      // `node` metadata of the call
	Nodes      string `json:"nodes,omitempty"`     // `nodes` metadata, comma-separated
	ProxyFrom  string `json:"proxyFrom,omitempty"` // set when another node forwarded the call
	Request    any    `json:"request,omitempty"`   // a summary for the calls that change state

	start time.Time
}

const maxCalls = 10000

func (n *Node) recordCall(ctx context.Context, method string, roles role.Set, req any) *CallRecord {
	now := time.Now()
	rec := &CallRecord{
		Method:  method,
		Role:    strings.Join(roles.Strings(), ","),
		Time:    now.UTC().Format(time.RFC3339Nano),
		Code:    "Running",
		Request: requestSummary(req),
		start:   now,
	}

	if md, ok := metadata.FromIncomingContext(ctx); ok {
		rec.Node = strings.Join(md.Get("node"), ",")
		rec.Nodes = strings.Join(md.Get("nodes"), ",")
		rec.ProxyFrom = strings.Join(md.Get("proxyfrom"), ",")
	}

	s := n.sim
	s.mu.Lock()
	n.calls = append(n.calls, rec)

	if len(n.calls) > maxCalls {
		n.calls = n.calls[len(n.calls)-maxCalls:]
	}
	s.mu.Unlock()

	return rec
}

func (n *Node) finishCall(rec *CallRecord, err error) {
	st := status.Convert(err)

	s := n.sim
	s.mu.Lock()
	rec.Code = st.Code().String()
	rec.DurationMS = time.Since(rec.start).Milliseconds()

	if err != nil {
		rec.Message = st.Message()
	}
	s.mu.Unlock()
}

// requestSummary records what a state-changing call asked for (never the config bytes).
func requestSummary(req any) any {
	switch r := req.(type) {
	case *machine.ResetRequest:
		labels := []string{}
		for _, p := range r.GetSystemPartitionsToWipe() {
			labels = append(labels, p.GetLabel())
		}

		return map[string]any{
			"graceful": r.GetGraceful(), "reboot": r.GetReboot(), "mode": r.GetMode().String(),
			"systemPartitionsToWipe": labels, "userDisksToWipe": r.GetUserDisksToWipe(),
		}
	case *machine.ApplyConfigurationRequest:
		return map[string]any{
			"mode": r.GetMode().String(), "dryRun": r.GetDryRun(),
			"sha256": configDigest(r.GetData()), "size": len(r.GetData()),
		}
	case *machine.EtcdRemoveMemberByIDRequest:
		return map[string]any{"memberId": fmt.Sprintf("%016x", r.GetMemberId())}
	case *machine.EtcdMemberListRequest:
		return map[string]any{"queryLocal": r.GetQueryLocal()}
	case *cosiv1alpha1.GetRequest:
		return map[string]any{"namespace": r.GetNamespace(), "type": r.GetType(), "id": r.GetId()}
	case *cosiv1alpha1.ListRequest:
		return map[string]any{"namespace": r.GetNamespace(), "type": r.GetType()}
	default:
		return nil
	}
}
