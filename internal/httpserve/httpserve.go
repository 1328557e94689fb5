// Package httpserve builds the HTTP servers of prewarm's long-running
// commands with every limit a server facing a network needs: time to send
// the headers, the body and the reply, how long an idle keep-alive
// connection stays, and how many connections are open at once. Without
// them a client that sends its body a byte a minute, or opens connections
// and leaves them idle, holds a goroutine and a file descriptor each for
// as long as it likes, until the process runs out.
package httpserve

import (
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// Limits bound what one client can hold of a server. A zero field takes
// its default from Defaults.
type Limits struct {
	// ReadHeader is the time to send the request's headers.
	ReadHeader time.Duration
	// Read is the time to send the whole request, body included.
	Read time.Duration
	// Write is the time from the end of the request's headers to the end
	// of the reply; it must cover the slowest handler (a release waits up
	// to 30 s for the back-end).
	Write time.Duration
	// Idle is how long a keep-alive connection waits for its next request.
	Idle time.Duration
	// MaxConns is the number of connections open at once; further ones
	// wait in the kernel's accept queue until one closes.
	MaxConns int
}

// Defaults returns the limits of forecaster serve's HTTP server.
func Defaults() Limits {
	return Limits{ReadHeader: 10 * time.Second, Read: 30 * time.Second, Write: time.Minute,
		Idle: 2 * time.Minute, MaxConns: 256}
}

// withDefaults fills l's zero fields from Defaults.
func (l Limits) withDefaults() Limits {
	d := Defaults()
	pick := func(v, d time.Duration) time.Duration {
		if v > 0 {
			return v
		}
		return d
	}
	l.ReadHeader, l.Read = pick(l.ReadHeader, d.ReadHeader), pick(l.Read, d.Read)
	l.Write, l.Idle = pick(l.Write, d.Write), pick(l.Idle, d.Idle)
	if l.MaxConns <= 0 {
		l.MaxConns = d.MaxConns
	}
	return l
}

// Server returns a server of h with l's timeouts.
func Server(h http.Handler, l Limits) *http.Server {
	l = l.withDefaults()
	return &http.Server{Handler: h, ReadHeaderTimeout: l.ReadHeader, ReadTimeout: l.Read,
		WriteTimeout: l.Write, IdleTimeout: l.Idle}
}

// Limit accepts at most l.MaxConns connections of lis at once.
func Limit(lis net.Listener, l Limits) net.Listener {
	return netutil.LimitListener(lis, l.withDefaults().MaxConns)
}
