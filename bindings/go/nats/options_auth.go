package nats

// User JWT authentication given by callbacks or in memory (nats.go's
// UserJWT, UserJWTAndSeed, UserCredentialBytes). The library calls the
// callbacks on every connect; the in-memory forms sign here, with the
// standard library's Ed25519, as the binding's module takes no dependency
// (an NKey seed is base32 of a 2-byte prefix, the 32-byte Ed25519 seed and
// a CRC-16).

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"regexp"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// UserJWTHandler gives the user JWT to present.
type UserJWTHandler func() (string, error)

// SignatureHandler signs the server's nonce with the user's key and
// returns the raw signature.
type SignatureHandler func([]byte) ([]byte, error)

// UserJWT authenticates with the JWT userCB gives and the nonce signature
// sigCB makes, both asked on every connect (on a library thread).
// ErrNoUserCB or ErrUserButNoSigCB when one is nil; userCB is called once
// here, as nats.go does, and its error is returned.
func UserJWT(userCB UserJWTHandler, sigCB SignatureHandler) Option {
	return func(o *Options) error {
		if userCB == nil {
			return ErrNoUserCB
		}
		if sigCB == nil {
			return ErrUserButNoSigCB
		}
		if _, err := userCB(); err != nil {
			return err
		}
		o.UserJWT, o.SignatureCB = userCB, sigCB
		o.credsFile = "" // the last credentials given win, as in nats.go
		return nil
	}
}

// UserJWTAndSeed authenticates with a user JWT and the user's NKey seed
// given as strings.
func UserJWTAndSeed(jwt string, seed string) Option {
	return UserJWT(
		func() (string, error) { return jwt, nil },
		func(nonce []byte) ([]byte, error) {
			sig, err := signWithSeed([]byte(seed), nonce)
			if err != nil {
				return nil, fmt.Errorf("unable to extract key pair from seed: %w", err)
			}
			return sig, nil
		})
}

// UserCredentialBytes authenticates with the contents of a .creds file
// (the JWT and the seed, decorated), or with the JWT there and the seed in
// seedFiles[0].
func UserCredentialBytes(userOrChainedFileBytes []byte, seedFiles ...[]byte) Option {
	seedBytes := userOrChainedFileBytes
	if len(seedFiles) > 0 {
		seedBytes = seedFiles[0]
	}
	return UserJWT(
		func() (string, error) { return decoratedJWT(userOrChainedFileBytes) },
		func(nonce []byte) ([]byte, error) {
			seed, err := decoratedSeed(seedBytes)
			if err == nil {
				var sig []byte
				if sig, err = signWithSeed(seed, nonce); err == nil {
					return sig, nil
				}
			}
			return nil, fmt.Errorf("unable to extract key pair from bytes: %w", err)
		})
}

// credentialFilesAuth is UserCredentials with a separate seed file: the
// files are read on every connect, as nats.go does.
func credentialFilesAuth(o *Options, jwtFile, seedFile string) error {
	return UserJWT(
		func() (string, error) {
			b, err := os.ReadFile(jwtFile)
			if err != nil {
				return "", fmt.Errorf("nats: %w", err)
			}
			return decoratedJWT(b)
		},
		func(nonce []byte) ([]byte, error) {
			b, err := os.ReadFile(seedFile)
			if err != nil {
				return nil, fmt.Errorf("nats: %w", err)
			}
			seed, err := decoratedSeed(b)
			if err != nil {
				return nil, err
			}
			return signWithSeed(seed, nonce)
		})(o)
}

// userJWTOption is the binding's option for o's JWT callbacks, nil when
// there are none; ErrUserButNoSigCB for a JWT callback without a signer.
// A callback's error is kept in nc, for Connect to return it as nats.go
// does (the library reports only that a callback failed).
func (o *Options) userJWTOption(nc *Conn) (natsio.Option, error) {
	if o.UserJWT == nil {
		return nil, nil
	}
	if o.SignatureCB == nil {
		return nil, ErrUserButNoSigCB
	}
	userCB, sigCB := o.UserJWT, o.SignatureCB
	return natsio.UserJWT(
		func() (string, error) {
			jwt, err := userCB()
			if err != nil {
				nc.authErr.Store(&err)
			}
			return jwt, err
		},
		func(nonce []byte) ([]byte, error) {
			sig, err := sigCB(nonce)
			if err != nil {
				err = fmt.Errorf("error signing nonce: %w", err)
				nc.authErr.Store(&err)
			}
			return sig, err
		}), nil
}

// decoratedBlock matches one "-----BEGIN ...-----" to "------END ...------"
// section of a .creds file, its content in group 1.
var decoratedBlock = regexp.MustCompile(`\s*(?:-{3,}[^\n]*-{3,}\r?\n)([\w\-.=]+)(?:\r?\n-{3,}[^\n]*-{3,}(?:\r?\n|\z))`)

