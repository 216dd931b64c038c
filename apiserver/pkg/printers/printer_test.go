package printers

import (
	"errors"
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// now is the fixed time every test measures ages against.
var now = time.Date(2024, time.March, 10, 12, 0, 0, 0, time.UTC)

func newTestPrinter() *Printer {
	return New(WithClock(clocktesting.NewFakePassiveClock(now)))
}

// ago returns a metav1.Time d before now.
func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

// agoPtr is ago as a pointer, for deletionTimestamp and the like.
func agoPtr(d time.Duration) *metav1.Time { t := ago(d); return &t }

// cells prints obj and returns the cells of its only row.
func cells(t *testing.T, p *Printer, obj runtime.Object) []interface{} {
	t.Helper()
	table, err := p.Table(obj, false)
	if err != nil {
		t.Fatalf("Table(%T) error: %v", obj, err)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("Table(%T) has %d rows, want 1", obj, len(table.Rows))
	}
	if len(table.Rows[0].Cells) != len(table.ColumnDefinitions) {
		t.Fatalf("Table(%T) row has %d cells for %d columns", obj, len(table.Rows[0].Cells), len(table.ColumnDefinitions))
	}
	return table.Rows[0].Cells
}

func assertCells(t *testing.T, got, want []interface{}) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cells mismatch\n got: %#v\nwant: %#v", got, want)
	}
}

// col is a column definition as upstream v1.32 declares it, minus the description.
type col struct {
	name, typ, format string
	priority          int32
}

func TestColumnsMatchUpstream(t *testing.T) {
	name := col{"Name", "string", "name", 0}
	age := col{"Age", "string", "", 0}
	containers := col{"Containers", "string", "", 1}
	images := col{"Images", "string", "", 1}
	selector := col{"Selector", "string", "", 1}
	bindings := []col{name, {"Role", "string", "", 0}, age,
		{"Users", "string", "", 1}, {"Groups", "string", "", 1}, {"ServiceAccounts", "string", "", 1}}
	defaultCols := []col{name, {"Created At", "date", "", 0}}

	tests := []struct {
		name string
		objs []runtime.Object
		want []col
	}{
		{
			name: "pods",
			objs: []runtime.Object{&corev1.Pod{}, &corev1.PodList{}},
			want: []col{name, {"Ready", "string", "", 0}, {"Status", "string", "", 0}, {"Restarts", "string", "", 0}, age,
				{"IP", "string", "", 1}, {"Node", "string", "", 1}, {"Nominated Node", "string", "", 1}, {"Readiness Gates", "string", "", 1}},
		},
		{
			name: "componentstatuses",
			objs: []runtime.Object{&corev1.ComponentStatus{}, &corev1.ComponentStatusList{}},
			want: []col{name, {"Status", "string", "", 0}, {"Message", "string", "", 0}, {"Error", "string", "", 0}},
		},
		{
			name: "namespaces",
			objs: []runtime.Object{&corev1.Namespace{}, &corev1.NamespaceList{}},
			want: []col{name, {"Status", "string", "", 0}, age},
		},
		{
			name: "nodes",
			objs: []runtime.Object{&corev1.Node{}, &corev1.NodeList{}},
			want: []col{name, {"Status", "string", "", 0}, {"Roles", "string", "", 0}, age, {"Version", "string", "", 0},
				{"Internal-IP", "string", "", 1}, {"External-IP", "string", "", 1}, {"OS-Image", "string", "", 1},
				{"Kernel-Version", "string", "", 1}, {"Container-Runtime", "string", "", 1}},
		},
		{
			name: "services",
			objs: []runtime.Object{&corev1.Service{}, &corev1.ServiceList{}},
			want: []col{name, {"Type", "string", "", 0}, {"Cluster-IP", "string", "", 0}, {"External-IP", "string", "", 0},
				{"Port(s)", "string", "", 0}, age, selector},
		},
		{
			name: "endpoints",
			objs: []runtime.Object{&corev1.Endpoints{}, &corev1.EndpointsList{}},
			want: []col{name, {"Endpoints", "string", "", 0}, age},
		},
		{
			name: "configmaps",
			objs: []runtime.Object{&corev1.ConfigMap{}, &corev1.ConfigMapList{}},
			want: []col{name, {"Data", "string", "", 0}, age},
		},
		{
			name: "secrets",
			objs: []runtime.Object{&corev1.Secret{}, &corev1.SecretList{}},
			want: []col{name, {"Type", "string", "", 0}, {"Data", "string", "", 0}, age},
		},
		{
			name: "serviceaccounts",
			objs: []runtime.Object{&corev1.ServiceAccount{}, &corev1.ServiceAccountList{}},
			want: []col{name, {"Secrets", "string", "", 0}, age},
		},
		{
			name: "events",
			objs: []runtime.Object{&corev1.Event{}, &corev1.EventList{}},
			want: []col{{"Last Seen", "string", "", 0}, {"Type", "string", "", 0}, {"Reason", "string", "", 0},
				{"Object", "string", "", 0}, {"Subobject", "string", "", 1}, {"Source", "string", "", 1},
				{"Message", "string", "", 0}, {"First Seen", "string", "", 1}, {"Count", "string", "", 1},
				{"Name", "string", "name", 1}},
		},
		{
			name: "replicasets",
			objs: []runtime.Object{&appsv1.ReplicaSet{}, &appsv1.ReplicaSetList{}},
			want: []col{name, {"Desired", "integer", "", 0}, {"Current", "integer", "", 0}, {"Ready", "integer", "", 0}, age,
				containers, images, selector},
		},
		{
			name: "deployments",
			objs: []runtime.Object{&appsv1.Deployment{}, &appsv1.DeploymentList{}},
			want: []col{name, {"Ready", "string", "", 0}, {"Up-to-date", "string", "", 0}, {"Available", "string", "", 0}, age,
				containers, images, selector},
		},
		{
			name: "leases",
			objs: []runtime.Object{&coordinationv1.Lease{}, &coordinationv1.LeaseList{}},
			want: []col{name, {"Holder", "string", "", 0}, age},
		},
		{
			name: "endpointslices",
			objs: []runtime.Object{&discoveryv1.EndpointSlice{}, &discoveryv1.EndpointSliceList{}},
			want: []col{name, {"AddressType", "string", "", 0}, {"Ports", "string", "", 0}, {"Endpoints", "string", "", 0}, age},
		},
		{
			name: "rolebindings",
			objs: []runtime.Object{&rbacv1.RoleBinding{}, &rbacv1.RoleBindingList{}},
			want: bindings,
		},
		{
			name: "clusterrolebindings",
			objs: []runtime.Object{&rbacv1.ClusterRoleBinding{}, &rbacv1.ClusterRoleBindingList{}},
			want: bindings,
		},
		{
			name: "roles use the default table",
			objs: []runtime.Object{&rbacv1.Role{}, &rbacv1.RoleList{}},
			want: defaultCols,
		},
		{
			name: "clusterroles use the default table",
			objs: []runtime.Object{&rbacv1.ClusterRole{}, &rbacv1.ClusterRoleList{}},
			want: defaultCols,
		},
	}
	p := newTestPrinter()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, obj := range tt.objs {
				table, err := p.Table(obj, false)
				if err != nil {
					t.Fatalf("Table(%T) error: %v", obj, err)
				}
				var got []col
				for _, c := range table.ColumnDefinitions {
					got = append(got, col{c.Name, c.Type, c.Format, c.Priority})
					if c.Description == "" {
						t.Errorf("%T: column %q has no description", obj, c.Name)
					}
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%T columns\n got: %v\nwant: %v", obj, got, tt.want)
				}
			}
		})
	}
}

