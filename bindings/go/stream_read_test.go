package natsio_test

// Reading streams: GetNextMsg (with and without Direct Get), per-subject
// counts (StreamInfoWithSubjects), every stream's info (Streams), the
// server's API level, the newer PubAck fields, and the text of an error
// whose detail starts with its code's description.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// apiSpy records the subjects of the JetStream API requests sent on the
// server (a plain subscription to $JS.API.>: it sees the requests, never
// answers them; but while it listens, a request nothing else answers
// times out instead of failing with no responders).
type apiSpy struct {
	nc  *natsio.Conn
	sub *natsio.Subscription
}

func spyAPI(t *testing.T, nc *natsio.Conn) *apiSpy {
	t.Helper()
	sub, err := nc.SubscribeSync("$JS.API.>")
	if err != nil {
		t.Fatal(err)
	}
	s := &apiSpy{nc: nc, sub: sub}
	t.Cleanup(s.stop)
	flush(t, nc)
	return s
}

// take returns the subjects of the requests seen since the last take.
// The spy's connection sent the requests, so once its flush returns the
// server has delivered them to the spy too.
func (s *apiSpy) take(t *testing.T) []string {
	t.Helper()
	flush(t, s.nc)
	var out []string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		m, err := s.sub.NextMsg(ctx)
		cancel()
		if err != nil {
			return out
		}
		out = append(out, m.Subject)
	}
}

// stop unsubscribes (harmless twice).
func (s *apiSpy) stop() {
	if !s.sub.IsClosed() {
		s.sub.Unsubscribe()
	}
}

// directGetHeaders are the headers a Direct Get answer adds to the
// message's own (nats.go's DirectGet keeps them in the header too).
var directGetHeaders = []string{"Nats-Stream", "Nats-Sequence", "Nats-Subject", "Nats-Time-Stamp", "Nats-Num-Pending", "Nats-Last-Sequence"}

// ownHeader is m's header without the ones a Direct Get adds.
func ownHeader(m *natsio.RawStreamMsg) natsio.Header {
	h := maps.Clone(m.Header)
	for _, name := range directGetHeaders {
		delete(h, name)
	}
	return h
}

// sameMsg fails unless a and b are the same message, their subjects
// compared without the first token (each stream has its own prefix).
func sameMsg(t *testing.T, a, b *natsio.RawStreamMsg) {
	t.Helper()
	_, sa, _ := strings.Cut(a.Subject, ".")
	_, sb, _ := strings.Cut(b.Subject, ".")
	if sa != sb || a.Sequence != b.Sequence || string(a.Data) != string(b.Data) ||
		!maps.EqualFunc(ownHeader(a), ownHeader(b), slices.Equal) {
		t.Fatalf("messages differ:\n%+v\n%+v", a, b)
	}
}

