package app

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"skiff.dev/scheduler/pkg/framework"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"+body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// frameworks completes the options and builds every profile's framework.
func frameworks(t *testing.T, o *Options) ([]*framework.Framework, *settings, error) {
	t.Helper()
	r, err := NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	set, err := o.complete(r)
	if err != nil {
		return nil, nil, err
	}
	var out []*framework.Framework
	for _, p := range set.profiles {
		f, err := framework.New(r, p, framework.NewHandle(framework.Listers{}))
		if err != nil {
			return nil, nil, err
		}
		out = append(out, f)
	}
	return out, set, nil
}

func TestConfigFile(t *testing.T) {
	path := writeConfig(t, `
percentageOfNodesToScore: 30
podInitialBackoffSeconds: 2
podMaxBackoffSeconds: 4
clientConnection:
  kubeconfig: /from/file
leaderElection:
  leaderElect: false
  leaseDuration: 30s
profiles:
- schedulerName: default-scheduler
- schedulerName: packer
  plugins:
    score:
      disabled: [{name: '*'}]
      enabled: [{name: NodeResourcesFit, weight: 4}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: MostAllocated}
`)
	o := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--config=" + path, "--kubeconfig=/from/flag", "--scheduler-name=ignored", "--leader-elect-lease-duration=40s"}); err != nil {
		t.Fatal(err)
	}
	fws, set, err := frameworks(t, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(fws) != 2 || fws[0].ProfileName() != "default-scheduler" || fws[1].ProfileName() != "packer" {
		t.Fatalf("profiles: %v", fws)
	}
	if got := fws[1].PluginNames()["Score"]; !reflect.DeepEqual(got, []string{"NodeResourcesFit:4"}) {
		t.Errorf("packer score plugins = %v", got)
	}
	if got := len(fws[0].PluginNames()["Score"]); got != 7 {
		t.Errorf("default profile has %d score plugins, want 7", got)
	}
	// The file's kubeconfig wins over the deprecated flag; an explicit
	// leader election flag wins over the file.
	if o.Client.Kubeconfig != "/from/file" {
		t.Errorf("kubeconfig = %q", o.Client.Kubeconfig)
	}
	if o.LeaderElection.LeaderElect || o.LeaderElection.LeaseDuration != 40*time.Second {
		t.Errorf("leader election = %+v", o.LeaderElection)
	}
	if set.percentageOfNodesToScore != 30 || set.initialBackoff != 2*time.Second || set.maxBackoff != 4*time.Second {
		t.Errorf("settings = %+v", set)
	}
}

func TestConfigFileErrors(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr string
	}{
		{name: "unknown plugin", body: "profiles:\n- plugins:\n    filter:\n      enabled: [{name: Nope}]\n", wantErr: `unknown plugin "Nope"`},
		{name: "bad scoring strategy", body: "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: Packed}}\n",
			wantErr: `building plugin "NodeResourcesFit": scoringStrategy.type: Unsupported value: "Packed"`},
		{name: "bad spread args", body: "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args: {defaultingType: List, defaultConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]}\n",
			wantErr: "defaultConstraints[0].maxSkew"},
		{name: "args for a plugin without arguments", body: "profiles:\n- pluginConfig:\n  - name: NodeName\n    args: {x: 1}\n",
			wantErr: `building plugin "NodeName": the plugin takes no arguments`},
		{name: "filter extension for a score-only plugin", body: "profiles:\n- plugins:\n    filter:\n      enabled: [{name: ImageLocality}]\n",
			wantErr: `plugin "ImageLocality" does not extend Filter plugin`},
		{name: "renew deadline longer than lease", body: "leaderElection: {leaseDuration: 5s, renewDeadline: 10s}\n", wantErr: "leaderElection"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			o.ConfigFile = writeConfig(t, tt.body)
			_, _, err := frameworks(t, o)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
