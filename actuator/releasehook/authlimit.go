package releasehook

import "github.com/prewarm/prewarm/internal/authguard"

// Limit is a token bucket of failed authentications: Burst failures at
// once, then one more each Every (authguard.Limit).
type Limit = authguard.Limit

// Defaults of the failed-authentication limits (Config.PerClient,
// Config.Global).
var (
	// DefaultPerClient: 10 wrong tokens from one address, then one per 6 s
	// (10 a minute).
	DefaultPerClient = Limit{Burst: authguard.DefaultPerClientBurst, Every: authguard.DefaultPerClientEvery}
	// DefaultGlobal: 100 wrong tokens from all addresses, then 10 a
	// second.
	DefaultGlobal = Limit{Burst: authguard.DefaultGlobalBurst, Every: authguard.DefaultGlobalEvery}
)

// DefaultLogEvery is the interval of the refusals' summary line.
const DefaultLogEvery = authguard.DefaultLogEvery
