package nats

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// Defaults nats.go connects with; Connect passes them to the binding so a
// program sees nats.go's timing unless it sets its own.
const (
	DefaultURL              = "nats://127.0.0.1:4222"
	DefaultPort             = 4222
	DefaultMaxReconnect     = 60
	DefaultReconnectWait    = 2 * time.Second
	DefaultTimeout          = 2 * time.Second
	DefaultDrainTimeout     = 30 * time.Second
	DefaultFlusherTimeout   = time.Minute
	DefaultPingInterval     = 2 * time.Minute
	DefaultMaxPingOut       = 2
	DefaultReconnectBufSize = 8 * 1024 * 1024
)

// ConnHandler receives connection events (ClosedHandler, ReconnectHandler...).
type ConnHandler func(*Conn)

// ConnErrHandler receives a disconnection with its cause (nil if none).
type ConnErrHandler func(*Conn, error)

// ErrHandler receives asynchronous errors, with the subscription concerned
// (nil when none).
type ErrHandler func(*Conn, *Subscription, error)

// Option sets a field of Options (nats.go's functional option).
type Option func(*Options) error

// Options are a connection's settings, by nats.go's names. The fields the
// binding has no counterpart for are not listed.
type Options struct {
	Url         string
	Servers     []string
	NoRandomize bool
	NoEcho      bool
	Name        string
	// TLSConfig is the tls.Config of Secure; Connect hands over what the
	// library's TLS can take from it (see Secure), when Secure is set.
	TLSConfig *tls.Config
	// Verbose has the server acknowledge every protocol message (the
	// client reads past the acks); Pedantic has it check the protocol
	// strictly.
	Verbose              bool
	Pedantic             bool
	Secure               bool
	TLSHandshakeFirst    bool
	AllowReconnect       bool
	MaxReconnect         int
	ReconnectWait        time.Duration
	ReconnectJitter      time.Duration
	ReconnectJitterTLS   time.Duration
	Timeout              time.Duration
	DrainTimeout         time.Duration
	FlusherTimeout       time.Duration
	PingInterval         time.Duration
	MaxPingsOut          int
	ReconnectBufSize     int
	User                 string
	Password             string
	Token                string
	RetryOnFailedConnect bool
	IgnoreAuthErrorAbort bool
	InboxPrefix          string
	// CustomDialer is SetCustomDialer's (libnatsio cannot use it: Connect
	// fails with ErrInvalidArg).
	CustomDialer CustomDialer

	ClosedCB ConnHandler
	// DisconnectedCB is called on a lost connection when
	// DisconnectedErrCB is not set. Deprecated: use DisconnectedErrCB.
	DisconnectedCB      ConnHandler
	DisconnectedErrCB   ConnErrHandler
	ConnectedCB         ConnHandler
	ReconnectedCB       ConnHandler
	DiscoveredServersCB ConnHandler
	LameDuckModeHandler ConnHandler
	AsyncErrorCB        ErrHandler
	// ReconnectErrCB is called for each failed attempt to reconnect, with
	// its error (naming the server tried), while the client keeps trying
	// (ReconnectErrHandler).
	ReconnectErrCB ConnErrHandler
	// CustomReconnectDelayCB gives the wait before each turn's last
	// reconnect attempt in place of ReconnectWait and the jitter
	// (CustomReconnectDelay).
	CustomReconnectDelayCB ReconnectDelayHandler

	// UserInfo gives the user and password on every connect
	// (UserInfoHandler); TokenHandler the token (TokenHandler).
	UserInfo     UserInfoCB
	TokenHandler AuthTokenHandler
	// UserJWT gives the user JWT and SignatureCB signs the server's nonce
	// with the user's key, on every connect (UserJWT, UserCredentialBytes,
	// UserJWTAndSeed set them).
	UserJWT     UserJWTHandler
	SignatureCB SignatureHandler
	// Nkey is the public NKey to authenticate as, SignatureCB signing the
	// server's nonce with its key on every connect (Nkey sets both);
	// exclusive with UserJWT (ErrNkeyAndUser).
	Nkey string

	// The fields of the options in options_extra.go (see there what each
	// does here) and of NoCallbacksAfterClientClose.
	PermissionErrOnSubscribe    bool
	IgnoreDiscoveredServers     bool
	NoCallbacksAfterClientClose bool
	WriteBufferSize             int
	Compression                 bool
	UseOldRequestStyle          bool
	SkipHostLookup              bool
	SkipSubjectValidation       bool
	ReconnectOnFlusherError     bool
	// SubChanLen is how many messages a synchronous subscription keeps
	// waiting for NextMsg (its pending message limit; SyncQueueLen).
	SubChanLen int
	// WebSocketConnectionHeaders are added to the upgrade request of
	// ws:// and wss:// servers.
	WebSocketConnectionHeaders http.Header

	credsFile    string
	nkeySeedFile string
	tls          natsio.TLSFiles
	tlsHostname  string
	// The client certificate and key a tls.Config of Secure carries, as PEM.
	tlsConfigCert, tlsConfigKey []byte
}

