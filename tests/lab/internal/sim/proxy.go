package sim

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/api/common"
	"github.com/siderolabs/talos/pkg/machinery/constants"
	"github.com/siderolabs/talos/pkg/machinery/role"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Routing as apid's director (internal/app/apid/pkg/director): `node` proxies one-to-one,
// `nodes` fans out (MachineService and friends only), `proxyfrom` forces local handling,
// maintenance mode ignores routing, and only nodes with a client certificate (control planes)
// can forward.

type routeKind int

const (
	routeLocal routeKind = iota
	routeOne2One
	routeOne2Many
)

type route struct {
	kind    routeKind
	targets []string
}

var one2manyPrefixes = []string{
	"/machine.MachineService/",
	"/cluster.ClusterService/",
	"/inspect.InspectService/",
	"/storage.StorageService/",
	"/time.TimeService/",
}

func (n *Node) route(ctx context.Context, method string) (route, error) {
	s := n.sim

	s.mu.Lock()
	maintenance := n.mode == ModeMaintenance
	canForward := n.forwardTLS != nil
	s.mu.Unlock()

	md, ok := metadata.FromIncomingContext(ctx)
	if maintenance || !ok {
		return route{kind: routeLocal}, nil
	}

	if _, exists := md["proxyfrom"]; exists {
		return route{kind: routeLocal}, nil
	}

	nodes, okNodes := md["nodes"]
	node, okNode := md["node"]

	if okNode && len(node) != 1 {
		return route{}, status.Error(codes.InvalidArgument, "node metadata must be single-valued")
	}

	if !canForward {
		s.mu.Lock()
		if okNode && n.isLocalTarget(node[0]) {
			okNode = false
		}

		if okNodes && len(nodes) == 1 && n.isLocalTarget(nodes[0]) {
			okNodes = false
		}
		s.mu.Unlock()
	}

	switch {
	case okNodes:
		if !slices.ContainsFunc(one2manyPrefixes, func(p string) bool { return strings.HasPrefix(method, p) }) {
			return route{}, status.Errorf(codes.InvalidArgument, "one-2-many proxying is not supported for method %s", method)
		}

		if !canForward {
			return route{}, status.Error(codes.PermissionDenied, "no request forwarding")
		}

		return route{kind: routeOne2Many, targets: nodes}, nil
	case okNode:
		if !canForward {
			return route{}, status.Error(codes.PermissionDenied, "no request forwarding")
		}

		return route{kind: routeOne2One, targets: node}, nil
	default:
		return route{kind: routeLocal}, nil
	}
}

// rawCodec passes serialized messages through, as grpc-proxy does.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	if b, ok := v.(*[]byte); ok {
		return *b, nil
	}

	return nil, fmt.Errorf("rawCodec: unexpected %T", v)
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	b, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("rawCodec: unexpected %T", v)
	}

	*b = append((*b)[:0], data...)

	return nil
}

func (rawCodec) Name() string { return "proto" }

// rawReply is a forwarded reply as its target sent it. The node's server writes it as it is
// (serverCodec), as apid's grpc-proxy passes frames through: decoding every forwarded reply into
// its type only for gRPC to encode it again cost the simulator CPU that the readers it serves
// then waited for (bench/HISTORY.md, "the lab's forwarder").
type rawReply struct{ b []byte }

// serverCodec is gRPC's proto codec, except that a rawReply is sent as its bytes.
type serverCodec struct{ encoding.CodecV2 }

func (c serverCodec) Marshal(v any) (mem.BufferSlice, error) {
	if r, ok := v.(*rawReply); ok {
		return mem.BufferSlice{mem.SliceBuffer(r.b)}, nil
	}

	return c.CodecV2.Marshal(v)
}

func newServerCodec() serverCodec {
	return serverCodec{encoding.GetCodecV2(grpcproto.Name)}
}

// resolveTarget maps a `node` value to the address to dial. Targets outside the simulator are
// never dialled unless they are loopback addresses.
func (s *Sim) resolveTarget(from *Node, target string) (string, error) {
	s.mu.Lock()

	var match *Node

	for _, n := range s.nodes {
		if n.Spec.Address == target || n.hostname() == target {
			if match == nil || (from.cluster != nil && n.cluster == from.cluster) {
				match = n
			}
		}
	}
	s.mu.Unlock()

	if match != nil {
		return net.JoinHostPort(match.Spec.Address, strconv.Itoa(match.Spec.Port)), nil
	}

	addr, err := netip.ParseAddr(target)
	if err != nil {
		return "", status.Errorf(codes.Unavailable,
			`connection error: desc = "transport: Error while dialing: dial tcp: lookup %s: no such host"`, target)
	}

	if !addr.IsLoopback() {
		return "", status.Errorf(codes.Unavailable,
			`connection error: desc = "transport: Error while dialing: dial tcp %s: i/o timeout"`,
			net.JoinHostPort(target, strconv.Itoa(constants.ApidPort)))
	}

	return net.JoinHostPort(target, strconv.Itoa(constants.ApidPort)), nil
}

