package cni

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// createNetNS makes a new network namespace and pins it by bind-mounting
// it onto path, as `ip netns add` does. The namespace is created on a
// locked OS thread, which returns to the original namespace afterwards (or
// is thrown away with the goroutine when that fails).
func createNetNS(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	_ = f.Close()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		tid := unix.Gettid()
		orig, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", tid))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer orig.Close()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("unshare: %w", err)
			return
		}
		mountErr := unix.Mount(fmt.Sprintf("/proc/self/task/%d/ns/net", tid), path, "none", unix.MS_BIND, "")
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			// Leave the thread locked: it dies with this goroutine.
			errc <- errors.Join(mountErr, fmt.Errorf("returning to the host namespace: %w", err))
			return
		}
		runtime.UnlockOSThread()
		errc <- mountErr
	}()
	if err := <-errc; err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("creating network namespace %s: %w", path, err)
	}
	return nil
}

// removeNetNS unmounts and removes a pinned namespace; a missing one is
// not an error.
func removeNetNS(path string) error {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmounting %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// isNetNS says whether path is a mounted network namespace.
func isNetNS(path string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return false
	}
	return st.Type == unix.NSFS_MAGIC
}
