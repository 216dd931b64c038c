package pod

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/record"
)

// VolumeRefreshPeriod is how often config map, secret, downward API and
// token contents are written again (upstream resyncs about every minute).
const VolumeRefreshPeriod = time.Minute

// Volume is a pod volume set up on the host.
type Volume struct {
	Path string
	// ReadOnly volumes are always mounted read-only (config maps, secrets,
	// downward API, projected), as upstream does.
	ReadOnly bool
}

// TokenRequester gets a service account token bound to a pod.
type TokenRequester interface {
	Token(ctx context.Context, pod *corev1.Pod, audience string, expirationSeconds int64) (token string, expires time.Time, err error)
}

// Mounter mounts and unmounts tmpfs; a fake in unit tests.
type Mounter interface {
	// MountTmpfs mounts a tmpfs of at most sizeBytes (0: the kernel's
	// default) whose root has mode (0: tmpfs's default, 1777).
	MountTmpfs(path string, sizeBytes int64, mode os.FileMode) error
	// Unmount unmounts path when it is a mount point.
	Unmount(path string) error
}

// VolumesHook sets up the pod's volumes under <Dir>/<pod uid>/volumes:
// emptyDir (tmpfs for medium Memory), hostPath (with its type check),
// configMap, secret, downwardAPI and projected (with serviceAccountToken
// through the TokenRequest API). Secrets and projected volumes live on
// tmpfs. Their contents are refreshed every VolumeRefreshPeriod.
type VolumesHook struct {
	Dir string
	// DNS writes each pod's resolv.conf by its dnsPolicy and dnsConfig.
	DNS DNSConfigurer
	// NodeHosts is the node's hosts file, which hostNetwork pods get (with
	// their hostAliases); empty: hostNetwork pods keep the image's.
	NodeHosts string
	Env       EnvContext
	Tokens    TokenRequester
	Mounter   Mounter
	Recorder  record.EventRecorder
	// Claims reads persistentVolumeClaim volumes' claims and volumes (nil:
	// such volumes fail to set up).
	Claims ClaimReader
}

// volumeState is the hook's record of one pod.
type volumeState struct {
	// failed: the last Prepare did not set every volume up.
	failed      bool
	refreshedAt time.Time
	tokens      map[string]tokenState // by file path
}

type tokenState struct {
	token           string
	issued, expires time.Time
}

// Name implements Hook.
func (h *VolumesHook) Name() string { return "volumes" }

func (h *VolumesHook) podDir(s *State) string {
	return filepath.Join(h.Dir, string(s.Pod.UID), "volumes")
}

// Prepare sets every volume up; a failure is retried on the next sync.
// Failures are FailedMount events with upstream's words: one per volume
// that failed to mount ("MountVolume.SetUp failed ..."), and the pod's
// summary ("Unable to attach or mount volumes: unmounted volumes=[...],
// unattached volumes=[...], failed to process volumes=[...]: ..."), where
// the volumes failed to process are the claims that do not resolve to a
// bound volume yet. skiff attaches nothing, so no volume is unattached.
func (h *VolumesHook) Prepare(ctx context.Context, s *State) error {
	if s.Volumes == nil {
		s.Volumes = map[string]Volume{}
	}
	var errs []error
	var unmounted, unprocessed []string
	for i := range s.Pod.Spec.Volumes {
		v := &s.Pod.Spec.Volumes[i]
		vol, err := h.setUp(ctx, s, v)
		if err != nil {
			unmounted = append(unmounted, v.Name)
			var pe *processError
			var me *mountError
			switch {
			case errors.As(err, &pe):
				unprocessed = append(unprocessed, v.Name)
			case errors.As(err, &me):
				h.event(s, "MountVolume.SetUp failed for volume %q : %v", me.volume, err)
			default:
				h.event(s, "MountVolume.SetUp failed for volume %q : %v", v.Name, err)
			}
			errs = append(errs, err)
			continue
		}
		s.Volumes[v.Name] = vol
	}
	vs := s.volumes()
	vs.failed = len(errs) > 0
	if vs.failed {
		sort.Strings(unmounted)
		sort.Strings(unprocessed)
		msg := make([]string, len(errs))
		for i, err := range errs {
			msg[i] = err.Error()
		}
		err := fmt.Errorf("unmounted volumes=%v, unattached volumes=[], failed to process volumes=%v: %s",
			unmounted, unprocessed, strings.Join(msg, "; "))
		h.event(s, "Unable to attach or mount volumes: %v", err)
		return err
	}
	if err := h.etcFiles(s); err != nil {
		h.event(s, "%v", err)
		return err
	}
	vs.refreshedAt = s.Now
	return nil
}