// GetDefaultOptions returns nats.go's default settings.
func GetDefaultOptions() Options {
	return Options{
		AllowReconnect:     true,
		MaxReconnect:       DefaultMaxReconnect,
		ReconnectWait:      DefaultReconnectWait,
		ReconnectJitter:    DefaultReconnectJitter,
		ReconnectJitterTLS: DefaultReconnectJitterTLS,
		Timeout:            DefaultTimeout,
		DrainTimeout:       DefaultDrainTimeout,
		FlusherTimeout:     DefaultFlusherTimeout,
		PingInterval:       DefaultPingInterval,
		MaxPingsOut:        DefaultMaxPingOut,
		ReconnectBufSize:   DefaultReconnectBufSize,
		SubChanLen:         DefaultMaxChanLen,
	}
}

func Name(name string) Option { return func(o *Options) error { o.Name = name; return nil } }

func UserInfo(user, password string) Option {
	return func(o *Options) error { o.User, o.Password = user, password; return nil }
}

// UserInfoCB gives the user and password to present (UserInfoHandler).
type UserInfoCB func() (string, string)

// AuthTokenHandler gives the token to present (TokenHandler).
type AuthTokenHandler func() string

// UserInfoHandler authenticates with the user and password cb gives, asked
// on every connect and reconnect (on a library thread), so rotated
// credentials are picked up. It takes the place of UserInfo.
func UserInfoHandler(cb UserInfoCB) Option {
	return func(o *Options) error { o.UserInfo = cb; return nil }
}

// Token authenticates with token; ErrTokenAlreadySet after TokenHandler.
func Token(token string) Option {
	return func(o *Options) error {
		if o.TokenHandler != nil {
			return ErrTokenAlreadySet
		}
		o.Token = token
		return nil
	}
}

// TokenHandler authenticates with the token cb gives, asked on every
// connect and reconnect; ErrTokenAlreadySet after Token.
func TokenHandler(cb AuthTokenHandler) Option {
	return func(o *Options) error {
		if o.Token != "" {
			return ErrTokenAlreadySet
		}
		o.TokenHandler = cb
		return nil
	}
}

// UserCredentials authenticates with a .creds file (JWT and seed), or with
// the JWT of userOrChainedFile and the seed of seedFiles[0]; the files are
// read on every connect.
func UserCredentials(userOrChainedFile string, seedFiles ...string) Option {
	return func(o *Options) error {
		if len(seedFiles) > 0 {
			return credentialFilesAuth(o, userOrChainedFile, seedFiles[0])
		}
		o.credsFile = userOrChainedFile
		o.UserJWT, o.SignatureCB = nil, nil // the last credentials given win
		return nil
	}
}

// NkeyOptionFromSeed authenticates with the nkey whose seed is in seedFile;
// the file is read now, as nats.go does, so a missing file fails here.
func NkeyOptionFromSeed(seedFile string) (Option, error) {
	if _, err := os.ReadFile(seedFile); err != nil {
		return nil, err
	}
	return func(o *Options) error { o.nkeySeedFile = seedFile; return nil }, nil
}

func NoEcho() Option        { return func(o *Options) error { o.NoEcho = true; return nil } }
func DontRandomize() Option { return func(o *Options) error { o.NoRandomize = true; return nil } }
func NoReconnect() Option   { return func(o *Options) error { o.AllowReconnect = false; return nil } }
func TLSHandshakeFirst() Option {
	return func(o *Options) error { o.TLSHandshakeFirst, o.Secure = true, true; return nil }
}

