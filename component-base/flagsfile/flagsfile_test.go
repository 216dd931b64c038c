package flagsfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type testFlags struct {
	name    string
	port    int
	enabled bool
	period  time.Duration
	servers []string
	labels  map[string]string
}

func newFlagSet(t *testing.T) (*pflag.FlagSet, *testFlags) {
	t.Helper()
	v := &testFlags{}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.StringVar(&v.name, "name", "default", "")
	fs.IntVar(&v.port, "port", 10250, "")
	fs.BoolVar(&v.enabled, "enabled", true, "")
	fs.DurationVar(&v.period, "period", time.Second, "")
	fs.StringSliceVar(&v.servers, "servers", []string{"a"}, "")
	fs.StringToStringVar(&v.labels, "labels", nil, "")
	return fs, v
}

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		file    string
		want    testFlags
		wantErr string
	}{
		{
			name: "every kind of value",
			file: "name: node-1\nport: 10251\nenabled: false\nperiod: 90s\nservers:\n- https://10.0.0.1:2379\n- https://10.0.0.2:2379\nlabels:\n  zone: b\n  rack: r1\n",
			want: testFlags{name: "node-1", port: 10251, enabled: false, period: 90 * time.Second,
				servers: []string{"https://10.0.0.1:2379", "https://10.0.0.2:2379"}, labels: map[string]string{"zone": "b", "rack": "r1"}},
		},
		{
			name: "the command line wins, the rest comes from the file",
			args: []string{"--port=1", "--servers=x", "--servers=y"},
			file: "name: from-file\nport: 2\nservers: [z]\n",
			want: testFlags{name: "from-file", port: 1, enabled: true, period: time.Second, servers: []string{"x", "y"}},
		},
		{
			name: "a comma list in one string is one Set, as on the command line",
			file: "servers: b,c\n",
			want: testFlags{name: "default", port: 10250, enabled: true, period: time.Second, servers: []string{"b", "c"}},
		},
		{
			name: "an empty file or only comments changes nothing",
			file: "# nothing yet\n",
			want: testFlags{name: "default", port: 10250, enabled: true, period: time.Second, servers: []string{"a"}},
		},
		{
			name: "an empty string is a value",
			file: "name: \"\"\n",
			want: testFlags{name: "", port: 10250, enabled: true, period: time.Second, servers: []string{"a"}},
		},
		{name: "unknown flag", file: "name: x\nprot: 1\n", wantErr: "line 2: unknown flag --prot"},
		{name: "dashes", file: "--port: 1\n", wantErr: `write the flag name without dashes ("port")`},
		{name: "bad value", file: "port: many\n", wantErr: "line 1: --port: "},
		{name: "bad duration", file: "period: 5 minutes\n", wantErr: "--period"},
		{name: "duplicate key", file: "port: 1\nport: 2\n", wantErr: "line 2: --port is already set on line 1"},
		{name: "null value", file: "name:\n", wantErr: "--name: no value"},
		{name: "not a mapping", file: "- port\n", wantErr: "want a mapping"},
		{name: "not YAML", file: "port: [1\n", wantErr: "yaml"},
		{name: "itself", file: "flags-file: other.yaml\n", wantErr: "cannot be set from the file itself"},
		{name: "nested list", file: "servers:\n- [a, b]\n", wantErr: "a list element must be a value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, got := newFlagSet(t)
			fs.String(FlagName, "", "")
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			err := Apply(fs, []byte(tt.file))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Apply() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply() error = %v", err)
			}
			if got.name != tt.want.name || got.port != tt.want.port || got.enabled != tt.want.enabled || got.period != tt.want.period {
				t.Errorf("got name=%q port=%d enabled=%v period=%v, want name=%q port=%d enabled=%v period=%v",
					got.name, got.port, got.enabled, got.period, tt.want.name, tt.want.port, tt.want.enabled, tt.want.period)
			}
			if strings.Join(got.servers, " ") != strings.Join(tt.want.servers, " ") {
				t.Errorf("servers = %q, want %q", got.servers, tt.want.servers)
			}
			if len(got.labels) != len(tt.want.labels) {
				t.Errorf("labels = %v, want %v", got.labels, tt.want.labels)
			}
			for k, v := range tt.want.labels {
				if got.labels[k] != v {
					t.Errorf("labels = %v, want %v", got.labels, tt.want.labels)
				}
			}
		})
	}
}

// TestApplyBadFileChangesNothing: a file with an error further down sets no
// flag, so a daemon never runs half-configured.
func TestApplyBadFileChangesNothing(t *testing.T) {
	fs, got := newFlagSet(t)
	if err := Apply(fs, []byte("name: x\nport: 1\nnope: 2\n")); err == nil {
		t.Fatal("Apply() succeeded on an unknown flag")
	}
	if got.name != "default" || got.port != 10250 || fs.Changed("name") {
		t.Errorf("flags changed by a rejected file: name=%q port=%d", got.name, got.port)
	}
}

// TestInstall runs a cobra command as a daemon's main does: the file is
// applied before RunE, after the command line, and an existing PreRunE
// still runs.
func TestInstall(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "daemon.yaml")
	if err := os.WriteFile(path, []byte("name: from-file\nport: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var (
		name      string
		port      int
		preRan    bool
		seenInRun string
	)
	cmd := &cobra.Command{
		Use:     "daemon",
		PreRunE: func(*cobra.Command, []string) error { preRan = true; return nil },
		RunE: func(*cobra.Command, []string) error {
			seenInRun = name
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "default", "")
	cmd.Flags().IntVar(&port, "port", 1, "")
	Install(cmd)
	cmd.SetArgs([]string{"--port=7", "--flags-file", path})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if seenInRun != "from-file" || port != 7 || !preRan {
		t.Errorf("RunE saw name=%q, port=%d, PreRunE ran=%v; want from-file, 7 (command line wins), true", seenInRun, port, preRan)
	}

	cmd.SetArgs([]string{"--flags-file", filepath.Join(dir, "missing.yaml")})
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("a missing file: error = %v, want one naming the file", err)
	}
}