func TestGetNextMsgWalksASubjectWithAndWithoutDirectGet(t *testing.T) {
	nc, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	// Two streams with the same messages: one read with Direct Get, one
	// through its leader.
	streams := []struct {
		name, prefix string
		direct       bool
	}{{"DIRECT", "direct", true}, {"PLAIN", "plain", false}}
	// Interleaved subjects: "a" at 1, 3, 5; "b" at 2, 6; "c" at 4.
	order := []string{"a", "b", "a", "c", "a", "b"}
	for _, s := range streams {
		info := got(js.CreateStream(ctx, natsio.StreamConfig{Name: s.name, Subjects: []string{s.prefix + ".>"},
			AllowDirect: s.direct, Storage: natsio.MemoryStorage})).must(t)
		if info.Config.AllowDirect != s.direct {
			t.Fatalf("%s: allow_direct %v", s.name, info.Config.AllowDirect)
		}
		for i, sub := range order {
			h := natsio.Header{"X-N": {string(rune('0' + i))}}
			got(js.Publish(ctx, s.prefix+"."+sub, []byte{byte('0' + i)}, natsio.PubHeader(h))).must(t)
		}
	}
	spy := spyAPI(t, nc)

	read := map[string][]*natsio.RawStreamMsg{}
	for _, s := range streams {
		t.Run(s.name, func(t *testing.T) {
			// Walk "a": the last one's sequence + 1 each time, until not found.
			var seqs []uint64
			for seq := uint64(1); ; {
				m, err := js.GetNextMsg(ctx, s.name, seq, s.prefix+".a")
				if errors.Is(err, natsio.ErrMsgNotFound) {
					break
				}
				if err != nil {
					t.Fatalf("GetNextMsg(%d): %v", seq, err)
				}
				if m.Subject != s.prefix+".a" || m.Sequence < seq || m.Header.Get("X-N") != string(m.Data) {
					t.Fatalf("GetNextMsg(%d) = %+v", seq, m)
				}
				if d := time.Since(m.Time); d < 0 || d > time.Minute {
					t.Fatalf("stored at %v", m.Time)
				}
				// Direct Get adds the server's headers, the leader's read none.
				if h := m.Header; s.direct && (h.Get("Nats-Stream") != s.name || h.Get("Nats-Sequence") != fmt.Sprint(m.Sequence) ||
					h.Get("Nats-Subject") != m.Subject) || !s.direct && h.Get("Nats-Stream") != "" {
					t.Fatalf("allow_direct %v: header %v", s.direct, h)
				}
				seqs = append(seqs, m.Sequence)
				read[s.name] = append(read[s.name], m)
				seq = m.Sequence + 1
			}
			if !slices.Equal(seqs, []uint64{1, 3, 5}) {
				t.Fatalf("walked %v", seqs)
			}

			// Wildcards; a sequence past the end; a subject never used.
			if m := got(js.GetNextMsg(ctx, s.name, 2, s.prefix+".*")).must(t); m.Sequence != 2 || m.Subject != s.prefix+".b" {
				t.Fatalf("next on %s.* from 2: %+v", s.prefix, m)
			}
			if m := got(js.GetNextMsg(ctx, s.name, 3, s.prefix+".>")).must(t); m.Sequence != 3 {
				t.Fatalf("next on %s.> from 3: %+v", s.prefix, m)
			}
			if m := got(js.GetNextMsg(ctx, s.name, 3, s.prefix+".b")).must(t); m.Sequence != 6 {
				t.Fatalf("next on %s.b from 3: %+v", s.prefix, m)
			}
			_, err := js.GetNextMsg(ctx, s.name, 7, s.prefix+".>")
			wantErr(t, err, natsio.ErrMsgNotFound)
			_, err = js.GetNextMsg(ctx, s.name, 1, s.prefix+".zzz")
			wantErr(t, err, natsio.ErrMsgNotFound)
			_, err = js.GetNextMsg(ctx, s.name, 1, "bad subject")
			wantErr(t, err, natsio.ErrBadSubject)
			_, err = js.GetNextMsg(ctx, s.name, 1, "")
			wantErr(t, err, natsio.ErrBadSubject)
			_, err = js.GetNextMsg(ctx, s.name, 1, "nul\x00")
			wantErr(t, err, natsio.ErrInvalidArgument)

			// GetMsg and GetLastMsg read the same messages as the walk.
			sameMsg(t, got(js.GetMsg(ctx, s.name, 3)).must(t), read[s.name][1])
			sameMsg(t, got(js.GetLastMsg(ctx, s.name, s.prefix+".a")).must(t), read[s.name][2])

			// Which API did the reads use?
			var direct, leader int
			for _, subj := range spy.take(t) {
				switch {
				case strings.HasPrefix(subj, "$JS.API.DIRECT.GET."+s.name):
					direct++
				case subj == "$JS.API.STREAM.MSG.GET."+s.name:
					leader++
				}
			}
			if s.direct && (direct == 0 || leader != 0) || !s.direct && (leader == 0 || direct != 0) {
				t.Fatalf("allow_direct %v: %d Direct Gets, %d STREAM.MSG.GETs", s.direct, direct, leader)
			}
		})
	}
	if t.Failed() {
		return
	}
	// Both ways give the same messages.
	if len(read["DIRECT"]) != len(read["PLAIN"]) {
		t.Fatalf("read %d and %d", len(read["DIRECT"]), len(read["PLAIN"]))
	}
	for i := range read["DIRECT"] {
		sameMsg(t, read["DIRECT"][i], read["PLAIN"][i])
	}

	// Once a stream is gone its messages are not found. The context that
	// deleted it knows: ErrStreamNotFound. Another context that read the
	// stream with Direct Get before asks again the same way, and nobody
	// answers: ErrMsgNotFound; that refreshes what it knows, so its next
	// read says ErrStreamNotFound. A stream read through its leader says
	// ErrStreamNotFound to everyone.
	spy.stop()
	flush(t, nc)
	other := got(nc.JetStream()).must(t)
	defer other.Close()
	for _, s := range streams {
		got(other.GetMsg(ctx, s.name, 1)).must(t) // other learns the stream's config
		noErr(t, js.DeleteStream(ctx, s.name))
		_, err := js.GetMsg(ctx, s.name, 1)
		wantErr(t, err, natsio.ErrStreamNotFound)
		_, err = js.GetNextMsg(ctx, s.name, 1, ">")
		wantErr(t, err, natsio.ErrStreamNotFound)
		_, err = other.GetMsg(ctx, s.name, 1)
		if s.direct {
			wantErr(t, err, natsio.ErrMsgNotFound, s.name)
		} else {
			wantErr(t, err, natsio.ErrStreamNotFound)
		}
		_, err = other.GetNextMsg(ctx, s.name, 1, ">")
		wantErr(t, err, natsio.ErrStreamNotFound)
	}
}

