package actuator

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// OptionKind is how an option's text is read and checked.
type OptionKind int

// The kinds of option. Empty text is the value "" for KindString, KindFile
// and KindList (so an empty file option turns its default file off); for
// the other kinds it means the option is not set, and its default applies.
const (
	// KindString is any text.
	KindString OptionKind = iota + 1
	// KindInt is a whole number, within Min and Max where they are set.
	KindInt
	// KindDuration is a Go duration (500ms, 10s, 1m30s), within Min and
	// Max where they are set.
	KindDuration
	// KindURL is an http:// or https:// URL with a host. One with
	// credentials in it (user:password@) is refused without being quoted.
	KindURL
	// KindFile is the path of a file the back-end reads when it is built:
	// credentials, tokens and CAs live in such files, never in options.
	KindFile
	// KindList is a comma-separated list; spaces around items and empty
	// items are dropped.
	KindList
)

var kindNames = map[OptionKind]string{
	KindString: "string", KindInt: "int", KindDuration: "duration",
	KindURL: "url", KindFile: "file", KindList: "list",
}

// String names the kind as the documentation's tables do.
func (k OptionKind) String() string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return fmt.Sprintf("OptionKind(%d)", int(k))
}

// Option declares one back-end option: the key a pool's `options:` sets,
// how its text is read and what values it may take. A back-end declares
// each option once, in an OptionSet; the pool spec checks a file against
// it, the registry decodes the options with it, and the documentation's
// tables list it.
type Option struct {
	// Name is the key, in snake_case.
	Name string
	// Kind says how the text is parsed and checked.
	Kind OptionKind
	// Default is the value of an option not set, as a file would write
	// it; "" for none (a back-end may then derive one, as Help says).
	Default string
	// Min and Max bound a KindInt or KindDuration option, in its own
	// syntax ("0", "1ms"); "" leaves that end open.
	Min, Max string
	// PoolBounds makes a KindInt option an instance count, which must
	// also lie within the pool's min and max.
	PoolBounds bool
	// OneOf, when set, lists the only values non-empty text may take.
	OneOf []string
	// Required options must be set to non-empty text.
	Required bool
	// Check, when set, is a further rule on non-empty text; its error
	// says what the text should be.
	Check func(text string) error
	// Help is a one-line description for the documentation.
	Help string
}

// OptionSet is the options of one back-end.
type OptionSet []Option

// OptionProblem is one thing wrong with a pool's options: the option's key
// (without the "options." prefix) and what is wrong.
type OptionProblem struct {
	Key, Msg string
}

// OptionError returns the problems of a pool's options as one error, each
// a FieldError naming `options.KEY` (so it matches ErrInvalidConfig); nil
// when there are none.
func OptionError(pool string, problems []OptionProblem) error {
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = &FieldError{Pool: pool, Field: "options." + p.Key, Problem: p.Msg}
	}
	return errors.Join(errs...)
}

// OptionValues are a pool's options decoded by their declaration: typed,
// checked, defaults applied. Getters of an option that is neither set nor
// defaulted return the zero value.
type OptionValues struct {
	values map[string]any
	set    map[string]bool
}

// String returns a KindString, KindURL or KindFile option's text.
func (v OptionValues) String(name string) string { s, _ := v.values[name].(string); return s }

// Int returns a KindInt option's value.
func (v OptionValues) Int(name string) int { n, _ := v.values[name].(int); return n }

// Duration returns a KindDuration option's value.
func (v OptionValues) Duration(name string) time.Duration {
	d, _ := v.values[name].(time.Duration)
	return d
}

// List returns a KindList option's items.
func (v OptionValues) List(name string) []string {
	l, _ := v.values[name].([]string)
	return slices.Clone(l)
}

// Set reports whether the pool set the option (to text that counts as set
// for its kind), as opposed to it taking its default.
func (v OptionValues) Set(name string) bool { return v.set[name] }

// Names returns the declared keys in alphabetical order.
func (s OptionSet) Names() []string {
	names := make([]string, len(s))
	for i, o := range s {
		names[i] = o.Name
	}
	slices.Sort(names)
	return names
}

// Decode checks a pool's options against the declaration and returns their
// values, with every problem (unknown key, text that does not parse, a
// value out of range or not allowed, a required option missing) in key
// order. The values of the options without problems are filled either way.
func (s OptionSet) Decode(cfg PoolConfig) (OptionValues, []OptionProblem) {
	v := OptionValues{values: map[string]any{}, set: map[string]bool{}}
	var problems []OptionProblem
	for _, k := range sortedKeys(cfg.Options) {
		if !slices.ContainsFunc(s, func(o Option) bool { return o.Name == k }) {
			problems = append(problems, OptionProblem{k, fmt.Sprintf("unknown option of back-end %s (known: %s)", cfg.Backend, KnownList(s.Names()))})
		}
	}
	for _, o := range s {
		text, given := cfg.Options[o.Name]
		given = given && (text != "" || o.emptyIsValue())
		switch {
		case o.Required && text == "":
			problems = append(problems, OptionProblem{o.Name, "is required: " + o.Help})
			continue
		case !given && o.Default == "":
			continue
		case !given:
			text = o.Default
		}
		val, err := o.decode(text, cfg)
		if err != nil {
			problems = append(problems, OptionProblem{o.Name, err.Error()})
			continue
		}
		v.values[o.Name], v.set[o.Name] = val, given
	}
	slices.SortStableFunc(problems, func(a, b OptionProblem) int { return strings.Compare(a.Key, b.Key) })
	return v, problems
}

