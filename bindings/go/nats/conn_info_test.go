package nats_test

// What a connection tells about its server and itself, against a real
// server: the values nats.go gives for the same server.

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/libnatsio/natsio/bindings/go/nats"
)

const accountsConf = `
jetstream { domain: hub, store_dir: %q }
accounts {
  SYS: { users: [ { user: sys, password: sys } ] }
  APP: { users: [ { user: app, password: "s3cret" } ], jetstream: enabled }
}
system_account: SYS
`

func TestConnServerInfoGetters(t *testing.T) {
	s := startServer(t, fmt.Sprintf(accountsConf, t.TempDir()))
	app, err := nats.Connect(strings.Replace(s.url, "nats://", "nats://app:s3cret@", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	// The account comes in an INFO after the first PONG (nats.go's doc
	// says to flush first).
	if err := app.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := app.RemoteAccount(); got != "APP" {
		t.Fatalf("RemoteAccount %q, want APP", got)
	}
	if app.IsSystemAccount() {
		t.Fatal("APP reported as the system account")
	}
	if got := app.ConnectedDomain(); got != "hub" {
		t.Fatalf("ConnectedDomain %q, want hub", got)
	}
	if js, level := app.ConnectedServerJetStream(); !js || level < 1 {
		t.Fatalf("ConnectedServerJetStream %v, %d; want true and an API level (server 2.14)", js, level)
	}
	if ip, err := app.GetClientIP(); err != nil || ip.String() != "127.0.0.1" {
		t.Fatalf("GetClientIP %v, %v", ip, err)
	}
	if got, want := app.ConnectedUrlRedacted(), fmt.Sprintf("nats://app:xxxxx@127.0.0.1:%d", s.port); got != want {
		t.Fatalf("ConnectedUrlRedacted %q, want %q", got, want)
	}

	sys, err := nats.Connect(s.url, nats.UserInfo("sys", "sys"))
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	if err := sys.Flush(); err != nil {
		t.Fatal(err)
	}
	if !sys.IsSystemAccount() || sys.RemoteAccount() != "SYS" {
		t.Fatalf("system user: IsSystemAccount %v, RemoteAccount %q", sys.IsSystemAccount(), sys.RemoteAccount())
	}

	app.Close()
	if _, err := app.GetClientIP(); !errors.Is(err, nats.ErrConnectionClosed) {
		t.Fatalf("GetClientIP after Close: %v, want ErrConnectionClosed", err)
	}
	if app.ConnectedDomain() != "" || app.RemoteAccount() != "" || app.ConnectedUrlRedacted() != "" {
		t.Fatal("a closed connection still reports its server")
	}
	if js, level := app.ConnectedServerJetStream(); js || level != 0 {
		t.Fatal("a closed connection still reports JetStream")
	}
}

func TestConnNumSubscriptions(t *testing.T) {
	s := startServer(t, "")
	nc, err := nats.Connect(s.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if n := nc.NumSubscriptions(); n != 0 {
		t.Fatalf("NumSubscriptions %d on a new connection", n)
	}
	a, err := nc.Subscribe("a", func(*nats.Msg) {})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.SubscribeSync("b"); err != nil {
		t.Fatal(err)
	}
	ch := make(chan *nats.Msg, 1)
	if _, err := nc.QueueSubscribeSyncWithChan("c", "q", ch); err != nil {
		t.Fatal(err)
	}
	if n := nc.NumSubscriptions(); n != 3 {
		t.Fatalf("NumSubscriptions %d, want 3", n)
	}
	if err := a.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	if n := nc.NumSubscriptions(); n != 2 {
		t.Fatalf("NumSubscriptions %d after an Unsubscribe, want 2", n)
	}
	// QueueSubscribeSyncWithChan delivers to the channel.
	if err := nc.Publish("c", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if m := connWaitFor(t, ch, "the channel's message"); string(m.Data) != "hi" {
		t.Fatalf("channel got %q", m.Data)
	}
	nc.Close()
	if n := nc.NumSubscriptions(); n != 0 {
		t.Fatalf("NumSubscriptions %d after Close, want 0", n)
	}
}

func TestConnNewInboxFollowsThePrefix(t *testing.T) {
	s := startServer(t, "")
	nc, err := nats.Connect(s.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	inbox := nc.NewInbox()
	if !strings.HasPrefix(inbox, nats.InboxPrefix) || len(inbox) != len(nats.InboxPrefix)+22 {
		t.Fatalf("NewInbox %q, want _INBOX. and 22 characters", inbox)
	}

	prefixed, err := nats.Connect(s.url, nats.CustomInboxPrefix("my.replies"))
	if err != nil {
		t.Fatal(err)
	}
	defer prefixed.Close()
	inbox = prefixed.NewInbox()
	if !strings.HasPrefix(inbox, "my.replies.") || len(inbox) != len("my.replies.")+22 || inbox == prefixed.NewInbox() {
		t.Fatalf("NewInbox %q, want my.replies., 22 characters, unique", inbox)
	}
	// Requests reply to the same prefix.
	sub, err := nc.Subscribe("svc", func(m *nats.Msg) { m.Respond([]byte(m.Reply)) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	reply, err := prefixed.Request("svc", nil, nats.DefaultTimeout)
	if err != nil || !strings.HasPrefix(string(reply.Data), "my.replies.") {
		t.Fatalf("request replied to %q (%v), want under my.replies.", reply.Data, err)
	}

	for _, bad := range []string{"", "a.*", "a.>", "a."} {
		if _, err := nats.Connect(s.url, nats.CustomInboxPrefix(bad)); err == nil || err.Error() != "nats: invalid custom prefix" {
			t.Fatalf("CustomInboxPrefix(%q): %v, want nats: invalid custom prefix", bad, err)
		}
	}
}
