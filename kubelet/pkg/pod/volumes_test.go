package pod

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

type fakeMounter struct {
	mounted map[string]int64
	modes   map[string]os.FileMode
}

func (m *fakeMounter) MountTmpfs(path string, size int64, mode os.FileMode) error {
	m.mounted[path] = size
	if m.modes != nil {
		m.modes[path] = mode
	}
	return nil
}

func (m *fakeMounter) Unmount(path string) error {
	delete(m.mounted, path)
	return nil
}

type fakeTokens struct {
	n int
}

func (f *fakeTokens) Token(_ context.Context, p *corev1.Pod, audience string, exp int64) (string, time.Time, error) {
	f.n++
	return "token-" + string(rune('0'+f.n)) + "-" + audience, time.Date(2026, 1, 1, 11, 0, 0, 0, time.UTC).Add(time.Duration(exp) * time.Second), nil
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestVolumesHook(t *testing.T) {
	dir := t.TempDir()
	hostDir := filepath.Join(t.TempDir(), "created")
	objs := fakeObjects{
		configMaps: map[string]*corev1.ConfigMap{"ns/cfg": {Data: map[string]string{"a": "1", "b": "2"}}},
		secrets:    map[string]*corev1.Secret{"ns/sec": {Data: map[string][]byte{"password": []byte("s3cret")}}},
	}
	m := &fakeMounter{mounted: map[string]int64{}, modes: map[string]os.FileMode{}}
	tokens := &fakeTokens{}
	h := &VolumesHook{Dir: dir, Env: EnvContext{Objects: objs}, Tokens: tokens, Mounter: m}
	p := testPod(corev1.RestartPolicyAlways, "busybox")
	p.Labels = map[string]string{"app": "web", "tier": "front"}
	p.Spec.ServiceAccountName = "default"
	p.Spec.Volumes = []corev1.Volume{
		{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "mem", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Mi"))}}},
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Items: []corev1.KeyToPath{{Key: "a", Path: "sub/a.txt", Mode: ptr.To[int32](0o600)}}}}},
		{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "sec"}}},
		{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
			{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
		}}}},
		{Name: "kube-api-access-x", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3600)}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Items: []corev1.KeyToPath{{Key: "b", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
		}}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir, Type: ptr.To(corev1.HostPathDirectoryOrCreate)}}},
	}
	s := NewState(p)
	s.Now = time.Date(2026, 1, 1, 11, 0, 0, 0, time.UTC)
	if err := h.Prepare(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	vol := func(name string) Volume { return s.Volumes[name] }
	if fi, err := os.Stat(vol("scratch").Path); err != nil || !fi.IsDir() || vol("scratch").ReadOnly {
		t.Errorf("emptyDir = %+v, %v", vol("scratch"), err)
	} else if fi.Mode().Perm() != 0o777 {
		t.Errorf("emptyDir mode = %v, want 0777 whatever the umask, as upstream's", fi.Mode())
	}
	if size, ok := m.mounted[vol("mem").Path]; !ok || size != 1<<20 || m.modes[vol("mem").Path] != 0 {
		t.Errorf("memory emptyDir not on a 1Mi tmpfs of tmpfs's own mode (1777): %v %v", m.mounted, m.modes)
	}
	if mode := m.modes[vol("sec").Path]; mode != 0o755 {
		t.Errorf("secret tmpfs mode = %v, want 0755", mode)
	}
	if got := read(t, filepath.Join(vol("cfg").Path, "sub/a.txt")); got != "1" || !vol("cfg").ReadOnly {
		t.Errorf("configmap item = %q", got)
	}
	if fi, _ := os.Stat(filepath.Join(vol("cfg").Path, "sub/a.txt")); fi.Mode().Perm() != 0o600 {
		t.Errorf("item mode = %v", fi.Mode())
	}
	if _, err := os.Stat(filepath.Join(vol("cfg").Path, "b")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("key b projected without being an item")
	}
	if got := read(t, filepath.Join(vol("sec").Path, "password")); got != "s3cret" {
		t.Errorf("secret = %q", got)
	}
	if _, ok := m.mounted[vol("sec").Path]; !ok {
		t.Errorf("secret volume not on tmpfs")
	}
	if got := read(t, filepath.Join(vol("info").Path, "labels")); got != "app=\"web\"\ntier=\"front\"" {
		t.Errorf("labels = %q", got)
	}
	pj := vol("kube-api-access-x").Path
	if read(t, filepath.Join(pj, "token")) != "token-1-" || read(t, filepath.Join(pj, "ca.crt")) != "2" || read(t, filepath.Join(pj, "namespace")) != "ns" {
		t.Errorf("projected volume wrong")
	}
	if fi, err := os.Stat(hostDir); err != nil || !fi.IsDir() || vol("host").Path != hostDir {
		t.Errorf("hostPath DirectoryOrCreate: %v", err)
	}

	// A change to the config map shows after the refresh period; the
	// token is rotated at 80% of its life.
	objs.configMaps["ns/cfg"].Data["a"] = "changed"
	s.Now = s.Now.Add(30 * time.Second)
	_ = h.Run(context.Background(), s)
	if got := read(t, filepath.Join(vol("cfg").Path, "sub/a.txt")); got != "1" {
		t.Errorf("refreshed before the period: %q", got)
	}
	s.Now = s.Now.Add(VolumeRefreshPeriod)
	if err := h.Run(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(vol("cfg").Path, "sub/a.txt")); got != "changed" {
		t.Errorf("not refreshed: %q", got)
	}
	if tokens.n != 1 {
		t.Errorf("token requested %d times before 80%% of its life", tokens.n)
	}
	s.Now = s.Now.Add(48 * time.Minute)
	_ = h.Run(context.Background(), s)
	if tokens.n != 2 || read(t, filepath.Join(pj, "token")) != "token-2-" {
		t.Errorf("token not rotated: %d requests", tokens.n)
	}

	if err := h.Destroy(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if len(m.mounted) != 0 {
		t.Errorf("still mounted: %v", m.mounted)
	}
	if _, err := os.Stat(filepath.Join(dir, string(p.UID))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pod volume dir left: %v", err)
	}
	if _, err := os.Stat(hostDir); err != nil {
		t.Errorf("hostPath removed: %v", err)
	}
}

func TestVolumesHookErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		v       corev1.VolumeSource
		wantErr string
	}{
		{"missing config map", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}}}, `configmap "nope"`},
		{"missing item key", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Items: []corev1.KeyToPath{{Key: "zz", Path: "zz"}}}}, `has no key "zz"`},
		{"item path escapes", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Items: []corev1.KeyToPath{{Key: "a", Path: "../x"}}}}, "invalid path"},
		{"hostPath Directory on a file", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: file, Type: ptr.To(corev1.HostPathDirectory)}}, "is not a directory"},
		{"hostPath Socket", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: file, Type: ptr.To(corev1.HostPathSocket)}}, "is not a socket"},
		{"unsupported", corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}, "not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := fakeObjects{configMaps: map[string]*corev1.ConfigMap{"ns/cfg": {Data: map[string]string{"a": "1"}}}}
			h := &VolumesHook{Dir: t.TempDir(), Env: EnvContext{Objects: objs}, Mounter: &fakeMounter{mounted: map[string]int64{}}}
			p := testPod(corev1.RestartPolicyAlways, "busybox")
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: tt.v}}
			s := NewState(p)
			err := h.Prepare(context.Background(), s)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestMountsOfContainer(t *testing.T) {
	p := testPod(corev1.RestartPolicyAlways, "busybox")
	s := NewState(p)
	dir := t.TempDir()
	s.Volumes = map[string]Volume{"data": {Path: dir}, "cfg": {Path: "/cfg", ReadOnly: true}}
	c := &corev1.Container{VolumeMounts: []corev1.VolumeMount{
		{Name: "data", MountPath: "/data", SubPath: "x/y"},
		{Name: "cfg", MountPath: "/etc/cfg"},
		{Name: "data", MountPath: "/ro", ReadOnly: true},
	}}
	got, err := mounts(s, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Mount{{Source: filepath.Join(dir, "x/y"), Destination: "/data"}, {Source: "/cfg", Destination: "/etc/cfg", ReadOnly: true}, {Source: dir, Destination: "/ro", ReadOnly: true}}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("mounts = %+v, want %+v", got, want)
	}
	if fi, err := os.Stat(filepath.Join(dir, "x/y")); err != nil || !fi.IsDir() {
		t.Errorf("subPath not created: %v", err)
	}
	for _, bad := range []corev1.VolumeMount{{Name: "missing", MountPath: "/m"}, {Name: "data", MountPath: "/m", SubPath: "../escape"}} {
		if _, err := mounts(s, &corev1.Container{VolumeMounts: []corev1.VolumeMount{bad}}, nil); err == nil {
			t.Errorf("mount %+v accepted", bad)
		}
	}
}

