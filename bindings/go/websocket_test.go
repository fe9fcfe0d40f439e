package natsio_test

// The WebSocket transport from Go: a ws:// URL is all it takes (issue 42).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
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

// upgradeRecorder listens in front of a websocket port: it reads each
// upgrade request, hands its headers to the test, then joins the client
// to the server, so the connection works as if direct.
func upgradeRecorder(t *testing.T, serverAddr string) (url string, requests <-chan http.Header) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	seen := make(chan http.Header, 16)
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer client.Close()
				r := bufio.NewReader(client)
				req, err := http.ReadRequest(r)
				if err != nil {
					return
				}
				seen <- req.Header
				server, err := net.Dial("tcp", serverAddr)
				if err != nil {
					return
				}
				defer server.Close()
				if err := req.Write(server); err != nil {
					return
				}
				go io.Copy(server, r) // what the client sent after the request
				io.Copy(client, server)
			}()
		}
	}()
	return "ws://" + ln.Addr().String(), seen
}

// Headers given with WebSocketHeader reach the upgrade request, every
// value of a name given twice; bad ones fail at Connect.
func TestWebsocketUpgradeHeaders(t *testing.T) {
	_, wsURL := startWebsocketServer(t)
	url, requests := upgradeRecorder(t, strings.TrimPrefix(wsURL, "ws://"))
	nc, err := natsio.Connect(url, natsio.NoReconnect(),
		natsio.WebSocketHeader("Authorization", "Bearer t0k3n"),
		natsio.WebSocketHeader("X-Route", "a"), natsio.WebSocketHeader("X-Route", "b"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := nc.RTT(); err != nil {
		t.Fatalf("a round trip through the recorder: %v", err)
	}
	h := <-requests
	if h.Get("Authorization") != "Bearer t0k3n" || !slices.Equal(h.Values("X-Route"), []string{"a", "b"}) {
		t.Errorf("upgrade request headers %v", h)
	}
	for _, bad := range [][2]string{{"Bad Name", "v"}, {"X-Ok", "line\nbreak"}, {"Sec-WebSocket-Key", "k"}} {
		_, err := natsio.Connect(url, natsio.NoReconnect(), natsio.WebSocketHeader(bad[0], bad[1]))
		if !errors.Is(err, natsio.ErrConfig) {
			t.Errorf("header %q: %q: %v, want ErrConfig", bad[0], bad[1], err)
		}
	}
	if _, err := natsio.Connect(url, natsio.NoReconnect(), natsio.WebSocketHeader("X-Nul", "a\x00b")); !errors.Is(err, natsio.ErrInvalidArgument) {
		t.Errorf("a NUL byte: %v, want ErrInvalidArgument", err)
	}
}
