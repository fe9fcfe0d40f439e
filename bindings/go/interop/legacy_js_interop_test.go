package interop

// The legacy JetStream API's types and reads across the two clients: the
// facade's (bindings/go/nats) StreamInfo, ConsumerInfo cluster and
// AccountInfo read nats.go's JSON of every field and write it back the
// same; its GetMsg and GetLastMsg (plain and Direct Get) give what
// nats.go's give.

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	facade "github.com/libnatsio/natsio/bindings/go/nats"
	"github.com/nats-io/nats.go"
)

// fillAll sets every field reachable from v (a pointer) to a non-zero
// value: 1, "x", true, a fixed time, one-element slices and maps.
func fillAll(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fillAll(v.Elem())
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillAll(v.Field(i))
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fillAll(s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		key, elem := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fillAll(key)
		fillAll(elem)
		m.SetMapIndex(key, elem)
		v.Set(m)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	}
}

// sameJSON fails unless the facade's type, read from nats.go's JSON of a
// fully set value, writes the same JSON back.
func sameJSON[N, F any](t *testing.T, what string) {
	t.Helper()
	var n N
	fillAll(reflect.ValueOf(&n))
	theirs, err := json.Marshal(&n)
	noErr(t, err)
	var f F
	noErr(t, json.Unmarshal(theirs, &f))
	ours, err := json.Marshal(&f)
	noErr(t, err)
	var a, b any
	noErr(t, json.Unmarshal(theirs, &a))
	noErr(t, json.Unmarshal(ours, &b))
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s:\nnats.go %s\nfacade  %s", what, theirs, ours)
	}
}

func TestLegacyJetStreamTypesJSONMatchNatsGo(t *testing.T) {
	sameJSON[nats.StreamInfo, facade.StreamInfo](t, "StreamInfo")
	sameJSON[nats.ConsumerInfo, facade.ConsumerInfo](t, "ConsumerInfo")
	sameJSON[nats.AccountInfo, facade.AccountInfo](t, "AccountInfo")
	sameJSON[nats.StreamInfoRequest, facade.StreamInfoRequest](t, "StreamInfoRequest")
	sameJSON[nats.StreamPurgeRequest, facade.StreamPurgeRequest](t, "StreamPurgeRequest")
}

// legacyPair is nats.go's legacy context and the facade's on one server.
func legacyPair(t *testing.T) (nats.JetStreamContext, facade.JetStreamContext) {
	t.Helper()
	url := startServer(t)
	nc, err := nats.Connect(url)
	noErr(t, err)
	t.Cleanup(nc.Close)
	theirs := got(nc.JetStream()).must(t)
	fc, err := facade.Connect(url)
	noErr(t, err)
	t.Cleanup(fc.Close)
	return theirs, got(fc.JetStream()).must(t)
}

func sameRawMsg(t *testing.T, what string, n *nats.RawStreamMsg, f *facade.RawStreamMsg) {
	t.Helper()
	if n.Subject != f.Subject || n.Sequence != f.Sequence || string(n.Data) != string(f.Data) ||
		!n.Time.Equal(f.Time) || !maps.EqualFunc(n.Header, f.Header, slices.Equal) {
		t.Errorf("%s differs:\nnats.go %+v\nfacade  %+v", what, n, f)
	}
}

func TestLegacyGetMsgMatchesNatsGo(t *testing.T) {
	theirs, ours := legacyPair(t)
	got(theirs.AddStream(&nats.StreamConfig{Name: "G", Subjects: []string{"g.>"}, AllowDirect: true})).must(t)
	for i, subject := range []string{"g.a", "g.b", "g.a"} {
		m := nats.NewMsg(subject)
		m.Header.Add("X-Order", string(rune('1'+i)))
		m.Header.Add("x-lower", "kept as written")
		m.Data = []byte(subject)
		got(theirs.PublishMsg(m)).must(t)
	}
	for _, opts := range [][]nats.JSOpt{nil, {nats.DirectGet()}} {
		var fopts []facade.JSOpt
		what := "GetMsg"
		if opts != nil {
			fopts, what = []facade.JSOpt{facade.DirectGet()}, "GetMsg with DirectGet"
		}
		for seq := uint64(1); seq <= 3; seq++ {
			sameRawMsg(t, what, got(theirs.GetMsg("G", seq, opts...)).must(t), got(ours.GetMsg("G", seq, fopts...)).must(t))
		}
		sameRawMsg(t, "last "+what, got(theirs.GetLastMsg("G", "g.a", opts...)).must(t),
			got(ours.GetLastMsg("G", "g.a", fopts...)).must(t))
	}
	sameRawMsg(t, "DirectGetNext", got(theirs.GetMsg("G", 2, nats.DirectGetNext("g.a"))).must(t),
		got(ours.GetMsg("G", 2, facade.DirectGetNext("g.a"))).must(t))

	// The deleted messages and subjects' counts StreamInfoRequest asks for.
	noErr(t, theirs.DeleteMsg("G", 2))
	req := nats.StreamInfoRequest{DeletedDetails: true, SubjectsFilter: ">"}
	n := got(theirs.StreamInfo("G", &req)).must(t)
	f := got(ours.StreamInfo("G", &facade.StreamInfoRequest{DeletedDetails: true, SubjectsFilter: ">"})).must(t)
	if !slices.Equal(n.State.Deleted, f.State.Deleted) || !maps.Equal(n.State.Subjects, f.State.Subjects) {
		t.Errorf("StreamInfoRequest: nats.go %+v, facade %+v", n.State, f.State)
	}
}
