package eviction

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// DiskUsage is what `du` reports for a directory tree: the bytes of the
// blocks allocated to its files and directories, and the number of inodes
// (hard links counted once). Symbolic links are not followed. The caller
// can use it for a pod's log directory and its local volumes when filling
// PodUsage. A missing path uses nothing.
func DiskUsage(path string) (bytes, inodes uint64, err error) {
	seen := map[uint64]bool{}
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok || seen[st.Ino] {
			return nil
		}
		seen[st.Ino] = true
		bytes += uint64(st.Blocks) * 512
		inodes++
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0, nil
	}
	return bytes, inodes, err
}
