package nats

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"
)

// Encoder turns the values an EncodedConn publishes into message data, and
// message data back into values.
type Encoder interface {
	Encode(subject string, v any) ([]byte, error)
	Decode(subject string, data []byte, vPtr any) error
}

// The names of the encoders registered from the start (EncoderForType).
const (
	JSON_ENCODER    = "json"
	GOB_ENCODER     = "gob"
	DEFAULT_ENCODER = "default"
)

var (
	encodersMu sync.Mutex
	encoders   = map[string]Encoder{
		JSON_ENCODER:    jsonEncoder{},
		GOB_ENCODER:     gobEncoder{},
		DEFAULT_ENCODER: defaultEncoder{},
	}
)

// RegisterEncoder makes enc available to NewEncodedConn under encType,
// replacing any encoder of that name.
func RegisterEncoder(encType string, enc Encoder) {
	encodersMu.Lock()
	defer encodersMu.Unlock()
	encoders[encType] = enc
}

// EncoderForType is the encoder registered under encType, or nil.
func EncoderForType(encType string) Encoder {
	encodersMu.Lock()
	defer encodersMu.Unlock()
	return encoders[encType]
}

// EncodedConn publishes and receives Go values through an Encoder.
//
// Deprecated: as in nats.go, which no longer develops it; encode the data
// in the program instead.
type EncodedConn struct {
	Conn *Conn
	Enc  Encoder
}

// NewEncodedConn wraps c with the encoder registered under encType.
//
// Deprecated: see EncodedConn.
func NewEncodedConn(c *Conn, encType string) (*EncodedConn, error) {
	if c == nil {
		return nil, errors.New("nats: Nil Connection")
	}
	if c.IsClosed() {
		return nil, ErrConnectionClosed
	}
	enc := EncoderForType(encType)
	if enc == nil {
		return nil, fmt.Errorf("no encoder registered for '%s'", encType)
	}
	return &EncodedConn{Conn: c, Enc: enc}, nil
}

// Handler is an EncodedConn subscription's callback: a func taking the
// decoded value last, after the subject, or the subject and the reply
// (func(v T), func(subject string, v T), func(subject, reply string, v T)),
// or a func(*Msg) for the message as it came.
type Handler any

var msgPointerType = reflect.TypeOf(&Msg{})

// Publish sends v, encoded, on subject.
func (c *EncodedConn) Publish(subject string, v any) error {
	data, err := c.Enc.Encode(subject, v)
	if err != nil {
		return err
	}
	return c.Conn.Publish(subject, data)
}

// PublishRequest sends v, encoded, on subject with reply as its reply
// subject.
func (c *EncodedConn) PublishRequest(subject, reply string, v any) error {
	data, err := c.Enc.Encode(subject, v)
	if err != nil {
		return err
	}
	return c.Conn.PublishRequest(subject, reply, data)
}

// Request sends v and decodes the reply into vPtr (or copies the reply
// message there when vPtr is a *Msg), waiting up to timeout.
func (c *EncodedConn) Request(subject string, v any, vPtr any, timeout time.Duration) error {
	data, err := c.Enc.Encode(subject, v)
	if err != nil {
		return err
	}
	reply, err := c.Conn.Request(subject, data, timeout)
	if err != nil {
		return err
	}
	return c.decodeReply(reply, vPtr)
}

// RequestWithContext is Request bounded by ctx.
func (c *EncodedConn) RequestWithContext(ctx context.Context, subject string, v any, vPtr any) error {
	if ctx == nil {
		return ErrInvalidContext
	}
	data, err := c.Enc.Encode(subject, v)
	if err != nil {
		return err
	}
	reply, err := c.Conn.RequestWithContext(ctx, subject, data)
	if err != nil {
		return err
	}
	return c.decodeReply(reply, vPtr)
}

func (c *EncodedConn) decodeReply(reply *Msg, vPtr any) error {
	if m, ok := vPtr.(*Msg); ok && reflect.TypeOf(vPtr) == msgPointerType {
		*m = *reply
		return nil
	}
	return c.Enc.Decode(reply.Subject, reply.Data, vPtr)
}

// Subscribe calls cb with each message on subject, decoded into the type
// of cb's last argument. A message that does not decode is not delivered:
// the error handler gets "nats: Got an error trying to unmarshal: ...".
// Panics, as nats.go's, when cb is not a func.
func (c *EncodedConn) Subscribe(subject string, cb Handler) (*Subscription, error) {
	return c.subscribe(subject, "", cb)
}

// QueueSubscribe is Subscribe as a member of queue.
func (c *EncodedConn) QueueSubscribe(subject, queue string, cb Handler) (*Subscription, error) {
	return c.subscribe(subject, queue, cb)
}

