package poolspec

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/planner"
)

// setting is one key a pool's YAML sets: its path below the pool and
// where its value lies in a Pool.
type setting struct {
	key   string
	index []int
	typ   reflect.Type
}

// poolSettings walks t's yaml-tagged fields, inline structs as their
// parent's keys, nested structs as KEY.SUBKEY, down to the values a user
// types.
func poolSettings(t reflect.Type, prefix string, at []int) []setting {
	var out []setting
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		index := append(slices.Clone(at), i)
		switch {
		case name == "-" || !f.IsExported():
		case f.Type.Kind() == reflect.Struct && opts == "inline":
			out = append(out, poolSettings(f.Type, prefix, index)...)
		case f.Type.Kind() == reflect.Struct && f.Type != durationType && f.Type != reflect.TypeOf(SeriesRef{}):
			out = append(out, poolSettings(f.Type, prefix+name+".", index)...)
		case name != "":
			out = append(out, setting{key: prefix + name, index: index, typ: f.Type})
		}
	}
	return out
}

// noDefault are the settings whose zero value in DefaultPool is no
// default but what the key's documentation says zero means (none, no
// limit, off, derived), or a key a pool must set.
var noDefault = map[string]string{
	"name": "required", "backend": "required", "max": "required",
	"options": "none", "publish_schedule": "off", "demand": "its default depends on the pool's name",
	"utilisation": "derived from demand and capacity", "queue": "0",
	"rps_per_instance": "required unless service_time is set", "service_time": "derived from rps_per_instance and slots",
	"max_step": "no limit", "min_interval": "none", "prices.reserved_instances": "none reserved",
	"windows": "none", "forecast.choose_model_daily": "off", "tune.trim": "no day left out", "warm_start": "no warm tier",
	"spot.share": "no spot tier", "spot.base_on_demand": "no instance kept on demand below the spot share",
}

// Every setting a pool file can set has one default: DefaultPool's value,
// taken from the type that declares the key (planner, control or tune),
// or a documented meaning of zero.
func TestEverySettingHasADefault(t *testing.T) {
	def := reflect.ValueOf(DefaultPool())
	settings := poolSettings(reflect.TypeOf(Pool{}), "", nil)
	var keys []string
	for _, s := range settings {
		keys = append(keys, s.key)
	}
	for _, k := range []string{"min", "max_step", "rps_per_instance", "slo_quantile", "calibrate", "prices.spot_per_hour",
		"reactive.slo_rule", "gate.window", "forecast.periods", "tune.guard_burn", "windows", "demand"} {
		if !slices.Contains(keys, k) {
			t.Errorf("the walk misses %s: %v", k, keys)
		}
	}
	for _, s := range settings {
		v := def.FieldByIndex(s.index)
		_, zeroOK := noDefault[s.key]
		switch {
		case v.IsZero() && !zeroOK:
			t.Errorf("%s: no default (DefaultPool leaves it %v) and no meaning of zero listed", s.key, v)
		case !v.IsZero() && zeroOK:
			t.Errorf("%s: listed without a default, but DefaultPool sets %v", s.key, v)
		}
	}
	// The planner's settings are planner.DefaultConfig's, but for max,
	// which a pool must set, and the sizing, an Erlang-C queue as the
	// fleet flags'.
	want := planner.DefaultConfig()
	want.Fleet.MaxInstances, want.Sizing = 0, planner.SizingErlangC
	if got := DefaultPool().Config; !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultPool().Config = %+v, want planner.DefaultConfig() without max, sizing by Erlang C: %+v", got, want)
	}
}

// Every number a pool file can set has a range: a value far above it or
// below zero is a problem reported at that key, and each number of the
// planner's settings and the tuner's options is named once, in its own
// type's range table.
func TestEverySettingHasARange(t *testing.T) {
	base := DefaultPool()
	base.Name, base.Backend, base.Fleet.MaxInstances, base.Fleet.RPSPerInstance = "p", "dryrun", 10, 5
	if err := base.Validate(nil); err != nil {
		t.Fatalf("setup: %v", err)
	}
	for _, s := range poolSettings(reflect.TypeOf(Pool{}), "", nil) {
		probes := outOfRange(s.typ)
		if probes == nil {
			continue // not a number
		}
		refused := false
		for _, probe := range probes {
			p := base
			p.Forecast.Periods = slices.Clone(p.Forecast.Periods)
			target := reflect.ValueOf(&p).Elem().FieldByIndex(s.index)
			if target.Kind() == reflect.Slice {
				target = target.Index(0)
			}
			target.Set(probe)
			err := p.Validate(nil)
			var problems Errors
			if err != nil {
				problems = err.(Errors)
			}
			refused = refused || slices.ContainsFunc(problems, func(q Problem) bool {
				return q.Path == s.key || strings.HasPrefix(q.Path, s.key+"[")
			})
		}
		if !refused {
			t.Errorf("%s: neither %v nor %v is refused at its key", s.key, probes[0], probes[1])
		}
	}
	checkOneRangeEach(t, base)
}

// ownRanges are the numeric settings of the planner's and the tuner's
// types whose range poolspec checks itself: the gate's window is measured
// in forecast steps, which the forecast block holds.
var ownRanges = []string{"gate.window"}

// checkOneRangeEach checks that every number of the planner's settings
// and of the tuner's options has its range in its type's table (planner's
// Config.CheckRanges, tune's Options.CheckRanges), named there once and in
// no other table.
func checkOneRangeEach(t *testing.T, base Pool) {
	t.Helper()
	var planned, tuned tableKeys
	base.Config.CheckRanges(&planned)
	base.Tune.WithDefaults().CheckRanges(&tuned)
	all := append(slices.Clone(planned), tuned...)
	for i, k := range all {
		if slices.Contains(all[:i], k) {
			t.Errorf("%s: twice in the range tables", k)
		}
	}
	configField, _ := reflect.TypeOf(Pool{}).FieldByName("Config")
	tuneField, _ := reflect.TypeOf(Pool{}).FieldByName("Tune")
	for _, s := range poolSettings(reflect.TypeOf(Pool{}), "", nil) {
		if outOfRange(s.typ) == nil || slices.Contains(ownRanges, s.key) {
			continue
		}
		switch s.index[0] {
		case configField.Index[0]:
			if !slices.Contains(planned, s.key) {
				t.Errorf("%s: not in the planner's range table", s.key)
			}
		case tuneField.Index[0]:
			if !slices.Contains(tuned, s.key) {
				t.Errorf("%s: not in the tuner's range table", s.key)
			}
		}
	}
}

// outOfRange returns values of type t no setting accepts: far too large,
// and negative; nil for a type that is not a number.
func outOfRange(t reflect.Type) []reflect.Value {
	if t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	values := func(vs ...any) []reflect.Value {
		out := make([]reflect.Value, len(vs))
		for i, v := range vs {
			out[i] = reflect.ValueOf(v).Convert(t)
		}
		return out
	}
	switch {
	case t == durationType:
		return values(1_000_000*time.Hour, -time.Second)
	case t.Kind() == reflect.Int:
		return values(1<<30, -1)
	case t.Kind() == reflect.Float64:
		return values(1e15, -1.0)
	}
	return nil
}

// tableKeys records the keys a range table names.
type tableKeys []string

func (k *tableKeys) Int(r planner.Range[int])                { *k = append(*k, r.Key) }
func (k *tableKeys) Duration(r planner.Range[time.Duration]) { *k = append(*k, r.Key) }
func (k *tableKeys) Float(r planner.Range[float64])          { *k = append(*k, r.Key) }
