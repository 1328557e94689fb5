package actuator_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/planner"
)

// testOptions has one option of each kind and rule.
var testOptions = actuator.OptionSet{
	{Name: "count", Kind: actuator.KindInt, Default: "1", Min: "0", Max: "9", Help: "a bounded count"},
	{Name: "initial", Kind: actuator.KindInt, PoolBounds: true, Help: "an instance count"},
	{Name: "timeout", Kind: actuator.KindDuration, Default: "10s", Min: "1ms", Max: "1m", Help: "a bounded duration"},
	{Name: "server", Kind: actuator.KindURL, Help: "a URL"},
	{Name: "ca_file", Kind: actuator.KindFile, Default: "/etc/ca.crt", Help: "a file with a default"},
	{Name: "hosts", Kind: actuator.KindList, Help: "a list"},
	{Name: "resource", Kind: actuator.KindString, Default: "a", OneOf: []string{"a", "b"}, Help: "one of two"},
	{Name: "region", Kind: actuator.KindString, Required: true, Help: "where it runs",
		Check: func(s string) error {
			if strings.ToLower(s) != s {
				return fmt.Errorf("%q is not lowercase", s)
			}
			return nil
		}},
}

// decoded is what a test reads back through the getters.
type decoded struct {
	Count, Initial   int
	Timeout          time.Duration
	Server, CAFile   string
	Hosts            []string
	Resource, Region string
	InitialSet       bool
}

func read(v actuator.OptionValues) decoded {
	return decoded{Count: v.Int("count"), Initial: v.Int("initial"), Timeout: v.Duration("timeout"),
		Server: v.String("server"), CAFile: v.String("ca_file"), Hosts: v.List("hosts"),
		Resource: v.String("resource"), Region: v.String("region"), InitialSet: v.Set("initial")}
}

