package builtin

import (
	"maps"
	"net/http"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/releasehook"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/poolspec"
)

// ReleaseHook builds POST /api/v1/release for the pools of file, through
// the back-ends Build made (call it after the service has built every
// pool's). hc carries the caller's part (Token, Logger, and with election
// Route, RetryAfter and Forward); the Set fills the rest. Each pool's
// instances are released through that pool's own back-end, inside an
// actuator.Safe of the Set's template (hc.ReleaserFor): a volcengine-ecs
// pool's through its ECS pool, a volcengine pool's through its group's
// Actuator, recycling the members of a group with release_mode recycle
// in it (volcengine.Releases); an instance whose pool is not told goes
// through the first pool's. Where file has volcengine or volcengine-ecs
// pools, the membership check (volcengine.Releases.Locate) names the
// instance's pool, each group asked through its own pool's back-end.
// Its pools and back-ends are those of file as built: a reload does not
// change them.
func (s *Set) ReleaseHook(file *poolspec.File, hc releasehook.Config) (http.Handler, error) {
	var pools []actuator.PoolConfig
	for _, p := range file.Pools {
		pools = append(pools, p.Actuator())
		hc.Pools = append(hc.Pools, p.Name)
	}
	built := maps.Clone(s.pools)
	rel, err := volcengine.NewReleases(pools, func(pool string) actuator.Actuator { return built[pool] })
	if err != nil {
		return nil, err
	}
	releasers := map[string]releasehook.Releaser{}
	for _, p := range pools {
		b := rel.For(p.Name)
		if b == nil {
			b = built[p.Name]
		}
		if b == nil {
			continue
		}
		opts := s.Safety
		opts.Pools = []actuator.PoolConfig{p}
		releasers[p.Name] = actuator.NewSafe(b, opts)
	}
	if len(pools) > 0 {
		hc.Releaser = releasers[pools[0].Name]
	}
	hc.ReleaserFor = func(pool string) releasehook.Releaser { return releasers[pool] }
	if rel.Len() > 0 {
		hc.Locate = rel.Locate
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
