package natsio_test

// The general authenticator (Authenticator, NkeyCallback) against NKey and
// user/password servers: the nonce is signed on every connect and
// reconnect, wrong signatures are refused, failures fail the attempt.

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// nkeyUser is the fixture NKey user: its public key and seed, and a
// server that knows it.
func nkeyUser(t *testing.T) (pub, seed string, s *natsServer) {
	p, err1 := os.ReadFile(fixture(t, "auth/nkey-user.pub"))
	k, err2 := os.ReadFile(fixture(t, "auth/nkey-user.nk"))
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	pub, seed = strings.TrimSpace(string(p)), strings.TrimSpace(string(k))
	return pub, seed, startConfiguredServer(t, fmt.Sprintf("authorization { users = [ { nkey: %s } ] }", pub))
}

// nonceLog records the nonces a callback was given.
type nonceLog struct {
	mu     sync.Mutex
	nonces []string
}

func (l *nonceLog) add(nonce []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nonces = append(l.nonces, string(nonce))
}

func (l *nonceLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.nonces...)
}

func TestNkeyCallbackSignsEveryNonce(t *testing.T) {
	pub, seed, s := nkeyUser(t)
	var log nonceLog
	nc := connectTo(t, s.url, natsio.ReconnectWait(20*time.Millisecond, 100*time.Millisecond),
		natsio.NkeyCallback(pub, func(nonce []byte) ([]byte, error) {
			log.add(nonce)
			return signWithSeed(t, seed, nonce), nil
		}))
	roundTrip(t, nc)
	if got := log.get(); len(got) != 1 || got[0] == "" {
		t.Fatalf("nonces at connect: %q", got)
	}
	s.restart(t)
	eventually(t, "a reconnect", func() bool { return nc.Stats().Reconnects == 1 && nc.Status() == natsio.Connected })
	roundTrip(t, nc)
	if got := log.get(); len(got) < 2 || got[1] == "" || got[1] == got[0] {
		t.Fatalf("nonces: %q (want a new one at the reconnect)", got)
	}

	// A signature by another key, a short one, a failing signer.
	other, err := os.ReadFile(fixture(t, "auth/nkey-other.nk"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = natsio.Connect(s.url, natsio.NoReconnect(), natsio.NkeyCallback(pub, func(nonce []byte) ([]byte, error) {
		return signWithSeed(t, string(other), nonce), nil
	}))
	wantIs(t, err, natsio.ErrAuthorization)
	_, err = natsio.Connect(s.url, natsio.NoReconnect(), natsio.NkeyCallback(pub, func([]byte) ([]byte, error) {
		return make([]byte, 10), nil
	}))
	wantIs(t, err, natsio.ErrConfig)
	if !strings.Contains(err.Error(), "status 102 (invalid argument)") {
		t.Fatalf("error %q does not say the signature was refused", err)
	}
	_, err = natsio.Connect(s.url, natsio.NoReconnect(), natsio.NkeyCallback(pub, func([]byte) ([]byte, error) {
		return nil, errors.New("HSM unavailable")
	}))
	wantIs(t, err, natsio.ErrConfig)
	if !strings.Contains(err.Error(), "authenticator callback failed") {
		t.Fatalf("error %q does not name the callback", err)
	}
	_, err = natsio.Connect(s.url, natsio.NkeyCallback(pub, nil))
	wantIs(t, err, natsio.ErrNullArgument)
}

// NkeySign: the library's signer, for an Authenticator holding its seed:
// the same signature as an independent Ed25519 signer's, and the server
// accepts it.
func TestNkeySignSignsAsAnIndependentSigner(t *testing.T) {
	pub, seed, s := nkeyUser(t)
	nonce := []byte("a server nonce")
	gotPub, sig, err := natsio.NkeySign(seed, nonce)
	if err != nil {
		t.Fatal(err)
	}
	if gotPub != pub {
		t.Fatalf("public key %q, want %q", gotPub, pub)
	}
	if want := base64.RawURLEncoding.EncodeToString(signWithSeed(t, seed, nonce)); sig != want {
		t.Fatalf("signature %q, want %q", sig, want)
	}
	nc := connectTo(t, s.url, natsio.NoReconnect(), natsio.Authenticator(func(nonce []byte) (natsio.AuthFields, error) {
		p, sg, err := natsio.NkeySign(seed, nonce)
		return natsio.AuthFields{Nkey: p, Sig: sg}, err
	}))
	roundTrip(t, nc)

	_, _, err = natsio.NkeySign("SUnotaseed", nil)
	wantIs(t, err, natsio.ErrConfig)
	_, _, err = natsio.NkeySign("S\x00U", nil)
	wantIs(t, err, natsio.ErrInvalidArgument)
}

func TestAuthenticatorFields(t *testing.T) {
	// The fields go as JSON: quotes and CR LF reach the server intact.
	const password = "p\"w},\"user\":\"root\"}\r\nPUB evil 1\r\n"
	s := startConfiguredServer(t, `authorization { user: alice, password: "p\"w},\"user\":\"root\"}\r\nPUB evil 1\r\n" }`)
	var log nonceLog
	nc := connectTo(t, s.url, natsio.NoReconnect(), natsio.Authenticator(func(nonce []byte) (natsio.AuthFields, error) {
		log.add(nonce)
		return natsio.AuthFields{User: "alice", Pass: password}, nil
	}))
	roundTrip(t, nc)
	if got := log.get(); len(got) != 1 || got[0] != "" {
		t.Fatalf("nonces %q: want one empty (a user/password server sends none)", got)
	}
	_, err := natsio.Connect(s.url, natsio.NoReconnect(), natsio.Authenticator(func([]byte) (natsio.AuthFields, error) {
		return natsio.AuthFields{User: "alice", Pass: "guess"}, nil
	}))
	wantIs(t, err, natsio.ErrAuthorization)
	_, err = natsio.Connect(s.url, natsio.NoReconnect(), natsio.Authenticator(func([]byte) (natsio.AuthFields, error) {
		panic("boom")
	}))
	wantIs(t, err, natsio.ErrConfig)
	_, err = natsio.Connect(s.url, natsio.NoReconnect(), natsio.Authenticator(func([]byte) (natsio.AuthFields, error) {
		return natsio.AuthFields{User: "a\x00b"}, nil
	}))
	wantIs(t, err, natsio.ErrConfig)
	_, err = natsio.Connect(s.url, natsio.Token("t"), natsio.Authenticator(func([]byte) (natsio.AuthFields, error) {
		return natsio.AuthFields{}, nil
	}))
	wantIs(t, err, natsio.ErrConfig)

	// The NKey fields by hand: what NkeyCallback sends.
	pub, seed, ns := nkeyUser(t)
	roundTrip(t, connectTo(t, ns.url, natsio.NoReconnect(), natsio.Authenticator(func(nonce []byte) (natsio.AuthFields, error) {
		return natsio.AuthFields{Nkey: pub, Sig: base64.RawURLEncoding.EncodeToString(signWithSeed(t, seed, nonce))}, nil
	})))
}

// checkAuthenticatorCallback is the conformance case authenticator_callback
// (tests/conformance/cases.txt).
func checkAuthenticatorCallback(t *testing.T) {
	pub, seed, s := nkeyUser(t)
	other, err := os.ReadFile(fixture(t, "auth/nkey-other.nk"))
	if err != nil {
		t.Fatal(err)
	}
	var log nonceLog
	signer := func(seed string, log *nonceLog) natsio.AuthHandler {
		return func(nonce []byte) (natsio.AuthFields, error) {
			log.add(nonce)
			return natsio.AuthFields{Nkey: pub, Sig: base64.RawURLEncoding.EncodeToString(signWithSeed(t, seed, nonce))}, nil
		}
	}
	nc := connectTo(t, s.url, natsio.ReconnectWait(20*time.Millisecond, 100*time.Millisecond), natsio.Authenticator(signer(seed, &log)))
	if got := log.get(); len(got) != 1 || got[0] == "" {
		t.Fatalf("nonces at connect: %q", got)
	}
	noErr(t, nc.ForceReconnect())
	eventually(t, "a second call and a reconnect", func() bool { return len(log.get()) >= 2 && nc.Status() == natsio.Connected })
	flush(t, nc)
	if got := log.get(); got[1] == "" || got[1] == got[0] {
		t.Fatalf("nonces %q: want a second, new one", got)
	}
	_, err = natsio.Connect(s.url, natsio.NoReconnect(), natsio.Authenticator(signer(strings.TrimSpace(string(other)), &nonceLog{})))
	wantIs(t, err, natsio.ErrAuthorization)
	_, err = natsio.Connect(s.url, natsio.NoReconnect(), natsio.Authenticator(func([]byte) (natsio.AuthFields, error) {
		return natsio.AuthFields{}, errors.New("no key")
	}))
	wantIs(t, err, natsio.ErrConfig)
	if !strings.Contains(err.Error(), "authenticator callback") {
		t.Fatalf("error %q does not name the authenticator callback", err)
	}
}
