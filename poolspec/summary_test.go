package poolspec

import "testing"

func TestSummary(t *testing.T) {
	tests := []struct {
		name  string
		pools []Pool
		want  string
	}{
		{"none", nil, "0 pools: "},
		{"each with its back-end and mode", []Pool{{Name: "a", Backend: "dryrun", Mode: ModeForecastOnly}, {Name: "b", Backend: "kubescale", Mode: "active"}},
			"2 pools: a (dryrun, forecast-only), b (kubescale, active)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (&File{Pools: tt.pools}).Summary(); got != tt.want {
				t.Errorf("Summary = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOverride(t *testing.T) {
	file := func() File { return File{Listen: "l", AuditLog: "a", StateFile: "s"} }
	tests := []struct {
		name                     string
		listen, audit, state     string
		wantListen, wantA, wantS string
	}{
		{"empty values keep the file's", "", "", "", "l", "a", "s"},
		{"each given value wins", "127.0.0.1:1", "audit.log", "", "127.0.0.1:1", "audit.log", "s"},
		{"the state file", "", "", "st.db", "l", "a", "st.db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := file()
			f.Override(tt.listen, tt.audit, tt.state)
			if f.Listen != tt.wantListen || f.AuditLog != tt.wantA || f.StateFile != tt.wantS {
				t.Errorf("got %q %q %q, want %q %q %q", f.Listen, f.AuditLog, f.StateFile, tt.wantListen, tt.wantA, tt.wantS)
			}
		})
	}
}
