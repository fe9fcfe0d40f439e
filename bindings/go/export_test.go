package natsio

// Internals the external tests check.

func StatusTextForTest(code int32) string { return statusText(code) }

func SentinelForTest(code int32) error { return sentinelFor(code) }

func LiveHandlesForTest() int64 { return liveHandles.Load() }

func FutureBlocksFreedForTest() int64 { return futureBlocksFreed.Load() }

func QueuedForBusyCPUsForTest() int64 { return queuedForBusyCPUs.Load() }

func WaitSpinSkippedForTest() bool { return waitSpinSkipped() }

const FutureBlockForTest = futureBlock

func StatusNameForTest(code int32) string { return statusName(code) }

// SentinelCodesForTest are the codes that have a sentinel.
func SentinelCodesForTest() []int32 {
	codes := make([]int32, 0, len(sentinels))
	for code := range sentinels {
		codes = append(codes, code)
	}
	return codes
}

func PlainSubjectForTest(s string) bool { return plainSubject(s) }
