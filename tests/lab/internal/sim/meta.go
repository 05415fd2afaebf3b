package sim

import (
	"context"

	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/meta"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// MetaWrite is machined's: Talos 1.14.0 and 1.13.10 refuse the keys Talos owns (meta.IsAPIWriteable,
// talos PR #14192) with PermissionDenied; the others are kept in the node's META until a wipe of it.
func (m *machineServer) MetaWrite(_ context.Context, req *machine.MetaWriteRequest) (*machine.MetaWriteResponse, error) {
	key, err := apiMetaKey(req.GetKey())
	if err != nil {
		return nil, err
	}

	s := m.n.sim
	s.mu.Lock()
	defer s.mu.Unlock()

	if m.n.meta == nil {
		m.n.meta = map[uint8][]byte{}
	}

	m.n.meta[key] = append([]byte(nil), req.GetValue()...)

	return &machine.MetaWriteResponse{Messages: []*machine.MetaWrite{{}}}, nil
}

// MetaDelete is machined's, with the same refusal as MetaWrite.
func (m *machineServer) MetaDelete(_ context.Context, req *machine.MetaDeleteRequest) (*machine.MetaDeleteResponse, error) {
	key, err := apiMetaKey(req.GetKey())
	if err != nil {
		return nil, err
	}

	s := m.n.sim
	s.mu.Lock()
	defer s.mu.Unlock()

	if _, ok := m.n.meta[key]; !ok {
		return nil, status.Errorf(codes.NotFound, "tag not found")
	}

	delete(m.n.meta, key)

	return &machine.MetaDeleteResponse{Messages: []*machine.MetaDelete{{}}}, nil
}

func apiMetaKey(k uint32) (uint8, error) {
	key := uint8(k) //nolint:gosec

	if uint32(key) != k {
		return 0, status.Errorf(codes.InvalidArgument, "key must be a uint8")
	}

	if !meta.IsAPIWriteable(key) {
		return 0, status.Errorf(codes.PermissionDenied, "meta key is not writeable via the API")
	}

	return key, nil
}
