package builtin

import (
	"strings"
	"testing"

	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/poolspec"
)

func TestReleasePools(t *testing.T) {
	file := &poolspec.File{Pools: []poolspec.Pool{pool("gpu", volcengine.Name, 0), pool("dry", "dryrun", 0), pool("gpu2", volcengine.Name, 0),
		pool("ecs", volcengine.ECSName, 0)}}
	tests := []struct {
		name, pool string
		want       []string
		wantErr    string
	}{
		{"every pool without --pool", "", []string{"gpu", "dry", "gpu2", "ecs"}, ""},
		{"one volcengine pool", "gpu2", []string{"gpu2"}, ""},
		{"one pool of ECS instances", "ecs", []string{"ecs"}, ""},
		{"a pool of another back-end is refused", "dry", nil, "--pool dry: its back-end is dryrun"},
		{"a pool not configured is refused", "nope", nil, "--pool:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pools, err := ReleasePools(file, tt.pool)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range pools {
				names = append(names, p.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.want, ",") {
				t.Errorf("pools %v, want %v", names, tt.want)
			}
		})
	}
}
