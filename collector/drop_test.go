package collector

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/prewarm/prewarm/collector/buffer"
)

// A full disk is not a full buffer: each failure of Push has its own label
// in dropped_points_total.
func TestDropReason(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w: spool holds 1073741824 bytes", buffer.ErrFull), "buffer_full"},
		{buffer.ErrClosed, "buffer_full"},
		{fmt.Errorf("spool /var/spool: write 0001.seg: %w", syscall.ENOSPC), "disk_full"},
		{fmt.Errorf("spool: %w", syscall.EIO), "spool_error"},
		{errors.New("anything else"), "spool_error"},
	}
	for _, tc := range tests {
		if got := dropReason(tc.err); got != tc.want {
			t.Errorf("dropReason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
