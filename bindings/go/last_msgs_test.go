package natsio_test

// GetLastMsgsFor: the last message of each subject matching some filters,
// in one batch Direct Get, read through StoredMsgs (Next, Msgs, Stop,
// Stats) as the other iterators are read.

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// lastMsgsStream creates LAST (AllowDirect, subjects a.* and b.*) and
// publishes a.1 b.1 a.2 b.2 a.3 a.1 (sequences 1 to 6), each message's
// data "<subject>#<seq>".
func lastMsgsStream(t *testing.T, ctx context.Context, js *natsio.JetStream) {
	t.Helper()
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "LAST", Subjects: []string{"a.*", "b.*"},
		AllowDirect: true, Storage: natsio.MemoryStorage})).must(t)
	for i, subj := range []string{"a.1", "b.1", "a.2", "b.2", "a.3", "a.1"} {
		ack := got(js.Publish(ctx, subj, []byte(subj+"#"+string(rune('1'+i))))).must(t)
		if ack.Sequence != uint64(i+1) {
			t.Fatalf("%s stored at %d, want %d", subj, ack.Sequence, i+1)
		}
	}
}

// readAll reads m with Next until it ends; the sequences read, and the
// error that ended it (nil for ErrDone).
func readAll(t *testing.T, ctx context.Context, m *natsio.StoredMsgs) ([]uint64, error) {
	t.Helper()
	var seqs []uint64
	for {
		msg, err := m.Next(ctx)
		if errors.Is(err, natsio.ErrDone) {
			return seqs, nil
		}
		if err != nil {
			return seqs, err
		}
		seqs = append(seqs, msg.Sequence)
	}
}

func TestGetLastMsgsForReadsTheLastMessageOfEachSubject(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	lastMsgsStream(t, ctx, js)
	// When message 4 was stored, for GetLastMsgsUpToTime.
	fourth := got(js.GetMsg(ctx, "LAST", 4)).must(t).Time

	cases := []struct {
		name     string
		subjects []string
		opts     []natsio.LastMsgsOpt
		want     []uint64
	}{
		{"one filter", []string{"a.*"}, nil, []uint64{3, 5, 6}},
		{"two filters", []string{"a.*", "b.*"}, nil, []uint64{2, 3, 4, 5, 6}},
		{"literal subjects", []string{"b.1", "a.1"}, nil, []uint64{2, 6}},
		{"batch 2", []string{"a.*"}, []natsio.LastMsgsOpt{natsio.GetLastMsgsBatchSize(2)}, []uint64{3, 5}},
		{"up to seq 4", []string{"a.*"}, []natsio.LastMsgsOpt{natsio.GetLastMsgsUpToSeq(4)}, []uint64{1, 3}},
		{"up to time of 4", []string{"a.*"}, []natsio.LastMsgsOpt{natsio.GetLastMsgsUpToTime(fourth)}, []uint64{1, 3}},
		{"no match", []string{"c.*"}, nil, nil},
		{"no match up to seq", []string{"a.3"}, []natsio.LastMsgsOpt{natsio.GetLastMsgsUpToSeq(4)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := got(js.GetLastMsgsFor(ctx, "LAST", c.subjects, c.opts...)).must(t)
			seqs, err := readAll(t, ctx, m)
			noErr(t, err)
			if !slices.Equal(seqs, c.want) {
				t.Fatalf("sequences %v, want %v", seqs, c.want)
			}
			// The end stays the end.
			for range 2 {
				_, err = m.Next(ctx)
				wantIs(t, err, natsio.ErrDone)
			}
			st := got(m.Stats()).must(t)
			if st.Delivered != uint64(len(c.want)) || st.PendingItems != 0 {
				t.Fatalf("stats %+v after %d messages", st, len(c.want))
			}
			// Msgs over the same read again: a fresh read, ranged.
			var ranged []uint64
			for msg, err := range got(js.GetLastMsgsFor(ctx, "LAST", c.subjects, c.opts...)).must(t).Msgs(ctx) {
				noErr(t, err)
				ranged = append(ranged, msg.Sequence)
			}
			if !slices.Equal(ranged, c.want) {
				t.Fatalf("Msgs: sequences %v, want %v", ranged, c.want)
			}
		})
	}

	// A message's fields: the stored one's, with the headers Direct Get adds.
	m := got(js.GetLastMsgsFor(ctx, "LAST", []string{"b.2"})).must(t)
	msg := got(m.Next(ctx)).must(t)
	if msg.Subject != "b.2" || msg.Sequence != 4 || string(msg.Data) != "b.2#4" || !msg.Time.Equal(fourth) {
		t.Fatalf("message %+v", msg)
	}
	if msg.Header.Get("Nats-Stream") != "LAST" || msg.Header.Get("Nats-Sequence") != "4" {
		t.Fatalf("Direct Get headers %v", msg.Header)
	}
	_, err := m.Next(ctx)
	wantIs(t, err, natsio.ErrDone)
}

