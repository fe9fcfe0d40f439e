package interop

// Consumer pauses across the two clients: nats.go's PauseConsumer pauses
// a consumer and the binding's ConsumerInfo and Consumers see it paused;
// the binding's PauseConsumer pauses one and nats.go's Consumer info sees
// it, and each side's ResumeConsumer ends the other's pause.

import (
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

func TestConsumerPauseInterop(t *testing.T) {
	js, njs := clients(t)
	ctx := ctxFor(t)
	got(njs.CreateStream(ctx, natsio.StreamConfig{Name: "P", Subjects: []string{"p.>"}})).must(t)
	for _, name := range []string{"by_natsgo", "by_natsio"} {
		got(njs.CreateConsumer(ctx, "P", natsio.ConsumerConfig{Durable: name})).must(t)
	}
	until := time.Now().Add(time.Hour)

	// nats.go pauses; the binding sees it.
	nr := got(js.PauseConsumer(ctx, "P", "by_natsgo", until)).must(t)
	if !nr.Paused || nr.PauseRemaining <= 59*time.Minute {
		t.Fatalf("nats.go pause response %+v", nr)
	}
	ci := got(njs.ConsumerInfo(ctx, "P", "by_natsgo")).must(t)
	if !ci.Paused || ci.PauseRemaining <= 59*time.Minute || ci.PauseRemaining > time.Hour {
		t.Fatalf("natsio sees paused %v remaining %v", ci.Paused, ci.PauseRemaining)
	}
	paused := map[string]bool{}
	for _, c := range got(njs.Consumers(ctx, "P")).must(t) {
		paused[c.Name] = c.Paused
	}
	if len(paused) != 2 || !paused["by_natsgo"] || paused["by_natsio"] {
		t.Fatalf("natsio lists paused %v", paused)
	}
	// The binding resumes it; nats.go sees it running.
	if r := got(njs.ResumeConsumer(ctx, "P", "by_natsgo")).must(t); r.Paused {
		t.Fatalf("natsio resume response %+v", r)
	}
	c := got(js.Consumer(ctx, "P", "by_natsgo")).must(t)
	if info := got(c.Info(ctx)).must(t); info.Paused || info.PauseRemaining != 0 {
		t.Fatalf("nats.go after natsio's resume: paused %v remaining %v", info.Paused, info.PauseRemaining)
	}

	// The binding pauses; nats.go sees it.
	r := got(njs.PauseConsumer(ctx, "P", "by_natsio", until)).must(t)
	if !r.Paused || r.PauseRemaining <= 59*time.Minute {
		t.Fatalf("natsio pause response %+v", r)
	}
	c = got(js.Consumer(ctx, "P", "by_natsio")).must(t)
	info := got(c.Info(ctx)).must(t)
	if !info.Paused || info.PauseRemaining <= 59*time.Minute || info.Config.PauseUntil == nil ||
		info.Config.PauseUntil.Sub(until).Abs() > time.Second {
		t.Fatalf("nats.go sees paused %v remaining %v until %v (want %v)",
			info.Paused, info.PauseRemaining, info.Config.PauseUntil, until)
	}
	// nats.go resumes it; the binding sees it running.
	got(js.ResumeConsumer(ctx, "P", "by_natsio")).must(t)
	if ci := got(njs.ConsumerInfo(ctx, "P", "by_natsio")).must(t); ci.Paused || ci.PauseRemaining != 0 {
		t.Fatalf("natsio after nats.go's resume: paused %v remaining %v", ci.Paused, ci.PauseRemaining)
	}
}
