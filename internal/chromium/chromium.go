// Package chromium drives a headless Chromium over the DevTools protocol,
// for the tests of the status page: open a page, wait until its scripts
// have drawn it, read the DOM, take a screenshot, and collect every
// problem the page had (uncaught exceptions, console errors and warnings,
// failed or refused loads, Content-Security-Policy violations). It is a
// test helper: the binaries never start a browser.
//
// Find locates the browser ($PREWARM_CHROMIUM, else chromium on PATH; the
// project's scripts/chromium.sh installs Debian's). Tests skip when there
// is none, unless PREWARM_REQUIRE_CHROMIUM=1 (set by scripts/test.sh), when
// they fail instead, so `make test` cannot pass without the page tested.
package chromium

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/websocket"
)

// Environment variables the tests read.
const (
	EnvBinary  = "PREWARM_CHROMIUM"
	EnvRequire = "PREWARM_REQUIRE_CHROMIUM"
	// EnvScreenshots names a directory where tests write their
	// screenshots, to be looked at (never committed).
	EnvScreenshots = "PREWARM_SCREENSHOT_DIR"
)

// Find returns the Chromium binary, or skips t (fails it when
// PREWARM_REQUIRE_CHROMIUM=1) when there is none.
func Find(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(EnvBinary); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("no Chromium: install it with scripts/chromium.sh (apt-get install chromium) or set %s", EnvBinary)
	}
	t.Skipf("no Chromium on PATH (scripts/chromium.sh installs it; %s=1 makes this a failure)", EnvRequire)
	return ""
}

// devtoolsOrigin is the Origin the DevTools websocket is opened with, and
// the only one Chromium is told to accept: since Chromium 111 a websocket
// from an origin not named in --remote-allow-origins is refused.
const devtoolsOrigin = "http://127.0.0.1"

// Browser is one headless Chromium with one page open.
type Browser struct {
	cmd     *exec.Cmd
	dir     string
	ws      *websocket.Conn
	stderr  *lockedBuffer
	mu      sync.Mutex
	nextID  int
	waiting map[int]chan reply
	events  []Event
	loaded  chan struct{}
	done    chan struct{}
}

// Event is a DevTools event the page raised.
type Event struct {
	Method string
	Params json.RawMessage
}

type reply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Start launches Chromium headless, with a throw-away profile and nothing
// that talks to the network on its own, a width×height viewport, and
// connects to its page.
func Start(ctx context.Context, binary string, width, height int) (*Browser, error) {
	dir, err := os.MkdirTemp("", "prewarm-chromium-")
	if err != nil {
		return nil, err
	}
	b := &Browser{dir: dir, stderr: &lockedBuffer{}, waiting: map[int]chan reply{}, loaded: make(chan struct{}, 16), done: make(chan struct{})}
	b.cmd = exec.Command(binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
		"--disable-extensions", "--mute-audio", "--hide-scrollbars", "--user-data-dir="+dir,
		fmt.Sprintf("--window-size=%d,%d", width, height), "--remote-debugging-address=127.0.0.1",
		"--remote-debugging-port=0", "--remote-allow-origins="+devtoolsOrigin, "about:blank")
	b.cmd.Stdout, b.cmd.Stderr = b.stderr, b.stderr
	if err := b.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	if err := b.connect(ctx); err != nil {
		b.Close()
		return nil, fmt.Errorf("%w\nchromium's output:\n%s", err, b.stderr.String())
	}
	go b.read()
	for _, m := range []string{"Runtime.enable", "Log.enable", "Page.enable", "Network.enable"} {
		if _, err := b.Call(ctx, m, nil); err != nil {
			b.Close()
			return nil, err
		}
	}
	_, err = b.Call(ctx, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false})
	if err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// connect waits for the DevTools port Chromium writes to its profile and
