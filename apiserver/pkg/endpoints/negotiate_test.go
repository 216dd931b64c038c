package endpoints

import (
	"testing"

	"skiff.dev/apiserver/pkg/api"
)

func TestNegotiate(t *testing.T) {
	h := &Handler{codecs: api.NewCodecs()}
	const kubectlGet = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
	tests := []struct {
		name      string
		accept    string
		list      bool
		wantMedia string
		wantView  view
		wantErr   bool
	}{
		{name: "empty", wantMedia: "application/json"},
		{name: "any", accept: "*/*", wantMedia: "application/json"},
		{name: "kubectl get", accept: kubectlGet, list: true, wantMedia: "application/json", wantView: viewTable},
		{name: "table v1beta1 only is skipped", accept: "application/json;as=Table;v=v1beta1;g=meta.k8s.io", wantErr: true},
		{name: "protobuf", accept: "application/vnd.kubernetes.protobuf, application/json", wantMedia: "application/vnd.kubernetes.protobuf"},
		{name: "yaml", accept: "application/yaml", wantMedia: "application/yaml"},
		{name: "metadata list", accept: "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", list: true, wantMedia: "application/json", wantView: viewPartialMetadata},
		{name: "metadata list for one object", accept: "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", wantErr: true},
		{name: "unknown", accept: "text/html", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := h.negotiate(tc.accept, tc.list)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("got %+v, want 406", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.mediaType != tc.wantMedia || got.view != tc.wantView {
				t.Errorf("got %s view %d, want %s view %d", got.mediaType, got.view, tc.wantMedia, tc.wantView)
			}
		})
	}
}
