//go:build unix

package buffer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes an exclusive advisory lock on dir's LOCK file, so that two
// collectors pointed at one spool directory (the default ./prewarm-spool
// is easy to share by accident) fail at start instead of interleaving
// their segments. The lock goes with the process, so a crash leaves none.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_CREATE|os.O_RDWR, 0o640)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is in use by another collector (give each its own --spool-dir)", dir)
		}
		return nil, err
	}
	return f, nil
}
