//go:build ignore

// query_rss measures the collector's peak memory (VmHWM) while it answers
// its costliest query: ten years at a 1 s step over a ~185 MB embedded
// store, 8 queries in parallel (and the same range raw). Linux only.
//
//	go build -o /tmp/collector ./cmd/collector
//	go run scripts/query_rss.go -collector /tmp/collector -store /tmp/rss.db
//
// The store is generated on first use: 16 series of one point every 10 s
// over the last 30 days (4.1 M points), inside the default 90-day retention.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
)

func main() {
	bin := flag.String("collector", "", "collector binary to measure")
	path := flag.String("store", "/tmp/query-rss.db", "embedded store file (generated if missing)")
	parallel := flag.Int("parallel", 8, "queries at once")
	flag.Parse()
	if _, err := os.Stat(*path); err != nil {
		generate(*path)
	}
	info, _ := os.Stat(*path)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "# TYPE queue_length gauge\nqueue_length 1\n")
	}))
	defer app.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(*bin, "--store", "embedded:"+*path, "--spool-dir", *path+".spool", "--listen", addr,
		"--scrape", "rss="+app.URL+"/metrics", "--interval", "10s", "--log-level", "warn")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	for i := 0; ; i++ {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if i > 100 {
			log.Fatal("collector did not start")
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	fmt.Printf("store %s: %d MB; collector pid %d RSS at rest %s\n", *path, info.Size()>>20, cmd.Process.Pid, status(cmd.Process.Pid, "VmRSS"))
	end := time.Now().UTC().Truncate(time.Second)
	start := end.AddDate(-10, 0, 0)
	for _, c := range []struct{ name, query string }{
		{"ten years at 1 s step, mean", fmt.Sprintf("measurement=gpu_util&start=%s&end=%s&step=1s&aggregate=mean", start.Format(time.RFC3339), end.Format(time.RFC3339))},
		{"ten years raw", fmt.Sprintf("measurement=gpu_util&start=%s&end=%s", start.Format(time.RFC3339), end.Format(time.RFC3339))},
		{"ten years hourly (allowed)", fmt.Sprintf("measurement=gpu_util&start=%s&end=%s&step=1h&aggregate=mean", start.Format(time.RFC3339), end.Format(time.RFC3339))},
	} {
		var wg sync.WaitGroup
		var mu sync.Mutex
		codes := map[string]int{}
		began := time.Now()
		for range *parallel {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/v1/query?"+c.query, nil)
				resp, err := http.DefaultClient.Do(req)
				key := ""
				if err != nil {
					key = "error " + err.Error()
				} else {
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					key = fmt.Sprintf("HTTP %d (%d bytes)", resp.StatusCode, len(body))
					if resp.StatusCode != 200 {
						key = fmt.Sprintf("HTTP %d %.90s", resp.StatusCode, body)
					}
				}
				mu.Lock()
				codes[key]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		fmt.Printf("%-28s x%d in %s: peak RSS so far %s, now %s; answers %v\n", c.name, *parallel,
			time.Since(began).Round(10*time.Millisecond), status(cmd.Process.Pid, "VmHWM"), status(cmd.Process.Pid, "VmRSS"), codes)
	}
}

// status reads one field of /proc/PID/status, e.g. VmHWM (peak RSS).
func status(pid int, field string) string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			var kb int
			fmt.Sscan(v, &kb)
			return fmt.Sprintf("%d MB", kb>>10)
		}
	}
	return "?"
}

func generate(path string) {
	st, err := embedded.Open(path, embedded.Options{NoSync: true})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	end := time.Now().UTC().Truncate(10 * time.Second)
	start := end.Add(-30 * 24 * time.Hour)
	var batch []store.Point
	for s := range 16 {
		tags := map[string]string{"host": fmt.Sprintf("gpu-node-%02d", s/8), "gpu": fmt.Sprint(s % 8), "pool": "inference", "source": "dcgm"}
		for t := start; t.Before(end); t = t.Add(10 * time.Second) {
			batch = append(batch, store.Point{Measurement: "gpu_util", Tags: tags, Value: float64(t.Unix()%100) + 0.5, Time: t})
			if len(batch) == 50_000 {
				if err := st.Write(context.Background(), batch); err != nil {
					log.Fatal(err)
				}
				batch = batch[:0]
			}
		}
	}
	if err := st.Write(context.Background(), batch); err != nil {
		log.Fatal(err)
	}
}
