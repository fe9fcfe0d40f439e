package natsio

// Internals the external tests check.

func StatusTextForTest(code int32) string { return statusText(code) }

func SentinelForTest(code int32) error { return sentinelFor(code) }

func LiveHandlesForTest() int64 { return liveHandles.Load() }
