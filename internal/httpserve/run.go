package httpserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// shutdownGrace is how long the requests in flight get to finish when
// RunWhile stops.
const shutdownGrace = 5 * time.Second

// RunWhile serves h on addr, with Defaults' limits on each request's time
// and on the connections open at once, while loop runs. When ctx ends
// (SIGTERM) the loop returns and the server shuts down gracefully (5s for
// requests in flight); when the server fails, the loop is stopped and the
// server's error returned. A listen error names listenKey, the setting
// that chose addr.
func RunWhile(ctx context.Context, addr, listenKey string, h http.Handler, loop func(context.Context) error, log *slog.Logger) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s (%s): %w", addr, listenKey, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	limits := Defaults()
	srv := Server(h, limits)
	errc := make(chan error, 1)
	go func() {
		err := srv.Serve(Limit(lis, limits))
		if !errors.Is(err, http.ErrServerClosed) {
			cancel()
		}
		errc <- err
	}()
	log.Info("serving", "addr", lis.Addr().String())
	loopErr := loop(ctx)
	log.Info("shutting down")
	shutdown, stop := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer stop()
	shutdownErr := srv.Shutdown(shutdown)
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("HTTP server on %s: %w", lis.Addr(), err)
	}
	return errors.Join(loopErr, shutdownErr)
}
