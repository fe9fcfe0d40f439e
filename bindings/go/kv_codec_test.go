package natsio_test

// Key-Value codecs: the library's built-ins and codecs written in Go on a
// bucket handle from WithCodecs, every verb, the stored form read through a
// plain handle on the same bucket (nats.go has no KV codecs: the stored
// keys and values are what other clients read).

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

func TestKeyValueBuiltinCodecs(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	plain := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "GCODEC", History: 5})).must(t)
	z := got(natsio.ZlibValueCodec(9)).must(t)
	kv := got(plain.WithCodecs(natsio.Base64KeyCodec(), z)).must(t)
	key := "user.john doe"
	if _, err := plain.Put(ctx, key, []byte("v")); !errors.Is(err, natsio.ErrInvalidKey) {
		t.Fatalf("plain put: %v", err)
	}
	r1 := got(kv.Put(ctx, key, []byte("first"))).must(t)

	// nats.js's Base64KeyCodec form, the value in the zlib format.
	if keys := got(plain.Keys(ctx)).must(t); !slices.Equal(keys, []string{"dXNlcg==.am9obiBkb2U="}) {
		t.Fatalf("stored keys %v", keys)
	}
	stored := got(plain.Get(ctx, "dXNlcg==.am9obiBkb2U=")).must(t)
	zr := got(zlib.NewReader(bytes.NewReader(stored.Value))).must(t)
	if v := got(io.ReadAll(zr)).must(t); string(v) != "first" {
		t.Fatalf("stored value inflates to %q", v)
	}

	e := got(kv.Get(ctx, key)).must(t)
	if e.Key != key || string(e.Value) != "first" {
		t.Fatalf("get: %s=%s", e.Key, e.Value)
	}
	r2 := got(kv.Update(ctx, key, []byte("second"), r1)).must(t)
	if _, err := kv.Create(ctx, key, []byte("x")); !errors.Is(err, natsio.ErrKeyExists) {
		t.Fatalf("create: %v", err)
	}
	got(kv.Create(ctx, "user.jane", []byte("created"))).must(t)
	keys := got(kv.Keys(ctx)).must(t)
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"user.jane", key}) {
		t.Fatalf("keys %v", keys)
	}
	h := got(kv.History(ctx, key)).must(t)
	if len(h) != 2 || string(h[0].Value) != "first" || string(h[1].Value) != "second" {
		t.Fatalf("history %v", h)
	}

	w := got(kv.Watch(ctx, "user.*")).must(t)
	defer w.Stop()
	var seen []string
	for {
		e := got(w.Next(ctx)).must(t)
		if e == nil {
			break
		}
		seen = append(seen, e.Key+"="+string(e.Value))
	}
	slices.Sort(seen)
	if !slices.Equal(seen, []string{"user.jane=created", key + "=second"}) {
		t.Fatalf("watched %v", seen)
	}
	noErr(t, kv.Delete(ctx, key, natsio.LastRevision(r2)))
	d := got(w.Next(ctx)).must(t)
	if d == nil || d.Key != key || d.Operation != natsio.KeyValueDelete {
		t.Fatalf("watched delete %+v", d)
	}
	if _, err := kv.Get(ctx, key); !errors.Is(err, natsio.ErrKeyDeleted) {
		t.Fatalf("get deleted: %v", err)
	}

	// Chains of built-ins, and the codec helpers.
	chain := got(natsio.NewKeyChainCodec(natsio.PathKeyCodec(), natsio.Base64URLKeyCodec())).must(t)
	if s := got(chain.EncodeKey("/a b/~~~")).must(t); s != "X3Jvb3Rf.YSBi.fn5-" {
		t.Fatalf("chain encodes to %q", s)
	}
	values := got(natsio.NewValueChainCodec(z, natsio.Base64ValueCodec())).must(t)
	chained := got(plain.WithCodecs(chain, values)).must(t)
	got(chained.Put(ctx, "/a b/~~~", []byte("chained"))).must(t)
	if v := got(chained.Get(ctx, "/a b/~~~")).must(t); string(v.Value) != "chained" {
		t.Fatalf("chained get %q", v.Value)
	}
	if _, err := natsio.NewKeyChainCodec(); !errors.Is(err, natsio.ErrKVNoCodecs) {
		t.Fatalf("empty chain: %v", err)
	}
	if _, err := natsio.ZlibValueCodec(10); !errors.Is(err, natsio.ErrInvalidArgument) {
		t.Fatalf("zlib 10: %v", err)
	}
	got(plain.Put(ctx, "raw", []byte("not zlib"))).must(t)
	zonly := got(plain.WithCodecs(nil, z)).must(t)
	if _, err := zonly.Get(ctx, "raw"); !errors.Is(err, natsio.ErrKVValueDecodeFailed) {
		t.Fatalf("undecodable value: %v", err)
	}
}

