package fieldmanager

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"

	"skiff.dev/apiserver/pkg/fastpath"
	"skiff.dev/apiserver/pkg/openapi"
	"skiff.dev/apiserver/pkg/registry"
	"skiff.dev/apiserver/pkg/registry/rest"
)

// Managers makes the field managers of one server's resources, one per
// resource and subresource, when a write first needs them. The type
// converter of the built-in kinds is built once, on the first write; a
// custom resource's from its CustomResourceDefinition's versions, again
// when those change.
type Managers struct {
	scheme  *runtime.Scheme
	builtin func() (managedfields.TypeConverter, error)

	mu       sync.Mutex
	managers map[managerKey]*Manager
}

// Manager is the field manager of one resource and subresource, with the
// type converter it types objects with.
type Manager struct {
	*managedfields.FieldManager
	types managedfields.TypeConverter
	// createFields records creates of a built-in kind through the main
	// resource (Create); nil otherwise.
	createFields *fastpath.CreateFields
}

// CheckApply reports, as a 400, why an apply patch does not fit the kind's
// schema (an undeclared field, a list entry without its key). Upstream
// answers those with a 500 (kubernetes/kubernetes#139253); they are the
// client's mistake.
func (m *Manager) CheckApply(patch runtime.Object) error {
	if _, err := m.types.ObjectToTyped(patch); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("failed to create typed patch object (%s): %v", patch.GetObjectKind().GroupVersionKind(), err))
	}
	return nil
}

type managerKey struct {
	r   *registry.Resource
	sub string
}

// New returns the field managers of the kinds in scheme and of custom
// resources.
func New(scheme *runtime.Scheme) *Managers {
	return &Managers{
		scheme: scheme,
		builtin: sync.OnceValues(func() (managedfields.TypeConverter, error) {
			models, err := openapi.Models(nil)
			if err != nil {
				return nil, err
			}
			return managedfields.NewTypeConverter(models, false)
		}),
		managers: map[managerKey]*Manager{},
	}
}

// For returns the field manager of s's resource for writes to subresource
// sub ("" for the object itself, "status", "scale"). versions gives the
// served versions of a custom resource (s's among them), whose schemas the
// type converter learns so that entries written at another version still
// convert; it is called only when the manager is built, and not for a
// built-in kind.
func (m *Managers) For(s *registry.Store, sub string, versions func() []*registry.Resource) (*Manager, error) {
	key := managerKey{s.R, sub}
	m.mu.Lock()
	fm, ok := m.managers[key]
	m.mu.Unlock()
	if ok {
		return fm, nil
	}
	fm, err := m.build(s, sub, versions)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if prev, ok := m.managers[key]; ok {
		return prev, nil
	}
	m.managers[key] = fm
	return fm, nil
}

// Forget drops the field managers of resources no longer served (a custom
// resource whose definition changed or went).
func (m *Managers) Forget(served func(*registry.Resource) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.managers {
		if k.r.Custom != nil && !served(k.r) {
			delete(m.managers, k)
		}
	}
}

func (m *Managers) build(s *registry.Store, sub string, versionsOf func() []*registry.Resource) (*Manager, error) {
	r := s.R
	gvk := r.GroupVersionKind()
	reset := resetFields(r, sub)
	defaulter := defaulterFunc(s.Default)
	if r.Custom == nil {
		tc, err := m.builtin()
		if err != nil {
			return nil, fmt.Errorf("building the type converter: %w", err)
		}
		fm, err := managedfields.NewDefaultFieldManager(tc, m.scheme, defaulter, m.scheme, gvk, gvk.GroupVersion(), sub, reset)
		if err != nil {
			return nil, err
		}
		out := &Manager{FieldManager: fm, types: tc}
		if sub == "" {
			out.createFields = fastpath.NewCreateFields(r, tc, reset)
		}
		return out, nil
	}
	var versions []*registry.Resource
	if versionsOf != nil {
		versions = versionsOf()
	}
	if len(versions) == 0 {
		versions = []*registry.Resource{r}
	}
	models, err := openapi.Models(registry.OpenAPIResources(versions))
	if err != nil {
		return nil, err
	}
	// Upstream's apiextensions/v1 CRDs never preserve unknown fields at the
	// root; where a schema does (x-kubernetes-preserve-unknown-fields), the
	// models say so.
	tc, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		return nil, fmt.Errorf("building the type converter of %s: %w", gvk, err)
	}
	fm, err := managedfields.NewDefaultCRDFieldManager(tc, unstructuredConverter{}, defaulter, unstructuredCreater{}, gvk, gvk.GroupVersion(), sub, reset)
	if err != nil {
		return nil, err
	}
	return &Manager{FieldManager: fm, types: tc}, nil
}

// resetFields are the fields a write to sub leaves as they were, as the
// kind's strategy for sub says (upstream's GetResetFields): for most kinds
// the status through the main resource and the spec through status.
func resetFields(r *registry.Resource, sub string) map[fieldpath.APIVersion]fieldpath.Filter {
	strategy := r.Strategy
	if sub != "" {
		strategy = r.ObjectSubresource(sub)
	}
	rs, ok := strategy.(rest.ResetFieldsStrategy)
	if !ok {
		return nil
	}
	paths := rs.GetResetFields()
	if len(paths) == 0 {
		return nil
	}
	return map[fieldpath.APIVersion]fieldpath.Filter{
		fieldpath.APIVersion(r.GroupVersion().String()): fieldpath.NewExcludeSetFilter(fieldpath.NewSet(paths...)),
	}
}

// ManagerName is the name a write is recorded under: the request's fieldManager,
// or else its user agent up to the first "/", printable characters only, at
// most 128 bytes, as upstream's managerOrUserAgent.
func ManagerName(fieldManager, userAgent string) string {
	if fieldManager != "" {
		return fieldManager
	}
	prefix, _, _ := strings.Cut(userAgent, "/")
	var buf bytes.Buffer
	for _, c := range prefix {
		if !unicode.IsPrint(c) {
			continue
		}
		if buf.Len()+utf8.RuneLen(c) > metav1validation.FieldManagerMaxLength {
			break
		}
		buf.WriteRune(c)
	}
	return buf.String()
}

type defaulterFunc func(runtime.Object)

func (f defaulterFunc) Default(obj runtime.Object) { f(obj) }

// unstructuredConverter converts a custom resource between its versions as
// the conversion strategy None does: by changing apiVersion.
type unstructuredConverter struct{}

func (unstructuredConverter) Convert(in, out, _ interface{}) error {
	from, ok1 := in.(*unstructured.Unstructured)
	to, ok2 := out.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return fmt.Errorf("converting %T to %T: only custom resources convert here", in, out)
	}
	to.Object = runtime.DeepCopyJSON(from.Object)
	return nil
}

func (unstructuredConverter) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("converting %T: only custom resources convert here", in)
	}
	gvk, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()})
	if !ok {
		return nil, runtime.NewNotRegisteredGVKErrForTarget("custom resource", u.GroupVersionKind(), target)
	}
	out := u.DeepCopy()
	out.SetGroupVersionKind(gvk)
	return out, nil
}

func (unstructuredConverter) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

type unstructuredCreater struct{}

func (unstructuredCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}
