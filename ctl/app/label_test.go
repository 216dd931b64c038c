package app

import (
	"reflect"
	"testing"
)

func TestSplitLabelArgs(t *testing.T) {
	tests := []struct {
		name          string
		args          []string
		kind          metaKind
		wantResources []string
		wantChanges   []change
		wantErr       bool
	}{
		{name: "type name and changes", args: []string{"pod", "nginx", "a=1", "b-"}, kind: labelKind,
			wantResources: []string{"pod", "nginx"}, wantChanges: []change{{key: "a", value: "1"}, {key: "b", remove: true}}},
		{name: "type/name", args: []string{"deploy/web", "example.com/team=blue"}, kind: labelKind,
			wantResources: []string{"deploy/web"}, wantChanges: []change{{key: "example.com/team", value: "blue"}}},
		{name: "annotation values may hold anything", args: []string{"pod/x", "note=hello world, really"}, kind: annotationKind,
			wantResources: []string{"pod/x"}, wantChanges: []change{{key: "note", value: "hello world, really"}}},
		{name: "bad label value", args: []string{"pod/x", "a=has space"}, kind: labelKind, wantErr: true},
		{name: "bad key", args: []string{"pod/x", "-bad=1"}, kind: labelKind, wantErr: true},
		{name: "resource after change", args: []string{"pod", "a=1", "nginx"}, kind: labelKind, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, ch, err := splitLabelArgs(tt.args, tt.kind)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if !reflect.DeepEqual(res, tt.wantResources) || !reflect.DeepEqual(ch, tt.wantChanges) {
				t.Errorf("got %v %+v, want %v %+v", res, ch, tt.wantResources, tt.wantChanges)
			}
		})
	}
}

func TestLabelPatch(t *testing.T) {
	o := &LabelOptions{kind: labelKind}
	current := map[string]string{"a": "1"}
	if _, err := o.patch(current, []change{{key: "a", value: "2"}}); err == nil {
		t.Error("changing a value without --overwrite succeeded")
	}
	p, err := o.patch(current, []change{{key: "a", value: "1"}, {key: "b", remove: true}})
	if err != nil {
		t.Fatal(err)
	}
	if string(p) != `{"metadata":{"labels":{"a":"1","b":null}}}` {
		t.Errorf("patch = %s", p)
	}
	o.Overwrite = true
	p, err = o.patch(current, []change{{key: "a", value: "2"}})
	if err != nil || string(p) != `{"metadata":{"labels":{"a":"2"}}}` {
		t.Errorf("patch with --overwrite = %s, %v", p, err)
	}
}
