// Package micro runs NATS micro services (ADR-32) on libnatsio with the
// API of nats.go's micro package: a program written for
// github.com/nats-io/nats.go/micro moves by changing its imports (and
// nats.Connect to natsio.Connect).
//
// The library's core does the work: it validates the configuration,
// answers $SRV.PING|INFO|STATS (bare, by name, by name and id), keeps
// each endpoint's stats (processing time measured from a request's
// delivery to its answer) and drains everything on Stop. Handlers run in
// each endpoint's push mode, one request at a time, in order, on the
// endpoint's own library thread. A handler that panics fails its request
// (a 500 error reply unless it had answered, an error in the stats, the
// ErrorHandler called) and the endpoint goes on serving.
//
// Discover, DiscoverPing, DiscoverInfo and DiscoverStats are the client
// side (nats.go's micro has none): they ask running services, of any
// client, for their responses.
package micro

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/internal/service"
)

type (
	// Service is a running service. All methods are safe for concurrent
	// use.
	Service interface {
		// AddEndpoint adds an endpoint named name (its subject is the
		// name unless WithEndpointSubject gives one) served by handler.
		AddEndpoint(name string, handler Handler, opts ...EndpointOpt) error
		// AddGroup adds a group: endpoints added to it listen on
		// "<name>.<subject>". A bad name is reported by the group's
		// AddEndpoint.
		AddGroup(name string, opts ...GroupOpt) Group
		// Info is the service's INFO response.
		Info() Info
		// Stats is the service's STATS response (the StatsHandler is
		// called for each endpoint).
		Stats() Stats
		// Reset zeroes every endpoint's stats and restarts Started.
		Reset()
		// Stop drains every endpoint and the monitoring subscriptions:
		// requests received are still handled (Stop waits for them, unless
		// called from a handler), new ones find no responders. Stopping a
		// stopped service does nothing.
		Stop() error
		// Stopped reports whether the service has stopped (Stop, or the
		// connection's close).
		Stopped() bool
	}

	// Group is a subject prefix (and a queue group) for endpoints.
	Group interface {
		AddGroup(name string, opts ...GroupOpt) Group
		AddEndpoint(name string, handler Handler, opts ...EndpointOpt) error
	}

	// EndpointOpt sets an endpoint's option.
	EndpointOpt func(*endpointOpts) error
	// GroupOpt sets a group's option.
	GroupOpt func(*groupOpts)

	endpointOpts struct {
		subject    string
		metadata   map[string]string
		queueGroup string
		qgDisabled bool
		// pendingMsgs and pendingBytes are WithEndpointPendingLimits'
		// (nil: the connection's subscription defaults).
		pendingMsgs, pendingBytes *int64
	}

	groupOpts struct {
		queueGroup string
		qgDisabled bool
	}

	// ErrHandler is told of a handler failure (a panic: code 500) and of
	// requests dropped over an
	// endpoint's pending limits (WithEndpointPendingLimits: the NATSError's
	// Subject is the endpoint's, its Description the library's
	// slow-consumer text, and it matches natsio.ErrSlowConsumer). Slow
	// consumers are told on the connection's events thread, the rest on
	// the thread that saw them; the handler should return promptly.
	ErrHandler func(Service, *NATSError)
	// DoneHandler is called once the service has stopped.
	DoneHandler func(Service)
	// StatsHandler gives an endpoint's STATS data (marshalled to JSON).
	StatsHandler func(*Endpoint) any

	// ServiceIdentity is what every response names.
	ServiceIdentity struct {
		Name     string            `json:"name"`
		ID       string            `json:"id"`
		Version  string            `json:"version"`
		Metadata map[string]string `json:"metadata"`
	}

	// Stats is a STATS response (io.nats.micro.v1.stats_response).
	Stats struct {
		ServiceIdentity
		Type      string           `json:"type"`
		Started   time.Time        `json:"started"`
		Endpoints []*EndpointStats `json:"endpoints"`
	}

	// EndpointStats are an endpoint's counters; times in nanoseconds on
	// the wire.
	EndpointStats struct {
		Name                  string          `json:"name"`
		Subject               string          `json:"subject"`
		QueueGroup            string          `json:"queue_group"`
		NumRequests           int             `json:"num_requests"`
		NumErrors             int             `json:"num_errors"`
		LastError             string          `json:"last_error"`
		ProcessingTime        time.Duration   `json:"processing_time"`
		AverageProcessingTime time.Duration   `json:"average_processing_time"`
		Data                  json.RawMessage `json:"data,omitempty"`
	}

	// Ping is a PING response (io.nats.micro.v1.ping_response).
	Ping struct {
		ServiceIdentity
		Type string `json:"type"`
	}

	// Info is an INFO response (io.nats.micro.v1.info_response).
	Info struct {
		ServiceIdentity
		Type        string         `json:"type"`
		Description string         `json:"description"`
		Endpoints   []EndpointInfo `json:"endpoints"`
	}

	// EndpointInfo describes an endpoint in INFO.
	EndpointInfo struct {
		Name       string            `json:"name"`
		Subject    string            `json:"subject"`
		QueueGroup string            `json:"queue_group"`
		Metadata   map[string]string `json:"metadata"`
	}

	// Endpoint is an endpoint as a StatsHandler sees it.
	Endpoint struct {
		EndpointConfig
		Name string
	}

	// Verb is a monitoring verb.
	Verb int64

	// Config is a service's configuration.
	Config struct {
		// Name: required, [A-Za-z0-9_-]+.
		Name string `json:"name"`
		// Endpoint, if set, is added as the endpoint "default".
		Endpoint *EndpointConfig `json:"endpoint"`
		// Version: required, SemVer 2.0.
		Version     string            `json:"version"`
		Description string            `json:"description"`
		Metadata    map[string]string `json:"metadata,omitempty"`
		// QueueGroup is the endpoints' default queue group
		// (DefaultQueueGroup when empty).
		QueueGroup string `json:"queue_group"`
		// QueueGroupDisabled: endpoints without a queue group (every
		// instance gets every request) unless they set one.
		QueueGroupDisabled bool `json:"queue_group_disabled"`
		StatsHandler       StatsHandler
		DoneHandler        DoneHandler
		ErrorHandler       ErrHandler
	}

	// EndpointConfig is an endpoint's configuration.
	EndpointConfig struct {
		Subject            string
		Handler            Handler
		Metadata           map[string]string `json:"metadata,omitempty"`
		QueueGroup         string            `json:"queue_group"`
		QueueGroupDisabled bool              `json:"queue_group_disabled"`
	}

	// NATSError is what the ErrHandler receives. The library reports an
	// error as its subject and text, with no Go error behind it, so Unwrap
	// returns nil, as nats.go's does for the errors it reports the same way
	// (a failed subscription, a handler's RespondError); for requests
	// dropped over an endpoint's pending limits it returns an error
	// matching natsio.ErrSlowConsumer (and, under the nats facade,
	// nats.ErrSlowConsumer), as nats.go's returns nats.ErrSlowConsumer.
	NATSError struct {
		Subject     string
		Description string
		err         error
	}
)

