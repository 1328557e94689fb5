package poolspec

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"
)

// decoder fills a Go value from a YAML node tree, key by key, reporting
// every problem with its line and YAML path (pools[0].forecast.step) and,
// for an unknown key, the keys known there. yaml.v3's own decoder with
// KnownFields also reports every unknown key and every ill-typed value
// with its line, but names Go types instead of YAML paths ("field nmae not
// found in type poolspec.Pool", "cannot unmarshal !!str `5q` into
// time.Duration"), and on a key defined twice it skips the rest of the
// mapping that holds it. Keys absent from the file leave the value's
// defaults in place. It also records the line of every key it meets, so
// that validation can point at the line of a value.
type decoder struct {
	problems []Problem
	lines    map[string]int        // YAML path → line of its key
	values   map[string]*yaml.Node // YAML path → its value
}

func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) {
	d.problems = append(d.problems, Problem{Line: n.Line, Path: path, Msg: fmt.Sprintf(format, args...)})
}

var durationType = reflect.TypeOf(time.Duration(0))

// decode fills v (addressable) from n.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" && v.Kind() != reflect.String {
		return // key: (nothing) keeps the default
	}
	if v.Type() == durationType {
		if dur, ok := d.duration(n, path); ok {
			v.SetInt(int64(dur))
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(n, v.Elem(), path)
	case reflect.Struct:
		d.mapping(n, v, path)
	case reflect.Map:
		d.stringMap(n, v, path)
	case reflect.Slice:
		d.sequence(n, v, path)
	case reflect.String:
		if s, ok := d.scalar(n, path, "a string"); ok {
			v.SetString(s)
		}
	case reflect.Bool:
		s, ok := d.scalar(n, path, "true or false")
		if !ok {
			return
		}
		switch s {
		case "true", "True", "TRUE":
			v.SetBool(true)
		case "false", "False", "FALSE":
			v.SetBool(false)
		default:
			d.fail(n, path, "%q is not true or false", s)
		}
	case reflect.Int:
		s, ok := d.scalar(n, path, "a whole number")
		if !ok {
			return
		}
		i, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			d.fail(n, path, "%q is not a whole number", s)
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		s, ok := d.scalar(n, path, "a number")
		if !ok {
			return
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			d.fail(n, path, "%q is not a finite number", s)
			return
		}
		v.SetFloat(f)
	default:
		panic(fmt.Sprintf("poolspec: no decoder for %s", v.Type())) // a programming error in this package
	}
}

// scalar returns a scalar node's text, or reports that want was expected.
func (d *decoder) scalar(n *yaml.Node, path, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.fail(n, path, "want %s, got %s", want, kindName(n))
		return "", false
	}
	return n.Value, true
}

// duration parses Prometheus' durations (1d, 1w, 1h30m) and, for what they
// lack (fractions, ns, µs, a sign), Go's; a bare number is refused, as its
// unit would be a guess.
func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, bool) {
	s, ok := d.scalar(n, path, "a duration")
	if !ok {
		return 0, false
	}
	if md, err := model.ParseDuration(s); err == nil {
		return time.Duration(md), true
	}
	if gd, err := time.ParseDuration(s); err == nil && s != "0" {
		return gd, true
	}
	d.fail(n, path, "%q is not a duration (e.g. 30s, 10m, 1h, 1d, 1w)", s)
	return 0, false
}

// mapping fills the struct v from a mapping node by the fields' yaml tags.
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "want a mapping of keys, got %s", kindName(n))
		return
	}
	fields := yamlFields(v.Type(), nil, map[string][]int{})
	known := slices.Collect(maps.Keys(fields))
	inverse := inverseFields(v.Type())
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		kp := join(path, key.Value)
		if first, dup := seen[key.Value]; dup {
			d.fail(key, kp, "defined twice (first on line %d)", first)
			continue
		}
		seen[key.Value] = key.Line
		if inv, ok := inverse[key.Value]; ok {
			d.inverted(key, val, v.FieldByIndex(fields[inv]), kp, join(path, inv), seen[inv])
			continue
		}
		f, ok := fields[key.Value]
		if !ok {
			d.fail(key, kp, "unknown key (known: %s)", strings.Join(slices.Sorted(slices.Values(known)), ", "))
			continue
		}
		if old := inverseOf(inverse, key.Value); seen[old] != 0 {
			d.fail(key, kp, "give one of %s and %s (line %d), not both", key.Value, old, seen[old])
			continue
		}
		d.lines[kp], d.values[kp] = key.Line, val
		d.decode(val, v.FieldByIndex(f), kp)
	}
}

// inverseFields maps each older key a boolean field still accepts, with
// the opposite meaning (its yamlinverse tag: off for enabled), to the
// field's key. Only direct fields of t carry one.
func inverseFields(t reflect.Type) map[string]string {
	out := map[string]string{}
	for i := range t.NumField() {
		f := t.Field(i)
		if old := f.Tag.Get("yamlinverse"); old != "" && f.Type.Kind() == reflect.Bool {
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			out[old] = name
		}
	}
	return out
}

// inverseOf is the older inverse key of key, or "" when it has none.
func inverseOf(inverse map[string]string, key string) string {
	for old, k := range inverse {
		if k == key {
			return old
		}
	}
	return ""
}

// inverted decodes the older inverse key at kp (off: true) into the
// boolean field v of the current key at newPath (enabled: false),
// refusing a file that gives both (newLine: the current key's line, 0
// when absent).
func (d *decoder) inverted(key, val *yaml.Node, v reflect.Value, kp, newPath string, newLine int) {
	if newLine != 0 {
		d.fail(key, kp, "give one of %s (line %d) and %s, not both", newPath[strings.LastIndex(newPath, ".")+1:], newLine, key.Value)
		return
	}
	var b bool
	d.decode(val, reflect.ValueOf(&b).Elem(), kp)
	v.SetBool(!b)
	d.lines[newPath], d.values[newPath] = key.Line, val
}

// yamlFields adds to fields the index of each field of t by its yaml key,
// the keys of a struct field tagged ",inline" as its own.
func yamlFields(t reflect.Type, at []int, fields map[string][]int) map[string][]int {
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		index := append(slices.Clone(at), i)
		switch {
		case f.Type.Kind() == reflect.Struct && opts == "inline":
			yamlFields(f.Type, index, fields)
		case name != "" && name != "-":
			fields[name] = index
		}
	}
	return fields
}

// stringMap fills a map[string]string from a mapping of scalars.
func (d *decoder) stringMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "want a mapping of keys to values, got %s", kindName(n))
		return
	}
	m := reflect.MakeMap(v.Type())
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		kp := join(path, key.Value)
		if m.MapIndex(reflect.ValueOf(key.Value)).IsValid() {
			d.fail(key, kp, "defined twice")
			continue
		}
		d.lines[kp] = key.Line
		if s, ok := d.scalar(val, kp, "a value"); ok {
			m.SetMapIndex(reflect.ValueOf(key.Value), reflect.ValueOf(s))
		}
	}
	v.Set(m)
}

// sequence fills a slice from a sequence node.
func (d *decoder) sequence(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.fail(n, path, "want a list, got %s", kindName(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		ip := fmt.Sprintf("%s[%d]", path, i)
		d.lines[ip] = item.Line
		if filler, ok := s.Index(i).Addr().Interface().(interface{ setDefaults() }); ok {
			filler.setDefaults()
		}
		d.decode(item, s.Index(i), ip)
	}
	v.Set(s)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "nothing"
}
