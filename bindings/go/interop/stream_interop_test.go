package interop

// Stream reads across the two clients: nats.go's jetstream API reads
// (GetMsg, GetLastMsgForSubject, GetMsg with WithGetMsgSubject; Direct Get
// when the stream allows it) what the binding published, the binding's
// GetNextMsg reads what nats.go published, both see the same per-subject
// counts, and a counter stream's value goes on across publishes of either.

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// sameStreamMsg fails unless nats.go's and the binding's copies of a
// stored message agree (headers included, those a Direct Get adds too).
func sameStreamMsg(t *testing.T, what string, n *jetstream.RawStreamMsg, g *natsio.RawStreamMsg) {
	t.Helper()
	if n.Subject != g.Subject || n.Sequence != g.Sequence || string(n.Data) != string(g.Data) ||
		!maps.EqualFunc(headersOf(n.Header), headersOf(g.Header), slices.Equal) || !n.Time.Equal(g.Time) {
		t.Fatalf("%s differs:\nnats.go %+v\nnatsio  %+v", what, n, g)
	}
}

// interleaved is the order of subjects both clients publish: "a" at 1,
// 3, 5; "b" at 2, 6; "c" at 4.
var interleaved = []string{"a", "b", "a", "c", "a", "b"}

func TestStreamReadsInterop(t *testing.T) {
	js, njs := clients(t)
	ctx := ctxFor(t)

	for _, direct := range []bool{true, false} {
		t.Run(fmt.Sprintf("allow_direct=%v", direct), func(t *testing.T) {
			// The binding publishes; nats.go reads.
			name := fmt.Sprintf("FROM_NATSIO_%v", direct)
			prefix := fmt.Sprintf("natsio%v", direct)
			got(njs.CreateStream(ctx, natsio.StreamConfig{Name: name, Subjects: []string{prefix + ".>"}, AllowDirect: direct})).must(t)
			for i, sub := range interleaved {
				h := natsio.Header{"X-N": {fmt.Sprint(i)}}
				got(njs.Publish(ctx, prefix+"."+sub, []byte(fmt.Sprintf("natsio %d", i)), natsio.PubHeader(h))).must(t)
			}
			stream := got(js.Stream(ctx, name)).must(t)
			if stream.CachedInfo().Config.AllowDirect != direct {
				t.Fatalf("nats.go sees allow_direct %v", stream.CachedInfo().Config.AllowDirect)
			}
			for seq := uint64(1); seq <= uint64(len(interleaved)); seq++ {
				n := got(stream.GetMsg(ctx, seq)).must(t)
				if n.Header.Get("X-N") != fmt.Sprint(seq-1) || string(n.Data) != fmt.Sprintf("natsio %d", seq-1) {
					t.Fatalf("nats.go GetMsg(%d): %+v", seq, n)
				}
				sameStreamMsg(t, fmt.Sprintf("message %d", seq), n, got(njs.GetMsg(ctx, name, seq)).must(t))
			}
			n := got(stream.GetLastMsgForSubject(ctx, prefix+".b")).must(t)
			sameStreamMsg(t, "last on b", n, got(njs.GetLastMsg(ctx, name, prefix+".b")).must(t))
			if n.Sequence != 6 {
				t.Fatalf("nats.go last on b: %d", n.Sequence)
			}
			// nats.go's next-by-subject and the binding's agree.
			for seq := uint64(1); seq <= 7; seq++ {
				n, nerr := stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(prefix+".a"))
				g, gerr := njs.GetNextMsg(ctx, name, seq, prefix+".a")
				if nerr != nil || gerr != nil {
					if !errors.Is(nerr, jetstream.ErrMsgNotFound) || !errors.Is(gerr, natsio.ErrMsgNotFound) || seq != 6 && seq != 7 {
						t.Fatalf("next a from %d: nats.go %v, natsio %v", seq, nerr, gerr)
					}
					continue
				}
				sameStreamMsg(t, fmt.Sprintf("next a from %d", seq), n, g)
			}

			// nats.go publishes; the binding walks a subject with GetNextMsg.
			name = fmt.Sprintf("FROM_NATSGO_%v", direct)
			prefix = fmt.Sprintf("natsgo%v", direct)
			ns := got(js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{prefix + ".>"}, AllowDirect: direct})).must(t)
			for i, sub := range interleaved {
				m := nats.NewMsg(prefix + "." + sub)
				m.Header.Set("X-N", fmt.Sprint(i))
				m.Data = []byte(fmt.Sprintf("nats.go %d", i))
				got(js.PublishMsg(ctx, m)).must(t)
			}
			var seqs []uint64
			for seq := uint64(1); ; {
				g, err := njs.GetNextMsg(ctx, name, seq, prefix+".a")
				if errors.Is(err, natsio.ErrMsgNotFound) {
					break
				}
				noErr(t, err)
				if g.Header.Get("X-N") != fmt.Sprint(g.Sequence-1) || string(g.Data) != fmt.Sprintf("nats.go %d", g.Sequence-1) {
					t.Fatalf("natsio GetNextMsg(%d): %+v", seq, g)
				}
				sameStreamMsg(t, fmt.Sprintf("message %d", g.Sequence), got(ns.GetMsg(ctx, g.Sequence)).must(t), g)
				seqs = append(seqs, g.Sequence)
				seq = g.Sequence + 1
			}
			if !slices.Equal(seqs, []uint64{1, 3, 5}) {
				t.Fatalf("natsio walked %v", seqs)
			}

			// Both count the subjects alike.
			ninfo := got(ns.Info(ctx, jetstream.WithSubjectFilter(prefix+".>"))).must(t)
			ginfo := got(njs.StreamInfoWithSubjects(ctx, name, prefix+".>")).must(t)
			want := map[string]uint64{prefix + ".a": 3, prefix + ".b": 2, prefix + ".c": 1}
			if !maps.Equal(ninfo.State.Subjects, want) || !maps.Equal(ginfo.State.Subjects, want) {
				t.Fatalf("subjects: nats.go %v, natsio %v", ninfo.State.Subjects, ginfo.State.Subjects)
			}
		})
	}

	// Streams lists what nats.go lists.
	var nnames []string
	for info := range js.ListStreams(ctx).Info() {
		nnames = append(nnames, info.Config.Name)
	}
	var gnames []string
	for _, info := range got(njs.Streams(ctx, "")).must(t) {
		gnames = append(gnames, info.Config.Name)
	}
	slices.Sort(nnames)
	slices.Sort(gnames)
	if len(gnames) != 4 || !slices.Equal(nnames, gnames) {
		t.Fatalf("streams: nats.go %v, natsio %v", nnames, gnames)
	}
}

