package natsio_test

// The WebSocket transport from Go: a ws:// URL is all it takes (issue 42).

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// startWebsocketServer runs a server with a plain websocket listener and
// returns its ws:// URL.
func startWebsocketServer(t *testing.T) (*natsServer, string) {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s := startConfiguredServer(t, fmt.Sprintf("websocket {\n listen: \"127.0.0.1:%d\"\n no_tls: true\n}\n", port))
	return s, fmt.Sprintf("ws://127.0.0.1:%d", port)
}

func TestWebsocketPublishSubscribeRequest(t *testing.T) {
	s, url := startWebsocketServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, err := natsio.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	tcp, err := natsio.Connect(s.url)
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()

	sub, err := ws.SubscribeSync("go.ws")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tcp.Publish("go.ws", []byte("from tcp")); err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(ctx)
	if err != nil || string(m.Data) != "from tcp" {
		t.Fatalf("ws subscriber got %v, %v", m, err)
	}

	if _, err := tcp.Subscribe("go.echo", func(m *natsio.Msg) { _ = m.Respond(m.Data) }); err != nil {
		t.Fatal(err)
	}
	if err := tcp.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	reply, err := ws.Request(ctx, "go.echo", []byte("over ws"))
	if err != nil || string(reply.Data) != "over ws" {
		t.Fatalf("request over ws: %v, %v", reply, err)
	}
}

func TestWebsocketHandshakeFailureIsErrWebsocket(t *testing.T) {
	// The NATS port is no websocket endpoint.
	_, err := natsio.Connect(fmt.Sprintf("ws://127.0.0.1:%d", shared.port), natsio.NoReconnect())
	if !errors.Is(err, natsio.ErrWebsocket) || !errors.Is(err, natsio.ErrProtocol) {
		t.Fatalf("connect to a NATS port over ws: %v", err)
	}
}
