package pod

import (
	"os"
	"syscall"
)

// ownedBy: dir has group gid, group rwx and setgid already.
func ownedBy(dir string, gid int64) (bool, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return false, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false, nil
	}
	return int64(st.Gid) == gid && fi.Mode().Perm()&0o070 == 0o070 && fi.Mode()&os.ModeSetgid != 0, nil
}
