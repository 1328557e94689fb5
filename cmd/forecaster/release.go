package main

import (
	"context"
	"errors"
	"io"
)

// runRelease implements 'forecaster release'. Placeholder until its issue lands.
func runRelease(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("'release' is not implemented yet")
}
