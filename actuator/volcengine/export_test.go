package volcengine

import (
	"context"

	"github.com/prewarm/prewarm/actuator"
)

// PoolOfInstance is the pool lookup of the volcengine and volcengine-ecs
// pools among pools with every scaling group asked through a, for the
// lookup's own tests (Releases asks each group through its own pool's
// Actuator).
func PoolOfInstance(a *Actuator, pools []actuator.PoolConfig) func(ctx context.Context, instanceID string) (string, error) {
	return poolLookup(pools, func(string) *Actuator { return a })
}
