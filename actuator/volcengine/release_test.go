package volcengine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/volcengine"
)

func TestReleaseConfig(t *testing.T) {
	creds := filepath.Join(t.TempDir(), "creds")
	if err := os.WriteFile(creds, []byte("VOLCENGINE_ACCESS_KEY=fileAK\nVOLCENGINE_SECRET_KEY=fileSK\nVOLCENGINE_REGION=file-region\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := volcengine.Config{AccessKey: "baseAK", SecretKey: "baseSK", Region: "base-region"}
	vpool := func(opts map[string]string) actuator.PoolConfig {
		return actuator.PoolConfig{Name: "gpu", Backend: volcengine.Name, Options: opts}
	}
	noEnv := func(string) string { return "" }
	tests := []struct {
		name                   string
		base                   volcengine.Config
		pools                  []actuator.PoolConfig
		set                    volcengine.ReleaseSettings
		wantAK, wantRegion, ep string
		wantErr                string
	}{
		{"no pools: the base", base, nil, volcengine.ReleaseSettings{}, "baseAK", "base-region", "", ""},
		{"the flags win over the base", base, nil, volcengine.ReleaseSettings{Region: "flag-region", Endpoint: "http://127.0.0.1:1"}, "baseAK", "flag-region", "http://127.0.0.1:1", ""},
		{"other back-ends are not read", base, []actuator.PoolConfig{{Name: "d", Backend: "dryrun"}}, volcengine.ReleaseSettings{}, "baseAK", "base-region", "", ""},
		{"the first volcengine pool's options", base, []actuator.PoolConfig{vpool(map[string]string{volcengine.OptCredentialsFile: creds, volcengine.OptRegion: "pool-region"})},
			volcengine.ReleaseSettings{}, "fileAK", "pool-region", "", ""},
		{"the credentials flag for a pool without a file", base, []actuator.PoolConfig{vpool(nil)}, volcengine.ReleaseSettings{Credentials: creds}, "fileAK", "file-region", "", ""},
		{"the region flag is in place before the pool is checked", volcengine.Config{}, []actuator.PoolConfig{vpool(map[string]string{volcengine.OptCredentialsFile: creds})},
			volcengine.ReleaseSettings{Region: "flag-region"}, "fileAK", "flag-region", "", ""},
		{"nothing to connect with", volcengine.Config{}, nil, volcengine.ReleaseSettings{}, "", "", "", "no access key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := volcengine.ReleaseConfig(tt.base, tt.pools, tt.set, noEnv)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.AccessKey != tt.wantAK || cfg.Region != tt.wantRegion || cfg.Endpoint != tt.ep {
				t.Errorf("got key %q region %q endpoint %q, want %q, %q, %q", cfg.AccessKey, cfg.Region, cfg.Endpoint, tt.wantAK, tt.wantRegion, tt.ep)
			}
		})
	}
	t.Run("the pool's options are not changed", func(t *testing.T) {
		opts := map[string]string{volcengine.OptCredentialsFile: creds}
		if _, err := volcengine.ReleaseConfig(base, []actuator.PoolConfig{vpool(opts)}, volcengine.ReleaseSettings{Region: "r"}, noEnv); err != nil {
			t.Fatal(err)
		}
		if len(opts) != 1 {
			t.Errorf("options changed: %v", opts)
		}
	})
}