// opens the page target's websocket.
func (b *Browser) connect(ctx context.Context) error {
	var port string
	for port == "" {
		data, err := os.ReadFile(filepath.Join(b.dir, "DevToolsActivePort"))
		if err == nil {
			if line, _, _ := strings.Cut(string(data), "\n"); line != "" {
				port = strings.TrimSpace(line)
				break
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for Chromium's DevTools port: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	base := "http://127.0.0.1:" + port
	var targets []struct {
		Type, WebSocketDebuggerURL string
	}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/json/list", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&targets)
			resp.Body.Close()
		}
		for _, t := range targets {
			if t.Type == "page" && t.WebSocketDebuggerURL != "" {
				ws, err := websocket.Dial(t.WebSocketDebuggerURL, "", devtoolsOrigin)
				if err != nil {
					return fmt.Errorf("connecting to the page: %w", err)
				}
				ws.MaxPayloadBytes = 64 << 20
				b.ws = ws
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for Chromium's page target (%v): %w", err, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// read dispatches replies to their callers and keeps events.
func (b *Browser) read() {
	defer close(b.done)
	for {
		var msg struct {
			ID     int             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			reply
		}
		if err := websocket.JSON.Receive(b.ws, &msg); err != nil {
			b.mu.Lock()
			for id, ch := range b.waiting {
				close(ch)
				delete(b.waiting, id)
			}
			b.mu.Unlock()
			return
		}
		b.mu.Lock()
		if msg.ID != 0 {
			if ch, ok := b.waiting[msg.ID]; ok {
				ch <- msg.reply
				delete(b.waiting, msg.ID)
			}
		} else {
			b.events = append(b.events, Event{Method: msg.Method, Params: msg.Params})
			if msg.Method == "Page.loadEventFired" {
				select {
				case b.loaded <- struct{}{}:
				default:
				}
			}
		}
		b.mu.Unlock()
	}
}

// Call sends one DevTools command and returns its result.
func (b *Browser) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan reply, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	if params == nil {
		params = struct{}{}
	}
	if err := websocket.JSON.Send(b.ws, map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("%s: the browser went away", method)
		}
		if r.Error != nil {
			return nil, fmt.Errorf("%s: %s (%d)", method, r.Error.Message, r.Error.Code)
		}
		return r.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Navigate opens url and waits for its load event.
func (b *Browser) Navigate(ctx context.Context, url string) error {
	res, err := b.Call(ctx, "Page.navigate", map[string]any{"url": url})
	if err != nil {
		return err
	}
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if json.Unmarshal(res, &nav) == nil && nav.ErrorText != "" {
		return fmt.Errorf("navigating to %s: %s", url, nav.ErrorText)
	}
	select {
	case <-b.loaded:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for %s to load: %w", url, ctx.Err())
	}
}

// Eval evaluates a JavaScript expression in the page (awaiting a promise)
// and decodes its value into out (nil: ignore it).
func (b *Browser) Eval(ctx context.Context, expr string, out any) error {
	res, err := b.Call(ctx, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	if err != nil {
		return err
	}
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	if e := r.ExceptionDetails; e != nil {
		return fmt.Errorf("evaluating %q: %s %s", expr, e.Text, e.Exception.Description)
	}
	if out == nil || len(r.Result.Value) == 0 {
		return nil
	}
	return json.Unmarshal(r.Result.Value, out)
}

// WaitFor evaluates a boolean expression every 100 ms until it is true.
func (b *Browser) WaitFor(ctx context.Context, expr string) error {
	for {
		var ok bool
		if err := b.Eval(ctx, "Boolean("+expr+")", &ok); err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", expr, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Screenshot returns a PNG of the viewport (full: the whole page).
func (b *Browser) Screenshot(ctx context.Context, full bool) ([]byte, error) {
	res, err := b.Call(ctx, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": full})
	if err != nil {
		return nil, err
	}
	var shot struct {
		Data string `json:"data"`
	}
	if err := json.Unmarshal(res, &shot); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(shot.Data)
}

// Problems returns what went wrong in the page so far, one line each:
// uncaught exceptions, console errors and warnings (console.error,
// console.warn, console.assert), browser log errors and warnings (failed
// resources, CSP violations, deprecations), and failed network requests.
func (b *Browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, e := range b.events {
		switch e.Method {
		case "Runtime.exceptionThrown":
			var p struct {
				ExceptionDetails struct {
					Text      string `json:"text"`
					URL       string `json:"url"`
					Line      int    `json:"lineNumber"`
					Exception struct {
						Description string `json:"description"`
					} `json:"exception"`
				} `json:"exceptionDetails"`
			}
			json.Unmarshal(e.Params, &p)
			d := p.ExceptionDetails
			out = append(out, fmt.Sprintf("uncaught exception at %s:%d: %s %s", d.URL, d.Line+1, d.Text, d.Exception.Description))
		case "Runtime.consoleAPICalled":
			var p struct {
				Type string `json:"type"`
				Args []struct {
					Value       any    `json:"value"`
					Description string `json:"description"`
				} `json:"args"`
			}
			json.Unmarshal(e.Params, &p)
			if p.Type != "error" && p.Type != "warning" && p.Type != "assert" {
				continue
			}
			var parts []string
			for _, a := range p.Args {
				if a.Value != nil {
					parts = append(parts, fmt.Sprint(a.Value))
				} else {
					parts = append(parts, a.Description)
				}
			}
			out = append(out, "console."+p.Type+": "+strings.Join(parts, " "))
		case "Log.entryAdded":
			var p struct {
				Entry struct {
					Level, Source, Text, URL string
				} `json:"entry"`
			}
			json.Unmarshal(e.Params, &p)
			if p.Entry.Level == "error" || p.Entry.Level == "warning" {
				out = append(out, fmt.Sprintf("browser %s (%s): %s %s", p.Entry.Level, p.Entry.Source, p.Entry.Text, p.Entry.URL))
			}
		case "Network.loadingFailed":
			var p struct {
				ErrorText     string `json:"errorText"`
				Canceled      bool   `json:"canceled"`
				BlockedReason string `json:"blockedReason"`
			}
			json.Unmarshal(e.Params, &p)
			if !p.Canceled {
				out = append(out, fmt.Sprintf("request failed: %s %s", p.ErrorText, p.BlockedReason))
			}
		}
	}
	return out
}

// Requests returns the URLs the page requested, in order.
func (b *Browser) Requests() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, e := range b.events {
		if e.Method != "Network.requestWillBeSent" {
			continue
		}
		var p struct {
			Request struct {
				URL string `json:"url"`
			} `json:"request"`
		}
		json.Unmarshal(e.Params, &p)
		out = append(out, p.Request.URL)
	}
	return out
}

// Close stops the browser and removes its profile.
func (b *Browser) Close() {
	if b.ws != nil {
		b.ws.Close()
		<-b.done
	}
	if b.cmd.Process != nil {
		b.cmd.Process.Kill()
		b.cmd.Wait()
	}
	os.RemoveAll(b.dir)
}

// lockedBuffer collects a process's output for concurrent reading.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// SaveScreenshot writes png as name in $PREWARM_SCREENSHOT_DIR when set,
// and says where; it writes nothing otherwise.
func SaveScreenshot(t testing.TB, name string, png []byte) {
	t.Helper()
	dir := os.Getenv(EnvScreenshots)
	if dir == "" {
		return
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Errorf("saving the screenshot: %v", err)
		return
	}
	t.Logf("screenshot: %s", path)
}