// dials counts the forwarding connections made, for the tests: a forwarded call on a kept backend
// makes none.
var dials atomic.Int64

func (n *Node) dial(target string) (*grpc.ClientConn, error) {
	dials.Add(1)

	addr, err := n.sim.resolveTarget(n, target)
	if err != nil {
		return nil, err
	}

	n.sim.mu.Lock()
	base := n.forwardTLS
	n.sim.mu.Unlock()

	if base == nil {
		return nil, status.Error(codes.PermissionDenied, "no request forwarding")
	}

	conf := base.Clone()
	conf.ServerName = target

	return grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(credentials.NewTLS(conf)),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(constants.GRPCMaxMessageSize)),
	)
}

// outgoing builds the metadata of a forwarded call: the caller's metadata without routing keys,
// plus proxyfrom and the caller's roles in talos-role.
func outgoing(ctx context.Context, roles role.Set) context.Context {
	md, _ := metadata.FromIncomingContext(ctx)
	md = md.Copy()

	if authority := md[":authority"]; len(authority) > 0 {
		md.Set("proxyfrom", authority...)
	} else {
		md.Set("proxyfrom", "unknown")
	}

	delete(md, ":authority")
	delete(md, "nodes")
	delete(md, "node")
	md.Set(constants.APIAuthzRoleMetadataKey, roles.Strings()...)

	return metadata.NewOutgoingContext(ctx, md)
}

// backends keeps one connection per forwarding node and target for unary and streaming calls, as
// apid's director keeps its remote backends: a cluster read through one endpoint makes one
// handshake per target, not one per call. A connection is kept only while it works: a call failing Unavailable
// drops it, so the next call dials afresh (a node that restarted is not left behind gRPC's
// reconnect backoff), and a change of the forwarding credentials (a reset) drops it. A dropped
// connection is closed once the calls still on it are past their bounds.
type backend struct {
	base *tls.Config
	addr string
	conn *grpc.ClientConn
}

var (
	backendsMu sync.Mutex
	backends   = map[*Node]map[string]*backend{}
)

func (n *Node) backend(target string) (*backend, error) {
	addr, err := n.sim.resolveTarget(n, target)
	if err != nil {
		return nil, err
	}

	n.sim.mu.Lock()
	base := n.forwardTLS
	n.sim.mu.Unlock()

	backendsMu.Lock()
	defer backendsMu.Unlock()

	mine := backends[n]
	if b := mine[target]; b != nil {
		if b.base == base && b.addr == addr {
			return b, nil
		}

		old := b.conn
		time.AfterFunc(time.Minute, func() { old.Close() }) //nolint:errcheck
		delete(mine, target)
	}

	conn, err := n.dial(target)
	if err != nil {
		return nil, err
	}

	if mine == nil {
		mine = map[string]*backend{}
		backends[n] = mine
	}

	b := &backend{base: base, addr: addr, conn: conn}
	mine[target] = b

	return b, nil
}

func (n *Node) dropBackend(target string, b *backend) {
	backendsMu.Lock()
	defer backendsMu.Unlock()

	if backends[n][target] == b {
		delete(backends[n], target)
		time.AfterFunc(time.Minute, func() { b.conn.Close() }) //nolint:errcheck
	}
}

func (n *Node) invokeRaw(ctx context.Context, target, method string, req []byte, roles role.Set) ([]byte, error) {
	b, err := n.backend(target)
	if err != nil {
		return nil, err
	}

	var resp []byte

	err = b.conn.Invoke(outgoing(ctx, roles), method, &req, &resp, grpc.ForceCodec(rawCodec{}))
	if status.Code(err) == codes.Unavailable {
		n.dropBackend(target, b)
	}

	return resp, err
}

func (n *Node) forwardUnary(ctx context.Context, method string, req any, target string, roles role.Set) (any, error) {
	reqBytes, err := proto.Marshal(req.(proto.Message)) //nolint:forcetypeassert
	if err != nil {
		return nil, err
	}

	respBytes, err := n.invokeRaw(ctx, target, method, reqBytes, roles)
	if err != nil {
		return nil, err
	}

	return &rawReply{b: respBytes}, nil
}