const (
	// DefaultQueueGroup is the endpoints' queue group when none is set.
	DefaultQueueGroup = "q"
	// APIPrefix is the monitoring subjects' prefix.
	APIPrefix = "$SRV"
)

// The headers of an error reply.
const (
	ErrorHeader     = "Nats-Service-Error"
	ErrorCodeHeader = "Nats-Service-Error-Code"
)

// The monitoring verbs (nats.go's values).
const (
	PingVerb Verb = iota
	StatsVerb
	InfoVerb
)

// The responses' types.
const (
	InfoResponseType  = "io.nats.micro.v1.info_response"
	PingResponseType  = "io.nats.micro.v1.ping_response"
	StatsResponseType = "io.nats.micro.v1.stats_response"
)

var (
	// ErrConfigValidation is wrapped by every refused configuration: a bad
	// service, group or endpoint name, version, subject, queue group or
	// pending limits (the library's NATSIO_ERR_SERVICE_CONFIG: nothing was
	// sent).
	ErrConfigValidation = errors.New("validation")
	// ErrVerbNotSupported: ControlSubject of an unknown verb.
	ErrVerbNotSupported = errors.New("unsupported verb")
	// ErrServiceNameRequired: ControlSubject with an id and no name.
	ErrServiceNameRequired = errors.New("service name is required to generate ID control subject")
)

