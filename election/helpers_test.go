package election

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prewarm/prewarm/election/kubetest"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// fastTimings are the shortest periods Validate accepts with room for the
// race detector: a 1s lease, renewals retried for 600ms, every 100ms.
var fastTimings = Timings{LeaseDuration: time.Second, RenewDeadline: 600 * time.Millisecond, RetryPeriod: 100 * time.Millisecond}

// replica is one simulated process: a clientset of its own whose network a
// test can cut, as a killed pod sends nothing more.
type replica struct {
	client kubernetes.Interface
	dead   atomic.Bool
}

// errKilled is the transport error of a killed replica.
var errKilled = errors.New("replica killed")

// roundTripper fails every request once its replica is killed.
type roundTripper struct {
	next http.RoundTripper
	r    *replica
}

// RoundTrip sends a request unless the replica is dead.
func (t roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.r.dead.Load() {
		return nil, errKilled
	}
	return t.next.RoundTrip(req)
}

// newReplica connects a replica to the stand-in, unthrottled.
func newReplica(t testing.TB, srv *kubetest.Server) *replica {
	t.Helper()
	r := &replica{}
	cfg := &rest.Config{Host: srv.URL, QPS: -1, WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper{next: rt, r: r}
	}}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.client = cs
	return r
}

// newServer starts a stand-in that the test closes.
func newServer(t testing.TB) *kubetest.Server {
	t.Helper()
	srv := kubetest.NewServer()
	t.Cleanup(srv.Close)
	return srv
}

// runner runs functions in the background until the test ends or each is
// stopped on its own.
type runner struct {
	t  testing.TB
	wg sync.WaitGroup
}

// start runs f with a context that the returned function, or the end of the
// test, cancels; the cancel waits for f to return.
func (r *runner) start(f func(ctx context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(done)
		f(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	r.t.Cleanup(stop)
	return stop
}

// waitFor polls cond every 5ms until it holds or limit passes, and returns
// how long that took.
func waitFor(t testing.TB, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

// configCase is an edit that spoils a valid config, and the YAML key its
// error must name.
type configCase[C any] struct {
	name string
	edit func(c *C)
	want string
}

// assertConfigErrors checks that check accepts good and refuses each edit
// of it with an error naming the case's YAML key.
func assertConfigErrors[C any](t *testing.T, good C, check func(C) error, cases []configCase[C]) {
	t.Helper()
	if err := check(good); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.edit(&c)
			if err := check(c); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming %s", err, tc.want)
			}
		})
	}
}
