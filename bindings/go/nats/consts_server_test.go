package nats_test

import (
	"testing"

	"github.com/libnatsio/natsio/bindings/go/nats"
)

// A server at its max_connections refuses the next client: Connect fails
// with the server's text, as nats.go's does.
func TestConnectRefusedAtMaxConnections(t *testing.T) {
	srv := startServer(t, "max_connections: 1\n")
	// The server may still count the probe that saw it start: retry.
	var first *nats.Conn
	eventually(t, "the first connection", func() (err error) {
		first, err = nats.Connect(srv.url)
		return err
	})
	defer first.Close()
	second, err := nats.Connect(srv.url)
	if err == nil {
		second.Close()
		t.Fatal("a second connection was accepted")
	}
	if err.Error() != "nats: "+nats.MAX_CONNECTIONS_ERR {
		t.Errorf("Connect: %q", err)
	}
}