func TestCounterStreamInterop(t *testing.T) {
	js, njs := clients(t)
	ctx := ctxFor(t)
	got(js.CreateStream(ctx, jetstream.StreamConfig{Name: "COUNTER", Subjects: []string{"hits"}, AllowMsgCounter: true})).must(t)
	incr := func(by string) nats.Header { return nats.Header{"Nats-Incr": {by}} }

	ack := got(njs.Publish(ctx, "hits", nil, natsio.PubHeader(natsio.Header(incr("5"))))).must(t)
	if ack.Value != "5" {
		t.Fatalf("natsio ack %+v", ack)
	}
	nack := got(js.PublishMsg(ctx, &nats.Msg{Subject: "hits", Header: incr("5")})).must(t)
	if nack.Value != "10" {
		t.Fatalf("nats.go ack %+v", nack)
	}
	ack = got(njs.Publish(ctx, "hits", nil, natsio.PubHeader(natsio.Header(incr("-1"))))).must(t)
	if ack.Value != "9" || ack.Sequence != 3 {
		t.Fatalf("natsio ack %+v", ack)
	}
}

// The config fields the binding gained for issue 15 carry the same JSON
// as nats.go's: a stream either client creates reads back the same in
// the other.
func TestStreamConfigInterop(t *testing.T) {
	js, njs := clients(t)
	ctx := ctxFor(t)
	got(js.CreateStream(ctx, jetstream.StreamConfig{Name: "FROM_NATSGO", Subjects: []string{"ngo.>"}, Storage: jetstream.MemoryStorage,
		AllowMsgTTL: true, SubjectDeleteMarkerTTL: 2 * time.Minute, AllowAtomicPublish: true, AllowMsgSchedules: true,
		ConsumerLimits:   jetstream.StreamConsumerLimits{InactiveThreshold: time.Hour, MaxAckPending: 20},
		SubjectTransform: &jetstream.SubjectTransformConfig{Source: "ngo.>", Destination: "stored.ngo.>"},
		RePublish:        &jetstream.RePublish{Source: "stored.ngo.>", Destination: "repub.ngo.>", HeadersOnly: true}})).must(t)
	c := got(njs.StreamInfo(ctx, "FROM_NATSGO")).must(t).Config
	if !c.AllowMsgTTL || c.SubjectDeleteMarkerTTL != 2*time.Minute || !c.AllowAtomicPublish || !c.AllowMsgSchedules ||
		c.ConsumerLimits != (natsio.StreamConsumerLimits{InactiveThreshold: time.Hour, MaxAckPending: 20}) ||
		c.SubjectTransform == nil || c.SubjectTransform.Destination != "stored.ngo.>" ||
		c.RePublish == nil || *c.RePublish != (natsio.RePublish{Source: "stored.ngo.>", Destination: "repub.ngo.>", HeadersOnly: true}) ||
		len(c.Extra) != 0 {
		t.Fatalf("natsio reads nats.go's stream as %+v", c)
	}

	got(njs.CreateStream(ctx, natsio.StreamConfig{Name: "FROM_NATSIO", Subjects: []string{"nio.>"}, Storage: natsio.MemoryStorage,
		AllowMsgTTL: true, SubjectDeleteMarkerTTL: 3 * time.Minute, AllowAtomicPublish: true,
		ConsumerLimits: natsio.StreamConsumerLimits{MaxAckPending: 7}})).must(t)
	n := got(js.Stream(ctx, "FROM_NATSIO")).must(t).CachedInfo().Config
	if !n.AllowMsgTTL || n.SubjectDeleteMarkerTTL != 3*time.Minute || !n.AllowAtomicPublish || n.ConsumerLimits.MaxAckPending != 7 {
		t.Fatalf("nats.go reads natsio's stream as %+v", n)
	}
}

