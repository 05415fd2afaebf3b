package kubelab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Client is a minimal Kubernetes REST client.
type Client struct {
	Server    string // https://host:port
	Namespace string // default namespace (from the kubeconfig context)
	Token     string // bearer token, if any
	HTTP      *http.Client
}

// APIError is a failed call: the apiserver's Status object (or the raw body).
type APIError struct {
	Code    int
	Reason  string // NotFound, AlreadyExists, Conflict, Invalid, Forbidden, ...
	Message string
	Method  string
	Path    string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.Code, e.Reason, e.Message)
}

// ReasonOf returns the Status reason of err ("" when err is not an APIError).
func ReasonOf(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Reason
	}
	return ""
}

func IsNotFound(err error) bool      { return ReasonOf(err) == "NotFound" }
func IsAlreadyExists(err error) bool { return ReasonOf(err) == "AlreadyExists" }

// Content types of writes.
const (
	ContentJSON       = "application/json"
	ContentMergePatch = "application/merge-patch+json"
)

// Do sends body (marshalled to JSON unless it is []byte) and decodes the reply into out (if not nil).
func (c *Client) Do(ctx context.Context, method, path, contentType string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, ok := body.([]byte)
		if !ok {
			var err error
			if b, err = json.Marshal(body); err != nil {
				return err
			}
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Server+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "ichor-lab")
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		ae := &APIError{Code: resp.StatusCode, Method: method, Path: path}
		var st struct {
			Kind    string `json:"kind"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
		}
		if json.Unmarshal(data, &st) == nil && st.Kind == "Status" {
			ae.Reason, ae.Message = st.Reason, st.Message
		} else {
			ae.Reason, ae.Message = http.StatusText(resp.StatusCode), strings.TrimSpace(string(data))
		}
		return ae
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// Path of a namespaced resource collection (name == "") or object, group "" for the core API.
func Path(group, version, namespace, plural, name string) string {
	p := "/api/" + version
	if group != "" {
		p = "/apis/" + group + "/" + version
	}
	if namespace != "" {
		p += "/namespaces/" + url.PathEscape(namespace)
	}
	p += "/" + plural
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return p
}

// IchorPath is Path for the Ichor group in the client's namespace.
func (c *Client) IchorPath(plural, name string) string {
	return Path(Group, Version, c.Namespace, plural, name)
}

// Create POSTs obj to the collection at path; out may be nil.
func (c *Client) Create(ctx context.Context, path string, obj, out any) error {
	return c.Do(ctx, http.MethodPost, path, ContentJSON, obj, out)
}

// Get reads the object at path into out.
func (c *Client) Get(ctx context.Context, path string, out any) error {
	return c.Do(ctx, http.MethodGet, path, "", nil, out)
}

// MergePatch sends an RFC 7386 merge patch.
func (c *Client) MergePatch(ctx context.Context, path string, patch, out any) error {
	return c.Do(ctx, http.MethodPatch, path, ContentMergePatch, patch, out)
}
