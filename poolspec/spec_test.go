package poolspec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/prewarm/prewarm/actuator/dryrun"
	"github.com/prewarm/prewarm/actuator/kubescale"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/planner"
)

// testBackends is the registry's table as cmd/forecaster declares it, for
// the back-ends the testdata files use.
var testBackends = Backends{
	dryrun.Name:    dryrun.PoolOptions,
	kubescale.Name: kubescale.PoolOptions,
	simulated.Name: simulated.PoolOptions,
}

func TestMinimalFileTakesTheDefaults(t *testing.T) {
	f, err := Load(filepath.Join("testdata", "minimal.good.yml"), testBackends)
	if err != nil {
		t.Fatal(err)
	}
	if f.Interval != time.Minute || f.Listen != "127.0.0.1:9109" || f.Workers != 8 || f.StatePath() != "prewarm-state.db" {
		t.Errorf("file = %+v", f)
	}
	p := f.Pools[0]
	if p.Mode != ModeForecastOnly {
		t.Errorf("mode = %q, want forecast-only for a new pool", p.Mode)
	}
	if p.Demand.Measurement != DefaultDemandMeasurement || p.Demand.Match["pool"] != "sd-pool" {
		t.Errorf("demand = %+v, want the collector's service_request_rate{pool=sd-pool}", p.Demand)
	}
	plan, err := p.Planner()
	if err != nil {
		t.Fatal(err)
	}
	// The planner's own defaults, with the file's fleet, sized by an
	// Erlang-C queue of one slot serving a request per 1/5 s.
	want := planner.DefaultConfig()
	want.Fleet.RPSPerInstance, want.Fleet.ServiceTime, want.Fleet.MaxInstances = 5, 200*time.Millisecond, 10
	want.Sizing = planner.SizingErlangC
	if !reflect.DeepEqual(plan, want) {
		t.Errorf("planner config =\n%+v\nwant\n%+v", plan, want)
	}
	set, def := p.Settings(), (control.Settings{}).WithDefaults()
	if set.Step != def.Step || set.RefitEvery != def.RefitEvery || set.Horizon != def.Horizon || set.History != def.History ||
		!reflect.DeepEqual(set.Periods, def.Periods) {
		t.Errorf("settings = %+v, want the controller's defaults %+v", set, def)
	}
	if a := p.Actuator(); a.Name != "sd-pool" || a.Backend != "dryrun" || a.MinInstances != 1 || a.MaxInstances != 10 || a.MaxStep != 0 || a.MinInterval != 0 {
		t.Errorf("actuator = %+v", a)
	}
}

