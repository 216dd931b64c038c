package deploytest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"skiff.dev/component-base/flagsfile"
)

const etcdBinary = "/usr/bin/etcd" // Debian's etcd-server

// flagLine matches a flag in pflag's --help: "  -v, --v Level   text" or
// "      --name string   text" or "      --enable   text" (a bool).
var flagLine = regexp.MustCompile(`^\s+(?:-\w, )?--([a-z0-9_-]+)(?: ([A-Za-z0-9]+))?\s{2,}`)

// helpFlagSet builds, from `binary --help`, a flag set with each flag of
// the binary under its name and of its type, so that values can be checked
// as the daemon itself parses them.
func helpFlagSet(t *testing.T, binary string) *pflag.FlagSet {
	t.Helper()
	out, err := exec.Command(binary, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --help: %v\n%s", binary, err, out)
	}
	fs := pflag.NewFlagSet(filepath.Base(binary), pflag.ContinueOnError)
	for _, line := range strings.Split(string(out), "\n") {
		m := flagLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name, typ := m[1], m[2]
		switch typ {
		case "":
			fs.Bool(name, false, "")
		case "string", "moduleSpec", "severity", "traceLocation":
			fs.String(name, "", "")
		case "strings":
			fs.StringSlice(name, nil, "")
		case "int", "Level":
			fs.Int(name, 0, "")
		case "int32":
			fs.Int32(name, 0, "")
		case "uint":
			fs.Uint(name, 0, "")
		case "float32":
			fs.Float32(name, 0, "")
		case "float":
			fs.Float64(name, 0, "")
		case "duration":
			fs.Duration(name, 0, "")
		case "stringToString":
			fs.StringToString(name, nil, "")
		default:
			t.Fatalf("%s --help: flag --%s has type %q, unknown to this test", binary, name, typ)
		}
	}
	if fs.Lookup(flagsfile.FlagName) == nil {
		t.Fatalf("%s has no --%s", binary, flagsfile.FlagName)
	}
	return fs
}

