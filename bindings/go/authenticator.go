package natsio

// The general authenticator (natsio_options_set_authenticator): one
// callback gives the CONNECT's credentials for each connection attempt,
// with the server's nonce. NkeyCallback is nats.go's Nkey(pubKey, sigCB)
// on it.

/*
#include <stdint.h>
#include <stdlib.h>
#include "natsio_go.h"
*/
import "C"

import (
	"encoding/base64"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// AuthFields are the credentials of one CONNECT, as the protocol names
// them (Token is CONNECT's auth_token, Sig the URL-safe base64 of the
// nonce's Ed25519 signature, without padding). An empty field is not
// sent, as nats.go omits empty ones.
type AuthFields struct {
	// User is the user of user/password authentication.
	User string
	// Pass is the password.
	Pass string
	// Token is a token (CONNECT's auth_token).
	Token string
	// JWT is a user JWT (decentralized authentication; with Sig).
	JWT string
	// Nkey is an NKey public key ("U..."; with Sig).
	Nkey string
	// Sig is the nonce's Ed25519 signature, URL-safe base64 without
	// padding (standard base64 is accepted too).
	Sig string
}

// AuthHandler gives the credentials of one connection attempt; nonce is
// the server's (empty when it sent none).
type AuthHandler func(nonce []byte) (AuthFields, error)

// Authenticator authenticates with the credentials handler gives, asked
// on every connect and reconnect (on a library thread, never two at once
// for one connection), with that server's nonce: the hook for keys kept
// elsewhere (an HSM, a vault) and for nats.js-style authenticators. An
// error, a panic or a field with a NUL byte fails that connection attempt
// with ErrConfig, whose text names the status the callback failed with
// (the *Error's status for an *Error; ErrInvalidArgument for a NUL byte or
// NkeyCallback's signature of other than 64 bytes); a reconnecting client
// keeps trying. The fields are sent as JSON: any text
// is safe in them. Credentials in the URL win over its user, password and
// token. One authentication kind per connection: with another, ErrConfig.
func Authenticator(handler AuthHandler) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			if handler == nil {
				return C.NATSIO_ERR_NULL_ARGUMENT
			}
			h, box := newHandle(&fieldsState{handler: handler})
			st := C.go_options_set_authenticator(o, C.uintptr_t(h))
			if st != C.NATSIO_OK {
				discardHandle(h, box)
			}
			return st
		})
	}
}

// NkeyCallback authenticates as the NKey user pubKey ("U..."), sign
// signing each server's nonce with its key (returning the 64-byte
// signature): nats.go's Nkey(pubKey, sigCB), for seeds kept outside the
// program. Nkey(seed) signs with a seed given here instead.
func NkeyCallback(pubKey string, sign SignatureHandler) Option {
	if sign == nil {
		return Authenticator(nil)
	}
	return Authenticator(func(nonce []byte) (AuthFields, error) {
		sig, err := sign(nonce)
		if err != nil {
			return AuthFields{}, err
		}
		if len(sig) != 64 {
			return AuthFields{}, &Error{Status: Status(C.NATSIO_ERR_INVALID_ARGUMENT), Detail: fmt.Sprintf("the signature has %d bytes, not 64", len(sig))}
		}
		return AuthFields{Nkey: pubKey, Sig: base64.RawURLEncoding.EncodeToString(sig)}, nil
	})
}

// NkeySign signs data (a server's nonce) with the NKey seed seed
// ("SU..."), as the library signs for NKey and JWT authentication
// (natsio_nkey_sign, nats.c's nats_Sign): for an Authenticator that holds
// its seed. It returns the seed's public key ("U...") and the signature
// as CONNECT carries it (URL-safe base64 without padding), for
// AuthFields' Nkey and Sig. ErrConfig for a bad seed, ErrInvalidArgument
// for a seed with a NUL byte.
func NkeySign(seed string, data []byte) (publicKey, sig string, err error) {
	if strings.IndexByte(seed, 0) >= 0 {
		return "", "", errorOf(ErrInvalidArgument, "the seed holds a NUL byte")
	}
	cSeed := C.CString(seed)
	defer C.free(unsafe.Pointer(cSeed))
	var bytes *C.uint8_t
	if len(data) > 0 {
		// Go memory without Go pointers, read during the call only.
		bytes = (*C.uint8_t)(unsafe.Pointer(&data[0]))
	}
	var cPub, cSig *C.char
	lockThread()
	err = statusError(C.natsio_nkey_sign(cSeed, bytes, C.size_t(len(data)), &cPub, &cSig))
	unlockThread()
	runtime.KeepAlive(data)
	if err != nil {
		return "", "", err
	}
	defer C.natsio_string_free(cPub)
	defer C.natsio_string_free(cSig)
	return C.GoString(cPub), C.GoString(cSig), nil
}

// fieldsState is the user data of an Authenticator; the C contract wants
// the strings it gives valid until the next call or the release, so the
// last ones are kept in C memory here.
type fieldsState struct {
	handler AuthHandler
	mu      sync.Mutex
	last    [6]*C.char
}

// keep replaces the kept strings by fields (C copies; "" is NULL).
func (f *fieldsState) keep(fields [6]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.last {
		C.free(unsafe.Pointer(f.last[i]))
		f.last[i] = nil
		if fields[i] != "" {
			f.last[i] = C.CString(fields[i])
		}
	}
}

func (f *fieldsState) released() { f.keep([6]string{}) }

//export natsioGoAuthFields
func natsioGoAuthFields(userData unsafe.Pointer, nonce *C.uint8_t, nonceLen C.size_t, out *C.natsio_auth_fields) (status C.natsio_status) {
	f := valueOf(userData).(*fieldsState)
	defer func() {
		if recover() != nil {
			status = C.NATSIO_ERR_INTERNAL
		}
	}()
	a, err := f.handler(C.GoBytes(unsafe.Pointer(nonce), C.int(nonceLen)))
	if err != nil {
		return statusOf(err)
	}
	fields := [6]string{a.User, a.Pass, a.Token, a.JWT, a.Nkey, a.Sig}
	for _, s := range fields {
		if strings.IndexByte(s, 0) >= 0 {
			return C.NATSIO_ERR_INVALID_ARGUMENT
		}
	}
	f.keep(fields)
	f.mu.Lock()
	defer f.mu.Unlock()
	out.user, out.pass, out.token = f.last[0], f.last[1], f.last[2]
	out.jwt, out.nkey, out.sig = f.last[3], f.last[4], f.last[5]
	return C.NATSIO_OK
}