// Every key of full.good.yml reaches the configuration it belongs to.
func TestFullFileReachesEverySetting(t *testing.T) {
	f, err := Load(filepath.Join("testdata", "full.good.yml"), testBackends)
	if err != nil {
		t.Fatal(err)
	}
	if f.Interval != 30*time.Second || f.Listen != "127.0.0.1:19109" || f.Workers != 16 || f.StatePath() != "/var/lib/prewarm/state.db" {
		t.Errorf("file = %+v", f)
	}
	p := f.Pools[0]
	if p.Prices.Currency != "EUR" {
		t.Errorf("prices.currency = %q, want EUR", p.Prices.Currency)
	}
	if p.Mode != ModeActive || !p.PublishSchedule || p.ScaleInOnForecast || p.Demand.PromQL == "" || p.Demand.Measurement != "" ||
		p.Queue.Aggregate != "last" || p.Utilisation.Match["pool"] != "sd-pool" {
		t.Errorf("pool = %+v", p)
	}
	q := p.Demand.Query(time.Unix(0, 0), time.Unix(60, 0), 0, "")
	if q.Expr != `sum(rate(http_requests_total{job="sd"}[1m]))` || q.Measurement != "" {
		t.Errorf("demand query = %+v, want the PromQL as Expr", q)
	}
	plan, err := p.Planner()
	if err != nil {
		t.Fatal(err)
	}
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	want := planner.Config{
		Fleet: planner.Fleet{RPSPerInstance: 2, ServiceTime: 2 * time.Second, Slots: 4, BootDelay: 8 * time.Minute, WarmStart: 2 * time.Minute,
			Spot: planner.Spot{Share: 0.6, BaseOnDemand: 4, Fallback: planner.SpotFallbackNone}, Limits: planner.Limits{MinInstances: 2, MaxInstances: 40, MaxStep: 4, MinInterval: 10 * time.Minute}},
		Prices: planner.Prices{OnDemandPerHour: 3.2, ReservedPerHour: 2.1, ReservedInstances: 4, SpotPerHour: 1.1, StoppedPerHour: 0.09, Currency: "EUR"},
		SLO:    planner.SLO{Latency: 5 * time.Second, Quantile: 0.95},
		Sizing: planner.SizingErlangC, TargetUtilisation: 0.7, ForecastQuantile: 0.9, Calibration: planner.Calibration{On: true},
		Reactive: planner.Reactive{ScaleOutUtilisation: 0.9, ScaleOutFor: 3 * time.Minute, ScaleOutQueue: 20,
			ScaleOutQueueFor: time.Minute, ScaleInUtilisation: 0.2, ScaleInFor: 30 * time.Minute, ScaleOutStep: 2,
			ScaleInStep: 1, MaxStep: 6, ScaleOutCooldown: 4 * time.Minute, ScaleInCooldown: 20 * time.Minute,
			SLORule: true, ReturnToPlanAfter: 5 * time.Minute},
		Gating: planner.Gating{MinSeasons: 3, Tolerance: 1.1, Window: 7 * 24 * time.Hour},
	}
	want.Windows, _ = planner.ParseWindows("weekdays 09:45-12:00 at least 6\ndaily 00:00-24:00 at least 2", shanghai)
	if !reflect.DeepEqual(plan, want) {
		t.Errorf("planner config =\n%+v\nwant\n%+v", plan, want)
	}
	set := p.Settings()
	if set.Step != 15*time.Minute || set.RefitEvery != 2*time.Hour || set.Horizon != 12*time.Hour || set.History != 28*24*time.Hour ||
		!reflect.DeepEqual(set.Periods, []time.Duration{24 * time.Hour, 7 * 24 * time.Hour}) {
		t.Errorf("settings = %+v", set)
	}
	if a := p.Actuator(); a.MinInstances != 2 || a.MaxInstances != 40 || a.MaxStep != 4 || a.MinInterval != 10*time.Minute || a.Options["workload"] != "sd" {
		t.Errorf("actuator = %+v", a)
	}
}

