package nats_test

// The legacy JetStream API's management calls and types (nats.go's
// JetStreamManager: stream configurations read back from the server,
// account info, messages read and deleted one by one, its errors),
// against a real nats-server.

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/libnatsio/natsio/bindings/go/nats"
)

// connectJS connects to url (with connect options) and makes a legacy
// JetStream context on the connection.
func connectJS(t *testing.T, url string, opts ...nats.Option) (*nats.Conn, nats.JetStreamContext) {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// jsServer is a fresh JetStream server with a connection and context.
func jsServer(t *testing.T) (*nats.Conn, nats.JetStreamContext) {
	t.Helper()
	return connectJS(t, startServer(t, "", "-js", "-sd", t.TempDir()).url)
}

func addStream(t *testing.T, js nats.JetStreamManager, cfg *nats.StreamConfig) *nats.StreamInfo {
	t.Helper()
	info, err := js.AddStream(cfg)
	if err != nil {
		t.Fatalf("AddStream %s: %v", cfg.Name, err)
	}
	return info
}

// eventually retries check until it returns nil. The bound is generous
// (a busy CI machine under -race, a cluster electing leaders): a passing
// check returns at once, so only a failing test waits it out.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond) // polling the server's state: nothing to wait on
	}
}

// The StreamConfig fields nats.go has reach the server, which reports
// them back and acts on them.
func TestLegacyStreamConfigFields(t *testing.T) {
	nc, js := jsServer(t)
	cfg := &nats.StreamConfig{
		Name: "CFG", Subjects: []string{"cfg.>"}, Storage: nats.FileStorage,
		Compression: nats.S2Compression, FirstSeq: 10, AllowRollup: true, DenyDelete: true,
		Discard: nats.DiscardNew, MaxMsgsPerSubject: 2, DiscardNewPerSubject: true,
		Metadata:       map[string]string{"team": "blue"},
		ConsumerLimits: nats.StreamConsumerLimits{InactiveThreshold: time.Minute, MaxAckPending: 100},
		AllowMsgTTL:    true, SubjectDeleteMarkerTTL: 5 * time.Minute,
		RePublish: &nats.RePublish{Source: "cfg.>", Destination: "rp.>"},
	}
	info := addStream(t, js, cfg)
	got := info.Config
	if got.Compression != nats.S2Compression || got.FirstSeq != 10 || !got.AllowRollup || !got.DenyDelete ||
		!got.DiscardNewPerSubject || got.Metadata["team"] != "blue" ||
		got.ConsumerLimits != cfg.ConsumerLimits || !got.AllowMsgTTL || got.SubjectDeleteMarkerTTL != 5*time.Minute ||
		got.RePublish == nil || *got.RePublish != *cfg.RePublish || got.Sealed {
		t.Fatalf("config read back: %+v", got)
	}
	if si, err := js.StreamInfo("CFG"); err != nil || si.Cluster == nil || si.Cluster.Leader == "" {
		t.Errorf("StreamInfo.Cluster %+v (%v), want the server as leader", si, err)
	}

	// RePublish: each stored message is also published to rp.>.
	republished, err := nc.SubscribeSync("rp.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	ack, err := js.Publish("cfg.a", []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	if ack.Sequence != 10 {
		t.Errorf("first sequence %d, want FirstSeq 10", ack.Sequence)
	}
	if m, err := republished.NextMsg(5 * time.Second); err != nil || m.Subject != "rp.a" || string(m.Data) != "one" {
		t.Errorf("republished: %v %v", m, err)
	}
	// DiscardNewPerSubject with MaxMsgsPerSubject 2: a third one on cfg.a
	// is refused.
	if _, err := js.Publish("cfg.a", []byte("two")); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish("cfg.a", []byte("three")); err == nil {
		t.Error("a third message on cfg.a was stored despite DiscardNewPerSubject")
	}
	// AllowMsgTTL: a publish may set a TTL.
	if _, err := js.Publish("cfg.ttl", []byte("x"), nats.MsgTTL(time.Minute)); err != nil {
		t.Errorf("MsgTTL on an AllowMsgTTL stream: %v", err)
	}
	// AllowRollup: a rollup of cfg.a leaves only itself on cfg.a.
	rollup := nats.NewMsg("cfg.a")
	rollup.Header.Set(nats.MsgRollup, nats.MsgRollupSubject)
	rollup.Data = []byte("rolled")
	if _, err := js.PublishMsg(rollup); err != nil {
		t.Fatal(err)
	}
	si, err := js.StreamInfo("CFG", &nats.StreamInfoRequest{SubjectsFilter: "cfg.a"})
	if err != nil || si.State.Subjects["cfg.a"] != 1 {
		t.Errorf("after the rollup cfg.a holds %v (%v), want 1", si.State.Subjects, err)
	}
	// DenyDelete; DenyPurge (which roll-ups exclude) on a stream of its own.
	if err := js.DeleteMsg("CFG", 10); err == nil {
		t.Error("DeleteMsg on a DenyDelete stream succeeded")
	}
	if info := addStream(t, js, &nats.StreamConfig{Name: "KEEP", Subjects: []string{"keep"}, DenyPurge: true}); !info.Config.DenyPurge {
		t.Errorf("DenyPurge read back false")
	}
	if err := js.PurgeStream("KEEP"); err == nil {
		t.Error("PurgeStream on a DenyPurge stream succeeded")
	}
	// ConsumerLimits: a consumer without MaxAckPending gets the stream's.
	ci, err := js.AddConsumer("CFG", &nats.ConsumerConfig{Durable: "d", AckPolicy: nats.AckExplicitPolicy})
	if err != nil || ci.Config.MaxAckPending != 100 {
		t.Errorf("consumer MaxAckPending %v (%v), want the stream's 100", ci, err)
	}

	// Sealed: only an update sets it; a sealed stream stores nothing.
	cfg.Sealed = true
	info, err = js.UpdateStream(cfg)
	if err != nil || !info.Config.Sealed {
		t.Fatalf("UpdateStream Sealed: %v %v", info, err)
	}
	if _, err := js.Publish("cfg.b", []byte("late")); err == nil {
		t.Error("a sealed stream stored a message")
	}
}

