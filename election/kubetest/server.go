// Package kubetest is a loopback stand-in for the part of the Kubernetes API
// that package election uses: coordination.k8s.io/v1 Leases and v1
// ConfigMaps, with get, list, create, update (PUT) and delete. It keeps
// resourceVersion as the API server does, so an update carrying a stale one
// fails with 409 Conflict, an update or get of a missing object with 404
// NotFound, a create of an existing one with 409 AlreadyExists and a delete
// whose resourceVersion precondition is stale with 409 Conflict, each with
// the metav1.Status body that client-go decodes into its typed errors. It
// counts requests per verb, and a test can make chosen requests fail, to
// measure API cost and to cut a replica off without a cluster.
package kubetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// Verbs the stand-in counts, as the Kubernetes API names them.
const (
	VerbGet    = "get"
	VerbList   = "list"
	VerbCreate = "create"
	VerbUpdate = "update"
	VerbDelete = "delete"
)

// Fault decides whether a request fails with 500 InternalError before it
// reaches the store: verb is one of the Verb constants, resource "leases" or
// "configmaps", name the object's name ("" for a list or a create, whose
// object is in body), body the request's object as JSON, whatever encoding
// the client sent (nil for get and list).
type Fault func(verb, resource, name string, body []byte) bool

// kind describes one resource the stand-in serves.
type kind struct {
	group, version, kind string
}

// resources are the served resources, by their plural names.
var resources = map[string]kind{
	"leases":     {group: "coordination.k8s.io", version: "v1", kind: "Lease"},
	"configmaps": {group: "", version: "v1", kind: "ConfigMap"},
}

// Server is a running stand-in; URL is its address for rest.Config.Host.
type Server struct {
	URL string
	srv *httptest.Server

	mu       sync.Mutex
	objects  map[string]map[string]any // by resource/namespace/name
	version  int64                     // the last resourceVersion handed out
	requests map[string]int            // by verb
	fault    Fault
}

// NewServer starts a stand-in on 127.0.0.1; Close stops it.
func NewServer() *Server {
	s := &Server{objects: map[string]map[string]any{}, requests: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server and waits for the requests in flight.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// SetFault makes the requests f picks fail with 500 InternalError; nil
// serves everything again.
func (s *Server) SetFault(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault = f
}

// Requests returns how many requests each verb has had, failed ones included.
func (s *Server) Requests() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.requests))
	for verb, n := range s.requests {
		out[verb] = n
	}
	return out
}

// request is one parsed API call.
type request struct {
	verb, resource, namespace, name string
	kind                            kind
}

// serve answers one HTTP request.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	req, ok := parse(r)
	if !ok {
		writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, "the server could not find the requested resource", nil)
		return
	}
	var body []byte
	if req.verb == VerbCreate || req.verb == VerbUpdate || req.verb == VerbDelete {
		b, err := readJSON(r.Body)
		if err != nil {
			writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, "the body is not an object: "+err.Error(), nil)
			return
		}
		body = b
	}
	if s.faulty(req, body) {
		writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, "injected fault", nil)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch req.verb {
	case VerbGet:
		s.get(w, req)
	case VerbList:
		s.list(w, req, r.URL.Query().Get("labelSelector"))
	case VerbCreate:
		s.create(w, req, body)
	case VerbUpdate:
		s.update(w, req, body)
	case VerbDelete:
		s.delete(w, req, body)
	}
}

// faulty counts a request and reports whether the fault hook fails it; the
// hook runs unlocked, so it may call the Server.
func (s *Server) faulty(req request, body []byte) bool {
	s.mu.Lock()
	s.requests[req.verb]++
	fault := s.fault
	s.mu.Unlock()
	return fault != nil && fault(req.verb, req.resource, req.name, body)
}

// parse maps a URL and method onto a request; false for anything the
// stand-in does not serve.
func parse(r *http.Request) (request, bool) {
	path := strings.Trim(r.URL.Path, "/")
	var rest string
	switch {
	case strings.HasPrefix(path, "apis/coordination.k8s.io/v1/namespaces/"):
		rest = strings.TrimPrefix(path, "apis/coordination.k8s.io/v1/namespaces/")
	case strings.HasPrefix(path, "api/v1/namespaces/"):
		rest = strings.TrimPrefix(path, "api/v1/namespaces/")
	default:
		return request{}, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" {
		return request{}, false
	}
	k, ok := resources[parts[1]]
	if !ok || (k.group == "") != strings.HasPrefix(path, "api/") {
		return request{}, false
	}
	req := request{resource: parts[1], namespace: parts[0], kind: k}
	if len(parts) == 3 {
		req.name = parts[2]
	}
	req.verb = verbOf(r.Method, req.name != "")
	return req, req.verb != ""
}