// configError wraps the library's refusal of a configuration in
// ErrConfigValidation (keeping the library's error and detail).
func configError(err error) error {
	if errors.Is(err, natsio.ErrServiceConfig) {
		return fmt.Errorf("%w: %w", ErrConfigValidation, err)
	}
	return err
}

func (v Verb) String() string {
	switch v {
	case PingVerb:
		return "PING"
	case StatsVerb:
		return "STATS"
	case InfoVerb:
		return "INFO"
	default:
		return ""
	}
}

// libraryVerb is the verb's number in natsio_client_service_discover.
func (v Verb) libraryVerb() int32 {
	return map[Verb]int32{PingVerb: 0, InfoVerb: 1, StatsVerb: 2}[v]
}

func (e *NATSError) Error() string { return fmt.Sprintf("%q: %s", e.Subject, e.Description) }

// Unwrap returns the error behind this one, if any.
func (e *NATSError) Unwrap() error { return e.err }

// Is matches a *NATSError with the same subject and description, or what
// the error behind this one matches.
func (e *NATSError) Is(target error) bool {
	if e == nil {
		return false
	}
	if t, ok := target.(*NATSError); ok {
		return e.Subject == t.Subject && e.Description == t.Description
	}
	return e.err != nil && errors.Is(e.err, target)
}

// svc is a Service: the library's service and what the handlers need.
type svc struct {
	Config
	lib service.Service

	mu        sync.Mutex
	endpoints map[endpointKey]*Endpoint // for the StatsHandler
}

// AddService starts a service on nc. It answers PING, INFO and STATS from
// now on and runs until Stop or nc's close. A bad configuration is
// refused, before anything is sent, with an error wrapping
// ErrConfigValidation.
func AddService(nc *natsio.Conn, config Config) (Service, error) {
	config.Metadata = maps.Clone(config.Metadata)
	if config.Metadata == nil {
		config.Metadata = map[string]string{}
	}
	s := &svc{Config: config, endpoints: map[endpointKey]*Endpoint{}}
	cfg, err := json.Marshal(libServiceConfig{
		Name: config.Name, Version: config.Version, Description: config.Description,
		Metadata: config.Metadata, QueueGroup: config.QueueGroup, QueueGroupDisabled: config.QueueGroupDisabled,
	})
	if err != nil {
		return nil, err
	}
	var h service.Handlers
	if config.StatsHandler != nil {
		h.Stats = s.endpointData
	}
	if config.ErrorHandler != nil {
		h.Error = func(_, subject string, code int32, description string) {
			e := &NATSError{Subject: subject, Description: description}
			if code == 0 { // requests dropped over the endpoint's pending limits
				e.err = errors.Join(append([]error{natsio.ErrSlowConsumer}, service.SlowConsumerErrors...)...)
			}
			config.ErrorHandler(s, e)
		}
	}
	if config.DoneHandler != nil {
		h.Done = func() { config.DoneHandler(s) }
	}
	if s.lib, err = service.Add(nc, cfg, h); err != nil {
		return nil, configError(err)
	}
	if ep := config.Endpoint; ep != nil {
		opts := []EndpointOpt{WithEndpointSubject(ep.Subject)}
		if ep.Metadata != nil {
			opts = append(opts, WithEndpointMetadata(ep.Metadata))
		}
		if ep.QueueGroup != "" {
			opts = append(opts, WithEndpointQueueGroup(ep.QueueGroup))
		}
		if ep.QueueGroupDisabled {
			opts = append(opts, WithEndpointQueueGroupDisabled())
		}
		if err := s.AddEndpoint("default", ep.Handler, opts...); err != nil {
			_ = s.lib.Stop(context.Background())
			return nil, err
		}
	}
	return s, nil
}

