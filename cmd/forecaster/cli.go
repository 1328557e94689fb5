package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/prewarm/prewarm/poolspec"
)

// usageError marks a mistake in the command line; it makes the process
// exit with status 2. It is the packages' poolspec.FlagError, so a range
// a package checks for a flag exits the same way.
type usageError = poolspec.FlagError

// usageErrorf builds a usageError with a formatted message.
func usageErrorf(format string, args ...any) error { return poolspec.Flagf(format, args...) }

// exitError makes the process exit with code after printing err, without
// the usage hint: an invalid configuration file exits 2 this way.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// errHelp is returned when --help was asked for; it exits 0.
var errHelp = pflag.ErrHelp

// errVersion is returned when --version was asked for: run prints the
// build's version and exits 0.
var errVersion = errors.New("version asked for")

// versionFlag is the flag every subcommand has besides --help.
const versionFlag = "version"

// newFlagSet returns a flag set for subcommand name whose --help prints
// synopsis (one line: the arguments), the description, the command's
// examples and the flag defaults to stderr. Every flag set has --version.
func newFlagSet(name, synopsis, description string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: forecaster %s %s\n\n%s\n", name, synopsis, description)
		if ex := examples[name]; len(ex) > 0 {
			fmt.Fprintf(stderr, "\nExamples:\n")
			for _, e := range ex {
				fmt.Fprintf(stderr, "  # %s\n  %s\n", e.what, strings.TrimSpace("forecaster "+name+" "+e.args))
			}
		}
		fmt.Fprintf(stderr, "\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.Bool(versionFlag, false, "print the build's version and exit")
	return fs
}

// parseFlags parses args, turning pflag's errors into usage errors,
// --help into errHelp and --version into errVersion.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	err := fs.Parse(args)
	switch {
	case err == nil:
		if v, _ := fs.GetBool(versionFlag); v {
			return errVersion
		}
		return nil
	case errors.Is(err, pflag.ErrHelp):
		return errHelp
	default:
		return &usageError{Err: err}
	}
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
