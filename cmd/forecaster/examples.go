package main

// example is one command line a --help screen shows: what it does, and
// the arguments after 'forecaster NAME'. Every example parses
// (TestHelpExamplesParse).
type example struct{ what, args string }

// examples are the --help screens' examples, by flag-set name.
var examples = map[string][]example{
	"serve": {
		{"check a configuration without starting anything", "--config forecaster.yaml --check-config"},
		{"run it; pools in forecast-only mode compute every decision and apply none",
			"--config forecaster.yaml --store embedded:prewarm.db --listen 127.0.0.1:9109"},
	},
	"demo": {
		{"the live loop on synthetic demand and a simulated fleet, the status page on 127.0.0.1:8080", ""},
		{"the same on a recorded trace, stopping after ten minutes", "--trace demand.csv --duration 10m"},
		{"the demand turns spiky after a week: watch the pool's tuner change policy", "--shift"},
		{"with capacity tiers: a warm tier that starts in 90 s and half the burst on spot", "--warm-start 90s --spot-share 0.5"},
		{"offline: a day through the service and a backtest of every policy, in under a minute", "--replay"},
		{"a longer offline replay, logging every decision", "--replay --live-hours 72 --verbose"},
	},
	"fit": {
		{"a week of hourly forecasts with 95% bands, as CSV", "--input demand.csv --horizon 168 --level 95"},
	},
	"eval": {
		{"the scaling policy on every shared trace, second halves against the causal baseline",
			"policy --counts --peak-instances 20 --boot 10m --slo 10s"},
	},
	"eval m4": {
		{"every method on M4 Hourly's official test, as a table", "--data ../shared/datasets/m4 --split official"},
	},
	"eval traces": {
		{"rolling origins on the recorded traces, as JSON", "--data ../shared/datasets --format json"},
	},
	"eval policy": {
		{"the suite on the shared traces and three seeds of each generator",
			"--counts --peak-instances 20 --boot 10m --slo 10s"},
		{"the same on your own exports", "--input exports/ --counts --peak-instances 20 --format json"},
	},
	"backtest": {
		{"every policy on a recorded trace, each at its cheapest setting that reaches each SLO target",
			"--input nyc_taxi.csv --counts --step 30m --peak-instances 20 --boot 10m --slo 10s --frontier"},
		{"exactly what serve runs for one pool, with capacity files and plots",
			"--config forecaster.yaml --pool sd-xl --input demand.csv --out backtest-out"},
	},
	"plan": {
		{"the next day's pre-warm schedule for a pool, from its store",
			"--config forecaster.yaml --pool sd-xl --store embedded:prewarm.db"},
		{"the same from a CSV export", "--input demand.csv --counts --peak-instances 20 --horizon 48h"},
	},
	"report": {
		{"the capacity report for a pool as HTML: what to reserve and buy, what it costs, how sure it is",
			"--config forecaster.yaml --pool sd-xl --store embedded:prewarm.db --out report.html"},
		{"the same from a CSV export, as Markdown", "--input demand.csv --counts --peak-instances 20 --format md --out report.md"},
	},
	"import": {
		{"load a pool's history, moved so that it ends now, into the embedded store",
			"--input export.csv --pool sd-xl --counts --shift-to-now --store embedded:prewarm.db"},
	},
	"release": {
		{"give back an idle instance through the pool's back-end (credentials from the environment)",
			"--config forecaster.yaml --pool sd-xl --instance i-0abc123 --reason 'training job done'"},
	},
}
