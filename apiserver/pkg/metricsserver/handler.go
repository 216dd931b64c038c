package metricsserver

import (
	"fmt"
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// The resources, as their errors name them (metrics-server's).
var (
	nodeMetricsResource = schema.GroupResource{Group: SchemeGroupVersion.Group, Resource: "nodemetrics"}
	podMetricsResource  = schema.GroupResource{Group: SchemeGroupVersion.Group, Resource: "podmetrics"}
)

// prefix is the root of the served paths.
var prefix = "/apis/" + SchemeGroupVersion.String() + "/"

// codecs encode the metrics kinds and Status.
var codecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	utilruntime.Must(metricsv1beta1.AddToScheme(s))
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(s)
}()

// Handler serves the group-version's resources and passes every other
// request (the discovery documents among them) to next.
func (s *Server) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok || rest == "" {
			next.ServeHTTP(w, r)
			return
		}
		s.serve(w, r, strings.Split(rest, "/"))
	})
}

// notFound is the server's answer to a path it does not serve.
func notFound() error {
	return apierrors.NewGenericServerResponse(http.StatusNotFound, "get", schema.GroupResource{}, "", "the server could not find the requested resource", 0, false)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, parts []string) {
	var gr schema.GroupResource
	var namespace, name string
	switch {
	case len(parts) <= 2 && parts[0] == "nodes":
		gr = nodeMetricsResource
	case len(parts) <= 2 && parts[0] == "pods":
		gr = podMetricsResource
	case len(parts) >= 3 && len(parts) <= 4 && parts[0] == "namespaces" && parts[1] != "" && parts[2] == "pods":
		gr, namespace, parts = podMetricsResource, parts[1], parts[2:]
	default:
		writeError(w, r, notFound())
		return
	}
	if len(parts) == 2 {
		if name = parts[1]; name == "" {
			writeError(w, r, notFound())
			return
		}
		if gr == podMetricsResource && namespace == "" {
			// pods/<name> needs a namespace.
			writeError(w, r, notFound())
			return
		}
	}
	if r.Method != http.MethodGet {
		writeError(w, r, apierrors.NewMethodNotSupported(gr, strings.ToLower(r.Method)))
		return
	}
	if watch := r.URL.Query().Get("watch"); watch == "true" || watch == "1" {
		writeError(w, r, apierrors.NewMethodNotSupported(gr, "watch"))
		return
	}
	switch {
	case gr == nodeMetricsResource && name != "":
		s.getNode(w, r, name)
	case gr == nodeMetricsResource:
		s.listNodes(w, r)
	case name != "":
		s.getPod(w, r, namespace, name)
	default:
		s.listPods(w, r, namespace)
	}
}

// selectors reads labelSelector and fieldSelector; the fields known are
// metadata.name and metadata.namespace.
func selectors(r *http.Request) (labels.Selector, fields.Selector, error) {
	q := r.URL.Query()
	ls, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid labelSelector %q: %v", q.Get("labelSelector"), err))
	}
	fs, err := fields.ParseSelector(q.Get("fieldSelector"))
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid fieldSelector %q: %v", q.Get("fieldSelector"), err))
	}
	for _, req := range fs.Requirements() {
		if req.Field != "metadata.name" && req.Field != "metadata.namespace" {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
		}
	}
	return ls, fs, nil
}

func matches(meta metav1.Object, ls labels.Selector, fs fields.Selector) bool {
	return ls.Matches(labels.Set(meta.GetLabels())) &&
		fs.Matches(fields.Set{"metadata.name": meta.GetName(), "metadata.namespace": meta.GetNamespace()})
}