// reversed is a key codec written in Go without a filter form.
type reversed struct{}

func (reversed) EncodeKey(k string) (string, error) {
	if k == "fail" {
		return "", errors.New("refused")
	}
	r := []rune(k)
	slices.Reverse(r)
	return string(r), nil
}
func (c reversed) DecodeKey(k string) (string, error) { return c.EncodeKey(k) }

// xored is a value codec written in Go.
type xored struct{}

func (xored) EncodeValue(v []byte) ([]byte, error) {
	out := make([]byte, len(v))
	for i, b := range v {
		out[i] = b ^ 0x5a
	}
	return out, nil
}
func (c xored) DecodeValue(v []byte) ([]byte, error) { return c.EncodeValue(v) }

// upper is a filterable key codec written in Go (its keys lower case).
type upper struct{}

func (upper) EncodeKey(k string) (string, error)    { return strings.ToUpper(k), nil }
func (upper) DecodeKey(k string) (string, error)    { return strings.ToLower(k), nil }
func (upper) EncodeFilter(f string) (string, error) { return strings.ToUpper(f), nil }

func TestKeyValueGoCodecs(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	plain := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "GOWN"})).must(t)
	kv := got(plain.WithCodecs(reversed{}, xored{})).must(t)
	got(kv.Put(ctx, "ab.cd", []byte("AB"))).must(t)
	stored := got(plain.Get(ctx, "dc.ba")).must(t)
	if !bytes.Equal(stored.Value, []byte{'A' ^ 0x5a, 'B' ^ 0x5a}) {
		t.Fatalf("stored %v", stored.Value)
	}
	e := got(kv.Get(ctx, "ab.cd")).must(t)
	if e.Key != "ab.cd" || string(e.Value) != "AB" {
		t.Fatalf("get %s=%s", e.Key, e.Value)
	}
	if keys := got(kv.Keys(ctx)).must(t); !slices.Equal(keys, []string{"ab.cd"}) {
		t.Fatalf("keys %v", keys)
	}
	if _, err := kv.Watch(ctx, "ab.*"); !errors.Is(err, natsio.ErrKVWildcardNotSupported) || !errors.Is(err, natsio.ErrInvalidKey) {
		t.Fatalf("wildcard watch: %v", err)
	}
	if _, err := kv.Put(ctx, "fail", []byte("x")); !errors.Is(err, natsio.ErrKVKeyEncodeFailed) {
		t.Fatalf("failing codec: %v", err)
	}

	// A filterable Go codec: its filter form is used; a watch decodes.
	up := got(plain.WithCodecs(upper{}, nil)).must(t)
	got(up.Put(ctx, "x.one", []byte("1"))).must(t)
	w := got(up.Watch(ctx, "x.*")).must(t)
	defer w.Stop()
	if e := got(w.Next(ctx)).must(t); e == nil || e.Key != "x.one" || string(e.Value) != "1" {
		t.Fatalf("watched %+v", e)
	}
	if _, err := plain.Get(ctx, "X.ONE"); err != nil {
		t.Fatalf("stored upper case: %v", err)
	}
}