func MaxReconnects(max int) Option {
	return func(o *Options) error { o.MaxReconnect = max; return nil }
}

// ReconnectWait is the wait between reconnect attempts to a server; 0 or
// less is none (the library's shortest, 1 ms).
func ReconnectWait(t time.Duration) Option {
	return func(o *Options) error { o.ReconnectWait = t; return nil }
}

func ReconnectJitter(jitter, jitterForTLS time.Duration) Option {
	return func(o *Options) error { o.ReconnectJitter, o.ReconnectJitterTLS = jitter, jitterForTLS; return nil }
}

// ReconnectDelayHandler gives the wait before the next reconnect attempt,
// given the number of turns through the server pool so far (1, 2, ...).
type ReconnectDelayHandler func(attempts int) time.Duration

// CustomReconnectDelay sets the handler that paces reconnects, as in
// nats.go: the servers are tried in turn, and before the last server of
// each turn (with one server, before every attempt) the client waits what
// cb returns for that turn's number, counted from 1 on every reconnect
// (and on the retries of RetryOnFailedConnect); ReconnectWait and the
// jitter are then not used. cb runs on a library thread. Unlike nats.go,
// a panic in cb does not end the program: that attempt fails
// (ReconnectErrCB gets ErrConfig) after ReconnectWait, and the client
// keeps trying.
func CustomReconnectDelay(cb ReconnectDelayHandler) Option {
	return func(o *Options) error { o.CustomReconnectDelayCB = cb; return nil }
}

func ReconnectBufSize(size int) Option {
	return func(o *Options) error { o.ReconnectBufSize = size; return nil }
}

func Timeout(t time.Duration) Option { return func(o *Options) error { o.Timeout = t; return nil } }

// DrainTimeout bounds Drain; 0 or less gives up at once, as in nats.go
// (the library's shortest, 1 ms).
func DrainTimeout(t time.Duration) Option {
	return func(o *Options) error { o.DrainTimeout = t; return nil }
}
func FlusherTimeout(t time.Duration) Option {
	return func(o *Options) error { o.FlusherTimeout = t; return nil }
}

// PingInterval is how often the client pings the server; 0 or less turns
// the pings off, as in nats.go (the library then pings once a century).
func PingInterval(t time.Duration) Option {
	return func(o *Options) error { o.PingInterval = t; return nil }
}

func MaxPingsOutstanding(max int) Option {
	return func(o *Options) error { o.MaxPingsOut = max; return nil }
}

func RetryOnFailedConnect(retry bool) Option {
	return func(o *Options) error { o.RetryOnFailedConnect = retry; return nil }
}

func IgnoreAuthErrorAbort() Option {
	return func(o *Options) error { o.IgnoreAuthErrorAbort = true; return nil }
}

// CustomDialer is nats.go's dialer interface (SetCustomDialer).
type CustomDialer interface {
	Dial(network, address string) (net.Conn, error)
}

// SetCustomDialer has the connections made by dialer. libnatsio's are made
// by the library, which offers no hook for a program's dialer: Connect
// fails with ErrInvalidArg, saying so, rather than silently dialing on
// its own.
func SetCustomDialer(dialer CustomDialer) Option {
	return func(o *Options) error { o.CustomDialer = dialer; return nil }
}

// CustomInboxPrefix sets the prefix of the connection's inboxes (replies
// to its requests, NewInbox); an empty prefix, one with a wildcard or
// ending with a dot fails, with nats.go's error text.
func CustomInboxPrefix(p string) Option {
	return func(o *Options) error {
		if p == "" || strings.ContainsAny(p, ">*") || strings.HasSuffix(p, ".") {
			return errors.New("nats: invalid custom prefix")
		}
		o.InboxPrefix = p
		return nil
	}
}

