package main

import (
	"os"
	"testing"
)

// envRunMain makes the test binary run the collector's main instead of the
// tests, so that tests can start real collector processes (and kill -9
// them) without building a second binary.
const envRunMain = "PREWARM_TEST_RUN_COLLECTOR_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envRunMain) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}
