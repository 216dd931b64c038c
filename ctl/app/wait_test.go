package app

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestParseFor(t *testing.T) {
	pod := &unstructured.Unstructured{Object: map[string]any{
		"status": map[string]any{
			"phase":      "Running",
			"conditions": []any{map[string]any{"type": "Ready", "status": "True"}, map[string]any{"type": "Initialized", "status": "False"}},
		},
	}}
	tests := []struct {
		spec     string
		want     bool
		wantGone bool
		wantErr  bool
	}{
		{spec: "condition=Ready", want: true},
		{spec: "condition=ready=true", want: true},
		{spec: "condition=Initialized", want: false},
		{spec: "condition=Initialized=False", want: true},
		{spec: "condition=Missing", want: false},
		{spec: "jsonpath={.status.phase}=Running", want: true},
		{spec: "jsonpath={.status.phase}=Pending", want: false},
		{spec: "delete", wantGone: true},
		{spec: "condition=", wantErr: true},
		{spec: "jsonpath=.status.phase", wantErr: true},
		{spec: "ready", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			c, err := parseFor(tt.spec)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if tt.wantErr {
				return
			}
			if c.gone != tt.wantGone {
				t.Errorf("gone = %v", c.gone)
			}
			if c.check != nil {
				if got, state := c.check(pod); got != tt.want {
					t.Errorf("check = %v (%s), want %v", got, state, tt.want)
				}
			}
		})
	}
}
