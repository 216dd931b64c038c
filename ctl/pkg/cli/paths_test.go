package cli

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestResourcePath(t *testing.T) {
	pods := &meta.RESTMapping{Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Scope: meta.RESTScopeNamespace}
	deploys := &meta.RESTMapping{Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Scope: meta.RESTScopeNamespace}
	nodes := &meta.RESTMapping{Resource: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, Scope: meta.RESTScopeRoot}
	tests := []struct {
		m        *meta.RESTMapping
		ns, name string
		sub      []string
		want     string
	}{
		{pods, "default", "", nil, "/api/v1/namespaces/default/pods"},
		{pods, "", "", nil, "/api/v1/pods"},
		{pods, "web", "nginx", []string{"log"}, "/api/v1/namespaces/web/pods/nginx/log"},
		{deploys, "default", "web", []string{"scale"}, "/apis/apps/v1/namespaces/default/deployments/web/scale"},
		{nodes, "default", "node-1", nil, "/api/v1/nodes/node-1"},
	}
	for _, tt := range tests {
		if got := ResourcePath(tt.m, tt.ns, tt.name, tt.sub...); got != tt.want {
			t.Errorf("ResourcePath = %s, want %s", got, tt.want)
		}
	}
}

func TestDefaultTable(t *testing.T) {
	body := []byte(`{"apiVersion":"example.com/v1","kind":"WidgetList","metadata":{"resourceVersion":"7"},"items":[
{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","namespace":"default","creationTimestamp":"2026-01-01T00:00:00Z"}}]}`)
	tbl, err := DefaultTable(body, time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if len(tbl.Rows) != 1 || tbl.Rows[0].Cells[0] != "a" || tbl.Rows[0].Cells[1] != "5m" || tbl.ResourceVersion != "7" {
		t.Errorf("table = %+v", tbl)
	}
}