// verbOf names the API verb of a method on an item or a collection; "" for
// one the stand-in does not serve.
func verbOf(method string, item bool) string {
	switch {
	case method == http.MethodGet && item:
		return VerbGet
	case method == http.MethodGet:
		return VerbList
	case method == http.MethodPost && !item:
		return VerbCreate
	case method == http.MethodPut && item:
		return VerbUpdate
	case method == http.MethodDelete && item:
		return VerbDelete
	}
	return ""
}

// key is the store's key of an object.
func key(resource, namespace, name string) string {
	return resource + "/" + namespace + "/" + name
}

// get writes one object, or 404.
func (s *Server) get(w http.ResponseWriter, req request) {
	obj, ok := s.objects[key(req.resource, req.namespace, req.name)]
	if !ok {
		notFound(w, req)
		return
	}
	writeJSON(w, http.StatusOK, obj)
}

// list writes the objects of a namespace whose labels match an
// equality-based selector ("k=v,k2=v2"), sorted by name.
func (s *Server) list(w http.ResponseWriter, req request, selector string) {
	want, err := parseSelector(selector)
	if err != nil {
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error(), nil)
		return
	}
	prefix := key(req.resource, req.namespace, "")
	var names []string
	for k, obj := range s.objects {
		if strings.HasPrefix(k, prefix) && labelsMatch(obj, want) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	items := make([]any, 0, len(names))
	for _, k := range names {
		items = append(items, s.objects[k])
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"kind":       req.kind.kind + "List",
		"apiVersion": apiVersion(req.kind),
		"metadata":   map[string]any{"resourceVersion": strconv.FormatInt(s.version, 10)},
		"items":      items,
	})
}

// parseSelector reads an equality-based label selector.
func parseSelector(selector string) (map[string]string, error) {
	want := map[string]string{}
	if selector == "" {
		return want, nil
	}
	for _, term := range strings.Split(selector, ",") {
		k, v, ok := strings.Cut(strings.Replace(term, "==", "=", 1), "=")
		if !ok || k == "" || strings.ContainsAny(k+v, "!=()") {
			return nil, fmt.Errorf("unsupported label selector term %q: only key=value", term)
		}
		want[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return want, nil
}

// labelsMatch reports whether an object carries every wanted label.
func labelsMatch(obj map[string]any, want map[string]string) bool {
	meta, _ := obj["metadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	for k, v := range want {
		if got, _ := labels[k].(string); got != v {
			return false
		}
	}
	return true
}

// create stores a new object, or answers 409 AlreadyExists.
func (s *Server) create(w http.ResponseWriter, req request, body []byte) {
	obj, meta, ok := decode(w, body)
	if !ok {
		return
	}
	name, _ := meta["name"].(string)
	if name == "" {
		writeStatus(w, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "metadata.name: Required value", nil)
		return
	}
	req.name = name
	k := key(req.resource, req.namespace, name)
	if _, exists := s.objects[k]; exists {
		writeStatus(w, http.StatusConflict, metav1.StatusReasonAlreadyExists,
			fmt.Sprintf("%s %q already exists", qualified(req), name), details(req))
		return
	}
	s.version++
	meta["uid"] = fmt.Sprintf("00000000-0000-0000-0000-%012d", s.version)
	meta["creationTimestamp"] = time.Now().UTC().Format(time.RFC3339)
	s.store(w, req, k, obj, meta, http.StatusCreated)
}

// update replaces an object whose resourceVersion matches the stored one
// (or is empty: an unconditional update); 409 Conflict on a stale one, 404
// when there is no object.
func (s *Server) update(w http.ResponseWriter, req request, body []byte) {
	obj, meta, ok := decode(w, body)
	if !ok {
		return
	}
	if name, _ := meta["name"].(string); name != req.name {
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest,
			fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", name, req.name), nil)
		return
	}
	k := key(req.resource, req.namespace, req.name)
	old, exists := s.objects[k]
	if !exists {
		notFound(w, req)
		return
	}
	oldMeta, _ := old["metadata"].(map[string]any)
	if rv, _ := meta["resourceVersion"].(string); rv != "" && rv != oldMeta["resourceVersion"] {
		writeStatus(w, http.StatusConflict, metav1.StatusReasonConflict,
			fmt.Sprintf("Operation cannot be fulfilled on %s %q: the object has been modified; please apply your changes to the latest version and try again",
				qualified(req), req.name), details(req))
		return
	}
	s.version++
	meta["uid"] = oldMeta["uid"]
	meta["creationTimestamp"] = oldMeta["creationTimestamp"]
	s.store(w, req, k, obj, meta, http.StatusOK)
}

// delete removes an object, honouring a resourceVersion precondition in
// the DeleteOptions body: 409 Conflict when it is stale, 404 when there is
// no object.
func (s *Server) delete(w http.ResponseWriter, req request, body []byte) {
	k := key(req.resource, req.namespace, req.name)
	old, exists := s.objects[k]
	if !exists {
		notFound(w, req)
		return
	}
	var opts metav1.DeleteOptions
	if len(body) > 0 {
		if err := json.Unmarshal(body, &opts); err != nil {
			writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, "the body is not DeleteOptions: "+err.Error(), nil)
			return
		}
	}
	oldMeta, _ := old["metadata"].(map[string]any)
	if p := opts.Preconditions; p != nil && p.ResourceVersion != nil && *p.ResourceVersion != oldMeta["resourceVersion"] {
		writeStatus(w, http.StatusConflict, metav1.StatusReasonConflict,
			fmt.Sprintf("Operation cannot be fulfilled on %s %q: the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%v). The object might have been modified",
				qualified(req), req.name, *p.ResourceVersion, oldMeta["resourceVersion"]), details(req))
		return
	}
	delete(s.objects, k)
	writeJSON(w, http.StatusOK, metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: metav1.StatusSuccess, Details: details(req)})
}

