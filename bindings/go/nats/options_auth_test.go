package nats_test

// User JWT authentication from callbacks and from memory, against a
// server in operator mode (the fixtures of tests/fixtures/auth).

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/libnatsio/natsio/bindings/go/nats"
)

func authFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../../tests/fixtures/auth", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func operatorModeServer(t *testing.T) *testServer {
	return startServer(t, string(authFixture(t, "operator.conf")))
}

// connectsAndRoundTrips connects with opts and checks a request gets its
// reply, then closes.
func connectsAndRoundTrips(t *testing.T, url string, opts ...nats.Option) {
	t.Helper()
	nc, err := nats.Connect(url, append(opts, nats.NoReconnect())...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.Subscribe("echo", func(m *nats.Msg) { m.Respond(m.Data) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if reply, err := nc.Request("echo", []byte("ping"), nats.DefaultTimeout); err != nil || string(reply.Data) != "ping" {
		t.Fatalf("request: %v", err)
	}
}

func TestOptionsUserJWTFromMemory(t *testing.T) {
	s := operatorModeServer(t)
	creds := authFixture(t, "user.creds")
	jwt := strings.TrimSpace(string(authFixture(t, "user.jwt")))
	seed := strings.TrimSpace(string(authFixture(t, "user.nk")))

	t.Run("UserCredentialBytes", func(t *testing.T) {
		connectsAndRoundTrips(t, s.url, nats.UserCredentialBytes(creds))
	})
	t.Run("UserCredentialBytesWithSeedBytes", func(t *testing.T) {
		connectsAndRoundTrips(t, s.url, nats.UserCredentialBytes([]byte(jwt), []byte(seed)))
	})
	t.Run("UserJWTAndSeed", func(t *testing.T) {
		connectsAndRoundTrips(t, s.url, nats.UserJWTAndSeed(jwt, seed))
	})
	t.Run("UserCredentialsWithSeedFile", func(t *testing.T) {
		dir := t.TempDir()
		jwtFile, seedFile := filepath.Join(dir, "user.jwt"), filepath.Join(dir, "user.nk")
		if err := errors.Join(os.WriteFile(jwtFile, []byte(jwt), 0o600), os.WriteFile(seedFile, []byte(seed), 0o600)); err != nil {
			t.Fatal(err)
		}
		connectsAndRoundTrips(t, s.url, nats.UserCredentials(jwtFile, seedFile))
	})
	t.Run("UserJWTCallbacksOnEveryConnect", func(t *testing.T) {
		// The signer of UserJWTAndSeed, counted behind UserJWT.
		o := nats.GetDefaultOptions()
		if err := nats.UserJWTAndSeed(jwt, seed)(&o); err != nil {
			t.Fatal(err)
		}
		var jwtCalls, signed atomic.Int32
		connectsAndRoundTrips(t, s.url, nats.UserJWT(
			func() (string, error) { jwtCalls.Add(1); return jwt, nil },
			func(nonce []byte) ([]byte, error) { signed.Add(1); return o.SignatureCB(nonce) }))
		// Once by the option (as nats.go checks it), once by the connect.
		if jwtCalls.Load() != 2 || signed.Load() != 1 {
			t.Fatalf("JWT callback called %d times, signer %d; want 2 and 1", jwtCalls.Load(), signed.Load())
		}
	})
	t.Run("StrangerIsRefused", func(t *testing.T) {
		_, err := nats.Connect(s.url, nats.NoReconnect(), nats.UserCredentialBytes(authFixture(t, "stranger.creds")))
		if !errors.Is(err, nats.ErrAuthorization) {
			t.Fatalf("stranger's credentials: %v, want ErrAuthorization", err)
		}
	})
	t.Run("BadSeedFailsTheConnect", func(t *testing.T) {
		_, err := nats.Connect(s.url, nats.NoReconnect(), nats.UserJWTAndSeed(jwt, "SUNOTASEED"))
		if err == nil || err.Error() != "error signing nonce: unable to extract key pair from seed: nkeys: invalid checksum" {
			t.Fatalf("bad seed: %v", err)
		}
	})
}

func TestOptionsUserJWTErrors(t *testing.T) {
	jwtCB := func() (string, error) { return "jwt", nil }
	signCB := func([]byte) ([]byte, error) { return nil, nil }
	if _, err := nats.Connect(nats.DefaultURL, nats.UserJWT(nil, signCB)); err != nats.ErrNoUserCB {
		t.Fatalf("no JWT callback: %v", err)
	}
	if _, err := nats.Connect(nats.DefaultURL, nats.UserJWT(jwtCB, nil)); err != nats.ErrUserButNoSigCB {
		t.Fatalf("no signature callback: %v", err)
	}
	refused := errors.New("vault sealed")
	if _, err := nats.Connect(nats.DefaultURL, nats.UserJWT(func() (string, error) { return "", refused }, signCB)); err != refused {
		t.Fatalf("failing JWT callback: %v, want its error from the option", err)
	}
	// Set as fields, the signer is checked at Connect.
	o := nats.GetDefaultOptions()
	o.UserJWT = jwtCB
	if _, err := o.Connect(); err != nats.ErrUserButNoSigCB {
		t.Fatalf("Options.UserJWT without SignatureCB: %v", err)
	}
}
