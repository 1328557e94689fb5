package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/influx"
	"github.com/prewarm/prewarm/store/influx/influxtest"
)

// process is a collector started as a real process from the test binary
// (see TestMain), its stdout and stderr in one log file.
type process struct {
	cmd  *exec.Cmd
	log  string
	done chan error
}

func startProcess(t *testing.T, logPath string, env []string, args ...string) *process {
	t.Helper()
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), envRunMain+"=1"), env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	p := &process{cmd: cmd, log: logPath, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() { p.cmd.Process.Kill(); <-p.done })
	return p
}

func (p *process) output(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(p.log)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// kill9 kills the process as kill -9 does: no signal handler, no flush.
func (p *process) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	p.done <- nil // for the cleanup
}

// stop sends SIGTERM and waits for a clean exit.
func (p *process) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- nil
		if err != nil {
			t.Fatalf("collector exited with %v:\n%s", err, p.output(t))
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("collector did not stop on SIGTERM:\n%s", p.output(t))
	}
}

var acceptedRe = regexp.MustCompile(`msg="cycle done" accepted=(\d+)`)

// reportedAccepted sums what the collector reported as accepted (on disk)
// in its debug "cycle done" lines.
func reportedAccepted(log string) (points, cycles int) {
	for _, m := range acceptedRe.FindAllStringSubmatch(log, -1) {
		n, _ := strconv.Atoi(m[1])
		points += n
		if n > 0 {
			cycles++
		}
	}
	return points, cycles
}

// newSeqExporter is a fakeExporter whose GPU temperature is the number of
// the scrape, so each point in the store names the scrape it came from.
func newSeqExporter(t *testing.T, host string, gpus int) *fakeExporter {
	e := newFakeExporter(t, host, gpus)
	e.mu.Lock()
	e.seqTemp = true
	e.mu.Unlock()
	return e
}

func httpStatus(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf)
	b.Write(buf[:n])
	return resp.StatusCode, b.String()
}

// No accepted point is lost or doubled across crashes, with real
// processes: the collector scrapes a loopback exporter into a real
// InfluxDB 1.8; it is kill -9ed once while InfluxDB is up (a batch may be
// written but not acknowledged); then InfluxDB is stopped, and after 20 s the collector is kill -9ed,
// restarted, and InfluxDB started again. Every point the collector
// reported as accepted is in InfluxDB exactly once: none lost, none
// doubled (each GPU's temperature series holds each scrape's number at
// most once). /readyz fails during the outage while /healthz stays up.
// About 45 s.
func TestKill9DuringOutageLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test with real processes and a 20 s outage; runs in make test")
	}
	srv := influxtest.StartServer(t)
	const gpus = 8
	host := fmt.Sprintf("kill9-%d", time.Now().UnixNano())
	exp := newSeqExporter(t, host, gpus)
	start := time.Now().Add(-time.Second)
	dir := t.TempDir()
	addr := freeAddr(t)
	args := []string{"--dcgm-url", exp.srv.URL + "/metrics", "--influx-url", srv.URL, "--influx-bucket", influxtest.Bucket,
		"--interval", "1s", "--listen", addr, "--spool-dir", filepath.Join(dir, "spool"), "--log-level", "debug"}
	written := func() float64 { v, _ := metricValue(t, addr, "prewarm_collector_points_written_total", nil); return v }
	var runs []*process
	launch := func() *process {
		p := startProcess(t, filepath.Join(dir, fmt.Sprintf("run%d.log", len(runs)+1)), nil, args...)
		runs = append(runs, p)
		return p
	}
	waitUntil := func(what string, timeout time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out after %s waiting for %s; last log:\n%s", timeout, what, runs[len(runs)-1].output(t))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	p := launch()
	waitUntil("writes flowing", 30*time.Second, func() bool { return written() >= 3*gpus*fieldsPerGPU })
	p.kill9(t) // InfluxDB up: the batch in flight may be in InfluxDB and in the spool
	p = launch()
	waitUntil("writes flowing after the first kill", 30*time.Second, func() bool { return written() >= 2*gpus*fieldsPerGPU })

	srv.Stop()
	stopped := time.Now()
	waitUntil("/readyz failing during the outage", 15*time.Second, func() bool {
		code, _ := httpStatus("http://" + addr + "/readyz")
		return code == http.StatusServiceUnavailable
	})
	_, why := httpStatus("http://" + addr + "/readyz")
	if code, _ := httpStatus("http://" + addr + "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d during the outage; it is a liveness check", code)
	}
	t.Logf("/readyz failing %s after InfluxDB stopped: %s", time.Since(stopped).Round(100*time.Millisecond), strings.TrimSpace(why))
	time.Sleep(time.Until(stopped.Add(20 * time.Second)))
	p.kill9(t)
	spooled, _ := os.ReadDir(filepath.Join(dir, "spool"))
	t.Logf("killed 20 s into the outage; spool dir holds %d files", len(spooled))
	p = launch()
	waitUntil("the restarted collector up", 20*time.Second, func() bool { code, _ := httpStatus("http://" + addr + "/healthz"); return code == 200 })
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	time.Sleep(2 * time.Second)
	exp.stop() // no more data: what is accepted from here is final
	waitUntil("the backlog written and the spool empty", 60*time.Second, func() bool {
		spool, ok := metricValue(t, addr, "prewarm_collector_buffered_points", map[string]string{"where": "spool"})
		return ok && spool == 0 && written() > 0
	})
	t.Logf("backlog written %s after InfluxDB restarted", time.Since(restarted).Round(100*time.Millisecond))
	if code, body := httpStatus("http://" + addr + "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz = %d after the backlog was written: %s", code, body)
	}
	p.stop(t)

	reported, cycles := 0, 0
	for i, r := range runs {
		n, c := reportedAccepted(r.output(t))
		t.Logf("run %d reported %d points accepted in %d cycles", i+1, n, c)
		reported += n
		cycles += c
	}
	inStore, series, dupes := countExactlyOnce(t, srv.URL, host, start)
	// A kill between a cycle's fsync and its report line leaves that
	// cycle in the store without a report: at most one cycle per kill.
	extra := inStore - reported
	t.Logf("reported accepted: %d points (%d cycles); in InfluxDB: %d points in %d series; lost %d, doubled %d, unreported %d",
		reported, cycles, inStore, series, max(-extra, 0), dupes, max(extra, 0))
	perCycle := gpus * fieldsPerGPU
	if extra < 0 || extra%perCycle != 0 || extra > 2*perCycle || dupes != 0 || series != perCycle {
		t.Fatalf("not exactly once: reported %d, in InfluxDB %d in %d series (want %d), %d doubled",
			reported, inStore, series, perCycle, dupes)
	}
}

// countExactlyOnce counts host's points in InfluxDB and the doubled ones:
// a GPU temperature (the scrape's number) that appears twice in a series.
func countExactlyOnce(t *testing.T, url, host string, since time.Time) (points, series, dupes int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := influx.New(ctx, influx.Config{URL: url, Bucket: influxtest.Bucket, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	points, series = countPoints(t, url, host, since)
	res, err := st.Query(ctx, store.Query{Measurement: store.GPUTempCelsius, Match: map[string]string{"host": host},
		Start: since, End: time.Now().Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res {
		seen := map[float64]bool{}
		for _, smp := range s.Samples {
			if seen[smp.Value] {
				dupes++
			}
			seen[smp.Value] = true
		}
	}
	return points, series, dupes
}
