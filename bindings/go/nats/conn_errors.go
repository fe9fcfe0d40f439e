package nats

import "errors"

// The connection and option errors of nats.go that this package's
// conn_*.go and options_*.go return, with nats.go's texts.
var (
	// ErrNoUserCB is UserJWT's error without a JWT callback.
	ErrNoUserCB = errors.New("nats: user callback not defined")
	// ErrUserButNoSigCB is UserJWT's error (or Connect's, for
	// Options.UserJWT) without a signature callback.
	ErrUserButNoSigCB = errors.New("nats: user callback defined without a signature handler")
	// ErrNkeyButNoSigCB is Nkey's error (or Connect's, for Options.Nkey)
	// without a signature callback.
	ErrNkeyButNoSigCB = errors.New("nats: nkey defined without a signature handler")
	// ErrNkeyAndUser is Connect's error for an Nkey given with a user JWT
	// callback (UserJWT, UserCredentials, ...).
	ErrNkeyAndUser = errors.New("nats: user callback and nkey defined")
	// ErrClientIDNotSupported is GetClientID's error when the server's
	// INFO has no client_id.
	ErrClientIDNotSupported = errors.New("nats: client ID not supported by this server")
	// ErrUserInfoAlreadySet is Connect's error for a UserInfoHandler given
	// with a user or password.
	ErrUserInfoAlreadySet = errors.New("nats: cannot set user info callback and user/pass")
	// ErrClientIPNotSupported is GetClientIP's error when the server's
	// INFO has no client_ip.
	ErrClientIPNotSupported = errors.New("nats: client IP not supported by this server")
)
