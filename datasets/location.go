package datasets

import (
	"os"
	"path/filepath"
)

// EnvDir names the environment variable that points at the shared data
// folder (the one holding traces/ and m4-hourly/).
const EnvDir = "PREWARM_DATASETS"

// DefaultDir is where the shared data folder lives relative to the
// repository root when EnvDir is unset.
const DefaultDir = "../shared/datasets"

// Dir is the shared data folder a command line defaults to: EnvDir, read
// through getenv, when set, else DefaultDir relative to the working
// directory (the repository root, where the README runs the commands).
func Dir(getenv func(string) string) string {
	if dir := getenv(EnvDir); dir != "" {
		return dir
	}
	return DefaultDir
}

// Locate returns the shared data folder: $PREWARM_DATASETS when set, else
// DefaultDir resolved against the repository root found by walking up from
// the working directory to the first folder holding go.mod (so it works from
// a package's test as well as from the root). It does not check that the
// folder exists; callers stat it and skip or fail with a clear message.
func Locate() string {
	if dir := os.Getenv(EnvDir); dir != "" {
		return dir
	}
	wd, err := os.Getwd()
	if err != nil {
		return DefaultDir
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, DefaultDir)
		}
		if filepath.Dir(dir) == dir {
			return DefaultDir
		}
	}
}
