package cli

import (
	"fmt"
	"os"
	"strings"
)

// ReadToken returns a bearer token from $env (read with getenv), else the
// first line of file, "" when neither is set. A token file that cannot be
// read, or is empty, is an error naming flag, not a silently disabled
// endpoint.
func ReadToken(getenv func(string) string, env, file, flag string) (string, error) {
	if t := strings.TrimSpace(getenv(env)); t != "" {
		return t, nil
	}
	if file == "" {
		return "", nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s: reading token file: %w", flag, err)
	}
	t, _, _ := strings.Cut(string(data), "\n")
	if t = strings.TrimSpace(t); t == "" {
		return "", fmt.Errorf("%s: token file %s is empty", flag, file)
	}
	return t, nil
}