// etcdFlags returns the flag names of `etcd --help` (Debian's etcd prints
// "  --name 'default'").
func etcdFlags(t *testing.T) map[string]bool {
	t.Helper()
	out, err := exec.Command(etcdBinary, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --help: %v", etcdBinary, err)
	}
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+--([a-z0-9-]+)`).FindAllStringSubmatch(string(out), -1) {
		names[m[1]] = true
	}
	if !names["peer-client-cert-auth"] {
		t.Fatalf("%s --help lists no --peer-client-cert-auth; parsed %d flags", etcdBinary, len(names))
	}
	return names
}

func requireBinaries(t *testing.T) {
	t.Helper()
	for _, d := range daemons {
		if _, err := os.Stat(filepath.Join(repo, "bin", "skiff-"+d)); err != nil {
			t.Fatalf("bin/skiff-%s is missing: run make build first (make test does): %v", d, err)
		}
	}
	if _, err := os.Stat(etcdBinary); err != nil {
		t.Fatalf("etcd is required at %s (Debian package etcd-server): %v", etcdBinary, err)
	}
}

// TestUnitsAndFlagsFiles: each daemon's unit runs it with one flag per
// line, every one of which the daemon has and accepts the value of; its
// flags file sets only flags the daemon has, with values they accept; and
// each unit has the properties of a production unit.
func TestUnitsAndFlagsFiles(t *testing.T) {
	requireBinaries(t)
	for _, d := range daemons {
		t.Run(d, func(t *testing.T) {
			binary := filepath.Join(repo, "bin", "skiff-"+d)
			u := readUnit(t, filepath.Join(repo, "deploy", "systemd", "skiff-"+d+".service"))
			checkCommonUnit(t, u, "/usr/local/bin/skiff-"+d)

			fs := helpFlagSet(t, binary)
			args := u.execLines[1:]
			if err := fs.Parse(args); err != nil {
				t.Fatalf("the unit's flags: %v", err)
			}
			if fs.NArg() != 0 {
				t.Errorf("the unit passes arguments that are not flags: %q", fs.Args())
			}
			if want := "--" + flagsfile.FlagName + "=/etc/skiff/" + d + ".yaml"; !slices.Contains(args, want) {
				t.Errorf("the unit lacks %s", want)
			}

			// The flags file, applied as the daemon applies it: over the
			// unit's command line, which wins.
			data, err := os.ReadFile(filepath.Join(repo, "deploy", "config", d+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := flagsfile.Apply(fs, data); err != nil {
				t.Errorf("deploy/config/%s.yaml: %v", d, err)
			}
			for _, a := range args {
				name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
				if bytes.Contains(data, []byte("\n"+name+":")) {
					t.Errorf("--%s is both on the unit's command line and in %s.yaml, where it would be ignored", name, d)
				}
			}
		})
	}

	t.Run("kubelet keeps its containers", func(t *testing.T) {
		u := readUnit(t, filepath.Join(repo, "deploy", "systemd", "skiff-kubelet.service"))
		if got := u.keys["Service.KillMode"]; !slices.Equal(got, []string{"process"}) {
			t.Errorf("KillMode = %v, want process", got)
		}
		after := strings.Fields(strings.Join(u.keys["Unit.After"], " "))
		if !slices.Contains(after, "containerd.service") {
			t.Errorf("After = %v, want containerd.service in it", after)
		}
		// Wants, not Requires: a restart of containerd must not restart
		// the kubelet.
		if len(u.keys["Unit.Requires"]) != 0 || len(u.keys["Unit.BindsTo"]) != 0 {
			t.Errorf("the kubelet requires or binds to %v", append(u.keys["Unit.Requires"], u.keys["Unit.BindsTo"]...))
		}
	})
}

// checkCommonUnit checks what every unit needs: the binary, one flag per
// line, restart on failure, ordering after the network, an install target.
func checkCommonUnit(t *testing.T, u *unit, binary string) {
	t.Helper()
	if len(u.execLines) < 2 || u.execLines[0] != binary {
		t.Fatalf("%s: ExecStart = %q, want %s and its flags, one a line", u.name, u.execLines, binary)
	}
	for _, l := range u.execLines[1:] {
		if !strings.HasPrefix(l, "--") || strings.Count(l, " --") != 0 || strings.ContainsAny(l, " \t") {
			t.Errorf("%s: ExecStart line %q: want one --flag=value a line", u.name, l)
		}
	}
	if got := u.keys["Service.Restart"]; !slices.Equal(got, []string{"on-failure"}) {
		t.Errorf("%s: Restart = %v, want on-failure", u.name, got)
	}
	after := strings.Fields(strings.Join(u.keys["Unit.After"], " "))
	wants := strings.Fields(strings.Join(u.keys["Unit.Wants"], " "))
	if !slices.Contains(after, "network-online.target") || !slices.Contains(wants, "network-online.target") {
		t.Errorf("%s: After = %v, Wants = %v; want network-online.target in both", u.name, after, wants)
	}
	if got := u.keys["Install.WantedBy"]; !slices.Equal(got, []string{"multi-user.target"}) {
		t.Errorf("%s: WantedBy = %v, want multi-user.target", u.name, got)
	}
}

// TestEtcdUnit: the etcd unit runs Debian's etcd with TLS on both ports and
// client certificates required, with flags etcd has, and its environment
// file sets only ETCD_* variables of etcd's flags.
func TestEtcdUnit(t *testing.T) {
	requireBinaries(t)
	u := readUnit(t, filepath.Join(repo, "deploy", "systemd", "etcd.service"))
	checkCommonUnit(t, u, etcdBinary)
	known := etcdFlags(t)
	set := map[string]bool{}
	for _, l := range u.execLines[1:] {
		name, _, _ := strings.Cut(strings.TrimPrefix(l, "--"), "=")
		if !known[name] {
			t.Errorf("etcd has no flag --%s", name)
		}
		set[name] = true
	}
	for _, want := range []string{"cert-file", "key-file", "trusted-ca-file", "client-cert-auth", "peer-cert-file", "peer-key-file", "peer-trusted-ca-file", "peer-client-cert-auth"} {
		if !set[want] {
			t.Errorf("the etcd unit lacks --%s", want)
		}
	}
	if got := u.keys["Service.Type"]; !slices.Equal(got, []string{"notify"}) {
		t.Errorf("Type = %v, want notify (etcd tells systemd when it serves)", got)
	}
	envFile := u.keys["Service.EnvironmentFile"]
	if !slices.Equal(envFile, []string{"/etc/skiff/etcd.env"}) {
		t.Fatalf("EnvironmentFile = %v", envFile)
	}
	data, err := os.ReadFile(filepath.Join(repo, "deploy", "config", "etcd.env"))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.HasPrefix(k, "ETCD_") || v == "" {
			t.Errorf("etcd.env line %d: %q, want ETCD_NAME=value", i+1, line)
			continue
		}
		name := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(k, "ETCD_")), "_", "-")
		if !known[name] {
			t.Errorf("etcd.env line %d: %s is no etcd flag (--%s)", i+1, k, name)
		}
		if set[name] {
			t.Errorf("etcd.env line %d: %s is also on the unit's command line", i+1, k)
		}
	}
}

// installRoot installs every role with deploy/install.sh into a new
// temporary root that also holds systemd's own units and Debian's etcd, as
// a machine would.
func installRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "usr", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	linkOrCopy(t, etcdBinary, filepath.Join(root, "usr", "bin", "etcd"))
	out, err := exec.Command("cp", "-a", "/usr/lib/systemd/system", filepath.Join(root, "usr", "lib", "systemd")+"/").CombinedOutput()
	if err != nil {
		if err := os.MkdirAll(filepath.Join(root, "usr", "lib", "systemd"), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err = exec.Command("cp", "-a", "/usr/lib/systemd/system", filepath.Join(root, "usr", "lib", "systemd")+"/").CombinedOutput(); err != nil {
			t.Fatalf("copying systemd's units: %v\n%s", err, out)
		}
	}
	cmd := exec.Command("bash", filepath.Join(repo, "deploy", "install.sh"), "--root", root, "etcd", "control-plane", "worker")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("deploy/install.sh: %v\n%s", err, out)
	}
	return root
}

func linkOrCopy(t *testing.T, src, dst string) {
	t.Helper()
	if os.Link(src, dst) == nil {
		return
	}
	if out, err := exec.Command("cp", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp %s %s: %v\n%s", src, dst, err, out)
	}
}

// verify runs systemd-analyze verify on units inside root and returns what
// it printed; systemd-analyze prints nothing for a unit it finds right.
func verify(t *testing.T, root string, units ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("systemd-analyze", append([]string{"verify", "--root=" + root}, units...)...)
	cmd.Env = append(os.Environ(), "SYSTEMD_LOG_COLOR=0")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestUnitsVerify: every unit under deploy/systemd, installed with
// deploy/install.sh, passes systemd-analyze verify without a warning; a
// broken unit in the same root does not (so the check can fail).
func TestUnitsVerify(t *testing.T) {
	requireBinaries(t)
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Fatalf("systemd-analyze (Debian package systemd) is required: %v", err)
	}
	root := installRoot(t)
	units, err := filepath.Glob(filepath.Join(repo, "deploy", "systemd", "*.service"))
	if err != nil || len(units) != len(daemons)+1 {
		t.Fatalf("deploy/systemd holds %v (%v), want a unit per daemon and etcd", units, err)
	}
	for _, path := range units {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			out, err := verify(t, root, name)
			if err != nil || strings.TrimSpace(out) != "" {
				t.Errorf("systemd-analyze verify %s: %v\n%s", name, err, out)
			}
		})
	}

	t.Run("a broken unit is reported", func(t *testing.T) {
		broken := map[string]string{
			"missing-binary.service": "[Unit]\nDescription=x\n[Service]\nExecStart=/usr/local/bin/skiff-nothing --x=1\n",
			"unknown-key.service":    "[Unit]\nDescription=x\n[Service]\nExecStart=/usr/local/bin/skiff-proxy\nKilMode=process\n",
		}
		for name, text := range broken {
			if err := os.WriteFile(filepath.Join(root, "etc", "systemd", "system", name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			out, _ := verify(t, root, name)
			if strings.TrimSpace(out) == "" {
				t.Errorf("systemd-analyze verify %s printed nothing", name)
			}
			t.Logf("%s: %s", name, strings.TrimSpace(out))
		}
	})

	// install.sh keeps the flags files a site has edited.
	edited := filepath.Join(root, "etc", "skiff", "proxy.yaml")
	if err := os.WriteFile(edited, []byte("egress-guard: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", filepath.Join(repo, "deploy", "install.sh"), "--root", root, "worker").CombinedOutput()
	if err != nil {
		t.Fatalf("install.sh again: %v\n%s", err, out)
	}
	if data, _ := os.ReadFile(edited); string(data) != "egress-guard: true\n" {
		t.Errorf("a second install replaced the edited proxy.yaml:\n%s", out)
	}
	if !strings.Contains(string(out), fmt.Sprintf("kept      /etc/skiff/%s", "proxy.yaml")) {
		t.Errorf("install.sh did not say it kept proxy.yaml:\n%s", out)
	}
}