// event records a FailedMount event on the pod.
func (h *VolumesHook) event(s *State, format string, args ...any) {
	if h.Recorder != nil {
		h.Recorder.Eventf(s.Pod, corev1.EventTypeWarning, "FailedMount", format, args...)
	}
}

// VolumesFailed says the pod's volumes did not all set up at its last
// try: its containers cannot start, and upstream, which mounts volumes
// before it makes the sandbox, reports PodReadyToStartContainers False.
func (s *State) VolumesFailed() bool {
	return s.volumeState != nil && s.volumeState.failed
}

func (s *State) volumes() *volumeState {
	if s.volumeState == nil {
		s.volumeState = &volumeState{tokens: map[string]tokenState{}}
	}
	return s.volumeState
}

// Run refreshes the contents of the API-backed volumes when due.
func (h *VolumesHook) Run(ctx context.Context, s *State) error {
	vs := s.volumes()
	if s.Now.Sub(vs.refreshedAt) < VolumeRefreshPeriod {
		return nil
	}
	var errs []error
	for i := range s.Pod.Spec.Volumes {
		v := &s.Pod.Spec.Volumes[i]
		if v.ConfigMap == nil && v.Secret == nil && v.DownwardAPI == nil && v.Projected == nil {
			continue
		}
		if _, err := h.setUp(ctx, s, v); err != nil {
			errs = append(errs, fmt.Errorf("volume %q: %w", v.Name, err))
		}
	}
	vs.refreshedAt = s.Now
	return errors.Join(errs...)
}

// Destroy unmounts every volume directory (<kind>/<name>, whatever the
// spec says, so it works for pods known only by UID) and removes the
// pod's directory.
func (h *VolumesHook) Destroy(_ context.Context, s *State) error {
	root := filepath.Join(h.Dir, string(s.Pod.UID))
	var errs []error
	dirs, _ := filepath.Glob(filepath.Join(h.podDir(s), "*", "*"))
	for _, d := range dirs {
		if err := h.Mounter.Unmount(d); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		if err := os.RemoveAll(root); err != nil {
			errs = append(errs, err)
		}
	}
	s.Volumes = nil
	return errors.Join(errs...)
}

