package sim

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"

	cosiv1alpha1 "github.com/cosi-project/runtime/api/v1alpha1"
	"github.com/cosi-project/runtime/pkg/resource"
	"github.com/cosi-project/runtime/pkg/resource/meta"
	"github.com/cosi-project/runtime/pkg/resource/protobuf"
	"github.com/siderolabs/talos/pkg/machinery/role"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// cosiServer is cosi.resource.State with Talos's access policy
// (internal/app/resources/access.go): read-only, unknown types refused, sensitive types for
// admins only, unknown namespaces refused.
type cosiServer struct {
	cosiv1alpha1.UnimplementedStateServer

	n *Node
}

func cosiAccess(roles role.Set, ns, typ string) error {
	rd, ok := resourceDefinitions[typ]
	if !ok {
		return status.Error(codes.PermissionDenied, fmt.Sprintf("resource type %q is not supported", typ))
	}

	if rd.Sensitivity == meta.Sensitive && !roles.Includes(role.Admin) {
		return errNotAuthorized
	}

	if !slices.Contains(namespaces, ns) {
		return status.Error(codes.PermissionDenied, fmt.Sprintf("namespace %q is not supported", ns))
	}

	return nil
}

func (c *cosiServer) matching(ns, typ string) ([]*cosiv1alpha1.Resource, error) {
	s := c.n.sim

	s.mu.Lock()
	all := c.n.resourcesLocked(typ)
	s.mu.Unlock()

	var out []*cosiv1alpha1.Resource

	for _, r := range all {
		md := r.Metadata()
		if md.Namespace() != ns || md.Type() != typ {
			continue
		}

		pr, err := protobuf.FromResource(r)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "marshal %s: %v", md, err)
		}

		m, err := pr.Marshal()
		if err != nil {
			return nil, err
		}

		out = append(out, m)
	}

	sort.Slice(out, func(i, j int) bool { return out[i].GetMetadata().GetId() < out[j].GetMetadata().GetId() })

	return out, nil
}

func (c *cosiServer) Get(ctx context.Context, req *cosiv1alpha1.GetRequest) (*cosiv1alpha1.GetResponse, error) {
	if err := cosiAccess(rolesFrom(ctx), req.GetNamespace(), req.GetType()); err != nil {
		return nil, err
	}

	list, err := c.matching(req.GetNamespace(), req.GetType())
	if err != nil {
		return nil, err
	}

	for _, r := range list {
		if r.GetMetadata().GetId() == req.GetId() {
			return &cosiv1alpha1.GetResponse{Resource: r}, nil
		}
	}

	md := resource.NewMetadata(req.GetNamespace(), req.GetType(), req.GetId(), resource.VersionUndefined)

	return nil, status.Errorf(codes.NotFound, "resource %s doesn't exist", md)
}

func (c *cosiServer) List(req *cosiv1alpha1.ListRequest, srv cosiv1alpha1.State_ListServer) error {
	if err := cosiAccess(rolesFrom(srv.Context()), req.GetNamespace(), req.GetType()); err != nil {
		return err
	}

	var idRe *regexp.Regexp

	if q := req.GetOptions().GetIdQuery(); q != nil && q.GetRegexp() != "" {
		re, err := regexp.Compile(q.GetRegexp())
		if err != nil {
			return status.Error(codes.InvalidArgument, err.Error())
		}

		idRe = re
	}

	list, err := c.matching(req.GetNamespace(), req.GetType())
	if err != nil {
		return err
	}

	for _, r := range list {
		if idRe != nil && !idRe.MatchString(r.GetMetadata().GetId()) {
			continue
		}

		if !matchLabels(r, req.GetOptions().GetLabelQuery()) {
			continue
		}

		if err := srv.Send(&cosiv1alpha1.ListResponse{Resource: r}); err != nil {
			return err
		}
	}

	return nil
}

// matchLabels supports the equality and existence terms of label queries.
func matchLabels(r *cosiv1alpha1.Resource, queries []*cosiv1alpha1.LabelQuery) bool {
	labels := r.GetMetadata().GetLabels()

	for _, q := range queries {
		for _, t := range q.GetTerms() {
			v, ok := labels[t.GetKey()]

			switch t.GetOp() { //nolint:exhaustive
			case cosiv1alpha1.LabelTerm_EXISTS:
				if ok == t.GetInvert() {
					return false
				}
			case cosiv1alpha1.LabelTerm_EQUAL:
				match := ok && len(t.GetValue()) > 0 && v == t.GetValue()[0]
				if match == t.GetInvert() {
					return false
				}
			}
		}
	}

	return true
}