func TestSubPathExpr(t *testing.T) {
	env := map[string]string{"POD_NAME": "web-1", "UP": "..", "ABS": "/tmp", "EMPTY": "", "TICK": "`hostname`"}
	tests := []struct {
		name, subPath, expr string
		want                string
		wantErr             string
	}{
		{name: "expanded", expr: "logs/$(POD_NAME)", want: "logs/web-1"},
		{name: "escaped", expr: "$$(POD_NAME)", want: "$(POD_NAME)"},
		{name: "backticks are only characters", expr: "$(TICK)", want: "`hostname`"},
		{name: "expands to ..", expr: "$(UP)", wantErr: "unable to provision SubPath `..`: must not contain '..'"},
		{name: "expands to a nested ..", expr: "a/$(UP)/b", wantErr: "unable to provision SubPath `a/../b`: must not contain '..'"},
		{name: "expands to an absolute path", expr: "$(ABS)", wantErr: "error SubPath `/tmp` must not be an absolute path"},
		{name: "missing variables", expr: "$(NOPE)/$(EMPTY)", wantErr: "missing value for EMPTY, NOPE"},
		{name: "subPath with a nested ..", subPath: "x/../y", wantErr: "must not contain '..'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
			s := NewState(testPod(corev1.RestartPolicyAlways, "busybox"))
			s.Volumes = map[string]Volume{"data": {Path: dir}}
			c := &corev1.Container{VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/d", SubPath: tt.subPath, SubPathExpr: tt.expr}}}
			got, err := mounts(s, c, env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(dir, tt.want); len(got) != 1 || got[0].Source != want {
				t.Fatalf("mounts = %+v, want %s", got, want)
			}
			if fi, err := os.Stat(got[0].Source); err != nil || fi.Mode().Perm() != 0o777 {
				t.Errorf("subPath directory: %v %v, want the volume's mode 0777", fi, err)
			}
		})
	}
}

// A subPathExpr that fails its checks fails the container with
// CreateContainerConfigError; nothing is created.
func TestWorkerSubPathExprConfigError(t *testing.T) {
	p := testPod(corev1.RestartPolicyNever, "busybox")
	p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: "POD_NAME", Value: ".."})
	p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "work", MountPath: "/logs", SubPathExpr: "$(POD_NAME)"}}
	h := newHarness(p)
	h.w.state.Volumes = map[string]Volume{"work": {Path: t.TempDir()}}
	h.sync(t)
	cs := h.status.last().ContainerStatuses[0]
	if w := cs.State.Waiting; w == nil || w.Reason != ReasonCreateContainerConfigError || !strings.Contains(w.Message, "must not contain '..'") {
		t.Errorf("state = %+v, want waiting CreateContainerConfigError", cs.State)
	}
	if got := h.rt.callsWith("create"); len(got) != 0 {
		t.Errorf("creates = %v", got)
	}
}

