package interop

// The facade's DecodeHeadersMsg reads the header blocks that nats.go and
// the server put on the wire as nats.go's own DecodeHeadersMsg does.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	facade "github.com/libnatsio/natsio/bindings/go/nats"
	"github.com/nats-io/nats.go"
)

// rawHeaderBlocks subscribes to subject over a raw protocol connection
// and returns the header blocks of the first n HMSGs it receives after
// send has run (with the raw connection, to publish itself if it wants).
func rawHeaderBlocks(t *testing.T, url, subject string, n int, send func(raw net.Conn)) [][]byte {
	t.Helper()
	raw, err := net.Dial("tcp", strings.TrimPrefix(url, "nats://"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(raw)
	if _, err := r.ReadString('\n'); err != nil { // INFO
		t.Fatal(err)
	}
	fmt.Fprintf(raw, "CONNECT {\"verbose\":false,\"headers\":true,\"no_responders\":true,\"protocol\":1}\r\nSUB %s 1\r\nPING\r\n", subject)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "PONG\r\n" {
			break
		}
	}
	send(raw)
	var blocks [][]byte
	for len(blocks) < n {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case line == "PING\r\n":
			io.WriteString(raw, "PONG\r\n")
			continue
		case strings.HasPrefix(line, "INFO "): // the server's updates
			continue
		}
		// HMSG <subject> <sid> [reply] <header bytes> <total bytes>
		fields := strings.Fields(line)
		if fields[0] != "HMSG" {
			t.Fatalf("unexpected %q", line)
		}
		var hdrLen, total int
		fmt.Sscan(fields[len(fields)-2], &hdrLen)
		fmt.Sscan(fields[len(fields)-1], &total)
		payload := make([]byte, total+2)
		if _, err := io.ReadFull(r, payload); err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, payload[:hdrLen])
	}
	return blocks
}

func TestDecodeHeadersMsgReadsTheWire(t *testing.T) {
	url := startServer(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sent := nats.Header{"Trace-Id": {"abc"}, "multi": {"1", " two", "3\tthree"}, "Empty": {""}}
	blocks := rawHeaderBlocks(t, url, "hdrs.>", 2, func(raw net.Conn) {
		if err := nc.PublishMsg(&nats.Msg{Subject: "hdrs.official", Header: sent, Data: []byte("x")}); err != nil {
			t.Fatal(err)
		}
		nc.Flush()
		// A request nobody answers: the server's no-responders status.
		io.WriteString(raw, "PUB nobody.home hdrs.reply 0\r\n\r\n")
	})
	for i, block := range blocks {
		want, wantErr := nats.DecodeHeadersMsg(block)
		got, err := facade.DecodeHeadersMsg(block)
		if (err != nil) != (wantErr != nil) || !reflect.DeepEqual(map[string][]string(got), map[string][]string(want)) {
			t.Errorf("block %d %q: facade %v, %v; nats.go %v, %v", i, block, got, err, want, wantErr)
		}
	}
	if got, _ := facade.DecodeHeadersMsg(blocks[1]); got.Get("Status") != "503" {
		t.Errorf("no status in the no-responders block: %v", got)
	}
	// Malformed blocks fail alike.
	for _, bad := range []string{"NATS/1.0 5\r\n\r\n", "NATS/1.0\r\nbroken\r\n\r\n", "NATS/1.0\r\nA: 1\r\n"} {
		_, want := nats.DecodeHeadersMsg([]byte(bad))
		_, got := facade.DecodeHeadersMsg([]byte(bad))
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("%q: facade %v, nats.go %v", bad, got, want)
		}
	}
}