// etcFiles writes the pod's hosts file and resolv.conf. A hostNetwork
// pod's hosts file is the node's (with its hostAliases), as upstream's.
func (h *VolumesHook) etcFiles(s *State) error {
	s.EtcMounts = nil
	dir := filepath.Join(h.Dir, string(s.Pod.UID))
	hostname := podHostname(s.Pod)
	var hosts strings.Builder
	if s.Pod.Spec.HostNetwork {
		if h.NodeHosts != "" {
			b, err := os.ReadFile(h.NodeHosts)
			if err != nil {
				return fmt.Errorf("reading the node's hosts file: %w", err)
			}
			hosts.Write(b)
			if len(b) > 0 && b[len(b)-1] != '\n' {
				hosts.WriteByte('\n')
			}
		}
	} else {
		hosts.WriteString("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
		if s.Sandbox != nil {
			// A pod with a subdomain (a StatefulSet's) also has its FQDN,
			// <hostname>.<subdomain>.<namespace>.svc.<cluster domain>, as
			// upstream's managedHostsFileContent writes it.
			domain := podHostDomain(s.Pod, h.DNS.ClusterDomain)
			for _, ip := range s.Sandbox.IPs {
				if domain != "" {
					fmt.Fprintf(&hosts, "%s\t%s.%s\t%s\n", ip, hostname, domain, hostname)
				} else {
					fmt.Fprintf(&hosts, "%s\t%s\n", ip, hostname)
				}
			}
		}
	}
	if len(s.Pod.Spec.HostAliases) > 0 {
		hosts.WriteString("\n# Entries added by HostAliases.\n")
		for _, a := range s.Pod.Spec.HostAliases {
			fmt.Fprintf(&hosts, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
		}
	}
	resolv, err := h.resolvConf(s.Pod)
	if err != nil {
		return err
	}
	files := map[string]File{"etc-hosts": {Data: []byte(hosts.String()), Mode: 0o644}, "resolv.conf": {Data: resolv, Mode: 0o644},
		"etc-hostname": {Data: []byte(hostname + "\n"), Mode: 0o644}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, f := range files {
		if err := os.WriteFile(filepath.Join(dir, name), f.Data, f.Mode); err != nil {
			return err
		}
	}
	if !s.Pod.Spec.HostNetwork || h.NodeHosts != "" {
		s.EtcMounts = append(s.EtcMounts, Mount{Source: filepath.Join(dir, "etc-hosts"), Destination: "/etc/hosts"})
	}
	if !s.Pod.Spec.HostNetwork {
		// The containers' hostname, as the CRI runtime writes it for
		// upstream's kubelet; a hostNetwork pod keeps the node's.
		s.EtcMounts = append(s.EtcMounts, Mount{Source: filepath.Join(dir, "etc-hostname"), Destination: "/etc/hostname"})
	}
	s.EtcMounts = append(s.EtcMounts, Mount{Source: filepath.Join(dir, "resolv.conf"), Destination: "/etc/resolv.conf"})
	return nil
}

// resolvConf is the pod's resolv.conf by its dnsPolicy and dnsConfig
// (dns.go); what was dropped or fell back is a Warning event.
func (h *VolumesHook) resolvConf(p *corev1.Pod) ([]byte, error) {
	cfg, warnings, err := h.DNS.PodDNS(p)
	if err != nil {
		return nil, err
	}
	if h.Recorder != nil {
		for _, w := range warnings {
			h.Recorder.Event(p, corev1.EventTypeWarning, w.Reason, w.Message)
		}
	}
	return cfg.ResolvConf(), nil
}

func kindOf(v *corev1.Volume) string {
	switch {
	case v.EmptyDir != nil:
		return "empty-dir"
	case v.ConfigMap != nil:
		return "configmap"
	case v.Secret != nil:
		return "secret"
	case v.DownwardAPI != nil:
		return "downward-api"
	case v.Projected != nil:
		return "projected"
	}
	return "other"
}

func (h *VolumesHook) setUp(ctx context.Context, s *State, v *corev1.Volume) (Volume, error) {
	if v.HostPath != nil {
		return setUpHostPath(v.HostPath)
	}
	if v.PersistentVolumeClaim != nil {
		return h.setUpClaim(ctx, s.Pod, v.PersistentVolumeClaim.ClaimName, v.PersistentVolumeClaim.ReadOnly)
	}
	if v.Ephemeral != nil {
		return h.setUpClaim(ctx, s.Pod, s.Pod.Name+"-"+v.Name, false)
	}
	dir := filepath.Join(h.podDir(s), kindOf(v), v.Name)
	switch {
	case v.EmptyDir != nil:
		// World-writable, as upstream's, so that a container of any user
		// can write: 0777 on disk; on tmpfs, tmpfs's own 1777.
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return Volume{}, err
		}
		if v.EmptyDir.Medium == corev1.StorageMediumMemory {
			var size int64
			if v.EmptyDir.SizeLimit != nil {
				size = v.EmptyDir.SizeLimit.Value()
			}
			if err := h.Mounter.MountTmpfs(dir, size, 0); err != nil {
				return Volume{}, err
			}
		} else if err := os.Chmod(dir, 0o777); err != nil {
			return Volume{}, err
		}
		return Volume{Path: dir}, nil
	case v.ConfigMap != nil, v.Secret != nil, v.DownwardAPI != nil, v.Projected != nil:
		files, err := h.files(ctx, s, v)
		if err != nil {
			return Volume{}, err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return Volume{}, err
		}
		if v.Secret != nil || v.Projected != nil {
			if err := h.Mounter.MountTmpfs(dir, 0, 0o755); err != nil {
				return Volume{}, err
			}
		}
		if err := WriteFiles(dir, files); err != nil {
			return Volume{}, err
		}
		return Volume{Path: dir, ReadOnly: true}, nil
	}
	return Volume{}, errors.New("volume type not supported by skiff-kubelet")
}

func setUpHostPath(hp *corev1.HostPathVolumeSource) (Volume, error) {
	typ := corev1.HostPathUnset
	if hp.Type != nil {
		typ = *hp.Type
	}
	fi, err := os.Stat(hp.Path)
	exists := err == nil
	switch typ {
	case corev1.HostPathDirectoryOrCreate:
		if !exists {
			err = os.MkdirAll(hp.Path, 0o755)
		} else if !fi.IsDir() {
			err = fmt.Errorf("%s is not a directory", hp.Path)
		}
	case corev1.HostPathFileOrCreate:
		if !exists {
			if err = os.MkdirAll(filepath.Dir(hp.Path), 0o755); err == nil {
				var f *os.File
				if f, err = os.OpenFile(hp.Path, os.O_CREATE|os.O_RDONLY, 0o644); err == nil {
					err = f.Close()
				}
			}
		} else if fi.IsDir() {
			err = fmt.Errorf("%s is a directory", hp.Path)
		}
	case corev1.HostPathDirectory:
		if !exists || !fi.IsDir() {
			err = fmt.Errorf("hostPath type check failed: %s is not a directory", hp.Path)
		}
	case corev1.HostPathFile:
		if !exists || !fi.Mode().IsRegular() {
			err = fmt.Errorf("hostPath type check failed: %s is not a file", hp.Path)
		}
	case corev1.HostPathSocket:
		if !exists || fi.Mode()&os.ModeSocket == 0 {
			err = fmt.Errorf("hostPath type check failed: %s is not a socket file", hp.Path)
		}
	case corev1.HostPathCharDev:
		if !exists || fi.Mode()&os.ModeCharDevice == 0 {
			err = fmt.Errorf("hostPath type check failed: %s is not a character device", hp.Path)
		}
	case corev1.HostPathBlockDev:
		if !exists || fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0 {
			err = fmt.Errorf("hostPath type check failed: %s is not a block device", hp.Path)
		}
	case corev1.HostPathUnset:
		err = nil
	default:
		err = fmt.Errorf("unknown hostPath type %q", typ)
	}
	if err != nil {
		return Volume{}, err
	}
	return Volume{Path: hp.Path}, nil
}

// File is one file of a volume.
type File struct {
	Data []byte
	Mode os.FileMode
}

func (h *VolumesHook) files(ctx context.Context, s *State, v *corev1.Volume) (map[string]File, error) {
	out := map[string]File{}
	switch {
	case v.ConfigMap != nil:
		return out, h.configMapFiles(ctx, s, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional, mode(v.ConfigMap.DefaultMode), out)
	case v.Secret != nil:
		return out, h.secretFiles(ctx, s, v.Secret.SecretName, v.Secret.Items, v.Secret.Optional, mode(v.Secret.DefaultMode), out)
	case v.DownwardAPI != nil:
		return out, h.downwardFiles(s, v.DownwardAPI.Items, mode(v.DownwardAPI.DefaultMode), out)
	}
	def := mode(v.Projected.DefaultMode)
	for _, src := range v.Projected.Sources {
		var err error
		switch {
		case src.ConfigMap != nil:
			err = h.configMapFiles(ctx, s, src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional, def, out)
		case src.Secret != nil:
			err = h.secretFiles(ctx, s, src.Secret.Name, src.Secret.Items, src.Secret.Optional, def, out)
		case src.DownwardAPI != nil:
			err = h.downwardFiles(s, src.DownwardAPI.Items, def, out)
		case src.ServiceAccountToken != nil:
			err = h.tokenFile(ctx, s, src.ServiceAccountToken, def, out)
		default:
			err = errors.New("projected source not supported by skiff-kubelet")
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func mode(m *int32) os.FileMode {
	if m == nil {
		return 0o644
	}
	return os.FileMode(*m)
}

func itemMode(def os.FileMode, m *int32) os.FileMode {
	if m == nil {
		return def
	}
	return os.FileMode(*m)
}

func project(data map[string][]byte, items []corev1.KeyToPath, def os.FileMode, out map[string]File, what string) error {
	if len(items) == 0 {
		for k, v := range data {
			out[k] = File{Data: v, Mode: def}
		}
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			return fmt.Errorf("%s has no key %q", what, it.Key)
		}
		out[it.Path] = File{Data: v, Mode: itemMode(def, it.Mode)}
	}
	return nil
}

func (h *VolumesHook) configMapFiles(ctx context.Context, s *State, name string, items []corev1.KeyToPath, optional *bool, def os.FileMode, out map[string]File) error {
	cm, err := h.Env.Objects.ConfigMap(ctx, s.Pod.Namespace, name)
	if err != nil {
		if apierrors.IsNotFound(err) && optional != nil && *optional {
			return nil
		}
		return fmt.Errorf("configmap %q: %w", name, err)
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return project(data, items, def, out, "configmap "+name)
}

func (h *VolumesHook) secretFiles(ctx context.Context, s *State, name string, items []corev1.KeyToPath, optional *bool, def os.FileMode, out map[string]File) error {
	sec, err := h.Env.Objects.Secret(ctx, s.Pod.Namespace, name)
	if err != nil {
		if apierrors.IsNotFound(err) && optional != nil && *optional {
			return nil
		}
		return fmt.Errorf("secret %q: %w", name, err)
	}
	return project(sec.Data, items, def, out, "secret "+name)
}

func (h *VolumesHook) downwardFiles(s *State, items []corev1.DownwardAPIVolumeFile, def os.FileMode, out map[string]File) error {
	ec := h.Env
	if s.Sandbox != nil {
		ec.PodIPs = s.Sandbox.IPs
	}
	for _, it := range items {
		var val string
		var err error
		switch {
		case it.FieldRef != nil && it.FieldRef.FieldPath == "metadata.labels":
			val = formatMap(s.Pod.Labels)
		case it.FieldRef != nil && it.FieldRef.FieldPath == "metadata.annotations":
			val = formatMap(s.Pod.Annotations)
		case it.FieldRef != nil:
			val, err = FieldValue(s.Pod, it.FieldRef.FieldPath, ec)
		case it.ResourceFieldRef != nil:
			c := containerNamed(s.Pod, it.ResourceFieldRef.ContainerName)
			if c == nil {
				return fmt.Errorf("no container %q for %s", it.ResourceFieldRef.ContainerName, it.Path)
			}
			val, err = ResourceValue(c, it.ResourceFieldRef, ec.NodeAllocatable)
		default:
			err = fmt.Errorf("downward API item %s has no source", it.Path)
		}
		if err != nil {
			return err
		}
		out[it.Path] = File{Data: []byte(val), Mode: itemMode(def, it.Mode)}
	}
	return nil
}

func containerNamed(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}

// formatMap is the downward API's format for labels and annotations.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s=%q", k, m[k])
	}
	return b.String()
}

// tokenFile writes a bound token, requesting a new one once 80% of the
// old one's lifetime has passed (upstream's rotation point).
func (h *VolumesHook) tokenFile(ctx context.Context, s *State, src *corev1.ServiceAccountTokenProjection, def os.FileMode, out map[string]File) error {
	if h.Tokens == nil {
		return errors.New("no token requester")
	}
	vs := s.volumes()
	ts, ok := vs.tokens[src.Path]
	if !ok || s.Now.After(ts.issued.Add(ts.expires.Sub(ts.issued)*8/10)) {
		exp := int64(3600)
		if src.ExpirationSeconds != nil {
			exp = *src.ExpirationSeconds
		}
		tok, expires, err := h.Tokens.Token(ctx, s.Pod, src.Audience, exp)
		if err != nil {
			return fmt.Errorf("service account token: %w", err)
		}
		ts = tokenState{token: tok, issued: s.Now, expires: expires}
		vs.tokens[src.Path] = ts
	}
	out[src.Path] = File{Data: []byte(ts.token), Mode: def}
	return nil
}

// WriteFiles makes dir hold exactly files: each is written to a
// temporary name and renamed, and files that are no longer wanted are
// removed.
func WriteFiles(dir string, files map[string]File) error {
	for name, f := range files {
		clean := filepath.Clean(name)
		if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return fmt.Errorf("invalid path %q", name)
		}
		p := filepath.Join(dir, clean)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		tmp := filepath.Join(filepath.Dir(p), ".."+filepath.Base(p)+".tmp")
		if err := os.WriteFile(tmp, f.Data, f.Mode.Perm()); err != nil {
			return err
		}
		if err := os.Chmod(tmp, f.Mode.Perm()); err != nil {
			return err
		}
		if err := os.Rename(tmp, p); err != nil {
			return err
		}
	}
	want := make(map[string]bool, len(files))
	for name := range files {
		want[filepath.Clean(name)] = true
	}
	return filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if !want[rel] {
			return os.Remove(p)
		}
		return nil
	})
}
