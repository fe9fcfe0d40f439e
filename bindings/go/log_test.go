package natsio_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// recordHandler keeps every record at or above its level.
type recordHandler struct {
	level slog.Level
	mu    sync.Mutex
	lines []string // "LEVEL message"
}

func (h *recordHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, r.Level.String()+" "+r.Message)
	return nil
}
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordHandler) WithGroup(string) slog.Handler      { return h }

func (h *recordHandler) has(prefix, part string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range h.lines {
		if strings.HasPrefix(l, prefix) && strings.Contains(l, part) {
			return true
		}
	}
	return false
}

func TestLoggerTracesFramesAndNamesTheBinding(t *testing.T) {
	h := &recordHandler{level: natsio.LevelTrace}
	nc, err := natsio.Connect(shared.url, natsio.Logger(slog.New(h)))
	if err != nil {
		t.Fatal(err)
	}
	subj := subject(t, "log")
	sub, err := nc.SubscribeSync(subj)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish(subj, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := sub.NextMsg(ctx); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	// slog prints LevelTrace (-8) as "DEBUG-4".
	trace := natsio.LevelTrace.String()
	for _, want := range []struct{ level, part string }{
		{"INFO", "connected to nats://"},
		{trace, ">>> CONNECT {"},
		{trace, `"lang":"natsio-go"`},
		{trace, `"version":"` + natsio.Version() + `"`},
		{trace, ">>> PUB " + subj + ` 2 "hi"`},
		{trace, "<<< MSG " + subj},
		{"INFO", "closed"},
	} {
		if !h.has(want.level, want.part) {
			t.Errorf("no %s line with %q in:\n%s", want.level, want.part, strings.Join(h.lines, "\n"))
		}
	}

	// A logger that wants Info gets no frames.
	info := &recordHandler{level: slog.LevelInfo}
	nc2, err := natsio.Connect(shared.url, natsio.Logger(slog.New(info)))
	if err != nil {
		t.Fatal(err)
	}
	if err := nc2.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	nc2.Close()
	if !info.has("INFO", "connected to") {
		t.Errorf("no connect line: %v", info.lines)
	}
	if info.has(trace, "") || info.has("DEBUG", "") {
		t.Errorf("frames or debug lines logged at Info: %v", info.lines)
	}
}

func TestVerboseAndPedanticAreSentAndVerboseAcksAreHarmless(t *testing.T) {
	h := &recordHandler{level: natsio.LevelTrace}
	nc, err := natsio.Connect(shared.url, natsio.Verbose(), natsio.Pedantic(), natsio.Logger(slog.New(h)))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	responders(t, connect(t), subject(t, "svc"), 1)
	for i := 0; i < 3; i++ {
		reply, err := nc.Request(ctxTimeout(t, 5*time.Second), subject(t, "svc"), []byte("ping"))
		if err != nil {
			t.Fatal(err)
		}
		if string(reply.Data) != "0" {
			t.Fatalf("reply %q", reply.Data)
		}
	}
	if err := nc.Flush(ctxTimeout(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if nc.Status() != natsio.Connected {
		t.Fatalf("status %v", nc.Status())
	}
	trace := natsio.LevelTrace.String()
	for _, part := range []string{`"verbose":true`, `"pedantic":true`, "<<< +OK"} {
		if !h.has(trace, part) {
			t.Errorf("no trace line with %q", part)
		}
	}
	if h.has(trace, "<<< -ERR") {
		t.Error("the server sent -ERR")
	}
}

func TestInboxPrefixReadsBack(t *testing.T) {
	if p, err := connect(t).InboxPrefix(); err != nil || p != "_INBOX" {
		t.Fatalf("default prefix %q, %v", p, err)
	}
	nc := connect(t, natsio.InboxPrefix("_GO_INBOX"))
	if p, err := nc.InboxPrefix(); err != nil || p != "_GO_INBOX" {
		t.Fatalf("prefix %q, %v", p, err)
	}
	nc.Close()
	if p, err := nc.InboxPrefix(); err != nil || p != "_GO_INBOX" {
		t.Fatalf("prefix after close %q, %v", p, err)
	}
}