// libServiceConfig is natsio_client_add_service's JSON.
type libServiceConfig struct {
	Name               string            `json:"name"`
	Version            string            `json:"version"`
	Description        string            `json:"description,omitempty"`
	Metadata           map[string]string `json:"metadata"`
	QueueGroup         string            `json:"queue_group,omitempty"`
	QueueGroupDisabled bool              `json:"queue_group_disabled,omitempty"`
}

// libGroupConfig is natsio_service_add_group's JSON.
type libGroupConfig struct {
	Name               string `json:"name"`
	QueueGroup         string `json:"queue_group,omitempty"`
	QueueGroupDisabled bool   `json:"queue_group_disabled,omitempty"`
}

// libEndpointConfig is natsio_service_add_endpoint's JSON (an absent
// queue group is the group's or the service's, absent pending limits the
// connection's subscription defaults).
type libEndpointConfig struct {
	Name               string            `json:"name"`
	Subject            string            `json:"subject,omitempty"`
	Metadata           map[string]string `json:"metadata,omitempty"`
	QueueGroup         string            `json:"queue_group,omitempty"`
	QueueGroupDisabled bool              `json:"queue_group_disabled,omitempty"`
	PendingMsgsLimit   *int64            `json:"pending_msgs_limit,omitempty"`
	PendingBytesLimit  *int64            `json:"pending_bytes_limit,omitempty"`
}

func (s *svc) AddEndpoint(name string, handler Handler, opts ...EndpointOpt) error {
	return s.addEndpoint(nil, name, handler, opts)
}

func (s *svc) addEndpoint(g service.Group, name string, handler Handler, opts []EndpointOpt) error {
	var o endpointOpts
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return err
		}
	}
	if handler == nil {
		return fmt.Errorf("%w: endpoint %q has no handler", ErrConfigValidation, name)
	}
	cfg, err := json.Marshal(libEndpointConfig{
		Name: name, Subject: o.subject, Metadata: o.metadata,
		QueueGroup: o.queueGroup, QueueGroupDisabled: o.qgDisabled,
		PendingMsgsLimit: o.pendingMsgs, PendingBytesLimit: o.pendingBytes,
	})
	if err != nil {
		return err
	}
	subject, queueGroup, err := s.lib.AddEndpoint(g, cfg, func(r service.Request) {
		handler.Handle(&request{lib: r})
	})
	if err != nil {
		return configError(err)
	}
	s.mu.Lock()
	s.endpoints[endpointKey{name, subject}] = &Endpoint{
		Name: name,
		EndpointConfig: EndpointConfig{
			Subject: subject, Handler: handler, Metadata: o.metadata,
			QueueGroup: queueGroup, QueueGroupDisabled: queueGroup == "",
		},
	}
	s.mu.Unlock()
	return nil
}

// endpointKey names an endpoint: names may repeat across groups.
type endpointKey struct{ name, subject string }

// endpointData is the library's stats callback: the StatsHandler's value
// as JSON.
func (s *svc) endpointData(name, subject string) []byte {
	s.mu.Lock()
	ep := s.endpoints[endpointKey{name, subject}]
	s.mu.Unlock()
	if ep == nil {
		return nil
	}
	data, err := json.Marshal(s.StatsHandler(ep))
	if err != nil {
		return nil
	}
	return data
}

func (s *svc) AddGroup(name string, opts ...GroupOpt) Group {
	return s.addGroup(nil, name, opts)
}

