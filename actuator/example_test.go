package actuator_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/planner"
)

// A back-end wrapped in the safety layer: the planner's 13.2 instances are
// rounded up, capped by max_step, and NaN is refused; every call is an audit
// line.
func ExampleSafe() {
	backend := actuatortest.New("fake").AddPool("sd-pool", 6, 0, 0)
	clock := actuatortest.NewClock(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	safe := actuator.NewSafe(backend, actuator.SafetyOptions{
		Pools:    []actuator.PoolConfig{{Name: "sd-pool", Backend: "fake", Limits: planner.Limits{MinInstances: 1, MaxInstances: 16, MaxStep: 4}}},
		Audit:    os.Stdout,
		Logger:   slog.New(slog.DiscardHandler),
		Now:      clock.Now,
		NewToken: func() string { return "tok" },
	})
	ctx := context.Background()
	_ = safe.Apply(ctx, "sd-pool", 13.2, "forecast p95 at 10:15")
	err := safe.Apply(ctx, "sd-pool", math.NaN(), "broken forecast")
	fmt.Println(errors.Is(err, actuator.ErrInvalidDesired), backend.Pool("sd-pool").Desired)
	// Output:
	// {"time":"2026-11-30T09:00:00Z","op":"set_desired","pool":"sd-pool","backend":"fake","from":6,"to":10,"requested":14,"limited_by":"max_step","reason":"forecast p95 at 10:15","request_id":"tok","attempts":1,"outcome":"ok"}
	// {"time":"2026-11-30T09:00:00Z","op":"set_desired","pool":"sd-pool","backend":"fake","reason":"broken forecast","request_id":"","outcome":"refused","error":"invalid desired capacity: pool \"sd-pool\": desired NaN is not a count in [0, 100000]; nothing applied"}
	// true 10
}