func TestGetLastMsgsForStopEndsTheRead(t *testing.T) {
	nc, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	lastMsgsStream(t, ctx, js)

	// After the first message: the rest is dropped, Next and Msgs end.
	m := got(js.GetLastMsgsFor(ctx, "LAST", []string{"a.*", "b.*"})).must(t)
	if msg := got(m.Next(ctx)).must(t); msg.Sequence != 2 {
		t.Fatalf("first message %d, want 2", msg.Sequence)
	}
	m.Stop()
	m.Stop() // harmless twice
	_, err := m.Next(ctx)
	wantIs(t, err, natsio.ErrDone)
	for msg, err := range m.Msgs(ctx) {
		t.Fatalf("Msgs after Stop yielded %v, %v", msg, err)
	}
	if st := got(m.Stats()).must(t); st.Delivered != 1 {
		t.Fatalf("stats after Stop %+v", st)
	}

	// Breaking out of Msgs leaves the rest to a later Next; Stop then.
	m = got(js.GetLastMsgsFor(ctx, "LAST", []string{"a.*"})).must(t)
	for msg, err := range m.Msgs(ctx) {
		noErr(t, err)
		if msg.Sequence != 3 {
			t.Fatalf("first message %d, want 3", msg.Sequence)
		}
		break
	}
	if msg := got(m.Next(ctx)).must(t); msg.Sequence != 5 {
		t.Fatalf("after break: %d, want 5", msg.Sequence)
	}
	m.Stop()
	_, err = m.Next(ctx)
	wantIs(t, err, natsio.ErrDone)

	// A Next waiting (for a stream whose Direct Get nobody answers yet)
	// returns ErrDone when another goroutine stops the read.
	silent := got(nc.SubscribeSync("$JS.API.DIRECT.GET.SILENT")).must(t)
	flush(t, nc)
	m = got(js.GetLastMsgsFor(ctx, "SILENT", []string{"x.>"})).must(t)
	mustNext(t, silent)
	time.AfterFunc(100*time.Millisecond, m.Stop)
	start := time.Now()
	_, err = m.Next(ctx)
	wantIs(t, err, natsio.ErrDone)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("a waiting Next returned %v after Stop", d)
	}
}

func TestGetLastMsgsForContext(t *testing.T) {
	// The read fails if nothing comes for 2 s (the context's timeout).
	nc, js := jetStream(t, natsio.JSTimeout(2*time.Second))
	baseline := natsio.LiveHandlesForTest()
	ctx := ctxTimeout(t, 20*time.Second)

	// An ended ctx: nothing is sent.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := js.GetLastMsgsFor(done, "LAST", []string{"a.*"})
	wantIs(t, err, context.Canceled)

	// A hand-made Direct Get responder: it answers when told to.
	responder := got(nc.SubscribeSync("$JS.API.DIRECT.GET.HANDMADE")).must(t)
	flush(t, nc)
	m := got(js.GetLastMsgsFor(ctx, "HANDMADE", []string{"x.>"})).must(t)
	defer m.Stop()
	req := mustNext(t, responder)

	// A cancelled wait returns ctx.Err() at once; the read goes on.
	cancelled, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err = m.Next(cancelled)
	if err != context.Canceled {
		t.Fatalf("cancelled Next: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("cancelled Next returned after %v", d)
	}
	// A message answered after the cancel goes to the next Next.
	noErr(t, nc.PublishMsg(&natsio.Msg{Subject: req.Reply, Data: []byte("late"), Header: natsio.Header{
		"Nats-Stream": {"HANDMADE"}, "Nats-Subject": {"x.1"}, "Nats-Sequence": {"7"},
		"Nats-Time-Stamp": {"2026-01-02T03:04:05.000000006Z"}, "Nats-Num-Pending": {"0"},
	}}))
	msg := got(m.Next(ctx)).must(t)
	if msg.Subject != "x.1" || msg.Sequence != 7 || string(msg.Data) != "late" ||
		!msg.Time.Equal(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)) {
		t.Fatalf("late message %+v", msg)
	}

	// A deadline: ctx's error, matching ErrTimeout too.
	short, cancelShort := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err = m.Next(short)
	cancelShort()
	wantIs(t, err, context.DeadlineExceeded)
	wantIs(t, err, natsio.ErrTimeout)

	// Nothing more for the context's timeout: the read fails, for good.
	_, err = m.Next(ctx)
	wantIs(t, err, natsio.ErrTimeout)
	if ctx.Err() != nil {
		t.Fatal("the test's ctx ended")
	}
	_, err = m.Next(ctx)
	wantIs(t, err, natsio.ErrTimeout)

	// Every completion callback's handle came back.
	waitHandlesReleased(t, baseline)
}

