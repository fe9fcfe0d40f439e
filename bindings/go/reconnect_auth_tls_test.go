package natsio_test

// Reconnect, auth and TLS: restart mid-stream with lifecycle handlers in
// order, the reconnect buffer, ForceReconnect/RTT/Servers, the server pool
// replaced and moved (ServerPool, SetServerPool, ReconnectErrHandler), and
// secured servers (TLS with the fixture CA, creds in operator mode, NKeys,
// UserJWT callbacks). Each test runs its own nats-server.

import (
	"crypto/ed25519"
	"encoding/base32"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// eventLog records lifecycle handler calls, in order.
type eventLog struct {
	mu     sync.Mutex
	events []string
	causes []error
}

func (l *eventLog) add(name string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, name)
	l.causes = append(l.causes, err)
}

func (l *eventLog) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

func (l *eventLog) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.events) == 0 {
		return ""
	}
	return l.events[len(l.events)-1]
}

// options are every lifecycle handler, recording into l, plus reconnects
// within tens of milliseconds.
func (l *eventLog) options() []natsio.Option {
	record := func(name string) natsio.ConnHandler {
		return func(nc *natsio.Conn) {
			if nc == nil {
				name += "(nil conn)"
			}
			l.add(name, nil)
		}
	}
	return []natsio.Option{
		natsio.ReconnectWait(20*time.Millisecond, 100*time.Millisecond),
		natsio.ReconnectJitter(5*time.Millisecond, 5*time.Millisecond),
		natsio.MaxReconnects(-1),
		natsio.DontRandomize(),
		natsio.ConnectedHandler(record("connected")),
		natsio.DisconnectErrHandler(func(_ *natsio.Conn, err error) { l.add("disconnected", err) }),
		natsio.ReconnectHandler(record("reconnected")),
		natsio.ClosedHandler(record("closed")),
		natsio.DiscoveredServersHandler(record("discovered")),
		natsio.LameDuckModeHandler(record("ldm")),
	}
}

func waitStatus(t *testing.T, nc *natsio.Conn, want natsio.ConnStatus) {
	t.Helper()
	eventually(t, "status "+want.String(), func() bool { return nc.Status() == want })
}

func TestRestartMidStreamResumesWithEventsInOrder(t *testing.T) {
	s := startTestServer(t)
	var log eventLog
	nc := connectTo(t, s.url, log.options()...)
	sub, err := nc.SubscribeSync("survive.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("survive.before", []byte("b")); err != nil {
		t.Fatal(err)
	}
	flush(t, nc)
	if got := string(mustNext(t, sub).Data); got != "b" {
		t.Fatalf("got %q", got)
	}

	s.stop()
	waitStatus(t, nc, natsio.Reconnecting)
	// Accepted while disconnected: kept in the reconnect buffer.
	for i := range 50 {
		if err := nc.Publish("survive.during", []byte(fmt.Sprint("d", i))); err != nil {
			t.Fatalf("publish %d while disconnected: %v", i, err)
		}
	}
	s.restart(t)
	waitStatus(t, nc, natsio.Connected)
	flush(t, nc)
	for i := range 50 {
		if got, want := string(mustNext(t, sub).Data), fmt.Sprint("d", i); got != want {
			t.Fatalf("buffered message %d: got %q, want %q", i, got, want)
		}
	}
	// The subscription lives on the new connection.
	if err := nc.Publish("survive.after", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if got := string(mustNext(t, sub).Data); got != "a" {
		t.Fatalf("got %q", got)
	}
	if n := nc.Stats().Reconnects; n != 1 {
		t.Fatalf("reconnects = %d, want 1", n)
	}

	nc.Close()
	eventually(t, "closed handler", func() bool { return log.last() == "closed" })
	want := []string{"connected", "disconnected", "reconnected", "closed"}
	if got := log.snapshot(); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	log.mu.Lock()
	cause := log.causes[1]
	log.mu.Unlock()
	var nerr *natsio.Error
	if !errors.As(cause, &nerr) {
		t.Fatalf("disconnect cause %v is not a *natsio.Error", cause)
	}
}

func TestNoBufferingFailsPublishesWhileDisconnected(t *testing.T) {
	s := startTestServer(t)
	var log eventLog
	nc := connectTo(t, s.url, append(log.options(), natsio.ReconnectBufSize(-1))...)
	s.stop()
	waitStatus(t, nc, natsio.Reconnecting)
	wantIs(t, nc.Publish("survive.nobuf", []byte("x")), natsio.ErrReconnectBufExceeded)
}

func TestForceReconnectRTTAndServers(t *testing.T) {
	s := startTestServer(t)
	var log eventLog
	nc := connectTo(t, s.url, log.options()...)
	sub, err := nc.SubscribeSync("survive.force")
	if err != nil {
		t.Fatal(err)
	}
	flush(t, nc)
	rtt, err := nc.RTT()
	if err != nil || rtt <= 0 || rtt > 5*time.Second {
		t.Fatalf("RTT = %v, %v", rtt, err)
	}
	if servers := nc.Servers(); !slices.ContainsFunc(servers, func(u string) bool {
		return strings.HasSuffix(u, fmt.Sprint(":", s.port))
	}) {
		t.Fatalf("Servers() = %v lacks port %d", servers, s.port)
	}
	if err := nc.ForceReconnect(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "reconnect", func() bool { return nc.Stats().Reconnects == 1 })
	if err := nc.Publish("survive.force", []byte("after")); err != nil {
		t.Fatal(err)
	}
	if got := string(mustNext(t, sub).Data); got != "after" {
		t.Fatalf("got %q", got)
	}
	eventually(t, "reconnected handler", func() bool { return slices.Contains(log.snapshot(), "reconnected") })
	nc.Close()
	wantIs(t, nc.ForceReconnect(), natsio.ErrConnectionClosed)
}

// deadURL is a loopback URL on a free port nobody listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint("nats://127.0.0.1:", port)
}

