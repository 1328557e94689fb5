package main

import (
	"context"
	"errors"
	"io"
)

// runEval implements 'forecaster eval'. Placeholder until its issue lands.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("'eval' is not implemented yet")
}
