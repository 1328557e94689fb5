package keda

import (
	"context"
	"fmt"
)

// ServeInBackground runs ListenAndServe(ctx, addr) on its own goroutine
// and returns the channel that gets its error (naming key, the setting
// that chose addr; nil after a graceful stop) once it has ended; ended is
// called then. KEDA pools get their capacity only through this server,
// so a caller passes the cancel of its whole service as ended: when the
// server cannot listen or dies, everything stops with its error.
func (s *Scaler) ServeInBackground(ctx context.Context, addr, key string, ended func()) <-chan error {
	errc := make(chan error, 1)
	go func() {
		err := s.ListenAndServe(ctx, addr)
		if err != nil {
			err = fmt.Errorf("KEDA external scaler (%s %s): %w", key, addr, err)
		}
		errc <- err
		ended()
	}()
	return errc
}
