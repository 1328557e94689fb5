package main

import (
	"context"
	"errors"
	"io"
)

// runBacktest implements 'forecaster backtest'. Placeholder until its issue lands.
func runBacktest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("'backtest' is not implemented yet")
}
