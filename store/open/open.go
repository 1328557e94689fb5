// Package open opens the store a command line names, so that every command
// reads the same store specs: embedded:PATH (a file, store/embedded),
// http://HOST:PORT or https://HOST:PORT (a collector's query API,
// store/remote, read-only) and prometheus:URL (a Prometheus query API,
// store/prometheus, read-only), or InfluxDB (store/influx) when its
// settings name a server.
//
// It is a package of its own because package store cannot import its
// back-ends: each of them imports store.
package open

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
	"github.com/prewarm/prewarm/store/influx"
	promstore "github.com/prewarm/prewarm/store/prometheus"
	"github.com/prewarm/prewarm/store/remote"
)

// Scheme is the back-end a store spec names.
type Scheme string

const (
	// Embedded is a file of the embedded store: embedded:PATH.
	Embedded Scheme = "embedded"
	// Remote is a collector's query API: http://HOST:PORT or https://…,
	// read-only (the collector keeps writing its embedded file, which
	// only one process can open).
	Remote Scheme = "remote"
	// Prometheus is a Prometheus query API: prometheus:http://HOST:9090
	// with the parameters of store/prometheus, read-only.
	Prometheus Scheme = "prometheus"
)

// embeddedPrefix starts the spec of an embedded store.
const embeddedPrefix = "embedded:"

// Schemes lists the specs Parse reads, for help texts and errors.
const Schemes = "embedded:PATH, a collector's http://HOST:PORT, prometheus:http://HOST:9090"

// ErrUnknownScheme is the Err of a SpecError whose spec names none of
// Schemes.
var ErrUnknownScheme = errors.New("unknown store scheme")

// SpecError is a store spec that cannot be opened as written: its scheme
// is unknown (Err is ErrUnknownScheme) or its back-end refused it (Err is
// the back-end's error, naming the URL). A command reports it as a mistake
// in its command line.
type SpecError struct {
	Spec string
	Err  error
}

// Error names the spec and what is wrong with it.
func (e *SpecError) Error() string {
	if errors.Is(e.Err, ErrUnknownScheme) {
		return fmt.Sprintf("%q: want %s", e.Spec, Schemes)
	}
	return e.Err.Error()
}

// Unwrap returns Err.
func (e *SpecError) Unwrap() error { return e.Err }

// Spec is a parsed store spec.
type Spec struct {
	Scheme Scheme
	// Target is the file of an embedded store and the URL of the others
	// (for Prometheus with its parameters, after "prometheus:").
	Target string
}

// EmbeddedFile is the spec of the embedded store in path.
func EmbeddedFile(path string) Spec { return Spec{Scheme: Embedded, Target: path} }

// Parse reads a store spec; an unknown scheme, or embedded: without a
// path, is a *SpecError. It checks only the scheme: the back-end checks
// the rest when the store is opened.
func Parse(spec string) (Spec, error) {
	switch {
	case strings.HasPrefix(spec, promstore.SpecPrefix):
		return Spec{Scheme: Prometheus, Target: strings.TrimPrefix(spec, promstore.SpecPrefix)}, nil
	case strings.HasPrefix(spec, "http://"), strings.HasPrefix(spec, "https://"):
		return Spec{Scheme: Remote, Target: spec}, nil
	}
	if path, ok := strings.CutPrefix(spec, embeddedPrefix); ok && path != "" {
		return EmbeddedFile(path), nil
	}
	return Spec{}, &SpecError{Spec: spec, Err: ErrUnknownScheme}
}

// String is the spec as Parse reads it.
func (s Spec) String() string {
	switch s.Scheme {
	case Embedded:
		return embeddedPrefix + s.Target
	case Prometheus:
		return promstore.SpecPrefix + s.Target
	}
	return s.Target
}

// Writable reports whether points can be written to the store: the read-only
// query APIs cannot be.
func (s Spec) Writable() bool { return s.Scheme == Embedded }

// Options tune the back-ends Open may pick.
type Options struct {
	// Influx, when its URL is set, selects InfluxDB whatever the spec.
	Influx influx.Config
	// Embedded tunes an embedded store (retention, logger, syncing).
	Embedded embedded.Options
	// Remote tunes a collector's query API client.
	Remote remote.Options
}

// Store opens the store spec names (see Parse), or InfluxDB when
// opts.Influx names a server. A spec that cannot be opened as written is a
// *SpecError; the errors of opening a store that exists (a locked file,
// InfluxDB's settings) are the back-end's.
func Store(ctx context.Context, spec string, opts Options) (store.Store, error) {
	if opts.Influx.URL != "" {
		return openInflux(ctx, opts.Influx)
	}
	s, err := Parse(spec)
	if err != nil {
		return nil, err
	}
	return s.Open(ctx, opts)
}

// Open opens the store s names, or InfluxDB when opts.Influx names a
// server (see Store).
func (s Spec) Open(ctx context.Context, opts Options) (store.Store, error) {
	if opts.Influx.URL != "" {
		return openInflux(ctx, opts.Influx)
	}
	switch s.Scheme {
	case Embedded:
		st, err := embedded.Open(s.Target, opts.Embedded)
		if err != nil {
			return nil, err
		}
		return st, nil
	case Remote:
		st, err := remote.New(s.Target, opts.Remote)
		if err != nil {
			return nil, &SpecError{Spec: s.String(), Err: err}
		}
		return st, nil
	case Prometheus:
		st, err := promstore.Open(ctx, s.String())
		if err != nil {
			return nil, &SpecError{Spec: s.String(), Err: err}
		}
		return st, nil
	}
	return nil, &SpecError{Spec: s.String(), Err: ErrUnknownScheme}
}

// openInflux returns InfluxDB's store, or a nil interface with the error.
func openInflux(ctx context.Context, cfg influx.Config) (store.Store, error) {
	st, err := influx.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return st, nil
}