// fanOutUnary calls every target and merges the replies the way apid does: each reply gets
// metadata.hostname = target appended to its first message; a failing target adds a message
// with only metadata.error and metadata.status set, and the call as a whole succeeds.
func (n *Node) fanOutUnary(ctx context.Context, method string, req any, targets []string, roles role.Set) (any, error) {
	reqBytes, err := proto.Marshal(req.(proto.Message)) //nolint:forcetypeassert
	if err != nil {
		return nil, err
	}

	parts := make([][]byte, len(targets))

	var wg sync.WaitGroup

	for i, target := range targets {
		wg.Add(1)

		go func() {
			defer wg.Done()

			resp, err := n.invokeRaw(ctx, target, method, reqBytes, roles)
			if err == nil {
				resp, err = appendInfo(resp, target)
			}

			if err != nil {
				resp, _ = buildError(target, err) //nolint:errcheck
			}

			parts[i] = resp
		}()
	}

	wg.Wait()

	resp, err := newMessage(method, false)
	if err != nil {
		return nil, err
	}

	var all []byte
	for _, p := range parts {
		all = append(all, p...)
	}

	return resp, proto.Unmarshal(all, resp)
}

// appendInfo is apid's AppendInfo for unary replies: add common.Metadata{hostname} to the first
// (field 1) message of the serialized reply.
func appendInfo(resp []byte, target string) ([]byte, error) {
	payload, err := proto.Marshal(&common.Empty{Metadata: &common.Metadata{Hostname: target}})
	if err != nil {
		return nil, err
	}

	if len(resp) == 0 {
		return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), payload), nil
	}

	typ, n1 := protowire.ConsumeVarint(resp)
	if n1 < 0 {
		return nil, protowire.ParseError(n1)
	}

	_, n2 := protowire.ConsumeVarint(resp[n1:])
	if n2 < 0 {
		return nil, protowire.ParseError(n2)
	}

	if typ != (1<<3)|2 {
		return nil, fmt.Errorf("unexpected message format: %d", typ)
	}

	body := resp[n1+n2:]
	prefix := protowire.AppendVarint(protowire.AppendVarint(nil, (1<<3)|2), uint64(len(body)+len(payload)))

	return slices.Concat(prefix, body, payload), nil
}

func buildError(target string, err error) ([]byte, error) {
	return proto.Marshal(&common.EmptyResponse{Messages: []*common.Empty{{
		Metadata: &common.Metadata{
			Hostname: target,
			Error:    err.Error(),
			Status:   status.Convert(err).Proto(),
		},
	}}})
}

// forwardStream proxies a server-streaming call (COSI List) one-to-one.
func (n *Node) forwardStream(ss grpc.ServerStream, method, target string, roles role.Set) error {
	reqMsg, err := newMessage(method, true)
	if err != nil {
		return err
	}

	if err := ss.RecvMsg(reqMsg); err != nil {
		return err
	}

	reqBytes, err := proto.Marshal(reqMsg)
	if err != nil {
		return err
	}

	// On the kept backend, as the unary calls: apid's director proxies streams over the same
	// remote backend. Dialling per stream made every forwarded COSI List a handshake in the
	// simulator (three per node read), which the bench measured instead of the readers.
	b, err := n.backend(target)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(outgoing(ss.Context(), roles))
	defer cancel()

	cs, err := b.conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, method, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		if status.Code(err) == codes.Unavailable {
			n.dropBackend(target, b)
		}

		return err
	}

	if err := cs.SendMsg(&reqBytes); err != nil {
		return err
	}

	if err := cs.CloseSend(); err != nil {
		return err
	}

	for {
		var msg []byte

		if err := cs.RecvMsg(&msg); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}

			if status.Code(err) == codes.Unavailable {
				n.dropBackend(target, b)
			}

			return err
		}

		if err := ss.SendMsg(&rawReply{b: msg}); err != nil {
			return err
		}
	}
}

// newMessage returns an empty request (input) or response message of a full method name.
func newMessage(fullMethod string, input bool) (proto.Message, error) {
	svc, meth, ok := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	if !ok {
		return nil, fmt.Errorf("bad method name %q", fullMethod)
	}

	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc))
	if err != nil {
		return nil, err
	}

	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("%s is not a service", svc)
	}

	md := sd.Methods().ByName(protoreflect.Name(meth))
	if md == nil {
		return nil, status.Errorf(codes.Unimplemented, "unknown method %s", fullMethod)
	}

	msg := md.Output()
	if input {
		msg = md.Input()
	}

	mt, err := protoregistry.GlobalTypes.FindMessageByName(msg.FullName())
	if err != nil {
		return nil, err
	}

	return mt.New().Interface(), nil
}
