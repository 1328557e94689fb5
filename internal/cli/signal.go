package cli

import (
	"context"
	"os"
	"os/signal"
)

// OnSignal calls fn each time the process gets sig, one call at a time,
// until ctx ends. stop stops listening and waits for a call in progress:
// a service reloads its configuration on SIGHUP this way.
func OnSignal(ctx context.Context, sig os.Signal, fn func(context.Context)) (stop func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, sig)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-c:
			}
			fn(ctx)
		}
	}()
	return func() {
		signal.Stop(c)
		<-done
	}
}
