package interop

// Over WebSocket, the binding and nats.go (both with ws:// URLs) exchange
// messages and requests on one server (issue 42).

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/nats-io/nats.go"
)

// startWebsocketServer runs nats-server with a plain websocket listener and
// returns its ws:// URL.
func startWebsocketServer(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("NATS_SERVER_BIN")
	if bin == "" {
		var err error
		if bin, err = filepath.Abs("../../../.tools/nats-server-2.14.3/nats-server"); err != nil {
			t.Fatal(err)
		}
	}
	port := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
	natsPort, wsPort := port(), port()
	conf := filepath.Join(t.TempDir(), "server.conf")
	text := fmt.Sprintf("websocket {\n listen: \"127.0.0.1:%d\"\n no_tls: true\n}\n", wsPort)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-a", "127.0.0.1", "-p", fmt.Sprint(natsPort), "-c", conf)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", wsPort)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "ws://" + addr
		}
	}
	t.Fatalf("nats-server websocket listener on %s did not start", addr)
	return ""
}

func TestWebsocketInterop(t *testing.T) {
	url := startWebsocketServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	theirs, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.Close()
	mine, err := natsio.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()

	// nats.go publishes to the binding, with headers.
	sub := got(mine.SubscribeSync("interop.ws.to_natsio")).must(t)
	noErr(t, mine.Flush(ctx))
	out := nats.NewMsg("interop.ws.to_natsio")
	out.Data = make([]byte, 200_000)
	for i := range out.Data {
		out.Data[i] = byte(i % 251)
	}
	out.Header.Set("X-From", "nats.go")
	noErr(t, theirs.PublishMsg(out))
	m := got(sub.NextMsg(ctx)).must(t)
	if string(m.Data) != string(out.Data) || m.Header.Get("X-From") != "nats.go" {
		t.Fatalf("binding got %d bytes, header %q", len(m.Data), m.Header.Get("X-From"))
	}

	// The binding publishes to nats.go.
	nsub := got(theirs.SubscribeSync("interop.ws.to_natsgo")).must(t)
	noErr(t, theirs.Flush())
	for i := 0; i < 100; i++ {
		noErr(t, mine.Publish("interop.ws.to_natsgo", []byte(fmt.Sprint(i))))
	}
	for i := 0; i < 100; i++ {
		nm := got(nsub.NextMsg(5 * time.Second)).must(t)
		if string(nm.Data) != fmt.Sprint(i) {
			t.Fatalf("nats.go got %q, want %d", nm.Data, i)
		}
	}

	// Requests both ways.
	got(theirs.Subscribe("interop.ws.natsgo_echo", func(m *nats.Msg) { _ = m.Respond(m.Data) })).must(t)
	noErr(t, theirs.Flush())
	reply := got(mine.Request(ctx, "interop.ws.natsgo_echo", []byte("hi nats.go"))).must(t)
	if string(reply.Data) != "hi nats.go" {
		t.Fatalf("reply %q", reply.Data)
	}
	got(mine.Subscribe("interop.ws.natsio_echo", func(m *natsio.Msg) { _ = m.Respond(m.Data) })).must(t)
	noErr(t, mine.Flush(ctx))
	nreply := got(theirs.Request("interop.ws.natsio_echo", []byte("hi natsio"), 5*time.Second)).must(t)
	if string(nreply.Data) != "hi natsio" {
		t.Fatalf("nats.go reply %q", nreply.Data)
	}
}