func TestGetLastMsgsForWithoutDirectGetFailsWithNoResponders(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "PLAIN", Subjects: []string{"p.>"},
		Storage: natsio.MemoryStorage})).must(t)
	got(js.Publish(ctx, "p.1", []byte("x"))).must(t)

	for _, stream := range []string{"PLAIN", "MISSING"} {
		t.Run(stream, func(t *testing.T) {
			m := got(js.GetLastMsgsFor(ctx, stream, []string{"p.>"})).must(t)
			_, err := m.Next(ctx)
			if !errors.Is(err, natsio.ErrNoResponders) {
				t.Fatalf("got %v, want ErrNoResponders", err)
			}
			// The error ended the read: every later call returns it.
			_, err = m.Next(ctx)
			wantIs(t, err, natsio.ErrNoResponders)

			// Msgs yields it once, last.
			var errs []error
			for msg, err := range got(js.GetLastMsgsFor(ctx, stream, []string{"p.>"})).must(t).Msgs(ctx) {
				if msg != nil {
					t.Fatalf("Msgs yielded %+v", msg)
				}
				errs = append(errs, err)
			}
			if len(errs) != 1 || !errors.Is(errs[0], natsio.ErrNoResponders) {
				t.Fatalf("Msgs yielded %v", errs)
			}
		})
	}
}

func TestGetLastMsgsForRefusesBadInput(t *testing.T) {
	nc, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	lastMsgsStream(t, ctx, js)
	now := time.Now()

	cases := []struct {
		name     string
		stream   string
		subjects []string
		opts     []natsio.LastMsgsOpt
		want     error
		detail   string // what the error's text mentions
	}{
		{"no subjects", "LAST", nil, nil, natsio.ErrInvalidArgument, "at least one subject"},
		{"empty subjects", "LAST", []string{}, nil, natsio.ErrInvalidArgument, "at least one subject"},
		{"bad subject", "LAST", []string{"a.*", "a..b"}, nil, natsio.ErrBadSubject, "a..b"},
		{"empty subject", "LAST", []string{""}, nil, natsio.ErrBadSubject, ""},
		{"NUL in subject", "LAST", []string{"a.\x00"}, nil, natsio.ErrInvalidArgument, "NUL"},
		{"bad stream name", "LA.ST", []string{"a.*"}, nil, natsio.ErrInvalidArgument, "LA.ST"},
		{"empty stream name", "", []string{"a.*"}, nil, natsio.ErrInvalidArgument, ""},
		{"both up-to options", "LAST", []string{"a.*"},
			[]natsio.LastMsgsOpt{natsio.GetLastMsgsUpToSeq(4), natsio.GetLastMsgsUpToTime(now)},
			natsio.ErrInvalidArgument, "up_to_seq and up_to_time"},
		{"negative batch", "LAST", []string{"a.*"},
			[]natsio.LastMsgsOpt{natsio.GetLastMsgsBatchSize(-1)}, natsio.ErrInvalidArgument, "GetLastMsgsBatchSize"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := js.GetLastMsgsFor(ctx, c.stream, c.subjects, c.opts...)
			if m != nil {
				t.Fatalf("got a read for bad input")
			}
			wantErr(t, err, c.want, c.detail)
		})
	}

	var nilMsgs *natsio.StoredMsgs
	_, err := nilMsgs.Next(ctx)
	wantIs(t, err, natsio.ErrNullArgument)
	nilMsgs.Stop() // harmless

	// A closed JetStream context, a closed connection.
	other := got(nc.JetStream()).must(t)
	other.Close()
	_, err = other.GetLastMsgsFor(ctx, "LAST", []string{"a.*"})
	wantIs(t, err, natsio.ErrIllegalState)
	nc.Close()
	_, err = js.GetLastMsgsFor(ctx, "LAST", []string{"a.*"})
	wantIs(t, err, natsio.ErrConnectionClosed)
}
