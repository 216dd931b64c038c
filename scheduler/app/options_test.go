package app

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"skiff.dev/scheduler/pkg/framework"
)

func TestOptions(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "defaults"},
		{name: "flags", args: []string{"--kubeconfig=/x", "--scheduler-name=mine", "--secure-port=0", "--bind-address=127.0.0.1", "--leader-elect=false"}},
		{name: "empty scheduler name", args: []string{"--scheduler-name="}, wantErr: "--scheduler-name"},
		{name: "bad port", args: []string{"--secure-port=70000"}, wantErr: "--secure-port"},
		{name: "bad address", args: []string{"--bind-address=localhost"}, wantErr: "--bind-address"},
		{name: "cert without key", args: []string{"--tls-cert-file=/c"}, wantErr: "--tls-private-key-file"},
		{name: "lease shorter than renew", args: []string{"--leader-elect-lease-duration=5s", "--leader-elect-renew-deadline=10s"}, wantErr: "lease-duration"},
		{name: "lease check off without election", args: []string{"--leader-elect=false", "--leader-elect-lease-duration=1s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			err := o.Validate()
			if tt.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error = %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
	o := NewOptions()
	le := o.LeaderElection
	if o.SchedulerName != "default-scheduler" || o.Serving.Port != 10259 || !le.LeaderElect ||
		le.ResourceNamespace != "kube-system" || le.ResourceName != "kube-scheduler" || le.LeaseDuration != 15*time.Second {
		t.Fatalf("defaults differ from upstream: %+v", o)
	}
}

func TestDefaultProfileBuilds(t *testing.T) {
	r, err := NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if len(r) != len(DefaultPlugins().MultiPoint.Enabled) {
		t.Fatalf("%d plugins registered, %d in the default profile", len(r), len(DefaultPlugins().MultiPoint.Enabled))
	}
	f, err := framework.New(r, framework.Profile{SchedulerName: "default-scheduler", Plugins: DefaultPlugins()}, framework.NewHandle(framework.Listers{}))
	if err != nil {
		t.Fatal(err)
	}
	// Upstream v1.32's default score weights.
	want := []string{"TaintToleration:3", "NodeAffinity:2", "NodeResourcesFit:1", "PodTopologySpread:2",
		"InterPodAffinity:2", "NodeResourcesBalancedAllocation:1", "ImageLocality:1"}
	if got := f.PluginNames()["Score"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("score plugins = %v, want %v", got, want)
	}
	if got := f.PluginNames()["PreBind"]; !reflect.DeepEqual(got, []string{"VolumeBinding"}) {
		t.Fatalf("pre-bind plugins = %v", got)
	}
	if got := f.PluginNames()["PostFilter"]; !reflect.DeepEqual(got, []string{"DefaultPreemption"}) {
		t.Fatalf("post-filter plugins = %v", got)
	}
	wantFilters := []string{"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
		"NodeResourcesFit", "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity"}
	if got := f.PluginNames()["Filter"]; !reflect.DeepEqual(got, wantFilters) {
		t.Fatalf("filter plugins = %v, want %v", got, wantFilters)
	}
}