// emptyIsValue reports whether "" is a value of the option's kind rather
// than "not set".
func (o Option) emptyIsValue() bool {
	return o.Kind == KindString || o.Kind == KindFile || o.Kind == KindList
}

// decode parses and checks one option's text.
func (o Option) decode(text string, cfg PoolConfig) (any, error) {
	if text != "" && len(o.OneOf) > 0 && !slices.Contains(o.OneOf, text) {
		return nil, fmt.Errorf("%q is not one of %s", text, strings.Join(o.OneOf, ", "))
	}
	if text != "" && o.Check != nil {
		if err := o.Check(text); err != nil {
			return nil, err
		}
	}
	switch o.Kind {
	case KindInt:
		return o.decodeInt(text, cfg)
	case KindDuration:
		return o.decodeDuration(text)
	case KindURL:
		return text, checkURL(text)
	case KindList:
		return splitList(text), nil
	default:
		return text, nil
	}
}

func (o Option) decodeInt(text string, cfg PoolConfig) (int, error) {
	n, err := strconv.Atoi(text)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", text)
	}
	lo, hasLo := atoiBound(o.Min)
	hi, hasHi := atoiBound(o.Max)
	switch {
	case hasLo && hasHi && (n < lo || n > hi):
		return 0, fmt.Errorf("%d is out of range: want %d to %d", n, lo, hi)
	case hasLo && n < lo:
		return 0, fmt.Errorf("%d is out of range: want at least %d", n, lo)
	case hasHi && n > hi:
		return 0, fmt.Errorf("%d is out of range: want at most %d", n, hi)
	case o.PoolBounds && (n < cfg.MinInstances || n > cfg.MaxInstances):
		return 0, fmt.Errorf("%d is out of range: want the pool's min to max, %d to %d", n, cfg.MinInstances, cfg.MaxInstances)
	}
	return n, nil
}

func (o Option) decodeDuration(text string) (time.Duration, error) {
	d, err := time.ParseDuration(text)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (e.g. 500ms, 10s, 1m30s)", text)
	}
	if lo, ok := durationBound(o.Min); ok && d < lo {
		return 0, fmt.Errorf("%s is too short: at least %s", d, lo)
	}
	if hi, ok := durationBound(o.Max); ok && d > hi {
		return 0, fmt.Errorf("%s is too long: at most %s", d, hi)
	}
	return d, nil
}

// atoiBound parses a declared int bound; "" (or a bound Validate refuses)
// is an open end.
func atoiBound(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// durationBound parses a declared duration bound; "" is an open end.
func durationBound(s string) (time.Duration, bool) {
	d, err := time.ParseDuration(s)
	return d, err == nil
}

// checkURL accepts an http(s) URL with a host. Text with an '@' may hold a
// password, so it is never quoted back.
func checkURL(text string) error {
	if strings.Contains(text, "@") {
		return fmt.Errorf("must not contain credentials (user@ or user:password@): they come from a file or the environment")
	}
	u, err := url.Parse(text)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL (e.g. https://10.0.0.1:6443)", text)
	}
	return nil
}

func splitList(text string) []string {
	var items []string
	for _, item := range strings.Split(text, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}

// optionName is what an option may be called.
var optionName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// secretName matches names that suggest a secret: options are written in a
// file that is read, copied and logged, so a secret is only ever named by
// a file option (…_file) or read from the environment.
var secretName = regexp.MustCompile(`(secret|password|token|access_key|api_key)`)

// Validate checks the declaration itself (a wiring mistake, reported when
// the back-end is registered): names unique, snake_case and not naming a
// secret, kinds set, bounds only on numbers and parsing as their kind, and
// defaults valid.
func (s OptionSet) Validate() error {
	seen := map[string]bool{}
	for _, o := range s {
		if err := o.validate(); err != nil {
			return fmt.Errorf("option %q: %w", o.Name, err)
		}
		if seen[o.Name] {
			return fmt.Errorf("option %q: declared twice", o.Name)
		}
		seen[o.Name] = true
	}
	return nil
}

func (o Option) validate() error {
	switch {
	case !optionName.MatchString(o.Name):
		return fmt.Errorf("not a snake_case name")
	case secretName.MatchString(o.Name) && o.Kind != KindFile:
		return fmt.Errorf("names a secret: declare a file option (KindFile) instead")
	case kindNames[o.Kind] == "":
		return fmt.Errorf("no kind")
	case o.Help == "":
		return fmt.Errorf("no help")
	case o.PoolBounds && o.Kind != KindInt:
		return fmt.Errorf("pool bounds on a %s option", o.Kind)
	}
	for _, b := range []string{o.Min, o.Max} {
		if b == "" {
			continue
		}
		_, intOK := atoiBound(b)
		_, durOK := durationBound(b)
		if !(o.Kind == KindInt && intOK) && !(o.Kind == KindDuration && durOK) {
			return fmt.Errorf("bound %q: bounds are for int and duration options, in their syntax (this one is %s)", b, o.Kind)
		}
	}
	if o.Default != "" && !o.PoolBounds {
		if _, err := o.decode(o.Default, PoolConfig{}); err != nil {
			return fmt.Errorf("default: %w", err)
		}
	}
	return nil
}