func TestStreamInfoWithSubjects(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "SUBJ", Subjects: []string{"a.>", "b.>"}})).must(t)
	for _, subj := range []string{"a.1", "b.1", "a.2", "a.1"} {
		got(js.Publish(ctx, subj, []byte("x"))).must(t)
	}

	info := got(js.StreamInfoWithSubjects(ctx, "SUBJ", "a.>")).must(t)
	if want := map[string]uint64{"a.1": 2, "a.2": 1}; !maps.Equal(info.State.Subjects, want) {
		t.Fatalf("subjects %v, want %v", info.State.Subjects, want)
	}
	if info.Config.Name != "SUBJ" || info.State.Msgs != 4 || info.State.NumSubjects != 3 {
		t.Fatalf("info %+v", info.State)
	}
	all := got(js.StreamInfoWithSubjects(ctx, "SUBJ", ">")).must(t)
	if want := map[string]uint64{"a.1": 2, "a.2": 1, "b.1": 1}; !maps.Equal(all.State.Subjects, want) {
		t.Fatalf("all subjects %v", all.State.Subjects)
	}
	// No match: an empty map, not nil.
	if none := got(js.StreamInfoWithSubjects(ctx, "SUBJ", "c.>")).must(t); none.State.Subjects == nil || len(none.State.Subjects) != 0 {
		t.Fatalf("no match: %#v", none.State.Subjects)
	}
	// Plain StreamInfo has no subjects.
	if plain := got(js.StreamInfo(ctx, "SUBJ")).must(t); plain.State.Subjects != nil {
		t.Fatalf("StreamInfo subjects %v", plain.State.Subjects)
	}

	_, err := js.StreamInfoWithSubjects(ctx, "SUBJ", "a b")
	wantErr(t, err, natsio.ErrBadSubject)
	_, err = js.StreamInfoWithSubjects(ctx, "NOPE", ">")
	wantErr(t, err, natsio.ErrStreamNotFound)
}

func TestStreamsListsInfos(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)
	if infos := got(js.Streams(ctx, "")).must(t); len(infos) != 0 {
		t.Fatalf("no streams yet, got %d", len(infos))
	}
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "ONE", Subjects: []string{"one.>"}})).must(t)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "TWO", Subjects: []string{"two.>"}, Storage: natsio.MemoryStorage})).must(t)
	got(js.Publish(ctx, "two.x", []byte("x"))).must(t)

	infos := got(js.Streams(ctx, "")).must(t)
	byName := map[string]*natsio.StreamInfo{}
	for _, info := range infos {
		byName[info.Config.Name] = info
	}
	if len(infos) != 2 || byName["ONE"] == nil || byName["TWO"] == nil {
		t.Fatalf("streams %v", slices.Collect(maps.Keys(byName)))
	}
	if two := byName["TWO"]; two.State.Msgs != 1 || two.Config.Storage != natsio.MemoryStorage ||
		!slices.Equal(two.Config.Subjects, []string{"two.>"}) || two.Created.IsZero() || len(two.Raw) == 0 {
		t.Fatalf("TWO %+v", two)
	}

	// A subject narrows the list to the streams holding it.
	for subj, want := range map[string]string{"one.x": "ONE", "two.>": "TWO"} {
		infos := got(js.Streams(ctx, subj)).must(t)
		if len(infos) != 1 || infos[0].Config.Name != want {
			t.Fatalf("Streams(%q): %d infos", subj, len(infos))
		}
	}
	if infos := got(js.Streams(ctx, "three.x")).must(t); len(infos) != 0 {
		t.Fatalf("Streams(three.x): %d", len(infos))
	}
	_, err := js.Streams(ctx, "bad subject")
	wantErr(t, err, natsio.ErrBadSubject)
}

