package nats

// What a connection tells about itself and its server (the server's INFO,
// its subscriptions, its inboxes), as nats.go's Conn methods.

import (
	"encoding/json"
	"net"
	"net/url"
)

// ServerInfo is the server's INFO message, with nats.go's fields and JSON
// names (this package reads the INFO into it).
type ServerInfo struct {
	ID           string   `json:"server_id"`
	Name         string   `json:"server_name"`
	Proto        int      `json:"proto"`
	Version      string   `json:"version"`
	Host         string   `json:"host"`
	Port         int      `json:"port"`
	Headers      bool     `json:"headers"`
	AuthRequired bool     `json:"auth_required,omitempty"`
	TLSRequired  bool     `json:"tls_required,omitempty"`
	TLSAvailable bool     `json:"tls_available,omitempty"`
	MaxPayload   int64    `json:"max_payload"`
	CID          uint64   `json:"client_id,omitempty"`
	ClientIP     string   `json:"client_ip,omitempty"`
	Nonce        string   `json:"nonce,omitempty"`
	Cluster      string   `json:"cluster,omitempty"`
	ConnectURLs  []string `json:"connect_urls,omitempty"`
	LameDuckMode bool     `json:"ldm,omitempty"`
	// JetStream is whether the server has JetStream enabled.
	JetStream bool `json:"jetstream,omitempty"`
	// IsSystemAccount is whether the client's account is the system
	// account.
	IsSystemAccount bool `json:"acc_is_sys,omitempty"`
	// RemoteAccount is the account the client is bound to.
	RemoteAccount string `json:"remote_account,omitempty"`
	// JSApiLevel is the JetStream API level (nats-server 2.12 and later).
	JSApiLevel int    `json:"api_lvl,omitempty"`
	Domain     string `json:"domain,omitempty"`
}

// latestInfo is the server's latest INFO, whatever the connection's
// status; false when there is none to read (closed).
func (nc *Conn) latestInfo() (ServerInfo, bool) {
	var info ServerInfo
	raw, err := nc.conn().ServerInfo()
	if err != nil {
		return info, false
	}
	return info, json.Unmarshal(raw.Raw, &info) == nil
}

// connectedInfo is the INFO of the server connected to; false when not
// connected (nats.go's getters then give zero values).
func (nc *Conn) connectedInfo() (ServerInfo, bool) {
	if nc == nil || nc.Status() != CONNECTED {
		return ServerInfo{}, false
	}
	return nc.latestInfo()
}

// ConnectedUrlRedacted is ConnectedUrl with the password, if any, replaced
// by "xxxxx"; "" when not connected.
func (nc *Conn) ConnectedUrlRedacted() string {
	if nc == nil {
		return ""
	}
	raw := nc.ConnectedUrl()
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Redacted()
}

// ConnectedDomain is the JetStream domain of the server connected to.
func (nc *Conn) ConnectedDomain() string {
	info, _ := nc.connectedInfo()
	return info.Domain
}

// ConnectedServerJetStream reports whether the server connected to has
// JetStream enabled, and its JetStream API level (0 before nats-server
// 2.12).
func (nc *Conn) ConnectedServerJetStream() (bool, int) {
	info, _ := nc.connectedInfo()
	return info.JetStream, info.JSApiLevel
}

// IsSystemAccount reports whether the connection's account is the system
// account.
func (nc *Conn) IsSystemAccount() bool {
	info, _ := nc.connectedInfo()
	return info.IsSystemAccount
}

// RemoteAccount is the account the connection is bound to ("$G" on a
// server without accounts). The server tells it in an INFO that follows
// the first PONG, after Connect returns: call Flush first, as with
// nats.go.
func (nc *Conn) RemoteAccount() string {
	info, _ := nc.connectedInfo()
	return info.RemoteAccount
}

// GetClientIP is the client's IP address as the server sees it.
// ErrConnectionClosed once closed; ErrClientIPNotSupported when the
// server does not tell it.
func (nc *Conn) GetClientIP() (net.IP, error) {
	if nc.IsClosed() {
		return nil, ErrConnectionClosed
	}
	info, _ := nc.latestInfo()
	if info.ClientIP == "" {
		return nil, ErrClientIPNotSupported
	}
	return net.ParseIP(info.ClientIP), nil
}

// NumSubscriptions is how many of the connection's subscriptions are
// active: the core ones and the legacy JetStream push ones. Unlike
// nats.go's count, it leaves out the library's shared request inbox.
func (nc *Conn) NumSubscriptions() int {
	n := 0
	nc.subs.Range(func(_, v any) bool {
		if v.(*Subscription).IsValid() {
			n++
		}
		return true
	})
	nc.pushSubs.Range(func(k, _ any) bool {
		if k.(*Subscription).IsValid() {
			n++
		}
		return true
	})
	return n
}

// NewInbox is a new unique inbox subject under the connection's inbox
// prefix (CustomInboxPrefix): "_INBOX." and 22 random characters without
// one, the prefix, a dot and 22 random characters with one.
func (nc *Conn) NewInbox() string {
	if nc.Opts.InboxPrefix == "" {
		return NewInbox()
	}
	return nc.Opts.InboxPrefix + "." + randomToken(22)
}

// QueueSubscribeSyncWithChan is ChanQueueSubscribe, as in nats.go.
func (nc *Conn) QueueSubscribeSyncWithChan(subj, queue string, ch chan *Msg) (*Subscription, error) {
	return nc.ChanQueueSubscribe(subj, queue, ch)
}
