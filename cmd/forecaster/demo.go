package main

import (
	"context"
	"errors"
	"io"
)

// runDemo implements 'forecaster demo'. Placeholder until its issue lands.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("'demo' is not implemented yet")
}