func (s *Server) listNodes(w http.ResponseWriter, r *http.Request) {
	ls, fs, err := selectors(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	nodes, err := s.o.Nodes(r.Context())
	if err != nil {
		writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	list := &metricsv1beta1.NodeMetricsList{
		TypeMeta: metav1.TypeMeta{APIVersion: SchemeGroupVersion.String(), Kind: "NodeMetricsList"},
		Items:    []metricsv1beta1.NodeMetrics{},
	}
	now := metav1.NewTime(s.o.Now())
	for _, n := range nodes {
		if !matches(n, ls, fs) {
			continue
		}
		if m, ok := s.storage.nodeMetrics(n); ok {
			m.TypeMeta, m.CreationTimestamp = metav1.TypeMeta{}, now
			list.Items = append(list.Items, *m)
		}
	}
	writeObject(w, r, list)
}

func (s *Server) getNode(w http.ResponseWriter, r *http.Request, name string) {
	nodes, err := s.o.Nodes(r.Context())
	if err != nil {
		writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	for _, n := range nodes {
		if n.Name != name {
			continue
		}
		if m, ok := s.storage.nodeMetrics(n); ok {
			m.CreationTimestamp = metav1.NewTime(s.o.Now())
			writeObject(w, r, m)
			return
		}
	}
	writeError(w, r, apierrors.NewNotFound(nodeMetricsResource, name))
}

func (s *Server) listPods(w http.ResponseWriter, r *http.Request, namespace string) {
	ls, fs, err := selectors(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	pods, err := s.o.Pods(r.Context(), namespace)
	if err != nil {
		writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	list := &metricsv1beta1.PodMetricsList{
		TypeMeta: metav1.TypeMeta{APIVersion: SchemeGroupVersion.String(), Kind: "PodMetricsList"},
		Items:    []metricsv1beta1.PodMetrics{},
	}
	now := metav1.NewTime(s.o.Now())
	for _, p := range pods {
		if !matches(p, ls, fs) {
			continue
		}
		if m, ok := s.storage.podMetrics(p); ok {
			m.TypeMeta, m.CreationTimestamp = metav1.TypeMeta{}, now
			list.Items = append(list.Items, *m)
		}
	}
	writeObject(w, r, list)
}

func (s *Server) getPod(w http.ResponseWriter, r *http.Request, namespace, name string) {
	pods, err := s.o.Pods(r.Context(), namespace)
	if err != nil {
		writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	for _, p := range pods {
		if p.Name != name {
			continue
		}
		if m, ok := s.storage.podMetrics(p); ok {
			m.CreationTimestamp = metav1.NewTime(s.o.Now())
			writeObject(w, r, m)
			return
		}
	}
	// metrics-server names the pod with its namespace.
	writeError(w, r, apierrors.NewNotFound(podMetricsResource, namespace+"/"+name))
}

// serializerFor picks the encoding of the Accept header: the first clause
// served (JSON, YAML or protobuf; a clause asking for another kind is
// passed over; a Table is wantsTable's); JSON when the header is empty or
// says */*.
func serializerFor(accept string) (runtime.SerializerInfo, bool) {
	infos := codecs.SupportedMediaTypes()
	find := func(mt string) (runtime.SerializerInfo, bool) {
		for _, i := range infos {
			if i.MediaType == mt {
				return i, true
			}
		}
		return runtime.SerializerInfo{}, false
	}
	if strings.TrimSpace(accept) == "" {
		return find(runtime.ContentTypeJSON)
	}
	for _, clause := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(clause))
		if err != nil || params["as"] != "" {
			continue
		}
		switch mt {
		case "*/*", "application/*":
			return find(runtime.ContentTypeJSON)
		}
		if i, ok := find(mt); ok {
			return i, true
		}
	}
	return runtime.SerializerInfo{}, false
}

func writeObject(w http.ResponseWriter, r *http.Request, obj runtime.Object) {
	if wantsTable(r.Header.Get("Accept")) {
		t, err := table(obj, r.URL.Query().Get("includeObject"))
		if err != nil {
			writeError(w, r, err)
			return
		}
		info, _ := serializerFor("")
		write(w, info, http.StatusOK, t)
		return
	}
	info, ok := serializerFor(r.Header.Get("Accept"))
	if !ok {
		writeError(w, r, apierrors.NewGenericServerResponse(http.StatusNotAcceptable, "get", schema.GroupResource{}, "",
			"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf", 0, false))
		return
	}
	write(w, info, http.StatusOK, obj)
}

func write(w http.ResponseWriter, info runtime.SerializerInfo, code int, obj runtime.Object) {
	w.Header().Set("Content-Type", info.MediaType)
	w.WriteHeader(code)
	_ = info.Serializer.Encode(obj, w)
}

// writeError answers with the error's Status, in protobuf when asked
// for, JSON otherwise.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	var st metav1.Status
	if se, ok := err.(apierrors.APIStatus); ok {
		st = se.Status()
	} else {
		st = apierrors.NewInternalError(err).Status()
	}
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	info, ok := serializerFor(r.Header.Get("Accept"))
	if !ok || info.MediaType == runtime.ContentTypeYAML {
		info, _ = serializerFor("")
	}
	write(w, info, int(st.Code), &st)
}