// decoratedJWT is the JWT of a .creds file: its first section, or the
// whole text when it has no sections (a bare JWT).
func decoratedJWT(contents []byte) (string, error) {
	if m := decoratedBlock.FindSubmatch(contents); m != nil {
		return string(m[1]), nil
	}
	jwt := string(bytes.TrimSpace(contents))
	if jwt == "" {
		return "", errors.New("nats: no user JWT found")
	}
	return jwt, nil
}

// decoratedSeed is the NKey seed of a .creds file (its second section), or
// the line of a seed file that holds one.
func decoratedSeed(contents []byte) ([]byte, error) {
	if blocks := decoratedBlock.FindAllSubmatch(contents, -1); len(blocks) > 1 {
		return blocks[1][1], nil
	}
	for _, line := range bytes.Split(contents, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 2 && line[0] == 'S' && bytes.IndexByte([]byte("OAU"), line[1]) >= 0 {
			return line, nil
		}
	}
	return nil, errors.New("nkeys: no nkey seed found")
}

// The errors of a seed that does not decode, with the nkeys library's
// texts (nats.go's messages end with them).
var (
	errInvalidEncoding = errors.New("nkeys: invalid encoded key")
	errInvalidChecksum = errors.New("nkeys: invalid checksum")
	errInvalidSeed     = errors.New("nkeys: invalid seed")
)

// seedPrefix is the first 5 bits of a seed ('S' in base32).
const seedPrefix = 18 << 3

// signWithSeed signs message with the Ed25519 key of an NKey seed.
func signWithSeed(seed, message []byte) ([]byte, error) {
	enc := base32.StdEncoding.WithPadding(base32.NoPadding)
	raw := make([]byte, enc.DecodedLen(len(seed)))
	n, err := enc.Decode(raw, bytes.TrimSpace(seed))
	switch {
	case err != nil:
		return nil, err
	case n < 4:
		return nil, errInvalidEncoding
	}
	body, sum := raw[:n-2], binary.LittleEndian.Uint16(raw[n-2:n])
	switch {
	case crc16(body) != sum:
		return nil, errInvalidChecksum
	case body[0]&0xf8 != seedPrefix || len(body) != 2+ed25519.SeedSize:
		return nil, errInvalidSeed
	}
	return ed25519.Sign(ed25519.NewKeyFromSeed(body[2:]), message), nil
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial 0), the checksum of
// NKeys.
func crc16(data []byte) uint16 {
	var crc uint16
	for _, b := range data {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// Nkey authenticates as the NKey user pubKey, sigCB signing the server's
// nonce with its key on every connect and reconnect (on a library
// thread); ErrNkeyButNoSigCB for a key without sigCB, and Connect returns
// ErrNkeyAndUser when a user JWT callback is set too, as nats.go does.
// The user, password and token of the options are sent with it.
func Nkey(pubKey string, sigCB SignatureHandler) Option {
	return func(o *Options) error {
		o.Nkey = pubKey
		o.SignatureCB = sigCB
		if pubKey != "" && sigCB == nil {
			return ErrNkeyButNoSigCB
		}
		o.nkeySeedFile = "" // the last credentials given win
		return nil
	}
}

// checkNkey is Connect's check of Options.Nkey, as nats.go's.
func (o *Options) checkNkey() error {
	if o.UserJWT != nil && o.Nkey != "" {
		return ErrNkeyAndUser
	}
	if o.Nkey != "" && o.SignatureCB == nil {
		return ErrNkeyButNoSigCB
	}
	return nil
}

// nkeyOption is the binding's option for Options.Nkey (nil without one):
// one authenticator giving the CONNECT the NKey, the nonce's signature and
// the options' user, password and token (or what UserInfo and
// TokenHandler give), as nats.go's connectProto sends them together. A
// callback's error is kept in nc, for Connect to return it as nats.go
// does.
func (o *Options) nkeyOption(nc *Conn) (natsio.Option, error) {
	if o.Nkey == "" || o.UserJWT != nil {
		return nil, nil
	}
	if o.TokenHandler != nil && o.Token != "" {
		return nil, ErrTokenAlreadySet
	}
	pub, sigCB := o.Nkey, o.SignatureCB
	user, pass, token := o.User, o.Password, o.Token
	userInfo, tokenCB := o.UserInfo, o.TokenHandler
	return natsio.Authenticator(func(nonce []byte) (natsio.AuthFields, error) {
		f := natsio.AuthFields{User: user, Pass: pass, Token: token, Nkey: pub}
		if userInfo != nil {
			f.User, f.Pass = userInfo()
		}
		sig, err := sigCB(nonce)
		if err != nil {
			err = fmt.Errorf("error signing nonce: %w", err)
			nc.authErr.Store(&err)
			return f, err
		}
		f.Sig = base64.RawURLEncoding.EncodeToString(sig)
		if tokenCB != nil {
			f.Token = tokenCB()
		}
		return f, nil
	}), nil
}