// TestEveryHandlerFillsEveryColumn prints a zero value of every registered
// kind and checks that each row has exactly one cell per column.
func TestEveryHandlerFillsEveryColumn(t *testing.T) {
	p := newTestPrinter()
	for typ, h := range p.handlers {
		obj, ok := reflect.New(typ.Elem()).Interface().(runtime.Object)
		if !ok {
			t.Errorf("%v is not a runtime.Object", typ)
			continue
		}
		rows, err := h.Rows(obj)
		if err != nil {
			t.Errorf("%v: %v", typ, err)
			continue
		}
		for _, row := range rows {
			if len(row.Cells) != len(h.Columns) {
				t.Errorf("%v: %d cells for %d columns", typ, len(row.Cells), len(h.Columns))
			}
			if row.Object.Object != obj {
				t.Errorf("%v: row object is %p, want the printed object %p", typ, row.Object.Object, obj)
			}
		}
	}
}

func TestDefaultTable(t *testing.T) {
	p := newTestPrinter()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: "default", ResourceVersion: "7",
		CreationTimestamp: metav1.NewTime(time.Date(2024, time.March, 1, 8, 30, 0, 0, time.FixedZone("CET", 3600)))}}

	table, err := p.Table(role, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Created At", Type: "date", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	}
	if !reflect.DeepEqual(table.ColumnDefinitions, want) {
		t.Errorf("columns = %#v, want %#v", table.ColumnDefinitions, want)
	}
	assertCells(t, table.Rows[0].Cells, []interface{}{"reader", "2024-03-01T07:30:00Z"})
	if table.Rows[0].Object.Object != role {
		t.Errorf("row object = %v, want the role", table.Rows[0].Object.Object)
	}
	if table.ResourceVersion != "7" {
		t.Errorf("resourceVersion = %q, want 7", table.ResourceVersion)
	}

	list := &rbacv1.ClusterRoleList{
		ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "next", RemainingItemCount: ptr.To[int64](3)},
		Items: []rbacv1.ClusterRole{
			{ObjectMeta: metav1.ObjectMeta{Name: "admin", CreationTimestamp: ago(time.Hour)}},
			{ObjectMeta: metav1.ObjectMeta{Name: "view"}},
		},
	}
	table, err = p.Table(list, true)
	if err != nil {
		t.Fatal(err)
	}
	if table.ColumnDefinitions != nil {
		t.Errorf("noHeaders: columns = %v, want none", table.ColumnDefinitions)
	}
	if len(table.Rows) != 2 {
		t.Fatalf("rows = %d, want 2", len(table.Rows))
	}
	assertCells(t, table.Rows[0].Cells, []interface{}{"admin", "2024-03-10T11:00:00Z"})
	assertCells(t, table.Rows[1].Cells, []interface{}{"view", "0001-01-01T00:00:00Z"})
	if table.Rows[1].Object.Object != &list.Items[1] {
		t.Errorf("row object is not the list item")
	}
	if table.ResourceVersion != "42" || table.Continue != "next" || table.RemainingItemCount == nil || *table.RemainingItemCount != 3 {
		t.Errorf("list meta = %+v, want rv 42, continue next, remaining 3", table.ListMeta)
	}
}

