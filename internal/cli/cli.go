// Package cli is what the mains of prewarm's binaries (forecaster,
// collector) share about ending a process: the exit codes, and a panic
// turned into an internal error.
//
// Go ends a process that panics with exit status 2, the status prewarm
// gives usage and configuration errors, so a script could not tell a bug
// from a typo. A main runs its command under Guard; a panic then comes
// back as an *InternalError, which Report prints as one line starting
// "internal error:" (the stack only under --debug or PREWARM_DEBUG=1) and
// answers ExitInternal (1).
//
// Guard recovers panics of the goroutine it runs on, the command's own;
// a panic in another goroutine still ends the process with Go's status 2.
package cli

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
)

// Exit statuses of prewarm's binaries.
const (
	// ExitOK: the command did what was asked.
	ExitOK = 0
	// ExitFailure: it failed at run time (a store or cloud API refused,
	// a file could not be read), or hit an internal error.
	ExitFailure = 1
	// ExitInternal is the status of an internal error: ExitFailure, never
	// ExitUsage.
	ExitInternal = ExitFailure
	// ExitUsage: the command line or a configuration file is wrong.
	ExitUsage = 2
)

// DebugFlag, anywhere on the command line before a "--", makes an
// internal error print its stack. Every binary accepts it; StripDebug
// removes it before the binary's own flags are parsed.
const DebugFlag = "--debug"

// EnvDebug set to 1 does the same as DebugFlag.
const EnvDebug = "PREWARM_DEBUG"

// StripDebug returns args without DebugFlag (the occurrences before a
// "--", which ends the flags) and whether it was there or getenv(EnvDebug)
// is "1". getenv may be nil.
func StripDebug(args []string, getenv func(string) string) (rest []string, debug bool) {
	end := slices.Index(args, "--")
	if end < 0 {
		end = len(args)
	}
	rest = make([]string, 0, len(args))
	for i, a := range args {
		if i < end && a == DebugFlag {
			debug = true
			continue
		}
		rest = append(rest, a)
	}
	return rest, debug || (getenv != nil && getenv(EnvDebug) == "1")
}

// InternalError is a bug in prewarm: a panic Guard recovered.
type InternalError struct {
	// Value is what was passed to panic.
	Value any
	// Stack is the panicking goroutine's stack.
	Stack []byte
}

// Error reads "internal error: VALUE".
func (e *InternalError) Error() string { return fmt.Sprintf("internal error: %v", e.Value) }

// Unwrap returns the panic's value when it is an error.
func (e *InternalError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// Guard calls f and returns its error; a panic in f comes back as an
// *InternalError holding the value and the stack.
func Guard(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &InternalError{Value: v, Stack: debug.Stack()}
		}
	}()
	return f()
}

// Report prints an internal error in err, if there is one, to w and
// returns ExitInternal and true; otherwise it prints nothing and returns
// false. The line starts "internal error:" and names the program (e.g.
// "forecaster plan"); the stack follows when debug is set, else a hint to
// run again with --debug.
func Report(w io.Writer, program string, err error, debug bool) (code int, internal bool) {
	var ie *InternalError
	if !errors.As(err, &ie) {
		return 0, false
	}
	fmt.Fprintf(w, "internal error: %s: %v\n", program, ie.Value)
	if debug && ie.Stack != nil {
		fmt.Fprintf(w, "\n%s\n", ie.Stack)
	} else {
		fmt.Fprintf(w, "This is a bug in prewarm; please report it with the command line. Run again with %s (or %s=1) for the stack.\n", DebugFlag, EnvDebug)
	}
	return ExitInternal, true
}
