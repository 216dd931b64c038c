package images

import (
	"encoding/base64"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCredentialsFromSecret(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	for _, tc := range []struct {
		name    string
		secret  corev1.Secret
		want    []Credential
		wantErr bool
	}{
		{
			name: "dockerconfigjson with auth",
			secret: corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{
				corev1.DockerConfigJsonKey: []byte(`{"auths":{"https://index.docker.io/v1/":{"auth":"` + b64([]byte("u:p:w")) + `"}}}`)}},
			want: []Credential{{Host: "docker.io", Username: "u", Password: "p:w"}},
		},
		{
			name: "dockerconfigjson with username and password",
			secret: corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{
				corev1.DockerConfigJsonKey: []byte(`{"auths":{"registry.example:5000/path":{"username":"a","password":"b"}}}`)}},
			want: []Credential{{Host: "registry.example:5000", Username: "a", Password: "b"}},
		},
		{
			name: "dockercfg",
			secret: corev1.Secret{Type: corev1.SecretTypeDockercfg, Data: map[string][]byte{
				corev1.DockerConfigKey: []byte(`{"http://127.0.0.1:5000":{"auth":"` + b64([]byte("x:y")) + `"}}`)}},
			want: []Credential{{Host: "127.0.0.1:5000", Username: "x", Password: "y"}},
		},
		{name: "wrong type", secret: corev1.Secret{Type: corev1.SecretTypeOpaque}, wantErr: true},
		{
			name: "bad json", wantErr: true,
			secret: corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{`)}},
		},
		{
			name: "auth not base64", wantErr: true,
			secret: corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{
				corev1.DockerConfigJsonKey: []byte(`{"auths":{"r":{"auth":"!!"}}}`)}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.secret.ObjectMeta = metav1.ObjectMeta{Name: "s"}
			got, err := CredentialsFromSecret(&tc.secret)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if !tc.wantErr && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestMatchCreds(t *testing.T) {
	creds := MatchCreds([]Credential{{Host: "docker.io", Username: "d"}, {Host: "127.0.0.1:5000", Username: "l"}})
	for host, want := range map[string]string{"registry-1.docker.io": "d", "127.0.0.1:5000": "l", "other.example": ""} {
		u, _, ok := creds(host)
		if u != want || ok != (want != "") {
			t.Errorf("%s: user %q ok %v, want %q", host, u, ok, want)
		}
	}
	if MatchCreds(nil) != nil {
		t.Errorf("no credentials should give a nil Creds")
	}
}
