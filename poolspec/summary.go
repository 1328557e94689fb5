package poolspec

import (
	"fmt"
	"strings"
)

// Summary names the file's pools with their back-ends and modes, as
// 'forecaster serve --check-config' prints a valid file: "2 pools: a
// (dryrun, forecast-only), b (kubescale, active)".
func (f *File) Summary() string {
	names := make([]string, len(f.Pools))
	for i, p := range f.Pools {
		names[i] = fmt.Sprintf("%s (%s, %s)", p.Name, p.Backend, p.Mode)
	}
	return fmt.Sprintf("%d pools: %s", len(f.Pools), strings.Join(names, ", "))
}

// Override replaces listen, audit_log and state_file with the values
// given on the command line; an empty value keeps the file's.
func (f *File) Override(listen, auditLog, stateFile string) {
	if listen != "" {
		f.Listen = listen
	}
	if auditLog != "" {
		f.AuditLog = auditLog
	}
	if stateFile != "" {
		f.StateFile = stateFile
	}
}