func (c *EncodedConn) subscribe(subject, queue string, cb Handler) (*Subscription, error) {
	if cb == nil {
		return nil, errors.New("nats: Handler required for EncodedConn Subscription")
	}
	fn := reflect.ValueOf(cb)
	if fn.Kind() != reflect.Func {
		panic("nats: Handler needs to be a func")
	}
	args := fn.Type().NumIn()
	if args == 0 {
		return nil, errors.New("nats: Handler requires at least one argument")
	}
	valueType := fn.Type().In(args - 1)
	handler := func(m *Msg) {
		if valueType == msgPointerType {
			fn.Call([]reflect.Value{reflect.ValueOf(m)})
			return
		}
		value, err := c.decodeAs(valueType, m)
		if err != nil {
			c.reportDecodeError(m, err, false)
			return
		}
		in := []reflect.Value{value}
		switch args {
		case 2:
			in = []reflect.Value{reflect.ValueOf(m.Subject), value}
		case 3:
			in = []reflect.Value{reflect.ValueOf(m.Subject), reflect.ValueOf(m.Reply), value}
		}
		fn.Call(in)
	}
	return c.Conn.subscribe(subject, queue, handler, false)
}

// decodeAs decodes m's data into a new value of type t (a pointer type
// gets a pointer to a new value).
func (c *EncodedConn) decodeAs(t reflect.Type, m *Msg) (reflect.Value, error) {
	target := t
	if t.Kind() == reflect.Pointer {
		target = t.Elem()
	}
	ptr := reflect.New(target)
	if err := c.Enc.Decode(m.Subject, m.Data, ptr.Interface()); err != nil {
		return reflect.Value{}, err
	}
	if t.Kind() == reflect.Pointer {
		return ptr, nil
	}
	return ptr.Elem(), nil
}

// reportDecodeError hands a message's decoding error to the error handler
// (and LastError, for a bound channel, as nats.go records it).
func (c *EncodedConn) reportDecodeError(m *Msg, err error, record bool) {
	err = errors.New("nats: Got an error trying to unmarshal: " + err.Error())
	if record {
		c.Conn.lastErr.Store(&err)
	}
	if cb := c.Conn.ErrorHandler(); cb != nil {
		cb(c.Conn, m.Sub, err)
	}
}

// BindSendChan publishes, encoded, every value received on channel (a
// chan of any type) until it is closed. A failed publish stops it and goes
// to the error handler. ErrChanArg when channel is not a chan.
func (c *EncodedConn) BindSendChan(subject string, channel any) error {
	ch := reflect.ValueOf(channel)
	if ch.Kind() != reflect.Chan {
		return ErrChanArg
	}
	go func() {
		for {
			v, ok := ch.Recv()
			if !ok {
				return
			}
			if err := c.Publish(subject, v.Interface()); err != nil {
				if cb := c.Conn.ErrorHandler(); cb != nil {
					cb(c.Conn, nil, err)
				}
				return
			}
		}
	}()
	return nil
}

// BindRecvChan sends every message on subject, decoded into the channel's
// element type, to channel. A message that does not decode is skipped and
// reported to the error handler; the subscription ends if channel is
// closed. ErrChanArg when channel is not a chan.
func (c *EncodedConn) BindRecvChan(subject string, channel any) (*Subscription, error) {
	return c.bindRecvChan(subject, "", channel)
}

// BindRecvQueueChan is BindRecvChan as a member of queue.
func (c *EncodedConn) BindRecvQueueChan(subject, queue string, channel any) (*Subscription, error) {
	return c.bindRecvChan(subject, queue, channel)
}

func (c *EncodedConn) bindRecvChan(subject, queue string, channel any) (*Subscription, error) {
	ch := reflect.ValueOf(channel)
	if ch.Kind() != reflect.Chan {
		return nil, ErrChanArg
	}
	elem := ch.Type().Elem()
	handler := func(m *Msg) {
		value, err := c.decodeAs(elem, m)
		if err != nil {
			c.reportDecodeError(m, err, true)
			return
		}
		// A send on a closed channel panics: that ends the subscription.
		defer func() {
			if recover() != nil {
				m.Sub.Unsubscribe()
			}
		}()
		ch.Send(value)
	}
	return c.Conn.subscribe(subject, queue, handler, false)
}

// Flush waits until the server has processed what was published.
func (c *EncodedConn) Flush() error { return c.Conn.Flush() }

// FlushTimeout is Flush waiting up to timeout.
func (c *EncodedConn) FlushTimeout(timeout time.Duration) error { return c.Conn.FlushTimeout(timeout) }

// Close closes the connection.
func (c *EncodedConn) Close() { c.Conn.Close() }

// Drain drains the connection, then closes it.
func (c *EncodedConn) Drain() error { return c.Conn.Drain() }

// LastError is the connection's last asynchronous error.
func (c *EncodedConn) LastError() error { return c.Conn.LastError() }