// Each bad file yields exactly these problems, all of them, in file order.
func TestBadFiles(t *testing.T) {
	tests := []struct {
		file string
		want []string // one per problem: "LINE: PATH: message" (a prefix of it)
	}{
		{"unknown-keys.bad.yml", []string{
			"1: intervall: unknown key (known: audit_log, election, interval, listen, pools, state_file, workers)",
			"6: pools[0].rps_per_gpu: unknown key (known: backend, boot_delay,",
			"9: pools[0].options.namspace: unknown option of back-end kubescale (known: api_server, ca_file, namespace, resource, token_file, warm_placeholder, workload)",
			"10: pools[0].options.tokn_file: unknown option of back-end kubescale",
			"12: pools[0].forecast.stpe: unknown key (known: choose_model_daily, history, horizon, periods, refit_every, step)",
		}},
		{"ranges.bad.yml", []string{
			"1: interval: 1ns is too short: at least 1s",
			"2: workers: 0 is out of range: want 1 to 256",
			"7: pools[0].max: 3 is out of range: want 5 to 100000",
			"8: pools[0].max_step: -1 is out of range: want 0 to 3",
			"9: pools[0].min_interval: -1m must not be negative",
			"11: pools[0].slo_quantile: 1.5 is out of range: want [0.5, 1)",
			"12: pools[0].target_utilisation: 0 is out of range: want (0, 1]",
			"13: pools[0].boot_delay: 2d is too long: at most 1d",
			"16: pools[0].reactive.scale_in_utilisation: 0.6 is out of range: want [0, scale_out_utilisation 0.5)",
			"17: pools[0].reactive.scale_out_step: 0 is out of range: want 1 to 100000",
			"19: pools[0].gate.tolerance: 0.9 is out of range: want [1, 100]",
			"22: pools[0].forecast.history: 100w is 1008000 forecast steps of 1m: at most 100000",
			"25: pools[0].tune.half_life: 1h is too short: at least 1d, or negative for none",
			"26: pools[0].tune.min_history: 3w is too long: at most tune.window 2w",
			"27: pools[0].tune.margin: 1 is out of range: want [0, 0.9]",
			"28: pools[0].tune.guard_window: 1h is too short: at least 2h",
		}},
		{"step.bad.yml", []string{"8: pools[0].forecast.step: 1ns is too short: at least 1m"}},
		{"types.bad.yml", []string{
			`4: pools[0].max: "ten" is not a whole number`,
			`5: pools[0].min_interval: "60" is not a duration (e.g. 30s, 10m, 1h, 1d, 1w)`,
			`6: pools[0].publish_schedule: "maybe" is not true or false`,
			`7: pools[0].rps_per_instance: ".nan" is not a finite number`,
			"8: pools[0].options: want a mapping of keys to values, got a list",
			`10: pools[0].forecast.periods: want a list, got "1d"`,
		}},
		{"time-zone.bad.yml", []string{`7: pools[0].time_zone: "Mars/Olympus" is not an IANA time zone`}},
		{"duplicates.bad.yml", []string{
			`6: pools[1].name: "sd-pool" is also the name of pools[0]`,
			"9: pools[1].max: defined twice (first on line 8)",
		}},
		{"series.bad.yml", []string{
			"8: pools[0].demand.promql: set promql or measurement and match, not both",
			"9: pools[0].utilisation.measurement: is required (or promql)",
			`13: pools[0].queue.match: tag "pool" has an empty value`,
			`14: pools[0].queue.aggregate: "median" is not one of mean, sum, max, min, last, count`,
		}},
		{"mode.bad.yml", []string{`4: pools[0].mode: "live" is not a mode: want forecast-only, active, paused`}},
		{"backend.bad.yml", []string{
			`2: pools[0].name: "sd pool" is not a pool name`,
			`3: pools[0].backend: "volcano" is not a back-end (known: dryrun, kubescale, simulated)`,
			"6: pools[1].backend: is required",
		}},
		{"options.bad.yml", []string{
			`7: pools[0].options.initial: "ten" is not a whole number`,
			"14: pools[1].options.initial: 12 is out of range: want the pool's min to max, 2 to 10",
			`20: pools[2].options.resource: "pods" is not one of deployments, statefulsets`,
			`21: pools[2].options.api_server: "ftp://x" is not an http(s) URL`,
			`22: pools[2].options.namespace: "Kube System" is not a Kubernetes object name`,
			"27: pools[3].options.initial: -3 is out of range: want at least 0",
		}},
		{"empty.bad.yml", []string{"1: pools: at least one pool is required"}},
		{"syntax.bad.yml", []string{"2: found a tab character that violates indentation"}},
		{"sizing.bad.yml", []string{
			"2: pools[0].rps_per_instance: is required for erlang-c sizing (or set service_time and slots)",
			`9: pools[1].sizing: "magic" is not a sizing: want utilisation or erlang-c`,
			"11: pools[2].rps_per_instance: is required for erlang-c sizing (or set service_time and slots)",
			"14: pools[3].rps_per_instance: is required for utilisation sizing (or set service_time and slots)",
		}},
		{"windows.bad.yml", []string{`8: pools[0].windows: window 2: field 1 "someday": unknown day "someday"`}},
		{"spot.bad.yml", []string{
			"10: pools[0].spot.share: 1.5 is out of range: want [0, 1]",
			"11: pools[0].spot.base_on_demand: 50 is out of range: want 0 to 40",
			`12: pools[0].spot.fallback: "spot" is not a fallback: want on_demand or none`,
			"13: pools[0].spot.shares: unknown key (known: base_on_demand, fallback, share)",
			`19: pools[1].spot.base_on_demand: "two" is not a whole number`,
		}},
		{"forecast.bad.yml", []string{
			"8: pools[0].forecast.refit_every: 45m is not a multiple of forecast.step 30m",
			"9: pools[0].forecast.horizon: 10m is too short: at least 1 × forecast.step (30m)",
			"10: pools[0].forecast.periods: 5 periods: at most 4",
			"10: pools[0].forecast.periods[0]: 45m must be a multiple of forecast.step 30m and longer than it",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			_, err := Load(path, testBackends)
			var problems Errors
			if !errors.As(err, &problems) {
				t.Fatalf("error %v, want spec.Errors", err)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Errorf("%d problems, want %d:\n%s", len(lines), len(tt.want), err)
			}
			for i, w := range tt.want {
				if i < len(lines) && !strings.HasPrefix(lines[i], path+":"+w) {
					t.Errorf("problem %d = %q, want %q", i, lines[i], path+":"+w)
				}
			}
		})
	}
	// Every testdata file is in one of the tests.
	files, _ := filepath.Glob(filepath.Join("testdata", "*.yml"))
	if len(files) != len(tests)+2 {
		t.Errorf("%d testdata files, %d in the tables: update them", len(files), len(tests)+2)
	}
}

