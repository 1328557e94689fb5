package state

import (
	"log/slog"
	"os"
	"time"
)

// previewLockTimeout is how long a preview waits for a running serve to
// let go of the state file before going without it.
const previewLockTimeout = 200 * time.Millisecond

// OpenFor opens the state file for a serve: for writing, or, for a
// preview (serve --once without --apply), read-only. A preview writes
// nothing: it reads the file when it can, and goes without it (nil, nil)
// when there is none or a running serve holds it, saying so to log.
func OpenFor(path string, preview bool, log *slog.Logger) (*DB, error) {
	if !preview {
		return Open(path, Options{})
	}
	if _, err := os.Stat(path); err != nil {
		return nil, nil
	}
	st, err := Open(path, Options{ReadOnly: true, LockTimeout: previewLockTimeout})
	if err != nil {
		log.Warn("preview without the saved state", "reason", err)
		return nil, nil
	}
	return st, nil
}