// Secure requires TLS, configured by at most one tls.Config (more:
// ErrMultipleTLSConfigs), kept in Options.TLSConfig. Connect uses what the
// library's TLS can take from it: ServerName (the name the server's
// certificate is verified against) and the first of Certificates (the
// client's chain and key, for mutual TLS, handed over as PEM); RootCAs
// only when it is the system's pool, as an x509.CertPool cannot be read
// back (give the CA file with RootCAs instead). What cannot be mapped
// fails Connect with ErrInvalidArg and the field named: other RootCAs,
// InsecureSkipVerify (the library always verifies the server), custom
// verification (VerifyPeerCertificate, VerifyConnection) and certificate
// callbacks (GetClientCertificate). The other fields (versions, cipher
// suites, ...) are the library's choice.
func Secure(tlsConfigs ...*tls.Config) Option {
	return func(o *Options) error {
		if len(tlsConfigs) > 1 {
			return ErrMultipleTLSConfigs
		}
		o.Secure = true
		if len(tlsConfigs) == 1 {
			o.TLSConfig = tlsConfigs[0]
		}
		return nil
	}
}

// unmapped is the error of a tls.Config field Secure cannot hand over.
func unmapped(field, why string) error {
	return fmt.Errorf("%w: tls.Config.%s is not supported by libnatsio (%s)", ErrInvalidArg, field, why)
}

func (o *Options) useTLSConfig(c *tls.Config) error {
	switch {
	case c.InsecureSkipVerify:
		return unmapped("InsecureSkipVerify", "the server's certificate is always verified")
	case c.VerifyPeerCertificate != nil || c.VerifyConnection != nil:
		return unmapped("VerifyPeerCertificate/VerifyConnection", "custom verification cannot run in the library")
	case c.GetClientCertificate != nil:
		return unmapped("GetClientCertificate", "give the certificate in Certificates or with ClientCert")
	case len(c.Certificates) > 1:
		return unmapped("Certificates", "one client certificate at most")
	}
	if c.RootCAs != nil {
		system, err := x509.SystemCertPool()
		if err != nil || !c.RootCAs.Equal(system) {
			return unmapped("RootCAs", "an x509.CertPool cannot be read back: give the CA file with nats.RootCAs")
		}
	}
	if c.ServerName != "" {
		o.tlsHostname = c.ServerName
	}
	if len(c.Certificates) == 1 {
		cert, key, err := certificatePEM(c.Certificates[0])
		if err != nil {
			return err
		}
		o.tlsConfigCert, o.tlsConfigKey = cert, key
	}
	return nil
}

// certificatePEM is c's chain and private key as PEM.
func certificatePEM(c tls.Certificate) (chain, key []byte, err error) {
	if len(c.Certificate) == 0 || c.PrivateKey == nil {
		return nil, nil, unmapped("Certificates", "a certificate without its DER chain or private key")
	}
	var out bytes.Buffer
	for _, der := range c.Certificate {
		if err := pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: der}); err != nil {
			return nil, nil, err
		}
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		return nil, nil, unmapped("Certificates", "its private key cannot be marshalled: "+err.Error())
	}
	return out.Bytes(), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), nil
}

// tlsOption is the library's TLS option for o: the files, or PEM when a
// tls.Config gave a certificate (the files RootCAs and ClientCert name
// are read into it then, ClientCert's in place of the config's).
func (o *Options) tlsOption() (natsio.Option, error) {
	if o.tlsConfigCert == nil {
		return natsio.Secure(o.tls), nil
	}
	p := natsio.TLSPEM{Cert: o.tlsConfigCert, Key: o.tlsConfigKey}
	for _, f := range []struct {
		name string
		into *[]byte
	}{{o.tls.CA, &p.CA}, {o.tls.Cert, &p.Cert}, {o.tls.Key, &p.Key}} {
		if f.name == "" {
			continue
		}
		b, err := os.ReadFile(f.name)
		if err != nil {
			return nil, err
		}
		*f.into = b
	}
	return natsio.SecurePEM(p), nil
}

// RootCAs verifies servers with the CA certificates of file (one file).
func RootCAs(file ...string) Option {
	return func(o *Options) error {
		if len(file) != 1 {
			return ErrInvalidArg
		}
		o.tls.CA, o.Secure = file[0], true
		return nil
	}
}

func ClientCert(certFile, keyFile string) Option {
	return func(o *Options) error { o.tls.Cert, o.tls.Key, o.Secure = certFile, keyFile, true; return nil }
}

