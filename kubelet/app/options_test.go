package app

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*Options)
		wantErr string
	}{
		{name: "defaults", change: func(*Options) {}},
		{name: "bad node IP", change: func(o *Options) { o.NodeIP = "nope" }, wantErr: "--node-ip"},
		{name: "bad address", change: func(o *Options) { o.Address = "x" }, wantErr: "--address"},
		{name: "bad port", change: func(o *Options) { o.Port = 70000 }, wantErr: "--port"},
		{name: "cert without key", change: func(o *Options) { o.TLSCertFile = "c" }, wantErr: "--tls-cert-file"},
		{name: "long bridge name", change: func(o *Options) { o.BridgeName = "sixteen-chars-xx" }, wantErr: "--bridge-name"},
		{name: "no containerd", change: func(o *Options) { o.ContainerdAddress = "" }, wantErr: "--containerd-address"},
		{name: "zero frequency", change: func(o *Options) { o.SyncFrequency = 0 }, wantErr: "frequencies"},
		{name: "bootstrap without kubeconfig", change: func(o *Options) { o.BootstrapKubeconfig = "b" }, wantErr: "--bootstrap-kubeconfig"},
		{name: "negative authorization cache TTL", change: func(o *Options) { o.UnauthorizedTTL = -time.Second }, wantErr: "--authorization-webhook-cache-unauthorized-ttl"},
		{name: "negative token cache TTL", change: func(o *Options) { o.TokenWebhookCacheTTL = -time.Second }, wantErr: "--authentication-token-webhook-cache-ttl"},
		{name: "rotated serving and a fixed one", change: func(o *Options) { o.RotateServerCertificates, o.TLSCertFile, o.TLSKeyFile = true, "c", "k" }, wantErr: "--rotate-server-certificates"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			tt.change(o)
			o.Complete("host-1")
			err := o.Validate()
			if tt.wantErr == "" && err != nil {
				t.Fatalf("err = %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestOptionsComplete(t *testing.T) {
	o := NewOptions()
	o.Complete("host-1")
	if o.NodeName != "host-1" || o.ContainerdNamespace != "skiff-host-1" ||
		o.CNIConfDir != "/var/lib/skiff-kubelet/cni/net.d" || o.CNICacheDir != "/var/lib/skiff-kubelet/cni/cache" {
		t.Errorf("completed = %+v", o)
	}
	o = NewOptions()
	o.NodeName, o.ContainerdNamespace = "n", "ns"
	o.Complete("host-1")
	if o.NodeName != "n" || o.ContainerdNamespace != "ns" {
		t.Errorf("flags were overridden: %+v", o)
	}
}

// TestAuthorizationCacheFlags: upstream's flag names and defaults (5m
// allowed, 30s denied; tokens on, 2m).
func TestAuthorizationCacheFlags(t *testing.T) {
	o := NewOptions()
	if o.AuthorizedTTL != 5*time.Minute || o.UnauthorizedTTL != 30*time.Second {
		t.Errorf("defaults %v / %v, want 5m / 30s", o.AuthorizedTTL, o.UnauthorizedTTL)
	}
	fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	o.AddFlags(fs)
	if !o.TokenWebhook || o.TokenWebhookCacheTTL != 2*time.Minute {
		t.Errorf("token webhook defaults %v %v, want true 2m", o.TokenWebhook, o.TokenWebhookCacheTTL)
	}
	if err := fs.Parse([]string{"--authorization-webhook-cache-authorized-ttl=1m", "--authorization-webhook-cache-unauthorized-ttl=0",
		"--authentication-token-webhook=false", "--authentication-token-webhook-cache-ttl=10s"}); err != nil {
		t.Fatal(err)
	}
	if o.AuthorizedTTL != time.Minute || o.UnauthorizedTTL != 0 || o.TokenWebhook || o.TokenWebhookCacheTTL != 10*time.Second {
		t.Errorf("parsed %v / %v, %v %v; want 1m / 0, false 10s", o.AuthorizedTTL, o.UnauthorizedTTL, o.TokenWebhook, o.TokenWebhookCacheTTL)
	}
}
