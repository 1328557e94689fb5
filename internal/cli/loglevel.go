package cli

import (
	"fmt"
	"log/slog"
	"strings"
)

// LogLevelFlag is the --log-level flag both binaries take: debug, info,
// warn or error. It implements pflag.Value, so a bad level is a usage
// error naming the flag and the levels allowed.
type LogLevelFlag struct{ Level slog.Level }

// LogLevels are the names LogLevelFlag accepts, least severe first.
var LogLevels = []string{"debug", "info", "warn", "error"}

// String returns the level's name.
func (f *LogLevelFlag) String() string { return strings.ToLower(f.Level.String()) }

// Set parses one of LogLevels.
func (f *LogLevelFlag) Set(s string) error {
	for _, name := range LogLevels {
		if strings.EqualFold(s, name) {
			return f.Level.UnmarshalText([]byte(name))
		}
	}
	return fmt.Errorf("want one of %s", strings.Join(LogLevels, ", "))
}

// Type names the flag's values in --help.
func (f *LogLevelFlag) Type() string { return "level" }
