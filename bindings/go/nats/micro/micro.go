// Package micro is nats.go's micro package over libnatsio: a program
// written for github.com/nats-io/nats.go/micro builds with it by changing
// only its import lines. The binding's micro package already has nats.go's
// shapes; this package gives them under nats.go's import path and takes
// the nats package's *Conn.
package micro

import (
	"github.com/libnatsio/natsio/bindings/go/internal/service"
	micro "github.com/libnatsio/natsio/bindings/go/micro"
	"github.com/libnatsio/natsio/bindings/go/nats"
)

// A NATSError for requests dropped over an endpoint's pending limits
// matches nats.ErrSlowConsumer, as nats.go's does.
func init() { service.SlowConsumerErrors = append(service.SlowConsumerErrors, nats.ErrSlowConsumer) }

type (
	Config          = micro.Config
	DoneHandler     = micro.DoneHandler
	Endpoint        = micro.Endpoint
	EndpointConfig  = micro.EndpointConfig
	EndpointInfo    = micro.EndpointInfo
	EndpointOpt     = micro.EndpointOpt
	EndpointStats   = micro.EndpointStats
	ErrHandler      = micro.ErrHandler
	Group           = micro.Group
	GroupOpt        = micro.GroupOpt
	Handler         = micro.Handler
	HandlerFunc     = micro.HandlerFunc
	Headers         = micro.Headers
	Info            = micro.Info
	NATSError       = micro.NATSError
	Ping            = micro.Ping
	Request         = micro.Request
	RespondOpt      = micro.RespondOpt
	Service         = micro.Service
	ServiceIdentity = micro.ServiceIdentity
	Stats           = micro.Stats
	StatsHandler    = micro.StatsHandler
	Verb            = micro.Verb
)

const (
	DefaultQueueGroup = micro.DefaultQueueGroup
	APIPrefix         = micro.APIPrefix
	ErrorHeader       = micro.ErrorHeader
	ErrorCodeHeader   = micro.ErrorCodeHeader
	PingVerb          = micro.PingVerb
	StatsVerb         = micro.StatsVerb
	InfoVerb          = micro.InfoVerb
	InfoResponseType  = micro.InfoResponseType
	PingResponseType  = micro.PingResponseType
	StatsResponseType = micro.StatsResponseType
)

var (
	ErrRespond             = micro.ErrRespond
	ErrMarshalResponse     = micro.ErrMarshalResponse
	ErrArgRequired         = micro.ErrArgRequired
	ErrInvalidCode         = micro.ErrInvalidCode
	ErrConfigValidation    = micro.ErrConfigValidation
	ErrVerbNotSupported    = micro.ErrVerbNotSupported
	ErrServiceNameRequired = micro.ErrServiceNameRequired

	ContextHandler                 = micro.ContextHandler
	ControlSubject                 = micro.ControlSubject
	WithEndpointMetadata           = micro.WithEndpointMetadata
	WithEndpointMetadataKey        = micro.WithEndpointMetadataKey
	WithEndpointPendingLimits      = micro.WithEndpointPendingLimits
	WithEndpointQueueGroup         = micro.WithEndpointQueueGroup
	WithEndpointQueueGroupDisabled = micro.WithEndpointQueueGroupDisabled
	WithEndpointSubject            = micro.WithEndpointSubject
	WithGroupQueueGroup            = micro.WithGroupQueueGroup
	WithGroupQueueGroupDisabled    = micro.WithGroupQueueGroupDisabled
	WithHeaders                    = micro.WithHeaders
)

// AddService starts a service on nc.
func AddService(nc *nats.Conn, config Config) (Service, error) {
	return micro.AddService(nc.Binding(), config)
}
