package join

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

func selfSigned(t *testing.T) (*x509.Certificate, []byte) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return c, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestCAHashIsKubeadms(t *testing.T) {
	ca, _ := selfSigned(t)
	sum := sha256.Sum256(ca.RawSubjectPublicKeyInfo)
	if got, want := CAHash(ca), "sha256:"+hex.EncodeToString(sum[:]); got != want {
		t.Errorf("CAHash = %s, want %s", got, want)
	}
}

func TestCheckPins(t *testing.T) {
	ca, caPEM := selfSigned(t)
	other, _ := selfSigned(t)
	if err := checkPins(caPEM, []string{CAHash(other), CAHash(ca)}); err != nil {
		t.Errorf("matching hash refused: %v", err)
	}
	if err := checkPins(caPEM, []string{strings.ToUpper(CAHash(ca)[7:])}); err == nil {
		t.Error("a hash without its sha256: prefix matched")
	}
	if err := checkPins(caPEM, []string{CAHash(other)}); err == nil || !strings.Contains(err.Error(), "not the cluster") {
		t.Errorf("other CA's hash: %v", err)
	}
}

func TestValidate(t *testing.T) {
	good := "sha256:" + strings.Repeat("0a", 32)
	tests := []struct {
		name    string
		o       Options
		wantErr string
	}{
		{name: "good", o: Options{Server: "https://192.0.2.1:6443", Token: "abcdef.0123456789abcdef", CAHashes: []string{good}}},
		{name: "unsafe skip", o: Options{Server: "https://192.0.2.1:6443", Token: "abcdef.0123456789abcdef", UnsafeSkipCAVerification: true}},
		{name: "no hash", o: Options{Server: "https://192.0.2.1:6443", Token: "abcdef.0123456789abcdef"}, wantErr: "--discovery-token-ca-cert-hash"},
		{name: "bad hash", o: Options{Server: "https://192.0.2.1:6443", Token: "abcdef.0123456789abcdef", CAHashes: []string{"sha256:zz"}}, wantErr: "32 bytes"},
		{name: "md5", o: Options{Server: "https://192.0.2.1:6443", Token: "abcdef.0123456789abcdef", CAHashes: []string{"md5:00"}}, wantErr: "must start with"},
		{name: "bad token", o: Options{Server: "https://192.0.2.1:6443", Token: "abc", CAHashes: []string{good}}, wantErr: "--token"},
		{name: "http", o: Options{Server: "http://192.0.2.1:6443", Token: "abcdef.0123456789abcdef", CAHashes: []string{good}}, wantErr: "https://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestKubeconfigs(t *testing.T) {
	_, caPEM := selfSigned(t)
	kc, err := ClusterInfoKubeconfig("https://192.0.2.1:6443", caPEM)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := ServerOf(string(kc)); err != nil || s != "https://192.0.2.1:6443" {
		t.Errorf("ServerOf = %q, %v", s, err)
	}
	got, err := caOf(string(kc))
	if err != nil || string(got) != string(caPEM) {
		t.Errorf("caOf = %v", err)
	}
	b := BootstrapKubeconfig(&Result{Server: "https://192.0.2.1:6443", CA: caPEM}, "abcdef.0123456789abcdef")
	ctx := b.Contexts[b.CurrentContext]
	if b.AuthInfos[ctx.AuthInfo].Token != "abcdef.0123456789abcdef" || b.Clusters[ctx.Cluster].Server != "https://192.0.2.1:6443" {
		t.Errorf("bootstrap kubeconfig = %+v", b)
	}
}