func TestTableErrors(t *testing.T) {
	p := newTestPrinter()
	tests := []struct {
		name string
		obj  runtime.Object
	}{
		{name: "nil", obj: nil},
		{name: "typed nil pod", obj: (*corev1.Pod)(nil)},
		{name: "typed nil role", obj: (*rbacv1.Role)(nil)},
		{name: "object without metadata", obj: &metav1.Status{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := p.Table(tt.obj, false); err == nil {
				t.Errorf("Table(%#v) succeeded, want an error", tt.obj)
			}
		})
	}
	if _, err := p.Table(nil, false); !errors.Is(err, errNilObject) {
		t.Errorf("Table(nil) error = %v, want errNilObject", err)
	}
}

func TestTableListMetaAndHeaders(t *testing.T) {
	p := newTestPrinter()
	list := &corev1.ConfigMapList{
		ListMeta: metav1.ListMeta{ResourceVersion: "100", Continue: "tok", RemainingItemCount: ptr.To[int64](12)},
		Items: []corev1.ConfigMap{
			{ObjectMeta: metav1.ObjectMeta{Name: "a", CreationTimestamp: ago(90 * time.Second)}, Data: map[string]string{"k": "v"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "b", CreationTimestamp: ago(3 * time.Hour)}},
		},
	}

	table, err := p.Table(list, false)
	if err != nil {
		t.Fatal(err)
	}
	if table.APIVersion != "meta.k8s.io/v1" || table.Kind != "Table" {
		t.Errorf("type meta = %+v, want meta.k8s.io/v1 Table", table.TypeMeta)
	}
	if table.ResourceVersion != "100" || table.Continue != "tok" || *table.RemainingItemCount != 12 {
		t.Errorf("list meta = %+v", table.ListMeta)
	}
	if len(table.ColumnDefinitions) != 3 {
		t.Errorf("columns = %d, want 3", len(table.ColumnDefinitions))
	}
	assertCells(t, table.Rows[0].Cells, []interface{}{"a", int64(1), "90s"})
	assertCells(t, table.Rows[1].Cells, []interface{}{"b", int64(0), "3h"})
	for i := range list.Items {
		if table.Rows[i].Object.Object != &list.Items[i] {
			t.Errorf("row %d object is not the list item", i)
		}
	}

	table, err = p.Table(list, true)
	if err != nil {
		t.Fatal(err)
	}
	if table.ColumnDefinitions != nil {
		t.Errorf("noHeaders: columns = %v, want none", table.ColumnDefinitions)
	}
	if len(table.Rows) != 2 {
		t.Errorf("noHeaders: rows = %d, want 2", len(table.Rows))
	}

	empty, err := p.Table(&corev1.ConfigMapList{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if empty.Rows == nil || len(empty.Rows) != 0 {
		t.Errorf("empty list rows = %#v, want an empty, non-nil slice", empty.Rows)
	}

	single, err := p.Table(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "9"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if single.ResourceVersion != "9" {
		t.Errorf("single object resourceVersion = %q, want 9", single.ResourceVersion)
	}
}

func TestWithClockNilKeepsRealClock(t *testing.T) {
	p := New(WithClock(nil))
	created := metav1.NewTime(time.Now().Add(-10 * time.Minute))
	got := cells(t, p, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x", CreationTimestamp: created}})
	if got[2] != "10m" {
		t.Errorf("age = %v, want 10m", got[2])
	}
}
