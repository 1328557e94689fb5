package agent

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"

	"github.com/prewarm/prewarm/collector/buffer"
	"github.com/prewarm/prewarm/collector/config"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
	"github.com/prewarm/prewarm/store/open"
)

// openStore opens the store cfg names and describes it for the log:
// InfluxDB, else nowhere with discardAll (discard), else the embedded
// file (config.DefaultEmbedded when cfg names none). InfluxDB's settings
// the client refuses are a *UsageError.
func openStore(ctx context.Context, cfg *config.Config, discardAll bool, log *slog.Logger) (store.Store, string, error) {
	opts := open.Options{Embedded: embedded.Options{Retention: cfg.Store.Retention, Logger: log}}
	if in := cfg.Store.Influx; in != nil {
		opts.Influx = in.ClientConfig(log)
		s, err := open.Store(ctx, "", opts)
		if err != nil {
			return nil, "", &UsageError{Err: err} // InfluxDB's store only checks the settings
		}
		return s, "influx " + in.URL + " bucket " + in.Bucket, nil
	}
	if discardAll {
		return discard{}, "none (--once)", nil
	}
	path := cfg.Store.Embedded
	if path == "" {
		path = config.DefaultEmbedded
	}
	s, err := open.EmbeddedFile(path).Open(ctx, opts)
	if err != nil {
		return nil, "", err
	}
	return s, "embedded " + path, nil
}

// discard is the store of --once runs that only print.
type discard struct{}

func (discard) Write(context.Context, []store.Point) error { return nil }
func (discard) Query(context.Context, store.Query) ([]store.Series, error) {
	return nil, errors.New("no store")
}
func (discard) Close() error { return nil }

// bufferOptions are the buffer's settings: cfg's, with the spool next to
// the embedded store, or in ./prewarm-spool, when cfg names no spool
// directory; a --once run (once) spools only where cfg says.
func bufferOptions(cfg *config.Config, once bool) buffer.Options {
	opts := buffer.Options{MemoryPoints: cfg.Buffer.MemoryPoints, SpoolDir: cfg.Buffer.SpoolDir, SpoolMaxBytes: cfg.Buffer.SpoolMaxBytes}
	if opts.SpoolDir == "" && !once {
		if cfg.Store.Embedded != "" {
			opts.SpoolDir = cfg.Store.Embedded + ".spool"
		} else {
			opts.SpoolDir = filepath.Join(".", "prewarm-spool")
		}
	}
	return opts
}
