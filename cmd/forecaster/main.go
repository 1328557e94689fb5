// Command forecaster is prewarm's scaling service and its offline tools:
// forecasting a series, evaluating the models on the M4 competition data,
// backtesting scaling policies on recorded demand, capacity-planning
// reports, and releasing instances.
//
// main only wires: every subcommand is a function of (ctx, args, stdout,
// stderr) so tests can run it in-process.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // every time_zone is valid, also in an image without /usr/share/zoneinfo

	"github.com/prewarm/prewarm/internal/buildinfo"
	"github.com/prewarm/prewarm/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first SIGINT/SIGTERM starts a graceful shutdown; restoring
		// the default handling lets a second one end the process at once.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// command is one subcommand of forecaster.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"serve", "run the scaling service: forecast, plan and apply capacity continuously", runServe},
		{"demo", "run the scaling service on synthetic demand, a simulated clock and fleet, with its status page (--replay: offline, then a backtest)", runDemo},
		{"fit", "forecast one series from a CSV file", runFit},
		{"eval", "evaluate the forecasting methods (eval m4, eval traces) and the scaling policy (eval policy) out of sample", runEval},
		{"backtest", "replay recorded demand through scaling policies and compare cost and SLO", runBacktest},
		{"plan", "print the pre-warm schedule hour by hour for a pool or a demand series, with its GPU-hours and cost", runPlan},
		{"report", "write the capacity report (HTML, Markdown or JSON): what to reserve and buy, what it costs, how sure the forecast is", runReport},
		{"import", "load a CSV export of a pool's demand into the store, so that its first plan is a forecast", runImport},
		{"release", "release one instance through a cloud API (e.g. when a training job ends)", runRelease},
	}
}

// run executes the subcommand named by args[0] and returns the process exit
// code: 0 on success, 2 on a usage error, 1 on any other failure and on an
// internal error (a panic: "internal error: ...", the stack with --debug).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	args, debug := cli.StripDebug(args, os.Getenv)
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "version" {
		fmt.Fprintln(stdout, "forecaster", buildinfo.Read())
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := cli.Guard(func() error { return c.run(ctx, args[1:], stdout, stderr) })
		if errors.Is(err, errVersion) {
			fmt.Fprintln(stdout, "forecaster", buildinfo.Read())
			return 0
		}
		if code, internal := cli.Report(stderr, "forecaster "+c.name, err, debug); internal {
			return code
		}
		return exitCode(err, stderr, c.name)
	}
	fmt.Fprintf(stderr, "forecaster: unknown command %q\n\n", args[0])
	printUsage(stderr)
	return 2
}

func exitCode(err error, stderr io.Writer, name string) int {
	var usage *usageError
	var exit *exitError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.As(err, &exit):
		fmt.Fprintf(stderr, "forecaster %s: %v\n", name, err)
		return exit.code
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "forecaster %s: %v\nRun 'forecaster %s --help' for usage.\n", name, err, name)
		return 2
	default:
		fmt.Fprintf(stderr, "forecaster %s: %v\n", name, err)
		return 1
	}
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: forecaster COMMAND [FLAGS]")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'forecaster COMMAND --help' for a command's flags, 'forecaster --version' for the build;")
	fmt.Fprintln(w, "--debug with any command prints the stack of an internal error.")
}
