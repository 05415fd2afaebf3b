package kubefault

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// status is a metav1.Status as the apiserver writes it.
type status struct {
	Kind       string         `json:"kind"`
	APIVersion string         `json:"apiVersion"`
	Metadata   struct{}       `json:"metadata"`
	Status     string         `json:"status"`
	Message    string         `json:"message"`
	Reason     string         `json:"reason,omitempty"`
	Details    *statusDetails `json:"details,omitempty"`
	Code       int            `json:"code"`
}

type statusDetails struct {
	Name              string `json:"name,omitempty"`
	Group             string `json:"group,omitempty"`
	Kind              string `json:"kind,omitempty"`
	RetryAfterSeconds int    `json:"retryAfterSeconds,omitempty"`
}

// resourcePath is what a Kubernetes API path names.
type resourcePath struct {
	group, namespace, resource, name, subresource string
}

// parseResourcePath reads /api/v1/[namespaces/NS/]RES[/NAME[/SUB]] and
// /apis/GROUP/VERSION/[namespaces/NS/]RES[/NAME[/SUB]]; ok is false for other paths.
func parseResourcePath(path string) (resourcePath, bool) {
	seg := strings.Split(strings.Trim(path, "/"), "/")
	var rp resourcePath
	switch {
	case len(seg) >= 3 && seg[0] == "api":
		seg = seg[2:]
	case len(seg) >= 4 && seg[0] == "apis":
		rp.group = seg[1]
		seg = seg[3:]
	default:
		return rp, false
	}
	if len(seg) >= 3 && seg[0] == "namespaces" {
		rp.namespace = seg[1]
		seg = seg[2:]
	}
	rp.resource = seg[0]
	if len(seg) > 1 {
		rp.name = seg[1]
	}
	if len(seg) > 2 {
		rp.subresource = seg[2]
	}
	return rp, true
}

// qualified is "talosmachines.ichor.maesh.dev" (or "secrets" in the core group).
func (rp resourcePath) qualified() string {
	if rp.group == "" {
		return rp.resource
	}
	return rp.resource + "." + rp.group
}

func verbOf(method string, rp resourcePath) string {
	switch method {
	case http.MethodGet:
		if rp.name == "" {
			return "list"
		}
		return "get"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if rp.name == "" {
			return "deletecollection"
		}
		return "delete"
	}
	return strings.ToLower(method)
}

// injectedStatus builds the Status body the apiserver would send for the rule's reason on this
// request. name is the object's name (from the path, or from a create's body).
func injectedStatus(r *Rule, method, path, name string) status {
	rp, isResource := parseResourcePath(path)
	if name == "" {
		name = rp.name
	}
	st := status{Kind: "Status", APIVersion: "v1", Status: "Failure", Reason: r.Reason, Code: r.Status}
	if isResource {
		st.Details = &statusDetails{Name: name, Group: rp.group, Kind: rp.resource}
	}
	obj := rp.qualified()
	quoted := obj
	if name != "" {
		quoted = fmt.Sprintf("%s %q", obj, name)
	}
	switch r.Reason {
	case "AlreadyExists":
		st.Message = quoted + " already exists"
	case "Conflict":
		st.Message = fmt.Sprintf("Operation cannot be fulfilled on %s: the object has been modified; please apply your changes to the latest version and try again", quoted)
	case "NotFound":
		st.Message = quoted + " not found"
	case "Forbidden":
		scope := "at the cluster scope"
		if rp.namespace != "" {
			scope = fmt.Sprintf("in the namespace %q", rp.namespace)
		}
		res := rp.resource
		if rp.subresource != "" {
			res += "/" + rp.subresource
		}
		st.Message = fmt.Sprintf("%s is forbidden: User %q cannot %s resource %q in API group %q %s",
			quoted, "lab-admin", verbOf(method, rp), res, rp.group, scope)
	case "Unauthorized":
		st.Message = "Unauthorized"
	case "TooManyRequests":
		st.Message = "Too many requests, please try again later."
	case "ServiceUnavailable":
		st.Message = "the server is currently unable to handle the request"
	case "InternalError":
		st.Message = "Internal error occurred: injected by kube-fault-proxy"
	case "Timeout":
		st.Message = "the server was unable to return a response in the time allotted, but may still be processing the request"
	default:
		st.Message = fmt.Sprintf("injected by kube-fault-proxy: %d %s", r.Status, http.StatusText(r.Status))
	}
	if r.Message != "" {
		st.Message = r.Message
	}
	if r.RetryAfter > 0 {
		if st.Details == nil {
			st.Details = &statusDetails{}
		}
		st.Details.RetryAfterSeconds = r.RetryAfter
	}
	return st
}

// nameInBody is metadata.name of a create's body ("" when it has none or is not JSON).
func nameInBody(b []byte) string {
	var obj struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if json.Unmarshal(b, &obj) != nil {
		return ""
	}
	return obj.Metadata.Name
}
