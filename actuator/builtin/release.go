package builtin

import (
	"net/http"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/releasehook"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/poolspec"
)

// ReleaseHook builds POST /api/v1/release for the pools of file, through
// the back-ends Build made (call it after the service has built every
// pool's). hc carries the caller's part (Token, Logger, and with election
// Route, RetryAfter and Forward); the Set fills the rest. Releases go
// through the first pool's back-end, or the first volcengine pool's when
// there is one, inside an actuator.Safe of the Set's template; volcengine
// pools also get the membership check, which names the instance's pool,
// and the members of pools with release_mode recycle are recycled in
// their groups (volcengine.RecycleMembers) instead of stopped.
// Its pools are those of file: a reload does not change them.
func (s *Set) ReleaseHook(file *poolspec.File, hc releasehook.Config) (http.Handler, error) {
	var pools []actuator.PoolConfig
	var releaser actuator.Actuator
	for _, p := range file.Pools {
		pools = append(pools, p.Actuator())
		hc.Pools = append(hc.Pools, p.Name)
		if releaser == nil || (p.Backend == volcengine.Name && releaser.Name() != volcengine.Name) {
			releaser = s.Built[p.Backend]
		}
	}
	v, isVolcengine := s.Built[volcengine.Name].(*volcengine.Actuator)
	if isVolcengine && releaser == actuator.Actuator(v) {
		releaser = volcengine.RecycleMembers(v, pools)
	}
	opts := s.Safety
	opts.Pools = pools
	hc.Releaser = actuator.NewSafe(releaser, opts)
	if isVolcengine {
		hc.Locate = volcengine.PoolOfInstance(v, pools)
		hc.Notes = volcengine.NoteRecorder
	}
	return releasehook.New(hc)
}

// ReleasePools are the pools of file that 'forecaster release' may
// release instances of: every pool, or poolName's only when set, which
// must be a volcengine pool. Errors name --pool.
func ReleasePools(file *poolspec.File, poolName string) ([]actuator.PoolConfig, error) {
	var pools []actuator.PoolConfig
	for _, p := range file.Pools {
		if poolName == "" || p.Name == poolName {
			pools = append(pools, p.Actuator())
		}
	}
	if poolName == "" {
		return pools, nil
	}
	p, err := file.Pool(poolName)
	if err != nil {
		return pools, poolspec.Flagf("--pool: %v", err)
	}
	if p.Backend != volcengine.Name && p.Backend != volcengine.ECSName {
		return pools, poolspec.Flagf("--pool %s: its back-end is %s; only %s and %s pools release instances", p.Name, p.Backend, volcengine.Name, volcengine.ECSName)
	}
	return pools, nil
}
