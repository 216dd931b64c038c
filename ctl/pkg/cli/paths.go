package cli

import (
	"context"
	"fmt"
	"path"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/rest"
)

// TableAccept asks the API server for a server-side Table, as kubectl get
// does, falling back to the object.
const TableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

// ResourcePath returns the URL path of a collection (name "") or object,
// in namespace ns for namespaced kinds ("" for all namespaces).
func ResourcePath(m *meta.RESTMapping, ns, name string, subresource ...string) string {
	gv := m.Resource.GroupVersion()
	p := "/api/" + gv.Version
	if gv.Group != "" {
		p = "/apis/" + gv.Group + "/" + gv.Version
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace && ns != "" {
		p += "/namespaces/" + ns
	}
	p += "/" + m.Resource.Resource
	if name != "" {
		p += "/" + name
	}
	return path.Join(append([]string{p}, subresource...)...)
}

// RawClient returns a REST client for absolute paths.
func (f *Factory) RawClient() (rest.Interface, error) {
	cs, err := f.Clientset()
	if err != nil {
		return nil, err
	}
	return cs.CoreV1().RESTClient(), nil
}

// GetTable fetches the server-side Table of a path with query params.
func GetTable(ctx context.Context, rc rest.Interface, p string, params map[string]string) (*metav1.Table, error) {
	req := rc.Get().AbsPath(p).SetHeader("Accept", TableAccept)
	for k, v := range params {
		if v != "" {
			req = req.Param(k, v)
		}
	}
	res := req.Do(ctx)
	if err := res.Error(); err != nil {
		return nil, err
	}
	body, err := res.Raw()
	if err != nil {
		return nil, err
	}
	var t metav1.Table
	if err := utiljson.Unmarshal(body, &t); err != nil {
		return nil, fmt.Errorf("decoding the server's table: %w", err)
	}
	if t.Kind != "Table" {
		return DefaultTable(body, time.Now())
	}
	return &t, nil
}

// DefaultTable builds a NAME and AGE table from an object or a list, for
// servers that do not return a Table.
func DefaultTable(body []byte, now time.Time) (*metav1.Table, error) {
	var u unstructured.Unstructured
	if err := u.UnmarshalJSON(body); err != nil {
		return nil, fmt.Errorf("decoding the server's answer: %w", err)
	}
	items := []unstructured.Unstructured{u}
	if u.IsList() {
		list, err := u.ToList()
		if err != nil {
			return nil, err
		}
		items = list.Items
	}
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name"}, {Name: "Age", Type: "string"},
	}}
	t.ResourceVersion = u.GetResourceVersion()
	for i := range items {
		raw, err := items[i].MarshalJSON()
		if err != nil {
			return nil, err
		}
		age := "<unknown>"
		if ts := items[i].GetCreationTimestamp(); !ts.IsZero() {
			age = duration.HumanDuration(now.Sub(ts.Time))
		}
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells: []any{items[i].GetName(), age}, Object: runtime.RawExtension{Raw: raw},
		})
	}
	return t, nil
}
