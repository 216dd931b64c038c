package app

import (
	"testing"

	"github.com/spf13/pflag"

	"skiff.dev/component-base/flagsfile"
	"skiff.dev/kubelet/pkg/localpath"
)

// TestLocalPathDirEmpty: --local-path-dir "" (on the command line or in
// the flags file) stays empty, which Setup reads as "no local-path
// provisioner on this node" (Config.LocalPath nil; docs/storage.md: claims
// whose pods are scheduled here stay Pending), and is valid; the default
// is localpath.DefaultDir. A provisioner cannot be built without a
// directory. (e2e/multinode_test.go shows a node so started: its claim
// stays Pending with no volume made anywhere.)
func TestLocalPathDirEmpty(t *testing.T) {
	parse := func(args []string, file string) *Options {
		t.Helper()
		o := NewOptions()
		fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		// As --flags-file: after the command line, which wins.
		if file != "" {
			if err := flagsfile.Apply(fs, []byte(file)); err != nil {
				t.Fatalf("flags file %q: %v", file, err)
			}
		}
		o.Complete("host-1")
		if err := o.Validate(); err != nil {
			t.Fatalf("%v %q: %v", args, file, err)
		}
		return o
	}
	if o := parse(nil, ""); o.LocalPathDir != localpath.DefaultDir {
		t.Errorf("default --local-path-dir = %q, want %q", o.LocalPathDir, localpath.DefaultDir)
	}
	for _, c := range []struct {
		args []string
		file string
	}{
		{args: []string{"--local-path-dir="}},
		{args: []string{"--local-path-dir", ""}},
		{file: "local-path-dir: \"\"\n"},
		{args: []string{"--local-path-dir="}, file: "local-path-dir: /srv/storage\n"},
	} {
		if o := parse(c.args, c.file); o.LocalPathDir != "" {
			t.Errorf("%v with flags file %q: --local-path-dir = %q, want empty (the provisioner off)", c.args, c.file, o.LocalPathDir)
		}
	}
	if o := parse([]string{"--local-path-dir=/srv/storage"}, ""); o.LocalPathDir != "/srv/storage" {
		t.Errorf("--local-path-dir=/srv/storage gave %q", o.LocalPathDir)
	}
	if _, err := localpath.New(localpath.Options{NodeName: "host-1", Dir: ""}); err == nil {
		t.Error("a local-path provisioner was built without a directory")
	}
}