// SubjectTransform rewrites the stored subjects; Sources and Mirror copy
// other streams, and their StreamInfo reports the copying; a mirror with
// MirrorDirect is an Alternate of its origin; a Domain on a source is
// sent as its External API prefix.
func TestLegacyStreamSourcesAndMirrors(t *testing.T) {
	_, js := jsServer(t)
	addStream(t, js, &nats.StreamConfig{Name: "ORIGIN", Subjects: []string{"in.>"}, Storage: nats.MemoryStorage,
		AllowDirect: true, SubjectTransform: &nats.SubjectTransformConfig{Source: "in.>", Destination: "orders.>"}})
	for i := 1; i <= 3; i++ {
		if _, err := js.Publish(fmt.Sprintf("in.%d", i), []byte{byte('0' + i)}); err != nil {
			t.Fatal(err)
		}
	}
	if m, err := js.GetMsg("ORIGIN", 1); err != nil || m.Subject != "orders.1" {
		t.Fatalf("stored subject %v (%v), want the transform's orders.1", m, err)
	}
	mirror := addStream(t, js, &nats.StreamConfig{Name: "COPY", Storage: nats.MemoryStorage, MirrorDirect: true,
		Mirror: &nats.StreamSource{Name: "ORIGIN"}})
	if mirror.Config.Mirror == nil || mirror.Config.Mirror.Name != "ORIGIN" || !mirror.Config.MirrorDirect {
		t.Fatalf("mirror config read back: %+v", mirror.Config)
	}
	addStream(t, js, &nats.StreamConfig{Name: "SOME", Storage: nats.MemoryStorage,
		Sources: []*nats.StreamSource{{Name: "ORIGIN", FilterSubject: "orders.2"}}})
	eventually(t, "mirror and source copied", func() error {
		m, err := js.StreamInfo("COPY")
		if err != nil {
			return err
		}
		s, err := js.StreamInfo("SOME")
		if err != nil {
			return err
		}
		if m.State.Msgs != 3 || s.State.Msgs != 1 {
			return fmt.Errorf("mirror holds %d, source %d", m.State.Msgs, s.State.Msgs)
		}
		if m.Mirror == nil || m.Mirror.Name != "ORIGIN" || m.Mirror.Lag != 0 {
			return fmt.Errorf("mirror info %+v", m.Mirror)
		}
		if len(s.Sources) != 1 || s.Sources[0].Name != "ORIGIN" || s.Sources[0].FilterSubject != "orders.2" {
			return fmt.Errorf("sources info %+v", s.Sources)
		}
		return nil
	})
	// A source's Domain becomes its External API prefix; with External
	// also set it is refused, as in nats.go.
	info := addStream(t, js, &nats.StreamConfig{Name: "FAR", Storage: nats.MemoryStorage,
		Sources: []*nats.StreamSource{{Name: "ORIGIN", Domain: "hub"}}})
	if ext := info.Config.Sources[0].External; ext == nil || ext.APIPrefix != "$JS.hub.API" {
		t.Errorf("source with Domain hub: External %+v", ext)
	}
	_, err := js.AddStream(&nats.StreamConfig{Name: "BAD", Sources: []*nats.StreamSource{
		{Name: "ORIGIN", Domain: "hub", External: &nats.ExternalStream{APIPrefix: "x"}}}})
	wantErr(t, "Domain and External", err, "nats: domain and external are both set")
}

