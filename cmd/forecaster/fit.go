package main

import (
	"context"
	"errors"
	"io"
)

// runFit implements 'forecaster fit'. Placeholder until its issue lands.
func runFit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("'fit' is not implemented yet")
}
