package natsio_test

// Options of the nats.go-shaped facade (bindings/go/nats) that map onto
// the binding's: callable credentials and Secure with a *tls.Config.

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/libnatsio/natsio/bindings/go/nats"
)

// facadeRoundTrip publishes on nc and reads the message back.
func facadeRoundTrip(t *testing.T, nc *nats.Conn) {
	t.Helper()
	sub, err := nc.SubscribeSync("facade.rt")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("facade.rt", []byte("secret")); err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(5e9)
	if err != nil || string(m.Data) != "secret" {
		t.Fatalf("round trip: %v %v", m, err)
	}
}

// UserInfoHandler and TokenHandler are asked on connect; Token and
// TokenHandler exclude each other (ErrTokenAlreadySet), as in nats.go.
func TestFacadeCredentialHandlers(t *testing.T) {
	users := startConfiguredServer(t, `authorization { user: alice, password: "s3cret" }`)
	var asked atomic.Int32
	nc, err := nats.Connect(users.url, nats.NoReconnect(), nats.UserInfoHandler(func() (string, string) {
		asked.Add(1)
		return "alice", "s3cret"
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	facadeRoundTrip(t, nc)
	if asked.Load() < 1 {
		t.Fatal("the user info handler was not asked")
	}
	if _, err := nats.Connect(users.url, nats.NoReconnect(), nats.UserInfoHandler(func() (string, string) {
		return "alice", "wrong"
	})); !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("a wrong password from the handler: %v, want ErrAuthorization", err)
	}

	tokens := startConfiguredServer(t, `authorization { token: "t1" }`)
	nt, err := nats.Connect(tokens.url, nats.NoReconnect(), nats.TokenHandler(func() string { return "t1" }))
	if err != nil {
		t.Fatal(err)
	}
	defer nt.Close()
	facadeRoundTrip(t, nt)
	_, err = nats.Connect(tokens.url, nats.Token("t1"), nats.TokenHandler(func() string { return "t1" }))
	if err != nats.ErrTokenAlreadySet {
		t.Fatalf("Token then TokenHandler: %v", err)
	}
	_, err = nats.Connect(tokens.url, nats.TokenHandler(func() string { return "t1" }), nats.Token("t1"))
	if err != nats.ErrTokenAlreadySet {
		t.Fatalf("TokenHandler then Token: %v", err)
	}
}

// Secure with a *tls.Config: its client certificate (handed to the library
// as PEM) and ServerName are used, with RootCAs' file; what cannot be
// mapped is refused at Connect with the field named.
func TestFacadeSecureWithATLSConfig(t *testing.T) {
	s := startConfiguredServer(t, tlsServerConfig(t, true))
	tlsURL := strings.Replace(s.url, "nats://", "tls://", 1)
	cert, err := tls.LoadX509KeyPair(fixture(t, "tls/client-cert.pem"), fixture(t, "tls/client-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(tlsURL, nats.NoReconnect(), nats.RootCAs(fixture(t, "tls/ca.pem")),
		nats.Secure(&tls.Config{Certificates: []tls.Certificate{cert}, ServerName: "localhost"}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	facadeRoundTrip(t, nc)
	// The server requires the client certificate: without it, no connection.
	if nc2, err := nats.Connect(tlsURL, nats.NoReconnect(), nats.RootCAs(fixture(t, "tls/ca.pem")),
		nats.Secure(&tls.Config{ServerName: "localhost"})); err == nil {
		nc2.Close()
		t.Fatal("connected without the client certificate the server requires")
	}

	pool := x509.NewCertPool()
	for _, c := range []struct {
		field string
		cfg   *tls.Config
	}{
		{"InsecureSkipVerify", &tls.Config{InsecureSkipVerify: true}},
		{"RootCAs", &tls.Config{RootCAs: pool}},
		{"GetClientCertificate", &tls.Config{GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }}},
		{"Certificates", &tls.Config{Certificates: []tls.Certificate{{}}}},
	} {
		_, err := nats.Connect(tlsURL, nats.NoReconnect(), nats.Secure(c.cfg))
		if !errors.Is(err, nats.ErrInvalidArg) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("Secure with %s: %v, want ErrInvalidArg naming it", c.field, err)
		}
	}
	if _, err := nats.Connect(tlsURL, nats.Secure(&tls.Config{}, &tls.Config{})); err != nats.ErrMultipleTLSConfigs {
		t.Errorf("two tls.Configs: %v", err)
	}
}
