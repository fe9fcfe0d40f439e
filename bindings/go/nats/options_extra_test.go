package nats_test

// The connect options of options_extra.go against a real server: what the
// server sees and what the program gets.

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/nats"
)

// The server's monitoring shows the connection's name and LangString;
// Verbose and Pedantic, set as Options fields, keep the connection working
// (the client reads past the server's +OK acks).
func TestOptionsAnnouncedToTheServer(t *testing.T) {
	monitor := freePort(t)
	s := startServer(t, "", "-m", fmt.Sprint(monitor))
	o := nats.GetDefaultOptions()
	o.Url, o.Name, o.Verbose, o.Pedantic = s.url, "conn-options-test", true, true
	nc, err := o.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	connectsAndRoundTrips(t, s.url, nats.Name("other"))
	sub, err := nc.SubscribeSync("verbose.check")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := nc.Publish("verbose.check", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		if m, err := sub.NextMsg(5 * time.Second); err != nil || m.Data[0] != byte(i) {
			t.Fatalf("message %d with Verbose and Pedantic: %v", i, err)
		}
	}

	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/connz", monitor))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var connz struct {
		Connections []struct {
			Name string `json:"name"`
			Lang string `json:"lang"`
		} `json:"connections"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&connz); err != nil {
		t.Fatal(err)
	}
	for _, c := range connz.Connections {
		if c.Name == "conn-options-test" {
			if c.Lang != nats.LangString {
				t.Fatalf("server sees lang %q, LangString is %q", c.Lang, nats.LangString)
			}
			return
		}
	}
	t.Fatalf("connection not in /connz: %+v", connz.Connections)
}

// With PermissionErrOnSubscribe a refused synchronous subscription ends
// with ErrPermissionViolation; without, it stays valid (the error handler
// alone is told).
func TestOptionsPermissionErrOnSubscribe(t *testing.T) {
	s := startServer(t, `authorization { users = [ { user: a, password: b, permissions: { subscribe: { deny: "secret" } } } ] }`)
	nc, err := nats.Connect(s.url, nats.UserInfo("a", "b"), nats.PermissionErrOnSubscribe(true))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("secret")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sub.NextMsg(10 * time.Second); !errors.Is(err, nats.ErrPermissionViolation) {
		t.Fatalf("NextMsg of a refused subscription: %v, want ErrPermissionViolation", err)
	}

	told := make(chan error, 1)
	plain, err := nats.Connect(s.url, nats.UserInfo("a", "b"),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { told <- err }))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	sub, err = plain.SubscribeSync("secret")
	if err != nil {
		t.Fatal(err)
	}
	if err := connWaitFor(t, told, "the permission error"); !errors.Is(err, nats.ErrPermissionViolation) {
		t.Fatalf("error handler got %v", err)
	}
	if _, err := sub.NextMsg(time.Millisecond); !errors.Is(err, nats.ErrTimeout) {
		t.Fatalf("NextMsg without PermissionErrOnSubscribe: %v, want ErrTimeout", err)
	}
}

// A write buffer smaller than a message still sends it.
func TestOptionsWriteBufferSizeSmallerThanAMessage(t *testing.T) {
	s := startServer(t, "")
	big := bytes.Repeat([]byte("x"), 256*1024)
	nc, err := nats.Connect(s.url, nats.WriteBufferSize(1024))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("big")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := nc.Publish("big", big); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		if m, err := sub.NextMsg(10 * time.Second); err != nil || !bytes.Equal(m.Data, big) {
			t.Fatalf("message %d: %v", i, err)
		}
	}
}

// WebSocket compression cannot be had: Connect says so for a WebSocket
// server; for a TCP one the option has no effect, as in nats.go.
func TestOptionsCompression(t *testing.T) {
	s := startServer(t, "")
	_, err := nats.Connect("ws://127.0.0.1:1", nats.Compression(true))
	if !errors.Is(err, nats.ErrInvalidArg) {
		t.Fatalf("Compression with a WebSocket server: %v, want ErrInvalidArg", err)
	}
	connectsAndRoundTrips(t, s.url, nats.Compression(true))
}

func TestOptionsDefaults(t *testing.T) {
	if !reflect.DeepEqual(nats.DefaultOptions, nats.GetDefaultOptions()) {
		t.Fatal("DefaultOptions differs from GetDefaultOptions")
	}
	o := nats.GetDefaultOptions()
	if o.ReconnectJitter != nats.DefaultReconnectJitter || o.ReconnectJitterTLS != nats.DefaultReconnectJitterTLS ||
		nats.DefaultReconnectJitter != 100*time.Millisecond || nats.DefaultReconnectJitterTLS != time.Second {
		t.Fatalf("reconnect jitter defaults %v, %v", o.ReconnectJitter, o.ReconnectJitterTLS)
	}
}

// Options.TLSConfig, set as a field (not through Secure), configures the
// TLS of Connect: its client certificate reaches a server that requires
// one, and a field the library cannot honour fails the Connect.
func TestOptionsTLSConfigField(t *testing.T) {
	tlsFixture := func(name string) string {
		path, err := filepath.Abs(filepath.Join("../../../tests/fixtures/tls", name))
		if err != nil {
			t.Fatal(err)
		}
		return path
	}
	s := startServer(t, fmt.Sprintf("tls {\n cert_file: %q\n key_file: %q\n ca_file: %q\n verify: true\n timeout: 2\n}\n",
		tlsFixture("server-cert.pem"), tlsFixture("server-key.pem"), tlsFixture("ca.pem")))
	cert, err := tls.LoadX509KeyPair(tlsFixture("client-cert.pem"), tlsFixture("client-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	tlsURL := strings.Replace(s.url, "nats://", "tls://", 1)
	o := nats.GetDefaultOptions()
	o.Url, o.Secure, o.AllowReconnect = tlsURL, true, false
	o.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, ServerName: "localhost"}
	if err := nats.RootCAs(tlsFixture("ca.pem"))(&o); err != nil {
		t.Fatal(err)
	}
	nc, err := o.Connect()
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()

	o.TLSConfig = &tls.Config{ServerName: "localhost"}
	if nc, err := o.Connect(); err == nil {
		nc.Close()
		t.Fatal("connected without the client certificate the server requires")
	}
	o.TLSConfig = &tls.Config{InsecureSkipVerify: true}
	if _, err := o.Connect(); !errors.Is(err, nats.ErrInvalidArg) || !strings.Contains(err.Error(), "InsecureSkipVerify") {
		t.Fatalf("TLSConfig with InsecureSkipVerify: %v, want ErrInvalidArg naming it", err)
	}
}

func TestOptionsUserInfoHandlerWithUserInfo(t *testing.T) {
	_, err := nats.Connect(nats.DefaultURL, nats.UserInfo("a", "b"),
		nats.UserInfoHandler(func() (string, string) { return "a", "b" }))
	if err != nats.ErrUserInfoAlreadySet {
		t.Fatalf("UserInfoHandler with UserInfo: %v, want ErrUserInfoAlreadySet", err)
	}
}

// Options built by hand get what nats.go's Options.Connect fills in, and
// the zero waits nats.go takes (no ping, no reconnect wait) connect and
// reconnect.
func TestOptionsZeroSettingsAsInNatsGo(t *testing.T) {
	s := startServer(t, "")
	o := nats.Options{Url: s.url}
	nc, err := o.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if nc.Opts.Timeout != nats.DefaultTimeout || nc.Opts.MaxPingsOut != nats.DefaultMaxPingOut ||
		nc.Opts.ReconnectBufSize != nats.DefaultReconnectBufSize {
		t.Fatalf("defaults filled in: timeout %v, max pings %d, reconnect buffer %d",
			nc.Opts.Timeout, nc.Opts.MaxPingsOut, nc.Opts.ReconnectBufSize)
	}

	reconnected := make(chan struct{}, 1)
	zero, err := nats.Connect(s.url, nats.PingInterval(0), nats.ReconnectWait(0), nats.DrainTimeout(0),
		nats.MaxReconnects(-1), nats.ReconnectHandler(func(*nats.Conn) { reconnected <- struct{}{} }))
	if err != nil {
		t.Fatal(err)
	}
	defer zero.Close()
	s.restart()
	connWaitFor(t, reconnected, "the reconnect without a wait")
	if err := zero.Flush(); err != nil {
		t.Fatal(err)
	}
}

// WebSocketConnectionHeaders reach the library's upgrade request: a
// WebSocket connection with them works, and one of the request's own
// headers, which the library refuses to replace, fails the Connect.
func TestOptionsWebSocketConnectionHeaders(t *testing.T) {
	wsPort := freePort(t)
	startServer(t, fmt.Sprintf("websocket {\n listen: \"127.0.0.1:%d\"\n no_tls: true\n}\n", wsPort))
	url := fmt.Sprintf("ws://127.0.0.1:%d", wsPort)
	connectsAndRoundTrips(t, url, nats.WebSocketConnectionHeaders(http.Header{"Authorization": {"Bearer t"}, "X-Route": {"a", "b"}}))
	_, err := nats.Connect(url, nats.NoReconnect(), nats.WebSocketConnectionHeaders(http.Header{"Sec-Websocket-Key": {"k"}}))
	if !errors.Is(err, natsio.ErrConfig) {
		t.Fatalf("replacing the upgrade's own header: %v, want the configuration error", err)
	}
	if o := nats.GetDefaultOptions(); nats.WebSocketConnectionHeaders(http.Header{"A": {"1"}})(&o) != nil || o.WebSocketConnectionHeaders.Get("A") != "1" {
		t.Fatalf("the option sets Options.WebSocketConnectionHeaders: %v", o.WebSocketConnectionHeaders)
	}
}