func TestEtcFiles(t *testing.T) {
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver 192.0.2.53\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		change     func(*corev1.Pod)
		wantResolv string
		wantMounts int
	}{
		{name: "node's resolv.conf", change: func(*corev1.Pod) {}, wantResolv: "nameserver 192.0.2.53\n", wantMounts: 3},
		{name: "dnsPolicy None", change: func(p *corev1.Pod) {
			p.Spec.DNSPolicy = corev1.DNSNone
			p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"1.2.3.4"}, Searches: []string{"a.b"}, Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}}}
		}, wantResolv: "search a.b\nnameserver 1.2.3.4\noptions ndots:2\n", wantMounts: 3},
		{name: "hostNetwork gets only resolv.conf without NodeHosts", change: func(p *corev1.Pod) { p.Spec.HostNetwork = true }, wantResolv: "nameserver 192.0.2.53\n", wantMounts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &VolumesHook{Dir: t.TempDir(), DNS: DNSConfigurer{ResolverConfig: resolv}, Mounter: &fakeMounter{mounted: map[string]int64{}}}
			p := testPod(corev1.RestartPolicyAlways, "busybox")
			tt.change(p)
			s := NewState(p)
			s.Sandbox = &Sandbox{IPs: []string{"10.244.1.7"}}
			if err := h.Prepare(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			if len(s.EtcMounts) != tt.wantMounts {
				t.Fatalf("etc mounts = %v", s.EtcMounts)
			}
			if got := read(t, s.EtcMounts[len(s.EtcMounts)-1].Source); got != tt.wantResolv {
				t.Errorf("resolv.conf = %q, want %q", got, tt.wantResolv)
			}
			if tt.wantMounts == 1 {
				return
			}
			if got := read(t, s.EtcMounts[0].Source); !strings.Contains(got, "10.244.1.7\tp\n") || !strings.Contains(got, "127.0.0.1\tlocalhost") {
				t.Errorf("hosts = %q", got)
			}
		})
	}
}
