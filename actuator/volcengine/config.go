package volcengine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Environment variables the back-end reads.
const (
	EnvAccessKey = "VOLCENGINE_ACCESS_KEY"
	EnvSecretKey = "VOLCENGINE_SECRET_KEY"
	EnvRegion    = "VOLCENGINE_REGION"
	EnvEndpoint  = "VOLCENGINE_ENDPOINT"
)

// Secret is a credential that never prints: fmt, slog, JSON and text
// marshalling all show "[REDACTED]". Use Reveal only where the SDK needs
// the value.
type Secret string

const redacted = "[REDACTED]"

// String implements fmt.Stringer.
func (Secret) String() string { return redacted }

// GoString implements fmt.GoStringer (%#v).
func (Secret) GoString() string { return redacted }

// LogValue implements slog.LogValuer.
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalText implements encoding.TextMarshaler (JSON, YAML).
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// Reveal returns the secret itself.
func (s Secret) Reveal() string { return string(s) }

// Config is what the back-end needs to reach the OpenAPI. Build it with
// LoadConfig; the zero Timeout means DefaultTimeout.
type Config struct {
	AccessKey string
	SecretKey Secret
	Region    string
	// Endpoint overrides the OpenAPI host, e.g. "open.volcengineapi.com"
	// or "http://127.0.0.1:8080" for a loopback test server. An http://
	// endpoint makes the SDK use plain HTTP.
	Endpoint string
	// Timeout bounds one HTTP exchange with the API.
	Timeout time.Duration
}

// DefaultTimeout bounds one API call when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Validate reports the first missing or malformed field, never its value.
func (c Config) Validate() error {
	switch {
	case c.AccessKey == "":
		return fmt.Errorf("volcengine: no access key: set %s or access_key in the credentials file", EnvAccessKey)
	case c.SecretKey == "":
		return fmt.Errorf("volcengine: no secret key: set %s or secret_key in the credentials file", EnvSecretKey)
	case c.Region == "":
		return fmt.Errorf("volcengine: no region: set %s, region in the credentials file, or the pool option region", EnvRegion)
	case c.Timeout < 0:
		return fmt.Errorf("volcengine: timeout must be ≥ 0, got %s", c.Timeout)
	}
	if c.Endpoint != "" {
		if _, err := endpointURL(c.Endpoint); err != nil {
			return err
		}
	}
	return nil
}

// endpointURL parses an endpoint with or without a scheme.
func endpointURL(endpoint string) (*url.URL, error) {
	raw := endpoint
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	// Credentials in the URL are refused before anything quotes it, so
	// they never reach an error message.
	if strings.Contains(raw, "@") {
		return nil, fmt.Errorf("volcengine: endpoint must not carry credentials (it contains '@'); use %s/%s", EnvAccessKey, EnvSecretKey)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("volcengine: endpoint %q is not a host or an http(s) URL", endpoint)
	}
	return u, nil
}

// LoadConfig gathers the configuration. Precedence, highest first: the
// environment (VOLCENGINE_*), then the credentials file at path (skipped
// when path is empty). getenv is os.Getenv in production.
//
// The file is either JSON
//
//	{"access_key": "AK…", "secret_key": "…", "region": "cn-beijing", "endpoint": "…"}
//
// or KEY=VALUE lines (blank lines and # comments ignored) using either the
// JSON names or the environment names:
//
//	VOLCENGINE_ACCESS_KEY=AK…
//	VOLCENGINE_SECRET_KEY=…
//	VOLCENGINE_REGION=cn-beijing
//
// Errors name the file and line, never a value.
func LoadConfig(path string, getenv func(string) string) (Config, error) {
	var cfg Config
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return Config{}, fmt.Errorf("volcengine: reading credentials file: %w", err)
		}
		cfg, err = ParseCredentials(data, path)
		if err != nil {
			return Config{}, err
		}
	}
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if v := getenv(EnvAccessKey); v != "" {
		cfg.AccessKey = v
	}
	if v := getenv(EnvSecretKey); v != "" {
		cfg.SecretKey = Secret(v)
	}
	if v := getenv(EnvRegion); v != "" {
		cfg.Region = v
	}
	if v := getenv(EnvEndpoint); v != "" {
		cfg.Endpoint = v
	}
	return cfg, nil
}

// credentialKeys maps every accepted key to the Config field it sets.
var credentialKeys = map[string]string{
	"access_key": "access_key", EnvAccessKey: "access_key",
	"secret_key": "secret_key", EnvSecretKey: "secret_key",
	"region": "region", EnvRegion: "region",
	"endpoint": "endpoint", EnvEndpoint: "endpoint",
}

// ParseCredentials parses a credentials file (JSON or KEY=VALUE); source
// names it in errors.
func ParseCredentials(data []byte, source string) (Config, error) {
	trimmed := bytes.TrimSpace(data)
	values := map[string]string{}
	if bytes.HasPrefix(trimmed, []byte("{")) {
		var m map[string]string
		if err := json.Unmarshal(trimmed, &m); err != nil {
			// json's message may quote the input; keep only its position.
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				return Config{}, fmt.Errorf("volcengine: %s: invalid JSON at byte %d", source, syn.Offset)
			}
			return Config{}, fmt.Errorf("volcengine: %s: credentials JSON must be an object of strings", source)
		}
		for k, v := range m {
			field, ok := credentialKeys[k]
			if !ok {
				return Config{}, fmt.Errorf("volcengine: %s: unknown key %s (known: access_key, secret_key, region, endpoint)", source, quoteKeyName(k))
			}
			values[field] = v
		}
	} else {
		sc := bufio.NewScanner(bytes.NewReader(data))
		for line := 1; sc.Scan(); line++ {
			text := strings.TrimSpace(sc.Text())
			if text == "" || strings.HasPrefix(text, "#") {
				continue
			}
			text = strings.TrimPrefix(text, "export ")
			k, v, ok := strings.Cut(text, "=")
			if !ok {
				return Config{}, fmt.Errorf("volcengine: %s:%d: expected KEY=VALUE", source, line)
			}
			k = strings.TrimSpace(k)
			field, known := credentialKeys[k]
			if !known {
				return Config{}, fmt.Errorf("volcengine: %s:%d: unknown key %s (known: access_key, secret_key, region, endpoint)", source, line, quoteKeyName(k))
			}
			values[field] = unquote(strings.TrimSpace(v))
		}
		if err := sc.Err(); err != nil {
			return Config{}, fmt.Errorf("volcengine: reading %s: %w", source, err)
		}
	}
	return Config{
		AccessKey: values["access_key"],
		SecretKey: Secret(values["secret_key"]),
		Region:    values["region"],
		Endpoint:  values["endpoint"],
	}, nil
}

// keyNameRE is what a key in a credentials file looks like: letters and
// underscores, short. Anything else may be a value on the wrong side of
// '=' (a bare base64 secret key ends in "=="), so it is not echoed.
var keyNameRE = regexp.MustCompile(`^[A-Za-z_]{1,32}$`)

// quoteKeyName quotes an unknown key for an error message when it looks
// like a key name, and otherwise says it was withheld.
func quoteKeyName(k string) string {
	if keyNameRE.MatchString(k) {
		return strconv.Quote(k)
	}
	return "(not shown: it does not look like a key name; is a value on a line of its own?)"
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}
