package nats

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// The JetStreamManager calls nats.go has beyond streams' and consumers'
// basics: the account's info, a stream's messages read and deleted one by
// one, and the request options of StreamInfo and PurgeStream. Those the
// binding has no call for (StreamInfo's DeletedDetails, Direct Get on
// request) send the JetStream API request themselves, as nats.go does.

// AccountInfo is the account's JetStream usage and limits: its totals
// (the embedded Tier), and per tier (replica count) in Tiers.
type AccountInfo struct {
	Tier
	Domain string          `json:"domain"`
	API    APIStats        `json:"api"`
	Tiers  map[string]Tier `json:"tiers"`
}

// Tier is the usage and limits of the account's streams of one tier.
type Tier struct {
	Memory         uint64        `json:"memory"`
	Store          uint64        `json:"storage"`
	ReservedMemory uint64        `json:"reserved_memory"`
	ReservedStore  uint64        `json:"reserved_storage"`
	Streams        int           `json:"streams"`
	Consumers      int           `json:"consumers"`
	Limits         AccountLimits `json:"limits"`
}

// APIStats are the account's JetStream API requests.
type APIStats struct {
	Level    int    `json:"level"`
	Total    uint64 `json:"total"`
	Errors   uint64 `json:"errors"`
	Inflight uint64 `json:"inflight,omitempty"`
}

// AccountLimits are the account's JetStream limits (-1: unlimited).
type AccountLimits struct {
	MaxMemory            int64 `json:"max_memory"`
	MaxStore             int64 `json:"max_storage"`
	MaxStreams           int   `json:"max_streams"`
	MaxConsumers         int   `json:"max_consumers"`
	MaxAckPending        int   `json:"max_ack_pending"`
	MemoryMaxStreamBytes int64 `json:"memory_max_stream_bytes"`
	StoreMaxStreamBytes  int64 `json:"storage_max_stream_bytes"`
	MaxBytesRequired     bool  `json:"max_bytes_required"`
}

