package nats

// The server pool read and replaced on a live connection, as nats.go's
// Conn.ServerPool and Conn.SetServerPool: the pool and its bookkeeping are
// the core's (natsio.Conn.ServerPool, SetServerPool); this file gives the
// URLs nats.go's shape and checks the list as nats.go does.

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// Server is one server of the pool (ServerPool), as nats.go's.
type Server struct {
	// URL is the server's URL, with a scheme and a port as nats.go
	// completes them (nats://, or the connection's; 4222, 80 or 443).
	URL *url.URL
	// Reconnects is how many attempts to connect to the server failed
	// since it was last connected to.
	Reconnects int
}

// ServerPool lists the server pool (configured and discovered servers) in
// the order the servers are tried, each with its failed attempts: a copy.
// A URL the pool holds that does not parse (none should) is left out.
func (nc *Conn) ServerPool() []Server {
	pool := nc.conn().ServerPool()
	servers := make([]Server, 0, len(pool))
	for _, s := range pool {
		u, err := nc.parseServerURL(s.URL)
		if err != nil {
			continue
		}
		servers = append(servers, Server{URL: u, Reconnects: s.Reconnects})
	}
	return servers
}

// SetServerPool replaces the server pool with servers, in that order (not
// shuffled). The connection stays up; the next reconnect picks from the new
// pool (ForceReconnect moves now). A server already in the pool keeps its
// reconnect count. Errors, with nothing changed: ErrConnectionClosed; a
// URL's parse error; ErrMixingWebsocketSchemes for a ws:// or wss:// URL
// on a connection made to other servers, or the other way round (nats.go's
// rule: one kind per connection, that of the first URL given to Connect).
// Unlike nats.go, which takes an empty list and empties the pool,
// libnatsio keeps at least one server: an empty list fails ("nats: invalid
// configuration", matching natsio.ErrConfig).
func (nc *Conn) SetServerPool(servers []string) error {
	if nc.IsClosed() {
		return ErrConnectionClosed
	}
	ws := nc.usesWebSocket()
	urls := make([]string, 0, len(servers))
	for _, s := range servers {
		u, err := nc.parseServerURL(s)
		if err != nil {
			return err
		}
		if isWebSocketScheme(u) != ws {
			return ErrMixingWebsocketSchemes
		}
		urls = append(urls, u.String())
	}
	return Translate(nc.conn().SetServerPool(urls))
}

// parseServerURL is nats.go's reading of a pool's URL: without "://" it
// takes the connection's scheme, without a port the scheme's default.
func (nc *Conn) parseServerURL(s string) (*url.URL, error) {
	if !strings.Contains(s, "://") {
		s = fmt.Sprintf("%s://%s", nc.connScheme(), s)
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if u.Port() == "" {
		port := "4222"
		switch u.Scheme {
		case "ws":
			port = "80"
		case "wss":
			port = "443"
		}
		u.Host = strings.TrimSuffix(u.Host, ":") + ":" + port
	}
	return u, nil
}

// connScheme is the scheme nats.go gives a URL without one: ws or wss on
// a WebSocket connection, else nats or tls, per Secure.
func (nc *Conn) connScheme() string {
	switch ws := nc.usesWebSocket(); {
	case ws && nc.Opts.Secure:
		return "wss"
	case ws:
		return "ws"
	case nc.Opts.Secure:
		return "tls"
	}
	return "nats"
}

// usesWebSocket reports whether the connection is a WebSocket one, as
// nats.go decides it: by the first URL given to Connect.
func (nc *Conn) usesWebSocket() bool {
	first := DefaultURL
	if given := append(splitURLs(nc.Opts.Url), nc.Opts.Servers...); len(given) > 0 {
		first = given[0]
	}
	u, err := url.Parse(strings.TrimSpace(first))
	return err == nil && isWebSocketScheme(u)
}

// isWebSocketScheme reports whether u is a ws:// or wss:// URL.
func isWebSocketScheme(u *url.URL) bool {
	scheme := strings.ToLower(u.Scheme)
	return scheme == "ws" || scheme == "wss"
}

// reconnectError is a failed reconnect attempt's error for ReconnectErrCB:
// nats.go's error for its kind (Translate), followed by the library's text
// when the translation dropped it ("nats: no servers available for
// connection: reconnect to <url> failed: ..."), so it names the server.
func reconnectError(err error) error {
	translated := Translate(err)
	var e *natsio.Error
	if errors.As(err, &e) && e.Detail != "" && !strings.Contains(translated.Error(), e.Detail) {
		return fmt.Errorf("%w: %s", translated, e.Detail)
	}
	return translated
}