// The documented example must stay valid.
func TestDocsExample(t *testing.T) {
	f, err := Load(filepath.Join("..", "docs", "forecaster.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Pools {
		if _, err := p.Planner(); err != nil {
			t.Errorf("pool %s: %v", p.Name, err)
		}
	}
}

// The documented example shows every default: its pool equals a pool
// that sets only what the example chose on purpose (name, back-end, size
// limits, windows), so a changed default cannot leave the docs behind.
func TestDocsExampleShowsTheDefaults(t *testing.T) {
	f, err := Load(filepath.Join("..", "docs", "forecaster.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	doc := f.Pools[0]
	minimal := fmt.Sprintf("pools:\n  - name: %s\n    backend: %s\n    max: %d\n    rps_per_instance: %g\n",
		doc.Name, doc.Backend, doc.Fleet.MaxInstances, doc.Fleet.RPSPerInstance)
	g, err := Parse([]byte(minimal), "minimal.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	def := g.Pools[0]
	// What the example sets on purpose.
	def.Fleet.MaxStep, def.Fleet.MinInterval = doc.Fleet.MaxStep, doc.Fleet.MinInterval
	def.TimeZone, def.Windows = doc.TimeZone, doc.Windows
	dv, fv := reflect.ValueOf(doc), reflect.ValueOf(def)
	for _, s := range poolSettings(dv.Type(), "", nil) {
		if s.key == "options" {
			continue // Options: {} in the example, nil unset; both are none
		}
		if a, b := dv.FieldByIndex(s.index).Interface(), fv.FieldByIndex(s.index).Interface(); !reflect.DeepEqual(a, b) {
			t.Errorf("docs/forecaster.yaml: %s is %+v, the default is %+v", s.key, a, b)
		}
	}
	if f.Interval != g.Interval || f.Listen != g.Listen || f.Workers != g.Workers {
		t.Errorf("docs/forecaster.yaml: interval %v listen %s workers %d, defaults %v %s %d",
			f.Interval, f.Listen, f.Workers, g.Interval, g.Listen, g.Workers)
	}
}

func TestDurations(t *testing.T) {
	tests := []struct {
		text    string
		want    time.Duration
		wantErr string
	}{
		{"90s", 90 * time.Second, ""},
		{"1h30m", 90 * time.Minute, ""},
		{"1d", 24 * time.Hour, ""},
		{"1w", 7 * 24 * time.Hour, ""},
		{"2w3d", 17 * 24 * time.Hour, ""},
		{"1.5h", 90 * time.Minute, ""},
		{"0", 0, ""},
		{"60", 0, `"60" is not a duration`},
		{"soon", 0, `"soon" is not a duration`},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			d := &decoder{lines: map[string]int{}, values: map[string]*yaml.Node{}}
			got, ok := d.duration(&yaml.Node{Kind: yaml.ScalarNode, Value: tt.text, Line: 3}, "x")
			switch {
			case tt.wantErr != "" && (ok || len(d.problems) != 1 || !strings.Contains(d.problems[0].Msg, tt.wantErr)):
				t.Errorf("problems %v, want %q", d.problems, tt.wantErr)
			case tt.wantErr == "" && (!ok || got != tt.want):
				t.Errorf("duration = %v (%v), want %v", got, d.problems, tt.want)
			}
		})
	}
}

// A pool built in code is checked by the same rules, without lines.
func TestValidateInCode(t *testing.T) {
	p := DefaultPool()
	p.Name, p.Backend, p.Fleet.MaxInstances, p.Fleet.RPSPerInstance = "p", "dryrun", 4, 1
	if err := p.Validate(testBackends); err != nil {
		t.Fatalf("valid pool: %v", err)
	}
	p.Forecast.Step = time.Nanosecond
	p.Options = map[string]string{"inital": "3"}
	err := p.Validate(testBackends)
	want := "options.inital: unknown option of back-end dryrun (known: initial)\nforecast.step: 1ns is too short: at least 1m"
	if err == nil || err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	f := DefaultFile()
	f.Pools = []Pool{p}
	if err := f.Validate(testBackends); err == nil || !strings.Contains(err.Error(), "pools[0].forecast.step") {
		t.Errorf("file error = %v", err)
	}
}

// prices.currency sits beside the prices, defaults to USD and takes three
// capital letters only, reported at its key and line.
func TestPricesCurrency(t *testing.T) {
	const head = "pools:\n  - name: p\n    backend: dryrun\n    max: 4\n    rps_per_instance: 1\n"
	for _, tc := range []struct {
		name, yaml, want, wantErr string
	}{
		{"unset", head, "USD", ""},
		{"prices without it", head + "    prices:\n      on_demand_per_hour: 3\n", "USD", ""},
		{"set", head + "    prices:\n      currency: CNY\n      on_demand_per_hour: 3\n", "CNY", ""},
		{"empty block", head + "    prices:\n", "USD", ""},
		{"lower case", head + "    prices:\n      currency: eur\n", "", `7: pools[0].prices.currency: "eur" is not a currency code: want three capital letters`},
		{"a symbol", head + "    prices:\n      currency: \"$\"\n", "", `"$" is not a currency code`},
		{"four letters", head + "    prices:\n      currency: EURO\n", "", `"EURO" is not a currency code`},
		{"empty", head + "    prices:\n      currency: \"\"\n", "", `pools[0].prices.currency: "" is not a currency code`},
		{"not a string", head + "    prices:\n      currency: [USD]\n", "", "pools[0].prices.currency: want a string"},
		{"at the pool's level", head + "    prices.currency: EUR\n", "", "pools[0].prices.currency: unknown key"},
		{"a typo beside it", head + "    prices:\n      curency: EUR\n", "", "unknown key (known: currency, on_demand_per_hour,"},
		{"twice", head + "    prices:\n      currency: EUR\n      currency: USD\n", "", "pools[0].prices.currency: defined twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse([]byte(tc.yaml), "p.yml", testBackends)
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want %q", err, tc.wantErr)
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.wantErr == "" && f.Pools[0].Prices.Currency != tc.want:
				t.Errorf("currency %q, want %q", f.Pools[0].Prices.Currency, tc.want)
			}
		})
	}
}

