package interop

// nats.go's Nkey(pubKey, sigCB) beside the facade's: the same NKey user
// and signer connect through both, the signer is asked once per connect
// with a nonce (a new one after a forced reconnect), a wrong signature is
// refused by both, and the same bad option combinations fail Connect with
// the same errors.

import (
	"crypto/ed25519"
	"encoding/base32"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	facadenats "github.com/libnatsio/natsio/bindings/go/nats"
	"github.com/nats-io/nats.go"
)

// nkeyFixture reads tests/fixtures/auth/<name>, trimmed.
func nkeyFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "tests", "fixtures", "auth", name))
	noErr(t, err)
	return strings.TrimSpace(string(b))
}

// seedSigner signs as an NKey seed does (base32 of a 2-byte prefix, the
// Ed25519 seed and a CRC-16), recording the nonces it is given.
type seedSigner struct {
	seed   string
	mu     sync.Mutex
	nonces []string
}

func (s *seedSigner) sign(nonce []byte) ([]byte, error) {
	s.mu.Lock()
	s.nonces = append(s.nonces, string(nonce))
	s.mu.Unlock()
	raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(s.seed)
	if err != nil || len(raw) != 36 {
		return nil, fmt.Errorf("bad seed: %v", err)
	}
	return ed25519.Sign(ed25519.NewKeyFromSeed(raw[2:34]), nonce), nil
}

func (s *seedSigner) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.nonces...)
}

// waitNonces waits (bounded) until s has signed n nonces.
func waitNonces(t *testing.T, who string, s *seedSigner, n int) []string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if got := s.seen(); len(got) >= n {
			return got
		}
	}
	t.Fatalf("%s: signed %d nonces, want %d", who, len(s.seen()), n)
	return nil
}

func TestNkeyMatchesNatsGo(t *testing.T) {
	pub := nkeyFixture(t, "nkey-user.pub")
	url := startConfiguredServer(t, fmt.Sprintf("authorization { users = [ { nkey: %s } ] }", pub))
	theirs := &seedSigner{seed: nkeyFixture(t, "nkey-user.nk")}
	ours := &seedSigner{seed: theirs.seed}
	nc := got(nats.Connect(url, nats.Nkey(pub, theirs.sign), nats.ReconnectWait(20*time.Millisecond))).must(t)
	t.Cleanup(nc.Close)
	fc := got(facadenats.Connect(url, facadenats.Nkey(pub, ours.sign), facadenats.ReconnectWait(20*time.Millisecond))).must(t)
	t.Cleanup(fc.Close)
	noErr(t, nc.Flush())
	noErr(t, fc.Flush())
	for who, s := range map[string]*seedSigner{"nats.go": theirs, "facade": ours} {
		if got := s.seen(); len(got) != 1 || got[0] == "" {
			t.Fatalf("%s: nonces at connect %q, want one", who, got)
		}
	}
	if fc.Opts.Nkey != pub || fc.Opts.SignatureCB == nil {
		t.Fatalf("facade Opts.Nkey %q", fc.Opts.Nkey)
	}

	// A reconnect signs the new connection's nonce, in both.
	noErr(t, nc.ForceReconnect())
	noErr(t, fc.ForceReconnect())
	for who, s := range map[string]*seedSigner{"nats.go": theirs, "facade": ours} {
		got := waitNonces(t, who, s, 2)
		if len(got) != 2 || got[1] == "" || got[1] == got[0] {
			t.Fatalf("%s: nonces %q, want a second, new one", who, got)
		}
	}

	// A key the server does not know: both refused.
	stranger := &seedSigner{seed: nkeyFixture(t, "nkey-other.nk")}
	_, theirErr := nats.Connect(url, nats.Nkey(pub, stranger.sign), nats.NoReconnect())
	_, ourErr := facadenats.Connect(url, facadenats.Nkey(pub, stranger.sign), facadenats.NoReconnect())
	if !errors.Is(theirErr, nats.ErrAuthorization) || !errors.Is(ourErr, facadenats.ErrAuthorization) {
		t.Fatalf("a stranger's signature: nats.go %v, facade %v", theirErr, ourErr)
	}

	// A failing signer: Connect returns its error, wrapped the same way.
	hsm := errors.New("HSM unavailable")
	failing := func([]byte) ([]byte, error) { return nil, hsm }
	_, theirErr = nats.Connect(url, nats.Nkey(pub, failing), nats.NoReconnect())
	_, ourErr = facadenats.Connect(url, facadenats.Nkey(pub, failing), facadenats.NoReconnect())
	if !errors.Is(theirErr, hsm) || !errors.Is(ourErr, hsm) || theirErr.Error() != ourErr.Error() {
		t.Fatalf("a failing signer: nats.go %v, facade %v", theirErr, ourErr)
	}
}