// The last message by a wildcard subject: nats.go's GetLastMsgForSubject
// and the binding's GetLastMsg answer with the same message, with and
// without Direct Get ("*" matches one token, ">" any number).
func TestLastMsgByWildcardInterop(t *testing.T) {
	js, njs := clients(t)
	ctx := ctxFor(t)
	for _, direct := range []bool{true, false} {
		t.Run(fmt.Sprintf("allow_direct=%v", direct), func(t *testing.T) {
			name := fmt.Sprintf("WILD_%v", direct)
			prefix := fmt.Sprintf("wild%v", direct)
			got(njs.CreateStream(ctx, natsio.StreamConfig{Name: name, Subjects: []string{prefix + ".>"}, AllowDirect: direct})).must(t)
			// "*" last matches at 3, ">" at 4.
			for i, sub := range []string{"a", "b.x", "b", "c.y"} {
				got(njs.Publish(ctx, prefix+"."+sub, []byte(fmt.Sprint(i)))).must(t)
			}
			stream := got(js.Stream(ctx, name)).must(t)
			for filter, want := range map[string]uint64{prefix + ".*": 3, prefix + ".>": 4, prefix + ".b.*": 2} {
				n := got(stream.GetLastMsgForSubject(ctx, filter)).must(t)
				g := got(njs.GetLastMsg(ctx, name, filter)).must(t)
				sameStreamMsg(t, "last on "+filter, n, g)
				if g.Sequence != want {
					t.Fatalf("last on %s: seq %d, want %d", filter, g.Sequence, want)
				}
			}
			_, nerr := stream.GetLastMsgForSubject(ctx, prefix+".none.*")
			_, gerr := njs.GetLastMsg(ctx, name, prefix+".none.*")
			if !errors.Is(nerr, jetstream.ErrMsgNotFound) || !errors.Is(gerr, natsio.ErrMsgNotFound) {
				t.Fatalf("last on none.*: nats.go %v, natsio %v", nerr, gerr)
			}
		})
	}
}