// A pool's spot block takes its keys' defaults for what it leaves out,
// and each bad value is reported at its key and line.
func TestSpotBlock(t *testing.T) {
	const head = "pools:\n  - name: p\n    backend: dryrun\n    max: 8\n    rps_per_instance: 1\n"
	for _, tc := range []struct {
		name, yaml string
		want       planner.Spot
		wantErr    string
	}{
		{"unset", head, planner.Spot{Fallback: planner.SpotFallbackOnDemand}, ""},
		{"share alone", head + "    spot:\n      share: 0.7\n", planner.Spot{Share: 0.7, Fallback: planner.SpotFallbackOnDemand}, ""},
		{"every key", head + "    spot:\n      share: 1\n      base_on_demand: 8\n      fallback: none\n",
			planner.Spot{Share: 1, BaseOnDemand: 8, Fallback: planner.SpotFallbackNone}, ""},
		{"empty block", head + "    spot:\n", planner.Spot{Fallback: planner.SpotFallbackOnDemand}, ""},
		{"share above 1", head + "    spot:\n      share: 1.01\n", planner.Spot{}, "7: pools[0].spot.share: 1.01 is out of range: want [0, 1]"},
		{"share not a number", head + "    spot:\n      share: half\n", planner.Spot{}, `7: pools[0].spot.share: "half" is not a finite number`},
		{"base above max", head + "    spot:\n      base_on_demand: 9\n", planner.Spot{}, "7: pools[0].spot.base_on_demand: 9 is out of range: want 0 to 8"},
		{"fallback empty", head + "    spot:\n      fallback: \"\"\n", planner.Spot{}, `7: pools[0].spot.fallback: "" is not a fallback: want on_demand or none`},
		{"at the pool's level", head + "    spot.share: 0.5\n", planner.Spot{}, "6: pools[0].spot.share: unknown key"},
		{"not a mapping", head + "    spot: 0.5\n", planner.Spot{}, "6: pools[0].spot: want a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse([]byte(tc.yaml), "p.yml", testBackends)
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), "p.yml:"+tc.wantErr)):
				t.Errorf("error %v, want %q", err, tc.wantErr)
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.wantErr == "" && f.Pools[0].Fleet.Spot != tc.want:
				t.Errorf("spot %+v, want %+v", f.Pools[0].Fleet.Spot, tc.want)
			}
		})
	}
}