// StreamInfoRequest asks for the deleted sequences and the subjects'
// counts (read page by page past the server's page size).
func TestLegacyStreamInfoRequest(t *testing.T) {
	_, js := jsServer(t)
	addStream(t, js, &nats.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Storage: nats.MemoryStorage})
	const subjects = 100_100 // more than the server's page of 100000
	for i := 0; i < subjects; i++ {
		if _, err := js.PublishAsync(fmt.Sprintf("s.%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(30 * time.Second):
		t.Fatal("publishes not acked")
	}
	for _, seq := range []uint64{3, 7} {
		if err := js.DeleteMsg("S", seq); err != nil {
			t.Fatal(err)
		}
	}
	plain, err := js.StreamInfo("S")
	if err != nil || plain.State.Deleted != nil || plain.State.Subjects != nil || plain.State.NumDeleted != 2 {
		t.Fatalf("plain StreamInfo state: %+v %v", plain.State.NumDeleted, err)
	}
	info, err := js.StreamInfo("S", &nats.StreamInfoRequest{DeletedDetails: true, SubjectsFilter: ">"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(info.State.Deleted, []uint64{3, 7}) {
		t.Errorf("Deleted %v, want [3 7]", info.State.Deleted)
	}
	if len(info.State.Subjects) != subjects-2 || info.State.Subjects["s.0"] != 1 || info.State.Subjects["s.100099"] != 1 {
		t.Errorf("%d subjects, want %d", len(info.State.Subjects), subjects-2)
	}
	_, err = js.StreamInfo("NONE", &nats.StreamInfoRequest{DeletedDetails: true})
	wantErr(t, "StreamInfo of no stream", err, "nats: stream not found", nats.ErrStreamNotFound)
}

// GetMsg and GetLastMsg read through the stream's leader (the message's
// own headers) or, with DirectGet, through Direct Get (with the server's
// Nats-* headers); DeleteMsg and SecureDeleteMsg remove one message.
func TestLegacyGetAndDeleteMsg(t *testing.T) {
	_, js := jsServer(t)
	addStream(t, js, &nats.StreamConfig{Name: "M", Subjects: []string{"m.>"}, Storage: nats.FileStorage, AllowDirect: true})
	addStream(t, js, &nats.StreamConfig{Name: "PLAIN", Subjects: []string{"p.>"}, Storage: nats.MemoryStorage})
	for i, subject := range []string{"m.a", "m.b", "m.a", "m.b"} {
		m := nats.NewMsg(subject)
		m.Header.Set("Order", fmt.Sprint(i+1))
		m.Data = []byte(fmt.Sprint("v", i+1))
		if _, err := js.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	m, err := js.GetMsg("M", 2)
	if err != nil || m.Subject != "m.b" || m.Sequence != 2 || string(m.Data) != "v2" || m.Time.IsZero() ||
		!reflect.DeepEqual(m.Header, nats.Header{"Order": {"2"}}) {
		t.Fatalf("GetMsg 2: %+v %v", m, err)
	}
	m, err = js.GetLastMsg("M", "m.a")
	if err != nil || m.Sequence != 3 || string(m.Data) != "v3" {
		t.Fatalf("GetLastMsg m.a: %+v %v", m, err)
	}
	_, err = js.GetMsg("M", 99)
	wantErr(t, "GetMsg of no message", err, "nats: message not found", nats.ErrMsgNotFound)
	_, err = js.GetLastMsg("M", "m.none")
	wantErr(t, "GetLastMsg of no message", err, "nats: message not found", nats.ErrMsgNotFound)
	_, err = js.GetMsg("NONE", 1)
	wantErr(t, "GetMsg of no stream", err, "nats: stream not found", nats.ErrStreamNotFound)
	_, err = js.GetMsg("", 1)
	wantErr(t, "GetMsg without a stream", err, "nats: stream name is required", nats.ErrStreamNameRequired)

	m, err = js.GetMsg("M", 2, nats.DirectGet())
	if err != nil || m.Subject != "m.b" || m.Sequence != 2 || string(m.Data) != "v2" || m.Time.IsZero() ||
		m.Header.Get("Order") != "2" || m.Header.Get(nats.JSStream) != "M" || m.Header.Get(nats.JSSequence) != "2" {
		t.Fatalf("GetMsg 2 with DirectGet: %+v %v", m, err)
	}
	m, err = js.GetLastMsg("M", "m.b", nats.DirectGet())
	if err != nil || m.Sequence != 4 || m.Header.Get(nats.JSSubject) != "m.b" {
		t.Fatalf("GetLastMsg m.b with DirectGet: %+v %v", m, err)
	}
	m, err = js.GetMsg("M", 2, nats.DirectGetNext("m.a"))
	if err != nil || m.Sequence != 3 {
		t.Fatalf("GetMsg from 2 with DirectGetNext m.a: %+v %v", m, err)
	}
	_, err = js.GetMsg("M", 5, nats.DirectGetNext("m.a"))
	wantErr(t, "DirectGetNext past the last", err, "nats: message not found", nats.ErrMsgNotFound)
	_, err = js.GetMsg("M", 99, nats.DirectGet())
	wantErr(t, "DirectGet of no message", err, "nats: message not found", nats.ErrMsgNotFound)
	_, err = js.GetMsg("PLAIN", 1, nats.DirectGet())
	wantErr(t, "DirectGet without AllowDirect", err, "nats: no responders available for request", nats.ErrNoResponders)

	if err := js.DeleteMsg("M", 1); err != nil {
		t.Fatal(err)
	}
	if err := js.SecureDeleteMsg("M", 2); err != nil {
		t.Fatal(err)
	}
	for _, seq := range []uint64{1, 2} {
		_, err = js.GetMsg("M", seq)
		wantErr(t, fmt.Sprint("GetMsg of deleted ", seq), err, "nats: message not found", nats.ErrMsgNotFound)
	}
	// nats.go returns the server's refusal as it is.
	err = js.DeleteMsg("M", 1)
	var apiErr *nats.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode == 0 || err.Error() != "nats: "+apiErr.Description {
		t.Errorf("DeleteMsg of a deleted message: %#v", err)
	}
	err = js.SecureDeleteMsg("NONE", 1)
	wantErr(t, "SecureDeleteMsg on no stream", err, "nats: stream not found", nats.ErrStreamNotFound)
}

// AccountInfo is the account's usage, limits and tiers; an account or a
// server without JetStream is told apart as in nats.go.
func TestLegacyAccountInfo(t *testing.T) {
	url := startServer(t, fmt.Sprintf(`
jetstream { store_dir: %q }
accounts {
  JS: { jetstream: { max_streams: 5, max_memory: 1MB, max_file: 2MB }, users: [{user: js, password: js}] }
  NOJS: { users: [{user: nojs, password: nojs}] }
}`, t.TempDir())).url
	_, js := connectJS(t, url, nats.UserInfo("js", "js"))
	addStream(t, js, &nats.StreamConfig{Name: "A", Subjects: []string{"a"}, Storage: nats.MemoryStorage, MaxBytes: 1000})
	if _, err := js.AddConsumer("A", &nats.ConsumerConfig{Durable: "c", AckPolicy: nats.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish("a", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	info, err := js.AccountInfo()
	if err != nil {
		t.Fatal(err)
	}
	if info.Streams != 1 || info.Consumers != 1 || info.Memory == 0 || info.ReservedMemory != 1000 ||
		info.Limits.MaxStreams != 5 || info.Limits.MaxMemory != 1<<20 || info.Limits.MaxStore != 2<<20 ||
		info.API.Level < 1 || info.API.Total == 0 {
		t.Errorf("account info %+v", info)
	}

	_, nojs := connectJS(t, url, nats.UserInfo("nojs", "nojs"))
	_, err = nojs.AccountInfo()
	wantErr(t, "AccountInfo without JetStream for the account", err, "nats: jetstream not enabled for account",
		nats.ErrJetStreamNotEnabledForAccount)
	_, err = nojs.AddStream(&nats.StreamConfig{Name: "X"})
	wantErr(t, "AddStream without JetStream for the account", err, "nats: jetstream not enabled for account",
		nats.ErrJetStreamNotEnabledForAccount)

	_, plain := connectJS(t, startServer(t, "").url)
	_, err = plain.AccountInfo()
	wantErr(t, "AccountInfo of a server without JetStream", err, "nats: jetstream not enabled", nats.ErrJetStreamNotEnabled)
}

// The errors of the management calls: nats.go's checks of the arguments,
// and the server's refusals matched by their err_code.
func TestLegacyManagementErrors(t *testing.T) {
	_, js := jsServer(t)
	addStream(t, js, &nats.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Storage: nats.MemoryStorage})

	_, err := js.AddStream(nil)
	wantErr(t, "AddStream(nil)", err, "nats: stream configuration is required", nats.ErrStreamConfigRequired)
	_, err = js.UpdateStream(nil)
	wantErr(t, "UpdateStream(nil)", err, "nats: stream configuration is required", nats.ErrStreamConfigRequired)
	_, err = js.StreamInfo("a.b")
	wantErr(t, "StreamInfo of a bad name", err, "nats: invalid stream name", nats.ErrInvalidStreamName)
	_, err = js.StreamInfo("NONE")
	wantErr(t, "StreamInfo of no stream", err, "nats: stream not found", nats.ErrStreamNotFound)
	if !errors.Is(&nats.APIError{ErrorCode: nats.JSErrCodeStreamNotFound}, nats.ErrStreamNotFound) {
		t.Error("an APIError with the stream-not-found code does not match ErrStreamNotFound")
	}

	_, err = js.UpdateConsumer("S", nil)
	wantErr(t, "UpdateConsumer(nil)", err, "nats: consumer configuration is required", nats.ErrConsumerConfigRequired)
	_, err = js.UpdateConsumer("S", &nats.ConsumerConfig{})
	wantErr(t, "UpdateConsumer without a name", err, "nats: consumer name is required", nats.ErrConsumerNameRequired)
	_, err = js.ConsumerInfo("S", "a b")
	wantErr(t, "ConsumerInfo of a bad name", err, "nats: invalid consumer name", nats.ErrInvalidConsumerName)
	err = js.DeleteConsumer("S", "")
	wantErr(t, "DeleteConsumer without a name", err, "nats: consumer name is required", nats.ErrConsumerNameRequired)
	_, err = js.AddConsumer("S", &nats.ConsumerConfig{Durable: "d", FilterSubject: "s."})
	wantErr(t, "a filter ending with a dot", err, `nats: invalid filter subject: "s."`, nats.ErrInvalidFilterSubject)

	if _, err := js.AddConsumer("S", &nats.ConsumerConfig{Durable: "d", AckPolicy: nats.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.AddConsumer("S", &nats.ConsumerConfig{Durable: "d", AckPolicy: nats.AckExplicitPolicy}); err != nil {
		t.Errorf("AddConsumer again with the same config: %v", err)
	}
	_, err = js.AddConsumer("S", &nats.ConsumerConfig{Durable: "d", AckPolicy: nats.AckExplicitPolicy, Description: "other"})
	wantErr(t, "AddConsumer with another config", err,
		`nats: consumer name already in use: creating consumer "d" on stream "S"`, nats.ErrConsumerNameAlreadyInUse)

	_, err = js.AddConsumer("S", &nats.ConsumerConfig{Name: "f", FilterSubjects: []string{"s.>", "s.a"}})
	wantErr(t, "overlapping filters", err, "nats: consumer subject filters cannot overlap", nats.ErrOverlappingFilterSubjects)
	_, err = js.AddConsumer("S", &nats.ConsumerConfig{Name: "f", FilterSubject: "s.a", FilterSubjects: []string{"s.b"}})
	wantErr(t, "FilterSubject and FilterSubjects", err,
		"nats: consumer cannot have both FilterSubject and FilterSubjects specified", nats.ErrDuplicateFilterSubjects)
	_, err = js.AddConsumer("S", &nats.ConsumerConfig{Name: "f", FilterSubjects: []string{"s.a", ""}})
	if !errors.Is(err, nats.ErrEmptyFilter) {
		t.Errorf("an empty filter: %v", err)
	}

	err = js.PurgeStream("S", &nats.StreamPurgeRequest{Sequence: 5, Keep: 1})
	wantErr(t, "a purge with Sequence and Keep", err, "nats: bad request: invalid purge request body", nats.ErrBadRequest)
}

// StreamPurgeRequest narrows PurgeStream.
func TestLegacyPurgeRequest(t *testing.T) {
	_, js := jsServer(t)
	addStream(t, js, &nats.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Storage: nats.MemoryStorage})
	for _, subject := range []string{"s.a", "s.b", "s.a", "s.b", "s.a"} {
		if _, err := js.Publish(subject, nil); err != nil {
			t.Fatal(err)
		}
	}
	state := func() map[string]uint64 {
		info, err := js.StreamInfo("S", &nats.StreamInfoRequest{SubjectsFilter: ">"})
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Subjects
	}
	if err := js.PurgeStream("S", &nats.StreamPurgeRequest{Subject: "s.a", Keep: 1}); err != nil {
		t.Fatal(err)
	}
	if got := state(); !reflect.DeepEqual(got, map[string]uint64{"s.a": 1, "s.b": 2}) {
		t.Errorf("after purging s.a keeping 1: %v", got)
	}
	if err := js.PurgeStream("S", &nats.StreamPurgeRequest{Sequence: 4}); err != nil {
		t.Fatal(err)
	}
	if got := state(); !reflect.DeepEqual(got, map[string]uint64{"s.a": 1, "s.b": 1}) {
		t.Errorf("after purging below 4: %v", got)
	}
}

// A message of an AckNone consumer (or an ordered one) cannot be acked,
// as in nats.go.
func TestLegacyAckNoneRefusesAcks(t *testing.T) {
	_, js := jsServer(t)
	addStream(t, js, &nats.StreamConfig{Name: "S", Subjects: []string{"s"}, Storage: nats.MemoryStorage})
	if _, err := js.Publish("s", []byte("x")); err != nil {
		t.Fatal(err)
	}
	for _, opts := range [][]nats.SubOpt{{nats.AckNone()}, {nats.OrderedConsumer()}} {
		sub, err := js.SubscribeSync("s", opts...)
		if err != nil {
			t.Fatal(err)
		}
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, "Ack", m.Ack(), "nats: cannot acknowledge a message for a consumer with AckNone policy", nats.ErrCantAckIfConsumerAckNone)
		if !errors.Is(m.Nak(), nats.ErrCantAckIfConsumerAckNone) || !errors.Is(m.AckSync(), nats.ErrCantAckIfConsumerAckNone) {
			t.Error("Nak or AckSync of an AckNone message did not fail")
		}
		if _, err := m.Metadata(); err != nil {
			t.Errorf("Metadata of an AckNone message: %v", err)
		}
		sub.Unsubscribe()
	}
	sub, err := js.PullSubscribe("s", "p", nats.AckNone())
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := sub.Fetch(1)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(msgs[0].Ack(), nats.ErrCantAckIfConsumerAckNone) {
		t.Error("Ack of a pull AckNone message did not fail")
	}
	// An explicit consumer's messages are acked as before.
	sub, err = js.SubscribeSync("s")
	if err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(5 * time.Second)
	if err != nil || m.AckSync() != nil {
		t.Errorf("AckSync of an explicit consumer's message: %v", err)
	}
}

// CleanupPublisher fails the publishes awaiting their ack with
// ErrJetStreamPublisherClosed (Err and the error handler), closes
// PublishAsyncComplete, and leaves the context usable.
func TestLegacyCleanupPublisher(t *testing.T) {
	nc, err := nats.Connect(startServer(t, "", "-js", "-sd", t.TempDir()).url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	failed := make(chan error, 10)
	js, err := nc.JetStream(nats.PublishAsyncErrHandler(func(_ nats.JetStream, _ *nats.Msg, err error) { failed <- err }))
	if err != nil {
		t.Fatal(err)
	}
	addStream(t, js, &nats.StreamConfig{Name: "S", Subjects: []string{"s"}, Storage: nats.MemoryStorage})
	// A subject nobody answers on awaits its ack until cleaned up; an
	// acked publish before keeps its ack.
	acked, err := js.PublishAsync("s", []byte("ok"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ack := <-acked.Ok():
		if ack.Sequence != 1 {
			t.Fatalf("ack %+v", ack)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no ack")
	}
	sub, err := nc.SubscribeSync("silent") // takes the publish, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	pending, err := js.PublishAsync("silent", []byte("lost"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sub.NextMsg(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if js.PublishAsyncPending() != 1 {
		t.Fatalf("pending %d, want 1", js.PublishAsyncPending())
	}
	complete := js.PublishAsyncComplete()
	js.CleanupPublisher()
	select {
	case err := <-pending.Err():
		wantErr(t, "the pending publish", err, "nats: jetstream context closed", nats.ErrJetStreamPublisherClosed)
	case <-time.After(5 * time.Second):
		t.Fatal("the pending publish did not fail")
	}
	select {
	case err := <-failed:
		if !errors.Is(err, nats.ErrJetStreamPublisherClosed) {
			t.Errorf("error handler got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the error handler was not called")
	}
	select {
	case <-complete:
	case <-time.After(5 * time.Second):
		t.Fatal("PublishAsyncComplete did not close")
	}
	if n := js.PublishAsyncPending(); n != 0 {
		t.Errorf("pending after cleanup %d, want 0", n)
	}
	again, err := js.PublishAsync("s", []byte("again"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ack := <-again.Ok():
		if ack.Sequence != 2 {
			t.Errorf("ack after cleanup %+v", ack)
		}
	case err := <-again.Err():
		t.Fatalf("publish after cleanup: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("no ack after cleanup")
	}
	js.CleanupPublisher() // nothing pending: nothing happens
	select {
	case err := <-failed:
		t.Errorf("a second cleanup failed a publish: %v", err)
	default:
	}
}

// The legacy types' JSON is the server's and their texts nats.go's;
// MaxRequest* options reach the pull consumer; the object digest helpers
// read and write ObjectInfo.Digest's form.
func TestLegacyTypesAndHelpers(t *testing.T) {
	for _, c := range []struct {
		v    nats.StoreCompression
		json string
		text string
	}{{nats.NoCompression, `"none"`, "None"}, {nats.S2Compression, `"s2"`, "S2"}} {
		b, err := json.Marshal(c.v)
		var back nats.StoreCompression
		if err != nil || string(b) != c.json || c.v.String() != c.text || json.Unmarshal(b, &back) != nil || back != c.v {
			t.Errorf("%v: %s %v %q", c.v, b, err, c.v.String())
		}
	}
	if _, err := json.Marshal(nats.StoreCompression(7)); err == nil || nats.StoreCompression(7).String() != "Unknown StoreCompression" {
		t.Error("an unknown compression marshalled")
	}
	sum := sha256.New()
	sum.Write([]byte("hello"))
	digest := nats.GetObjectDigestValue(sum)
	if digest != "SHA-256=LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=" {
		t.Errorf("digest %q", digest)
	}
	raw, err := nats.DecodeObjectDigest(digest)
	if err != nil || !reflect.DeepEqual(raw, sum.Sum(nil)) {
		t.Errorf("decoded %x %v", raw, err)
	}
	if _, err := nats.DecodeObjectDigest("nodigest"); !errors.Is(err, nats.ErrInvalidDigestFormat) {
		t.Errorf("a digest without algorithm: %v", err)
	}

	_, js := jsServer(t)
	addStream(t, js, &nats.StreamConfig{Name: "S", Subjects: []string{"s"}, Storage: nats.MemoryStorage})
	if _, err := js.PullSubscribe("s", "limited", nats.MaxRequestBatch(10), nats.MaxRequestExpires(time.Minute),
		nats.MaxRequestMaxBytes(1024)); err != nil {
		t.Fatal(err)
	}
	ci, err := js.ConsumerInfo("S", "limited")
	if err != nil || ci.Config.MaxRequestBatch != 10 || ci.Config.MaxRequestExpires != time.Minute || ci.Config.MaxRequestMaxBytes != 1024 {
		t.Errorf("pull limits read back: %+v %v", ci, err)
	}
}

// IsJSControlMessage tells a push consumer's idle heartbeats on its
// deliver subject.
func TestLegacyIsJSControlMessage(t *testing.T) {
	nc, js := jsServer(t)
	addStream(t, js, &nats.StreamConfig{Name: "S", Subjects: []string{"s"}, Storage: nats.MemoryStorage})
	deliveries, err := nc.SubscribeSync("hb.deliver")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish("s", []byte("data")); err != nil {
		t.Fatal(err)
	}
	if _, err := js.AddConsumer("S", &nats.ConsumerConfig{Durable: "hb", DeliverSubject: "hb.deliver",
		AckPolicy: nats.AckNonePolicy, Heartbeat: 100 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	m, err := deliveries.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := nats.IsJSControlMessage(m); ok || string(m.Data) != "data" {
		t.Errorf("the stored message taken for a control message: %+v", m)
	}
	m, err = deliveries.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if ok, kind := nats.IsJSControlMessage(m); !ok || kind != 1 {
		t.Errorf("heartbeat: %v %d (%+v)", ok, kind, m)
	}
	built := nats.NewMsg("x")
	built.Header.Set("Status", "100")
	built.Header.Set("Description", "FlowControl Request")
	if ok, kind := nats.IsJSControlMessage(built); !ok || kind != 2 {
		t.Errorf("a flow control message built by hand: %v %d", ok, kind)
	}
}

// startCluster starts a JetStream cluster C1 of three servers and returns
// the first one's URL once JetStream answers.
func startCluster(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("NATS_SERVER_BIN")
	if bin == "" {
		bin = "../../../.tools/nats-server-2.14.3/nats-server"
	}
	ports := freePorts(t, 6) // three client ports, three route ports
	var routes []string
	for _, p := range ports[3:] {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
	}
	for i := range 3 {
		conf := filepath.Join(t.TempDir(), "server.conf")
		err := os.WriteFile(conf, []byte(fmt.Sprintf(`
server_name: n%d
listen: 127.0.0.1:%d
jetstream { store_dir: %q }
cluster { name: C1, listen: 127.0.0.1:%d, routes: [%s] }`,
			i+1, ports[i], t.TempDir(), ports[3+i], strings.Join(routes, ", "))), 0o600)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-c", conf)
		if err := cmd.Start(); err != nil {
			t.Fatalf("nats-server (set NATS_SERVER_BIN): %v", err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	url := fmt.Sprintf("nats://127.0.0.1:%d", ports[0])
	var nc *nats.Conn
	eventually(t, "cluster up", func() (err error) {
		nc, err = nats.Connect(url)
		return err
	})
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	// JetStream answers once the cluster has elected its meta leader.
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := js.AccountInfo()
		if err == nil {
			return url
		}
		if time.Now().After(deadline) {
			t.Fatalf("JetStream cluster not ready: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // polling the election: nothing to wait on
	}
}

// In a cluster, StreamInfo and ConsumerInfo name the cluster, the leader
// and the other replicas; Placement picks the cluster; a MirrorDirect
// mirror is an Alternate of its origin.
func TestLegacyClusterInfo(t *testing.T) {
	_, js := connectJS(t, startCluster(t))
	// The meta leader answers before every peer has joined it: until then
	// a stream of three replicas is refused (insufficient resources).
	var info *nats.StreamInfo
	eventually(t, "a stream of three replicas", func() (err error) {
		info, err = js.AddStream(&nats.StreamConfig{Name: "R3", Subjects: []string{"r3.>"}, Replicas: 3,
			Placement: &nats.Placement{Cluster: "C1"}, AllowDirect: true})
		return err
	})
	_, err := js.AddStream(&nats.StreamConfig{Name: "ELSEWHERE", Subjects: []string{"x"}, Placement: &nats.Placement{Cluster: "C2"}})
	var apiErr *nats.APIError
	if !errors.As(err, &apiErr) || apiErr.Description != "no suitable peers for placement" {
		t.Errorf("a stream placed in no cluster: %#v", err)
	}
	if info.Config.Placement == nil || info.Config.Placement.Cluster != "C1" {
		t.Errorf("placement read back %+v", info.Config.Placement)
	}
	checkCluster := func(what string, c *nats.ClusterInfo) error {
		if c == nil || c.Name != "C1" || c.Leader == "" || c.RaftGroup == "" || len(c.Replicas) != 2 {
			return fmt.Errorf("%s cluster %+v", what, c)
		}
		for _, p := range c.Replicas {
			if p.Name == "" || p.Name == c.Leader || p.Peer == "" || !p.Current {
				return fmt.Errorf("%s replica %+v (leader %s)", what, p, c.Leader)
			}
		}
		return nil
	}
	// The stream's own leader may still be being elected.
	eventually(t, "a consumer of the replicated stream", func() error {
		_, err := js.AddConsumer("R3", &nats.ConsumerConfig{Durable: "c", AckPolicy: nats.AckExplicitPolicy})
		return err
	})
	addStream(t, js, &nats.StreamConfig{Name: "R3COPY", Replicas: 1, MirrorDirect: true, Mirror: &nats.StreamSource{Name: "R3"}})
	eventually(t, "cluster infos", func() error {
		si, err := js.StreamInfo("R3")
		if err != nil {
			return err
		}
		if err := checkCluster("stream", si.Cluster); err != nil {
			return err
		}
		ci, err := js.ConsumerInfo("R3", "c")
		if err != nil {
			return err
		}
		if err := checkCluster("consumer", ci.Cluster); err != nil {
			return err
		}
		var alternates []string
		for _, a := range si.Alternates {
			if a.Cluster != "C1" {
				return fmt.Errorf("alternate %+v", a)
			}
			alternates = append(alternates, a.Name)
		}
		if len(alternates) != 2 || !slices.Contains(alternates, "R3") || !slices.Contains(alternates, "R3COPY") {
			return fmt.Errorf("alternates %v, want R3 and its MirrorDirect mirror", alternates)
		}
		return nil
	})
}

// InitialConsumerPending is what a consumer the subscription created had
// to deliver: push, pull and ordered alike; 0 when it bound to an existing
// consumer; a core subscription is not a JetStream one.
func TestLegacyInitialConsumerPending(t *testing.T) {
	nc, js := jsServer(t)
	addStream(t, js, &nats.StreamConfig{Name: "PENDING", Subjects: []string{"pending.>"}, Storage: nats.MemoryStorage})
	for i := range 5 {
		if _, err := js.Publish(fmt.Sprintf("pending.%d", i), []byte("m")); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(what string, sub *nats.Subscription, err error, want uint64) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n, err := sub.InitialConsumerPending(); err != nil || n != want {
			t.Errorf("%s: InitialConsumerPending = %d, %v; want %d", what, n, err, want)
		}
	}
	push, err := js.SubscribeSync("pending.>")
	expect("push", push, err, 5)
	pull, err := js.PullSubscribe("pending.>", "DUR")
	expect("pull, created", pull, err, 5)
	bound, err := js.PullSubscribe("pending.>", "DUR")
	expect("pull, bound", bound, err, 0)
	ordered, err := js.SubscribeSync("pending.>", nats.OrderedConsumer())
	expect("ordered", ordered, err, 5)
	core, err := nc.SubscribeSync("pending.core")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.InitialConsumerPending(); !errors.Is(err, nats.ErrTypeSubscription) {
		t.Errorf("a core subscription: %v, want ErrTypeSubscription", err)
	}
}

// AckFlowControlPolicy travels as "flow_control" and prints as nats.go's;
// a durable push consumer made with it (as a stream sources through) is
// created and reads back with it, and the server refuses it on a pull
// consumer.
func TestLegacyAckFlowControlPolicy(t *testing.T) {
	b, err := json.Marshal(nats.AckFlowControlPolicy)
	var back nats.AckPolicy
	if err != nil || string(b) != `"flow_control"` || json.Unmarshal(b, &back) != nil || back != nats.AckFlowControlPolicy ||
		nats.AckFlowControlPolicy.String() != "AckFlowControl" {
		t.Fatalf("%s %v %v %q", b, err, back, nats.AckFlowControlPolicy.String())
	}
	if nats.AckPolicy(4).String() != "Unknown AckPolicy" {
		t.Errorf("AckPolicy(4) is %q", nats.AckPolicy(4).String())
	}

	_, js := jsServer(t)
	addStream(t, js, &nats.StreamConfig{Name: "FC", Subjects: []string{"fc"}, Storage: nats.MemoryStorage})
	ci, err := js.AddConsumer("FC", &nats.ConsumerConfig{Durable: "fcsrc", AckPolicy: nats.AckFlowControlPolicy,
		DeliverSubject: "fc_deliver.sink", FlowControl: true, Heartbeat: time.Second, MaxAckPending: 100})
	if err != nil {
		t.Fatal(err)
	}
	if ci.Config.AckPolicy != nats.AckFlowControlPolicy {
		t.Errorf("created with %v", ci.Config.AckPolicy)
	}
	if ci, err = js.ConsumerInfo("FC", "fcsrc"); err != nil || ci.Config.AckPolicy != nats.AckFlowControlPolicy {
		t.Errorf("read back: %+v, %v", ci, err)
	}
	_, err = js.AddConsumer("FC", &nats.ConsumerConfig{Durable: "fcpull", AckPolicy: nats.AckFlowControlPolicy})
	var apiErr *nats.APIError
	if !errors.As(err, &apiErr) {
		t.Errorf("a pull consumer with AckFlowControlPolicy: %v, want the server's refusal", err)
	}
}
