// Package progress draws a one-line progress bar on a terminal for
// long-running commands such as 'forecaster eval'. It draws nothing when the
// output is not a terminal (a pipe, a file, a test buffer) or when the work
// finishes within a second, so logs and scripted runs stay clean.
package progress