// tune.enabled turns the walk-forward tuning on and off; the older key
// tune.off is still read, with the opposite meaning, but not beside it.
func TestTuneEnabledAndItsOlderKey(t *testing.T) {
	const head = "pools:\n  - name: p\n    backend: dryrun\n    max: 4\n    rps_per_instance: 1\n    tune:\n"
	for _, tc := range []struct {
		name, yaml string
		want       bool
		wantErr    string
	}{
		{"unset", head + "      margin: 0.4\n", true, ""},
		{"enabled", head + "      enabled: true\n", true, ""},
		{"disabled", head + "      enabled: false\n", false, ""},
		{"older key on", head + "      off: true\n", false, ""},
		{"older key off", head + "      off: false\n", true, ""},
		{"both", head + "      enabled: true\n      off: true\n", false, "8: pools[0].tune.off: give one of enabled (line 7) and off, not both"},
		{"both, older first", head + "      off: true\n      enabled: false\n", false, "8: pools[0].tune.enabled: give one of enabled and off (line 7), not both"},
		{"older key not a boolean", head + "      off: maybe\n", false, `7: pools[0].tune.off: "maybe" is not true or false`},
		{"typo", head + "      enable: true\n", false, "7: pools[0].tune.enable: unknown key (known: cost_half_life, enabled, guard_burn,"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse([]byte(tc.yaml), "p.yml", testBackends)
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want %q", err, tc.wantErr)
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.wantErr == "" && f.Pools[0].Tune.Enabled != tc.want:
				t.Errorf("tune.enabled = %v, want %v", f.Pools[0].Tune.Enabled, tc.want)
			}
		})
	}
}

func TestPoolLookup(t *testing.T) {
	path := filepath.Join("testdata", "minimal.good.yml")
	f, err := Load(path, testBackends)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := f.Pool("sd-pool"); err != nil || p.Name != "sd-pool" {
		t.Errorf("Pool = %+v, %v", p, err)
	}
	if _, err := f.Pool("other"); err == nil || !strings.Contains(err.Error(), `no pool "other" in the configuration (pools: sd-pool)`) {
		t.Errorf("unknown pool: %v", err)
	}
}

// FuzzParse: no input panics the parser, and whatever it accepts builds a
// planner and a controller.
// Run: go test ./spec -run=^$ -fuzz=FuzzParse -fuzztime=30s
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.yml"))
	for _, file := range files {
		raw, _ := os.ReadFile(file)
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		file, err := Parse(raw, "fuzz.yml", testBackends)
		if err != nil {
			var problems Errors
			if !errors.As(err, &problems) || len(problems) == 0 {
				t.Fatalf("error %v is not a list of problems", err)
			}
			return
		}
		for _, p := range file.Pools {
			plan, err := p.Planner()
			if err != nil {
				t.Fatalf("accepted pool %s: %v", p.Name, err)
			}
			if _, err := control.New(plan, p.Settings()); err != nil {
				t.Fatalf("accepted pool %s: controller: %v", p.Name, err)
			}
			if err := p.Actuator().Validate(); err != nil {
				t.Fatalf("accepted pool %s: actuator: %v", p.Name, err)
			}
		}
	})
}
