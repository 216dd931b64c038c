package kubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Tokens requests service account tokens bound to pods (TokenRequest).
type Tokens struct {
	Client kubernetes.Interface
}

// Token implements pod.TokenRequester.
func (t Tokens) Token(ctx context.Context, p *corev1.Pod, audience string, expirationSeconds int64) (string, time.Time, error) {
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &expirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: p.Name, UID: p.UID},
	}}
	if audience != "" {
		req.Spec.Audiences = []string{audience}
	}
	out, err := t.Client.CoreV1().ServiceAccounts(p.Namespace).CreateToken(ctx, p.Spec.ServiceAccountName, req, metav1.CreateOptions{})
	if err != nil {
		return "", time.Time{}, err
	}
	return out.Status.Token, out.Status.ExpirationTimestamp.Time, nil
}

// HostMounter mounts tmpfs on the host.
type HostMounter struct{}

// MountTmpfs mounts a tmpfs on path unless something is mounted there.
func (HostMounter) MountTmpfs(path string, sizeBytes int64, mode os.FileMode) error {
	mounted, err := isMountPoint(path)
	if err != nil || mounted {
		return err
	}
	var opts []string
	if mode != 0 {
		opts = append(opts, fmt.Sprintf("mode=%04o", uint32(mode.Perm())|sticky(mode)))
	}
	if sizeBytes > 0 {
		opts = append(opts, fmt.Sprintf("size=%d", sizeBytes))
	}
	if err := unix.Mount("tmpfs", path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, strings.Join(opts, ",")); err != nil {
		return fmt.Errorf("mounting tmpfs on %s: %w", path, err)
	}
	return nil
}

// sticky is the sticky bit of mode as an octal mode bit.
func sticky(mode os.FileMode) uint32 {
	if mode&os.ModeSticky != 0 {
		return 0o1000
	}
	return 0
}

// Unmount unmounts path if it is a mount point.
func (HostMounter) Unmount(path string) error {
	mounted, err := isMountPoint(path)
	if errors.Is(err, os.ErrNotExist) || (err == nil && !mounted) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("unmounting %s: %w", path, err)
	}
	return nil
}

// isMountPoint compares the device of path with its parent's.
func isMountPoint(path string) (bool, error) {
	var st, parent unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, os.ErrNotExist
		}
		return false, err
	}
	if err := unix.Lstat(filepath.Dir(path), &parent); err != nil {
		return false, err
	}
	return st.Dev != parent.Dev || st.Ino == parent.Ino, nil
}
