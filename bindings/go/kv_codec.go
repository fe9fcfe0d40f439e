package natsio

// Key-Value codecs (the reference's kvcodec): built-in ones run by the
// library (the same stored form in every language), and codecs written in
// Go, called back from the library through natsioGoKvCodec.

/*
#include <stdint.h>
#include <stdlib.h>
#include "natsio_go.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"
)

// KeyCodec turns the keys a program uses into the keys stored, and back.
type KeyCodec interface {
	// EncodeKey is the stored form of key.
	EncodeKey(key string) (string, error)
	// DecodeKey is the key of a stored key.
	DecodeKey(stored string) (string, error)
}

// FilterableKeyCodec is a KeyCodec that can also encode a watch or listing
// filter, keeping its "*" and ">" tokens. A KeyCodec without it refuses
// filters with wildcards (ErrKVWildcardNotSupported).
type FilterableKeyCodec interface {
	KeyCodec
	// EncodeFilter is the stored form of filter, wildcards kept.
	EncodeFilter(filter string) (string, error)
}

// ValueCodec turns the values a program uses into the values stored, and
// back. Delete and purge markers carry no value and are not passed to it.
type ValueCodec interface {
	// EncodeValue is the stored form of value.
	EncodeValue(value []byte) ([]byte, error)
	// DecodeValue is the value of a stored value.
	DecodeValue(stored []byte) ([]byte, error)
}

// builtinKeyCodec is a key codec of the library (run there, not in Go).
type builtinKeyCodec struct{ ptr *C.natsio_kv_key_codec }

// builtinValueCodec is a value codec of the library.
type builtinValueCodec struct{ ptr *C.natsio_kv_value_codec }

func newBuiltinKeyCodec(p *C.natsio_kv_key_codec) *builtinKeyCodec {
	c := &builtinKeyCodec{ptr: p}
	runtime.SetFinalizer(c, func(c *builtinKeyCodec) { C.natsio_kv_key_codec_free(c.ptr) })
	return c
}

func newBuiltinValueCodec(p *C.natsio_kv_value_codec) *builtinValueCodec {
	c := &builtinValueCodec{ptr: p}
	runtime.SetFinalizer(c, func(c *builtinValueCodec) { C.natsio_kv_value_codec_free(c.ptr) })
	return c
}

func builtinKey(kind C.int32_t) KeyCodec {
	var p *C.natsio_kv_key_codec
	if C.natsio_kv_key_codec_new(kind, &p) != C.NATSIO_OK {
		panic("natsio: a built-in key codec could not be made")
	}
	return newBuiltinKeyCodec(p)
}

// Base64KeyCodec encodes each "."-separated token of a key in base64 on its
// own (filters keep their "*" and ">" tokens), in nats.js's Base64KeyCodec
// form: standard alphabet, "=" padding. A token whose encoding holds "+" is
// not a valid stored key (ErrInvalidKey), as with nats.js.
func Base64KeyCodec() KeyCodec { return builtinKey(C.NATSIO_KV_KEY_CODEC_BASE64) }

// Base64URLKeyCodec is Base64KeyCodec in orbit.go kvcodec's form (URL-safe
// alphabet, no padding): every key encodes to a valid stored key. Both
// decode either form.
func Base64URLKeyCodec() KeyCodec { return builtinKey(C.NATSIO_KV_KEY_CODEC_BASE64_URL) }

// PathKeyCodec stores path-style keys: "/a/b" as "_root_.a.b", "a/b/" as
// "a.b" (orbit.go kvcodec's PathCodec).
func PathKeyCodec() KeyCodec { return builtinKey(C.NATSIO_KV_KEY_CODEC_PATH) }

// NoOpKeyCodec leaves keys as they are.
func NoOpKeyCodec() KeyCodec { return builtinKey(C.NATSIO_KV_KEY_CODEC_NOOP) }

// Base64ValueCodec stores values in base64: URL-safe without padding when
// writing (orbit.go kvcodec's form), either form when reading.
func Base64ValueCodec() ValueCodec {
	var p *C.natsio_kv_value_codec
	if C.natsio_kv_value_codec_new(C.NATSIO_KV_VALUE_CODEC_BASE64, &p) != C.NATSIO_OK {
		panic("natsio: a built-in value codec could not be made")
	}
	return newBuiltinValueCodec(p)
}

// NoOpValueCodec leaves values as they are.
func NoOpValueCodec() ValueCodec {
	var p *C.natsio_kv_value_codec
	if C.natsio_kv_value_codec_new(C.NATSIO_KV_VALUE_CODEC_NOOP, &p) != C.NATSIO_OK {
		panic("natsio: a built-in value codec could not be made")
	}
	return newBuiltinValueCodec(p)
}

// ZlibValueCodec compresses values in the zlib format (RFC 1950) at level
// 0 (stored) to 9 (smallest), or -1 for zlib's default; another level is
// ErrInvalidArgument.
func ZlibValueCodec(level int) (ValueCodec, error) {
	lockThread()
	defer unlockThread()
	var p *C.natsio_kv_value_codec
	if st := C.natsio_kv_value_codec_zlib(C.int32_t(level), &p); st != C.NATSIO_OK {
		return nil, statusError(st)
	}
	return newBuiltinValueCodec(p), nil
}

func (c *builtinKeyCodec) step(key string, decode bool) (string, error) {
	if err := checkNUL(key); err != nil {
		return "", err
	}
	lockThread()
	defer unlockThread()
	ck := C.CString(key)
	defer C.free(unsafe.Pointer(ck))
	var out *C.char
	var st C.natsio_status
	if decode {
		st = C.natsio_kv_key_codec_decode(c.ptr, ck, &out)
	} else {
		st = C.natsio_kv_key_codec_encode(c.ptr, ck, &out)
	}
	runtime.KeepAlive(c)
	if st != C.NATSIO_OK {
		return "", statusError(st)
	}
	defer C.natsio_string_free(out)
	return C.GoString(out), nil
}

// EncodeKey runs the library's codec on key.
func (c *builtinKeyCodec) EncodeKey(key string) (string, error) { return c.step(key, false) }

// DecodeKey runs the library's codec on a stored key.
func (c *builtinKeyCodec) DecodeKey(stored string) (string, error) { return c.step(stored, true) }

// EncodeValue is not run in Go: the library applies its value codecs.
func (c *builtinValueCodec) EncodeValue([]byte) ([]byte, error) {
	return nil, &Error{Status: Status(C.NATSIO_ERR_ILLEGAL_STATE), Detail: "a built-in value codec runs in the library: attach it with KeyValue.WithCodecs"}
}

// DecodeValue: see EncodeValue.
func (c *builtinValueCodec) DecodeValue(b []byte) ([]byte, error) { return c.EncodeValue(b) }

// keyChain and valueChain chain codecs of which some are written in Go:
// encode in order, decode in reverse (a chain of built-ins only is the
// library's).
type keyChain []KeyCodec

func (c keyChain) EncodeKey(key string) (string, error) {
	for i, k := range c {
		var err error
		if key, err = k.EncodeKey(key); err != nil {
			return "", fmt.Errorf("codec %d of the chain: %w", i, err)
		}
	}
	return key, nil
}

func (c keyChain) DecodeKey(key string) (string, error) {
	for i := len(c) - 1; i >= 0; i-- {
		var err error
		if key, err = c[i].DecodeKey(key); err != nil {
			return "", fmt.Errorf("codec %d of the chain: %w", i, err)
		}
	}
	return key, nil
}

type filterableKeyChain struct{ keyChain }

func (c filterableKeyChain) EncodeFilter(filter string) (string, error) {
	for i, k := range c.keyChain {
		var err error
		if filter, err = k.(FilterableKeyCodec).EncodeFilter(filter); err != nil {
			return "", fmt.Errorf("codec %d of the chain: %w", i, err)
		}
	}
	return filter, nil
}

type valueChain []ValueCodec

func (c valueChain) EncodeValue(v []byte) ([]byte, error) {
	for i, codec := range c {
		var err error
		if v, err = codec.EncodeValue(v); err != nil {
			return nil, fmt.Errorf("codec %d of the chain: %w", i, err)
		}
	}
	return v, nil
}

func (c valueChain) DecodeValue(v []byte) ([]byte, error) {
	for i := len(c) - 1; i >= 0; i-- {
		var err error
		if v, err = c[i].DecodeValue(v); err != nil {
			return nil, fmt.Errorf("codec %d of the chain: %w", i, err)
		}
	}
	return v, nil
}

// NewKeyChainCodec applies codecs in order to encode and in reverse order
// to decode (ErrKVNoCodecs for none). A chain of built-in codecs runs in the
// library and encodes filters; a chain with a Go codec runs in Go and
// encodes filters only if every codec of it is a FilterableKeyCodec.
func NewKeyChainCodec(codecs ...KeyCodec) (KeyCodec, error) {
	if len(codecs) == 0 {
		return nil, &Error{Status: Status(C.NATSIO_ERR_KV_NO_CODECS), Detail: "a codec chain needs at least one codec"}
	}
	ptrs := make([]*C.natsio_kv_key_codec, 0, len(codecs))
	filterable := true
	for _, c := range codecs {
		if b, ok := c.(*builtinKeyCodec); ok {
			ptrs = append(ptrs, b.ptr)
			continue
		}
		if _, ok := c.(FilterableKeyCodec); !ok {
			filterable = false
		}
	}
	if len(ptrs) < len(codecs) {
		// Mixed: Go runs the chain, its built-ins through the library.
		chain := keyChain(append([]KeyCodec(nil), codecs...))
		if filterable && len(ptrs) == 0 {
			return filterableKeyChain{chain}, nil
		}
		return chain, nil
	}
	lockThread()
	defer unlockThread()
	arr := (*[1 << 16]*C.natsio_kv_key_codec)(C.malloc(C.size_t(len(ptrs)) * C.size_t(unsafe.Sizeof(ptrs[0]))))
	defer C.free(unsafe.Pointer(arr))
	copy(arr[:len(ptrs)], ptrs)
	var p *C.natsio_kv_key_codec
	st := C.natsio_kv_key_codec_chain(&arr[0], C.size_t(len(ptrs)), &p)
	runtime.KeepAlive(codecs)
	if st != C.NATSIO_OK {
		return nil, statusError(st)
	}
	return newBuiltinKeyCodec(p), nil
}

// NewValueChainCodec applies codecs in order to encode and in reverse
// order to decode (ErrKVNoCodecs for none). A chain of built-in codecs runs
// in the library; one with a Go codec may not hold built-ins.
func NewValueChainCodec(codecs ...ValueCodec) (ValueCodec, error) {
	if len(codecs) == 0 {
		return nil, &Error{Status: Status(C.NATSIO_ERR_KV_NO_CODECS), Detail: "a codec chain needs at least one codec"}
	}
	ptrs := make([]*C.natsio_kv_value_codec, 0, len(codecs))
	for _, c := range codecs {
		if b, ok := c.(*builtinValueCodec); ok {
			ptrs = append(ptrs, b.ptr)
		}
	}
	if len(ptrs) == 0 {
		return valueChain(append([]ValueCodec(nil), codecs...)), nil
	}
	if len(ptrs) < len(codecs) {
		return nil, &Error{Status: Status(C.NATSIO_ERR_INVALID_ARGUMENT), Detail: "a value codec chain mixes built-in codecs and Go codecs"}
	}
	lockThread()
	defer unlockThread()
	arr := (*[1 << 16]*C.natsio_kv_value_codec)(C.malloc(C.size_t(len(ptrs)) * C.size_t(unsafe.Sizeof(ptrs[0]))))
	defer C.free(unsafe.Pointer(arr))
	copy(arr[:len(ptrs)], ptrs)
	var p *C.natsio_kv_value_codec
	st := C.natsio_kv_value_codec_chain(&arr[0], C.size_t(len(ptrs)), &p)
	runtime.KeepAlive(codecs)
	if st != C.NATSIO_OK {
		return nil, statusError(st)
	}
	return newBuiltinValueCodec(p), nil
}

// goKeyCodec and goValueCodec are what the library's custom codecs call
// back into.
type goKeyCodec struct{ codec KeyCodec }
type goValueCodec struct{ codec ValueCodec }

//export natsioGoKvCodec
func natsioGoKvCodec(userData unsafe.Pointer, step C.int, input *C.char, n C.size_t, output *C.natsio_kv_codec_output) (st C.natsio_status) {
	// A panicking codec must not unwind into C: its step fails.
	defer func() {
		if recover() != nil {
			st = C.NATSIO_ERR_INTERNAL
		}
	}()
	var out []byte
	var err error
	switch c := valueOf(userData).(type) {
	case *goKeyCodec:
		in := C.GoStringN(input, C.int(n))
		var s string
		switch step {
		case C.GO_KV_KEY_ENCODE:
			s, err = c.codec.EncodeKey(in)
		case C.GO_KV_KEY_DECODE:
			s, err = c.codec.DecodeKey(in)
		default:
			s, err = c.codec.(FilterableKeyCodec).EncodeFilter(in)
		}
		out = []byte(s)
	case *goValueCodec:
		in := C.GoBytes(unsafe.Pointer(input), C.int(n))
		if step == C.GO_KV_VALUE_ENCODE {
			out, err = c.codec.EncodeValue(in)
		} else {
			out, err = c.codec.DecodeValue(in)
		}
	}
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return C.natsio_status(e.Status)
		}
		return C.NATSIO_ERR_INVALID_ARGUMENT
	}
	if len(out) == 0 {
		return C.natsio_kv_codec_output_set(output, nil, 0)
	}
	return C.natsio_kv_codec_output_set(output, unsafe.Pointer(&out[0]), C.size_t(len(out)))
}

// WithCodecs returns a handle on the same bucket whose every verb goes
// through the codecs (the reference's key_codec and value_codec): Put,
// Create, Update, Delete, Purge, Get, History, Keys, ListKeys and Watch
// encode the keys, filters and values they are given and decode what they
// return; only the encoded key is validated. nil leaves keys or values as
// they are. Built-in codecs run in the library; a codec written in Go is
// called back from the library: encoding on the goroutine calling a verb,
// decoding on a library thread as entries arrive, possibly at the same
// time, so it must be safe for concurrent use and quick. A codec's error
// fails the verb with ErrKVKeyEncodeFailed, ErrKVValueDecodeFailed, ...
// (its text is not kept; an *Error's status is). A wildcard filter with a
// KeyCodec that is no FilterableKeyCodec fails with
// ErrKVWildcardNotSupported.
func (kv *KeyValue) WithCodecs(key KeyCodec, value ValueCodec) (*KeyValue, error) {
	kc, kcMade, err := cKeyCodec(key)
	if err != nil {
		return nil, err
	}
	defer func() {
		if kcMade {
			C.natsio_kv_key_codec_free(kc)
		}
	}()
	vc, vcMade, err := cValueCodec(value)
	if err != nil {
		return nil, err
	}
	defer func() {
		if vcMade {
			C.natsio_kv_value_codec_free(vc)
		}
	}()
	lockThread()
	defer unlockThread()
	var p *C.natsio_kv
	st := C.natsio_kv_with_codecs(kv.ptr, kc, vc, &p)
	runtime.KeepAlive(kv)
	runtime.KeepAlive(key)
	runtime.KeepAlive(value)
	if st != C.NATSIO_OK {
		return nil, statusError(st)
	}
	return newKeyValue(p, kv.nc), nil
}

// cKeyCodec is the C codec of key for natsio_kv_with_codecs, and whether
// it was made for it (then freed once the bucket handle holds it).
func cKeyCodec(key KeyCodec) (p *C.natsio_kv_key_codec, made bool, err error) {
	switch k := key.(type) {
	case nil:
		return nil, false, nil
	case *builtinKeyCodec:
		return k.ptr, false, nil
	}
	h, box := newHandle(&goKeyCodec{codec: key})
	filterable := C.int(0)
	if _, ok := key.(FilterableKeyCodec); ok {
		filterable = 1
	}
	lockThread()
	defer unlockThread()
	if st := C.go_kv_key_codec_custom(C.uintptr_t(h), filterable, &p); st != C.NATSIO_OK {
		discardHandle(h, box)
		return nil, false, statusError(st)
	}
	return p, true, nil
}

// cValueCodec: as cKeyCodec.
func cValueCodec(value ValueCodec) (p *C.natsio_kv_value_codec, made bool, err error) {
	switch v := value.(type) {
	case nil:
		return nil, false, nil
	case *builtinValueCodec:
		return v.ptr, false, nil
	}
	h, box := newHandle(&goValueCodec{codec: value})
	lockThread()
	defer unlockThread()
	if st := C.go_kv_value_codec_custom(C.uintptr_t(h), &p); st != C.NATSIO_OK {
		discardHandle(h, box)
		return nil, false, statusError(st)
	}
	return p, true, nil
}
