package endpoints

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/gorilla/mux"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ComponentCheck asks one component of the control plane whether it is
// healthy, as upstream's componentstatus probes do: the condition's status
// and message, or the error that kept it from answering.
type ComponentCheck func(ctx context.Context) (status corev1.ConditionStatus, message string, err error)

// componentStatusesWarning is upstream's warning on every answer of the
// deprecated kind.
const componentStatusesWarning = "v1 ComponentStatus is deprecated in v1.19+"

// componentStatusesDiscovery is how /api/v1 lists componentstatuses.
var componentStatusesDiscovery = metav1.APIResource{
	Name: "componentstatuses", SingularName: "componentstatus", Kind: "ComponentStatus",
	Verbs: []string{"get", "list"}, ShortNames: []string{"cs"},
}

// InstallComponentStatuses serves core v1's componentstatuses (`kubectl get
// componentstatuses`, deprecated upstream since v1.19 and still served):
// each is one check, run when asked, never stored. checks names them.
func (h *Handler) InstallComponentStatuses(r *mux.Router, checks map[string]ComponentCheck) {
	gr := schema.GroupResource{Resource: componentStatusesDiscovery.Name}
	serve := func(w http.ResponseWriter, req *http.Request) {
		name := mux.Vars(req)["name"]
		verb := "get"
		if name == "" {
			verb = "list"
			if isWatch(req) {
				verb = "watch"
			}
		}
		if req.Method != http.MethodGet {
			verb = strings.ToLower(req.Method)
		}
		setRequestInfo(req, &RequestInfo{Verb: verb, Version: "v1", Resource: gr.Resource, Scope: "cluster", Name: name})
		w.Header().Add("Warning", `299 - "`+componentStatusesWarning+`"`)
		if verb != "get" && verb != "list" {
			h.writeError(w, req, apierrors.NewMethodNotSupported(gr, verb), gr, name)
			return
		}
		if name != "" {
			check, ok := checks[name]
			if !ok {
				h.writeError(w, req, apierrors.NewNotFound(gr, name), gr, name)
				return
			}
			cs := componentStatus(req.Context(), name, check)
			cs.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ComponentStatus"}
			h.respond(w, req, http.StatusOK, cs, false)
			return
		}
		var opts metav1.ListOptions
		if err := h.decodeParams(req, &opts); err != nil {
			h.writeError(w, req, err, gr, "")
			return
		}
		match, err := componentStatusSelector(opts)
		if err != nil {
			h.writeError(w, req, apierrors.NewBadRequest(err.Error()), gr, "")
			return
		}
		list := &corev1.ComponentStatusList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ComponentStatusList"}, Items: []corev1.ComponentStatus{}}
		var (
			mu sync.Mutex
			wg sync.WaitGroup
		)
		for name, check := range checks {
			if !match(name) {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				cs := componentStatus(req.Context(), name, check)
				mu.Lock()
				list.Items = append(list.Items, *cs)
				mu.Unlock()
			}()
		}
		wg.Wait()
		sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
		h.respond(w, req, http.StatusOK, list, true)
	}
	r.HandleFunc("/api/v1/"+gr.Resource, serve)
	r.HandleFunc("/api/v1/"+gr.Resource+"/{name}", serve)
}

// componentStatus runs one check: a single Healthy condition, as upstream.
func componentStatus(ctx context.Context, name string, check ComponentCheck) *corev1.ComponentStatus {
	status, message, err := check(ctx)
	c := corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: status, Message: message}
	if err != nil {
		c.Error = err.Error()
	}
	return &corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: name}, Conditions: []corev1.ComponentCondition{c}}
}

// componentStatusSelector matches names by the list's selectors. A
// component status has no labels, and its fields are metadata.name and
// metadata.namespace (always ""), as upstream's.
func componentStatusSelector(opts metav1.ListOptions) (func(name string) bool, error) {
	label, field := labels.Everything(), fields.Everything()
	var err error
	if opts.LabelSelector != "" {
		if label, err = labels.Parse(opts.LabelSelector); err != nil {
			return nil, err
		}
	}
	if opts.FieldSelector != "" {
		if field, err = fields.ParseSelector(opts.FieldSelector); err != nil {
			return nil, err
		}
	}
	return func(name string) bool {
		return label.Matches(labels.Set{}) && field.Matches(fields.Set{"metadata.name": name, "metadata.namespace": ""})
	}, nil
}