func TestDecodeOptions(t *testing.T) {
	defaults := decoded{Count: 1, Timeout: 10 * time.Second, CAFile: "/etc/ca.crt", Resource: "a", Region: "r"}
	with := func(f func(*decoded)) decoded { d := defaults; f(&d); return d }
	tests := []struct {
		name    string
		options map[string]string
		want    decoded
	}{
		{"defaults", map[string]string{"region": "r"}, defaults},
		{"every kind set", map[string]string{"region": "r", "count": "9", "initial": "3", "timeout": "1m",
			"server": "https://10.0.0.1:6443", "ca_file": "/ca", "hosts": " h1, ,h2 ", "resource": "b"},
			decoded{Count: 9, Initial: 3, InitialSet: true, Timeout: time.Minute, Server: "https://10.0.0.1:6443",
				CAFile: "/ca", Hosts: []string{"h1", "h2"}, Resource: "b", Region: "r"}},
		{"empty number, duration and URL are not set", map[string]string{"region": "r", "count": "", "timeout": "", "server": ""}, defaults},
		{"an empty file turns the default off", map[string]string{"region": "r", "ca_file": ""}, with(func(d *decoded) { d.CAFile = "" })},
		{"an empty string passes OneOf", map[string]string{"region": "r", "resource": ""}, with(func(d *decoded) { d.Resource = "" })},
		{"pool bounds are inclusive", map[string]string{"region": "r", "initial": "5"}, with(func(d *decoded) { d.Initial, d.InitialSet = 5, true })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := actuator.PoolConfig{Name: "p", Backend: "test", Limits: planner.Limits{MinInstances: 2, MaxInstances: 5}, Options: tt.options}
			v, problems := testOptions.Decode(cfg)
			if len(problems) > 0 {
				t.Fatalf("problems: %v", problems)
			}
			if got := read(v); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decoded\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestDecodeOptionProblems(t *testing.T) {
	tests := []struct {
		name    string
		options map[string]string
		want    []actuator.OptionProblem
	}{
		{"unknown key", map[string]string{"region": "r", "regoin": "x"}, []actuator.OptionProblem{{Key: "regoin",
			Msg: "unknown option of back-end test (known: ca_file, count, hosts, initial, region, resource, server, timeout)"}}},
		{"required missing", map[string]string{}, []actuator.OptionProblem{{Key: "region", Msg: "is required: where it runs"}}},
		{"required empty", map[string]string{"region": ""}, []actuator.OptionProblem{{Key: "region", Msg: "is required: where it runs"}}},
		{"not a number", map[string]string{"region": "r", "count": "ten"}, []actuator.OptionProblem{{Key: "count", Msg: `"ten" is not a whole number`}}},
		{"above max", map[string]string{"region": "r", "count": "10"}, []actuator.OptionProblem{{Key: "count", Msg: "10 is out of range: want 0 to 9"}}},
		{"below min", map[string]string{"region": "r", "count": "-1"}, []actuator.OptionProblem{{Key: "count", Msg: "-1 is out of range: want 0 to 9"}}},
		{"outside the pool", map[string]string{"region": "r", "initial": "6"}, []actuator.OptionProblem{{Key: "initial",
			Msg: "6 is out of range: want the pool's min to max, 2 to 5"}}},
		{"not a duration", map[string]string{"region": "r", "timeout": "soon"}, []actuator.OptionProblem{{Key: "timeout",
			Msg: `"soon" is not a duration (e.g. 500ms, 10s, 1m30s)`}}},
		{"too short", map[string]string{"region": "r", "timeout": "1us"}, []actuator.OptionProblem{{Key: "timeout", Msg: "1µs is too short: at least 1ms"}}},
		{"too long", map[string]string{"region": "r", "timeout": "2m"}, []actuator.OptionProblem{{Key: "timeout", Msg: "2m0s is too long: at most 1m0s"}}},
		{"not a URL", map[string]string{"region": "r", "server": "ftp://x"}, []actuator.OptionProblem{{Key: "server",
			Msg: `"ftp://x" is not an http(s) URL (e.g. https://10.0.0.1:6443)`}}},
		{"credentials in a URL are not quoted", map[string]string{"region": "r", "server": "https://u:hunter2@x"}, []actuator.OptionProblem{{Key: "server",
			Msg: "must not contain credentials (user@ or user:password@): they come from a file or the environment"}}},
		{"not one of", map[string]string{"region": "r", "resource": "c"}, []actuator.OptionProblem{{Key: "resource", Msg: `"c" is not one of a, b`}}},
		{"check", map[string]string{"region": "R"}, []actuator.OptionProblem{{Key: "region", Msg: `"R" is not lowercase`}}},
		{"every problem, in key order", map[string]string{"timeout": "soon", "count": "x", "zz": "1"}, []actuator.OptionProblem{
			{Key: "count", Msg: `"x" is not a whole number`},
			{Key: "region", Msg: "is required: where it runs"},
			{Key: "timeout", Msg: `"soon" is not a duration (e.g. 500ms, 10s, 1m30s)`},
			{Key: "zz", Msg: "unknown option of back-end test (known: ca_file, count, hosts, initial, region, resource, server, timeout)"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := actuator.PoolConfig{Name: "p", Backend: "test", Limits: planner.Limits{MinInstances: 2, MaxInstances: 5}, Options: tt.options}
			_, problems := testOptions.Decode(cfg)
			if !reflect.DeepEqual(problems, tt.want) {
				t.Errorf("problems\n%q\nwant\n%q", problems, tt.want)
			}
			err := actuator.OptionError("p", problems)
			if !errors.Is(err, actuator.ErrInvalidConfig) || !strings.Contains(err.Error(), "options."+tt.want[0].Key+": ") {
				t.Errorf("OptionError = %v, want an ErrInvalidConfig naming options.%s", err, tt.want[0].Key)
			}
		})
	}
}

func TestOptionSetValidate(t *testing.T) {
	ok := actuator.Option{Name: "n", Kind: actuator.KindInt, Help: "h"}
	with := func(f func(*actuator.Option)) actuator.OptionSet { o := ok; f(&o); return actuator.OptionSet{o} }
	tests := []struct {
		name string
		set  actuator.OptionSet
		want string // "" for valid
	}{
		{"valid", actuator.OptionSet{ok}, ""},
		{"the test set", testOptions, ""},
		{"twice", actuator.OptionSet{ok, ok}, "declared twice"},
		{"bad name", with(func(o *actuator.Option) { o.Name = "Name" }), "snake_case"},
		{"a secret", with(func(o *actuator.Option) { o.Name, o.Kind = "secret_key", actuator.KindString }), "names a secret"},
		{"a secret's file", with(func(o *actuator.Option) { o.Name, o.Kind = "token_file", actuator.KindFile }), ""},
		{"no kind", with(func(o *actuator.Option) { o.Kind = 0 }), "no kind"},
		{"no help", with(func(o *actuator.Option) { o.Help = "" }), "no help"},
		{"bad bound", with(func(o *actuator.Option) { o.Min = "1s" }), `bound "1s": bounds are for int and duration options`},
		{"bound on a string", with(func(o *actuator.Option) { o.Kind, o.Max = actuator.KindString, "1" }), "this one is string"},
		{"default out of range", with(func(o *actuator.Option) { o.Default, o.Max = "5", "3" }), "default: 5 is out of range"},
		{"pool bounds on a duration", with(func(o *actuator.Option) { o.Kind, o.PoolBounds = actuator.KindDuration, true }), "pool bounds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.set.Validate()
			if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Validate = %v, want %q", err, tt.want)
			}
		})
	}
}

// The decoder never fails on any text: the option set is either a value
// within its range or a problem naming it, and a URL's problem never quotes
// text holding an '@' (a password, perhaps).
func FuzzDecodeOptions(f *testing.F) {
	for _, seed := range []string{"", "0", "-1", "9", "+3", "1s", "soon", "https://x", "https://u:p@x", "a,,b", "a", "R"} {
		for _, key := range []string{"count", "initial", "timeout", "server", "hosts", "resource", "region", "other"} {
			f.Add(key, seed)
		}
	}
	f.Fuzz(func(t *testing.T, key, text string) {
		cfg := actuator.PoolConfig{Name: "p", Backend: "test", Limits: planner.Limits{MinInstances: 2, MaxInstances: 5},
			Options: map[string]string{"region": "r", key: text}}
		v, problems := testOptions.Decode(cfg)
		for _, p := range problems {
			if p.Key != key {
				t.Errorf("problem of %q for an option set to %q = %+v", p.Key, key, p)
			}
			if key == "server" && strings.Contains(text, "@") && !strings.HasPrefix(p.Msg, "must not contain credentials") {
				t.Errorf("problem of a URL with an '@' = %q, want the message that quotes nothing", p.Msg)
			}
		}
		if len(problems) > 0 {
			return
		}
		if n := v.Int("count"); n < 0 || n > 9 {
			t.Errorf("count %q decoded to %d, outside its range", text, n)
		}
		if n := v.Int("initial"); v.Set("initial") && (n < 2 || n > 5) {
			t.Errorf("initial %q decoded to %d, outside the pool", text, n)
		}
		if d := v.Duration("timeout"); d < time.Millisecond || d > time.Minute {
			t.Errorf("timeout %q decoded to %s, outside its range", text, d)
		}
	})
}
