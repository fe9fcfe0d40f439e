package nats

import "time"

// What nats.go makes of zero settings, for Options built by hand (not from
// GetDefaultOptions): its Options.Connect fills these in...
func (o *Options) applyConnectDefaults() {
	if o.MaxPingsOut == 0 {
		o.MaxPingsOut = DefaultMaxPingOut
	}
	if o.ReconnectBufSize == 0 {
		o.ReconnectBufSize = DefaultReconnectBufSize
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
}

// ...and reads a wait of 0 or less as no wait, while the library takes
// only positive ones: the shortest it takes stands for none.
func atLeastOneMilli(d time.Duration) time.Duration { return max(d, time.Millisecond) }

// pingsOff is the ping interval that stands for nats.go's "no pings" (0 or
// less): the library always pings, so once a century.
const pingsOff = 100 * 365 * 24 * time.Hour

func pingInterval(d time.Duration) time.Duration {
	if d <= 0 {
		return pingsOff
	}
	return d
}
