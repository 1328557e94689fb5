package service

// ActsFor reports whether this replica may act for pool now: always
// without election, and with it only while it owns the pool's bucket.
// When it may not, owner names the replica that does ("" while none is
// known). The release hook asks it before releasing an instance, so
// that a standby never actuates.
func (s *Service) ActsFor(pool string) (mine bool, owner string) {
	if s.ownsOrAlone(pool) {
		return true, ""
	}
	return false, s.shared.shards.Owner(pool)
}
