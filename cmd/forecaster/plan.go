package main

import (
	"context"
	"errors"
	"io"
)

// runPlan implements 'forecaster plan'. Placeholder until its issue lands.
func runPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("'plan' is not implemented yet")
}