func TestAPILevel(t *testing.T) {
	_, js := jetStream(t)
	level := got(js.APILevel(ctxTimeout(t, 10*time.Second))).must(t)
	if level < 1 {
		t.Fatalf("API level %d of a 2.14 server", level)
	}
	t.Logf("API level %d", level)
}

func TestPubAckValueAndBatchFields(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)

	// A plain publish: none of them.
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "PLAIN", Subjects: []string{"plain"}})).must(t)
	if ack := got(js.Publish(ctx, "plain", []byte("x"))).must(t); *ack != (natsio.PubAck{Stream: "PLAIN", Sequence: 1}) {
		t.Fatalf("plain ack %+v", ack)
	}

	// A counter stream (ADR-49): the ack carries the counter's value.
	info := got(js.CreateStream(ctx, natsio.StreamConfig{Name: "COUNT", Subjects: []string{"count.>"},
		AllowMsgCounter: true})).must(t)
	if !info.Config.AllowMsgCounter {
		t.Fatalf("allow_msg_counter not set: %s", info.Raw)
	}
	incr := natsio.PubHeader(natsio.Header{"Nats-Incr": {"5"}})
	for i, want := range []string{"5", "10"} {
		ack := got(js.Publish(ctx, "count.hits", nil, incr)).must(t)
		if ack.Value != want || ack.Stream != "COUNT" || ack.Sequence != uint64(i+1) || ack.BatchID != "" || ack.BatchSize != 0 {
			t.Fatalf("counter ack %d: %+v, want Value %q", i, ack, want)
		}
	}
	fut := got(js.PublishAsync("count.hits", nil, natsio.PubHeader(natsio.Header{"Nats-Incr": {"-3"}}))).must(t)
	if ack := got(fut.Wait(ctx)).must(t); ack.Value != "7" {
		t.Fatalf("async counter ack %+v", ack)
	}

	// The commit of an atomic batch (ADR-50) of one message: the ack
	// carries the batch's id and size.
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "BATCH", Subjects: []string{"batch"},
		AllowAtomicPublish: true})).must(t)
	batch := natsio.PubHeader(natsio.Header{"Nats-Batch-Id": {"b-1"}, "Nats-Batch-Sequence": {"1"}, "Nats-Batch-Commit": {"1"}})
	ack := got(js.Publish(ctx, "batch", []byte("only"), batch)).must(t)
	if ack.BatchID != "b-1" || ack.BatchSize != 1 || ack.Sequence != 1 || ack.Value != "" {
		t.Fatalf("batch commit ack %+v", ack)
	}
}

func TestErrorTextSaysTheStatusOnce(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "SEQ", Subjects: []string{"seq"}})).must(t)
	got(js.Publish(ctx, "seq", []byte("1"))).must(t)
	_, err := js.Publish(ctx, "seq", []byte("2"), natsio.ExpectLastSequence(7))
	wantErr(t, err, natsio.ErrWrongLastSequence)
	if n := strings.Count(err.Error(), "wrong last sequence"); n != 1 || !strings.HasPrefix(err.Error(), "natsio: wrong last sequence") {
		t.Fatalf("%q says the status %d times", err, n)
	}
	t.Logf("%v", err)

	for _, c := range []struct {
		detail, want string
	}{
		{"", "natsio: wrong last sequence"},
		{"wrong last sequence", "natsio: wrong last sequence"},
		{"wrong last sequence: 2 (code 400, err_code 10071)", "natsio: wrong last sequence: 2 (code 400, err_code 10071)"},
		{"stream S expected 7", "natsio: wrong last sequence: stream S expected 7"},
	} {
		e := &natsio.Error{Status: 508, Detail: c.detail} // NATSIO_ERR_WRONG_LAST_SEQUENCE
		if !errors.Is(e, natsio.ErrWrongLastSequence) || e.Error() != c.want {
			t.Errorf("detail %q: %q, want %q", c.detail, e.Error(), c.want)
		}
	}
}