// AccountInfo reads the account's JetStream usage and limits.
// ErrJetStreamNotEnabled when the server has no JetStream,
// ErrJetStreamNotEnabledForAccount when the account has none.
func (js *jsContext) AccountInfo(opts ...JSOpt) (*AccountInfo, error) {
	ctx, cancel, err := js.callContext(opts)
	if err != nil {
		return nil, err
	}
	defer cancel()
	info, err := js.inner.AccountInfo(ctx)
	if err != nil {
		return nil, jsTranslate(err)
	}
	var out AccountInfo
	if err := json.Unmarshal(info.Raw, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ---- request options of StreamInfo and PurgeStream

// StreamInfoRequest, passed to StreamInfo as an option, asks for the
// sequences of the deleted messages (State.Deleted) and/or the message
// count of each subject matching SubjectsFilter (State.Subjects; all
// pages of a large map are read).
type StreamInfoRequest struct {
	DeletedDetails bool   `json:"deleted_details,omitempty"`
	SubjectsFilter string `json:"subjects_filter,omitempty"`
}

func (r *StreamInfoRequest) configureJSContext(o *jsOpts) error { o.streamInfo = r; return nil }

// StreamPurgeRequest, passed to PurgeStream as an option, narrows the
// purge: the messages on Subject (wildcards allowed), those below
// Sequence, all but the Keep newest.
type StreamPurgeRequest struct {
	Sequence uint64 `json:"seq,omitempty"`
	Subject  string `json:"filter,omitempty"`
	Keep     uint64 `json:"keep,omitempty"`
}

func (r *StreamPurgeRequest) configureJSContext(o *jsOpts) error { o.purge = r; return nil }

// DirectGet makes GetMsg and GetLastMsg read with Direct Get: any replica
// of a stream with AllowDirect (or a mirror with MirrorDirect) answers,
// and the message's Header gains the Nats-Stream, Nats-Sequence,
// Nats-Subject and Nats-Time-Stamp headers. A stream without AllowDirect
// has nobody answering: ErrNoResponders.
func DirectGet() JSOpt {
	return jsOptFn(func(o *jsOpts) error { o.directGet = true; return nil })
}

// DirectGetNext makes GetMsg read, with Direct Get, the first message at
// or after its sequence whose subject matches subject (wildcards
// allowed).
func DirectGetNext(subject string) JSOpt {
	return jsOptFn(func(o *jsOpts) error { o.directGet, o.directNextFor = true, subject; return nil })
}

// ---- the API requests sent here

// apiPrefix is the JetStream API's prefix with o's APIPrefix or Domain.
func (o *jsOpts) apiPrefix() string {
	switch {
	case o.prefix != "":
		return o.prefix
	case o.domain != "":
		return "$JS." + o.domain + ".API"
	}
	return "$JS.API"
}

// apiResponse is what every JetStream API answer may carry.
type apiResponse struct {
	Error *APIError `json:"error,omitempty"`
}

// apiRequest sends req (nil: an empty payload) to the API's subject subj
// and reads the answer into resp; the API's rejection is its *APIError.
func (js *jsContext) apiRequest(ctx context.Context, o *jsOpts, subj string, req, resp any) error {
	var data []byte
	if req != nil {
		var err error
		if data, err = json.Marshal(req); err != nil {
			return err
		}
	}
	reply, err := js.nc.conn().Request(ctx, o.apiPrefix()+"."+subj, data)
	if err != nil {
		return contextError(ctx, err)
	}
	var status apiResponse
	if err := json.Unmarshal(reply.Data, &status); err != nil {
		return err
	}
	if status.Error != nil {
		return status.Error
	}
	return json.Unmarshal(reply.Data, resp)
}

// checkStreamName is nats.go's check of a stream name argument.
func checkStreamName(stream string) error {
	if stream == "" {
		return ErrStreamNameRequired
	}
	if strings.ContainsAny(stream, ". ") {
		return ErrInvalidStreamName
	}
	return nil
}

// checkConsumerName is nats.go's check of a consumer name argument.
func checkConsumerName(consumer string) error {
	if consumer == "" {
		return ErrConsumerNameRequired
	}
	if strings.ContainsAny(consumer, ". ") {
		return ErrInvalidConsumerName
	}
	return nil
}

// streamInfoPaged is StreamInfo with a StreamInfoRequest: its subjects
// come in pages, asked for by offset until all have come.
func (js *jsContext) streamInfoPaged(ctx context.Context, o *jsOpts, stream string) (*StreamInfo, error) {
	type request struct {
		Offset int `json:"offset,omitempty"`
		StreamInfoRequest
	}
	type response struct {
		Total int `json:"total"`
		StreamInfo
	}
	var subjects map[string]uint64
	for offset := 0; ; {
		var resp response
		err := js.apiRequest(ctx, o, "STREAM.INFO."+stream, request{offset, *o.streamInfo}, &resp)
		if err != nil {
			if errors.Is(err, ErrStreamNotFound) {
				return nil, ErrStreamNotFound
			}
			return nil, err
		}
		total := resp.Total
		if total == 0 {
			total = len(resp.State.Subjects)
		}
		for subject, n := range resp.State.Subjects {
			if subjects == nil {
				subjects = make(map[string]uint64, total)
			}
			subjects[subject] = n
			offset++
		}
		if offset >= total || len(resp.State.Subjects) == 0 {
			resp.State.Subjects = subjects
			return &resp.StreamInfo, nil
		}
	}
}

// purgeWith is PurgeStream with a StreamPurgeRequest.
func (js *jsContext) purgeWith(ctx context.Context, o *jsOpts, stream string) error {
	var resp struct {
		Purged uint64 `json:"purged"`
	}
	err := js.apiRequest(ctx, o, "STREAM.PURGE."+stream, o.purge, &resp)
	if errors.Is(err, ErrBadRequest) {
		return fmt.Errorf("%w: %s", ErrBadRequest, "invalid purge request body")
	}
	return err
}

// ---- a stream's messages

// RawStreamMsg is a message read back from a stream.
type RawStreamMsg struct {
	Subject  string
	Sequence uint64
	Header   Header
	Data     []byte
	Time     time.Time
}

// GetMsg reads the message with sequence seq of stream (ErrMsgNotFound
// when there is none). With DirectGet or DirectGetNext it reads with
// Direct Get, else through the stream's leader.
func (js *jsContext) GetMsg(name string, seq uint64, opts ...JSOpt) (*RawStreamMsg, error) {
	return js.getMsg(name, msgGetRequest{Seq: seq}, opts)
}

// GetLastMsg reads the last message on subject (wildcards allowed) of
// stream. Otherwise as GetMsg.
func (js *jsContext) GetLastMsg(name, subject string, opts ...JSOpt) (*RawStreamMsg, error) {
	return js.getMsg(name, msgGetRequest{LastFor: subject}, opts)
}

type msgGetRequest struct {
	Seq     uint64 `json:"seq,omitempty"`
	LastFor string `json:"last_by_subj,omitempty"`
	NextFor string `json:"next_by_subj,omitempty"`
}

func (js *jsContext) getMsg(name string, req msgGetRequest, opts []JSOpt) (*RawStreamMsg, error) {
	o, ctx, cancel, err := js.callOptions(opts)
	if err != nil {
		return nil, err
	}
	defer cancel()
	if err := checkStreamName(name); err != nil {
		return nil, err
	}
	if o.directGet {
		return js.directGet(ctx, &o, name, req)
	}
	var resp struct {
		Message struct {
			Subject  string    `json:"subject"`
			Sequence uint64    `json:"seq"`
			Header   []byte    `json:"hdrs,omitempty"`
			Data     []byte    `json:"data,omitempty"`
			Time     time.Time `json:"time"`
		} `json:"message"`
	}
	if err := js.apiRequest(ctx, &o, "STREAM.MSG.GET."+name, req, &resp); err != nil {
		switch {
		case errors.Is(err, ErrMsgNotFound):
			return nil, ErrMsgNotFound
		case errors.Is(err, ErrStreamNotFound):
			return nil, ErrStreamNotFound
		}
		return nil, err
	}
	m := resp.Message
	var header Header
	if len(m.Header) > 0 {
		if header, err = decodeHeaderBlock(m.Header); err != nil {
			return nil, err
		}
	}
	return &RawStreamMsg{Subject: m.Subject, Sequence: m.Sequence, Header: header, Data: m.Data, Time: m.Time}, nil
}

// directGet reads a message with Direct Get: the answer is the message
// itself, its stream, sequence, subject and time in headers.
func (js *jsContext) directGet(ctx context.Context, o *jsOpts, name string, req msgGetRequest) (*RawStreamMsg, error) {
	subject := o.apiPrefix() + ".DIRECT.GET." + name
	var data []byte
	if req.LastFor != "" {
		subject += "." + req.LastFor
	} else {
		req.NextFor = o.directNextFor
		data, _ = json.Marshal(req)
	}
	reply, err := js.nc.conn().Request(ctx, subject, data)
	if err != nil {
		return nil, contextError(ctx, err)
	}
	if len(reply.Data) == 0 && reply.Status != 0 {
		if reply.Status == 404 {
			return nil, ErrMsgNotFound
		}
		description := reply.StatusDescription
		if description == "" {
			description = "unable to get message"
		}
		return nil, fmt.Errorf("nats: %s", description)
	}
	return directGetMsg(reply.Header, reply.Data)
}

// directGetMsg is a Direct Get's answer as a RawStreamMsg, with nats.go's
// errors for a header missing or unreadable.
func directGetMsg(h Header, data []byte) (*RawStreamMsg, error) {
	if len(h) == 0 {
		return nil, errors.New("nats: response should have headers")
	}
	if h.Get(JSStream) == "" {
		return nil, errors.New("nats: missing stream header")
	}
	seqText := h.Get(JSSequence)
	if seqText == "" {
		return nil, errors.New("nats: missing sequence header")
	}
	seq, err := strconv.ParseUint(seqText, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("nats: invalid sequence header '%s': %v", seqText, err)
	}
	timeText := h.Get(JSTimeStamp)
	if timeText == "" {
		return nil, errors.New("nats: missing timestamp header")
	}
	stamp, err := time.Parse(time.RFC3339Nano, timeText)
	if err != nil {
		// The server's older format (Go's time.Time.String).
		if stamp, err = time.Parse("2006-01-02 15:04:05.999999999 +0000 UTC", timeText); err != nil {
			return nil, fmt.Errorf("nats: invalid timestamp header '%s': %v", timeText, err)
		}
	}
	subject := h.Get(JSSubject)
	if subject == "" {
		return nil, errors.New("nats: missing subject header")
	}
	return &RawStreamMsg{Subject: subject, Sequence: seq, Header: h, Data: data, Time: stamp}, nil
}

// decodeHeaderBlock reads a stored message's header block ("NATS/1.0"
// then "Name: value" lines), names kept as written.
func decodeHeaderBlock(block []byte) (Header, error) {
	lines := strings.Split(string(bytes.TrimRight(block, "\r\n")), "\r\n")
	if !strings.HasPrefix(lines[0], "NATS/1.0") {
		return nil, ErrBadHeaderMsg
	}
	h := Header{}
	for _, line := range lines[1:] {
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || name == "" {
			return nil, ErrBadHeaderMsg
		}
		h[name] = append(h[name], strings.TrimSpace(value))
	}
	return h, nil
}

// DeleteMsg deletes message seq of stream, marking it deleted without
// overwriting its bytes (SecureDeleteMsg erases them). The server's
// refusal (no such message, a DenyDelete stream) is its *APIError.
func (js *jsContext) DeleteMsg(name string, seq uint64, opts ...JSOpt) error {
	return js.deleteMsg(name, seq, opts, natsio.NoErase())
}

// SecureDeleteMsg deletes message seq of stream and overwrites its bytes
// in storage. Otherwise as DeleteMsg.
func (js *jsContext) SecureDeleteMsg(name string, seq uint64, opts ...JSOpt) error {
	return js.deleteMsg(name, seq, opts)
}

func (js *jsContext) deleteMsg(name string, seq uint64, opts []JSOpt, bopts ...natsio.DeleteMsgOpt) error {
	ctx, cancel, err := js.callContext(opts)
	if err != nil {
		return err
	}
	defer cancel()
	if err := checkStreamName(name); err != nil {
		return err
	}
	err = js.inner.DeleteMsg(ctx, name, seq, bopts...)
	// nats.go returns the server's answer as it is.
	if apiErr := APIErrorOf(err); apiErr != nil {
		return apiErr
	}
	return jsTranslate(err)
}

// ---- stream configurations

// streamRequest is cfg as sent to the server: each source's Domain as
// its External API prefix (cfg itself unchanged).
func streamRequest(cfg *StreamConfig) (*StreamConfig, error) {
	out := *cfg
	if cfg.Mirror != nil && cfg.Mirror.Domain != "" {
		mirror, err := sourceWithDomain(cfg.Mirror)
		if err != nil {
			return nil, err
		}
		out.Mirror = mirror
	}
	if len(cfg.Sources) > 0 {
		out.Sources = make([]*StreamSource, len(cfg.Sources))
		for i, source := range cfg.Sources {
			out.Sources[i] = source
			if source != nil && source.Domain != "" {
				s, err := sourceWithDomain(source)
				if err != nil {
					return nil, err
				}
				out.Sources[i] = s
			}
		}
	}
	return &out, nil
}

func sourceWithDomain(source *StreamSource) (*StreamSource, error) {
	if source.External != nil {
		return nil, errors.New("nats: domain and external are both set")
	}
	s := *source
	s.External = &ExternalStream{APIPrefix: "$JS." + source.Domain + ".API"}
	return &s, nil
}

// checkStreamKept is nats.go's check that the server kept the subject
// transforms and sources asked for (an older server drops them).
func checkStreamKept(asked *StreamConfig, info *StreamInfo) error {
	if asked.SubjectTransform != nil && info.Config.SubjectTransform == nil {
		return ErrStreamSubjectTransformNotSupported
	}
	if len(asked.Sources) == 0 {
		return nil
	}
	if len(asked.Sources) != len(info.Config.Sources) {
		return ErrStreamSourceNotSupported
	}
	for i, source := range asked.Sources {
		kept := info.Config.Sources[i]
		if source != nil && len(source.SubjectTransforms) != 0 && (kept == nil || len(kept.SubjectTransforms) == 0) {
			return ErrStreamSourceMultipleSubjectTransformsNotSupported
		}
	}
	return nil
}
