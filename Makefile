# prewarm: `make test` runs every test, starting the services they need.
GO ?= go
PKGS ?= ./...

.PHONY: all build test test-short bench lint deadcode demo demo-replay fmt tools fuzz fuzz-check

all: build

## build: compile every package and put the binaries in ./bin
build:
	$(GO) build ./...
	$(GO) build -o bin/forecaster ./cmd/forecaster
	$(GO) build -o bin/collector ./cmd/collector

## test: lint, staticcheck, every test with a real InfluxDB and Prometheus started by scripts/test.sh,
## then the race detector on the concurrent packages (RACE_PKGS overrides them)
test:
	./scripts/test.sh $(PKGS)

## test-short: unit tests only, no InfluxDB
test-short:
	$(GO) test -short $(PKGS)

## bench: every speed and memory benchmark (README.md's Throughput table names the ones it quotes)
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

## lint: formatting, go vet, the fuzz target list (fuzz-check) and dead code (deadcode)
lint: fuzz-check
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet $(PKGS)
	./scripts/deadcode.sh $(DEADCODE_ALLOW)

## deadcode: no dead function in the module (scripts/deadcode.sh, about 2 minutes on 2 cores, always on
## the whole module). Dead means unreachable, calls through interfaces included: in a package a binary
## links, from the binaries' mains (code only tests call is dead: its tests check nothing a user runs);
## in a test-support package (fakes, test servers, no binary links it), from the tests. Exported and
## unexported alike. DEADCODE_ALLOW keeps the deliberate ones, each for the reason above it; a name on
## it that is no longer reported fails the check too.
DEADCODE_ALLOW = \
	$(DEADCODE_ALLOW_ELECTION) \
	$(DEADCODE_ALLOW_PROTOCOL) \
	$(DEADCODE_ALLOW_MODEL_API) \
	$(DEADCODE_ALLOW_TEST_HOOKS)
# The single-Lease elector (one leader for the whole service), which serve does not use yet: it
# shards pools over bucket Leases instead; its tests check the hold that ends at the renew deadline.
DEADCODE_ALLOW_ELECTION = \
	election.Config.validate \
	election.NewElector
# Methods of standard interfaces that fmt, log/slog, encoders and errors.Is call when a value
# reaches them: a volcengine.Secret prints as "[REDACTED]" wherever it is printed by mistake,
# and a refused query parameter keeps store.ErrInvalidQuery in its error chain.
DEADCODE_ALLOW_PROTOCOL = \
	actuator/volcengine.Secret.String \
	actuator/volcengine.Secret.GoString \
	actuator/volcengine.Secret.LogValue \
	actuator/volcengine.Secret.MarshalText \
	store/remote.paramError.Unwrap
# The model packages' documented entry points, each checked against R or statsmodels by its
# tests: Holt-Winters fitted with default options (Fit) or with given parameters (FitWith, which
# validateFor checks), R ets's candidate set (ETSOptions), and single-period STL (R's stl).
DEADCODE_ALLOW_MODEL_API = \
	model/holtwinters.Fit \
	model/holtwinters.FitWith \
	model/holtwinters.Params.validateFor \
	model/holtwinters.ETSOptions \
	model/seasonal.STL
# What tests of several packages need from a package that ships: the shared data folder
# (Locate), and waiting for the state file's background saves (Flush).
DEADCODE_ALLOW_TEST_HOOKS = \
	datasets.Locate \
	service/state.DB.Flush
deadcode:
	./scripts/deadcode.sh $(DEADCODE_ALLOW)

## demo: the scaling service on synthetic demand, a simulated clock (a day a minute) and a simulated
## fleet, with its status page on http://127.0.0.1:8080/; stops after 10 minutes (DEMO_FLAGS to change)
DEMO_FLAGS ?= --duration 10m
demo:
	$(GO) run ./cmd/forecaster demo $(DEMO_FLAGS)

## demo-replay: the offline replay of a day through the service, then a backtest of every policy
demo-replay:
	$(GO) run ./cmd/forecaster demo --replay

## fuzz: run each fuzz target below for FUZZTIME (default 20s), one after the other, and print the
## executions per target (scripts/fuzz.sh); FUZZMINTIME bounds the minimization of each new input (Go's
## default, 60s, can eat the whole run on large inputs)
FUZZTIME ?= 20s
FUZZMINTIME ?= 2s
FUZZ_TARGETS = \
	./actuator:FuzzDecodeOptions \
	./actuator/keda:FuzzScalerMetadata \
	./actuator/kubescale:FuzzScaleReply \
	./actuator/releasehook:FuzzHandlerBody \
	./actuator/volcengine:FuzzParseCredentials \
	./actuator/volcengine:FuzzReplies \
	./cmd/forecaster:FuzzServeConfig \
	./collector/buffer:FuzzParseCursor \
	./collector/buffer:FuzzSpoolCursor \
	./collector/buffer:FuzzSpoolRecover \
	./collector/config:FuzzParse \
	./collector/dcgm:FuzzConvert \
	./collector/notify:FuzzCheckReply \
	./collector/service:FuzzObserve \
	./control:FuzzDecodeState \
	./datasets:FuzzReadArrivals \
	./datasets:FuzzReadCSV \
	./datasets/m4:FuzzRead \
	./model/holtwinters:FuzzForecaster \
	./model/seasonal:FuzzDetect \
	./planner:FuzzParseWindows \
	./redact:FuzzRedactNeverLeaksRaw \
	./service/state:FuzzOpen \
	./poolspec:FuzzParse \
	./store:FuzzCanonicalTags \
	./store/influx:FuzzCollect \
	./store/influx:FuzzFluxString \
	./store/prometheus:FuzzParseSpec \
	./store/remote:FuzzClientReply \
	./store/remote:FuzzDecodeSamples \
	./store/remote:FuzzParseQuery \
	./tune:FuzzDecodeState
## fuzz-check: every FUZZ_TARGETS entry is a fuzz function of its package (go test -fuzz passes
## silently when it matches none), and every fuzz function in the tree is listed
fuzz-check:
	@status=0; \
	for t in $(FUZZ_TARGETS); do \
		grep -qs "^func $${t#*:}(" $${t%%:*}/*_test.go || { echo "FUZZ_TARGETS: $$t: no such fuzz target"; status=1; }; \
	done; \
	for f in $$(grep -rls --include='*_test.go' --exclude-dir=.cache '^func Fuzz' .); do \
		for n in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
			case " $(FUZZ_TARGETS) " in *" $$(dirname $$f):$$n "*) ;; *) echo "FUZZ_TARGETS lacks $$(dirname $$f):$$n"; status=1;; esac; \
		done; \
	done; \
	exit $$status
fuzz: fuzz-check
	./scripts/fuzz.sh $(FUZZTIME) $(FUZZMINTIME) $(FUZZ_TARGETS)
