package server

import (
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestKubeletFlags(t *testing.T) {
	o := NewOptions()
	if want := []string{"InternalIP", "Hostname", "ExternalIP"}; !reflect.DeepEqual(o.KubeletPreferredAddressTypes, want) {
		t.Errorf("default address types = %v, want %v", o.KubeletPreferredAddressTypes, want)
	}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--kubelet-client-certificate=/pki/c.crt", "--kubelet-client-key=/pki/c.key",
		"--kubelet-certificate-authority=/pki/ca.crt", "--kubelet-preferred-address-types=Hostname,InternalIP"}); err != nil {
		t.Fatal(err)
	}
	if o.KubeletClientCertificate != "/pki/c.crt" || o.KubeletClientKey != "/pki/c.key" || o.KubeletCertificateAuthority != "/pki/ca.crt" ||
		!reflect.DeepEqual(o.KubeletPreferredAddressTypes, []string{"Hostname", "InternalIP"}) {
		t.Errorf("parsed options = %+v", o)
	}

	valid := func() *Options {
		o := NewOptions()
		o.TLSCertFile, o.TLSKeyFile, o.ClientCAFile = "a", "b", "c"
		return o
	}
	for _, tc := range []struct {
		name    string
		change  func(*Options)
		wantErr string
	}{
		{name: "defaults", change: func(*Options) {}},
		{name: "certificate and key", change: func(o *Options) { o.KubeletClientCertificate, o.KubeletClientKey = "c", "k" }},
		{name: "certificate without key", change: func(o *Options) { o.KubeletClientCertificate = "c" }, wantErr: "--kubelet-client-key"},
		{name: "unknown address type", change: func(o *Options) { o.KubeletPreferredAddressTypes = []string{"InternalIP", "Nope"} }, wantErr: `"Nope"`},
		{name: "no address types", change: func(o *Options) { o.KubeletPreferredAddressTypes = nil }, wantErr: "at least one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := valid()
			tc.change(o)
			err := o.Validate()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Validate() = %v, want %q", err, tc.wantErr)
			}
		})
	}
}
