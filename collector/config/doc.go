// Package config reads the collector's YAML configuration file (yaml.v3,
// unknown fields refused) over Default, validates it, and reports every
// problem with the file, line and field path, the way Prometheus' config
// does. Secrets are never in the file: tokens and robot secrets name an
// environment variable or a file, read by ResolveSecrets.
//
// Flags are the command-line flags that set the same settings over the
// file, with the same defaults and checked against the same table of
// ranges, their errors naming the flag where the file's name the YAML key.
package config