// wantPool checks nc's server pool against want, in order.
func wantPool(t *testing.T, nc *natsio.Conn, what string, want ...natsio.Server) {
	t.Helper()
	if got := nc.ServerPool(); !slices.Equal(got, want) {
		t.Fatalf("%s: pool %+v, want %+v", what, got, want)
	}
}

// connectedTo waits until nc is connected to url.
func connectedTo(t *testing.T, nc *natsio.Conn, url string) {
	t.Helper()
	eventually(t, "connected to "+url, func() bool {
		u, err := nc.ConnectedURL()
		return err == nil && u == url && nc.Status() == natsio.Connected
	})
}

// movedPool is where moveServerPool leaves its connection: moved from
// server a to b by a pool replaced with [dead, b].
type movedPool struct {
	nc         *natsio.Conn
	log        *eventLog // lifecycle events, failed attempts as "reconnect failed"
	a, b, dead string
}

// moveServerPool runs the conformance table's server_pool steps and checks
// each: a client connected to A alone lists A (connected to, not
// discovered, 0 reconnects); SetServerPool([D, B]) keeps the connection to
// A and lists D then B; ForceReconnect tries D (one ReconnectErrHandler
// call, an *Error naming D, between the disconnect and the reconnect) and
// connects to B, the pool then showing D with 1 reconnect and B connected;
// an empty list is ErrConfig and changes nothing.
func moveServerPool(t *testing.T) *movedPool {
	t.Helper()
	m := &movedPool{log: &eventLog{}, a: startTestServer(t).url, b: startTestServer(t).url, dead: deadURL(t)}
	// ReconnectWait far above the test's steps: D is tried once, then B
	// (ready at once); a second try of D would wait for it.
	opts := append(m.log.options(), natsio.ReconnectWait(5*time.Second, 5*time.Second),
		natsio.ReconnectErrHandler(func(_ *natsio.Conn, err error) { m.log.add("reconnect failed", err) }))
	m.nc = connectTo(t, m.a, opts...)
	wantPool(t, m.nc, "connected to A", natsio.Server{URL: m.a, DidConnect: true})

	if err := m.nc.SetServerPool([]string{m.dead, m.b}); err != nil {
		t.Fatal(err)
	}
	flush(t, m.nc)
	connectedTo(t, m.nc, m.a)
	wantPool(t, m.nc, "replaced", natsio.Server{URL: m.dead}, natsio.Server{URL: m.b})

	if err := m.nc.ForceReconnect(); err != nil {
		t.Fatal(err)
	}
	connectedTo(t, m.nc, m.b)
	eventually(t, "reconnected handler", func() bool { return slices.Contains(m.log.snapshot(), "reconnected") })
	if got, want := m.log.snapshot(), []string{"connected", "disconnected", "reconnect failed", "reconnected"}; !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	m.log.mu.Lock()
	cause := m.log.causes[2]
	m.log.mu.Unlock()
	var nerr *natsio.Error
	if !errors.As(cause, &nerr) || nerr.Status == 0 || !strings.HasPrefix(nerr.Detail, "reconnect to "+m.dead+" failed") {
		t.Fatalf("failed attempt's error %#v (%v), want an *Error naming %s", cause, cause, m.dead)
	}
	moved := []natsio.Server{{URL: m.dead, Reconnects: 1}, {URL: m.b, DidConnect: true}}
	wantPool(t, m.nc, "moved to B", moved...)

	wantIs(t, m.nc.SetServerPool(nil), natsio.ErrConfig)
	wantPool(t, m.nc, "after an empty list", moved...)
	return m
}

