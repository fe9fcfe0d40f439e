package nats

// The texts of the server's -ERR messages that nats.go names (lower case,
// as it compares them): Translate recognises them in the library's server
// errors.
const (
	STALE_CONNECTION                   = "stale connection"
	PERMISSIONS_ERR                    = "permissions violation"
	AUTHORIZATION_ERR                  = "authorization violation"
	AUTHENTICATION_EXPIRED_ERR         = "user authentication expired"
	AUTHENTICATION_REVOKED_ERR         = "user authentication revoked"
	ACCOUNT_AUTHENTICATION_EXPIRED_ERR = "account authentication expired"
	MAX_CONNECTIONS_ERR                = "maximum connections exceeded"
	MAX_ACCOUNT_CONNECTIONS_ERR        = "maximum account active connections exceeded"
	MAX_SUBSCRIPTIONS_ERR              = "maximum subscriptions exceeded"
)

// MAX_CONTROL_LINE_SIZE is the longest protocol line nats.go's parser
// takes; the library's parser has the same bound, past which the
// connection fails with a protocol error.
const MAX_CONTROL_LINE_SIZE = 4096
