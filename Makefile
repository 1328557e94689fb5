# prewarm: `make test` runs every test, starting the services they need.
GO ?= go
PKGS ?= ./...

.PHONY: all build test test-short bench lint demo demo-replay fmt tools fuzz

all: build

## build: compile every package and put the binaries in ./bin
build:
	$(GO) build ./...
	$(GO) build -o bin/forecaster ./cmd/forecaster
	$(GO) build -o bin/collector ./cmd/collector

## test: vet, then every test, with a real InfluxDB built and started by scripts/test.sh
test:
	./scripts/test.sh $(PKGS)

## test-short: unit tests only, no InfluxDB
test-short:
	$(GO) test -short $(PKGS)

## bench: the speed and memory benchmarks quoted in the issues
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

## lint: formatting and go vet
lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet $(PKGS)

## demo: the scaling service on synthetic demand, a simulated clock (a day a minute) and a simulated
## fleet, with its status page on http://127.0.0.1:8080/; stops after 10 minutes (DEMO_FLAGS to change)
DEMO_FLAGS ?= --demo-duration 10m
demo:
	$(GO) run ./cmd/forecaster serve --demo $(DEMO_FLAGS)

## demo-replay: the offline replay of a day through the service, then a backtest of every policy
demo-replay:
	$(GO) run ./cmd/forecaster demo

## fuzz: run each fuzz target below for FUZZTIME (default 20s), one after the other; FUZZMINTIME bounds
## the minimization of each new input (Go's default, 60s, can eat the whole run on large inputs)
FUZZTIME ?= 20s
FUZZMINTIME ?= 2s
FUZZ_TARGETS = \
	./actuator:FuzzParseConfig \
	./actuator/releasehook:FuzzHandlerBody \
	./actuator/volcengine:FuzzParseCredentials \
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
	./planner:FuzzParseWindows \
	./redact:FuzzRedactNeverLeaksRaw \
	./store:FuzzCanonicalTags \
	./store/influx:FuzzCollect \
	./store/influx:FuzzFluxString \
	./store/remote:FuzzClientReply \
	./store/remote:FuzzDecodeSamples \
	./store/remote:FuzzParseQuery
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		echo "== $${t#*:} ($${t%%:*})"; \
		$(GO) test -run='^$$' -fuzz="^$${t#*:}$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINTIME) "$${t%%:*}" || exit 1; \
	done