func (s *svc) addGroup(parent service.Group, name string, opts []GroupOpt) Group {
	var o groupOpts
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := json.Marshal(libGroupConfig{Name: name, QueueGroup: o.queueGroup, QueueGroupDisabled: o.qgDisabled})
	if err != nil {
		return &group{svc: s, err: err}
	}
	lib, err := s.lib.AddGroup(parent, cfg)
	return &group{svc: s, lib: lib, err: configError(err)}
}

func (s *svc) Info() Info {
	var info Info
	if j, err := s.lib.InfoJSON(); err == nil {
		_ = json.Unmarshal(j, &info)
	}
	return info
}

func (s *svc) Stats() Stats {
	var stats Stats
	if j, err := s.lib.StatsJSON(); err == nil {
		_ = json.Unmarshal(j, &stats)
	}
	return stats
}

func (s *svc) Reset() { _ = s.lib.Reset() }

func (s *svc) Stop() error { return s.lib.Stop(context.Background()) }

func (s *svc) Stopped() bool { return s.lib.Stopped() }

// group is a Group; err is its refusal, returned by its AddEndpoint.
type group struct {
	svc *svc
	lib service.Group
	err error
}

func (g *group) AddGroup(name string, opts ...GroupOpt) Group {
	if g.err != nil {
		return g
	}
	return g.svc.addGroup(g.lib, name, opts)
}

func (g *group) AddEndpoint(name string, handler Handler, opts ...EndpointOpt) error {
	if g.err != nil {
		return g.err
	}
	return g.svc.addEndpoint(g.lib, name, handler, opts)
}

// ControlSubject is the monitoring subject of verb: for every service
// (name and id empty), for the services named name, or for one instance.
func ControlSubject(verb Verb, name, id string) (string, error) {
	verbStr := verb.String()
	switch {
	case verbStr == "":
		return "", fmt.Errorf("%w: %q", ErrVerbNotSupported, verbStr)
	case name == "" && id != "":
		return "", ErrServiceNameRequired
	case name == "":
		return APIPrefix + "." + verbStr, nil
	case id == "":
		return APIPrefix + "." + verbStr + "." + name, nil
	}
	return APIPrefix + "." + verbStr + "." + name + "." + id, nil
}

// WithEndpointSubject sets the endpoint's subject (default: its name).
func WithEndpointSubject(subject string) EndpointOpt {
	return func(e *endpointOpts) error {
		e.subject = subject
		return nil
	}
}

// WithEndpointMetadata sets the endpoint's metadata.
func WithEndpointMetadata(metadata map[string]string) EndpointOpt {
	return func(e *endpointOpts) error {
		e.metadata = maps.Clone(metadata)
		return nil
	}
}

// WithEndpointMetadataKey adds one metadata entry.
func WithEndpointMetadataKey(key, value string) EndpointOpt {
	return func(e *endpointOpts) error {
		if e.metadata == nil {
			e.metadata = map[string]string{}
		}
		e.metadata[key] = value
		return nil
	}
}

// WithEndpointQueueGroup sets the endpoint's queue group (default: its
// group's or service's).
func WithEndpointQueueGroup(queueGroup string) EndpointOpt {
	return func(e *endpointOpts) error {
		e.queueGroup = queueGroup
		return nil
	}
}

// WithEndpointQueueGroupDisabled subscribes the endpoint without a queue
// group: every instance gets every request.
func WithEndpointQueueGroupDisabled() EndpointOpt {
	return func(e *endpointOpts) error {
		e.qgDisabled = true
		return nil
	}
}

