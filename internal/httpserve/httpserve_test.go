package httpserve

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// bound is how long a test waits for what the short limits make happen
// within milliseconds: far longer, so a loaded machine does not fail it.
const bound = 20 * time.Second

// start serves h on 127.0.0.1 with l and returns the address.
func start(t *testing.T, h http.Handler, l Limits) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := Server(h, l)
	go srv.Serve(Limit(lis, l))
	t.Cleanup(func() { srv.Close() })
	return lis.Addr().String()
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedByServer reads c until the server closes it, failing after bound.
func closedByServer(t *testing.T, c net.Conn, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(bound))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("%s: the server kept the connection open for %v", what, bound)
	}
}

func readBody(w http.ResponseWriter, r *http.Request) {
	if _, err := io.ReadAll(r.Body); err != nil {
		http.Error(w, err.Error(), http.StatusRequestTimeout)
		return
	}
	io.WriteString(w, "ok\n")
}

// A client that sends its headers and then its body too slowly is cut off
// at Read, not held for as long as it keeps the connection.
func TestSlowBodyIsCutOff(t *testing.T) {
	addr := start(t, http.HandlerFunc(readBody), Limits{ReadHeader: time.Second, Read: 100 * time.Millisecond})
	c := dial(t, addr)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"mode\":")
	closedByServer(t, c, "a body stalled after 8 of 1000 bytes")
}

// A keep-alive connection left idle after its reply is closed at Idle.
func TestIdleKeepAliveIsClosed(t *testing.T) {
	addr := start(t, http.HandlerFunc(readBody), Limits{Idle: 100 * time.Millisecond})
	c := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("setup: %d, close %v; want a kept-alive 200", resp.StatusCode, resp.Close)
	}
	c.SetReadDeadline(time.Now().Add(bound))
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Fatalf("the idle connection was not closed within %v: %v", bound, err)
	}
}

// Beyond MaxConns a connection is not served until one of those open
// closes; then it is.
func TestConnectionsAreCapped(t *testing.T) {
	addr := start(t, http.HandlerFunc(readBody), Limits{ReadHeader: bound, MaxConns: 2})
	hold := []net.Conn{dial(t, addr), dial(t, addr)}
	for _, c := range hold { // each is accepted: a byte of a request that never ends
		io.WriteString(c, "G")
	}
	third := dial(t, addr)
	io.WriteString(third, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	third.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if n, err := third.Read(make([]byte, 1)); n > 0 || err == nil {
		t.Fatal("a third connection was served while two were open")
	}
	hold[0].Close()
	third.SetReadDeadline(time.Now().Add(bound))
	got, err := io.ReadAll(third)
	if err != nil || !strings.HasPrefix(string(got), "HTTP/1.1 200") {
		t.Fatalf("after one closed: %q, %v; want it served", got, err)
	}
}

// Zero limits take the defaults; set ones are kept.
func TestLimitsDefaults(t *testing.T) {
	srv := Server(http.NotFoundHandler(), Limits{Read: time.Second})
	d := Defaults()
	if srv.ReadTimeout != time.Second || srv.ReadHeaderTimeout != d.ReadHeader || srv.WriteTimeout != d.Write ||
		srv.IdleTimeout != d.Idle {
		t.Errorf("server %+v", srv)
	}
	if d.Write <= 30*time.Second {
		t.Errorf("write timeout %v does not cover a release's 30 s", d.Write)
	}
}