func TestServerPoolReplacedAndMoved(t *testing.T) {
	m := moveServerPool(t)
	// Kept servers keep their bookkeeping, whatever the order or spelling;
	// A, dropped by the first replacement, comes back new.
	deadBare := strings.TrimPrefix(m.dead, "nats://")
	again := []string{m.b, deadBare, m.a}
	if err := m.nc.SetServerPool(again); err != nil {
		t.Fatal(err)
	}
	kept := []natsio.Server{{URL: m.b, DidConnect: true}, {URL: deadBare, Reconnects: 1}, {URL: m.a}}
	wantPool(t, m.nc, "replaced again", kept...)
	// Bad lists fail and change nothing.
	wantIs(t, m.nc.SetServerPool([]string{m.a, "nats://127.0.0.1:notaport"}), natsio.ErrConfig)
	wantIs(t, m.nc.SetServerPool([]string{m.a, m.b + "\x00"}), natsio.ErrInvalidArgument)
	wantPool(t, m.nc, "after bad lists", kept...)
	// Closed: still readable, no longer replaceable.
	m.nc.Close()
	wantIs(t, m.nc.SetServerPool(again), natsio.ErrConnectionClosed)
	wantPool(t, m.nc, "closed", kept...)
}

func TestPanickingLifecycleHandlerIsReported(t *testing.T) {
	reported := make(chan error, 4)
	nc := connect(t,
		natsio.ConnectedHandler(func(*natsio.Conn) { panic("lifecycle boom") }),
		natsio.ErrorHandler(func(err error) { reported <- err }))
	select {
	case err := <-reported:
		if !errors.Is(err, natsio.ErrHandlerPanic) || !strings.Contains(err.Error(), "lifecycle boom") {
			t.Fatalf("reported %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("panic not reported")
	}
	flush(t, nc) // the connection carries on
}

func TestFailedConnectCallsNoHandler(t *testing.T) {
	var log eventLog
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	_, err = natsio.Connect(fmt.Sprint("nats://127.0.0.1:", port), append(log.options(), natsio.NoReconnect())...)
	wantIs(t, err, natsio.ErrNoServers)
	time.Sleep(50 * time.Millisecond) // an absence: no handler call within 50 ms
	if got := log.snapshot(); len(got) != 0 {
		t.Fatalf("handlers called for a failed Connect: %v", got)
	}
}

func tlsServerConfig(t *testing.T, verifyClients bool) string {
	return fmt.Sprintf("tls {\n cert_file: %q\n key_file: %q\n ca_file: %q\n verify: %v\n timeout: 2\n}\n",
		fixture(t, "tls/server-cert.pem"), fixture(t, "tls/server-key.pem"), fixture(t, "tls/ca.pem"), verifyClients)
}

func roundTrip(t *testing.T, nc *natsio.Conn) {
	t.Helper()
	subj := subject(t, "rt")
	sub, err := nc.SubscribeSync(subj)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish(subj, []byte("secret")); err != nil {
		t.Fatal(err)
	}
	if got := string(mustNext(t, sub).Data); got != "secret" {
		t.Fatalf("got %q", got)
	}
}

func TestTLSWithTheFixtureCA(t *testing.T) {
	s := startConfiguredServer(t, tlsServerConfig(t, false))
	tlsURL := strings.Replace(s.url, "nats://", "tls://", 1)
	nc := connectTo(t, tlsURL, natsio.NoReconnect(), natsio.Secure(natsio.TLSFiles{CA: fixture(t, "tls/ca.pem")}))
	info, err := nc.ServerInfo()
	if err != nil || !strings.Contains(string(info.Raw), `"tls_required":true`) {
		t.Fatalf("INFO %s, %v", info.Raw, err)
	}
	roundTrip(t, nc)

	_, err = natsio.Connect(tlsURL, natsio.NoReconnect(), natsio.Secure(natsio.TLSFiles{CA: fixture(t, "tls/other-ca.pem")}))
	wantIs(t, err, natsio.ErrIO)
}

func TestMutualTLSWithHostname(t *testing.T) {
	s := startConfiguredServer(t, tlsServerConfig(t, true))
	tlsURL := strings.Replace(s.url, "nats://", "tls://", 1)
	nc := connectTo(t, tlsURL, natsio.NoReconnect(), natsio.TLSHostname("localhost"), natsio.Secure(natsio.TLSFiles{
		CA: fixture(t, "tls/ca.pem"), Cert: fixture(t, "tls/client-cert.pem"), Key: fixture(t, "tls/client-key.pem"),
	}))
	roundTrip(t, nc)

	if _, err := natsio.Connect(tlsURL, natsio.NoReconnect(), natsio.Secure(natsio.TLSFiles{CA: fixture(t, "tls/ca.pem")})); err == nil {
		t.Fatal("connected without the client certificate the server requires")
	}
	_, err := natsio.Connect(tlsURL, natsio.Secure(natsio.TLSFiles{CA: fixture(t, "tls/ca.pem"), Cert: fixture(t, "tls/client-cert.pem")}))
	wantIs(t, err, natsio.ErrConfig)
}

func TestMutualTLSFromMemory(t *testing.T) {
	s := startConfiguredServer(t, tlsServerConfig(t, true))
	tlsURL := strings.Replace(s.url, "nats://", "tls://", 1)
	read := func(name string) []byte {
		b, err := os.ReadFile(fixture(t, "tls/"+name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pem := natsio.TLSPEM{CA: read("ca.pem"), Cert: read("client-cert.pem"), Key: read("client-key.pem")}
	nc := connectTo(t, tlsURL, natsio.NoReconnect(), natsio.SecurePEM(pem))
	roundTrip(t, nc)

	// Without the client certificate the server refuses; with another CA
	// the client refuses the server; a key that is no PEM is refused at once.
	_, err := natsio.Connect(tlsURL, natsio.NoReconnect(), natsio.SecurePEM(natsio.TLSPEM{CA: pem.CA}))
	wantIs(t, err, natsio.ErrIO)
	_, err = natsio.Connect(tlsURL, natsio.NoReconnect(), natsio.SecurePEM(natsio.TLSPEM{CA: read("other-ca.pem")}))
	wantIs(t, err, natsio.ErrIO)
	_, err = natsio.Connect(tlsURL, natsio.NoReconnect(), natsio.SecurePEM(natsio.TLSPEM{CA: pem.CA, Cert: pem.Cert, Key: []byte("not a key")}))
	wantIs(t, err, natsio.ErrConfig)
}

// The credentials callbacks are called again at a reconnect, and their new
// value is what the restarted server (password or token changed) accepts.
func TestCredentialsCallbacksAtEveryConnect(t *testing.T) {
	for _, tc := range []struct {
		name, before, after string
		option              func(calls *atomic.Int32) natsio.Option
	}{
		{"user/password", `authorization { user: alice, password: "s3cret" }`, `authorization { user: alice, password: "changed" }`,
			func(calls *atomic.Int32) natsio.Option {
				return natsio.UserInfoCallback(func() (string, string, error) {
					if calls.Add(1) == 1 {
						return "alice", "s3cret", nil
					}
					return "alice", "changed", nil
				})
			}},
		{"token", `authorization { token: "t1" }`, `authorization { token: "t2" }`,
			func(calls *atomic.Int32) natsio.Option {
				return natsio.TokenCallback(func() (string, error) {
					if calls.Add(1) == 1 {
						return "t1", nil
					}
					return "t2", nil
				})
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startConfiguredServer(t, tc.before)
			var calls atomic.Int32
			nc := connectTo(t, s.url, tc.option(&calls), natsio.ReconnectWait(20*time.Millisecond, 100*time.Millisecond))
			if calls.Load() != 1 {
				t.Fatalf("%d calls at connect", calls.Load())
			}
			roundTrip(t, nc)
			conf := s.args[slices.Index(s.args, "-c")+1]
			if err := os.WriteFile(conf, []byte(tc.after), 0o600); err != nil {
				t.Fatal(err)
			}
			s.restart(t)
			eventually(t, "a reconnect with the new secret", func() bool {
				return nc.Stats().Reconnects == 1 && nc.Status() == natsio.Connected
			})
			if calls.Load() < 2 {
				t.Fatalf("%d calls", calls.Load())
			}
			roundTrip(t, nc)
		})
	}
	_, err := natsio.Connect(shared.url, natsio.TokenCallback(nil))
	wantIs(t, err, natsio.ErrNullArgument)
}

func operatorServer(t *testing.T) *natsServer {
	conf, err := os.ReadFile(fixture(t, "auth/operator.conf"))
	if err != nil {
		t.Fatal(err)
	}
	return startConfiguredServer(t, string(conf))
}

func TestUserCredentialsInOperatorMode(t *testing.T) {
	s := operatorServer(t)
	roundTrip(t, connectTo(t, s.url, natsio.NoReconnect(), natsio.UserCredentials(fixture(t, "auth/user.creds"))))

	_, err := natsio.Connect(s.url, natsio.NoReconnect(), natsio.UserCredentials(fixture(t, "auth/stranger.creds")))
	wantIs(t, err, natsio.ErrAuthorization)
	_, err = natsio.Connect(s.url, natsio.UserCredentials(fixture(t, "auth/missing.creds")))
	wantIs(t, err, natsio.ErrConfig)
}

// signWithSeed signs like an NKey: the seed is base32 of prefix (2 bytes),
// the Ed25519 seed (32 bytes) and a CRC16 (2 bytes).
func signWithSeed(t *testing.T, seed string, msg []byte) []byte {
	raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.TrimSpace(seed))
	if err != nil || len(raw) != 36 {
		t.Errorf("bad seed: %v", err)
		return nil
	}
	return ed25519.Sign(ed25519.NewKeyFromSeed(raw[2:34]), msg)
}

func TestUserJWTCallbacks(t *testing.T) {
	s := operatorServer(t)
	jwt, err1 := os.ReadFile(fixture(t, "auth/user.jwt"))
	seed, err2 := os.ReadFile(fixture(t, "auth/user.nk"))
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	var signed sync.WaitGroup
	signed.Add(1)
	nc := connectTo(t, s.url, natsio.NoReconnect(), natsio.UserJWT(
		func() (string, error) { return strings.TrimSpace(string(jwt)), nil },
		func(nonce []byte) ([]byte, error) {
			defer signed.Done()
			return signWithSeed(t, string(seed), nonce), nil
		}))
	roundTrip(t, nc)
	signed.Wait()

	_, err := natsio.Connect(s.url, natsio.NoReconnect(), natsio.UserJWT(
		func() (string, error) { return strings.TrimSpace(string(jwt)), nil },
		func([]byte) ([]byte, error) { return nil, errors.New("HSM unavailable") }))
	// The application's refusal is a configuration error naming the
	// callback, as in C and Node.
	wantIs(t, err, natsio.ErrConfig)
	if !strings.Contains(err.Error(), "signature callback failed") {
		t.Fatalf("error %q does not name the signature callback", err)
	}
}

func TestNkeySeedAndFile(t *testing.T) {
	pub, err := os.ReadFile(fixture(t, "auth/nkey-user.pub"))
	if err != nil {
		t.Fatal(err)
	}
	seed, err := os.ReadFile(fixture(t, "auth/nkey-user.nk"))
	if err != nil {
		t.Fatal(err)
	}
	s := startConfiguredServer(t, fmt.Sprintf("authorization { users = [ { nkey: %s } ] }", strings.TrimSpace(string(pub))))
	roundTrip(t, connectTo(t, s.url, natsio.NoReconnect(), natsio.Nkey(strings.TrimSpace(string(seed)))))
	roundTrip(t, connectTo(t, s.url, natsio.NoReconnect(), natsio.NkeyFromFile(fixture(t, "auth/nkey-user.nk"))))
	_, err = natsio.Connect(s.url, natsio.NoReconnect(), natsio.NkeyFromFile(fixture(t, "auth/nkey-other.nk")))
	wantIs(t, err, natsio.ErrAuthorization)
	_, err = natsio.Connect(s.url, natsio.Token("t"), natsio.Nkey(strings.TrimSpace(string(seed))))
	wantIs(t, err, natsio.ErrConfig)
}