// WithEndpointPendingLimits bounds the requests the endpoint holds,
// received and not yet handled: at most msgLimit requests and bytesLimit
// bytes; a negative limit is none (default: the connection's subscription
// defaults). The request the handler is busy with counts until the
// handler returns, as in nats.go (with limits of 2 messages and the
// handler busy, one more request waits). Requests over a limit are
// dropped (their requesters get no reply); each slow-consumer report of the
// library counts an error in the endpoint's stats (NumErrors, LastError:
// the library's text, starting "slow consumer") and is told to the
// ErrorHandler, with the endpoint's subject (see ErrHandler), and to the
// connection's error handler as for any subscription. Both limits 0 is
// refused by the option, as nats.go's is: AddEndpoint returns an error
// wrapping ErrConfigValidation ("at least one pending limit must be
// non-zero"). One limit 0 (nats.go: AddEndpoint fails with
// nats.ErrInvalidArg, from Subscription.SetPendingLimits) is refused by
// the library before anything is sent: AddEndpoint returns an error
// wrapping ErrConfigValidation and natsio.ErrServiceConfig.
func WithEndpointPendingLimits(msgLimit, bytesLimit int) EndpointOpt {
	return func(e *endpointOpts) error {
		if msgLimit == 0 && bytesLimit == 0 {
			return fmt.Errorf("%w: at least one pending limit must be non-zero", ErrConfigValidation)
		}
		msgs, bytes := int64(msgLimit), int64(bytesLimit)
		e.pendingMsgs, e.pendingBytes = &msgs, &bytes
		return nil
	}
}

// WithGroupQueueGroup sets the group's queue group, the default of its
// endpoints and subgroups.
func WithGroupQueueGroup(queueGroup string) GroupOpt {
	return func(g *groupOpts) { g.queueGroup = queueGroup }
}

// WithGroupQueueGroupDisabled: the group's endpoints have no queue group
// unless they set one.
func WithGroupQueueGroupDisabled() GroupOpt {
	return func(g *groupOpts) { g.qgDisabled = true }
}

// Discover asks services for their response to verb, through the
// library's discovery (natsio_client_service_discover): every service
// (name and id empty), those named name, or one instance. It returns
// each reply's JSON once the request ends: at ctx's deadline (without
// one, the connection's request timeout), after natsio.MaxReplies
// replies, or a natsio.Stall gap after the last one.
func Discover(ctx context.Context, nc *natsio.Conn, verb Verb, name, id string, opts ...natsio.RequestManyOption) ([]json.RawMessage, error) {
	if verb.String() == "" {
		return nil, fmt.Errorf("%w: %d", ErrVerbNotSupported, verb)
	}
	var replies []json.RawMessage
	for data, err := range service.Discover(ctx, nc, verb.libraryVerb(), name, id, opts) {
		if err != nil {
			return replies, configError(err)
		}
		replies = append(replies, data)
	}
	return replies, nil
}

// DiscoverPing is Discover of PingVerb, the replies decoded.
func DiscoverPing(ctx context.Context, nc *natsio.Conn, name, id string, opts ...natsio.RequestManyOption) ([]Ping, error) {
	return discoverAs[Ping](ctx, nc, PingVerb, name, id, opts)
}

// DiscoverInfo is Discover of InfoVerb, the replies decoded.
func DiscoverInfo(ctx context.Context, nc *natsio.Conn, name, id string, opts ...natsio.RequestManyOption) ([]Info, error) {
	return discoverAs[Info](ctx, nc, InfoVerb, name, id, opts)
}

// DiscoverStats is Discover of StatsVerb, the replies decoded.
func DiscoverStats(ctx context.Context, nc *natsio.Conn, name, id string, opts ...natsio.RequestManyOption) ([]Stats, error) {
	return discoverAs[Stats](ctx, nc, StatsVerb, name, id, opts)
}

func discoverAs[T any](ctx context.Context, nc *natsio.Conn, verb Verb, name, id string, opts []natsio.RequestManyOption) ([]T, error) {
	replies, err := Discover(ctx, nc, verb, name, id, opts...)
	out := make([]T, 0, len(replies))
	for _, r := range replies {
		var v T
		if derr := json.Unmarshal(r, &v); derr != nil {
			return out, fmt.Errorf("micro: decoding a %s reply: %w", verb, derr)
		}
		out = append(out, v)
	}
	return out, err
}