func ClosedHandler(cb ConnHandler) Option {
	return func(o *Options) error { o.ClosedCB = cb; return nil }
}
func DisconnectErrHandler(cb ConnErrHandler) Option {
	return func(o *Options) error { o.DisconnectedErrCB = cb; return nil }
}
func ConnectHandler(cb ConnHandler) Option {
	return func(o *Options) error { o.ConnectedCB = cb; return nil }
}
func ReconnectHandler(cb ConnHandler) Option {
	return func(o *Options) error { o.ReconnectedCB = cb; return nil }
}

// ReconnectErrHandler sets the handler called for each failed attempt to
// reconnect (Options.ReconnectErrCB), after the disconnect handler and
// before the reconnect or closed handler. Its error is the attempt's,
// translated as every error here (see Translate), with the library's text
// naming the server tried (as nats.go's dial error names it).
func ReconnectErrHandler(cb ConnErrHandler) Option {
	return func(o *Options) error { o.ReconnectErrCB = cb; return nil }
}
func DiscoveredServersHandler(cb ConnHandler) Option {
	return func(o *Options) error { o.DiscoveredServersCB = cb; return nil }
}
func LameDuckModeHandler(cb ConnHandler) Option {
	return func(o *Options) error { o.LameDuckModeHandler = cb; return nil }
}
func ErrorHandler(cb ErrHandler) Option {
	return func(o *Options) error { o.AsyncErrorCB = cb; return nil }
}

