package datasets

import "testing"

// A command line's default data folder is $PREWARM_DATASETS when set,
// else the folder beside the repository, as a relative path.
func TestDir(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"", DefaultDir},
		{"/data/shared", "/data/shared"},
	} {
		getenv := func(key string) string {
			if key != EnvDir {
				t.Errorf("read %s, want %s", key, EnvDir)
			}
			return tc.env
		}
		if got := Dir(getenv); got != tc.want {
			t.Errorf("Dir with %s=%q = %q, want %q", EnvDir, tc.env, got, tc.want)
		}
	}
}
