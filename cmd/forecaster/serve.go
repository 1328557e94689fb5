package main

import (
	"context"
	"errors"
	"io"
)

// runServe implements 'forecaster serve'. Placeholder until its issue lands.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("'serve' is not implemented yet")
}