func TestNkeyOptionErrorsMatchNatsGo(t *testing.T) {
	pub := nkeyFixture(t, "nkey-user.pub")
	url := startConfiguredServer(t, fmt.Sprintf("authorization { users = [ { nkey: %s } ] }", pub))
	sign := (&seedSigner{seed: nkeyFixture(t, "nkey-user.nk")}).sign
	jwt := func() (string, error) { return "eyJ0eXAiOiJKV1QifQ.e30.sig", nil }

	// The option: a key without a signer.
	_, theirErr := nats.Connect(url, nats.Nkey(pub, nil))
	_, ourErr := facadenats.Connect(url, facadenats.Nkey(pub, nil))
	if !errors.Is(theirErr, nats.ErrNkeyButNoSigCB) || !errors.Is(ourErr, facadenats.ErrNkeyButNoSigCB) {
		t.Fatalf("Nkey(pub, nil): nats.go %v, facade %v", theirErr, ourErr)
	}
	// No key, no signer: nothing set, no error (and the server refuses).
	_, theirErr = nats.Connect(url, nats.Nkey("", nil), nats.NoReconnect())
	_, ourErr = facadenats.Connect(url, facadenats.Nkey("", nil), facadenats.NoReconnect())
	if !errors.Is(theirErr, nats.ErrAuthorization) || !errors.Is(ourErr, facadenats.ErrAuthorization) {
		t.Fatalf("Nkey(\"\", nil): nats.go %v, facade %v", theirErr, ourErr)
	}
	// A user JWT callback with it, either order.
	_, theirErr = nats.Connect(url, nats.UserJWT(jwt, sign), nats.Nkey(pub, sign))
	_, ourErr = facadenats.Connect(url, facadenats.UserJWT(jwt, sign), facadenats.Nkey(pub, sign))
	if !errors.Is(theirErr, nats.ErrNkeyAndUser) || !errors.Is(ourErr, facadenats.ErrNkeyAndUser) {
		t.Fatalf("UserJWT then Nkey: nats.go %v, facade %v", theirErr, ourErr)
	}
	_, theirErr = nats.Connect(url, nats.Nkey(pub, sign), nats.UserJWT(jwt, sign))
	_, ourErr = facadenats.Connect(url, facadenats.Nkey(pub, sign), facadenats.UserJWT(jwt, sign))
	if !errors.Is(theirErr, nats.ErrNkeyAndUser) || !errors.Is(ourErr, facadenats.ErrNkeyAndUser) {
		t.Fatalf("Nkey then UserJWT: nats.go %v, facade %v", theirErr, ourErr)
	}
	// The fields set by hand, Options.Connect.
	theirOpts := nats.GetDefaultOptions()
	theirOpts.Url, theirOpts.Nkey = url, pub
	ourOpts := facadenats.GetDefaultOptions()
	ourOpts.Url, ourOpts.Nkey = url, pub
	_, theirErr = theirOpts.Connect()
	_, ourErr = ourOpts.Connect()
	if !errors.Is(theirErr, nats.ErrNkeyButNoSigCB) || !errors.Is(ourErr, facadenats.ErrNkeyButNoSigCB) {
		t.Fatalf("Options.Nkey without SignatureCB: nats.go %v, facade %v", theirErr, ourErr)
	}
	theirOpts.SignatureCB, ourOpts.SignatureCB = sign, sign
	nc := got(theirOpts.Connect()).must(t)
	nc.Close()
	fc := got(ourOpts.Connect()).must(t)
	fc.Close()
}