// store saves an object with the server's fields set and writes it back.
func (s *Server) store(w http.ResponseWriter, req request, k string, obj, meta map[string]any, code int) {
	meta["namespace"] = req.namespace
	meta["resourceVersion"] = strconv.FormatInt(s.version, 10)
	obj["kind"] = req.kind.kind
	obj["apiVersion"] = apiVersion(req.kind)
	s.objects[k] = obj
	writeJSON(w, code, obj)
}

// decode reads a request's object and its metadata, answering 400 for a
// body that is not one.
func decode(w http.ResponseWriter, body []byte) (obj, meta map[string]any, ok bool) {
	if err := json.Unmarshal(body, &obj); err != nil {
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, "the body is not an object: "+err.Error(), nil)
		return nil, nil, false
	}
	meta, ok = obj["metadata"].(map[string]any)
	if !ok {
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, "the object has no metadata", nil)
		return nil, nil, false
	}
	return obj, meta, true
}

// readJSON reads a request body in any encoding client-go sends (JSON, or
// Kubernetes protobuf for built-in types) and returns it as JSON; nil for an
// empty body.
func readJSON(r io.Reader) ([]byte, error) {
	raw, err := io.ReadAll(r)
	if err != nil || len(raw) == 0 {
		return nil, err
	}
	typed, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
	if err != nil {
		return nil, err
	}
	return json.Marshal(typed)
}

// apiVersion is a kind's group/version as objects carry it.
func apiVersion(k kind) string {
	if k.group == "" {
		return k.version
	}
	return k.group + "/" + k.version
}

// qualified is a resource as the API server's messages name it
// ("leases.coordination.k8s.io", "configmaps").
func qualified(req request) string {
	if req.kind.group == "" {
		return req.resource
	}
	return req.resource + "." + req.kind.group
}

// details is the Status details that name the object of a failed request.
func details(req request) *metav1.StatusDetails {
	return &metav1.StatusDetails{Name: req.name, Group: req.kind.group, Kind: req.resource}
}

// notFound answers 404 for a missing object.
func notFound(w http.ResponseWriter, req request) {
	writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound,
		fmt.Sprintf("%s %q not found", qualified(req), req.name), details(req))
}

// writeStatus writes a failure as the API server does: a metav1.Status.
func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, message string, d *metav1.StatusDetails) {
	writeJSON(w, code, metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  message,
		Reason:   reason,
		Details:  d,
		Code:     int32(code),
	})
}

// writeJSON writes a value as a JSON response.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
