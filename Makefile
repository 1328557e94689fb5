# prewarm: `make test` runs every test, starting the services they need.
GO ?= go
PKGS ?= ./...

.PHONY: all build test test-short bench lint demo demo-replay fmt tools

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
