package natsio

// Internals the external tests check.

func StatusTextForTest(code int32) string { return statusText(code) }

func SentinelForTest(code int32) error { return sentinelFor(code) }

func LiveHandlesForTest() int64 { return liveHandles.Load() }

// SetMaxBlockingWaitsForTest changes how many token waits may block in C
// (0: every wait takes the completion-callback path) and returns the old
// value.
func SetMaxBlockingWaitsForTest(n int32) int32 { return maxBlockingWaits.Swap(n) }