// bindingOptions are the binding's options for o, with the handlers
// calling back with nc.
func (o *Options) bindingOptions(nc *Conn) ([]natsio.Option, error) {
	if err := o.checkNkey(); err != nil {
		return nil, err
	}
	if o.CustomDialer != nil {
		return nil, fmt.Errorf("%w: a custom dialer is not supported by libnatsio (its connections are made by the library, which has no hook for a program's dialer)", ErrInvalidArg)
	}
	opts := []natsio.Option{
		natsio.MaxReconnects(o.MaxReconnect),
		// nats.go waits the same time between attempts, without doubling.
		natsio.ReconnectWait(atLeastOneMilli(o.ReconnectWait), atLeastOneMilli(o.ReconnectWait)),
		natsio.ConnectTimeout(o.Timeout),
		natsio.DrainTimeout(atLeastOneMilli(o.DrainTimeout)),
		natsio.PingInterval(pingInterval(o.PingInterval), o.MaxPingsOut),
		natsio.ReconnectBufSize(o.ReconnectBufSize),
		natsio.RetryOnFailedConnect(o.RetryOnFailedConnect),
		natsio.ErrorHandler(nc.asyncError),
		natsio.DisconnectErrHandler(func(inner *natsio.Conn, err error) {
			nc.bind(inner)
			if err != nil {
				nc.setLastError(err)
			}
			if inner != nil && inner.Status() == natsio.Reconnecting {
				nc.statusChanged(RECONNECTING)
			} else {
				nc.statusChanged(DISCONNECTED)
			}
			nc.linkUp.Store(false)
			nc.disconnected(Translate(err))
		}),
	}
	if o.Name != "" {
		opts = append(opts, natsio.Name(o.Name))
	}
	if !o.AllowReconnect {
		opts = append(opts, natsio.NoReconnect())
	}
	if o.NoEcho {
		opts = append(opts, natsio.NoEcho())
	}
	if o.NoRandomize {
		opts = append(opts, natsio.DontRandomize())
	}
	// Always given: 0 is no jitter, as in nats.go (GetDefaultOptions has
	// nats.go's defaults).
	opts = append(opts, natsio.ReconnectJitter(max(o.ReconnectJitter, 0), max(o.ReconnectJitterTLS, 0)))
	if cb := o.CustomReconnectDelayCB; cb != nil {
		opts = append(opts, natsio.CustomReconnectDelay(natsio.ReconnectDelayHandler(cb)))
	}
	if o.UserInfo != nil {
		if o.User != "" || o.Password != "" {
			return nil, ErrUserInfoAlreadySet
		}
	}
	if nkeyOpt, err := o.nkeyOption(nc); err != nil {
		return nil, err
	} else if nkeyOpt != nil {
		// The user, password and token go with the NKey (nkeyOption).
		opts = append(opts, nkeyOpt)
	} else {
		if o.UserInfo != nil {
			cb := o.UserInfo
			opts = append(opts, natsio.UserInfoCallback(func() (string, string, error) {
				user, password := cb()
				return user, password, nil
			}))
		} else if o.User != "" || o.Password != "" {
			opts = append(opts, natsio.UserInfo(o.User, o.Password))
		}
		if o.TokenHandler != nil {
			cb := o.TokenHandler
			opts = append(opts, natsio.TokenCallback(func() (string, error) { return cb(), nil }))
		} else if o.Token != "" {
			opts = append(opts, natsio.Token(o.Token))
		}
	}
	if o.credsFile != "" {
		opts = append(opts, natsio.UserCredentials(o.credsFile))
	}
	if jwtOpt, err := o.userJWTOption(nc); err != nil {
		return nil, err
	} else if jwtOpt != nil {
		opts = append(opts, jwtOpt)
	}
	if o.nkeySeedFile != "" {
		opts = append(opts, natsio.NkeyFromFile(o.nkeySeedFile))
	}
	if o.Secure {
		if o.TLSConfig != nil {
			if err := o.useTLSConfig(o.TLSConfig); err != nil {
				return nil, err
			}
		}
		tlsOpt, err := o.tlsOption()
		if err != nil {
			return nil, err
		}
		opts = append(opts, tlsOpt)
	}
	if o.TLSHandshakeFirst {
		opts = append(opts, natsio.TLSHandshakeFirst())
	}
	if o.tlsHostname != "" {
		opts = append(opts, natsio.TLSHostname(o.tlsHostname))
	}
	if o.IgnoreAuthErrorAbort {
		opts = append(opts, natsio.IgnoreAuthErrorAbort())
	}
	if o.InboxPrefix != "" {
		opts = append(opts, natsio.InboxPrefix(o.InboxPrefix))
	}
	extra, err := o.extraBindingOptions()
	if err != nil {
		return nil, err
	}
	opts = append(opts, extra...)
	// The status listeners (StatusChanged) see an event before the
	// program's handler runs (noStatus: none to report). The handlers are
	// read from nc when the event happens: Set*Handler may change them.
	const noStatus = Status(-1)
	handler := func(cb func() ConnHandler, status Status) natsio.ConnHandler {
		return func(inner *natsio.Conn) {
			nc.bind(inner)
			if status == CLOSED {
				nc.releaseBarriers()
			}
			if status == CONNECTED {
				nc.linkUp.Store(true)
			}
			// The first connection's event reaches the listeners only when
			// Connect returned before it (RetryOnFailedConnect): else
			// nats.go's listeners, made after Connect, never see it.
			if status == CONNECTED && inner != nil && inner == nc.connectedAtStart.Load() {
				status = noStatus
			}
			if status != noStatus {
				nc.statusChanged(status)
			}
			switch {
			case status == CLOSED && nc.muted():
				return
			case status == CLOSED && nc.linkUp.Swap(false):
				// Closed while connected: nats.go tells the disconnect
				// handler first, without an error.
				nc.disconnected(nil)
			}
			if cb := cb(); cb != nil {
				cb(nc)
			}
		}
	}
	reconnected := func(inner *natsio.Conn) {
		nc.bind(inner)
		nc.linkUp.Store(true)
		nc.statusChanged(CONNECTED)
		if cb := nc.ReconnectHandler(); cb != nil {
			cb(nc)
		}
	}
	fixed := func(cb ConnHandler) func() ConnHandler { return func() ConnHandler { return cb } }
	opts = append(opts, natsio.ClosedHandler(handler(nc.ClosedHandler, CLOSED)),
		natsio.ConnectedHandler(handler(fixed(o.ConnectedCB), CONNECTED)),
		natsio.ReconnectHandler(reconnected),
		// Always installed: SetDiscoveredServersHandler may come later.
		natsio.DiscoveredServersHandler(handler(nc.DiscoveredServersHandler, noStatus)))
	if o.LameDuckModeHandler != nil {
		opts = append(opts, natsio.LameDuckModeHandler(handler(fixed(o.LameDuckModeHandler), noStatus)))
	}
	if cb := o.ReconnectErrCB; cb != nil {
		opts = append(opts, natsio.ReconnectErrHandler(func(inner *natsio.Conn, err error) {
			nc.bind(inner)
			cb(nc, reconnectError(err))
		}))
	}
	return opts, nil
}
