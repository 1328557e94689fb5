package config

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// yamlAt is a file setting the dotted key to v (with what InfluxDB's keys
// need besides).
func yamlAt(key string, v int64) string {
	parts := strings.Split(key, ".")
	var b strings.Builder
	if parts[0] == "store" {
		b.WriteString("store:\n  influx:\n    url: http://127.0.0.1:8086\n    bucket: b\n")
		fmt.Fprintf(&b, "    %s: %d\n", parts[2], v)
		return b.String()
	}
	for i, p := range parts {
		b.WriteString(strings.Repeat("  ", i) + p + ":")
		if i == len(parts)-1 {
			fmt.Fprintf(&b, " %d", v)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Every key of the range table, in the file: min and max pass, min-1 and
// max+1 fail naming the key and the range (min-1 passes when it is 0,
// which means the default), so the file and Validate read one table.
func TestRangesInTheFile(t *testing.T) {
	for _, r := range ranges() {
		tests := []struct {
			v  int64
			ok bool
		}{{r.min, true}, {r.max, true}, {r.min - 1, r.min-1 == 0}, {r.max + 1, false}}
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s=%d", r.key, tt.v), func(t *testing.T) {
				cfg, err := Parse("c.yml", []byte(yamlAt(r.key, tt.v)))
				if tt.ok {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					if got, _ := cfg.number(r.key); got != tt.v {
						t.Errorf("%s read as %d", r.key, got)
					}
					return
				}
				want := fmt.Sprintf("%s: %d is outside [%d, %d]", r.key, tt.v, r.min, r.max)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want one with %q", err, want)
				}
			})
		}
	}
}

// The flags with a key in the range table: min and max are taken, min-1
// and max+1 refused naming the flag and the range; the help states the
// same range.
func TestRangesOnTheCommandLine(t *testing.T) {
	flags := []struct {
		flag, key, want, help string
	}{
		{"scrape-max-bytes", "scrape_max_bytes", "1024 (1 KiB) to 1073741824 (1 GiB)", "(1 KiB to 1 GiB)"},
		{"unready-after-intervals", "unready_after_intervals", "1 to 10000", "(1 to 10000)"},
		{"buffer-points", "buffer.memory_points", "1 to 100000000", ""},
	}
	for _, fl := range flags {
		r := rangeOf(fl.key)
		for _, tt := range []struct {
			v  int64
			ok bool
		}{{r.min, true}, {r.max, true}, {r.min - 1, false}, {r.max + 1, false}} {
			t.Run(fmt.Sprintf("--%s=%d", fl.flag, tt.v), func(t *testing.T) {
				fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
				var f Flags
				f.Register(fs)
				if !strings.Contains(fs.Lookup(fl.flag).Usage, fl.help) {
					t.Errorf("help %q lacks %q", fs.Lookup(fl.flag).Usage, fl.help)
				}
				if err := fs.Parse([]string{fmt.Sprintf("--%s=%d", fl.flag, tt.v)}); err != nil {
					t.Fatal(err)
				}
				cfg := Default()
				err := f.Apply(fs, &cfg, func(string) string { return "" })
				if tt.ok {
					if got, _ := cfg.number(fl.key); err != nil || got != tt.v {
						t.Errorf("err %v, %s = %d; want %d", err, fl.key, got, tt.v)
					}
					return
				}
				want := fmt.Sprintf("--%s %d: want %s", fl.flag, tt.v, fl.want)
				if err == nil || err.Error() != want {
					t.Errorf("err = %v, want %q", err, want)
				}
			})
		}
	}
}

func TestRangeWording(t *testing.T) {
	tests := []struct {
		r          intRange
		want, span string
	}{
		{intRange{min: 1, max: 256}, "1 to 256", "1 to 256"},
		{intRange{min: 1 << 20, max: 1 << 40, bytes: true}, "1048576 (1 MiB) to 1099511627776 (1 TiB)", "1 MiB to 1 TiB"},
		{intRange{min: 1 << 10, max: 4 << 30, bytes: true}, "1024 (1 KiB) to 4294967296 (4 GiB)", "1 KiB to 4 GiB"},
		{intRange{min: 1000, max: 1536, bytes: true}, "1000 (1000 bytes) to 1536 (1536 bytes)", "1000 bytes to 1536 bytes"},
	}
	for _, tt := range tests {
		if got := tt.r.want(); got != tt.want {
			t.Errorf("want() = %q, want %q", got, tt.want)
		}
		if got := tt.r.span(); got != tt.span {
			t.Errorf("span() = %q, want %q", got, tt.span)
		}
	}
}

// Every key of the duration table, in the file: min and max pass, just
// below min and just above max fail naming the key, and 0 passes only
// where it means the default.
func TestDurationRangesInTheFile(t *testing.T) {
	for _, r := range durationRanges() {
		for _, tt := range []struct {
			v  time.Duration
			ok bool
		}{{r.min, true}, {r.max, true}, {r.min - time.Millisecond, false}, {r.max + time.Second, false}, {0, r.zeroDefault}} {
			body := fmt.Sprintf("%s: %s\n", r.key, tt.v)
			switch r.key {
			case "store.retention":
				body = fmt.Sprintf("store:\n  retention: %s\n", tt.v)
			case "store.influx.timeout":
				body = fmt.Sprintf("store:\n  influx:\n    url: http://127.0.0.1:8086\n    bucket: b\n    timeout: %s\n", tt.v)
			}
			_, err := Parse("r.yml", []byte("dcgm:\n  - url: http://127.0.0.1:9400/metrics\n"+body))
			if tt.ok != (err == nil) || err != nil && !strings.Contains(err.Error(), r.key+": ") {
				t.Errorf("%s %v: error %v, want ok=%v naming the key", r.key, tt.v, err, tt.ok)
			}
		}
	}
}
