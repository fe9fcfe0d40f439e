/// @file
/// JetStream and Key-Value for the header-only C++ binding of libnatsio
/// (include it next to natsio/natsio.hpp). It also brings in
/// natsio/object.hpp, the Object Store.
///
/// The same model as natsio.hpp over the natsio_js_* / natsio_kv_* part of
/// include/natsio.h:
///   - every operation has a blocking form and a `_async` form returning a
///     natsio::Future<T> (PubAck, std::string JSON, std::uint64_t revision,
///     count or API level, std::vector<std::string> names, StoredMsg, MsgList, Msg,
///     KeyValue, KvEntry, KvEntryList, KvStatus, std::vector<KvStatus>,
///     Messages, KvWatcher, or void);
///   - continuous consumption (JetStream::consume -> Messages, a Feed of
///     Msg; the ordered consumer, JetStream::ordered_consumer ->
///     OrderedConsumer, whose messages() runs are Messages too) and KV
///     watches (KeyValue::watch -> KvWatcher, a Feed of KvEntry)
///     are natsio::Feed like subscriptions: next(timeout), next_async(),
///     set_callback(on_item, on_end), stop(), stats(), range-for. Both pull
///     into their buffer on the library's threads from the moment they are
///     returned, whether or not anyone reads: nothing is skipped while the
///     reader is away (a full buffer pauses pulling, counted in
///     stats().stalls). A batch read (JetStream::get_last_msgs_for ->
///     StoredMsgs, a Feed of StoredMsg) and a key listing
///     (KeyValue::list_keys -> KvKeyLister, a Feed of std::string) are ones
///     too, and end on their own once every message or key was read;
///   - create/update/create-or-update is one call with a CreateAction
///     (create_stream, create_consumer, create_key_value);
///   - move-only RAII owners (JetStream, KeyValue, StoredMsg, KvEntry,
///     MsgList, KvEntryList, Messages, KvWatcher, StoredMsgs) whose
///     destructors call the handle's _free; a moved-from or default-built
///     owner holds no handle and its calls throw InvalidArgumentError;
///   - lists (MsgList from fetch, KvEntryList from KeyValue::history) own
///     their items and yield borrowed views (MsgView, KvEntryView);
///   - pull consumers: fetch/next, then acknowledge through the message
///     (MsgView::ack, ack_sync, ack_sync_async, nak, term, in_progress,
///     js_metadata, defined in natsio.hpp);
///   - configurations in, infos out as JSON text with the server's field
///     names (durations as integer nanoseconds or strings like "90s");
///   - exceptions from natsio/errors.hpp: JetStreamError and its subclasses
///     (ApiError, StreamNotFoundError, WrongLastSequenceError,
///     NoMessagesError, ConsumerDeletedError, MessageAlreadyAckedError,
///     NotJsMessageError, KeyNotFoundError, KeyDeletedError, ...).
///
/// Lifetimes: a JetStream, KeyValue, Messages, KvWatcher or StoredMsgs does
/// not keep its Client open (nor a Messages or StoredMsgs its JetStream, or a
/// KvWatcher its KeyValue). Once the client is closed or destroyed every
/// call throws ConnectionClosedError (a running Messages, KvWatcher or
/// StoredMsgs ends with it);
/// destroying them in any order is fine. Every type is thread-safe.
#ifndef NATSIO_CPP_JETSTREAM_HPP
#define NATSIO_CPP_JETSTREAM_HPP

#include <natsio.h>
#include <natsio/errors.hpp>
#include <natsio/natsio.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace natsio {

// ---------------------------------------------------------------------------
// Options and acks
// ---------------------------------------------------------------------------

/// Settings of a JetStream context (natsio_js_options); zero means the
/// library's default. Strings are borrowed for the constructor call only.
// (Explicit initializers keep C++20 designated initialization free of
// -Wmissing-field-initializers.)
struct JetStreamOptions {
    /// JetStream domain (API prefix `$JS.<domain>.API`).
    std::optional<std::string_view> domain = std::nullopt;
    /// Custom API prefix, overriding `domain` (default `$JS.API`).
    std::optional<std::string_view> api_prefix = std::nullopt;
    /// API request and synchronous publish timeout; 0: 5 s.
    milliseconds timeout{0};
    /// Asynchronous publishes awaiting acks before publish_async stalls;
    /// 0: 4000.
    std::int64_t publish_async_max_pending = 0;
    /// How long a stalled publish_async waits for room before it throws
    /// TooManyStalledMsgsError; 0: 200 ms.
    milliseconds publish_async_stall_wait{0};
    /// How long an asynchronous publish waits for its ack; 0: `timeout`.
    milliseconds publish_async_timeout{0};
};

/// PublishOptions::ttl value: the message never expires, even if the stream
/// has a max age.
inline constexpr std::chrono::seconds ttl_never{NATSIO_TTL_NEVER};

/// The names of the headers JetStream reads and writes, and Nats-Rollup's
/// values: js_headers::MSG_ID is NATSIO_JS_HEADER_MSG_ID ("Nats-Msg-Id"),
/// one constant per name natsio.h lists (NATSIO_JS_HEADERS).
namespace js_headers {
/// One constant: `suffix` is NATSIO_JS_HEADER_`suffix` (undefined again below).
#define NATSIO_CPP_JS_HEADER(suffix) inline constexpr std::string_view suffix{NATSIO_JS_HEADER_##suffix};
NATSIO_JS_HEADERS(NATSIO_CPP_JS_HEADER)
#undef NATSIO_CPP_JS_HEADER
}  // namespace js_headers

/// Options of one JetStream publish (natsio_js_publish_options); unset
/// fields are not sent. Views are borrowed for the call only.
struct PublishOptions {
    /// `Nats-Msg-Id`: the stream drops a second message with this id within
    /// its duplicate window (the ack then says `duplicate`).
    std::optional<std::string_view> msg_id = std::nullopt;
    /// Fail (ApiError) unless the message lands in this stream.
    std::optional<std::string_view> expected_stream = std::nullopt;
    /// Fail with WrongLastSequenceError unless the stream's last sequence
    /// is this (0: the stream is empty).
    std::optional<std::uint64_t> expected_last_seq = std::nullopt;
    /// Likewise for the last sequence of the subject (or of
    /// `expected_last_subject_seq_subject`); 0: no message on it yet.
    std::optional<std::uint64_t> expected_last_subject_seq = std::nullopt;
    /// The subject (wildcards allowed) `expected_last_subject_seq` checks.
    std::optional<std::string_view> expected_last_subject_seq_subject = std::nullopt;
    /// Fail unless the stream's last message has this id.
    std::optional<std::string_view> expected_last_msg_id = std::nullopt;
    /// Per-message TTL in whole seconds (the stream needs allow_msg_ttl);
    /// 0: none; natsio::ttl_never: never expires.
    std::chrono::seconds ttl{0};
    /// Headers sent with the message.
    HeadersView headers = {};
    /// How long to wait for the ack; 0: the context's timeout (for
    /// publish_async its async publish timeout).
    milliseconds timeout{0};
    /// publish_async only: while other publishes await acks, queue this
    /// one without waking the connection's writer thread, so that a run
    /// of publishes goes out in one write. Call Client::send_deferred after
    /// the run; a stall, a wait on a Future of the client, a publish
    /// without it or 64 KiB queued send them too (natsio_js_publish_options.defer_send).
    bool defer_send = false;
    /// How many times "no responders" (no stream listens on the subject
    /// yet: a stream leader may be moving, ADR-22) is retried before the
    /// publish fails with NoStreamResponseError. std::nullopt: the default,
    /// 2 (nats.go's DefaultPubRetryAttempts); 0: no retry, the first "no
    /// responders" fails (NATSIO_PUBLISH_NO_RETRY); n > 0: n retries, so up
    /// to n + 1 messages sent. Negative: InvalidArgumentError
    /// (NATSIO_ERR_INVALID_ARGUMENT, "retry_attempts must not be negative")
    /// from publish and publish_async, before anything is sent. A
    /// publish_async's retries end at its ack deadline (`timeout`): a retry
    /// due after it is not sent, and the Future fails with
    /// AsyncPublishTimeoutError at the deadline.
    /// (natsio_js_publish_options.retry_attempts; unlike there, 0 here
    /// means none, not the default.)
    std::optional<int> retry_attempts = std::nullopt;
    /// The wait before each retry of `retry_attempts`. std::nullopt: the
    /// default, 250 ms (nats.go's DefaultPubRetryWait). Zero or negative:
    /// InvalidArgumentError (NATSIO_ERR_INVALID_ARGUMENT, "retry_wait must
    /// be positive"), before anything is sent, as in Go (RetryWait) and
    /// Node (retryWait) and nats.go's WithRetryWait.
    /// (natsio_js_publish_options.retry_wait_ms, whose 0 is the default.)
    std::optional<milliseconds> retry_wait = std::nullopt;
};

/// A stream's acknowledgement of a publish.
struct PubAck {
    /// The stream that stored the message.
    std::string stream;
    /// The message's sequence number in that stream.
    std::uint64_t seq = 0;
    /// True when the stream already had a message with this msg_id (nothing
    /// new was stored; `seq` is the original's).
    bool duplicate = false;
    /// The stream's JetStream domain, if any.
    std::optional<std::string> domain = std::nullopt;
    /// On a stream with "allow_msg_counter" (server 2.12+): the counter's
    /// value after this message, as decimal text (it may exceed 64 bits);
    /// std::nullopt for other streams.
    std::optional<std::string> val = std::nullopt;
    /// For the commit of an atomic batch publish (server 2.12+): the
    /// batch's id; std::nullopt for other publishes.
    std::optional<std::string> batch_id = std::nullopt;
    /// For the commit of an atomic batch publish: how many messages the
    /// batch stored; 0 for other publishes.
    std::uint64_t batch_size = 0;
};

namespace detail {

/// Copies a natsio_pub_ack into a PubAck and frees it.
inline PubAck take_pub_ack(natsio_pub_ack* ack) {
    struct Free {
        natsio_pub_ack* ack;
        ~Free() { natsio_pub_ack_free(ack); }
    } owner{ack};
    PubAck out;
    out.stream = std::string(view_of(natsio_pub_ack_stream(ack)));
    out.seq = natsio_pub_ack_seq(ack);
    out.duplicate = natsio_pub_ack_duplicate(ack);
    if (const char* domain = natsio_pub_ack_domain(ack)) {
        out.domain = std::string(domain);
    }
    if (const char* val = natsio_pub_ack_val(ack)) {
        out.val = std::string(val);
    }
    if (const char* batch_id = natsio_pub_ack_batch_id(ack)) {
        out.batch_id = std::string(batch_id);
    }
    out.batch_size = natsio_pub_ack_batch_size(ack);
    return out;
}

inline std::chrono::system_clock::time_point time_from_ns(std::int64_t ns) noexcept {
    return std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::nanoseconds(ns)));
}

/// The C publish options for `options`; the CStrings must outlive the call.
struct CPublishOptions {
    explicit CPublishOptions(const PublishOptions& options)
        : msg_id(options.msg_id, "msg_id"),
          expected_stream(options.expected_stream, "expected_stream"),
          expected_last_subject_seq_subject(options.expected_last_subject_seq_subject,
                                            "expected_last_subject_seq_subject"),
          expected_last_msg_id(options.expected_last_msg_id, "expected_last_msg_id"),
          last_seq(options.expected_last_seq.value_or(0)),
          last_subject_seq(options.expected_last_subject_seq.value_or(0)) {
        check(natsio_js_publish_options_init(&c));
        c.headers = options.headers.c_headers();
        c.msg_id = msg_id.get();
        c.expected_stream = expected_stream.get();
        c.expected_last_seq = options.expected_last_seq ? &last_seq : nullptr;
        c.expected_last_subject_seq = options.expected_last_subject_seq ? &last_subject_seq : nullptr;
        c.expected_last_subject_seq_subject = expected_last_subject_seq_subject.get();
        c.expected_last_msg_id = expected_last_msg_id.get();
        c.ttl_s = static_cast<std::int64_t>(options.ttl.count());
        c.timeout_ms = to_ms(options.timeout);
        c.defer_send = options.defer_send;
        if (options.retry_attempts) {
            const int attempts = *options.retry_attempts;
            if (attempts < 0) {
                throw InvalidArgumentError(NATSIO_ERR_INVALID_ARGUMENT,
                                           "retry_attempts must not be negative");
            }
            // 0 here is "none"; the C field's 0 is "the default".
            c.retry_attempts =
                attempts == 0 ? NATSIO_PUBLISH_NO_RETRY : static_cast<std::int32_t>(attempts);
        }
        if (options.retry_wait) {
            const milliseconds wait = *options.retry_wait;
            // The C field's 0 is "the default", so a zero wait has no C
            // form: refused, as the other bindings refuse it.
            if (wait.count() <= 0) {
                throw InvalidArgumentError(NATSIO_ERR_INVALID_ARGUMENT,
                                           "retry_wait must be positive");
            }
            c.retry_wait_ms = to_ms(wait);
        }
    }
    CPublishOptions(const CPublishOptions&) = delete;
    CPublishOptions& operator=(const CPublishOptions&) = delete;

    OptionalCString msg_id;
    OptionalCString expected_stream;
    OptionalCString expected_last_subject_seq_subject;
    OptionalCString expected_last_msg_id;
    std::uint64_t last_seq;
    std::uint64_t last_subject_seq;
    natsio_js_publish_options c{};
};

/// Enabled for a range (std::begin/std::end) of items convertible to
/// std::string_view that is not itself a string: KeyValue::watch's lists
/// of patterns, JetStream::get_last_msgs_for's lists of filters. (A
/// template, so that a braced or designated initializer list never deduces
/// it.)
template <class Range, class = void>
struct is_pattern_range : std::false_type {};
template <class Range>
struct is_pattern_range<
    Range, std::void_t<decltype(std::begin(std::declval<const Range&>())),
                       decltype(std::end(std::declval<const Range&>()))>>
    : std::bool_constant<
          std::is_convertible_v<decltype(*std::begin(std::declval<const Range&>())),
                                std::string_view> &&
          !std::is_convertible_v<const Range&, std::string_view>> {};
template <class Range>
using enable_if_pattern_range = std::enable_if_t<is_pattern_range<Range>::value>;

/// Iterator over a list owner (MsgList, KvEntryList): yields the items as
/// views (by value) borrowed from the list.
template <class List, class View>
class ListIterator {
public:
    using iterator_category = std::input_iterator_tag;
    using value_type = View;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = View;

    ListIterator() noexcept = default;
    ListIterator(const List* list, std::size_t index) noexcept : list_(list), index_(index) {}

    View operator*() const noexcept { return (*list_)[index_]; }
    ListIterator& operator++() noexcept {
        ++index_;
        return *this;
    }
    ListIterator operator++(int) noexcept {
        ListIterator copy = *this;
        ++index_;
        return copy;
    }
    bool operator==(const ListIterator& other) const noexcept {
        return list_ == other.list_ && index_ == other.index_;
    }
    bool operator!=(const ListIterator& other) const noexcept { return !(*this == other); }

private:
    const List* list_ = nullptr;
    std::size_t index_ = 0;
};

}  // namespace detail

/// How a create call treats an existing resource (natsio_create_action):
/// the `action` of JetStream::create_stream, create_consumer and
/// create_key_value.
enum class CreateAction : std::int32_t {
    /// Create it; an existing one with the same configuration is fine,
    /// another configuration fails.
    Create = NATSIO_CREATE,
    /// Change an existing one; fails if there is none.
    Update = NATSIO_UPDATE,
    /// Create it, or change it if it exists.
    CreateOrUpdate = NATSIO_CREATE_OR_UPDATE,
};

// ---------------------------------------------------------------------------
// Stored messages
// ---------------------------------------------------------------------------

/// A borrowed message read back from a stream: a view of a StoredMsg, or
/// what a StoredMsgs callback receives (valid for the call only). Everything
/// it returns is borrowed from the message. A default-built view reads as
/// empty. Read-only; safe to share between threads while the message lives.
class StoredMsgView {
public:
    /// No message.
    StoredMsgView() noexcept = default;
    /// A view of a message borrowed from the C API; it must outlive the
    /// view.
    explicit StoredMsgView(const natsio_stored_msg* msg) noexcept : msg_(msg) {}

    /// The subject it was stored under ("" without a message).
    std::string_view subject() const noexcept {
        return detail::view_of(natsio_stored_msg_subject(msg_));
    }
    /// The stream sequence.
    std::uint64_t seq() const noexcept { return natsio_stored_msg_seq(msg_); }
    /// When the stream stored it.
    std::chrono::system_clock::time_point time() const noexcept {
        return detail::time_from_ns(natsio_stored_msg_time_ns(msg_));
    }
    /// The payload as text (it may contain NUL bytes).
    std::string_view data() const noexcept {
        const char* bytes = natsio_stored_msg_data(msg_);
        return bytes != nullptr ? std::string_view(bytes, natsio_stored_msg_data_len(msg_))
                                : std::string_view();
    }
    /// The payload as bytes.
    ByteView bytes() const noexcept { return ByteView(data()); }
    /// The headers; an empty view when it has none.
    HeadersView headers() const noexcept { return HeadersView(natsio_stored_msg_headers(msg_)); }

    /// True when there is a message.
    explicit operator bool() const noexcept { return msg_ != nullptr; }
    /// The C message (null for none), still owned by its owner.
    const natsio_stored_msg* c_msg() const noexcept { return msg_; }

protected:
    /// The viewed message; StoredMsg owns it.
    const natsio_stored_msg* msg_ = nullptr;
};

/// A message read back from a stream (JetStream::get_msg, get_last_msg,
/// get_next_msg, and what a StoredMsgs iterator yields;
/// natsio_stored_msg_free on destruction): a move-only RAII owner. Views
/// it returns are valid while it lives.
class StoredMsg : public StoredMsgView {
public:
    /// No message.
    StoredMsg() noexcept = default;
    /// Takes ownership of a message from the C API.
    explicit StoredMsg(natsio_stored_msg* msg) noexcept : StoredMsgView(msg) {}
    /// Takes over the message of `other`, which is left without one.
    StoredMsg(StoredMsg&& other) noexcept : StoredMsgView(std::exchange(other.msg_, nullptr)) {}
    /// Frees this message and takes over the one of `other`.
    StoredMsg& operator=(StoredMsg&& other) noexcept {
        if (this != &other) {
            natsio_stored_msg_free(mutable_msg());
            msg_ = std::exchange(other.msg_, nullptr);
        }
        return *this;
    }
    /// Not copyable.
    StoredMsg(const StoredMsg&) = delete;
    /// Not copyable.
    StoredMsg& operator=(const StoredMsg&) = delete;
    /// Frees the message (natsio_stored_msg_free).
    ~StoredMsg() { natsio_stored_msg_free(mutable_msg()); }

    /// Gives up ownership of the handle (free it with
    /// natsio_stored_msg_free).
    natsio_stored_msg* release() noexcept {
        return const_cast<natsio_stored_msg*>(std::exchange(msg_, nullptr));
    }

private:
    natsio_stored_msg* mutable_msg() const noexcept {
        return const_cast<natsio_stored_msg*>(msg_);
    }
};

// ---------------------------------------------------------------------------
// Pull consumers
// ---------------------------------------------------------------------------

/// Options of JetStream::fetch (natsio_fetch_options); zero means the
/// library's default.
struct FetchOptions {
    /// Messages to fetch at most; 0: 100.
    std::int64_t max_messages = 0;
    /// Payload bytes to fetch at most; 0: no limit.
    std::int64_t max_bytes = 0;
    /// How long the server holds the pull request open; 0: 5 s. fetch
    /// returns at the latest one second after that.
    milliseconds expires{0};
    /// Return at once with the messages available now (possibly none).
    bool no_wait = false;
    /// Server heartbeats while the request is open; 0: none. Set, two
    /// intervals without a word from the server throw TimeoutError ("no
    /// heartbeat received").
    milliseconds idle_heartbeat{0};
    /// The ADR-42 priority group to pull for (empty: none); required when
    /// the consumer has priority groups and must be one of them
    /// (InvalidArgumentError otherwise). With a pinned_client group the
    /// context keeps the pin id the server gave it.
    std::string group{};
    /// Overflow policy: served only while the consumer has at least this
    /// many messages pending; 0: not set. Needs `group`.
    std::int64_t min_pending = 0;
    /// Overflow policy: served only while at least this many messages
    /// await acks; 0: not set. Needs `group`.
    std::int64_t min_ack_pending = 0;
    /// Prioritized policy (a consumer whose "priority_policy" is
    /// "prioritized"; nats.go's FetchPrioritized): the request's priority,
    /// 0 (the highest, the default) to 9; the server serves waiting
    /// requests of a lower number first. Needs `group`. Out of range
    /// (negative included) or without a group: InvalidArgumentError
    /// (NATSIO_ERR_INVALID_ARGUMENT, "priority must be between 0 and 9",
    /// "priority needs a priority group"), before anything is sent. Other
    /// policies ignore it.
    std::int32_t priority = 0;
};

/// The messages one JetStream::fetch returned, in order
/// (natsio_msg_list_free on destruction, which frees the messages). Items
/// are MsgViews borrowed from the list: acknowledge through them while the
/// list lives, and clone() one to keep it longer.
class MsgList {
public:
    /// An item: a MsgView borrowed from the list.
    using value_type = MsgView;
    /// An index or count.
    using size_type = std::size_t;
    /// Input iterator yielding the items as MsgViews (by value).
    using const_iterator = detail::ListIterator<MsgList, MsgView>;
    /// The same as const_iterator: the list is read-only.
    using iterator = const_iterator;

    /// An empty list, holding no handle.
    MsgList() noexcept = default;
    /// Takes ownership of a list from the C API.
    explicit MsgList(natsio_msg_list* list) noexcept
        : list_(list), size_(natsio_msg_list_count(list)) {}
    /// Takes over the list of `other`, which is left empty.
    MsgList(MsgList&& other) noexcept
        : list_(std::exchange(other.list_, nullptr)), size_(std::exchange(other.size_, 0)) {}
    /// Frees this list (and its items) and takes over the one of `other`.
    MsgList& operator=(MsgList&& other) noexcept {
        if (this != &other) {
            natsio_msg_list_free(list_);
            list_ = std::exchange(other.list_, nullptr);
            size_ = std::exchange(other.size_, 0);
        }
        return *this;
    }
    /// Not copyable.
    MsgList(const MsgList&) = delete;
    /// Not copyable.
    MsgList& operator=(const MsgList&) = delete;
    /// Frees the list and its items (natsio_msg_list_free): views of
    /// them must not be used afterwards.
    ~MsgList() { natsio_msg_list_free(list_); }

    /// The number of items.
    std::size_t size() const noexcept { return size_; }
    /// True when there are no items.
    bool empty() const noexcept { return size_ == 0; }
    /// Message `index`; an empty view when out of range.
    MsgView operator[](std::size_t index) const noexcept {
        return MsgView(natsio_msg_list_get(list_, index));
    }
    /// Message `index`; std::out_of_range when out of range.
    MsgView at(std::size_t index) const {
        if (index >= size_) {
            throw std::out_of_range("natsio::MsgList::at");
        }
        return (*this)[index];
    }
    /// Iterator to the first item.
    const_iterator begin() const noexcept { return const_iterator(this, 0); }
    /// Iterator past the last item.
    const_iterator end() const noexcept { return const_iterator(this, size_); }

    /// True when this object holds a list (even an empty one).
    explicit operator bool() const noexcept { return list_ != nullptr; }
    /// The C list (null for none), still owned by this object.
    const natsio_msg_list* c_list() const noexcept { return list_; }
    /// Gives up ownership of the handle (free it with natsio_msg_list_free);
    /// this object is left empty.
    natsio_msg_list* release() noexcept {
        size_ = 0;
        return std::exchange(list_, nullptr);
    }

private:
    natsio_msg_list* list_ = nullptr;
    std::size_t size_ = 0;
};

/// Options of JetStream::consume (natsio_consume_options); zero means the
/// library's default.
struct ConsumeOptions {
    /// Messages kept requested from the server (and buffered) at most; a
    /// new pull request goes out when half have arrived. 0: 500.
    std::int64_t max_messages = 0;
    /// Lifetime of each pull request; 0: 30 s (at least 1 s).
    milliseconds expires{0};
    /// Server heartbeats while a request waits (two missed ones re-send
    /// it); at most half of `expires`. 0: half of `expires`, at most 30 s.
    milliseconds idle_heartbeat{0};
    /// Bytes kept requested at most; 0: not set. Set, requests are bounded
    /// by bytes (excludes `max_messages`); a message larger than it ends
    /// the consume with JetStreamError.
    std::int64_t max_bytes = 0;
    /// Pull again once what is requested and buffered falls to this
    /// fraction of max_messages (max_bytes); 0: 0.5.
    double threshold = 0;
    /// The same as a count of messages; 0: from `threshold`.
    std::int64_t threshold_messages = 0;
    /// The same as a count of bytes (with max_bytes); 0: from `threshold`.
    std::int64_t threshold_bytes = 0;
    /// The ADR-42 priority group to pull for (empty: none), checked
    /// against the consumer's groups when the consume starts. With a
    /// pinned_client group the consume keeps its pin and re-pulls when the
    /// pin moves on.
    std::string group{};
    /// Overflow policy: served only while the consumer has at least this
    /// many messages pending; 0: not set. Needs `group`.
    std::int64_t min_pending = 0;
    /// Overflow policy: served only while at least this many messages
    /// await acks; 0: not set. Needs `group`.
    std::int64_t min_ack_pending = 0;
    /// Prioritized policy (a consumer whose "priority_policy" is
    /// "prioritized"; nats.go's PullPrioritized): the priority of every
    /// pull request of the consume, 0 (the highest, the default) to 9; the
    /// server serves waiting requests of a lower number first. Needs
    /// `group`. Out of range (negative included) or without a group:
    /// InvalidArgumentError (NATSIO_ERR_INVALID_ARGUMENT, "priority must
    /// be between 0 and 9", "priority needs a priority group") from
    /// consume. Other policies ignore it.
    std::int32_t priority = 0;
};

}  // namespace natsio
// detail::JsMessagesVerbs, the generated verb layer of natsio_js_messages.
#include <natsio/gen/js_messages_verbs.hpp>
namespace natsio {

/// A continuous pull from one consumer (JetStream::consume): a Feed of Msg.
/// The library keeps up to ConsumeOptions::max_messages requested and
/// buffered on its own threads, re-pulls at half, and pulls again at once
/// after a reconnect; read with next(), next_async(), range-for or
/// set_callback, and acknowledge each message (Msg::ack, nak, term, ...)
/// unless the ack policy is "none". The iteration ends after stop() (buffered
/// messages are not acknowledged: the server redelivers them after the ack
/// wait) and fails with ConsumerDeletedError / ConsumerNotFoundError when
/// the consumer goes away, ConnectionClosedError when the client closes.
/// drain() ends it gracefully instead; a push consumption also tells its
/// status events (next_status).
class Messages : public Feed<detail::JsMessagesFeed>, private detail::JsMessagesVerbs<Messages> {
public:
    /// Feed's constructors: none, or ownership of a natsio_js_messages.
    using Feed::Feed;

    /// Graceful end (nats.go's ConsumeContext.Drain): a pull consume sends
    /// no more pull requests and withdraws their inbox once those still
    /// open at the server have ended, a push consume withdraws its
    /// subscription; what the server sent before that is still handed out,
    /// then the iteration ends as after stop() (next() returns
    /// std::nullopt, on_end is called without an error), so nothing sent
    /// is left to be redelivered if each message read is acknowledged. An
    /// ordered run just stops taking messages in. Waits up to `timeout`
    /// (default: the client's drain timeout); in iterator mode another
    /// thread must read meanwhile (or use drain_async). TimeoutError (the
    /// drain goes on), SubscriptionClosedError (stopped before the drain
    /// finished), ConnectionClosedError, or the error that ended the
    /// consumption first (e.g. ConsumerDeletedError).
    void drain(milliseconds timeout = default_timeout) const { raw_drain(detail::to_ms(timeout)); }
    /// The future form of drain: completes once the consumption ended
    /// after handing out what it holds, or with TimeoutError after
    /// `timeout` (the drain goes on); other errors as drain.
    Future<void> drain_async(milliseconds timeout = default_timeout) const {
        return raw_drain_async(detail::to_ms(timeout));
    }

    /// The next status event of a push consumption as JSON
    /// (natsio_js_messages_next_status: {"type":"heartbeat",...},
    /// {"type":"flow_control"}, {"type":"heartbeats_missed","count":N}),
    /// waiting up to `timeout` (default_timeout or forever: until one
    /// comes; no_wait: only one already there); std::nullopt once the
    /// consumption ended and its events are read, and at once for a pull
    /// consume or an ordered run. Reading events takes no message.
    /// TimeoutError when none came in time.
    std::optional<std::string> next_status(milliseconds timeout = default_timeout) const {
        char* json = nullptr;
        Status status = natsio_js_messages_next_status(c_handle(), detail::to_ms(timeout), &json);
        if (status == NATSIO_DONE) {
            return std::nullopt;
        }
        detail::check(status);
        return detail::take_string(json);
    }
    /// The future form of next_status (std::nullopt at the end); pending
    /// ones are served in call order.
    Future<std::optional<std::string>> next_status_async() const {
        return detail::start_async<std::optional<std::string>>(
            sink(), natsio_js_messages_next_status_async, c_handle());
    }

private:
    friend class detail::JsMessagesVerbs<Messages>;
};

namespace detail {
// The JetStream results as C++ values (see from_c in natsio.hpp).
inline PubAck from_c(natsio_pub_ack* ack, const SinkPtr&) { return take_pub_ack(ack); }
inline StoredMsg from_c(natsio_stored_msg* msg, const SinkPtr&) noexcept { return StoredMsg(msg); }
inline MsgList from_c(natsio_msg_list* list, const SinkPtr&) noexcept { return MsgList(list); }
inline Messages from_c(natsio_js_messages* messages, const SinkPtr& sink) noexcept {
    return Messages(messages, sink);
}
}  // namespace detail

}  // namespace natsio
// detail::OrderedConsumerVerbs, the generated verb layer of
// natsio_ordered_consumer.
#include <natsio/gen/ordered_consumer_verbs.hpp>
namespace natsio {

// ---------------------------------------------------------------------------
// The ordered consumer (ADR-17)
// ---------------------------------------------------------------------------

/// Where an ordered consumer starts (natsio_deliver_policy).
enum class DeliverPolicy : std::int32_t {
    /// Every message (that matches the filters).
    All = NATSIO_DELIVER_ALL,
    /// The last message, then what comes.
    Last = NATSIO_DELIVER_LAST,
    /// Only messages stored after the consumer is created.
    New = NATSIO_DELIVER_NEW,
    /// From OrderedConsumerConfig::opt_start_seq on.
    ByStartSequence = NATSIO_DELIVER_BY_START_SEQUENCE,
    /// From OrderedConsumerConfig::opt_start_time on.
    ByStartTime = NATSIO_DELIVER_BY_START_TIME,
    /// The last message of each subject, then what comes.
    LastPerSubject = NATSIO_DELIVER_LAST_PER_SUBJECT,
};

/// What JetStream::ordered_consumer reads (natsio_ordered_consumer_options);
/// by default the whole stream from its first message.
struct OrderedConsumerConfig {
    /// Subjects (wildcards allowed) to read; empty: the whole stream.
    std::vector<std::string> filter_subjects{};
    /// Where it starts (DeliverPolicy::All: the first message).
    DeliverPolicy deliver_policy = DeliverPolicy::All;
    /// The first stream sequence, for DeliverPolicy::ByStartSequence only.
    std::optional<std::uint64_t> opt_start_seq = std::nullopt;
    /// The start time, for DeliverPolicy::ByStartTime only.
    std::optional<std::chrono::system_clock::time_point> opt_start_time = std::nullopt;
    /// Deliver headers only (the payload's size in Nats-Msg-Size).
    bool headers_only = false;
    /// The server-side consumers are named `<name_prefix>_<serial>`, the
    /// serial counting them from 1 (nats.go's NamePrefix, nats.js's
    /// name_prefix); empty: a fresh NUID. A consumer name's characters (no
    /// '.', '*', '>', '/', '\\' or whitespace).
    std::string name_prefix{};
    /// How long the server keeps a consumer nobody reads; 0: 5 minutes.
    milliseconds inactive_threshold{0};
    /// The consumers' max_deliver, shown in their info only (nothing is
    /// acknowledged, so nothing is redelivered); 0: not set (the server's
    /// -1, as nats.go); nats.js sets 1.
    std::int64_t max_deliver = 0;
    /// true: one filter subject is sent as a list (`filter_subjects`, as
    /// nats.js does when given a list); false: as `filter_subject` (as
    /// nats.go). The consumer's info shows which.
    bool filter_subjects_as_list = false;
    /// Metadata of every server-side consumer it creates (the
    /// consumers' config.metadata; nats.go's Metadata); empty: none. Sent
    /// as a JSON object of strings: a key or value that is not UTF-8 is
    /// InvalidUtf8Error from JetStream::ordered_consumer.
    std::map<std::string, std::string> metadata{};
};

/// Options of OrderedConsumer::messages (natsio_ordered_messages_options);
/// zero means the library's default.
struct OrderedMessagesOptions {
    /// Messages per pull request at most; 0: 500.
    std::int64_t max_messages = 0;
    /// Lifetime of each pull request; 0: 30 s (at least 1 s).
    milliseconds expires{0};
    /// Server heartbeats while a request waits (two missed ones heal the
    /// consumer); at most half of `expires`. 0: half of it, at most 5 s.
    milliseconds idle_heartbeat{0};
    /// 0: none. Otherwise the run fails with NoMessagesError once no
    /// message has arrived for this long while nothing is buffered.
    milliseconds idle_timeout{0};
    /// End the run once caught up (after the message delivered with nothing
    /// more pending; at once when nothing is pending).
    bool until_drained = false;
};

/// An ordered consumer (ADR-17, JetStream::ordered_consumer): an
/// always-in-order, self-healing view of one stream, backed by an
/// ephemeral server-side consumer (no acks, memory, R1) that the library
/// deletes and recreates after the last delivered stream sequence on a
/// gap, missed heartbeats, a reconnect or its loss: the reader sees no gap
/// and no duplicate. Constructing it sends nothing; start() creates the
/// consumer (messages() does if start() was not called). One messages()
/// run at a time (IllegalStateError otherwise); a run ends with its
/// Messages (stop(), until_drained, idle_timeout -> NoMessagesError) and
/// deletes its consumer, and the next run continues after the last message
/// taken. stop() ends a run, deletes the consumer and ends the ordered
/// consumer (start() and messages() then throw IllegalStateError).
/// Move-only; destroying it deletes an unused consumer without waiting (a
/// run's Messages still alive goes on). Thread-safe.
class OrderedConsumer : private detail::OrderedConsumerVerbs<OrderedConsumer> {
public:
    /// No ordered consumer: its calls throw InvalidArgumentError.
    OrderedConsumer() noexcept = default;
    /// Takes ownership of a handle from the C API.
    explicit OrderedConsumer(natsio_ordered_consumer* oc, detail::SinkPtr sink = nullptr) noexcept
        : oc_(oc), sink_(std::move(sink)) {}
    /// Takes over `other`'s consumer; `other` is left empty.
    OrderedConsumer(OrderedConsumer&& other) noexcept
        : oc_(std::exchange(other.oc_, nullptr)), sink_(std::move(other.sink_)) {}
    /// Frees this one's consumer (as the destructor) and takes over `other`'s.
    OrderedConsumer& operator=(OrderedConsumer&& other) noexcept {
        if (this != &other) {
            natsio_ordered_consumer_free(oc_);
            oc_ = std::exchange(other.oc_, nullptr);
            sink_ = std::move(other.sink_);
        }
        return *this;
    }
    OrderedConsumer(const OrderedConsumer&) = delete;
    OrderedConsumer& operator=(const OrderedConsumer&) = delete;
    /// natsio_ordered_consumer_free.
    ~OrderedConsumer() { natsio_ordered_consumer_free(oc_); }

    /// Creates the server-side consumer (or, when one exists or a run is
    /// going, reads the info of the one in use) and returns its
    /// ConsumerInfo JSON ("name", "num_pending"). StreamNotFoundError,
    /// IllegalStateError (after stop()), TimeoutError,
    /// ConnectionClosedError.
    std::string start() const { return raw_start(); }
    /// The future form of start.
    Future<std::string> start_async() const { return raw_start_async(); }

    /// Starts a run: the ordered messages as a Messages feed (each with its
    /// js_metadata; no acknowledgement needed). Throws as start() and
    /// InvalidArgumentError for bad options.
    Messages messages(const OrderedMessagesOptions& options = {}) const {
        natsio_ordered_messages_options c_options = to_c(options);
        return raw_messages(&c_options);
    }
    /// The future form of messages: the Messages (taken once).
    Future<Messages> messages_async(const OrderedMessagesOptions& options = {}) const {
        natsio_ordered_messages_options c_options = to_c(options);
        return raw_messages_async(&c_options);
    }

    /// Ends a run, deletes the server-side consumer and ends the ordered
    /// consumer. Idempotent. TimeoutError, ConnectionClosedError.
    void stop() const { raw_stop(); }
    /// The future form of stop.
    Future<void> stop_async() const { return raw_stop_async(); }

    /// The C handle (still owned by this object).
    natsio_ordered_consumer* c_ordered_consumer() const noexcept { return oc_; }

private:
    friend class detail::OrderedConsumerVerbs<OrderedConsumer>;
    natsio_ordered_consumer* c_handle() const noexcept { return oc_; }
    const detail::SinkPtr& sink() const noexcept { return sink_; }

    static natsio_ordered_messages_options to_c(const OrderedMessagesOptions& options) {
        natsio_ordered_messages_options c{};
        detail::check(natsio_ordered_messages_options_init(&c));
        c.max_messages = options.max_messages;
        c.expires_ms = detail::to_ms(options.expires);
        c.idle_heartbeat_ms = detail::to_ms(options.idle_heartbeat);
        c.idle_timeout_ms = detail::to_ms(options.idle_timeout);
        c.until_drained = options.until_drained;
        return c;
    }

    natsio_ordered_consumer* oc_ = nullptr;
    detail::SinkPtr sink_;
};

namespace detail {
inline OrderedConsumer from_c(natsio_ordered_consumer* oc, const SinkPtr& sink) noexcept {
    return OrderedConsumer(oc, sink);
}
}  // namespace detail

// ---------------------------------------------------------------------------
// Batch reads of stored messages (get_last_msgs_for)
// ---------------------------------------------------------------------------

/// Options of JetStream::get_last_msgs_for; all unset by default. At most
/// one of up_to_seq and up_to_time (both: InvalidArgumentError).
struct LastMsgsOptions {
    /// Read at most this many messages (the first ones in stream order);
    /// 0: as many as the server allows.
    std::uint32_t batch = 0;
    /// Read the last messages as of this stream sequence (the last one of
    /// each subject at or below it) instead of now. Sequences start at 1:
    /// 0 is InvalidArgumentError.
    std::optional<std::uint64_t> up_to_seq = std::nullopt;
    /// Read the last messages as of this time (the last one of each subject
    /// stored before it) instead of now, with nanosecond precision. The
    /// epoch itself is InvalidArgumentError (the C ABI reads 0 as unset).
    std::optional<std::chrono::system_clock::time_point> up_to_time = std::nullopt;
};

namespace detail {

/// Nanoseconds since the epoch, as the C ABI takes times.
inline std::int64_t ns_from_time(std::chrono::system_clock::time_point time) noexcept {
    return static_cast<std::int64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count());
}

/// The items of a batch read (StoredMsgs).
template <>
struct FeedItem<natsio_stored_msg> {
    using Item = StoredMsg;
    using View = StoredMsgView;
    // What a throwing callback is reported with: no subscription id; the
    // message's subject.
    static std::uint64_t sid(const natsio_stored_msg*) noexcept { return 0; }
    static const char* subject(const natsio_stored_msg* msg) noexcept {
        return natsio_stored_msg_subject(msg);
    }
};

}  // namespace detail

/// The messages of one batch read (JetStream::get_last_msgs_for): a Feed of
/// StoredMsg, which the caller owns. The library gathers them on its
/// threads from the moment get_last_msgs_for returns; read them with
/// next(timeout) (StoredMsg, std::nullopt at the end), next_async()
/// (Future<std::optional<StoredMsg>>), range-for, or set_callback (each
/// message as a StoredMsgView borrowed for the call, on a library thread,
/// then the end handler once). The iteration ends (std::nullopt, the end of
/// a range-for, an end handler called with null) once every message was
/// read, at once when none matched, or after stop(). It fails with
/// NoRespondersError when nobody answered (no such stream, or a stream
/// without allow_direct), ApiError for another status from the server,
/// TimeoutError when the batch stalled for the context's timeout, and
/// ConnectionClosedError when the client closes: next() and range-for
/// throw it, again on every later call. Destroying it stops the read; once
/// the destructor or stop() returns, no callback runs again. Thread-safe.
using StoredMsgs = Feed<detail::StoredMsgsFeed>;

namespace detail {
inline StoredMsgs from_c(natsio_stored_msgs* msgs, const SinkPtr& sink) noexcept {
    return StoredMsgs(msgs, sink);
}
}  // namespace detail

/// Receives each message of a StoredMsgs in push mode (a view borrowed for
/// the call).
using StoredMsgHandler = StoredMsgs::ItemHandler;

// ---------------------------------------------------------------------------
// Key-Value
// ---------------------------------------------------------------------------

/// What a revision of a key records.
enum class KvOperation : std::int32_t {
    /// A value (KeyValue::put, create, update).
    Put = NATSIO_KV_PUT,
    /// A delete marker (KeyValue::del).
    Del = NATSIO_KV_DEL,
    /// A purge marker (KeyValue::purge, or written by the server on expiry).
    Purge = NATSIO_KV_PURGE,
    /// Not a revision: the marker a KvWatcher delivers once every value that
    /// existed when the watch started has been delivered (empty key and
    /// value, revision 0); changes follow.
    InitialDone = NATSIO_KV_INITIAL_DONE,
};

/// A borrowed revision of a key: a view of a KvEntry, an item of a
/// KvEntryList (valid while the list lives), or what a KvWatcher callback
/// receives (valid for the call). A watcher's initial-values marker is an
/// entry too: initial_done() is true for it. Everything it returns is
/// borrowed from the entry. A default-built view reads as empty.
class KvEntryView {
public:
    /// No entry.
    KvEntryView() noexcept = default;
    /// A view of an entry borrowed from the C API; it must outlive the
    /// view.
    explicit KvEntryView(const natsio_kv_entry* entry) noexcept : entry_(entry) {}

    /// The bucket's name.
    std::string_view bucket() const noexcept {
        return detail::view_of(natsio_kv_entry_bucket(entry_));
    }
    /// The key ("" for a watcher's initial-values marker).
    std::string_view key() const noexcept { return detail::view_of(natsio_kv_entry_key(entry_)); }
    /// The value as text (it may contain NUL bytes).
    std::string_view value() const noexcept {
        const char* bytes = natsio_kv_entry_value(entry_);
        return bytes != nullptr ? std::string_view(bytes, natsio_kv_entry_value_len(entry_))
                                : std::string_view();
    }
    /// The value as bytes.
    ByteView bytes() const noexcept { return ByteView(value()); }
    /// The revision (its stream sequence).
    std::uint64_t revision() const noexcept { return natsio_kv_entry_revision(entry_); }
    /// What the revision records: a value, a delete or purge marker, or
    /// the watcher's marker.
    KvOperation operation() const noexcept {
        return static_cast<KvOperation>(natsio_kv_entry_operation(entry_));
    }
    /// When the revision was stored.
    std::chrono::system_clock::time_point created() const noexcept {
        return detail::time_from_ns(natsio_kv_entry_created_ns(entry_));
    }
    /// How many newer revisions of the key exist (0 for KeyValue::get; for
    /// KeyValue::history, the revisions after this one).
    std::uint64_t delta() const noexcept { return natsio_kv_entry_delta(entry_); }
    /// True for a watcher's initial-values marker
    /// (operation() == KvOperation::InitialDone).
    bool initial_done() const noexcept { return operation() == KvOperation::InitialDone; }

    /// True when there is an entry.
    explicit operator bool() const noexcept { return entry_ != nullptr; }
    /// The C entry (null for none), still owned by its owner.
    const natsio_kv_entry* c_entry() const noexcept { return entry_; }

protected:
    /// The viewed entry; KvEntry owns it.
    const natsio_kv_entry* entry_ = nullptr;
};

/// One revision of a key, owned (natsio_kv_entry_free on destruction): a
/// move-only RAII owner, what KeyValue::get and KvWatcher::next return.
/// Views it returns are valid while it lives.
class KvEntry : public KvEntryView {
public:
    /// No entry.
    KvEntry() noexcept = default;
    /// Takes ownership of an entry from the C API.
    explicit KvEntry(natsio_kv_entry* entry) noexcept : KvEntryView(entry) {}
    /// Takes over the entry of `other`, which is left without one.
    KvEntry(KvEntry&& other) noexcept : KvEntryView(std::exchange(other.entry_, nullptr)) {}
    /// Frees this entry and takes over the one of `other`.
    KvEntry& operator=(KvEntry&& other) noexcept {
        if (this != &other) {
            natsio_kv_entry_free(mutable_entry());
            entry_ = std::exchange(other.entry_, nullptr);
        }
        return *this;
    }
    /// Not copyable.
    KvEntry(const KvEntry&) = delete;
    /// Not copyable.
    KvEntry& operator=(const KvEntry&) = delete;
    /// Frees the entry (natsio_kv_entry_free).
    ~KvEntry() { natsio_kv_entry_free(mutable_entry()); }

    /// Gives up ownership of the handle (free it with
    /// natsio_kv_entry_free).
    natsio_kv_entry* release() noexcept {
        return const_cast<natsio_kv_entry*>(std::exchange(entry_, nullptr));
    }

private:
    natsio_kv_entry* mutable_entry() const noexcept { return const_cast<natsio_kv_entry*>(entry_); }
};

/// The revisions KeyValue::history returns, oldest first
/// (natsio_kv_entry_list_free on destruction, which frees the entries).
/// Items are KvEntryViews borrowed from the list: they must not outlive it
/// (there is no owned copy of a list item; keep the list instead).
class KvEntryList {
public:
    /// An item: a KvEntryView borrowed from the list.
    using value_type = KvEntryView;
    /// An index or count.
    using size_type = std::size_t;
    /// Input iterator yielding the items as KvEntryViews (by value).
    using const_iterator = detail::ListIterator<KvEntryList, KvEntryView>;
    /// The same as const_iterator: the list is read-only.
    using iterator = const_iterator;

    /// An empty list, holding no handle.
    KvEntryList() noexcept = default;
    /// Takes ownership of a list from the C API.
    explicit KvEntryList(natsio_kv_entry_list* list) noexcept
        : list_(list), size_(natsio_kv_entry_list_count(list)) {}
    /// Takes over the list of `other`, which is left empty.
    KvEntryList(KvEntryList&& other) noexcept
        : list_(std::exchange(other.list_, nullptr)), size_(std::exchange(other.size_, 0)) {}
    /// Frees this list (and its items) and takes over the one of `other`.
    KvEntryList& operator=(KvEntryList&& other) noexcept {
        if (this != &other) {
            natsio_kv_entry_list_free(list_);
            list_ = std::exchange(other.list_, nullptr);
            size_ = std::exchange(other.size_, 0);
        }
        return *this;
    }
    /// Not copyable.
    KvEntryList(const KvEntryList&) = delete;
    /// Not copyable.
    KvEntryList& operator=(const KvEntryList&) = delete;
    /// Frees the list and its items (natsio_kv_entry_list_free): views
    /// of them must not be used afterwards.
    ~KvEntryList() { natsio_kv_entry_list_free(list_); }

    /// The number of items.
    std::size_t size() const noexcept { return size_; }
    /// True when there are no items.
    bool empty() const noexcept { return size_ == 0; }
    /// Entry `index`; an empty view when out of range.
    KvEntryView operator[](std::size_t index) const noexcept {
        return KvEntryView(natsio_kv_entry_list_get(list_, index));
    }
    /// Entry `index`; std::out_of_range when out of range.
    KvEntryView at(std::size_t index) const {
        if (index >= size_) {
            throw std::out_of_range("natsio::KvEntryList::at");
        }
        return (*this)[index];
    }
    /// Iterator to the first item.
    const_iterator begin() const noexcept { return const_iterator(this, 0); }
    /// Iterator past the last item.
    const_iterator end() const noexcept { return const_iterator(this, size_); }

    /// True when this object holds a list (even an empty one).
    explicit operator bool() const noexcept { return list_ != nullptr; }
    /// The C list (null for none), still owned by this object.
    const natsio_kv_entry_list* c_list() const noexcept { return list_; }
    /// Gives up ownership of the handle (free it with
    /// natsio_kv_entry_list_free); this object is left empty.
    natsio_kv_entry_list* release() noexcept {
        size_ = 0;
        return std::exchange(list_, nullptr);
    }

private:
    natsio_kv_entry_list* list_ = nullptr;
    std::size_t size_ = 0;
};

/// Options of KeyValue::watch (natsio_kv_watch_options); all off by
/// default.
// (Explicit initializers keep C++20 designated initialization free of
// -Wmissing-field-initializers.)
struct KvWatchOptions {
    /// Deliver every kept revision first, not only the latest per key.
    bool include_history = false;
    /// Leave out delete and purge markers.
    bool ignore_deletes = false;
    /// Entries without their values (key, revision and operation only).
    bool meta_only = false;
    /// No initial values: only changes made after the watch starts (the
    /// initial-done marker comes first, right away).
    bool updates_only = false;
    /// Resume at this revision (0: not set; revisions start at 1): the
    /// watch delivers every revision from it on of the matching keys
    /// (delete and purge markers included unless `ignore_deletes`;
    /// `include_history` may be set too and changes nothing), then the
    /// initial-done marker once the revisions stored when the watch started
    /// are delivered (at once if there were none from it on), then changes.
    /// A revision past the next one to be written skips the changes before
    /// it. Together with `updates_only`: InvalidArgumentError.
    std::uint64_t resume_from_revision = 0;
};

// ---------------------------------------------------------------------------
// Key-Value bucket status
// ---------------------------------------------------------------------------

namespace detail {

/// Parses the `{"key": "value", ...}` text the library gives for metadata
/// (natsio_kv_bucket_status_metadata_json, natsio_obj_info_metadata_json,
/// natsio_obj_status_metadata_json).
class MetadataParser {
public:
    static std::map<std::string, std::string> parse(const char* json) {
        std::map<std::string, std::string> out;
        if (json == nullptr) {
            return out;
        }
        MetadataParser p(json);
        p.skip_ws();
        p.expect('{');
        p.skip_ws();
        if (p.peek() == '}') {
            ++p.at_;
            p.expect_end();
            return out;
        }
        for (;;) {
            p.skip_ws();
            std::string key = p.string();
            p.skip_ws();
            p.expect(':');
            p.skip_ws();
            out[std::move(key)] = p.string();
            p.skip_ws();
            if (p.peek() == ',') {
                ++p.at_;
                continue;
            }
            p.expect('}');
            p.expect_end();
            return out;
        }
    }

private:
    explicit MetadataParser(std::string_view text) : text_(text) {}

    [[noreturn]] void fail() const {
        throw InternalError(NATSIO_ERR_INTERNAL,
                            "malformed metadata JSON from the library: " + std::string(text_));
    }
    char peek() const noexcept { return at_ < text_.size() ? text_[at_] : '\0'; }
    void skip_ws() noexcept {
        while (at_ < text_.size() &&
               (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\r' ||
                text_[at_] == '\t')) {
            ++at_;
        }
    }
    void expect(char c) {
        if (peek() != c || at_ >= text_.size()) {
            fail();
        }
        ++at_;
    }
    void expect_end() {
        skip_ws();
        if (at_ != text_.size()) {
            fail();
        }
    }
    unsigned hex4() {
        if (at_ + 4 > text_.size()) {
            fail();
        }
        unsigned value = 0;
        for (int i = 0; i < 4; ++i) {
            char c = text_[at_++];
            value <<= 4;
            if (c >= '0' && c <= '9') {
                value |= static_cast<unsigned>(c - '0');
            } else if (c >= 'a' && c <= 'f') {
                value |= static_cast<unsigned>(c - 'a' + 10);
            } else if (c >= 'A' && c <= 'F') {
                value |= static_cast<unsigned>(c - 'A' + 10);
            } else {
                fail();
            }
        }
        return value;
    }
    static void append_utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }
    std::string string() {
        expect('"');
        std::string out;
        for (;;) {
            if (at_ >= text_.size()) {
                fail();
            }
            char c = text_[at_++];
            if (c == '"') {
                return out;
            }
            if (c != '\\') {
                out += c;
                continue;
            }
            if (at_ >= text_.size()) {
                fail();
            }
            char e = text_[at_++];
            switch (e) {
            case '"':
            case '\\':
            case '/':
                out += e;
                break;
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            case 't':
                out += '\t';
                break;
            case 'u': {
                unsigned cp = hex4();
                if (cp >= 0xD800 && cp < 0xDC00) {
                    // A high surrogate: its low half must follow.
                    if (at_ + 2 > text_.size() || text_[at_] != '\\' || text_[at_ + 1] != 'u') {
                        fail();
                    }
                    at_ += 2;
                    unsigned low = hex4();
                    if (low < 0xDC00 || low >= 0xE000) {
                        fail();
                    }
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                } else if (cp >= 0xDC00 && cp < 0xE000) {
                    fail();
                }
                append_utf8(out, cp);
                break;
            }
            default:
                fail();
            }
        }
    }

    std::string_view text_;
    std::size_t at_ = 0;
};

}  // namespace detail

/// A Key-Value bucket's status (KeyValue::get_status,
/// JetStream::key_value_statuses): a copyable value, copied out of a
/// natsio_kv_bucket_status. KeyValue::status gives the same as JSON.
struct KvStatus {
    /// The bucket's name.
    std::string bucket;
    /// How many revisions the bucket stores, delete and purge markers
    /// included (its stream's message count).
    std::uint64_t values = 0;
    /// How many revisions are kept per key (1..64).
    std::int64_t history = 0;
    /// How long revisions live; zero: forever.
    std::chrono::nanoseconds ttl{0};
    /// Bytes stored.
    std::uint64_t bytes = 0;
    /// "file" or "memory".
    std::string storage;
    /// How many replicas the bucket has.
    std::int64_t replicas = 0;
    /// Whether the bucket's stream compresses (s2).
    bool is_compressed = false;
    /// The bucket's description, if it has one.
    std::optional<std::string> description = std::nullopt;
    /// The bucket's application metadata.
    std::map<std::string, std::string> metadata = {};
    /// How long the server keeps the purge markers it writes when a key's
    /// TTL or a limit removes it (the config's "limit_marker_ttl"); zero:
    /// no such markers, and no per-key TTL (KeyValue::create and purge
    /// with a TTL are refused).
    std::chrono::nanoseconds limit_marker_ttl{0};
    /// The backing stream's StreamInfo JSON.
    std::string stream_info_json;
};

namespace detail {

inline KvStatus kv_status_of(const natsio_kv_bucket_status* status) {
    KvStatus out;
    out.bucket = view_of(natsio_kv_bucket_status_bucket(status));
    out.values = natsio_kv_bucket_status_values(status);
    out.history = natsio_kv_bucket_status_history(status);
    out.ttl = std::chrono::nanoseconds(natsio_kv_bucket_status_ttl_ns(status));
    out.bytes = natsio_kv_bucket_status_bytes(status);
    out.storage = view_of(natsio_kv_bucket_status_storage(status));
    out.replicas = natsio_kv_bucket_status_replicas(status);
    out.is_compressed = natsio_kv_bucket_status_is_compressed(status);
    if (const char* text = natsio_kv_bucket_status_description(status)) {
        out.description = std::string(text);
    }
    out.metadata = MetadataParser::parse(natsio_kv_bucket_status_metadata_json(status));
    out.limit_marker_ttl =
        std::chrono::nanoseconds(natsio_kv_bucket_status_limit_marker_ttl_ns(status));
    out.stream_info_json = view_of(natsio_kv_bucket_status_stream_info_json(status));
    return out;
}

inline KvStatus take_kv_status(natsio_kv_bucket_status* status) {
    return take_handle(status, natsio_kv_bucket_status_free, kv_status_of);
}

inline std::vector<KvStatus> take_kv_status_list(natsio_kv_bucket_status_list* list) {
    return take_list(list, natsio_kv_bucket_status_list_count, natsio_kv_bucket_status_list_get,
                     natsio_kv_bucket_status_list_free, kv_status_of);
}

/// The items of a watch (KvWatcher).
template <>
struct FeedItem<natsio_kv_entry> {
    using Item = KvEntry;
    using View = KvEntryView;
    // What a throwing callback is reported with: no subscription id; the key.
    static std::uint64_t sid(const natsio_kv_entry*) noexcept { return 0; }
    static const char* subject(const natsio_kv_entry* entry) noexcept {
        return natsio_kv_entry_key(entry);
    }
};

/// The items of a key listing (KvKeyLister): keys.
template <>
struct FeedItem<char> {
    using Item = std::string;
    using View = std::string_view;
    // The key, copied into a std::string; the C string is freed.
    static std::string take(char* key) { return take_string(key); }
    // What a throwing callback is reported with: no subscription id; the key.
    static std::uint64_t sid(const char*) noexcept { return 0; }
    static const char* subject(const char* key) noexcept { return key; }
};

}  // namespace detail

/// A listing of a bucket's keys (KeyValue::list_keys), as nats.go's
/// KeyLister: a Feed of std::string, which the caller owns. The library
/// reads the keys on its threads from the moment list_keys returns (into a
/// buffer bounded by the client's pending limits: a full one pauses
/// reading, counted in stats().stalls); read them with next(timeout)
/// (std::nullopt at the end), next_async() (Future<std::optional<
/// std::string>>), range-for (`for (auto& key : kv.list_keys("a.*"))`), or
/// set_callback (each key as a std::string_view borrowed for the call, on a
/// library thread, then the end handler once). Each key that holds a value
/// comes once (deleted and purged keys are left out); the iteration ends
/// once every key stored when the listing started was delivered (at once
/// for an empty bucket), or after stop(). It fails with
/// BucketNotFoundError for a missing bucket, ApiError when the server
/// refuses the filters (overlapping patterns), ConnectionClosedError when
/// the client closes. Destroying it stops the listing. Thread-safe.
using KvKeyLister = Feed<detail::KvKeyListerFeed>;

namespace detail {
inline KvKeyLister from_c(natsio_kv_key_lister* lister, const SinkPtr& sink) noexcept {
    return KvKeyLister(lister, sink);
}
}  // namespace detail

/// A running watch of a bucket (KeyValue::watch): a Feed of KvEntry. It
/// delivers the current value of each watched key (or its history, or
/// nothing with updates_only), then one marker entry whose initial_done()
/// is true (operation KvOperation::InitialDone: empty key and value,
/// revision 0), then every change as it happens. From the moment watch()
/// returns, changes are pulled into its buffer on the library's threads
/// whether or not anyone reads; gaps, a lost consumer and reconnects are
/// healed by the library. The iteration ends after stop() (the server
/// consumer is deleted) and fails with BucketNotFoundError when the bucket
/// is deleted, ConnectionClosedError when the client closes.
using KvWatcher = Feed<detail::KvWatcherFeed>;

/// Receives each entry of a KvWatcher in push mode (the marker included).
using KvEntryHandler = KvWatcher::ItemHandler;

/// KeyValue::purge_deletes value: remove every delete and purge marker,
/// whatever its age (any negative duration does the same).
inline constexpr milliseconds all_markers{-1};

namespace detail {
// The Key-Value results as C++ values (see from_c in natsio.hpp).
inline KvEntry from_c(natsio_kv_entry* entry, const SinkPtr&) noexcept { return KvEntry(entry); }
inline KvEntryList from_c(natsio_kv_entry_list* list, const SinkPtr&) noexcept {
    return KvEntryList(list);
}
inline KvStatus from_c(natsio_kv_bucket_status* status, const SinkPtr&) {
    return take_kv_status(status);
}
inline std::vector<KvStatus> from_c(natsio_kv_bucket_status_list* list, const SinkPtr&) {
    return take_kv_status_list(list);
}
inline KvWatcher from_c(natsio_kv_watcher* watcher, const SinkPtr& sink) noexcept {
    return KvWatcher(watcher, sink);
}
}  // namespace detail

// ---------------------------------------------------------------------------
// Key-Value codecs
// ---------------------------------------------------------------------------

/// A codec step written in C++: takes the key or value, returns its other
/// form; throwing natsio::Error fails the step with the error's status,
/// anything else with InvalidArgumentError (the text is not kept).
using KvCodecFn = std::function<std::string(std::string_view)>;

namespace detail {
struct KvCodecFns {
    KvCodecFn encode, decode, encode_filter;
};

inline natsio_status kv_codec_step(const KvCodecFn& f, const char* in, std::size_t n,
                                   natsio_kv_codec_output* out) noexcept {
    try {
        std::string r = f(std::string_view(in, n));
        return natsio_kv_codec_output_set(out, r.data(), r.size());
    } catch (const Error& e) {
        return e.status();
    } catch (...) {
        return NATSIO_ERR_INVALID_ARGUMENT;
    }
}

inline void kv_codec_release(void* ud) noexcept { delete static_cast<KvCodecFns*>(ud); }
}  // namespace detail

/// A Key-Value key codec (natsio_kv_key_codec): turns the keys a program
/// uses into the keys stored and back. Built-ins run in the library; see
/// KeyValue::with_codecs. Copies share the codec.
class KeyCodec {
public:
    /// Each '.'-separated token in base64, nats.js's Base64KeyCodec form
    /// (standard alphabet, '=' padding); filters keep '*' and '>'.
    static KeyCodec base64() { return builtin(NATSIO_KV_KEY_CODEC_BASE64); }
    /// As base64 in orbit.go kvcodec's form (URL-safe, unpadded): every key
    /// a valid stored key. Both decode either form.
    static KeyCodec base64_url() { return builtin(NATSIO_KV_KEY_CODEC_BASE64_URL); }
    /// Path-style keys: "/a/b" stored as "_root_.a.b".
    static KeyCodec path() { return builtin(NATSIO_KV_KEY_CODEC_PATH); }
    /// Keys as given.
    static KeyCodec noop() { return builtin(NATSIO_KV_KEY_CODEC_NOOP); }
    /// `codecs` in order to encode, in reverse to decode. KvNoCodecsError
    /// for none.
    static KeyCodec chain(const std::vector<KeyCodec>& codecs) {
        std::vector<const natsio_kv_key_codec*> ptrs;
        for (const auto& c : codecs) ptrs.push_back(c.c_handle());
        natsio_kv_key_codec* out = nullptr;
        detail::check(natsio_kv_key_codec_chain(ptrs.data(), ptrs.size(), &out));
        return KeyCodec(out);
    }
    /// A codec of C++ functions (encode_filter may be empty: then a filter
    /// with wildcards fails with KvWildcardNotSupportedError). They are
    /// called on the thread calling a verb (encoding) and on library
    /// threads as entries arrive (decoding), possibly at the same time:
    /// keep them quick and thread-safe.
    static KeyCodec custom(KvCodecFn encode, KvCodecFn decode, KvCodecFn encode_filter = nullptr) {
        bool filterable = static_cast<bool>(encode_filter);
        auto* fns = new detail::KvCodecFns{std::move(encode), std::move(decode), std::move(encode_filter)};
        natsio_kv_key_codec* out = nullptr;
        natsio_status st = natsio_kv_key_codec_custom(
            [](void* ud, const char* in, std::size_t n, natsio_kv_codec_output* o) noexcept {
                return detail::kv_codec_step(static_cast<detail::KvCodecFns*>(ud)->encode, in, n, o);
            },
            [](void* ud, const char* in, std::size_t n, natsio_kv_codec_output* o) noexcept {
                return detail::kv_codec_step(static_cast<detail::KvCodecFns*>(ud)->decode, in, n, o);
            },
            filterable ? +[](void* ud, const char* in, std::size_t n, natsio_kv_codec_output* o) noexcept {
                return detail::kv_codec_step(static_cast<detail::KvCodecFns*>(ud)->encode_filter, in, n, o);
            } : static_cast<natsio_kv_codec_cb>(nullptr),
            fns, detail::kv_codec_release, &out);
        if (st != NATSIO_OK) delete fns;  // a failed registration never releases
        detail::check(st);
        return KeyCodec(out);
    }
    /// The stored form of `key` (KvKeyEncodeFailedError).
    std::string encode(std::string_view key) const { return step(key, natsio_kv_key_codec_encode); }
    /// The key of a stored key (KvKeyDecodeFailedError).
    std::string decode(std::string_view stored) const { return step(stored, natsio_kv_key_codec_decode); }
    /// The C handle (owned by this codec).
    natsio_kv_key_codec* c_handle() const noexcept { return c_.get(); }

private:
    explicit KeyCodec(natsio_kv_key_codec* c) : c_(c, natsio_kv_key_codec_free) {}
    static KeyCodec builtin(int32_t kind) {
        natsio_kv_key_codec* out = nullptr;
        detail::check(natsio_kv_key_codec_new(kind, &out));
        return KeyCodec(out);
    }
    std::string step(std::string_view in,
                     natsio_status (*f)(const natsio_kv_key_codec*, const char*, char**)) const {
        std::string key(in);
        char* out = nullptr;
        detail::check(f(c_.get(), key.c_str(), &out));
        std::string r(out);
        natsio_string_free(out);
        return r;
    }
    std::shared_ptr<natsio_kv_key_codec> c_;
};

/// A Key-Value value codec (natsio_kv_value_codec). Copies share the codec.
class ValueCodec {
public:
    /// Base64, URL-safe unpadded when writing, either form when reading.
    static ValueCodec base64() { return builtin(NATSIO_KV_VALUE_CODEC_BASE64); }
    /// Values as given.
    static ValueCodec noop() { return builtin(NATSIO_KV_VALUE_CODEC_NOOP); }
    /// The zlib format at `level` 0..9, or -1 for zlib's default
    /// (InvalidArgumentError otherwise).
    static ValueCodec zlib(int level = -1) {
        natsio_kv_value_codec* out = nullptr;
        detail::check(natsio_kv_value_codec_zlib(level, &out));
        return ValueCodec(out);
    }
    /// `codecs` in order to encode, in reverse to decode. KvNoCodecsError
    /// for none.
    static ValueCodec chain(const std::vector<ValueCodec>& codecs) {
        std::vector<const natsio_kv_value_codec*> ptrs;
        for (const auto& c : codecs) ptrs.push_back(c.c_handle());
        natsio_kv_value_codec* out = nullptr;
        detail::check(natsio_kv_value_codec_chain(ptrs.data(), ptrs.size(), &out));
        return ValueCodec(out);
    }
    /// A codec of C++ functions over bytes (in std::string), threads as
    /// KeyCodec::custom.
    static ValueCodec custom(KvCodecFn encode, KvCodecFn decode) {
        auto* fns = new detail::KvCodecFns{std::move(encode), std::move(decode), nullptr};
        natsio_kv_value_codec* out = nullptr;
        natsio_status st = natsio_kv_value_codec_custom(
            [](void* ud, const char* in, std::size_t n, natsio_kv_codec_output* o) noexcept {
                return detail::kv_codec_step(static_cast<detail::KvCodecFns*>(ud)->encode, in, n, o);
            },
            [](void* ud, const char* in, std::size_t n, natsio_kv_codec_output* o) noexcept {
                return detail::kv_codec_step(static_cast<detail::KvCodecFns*>(ud)->decode, in, n, o);
            },
            fns, detail::kv_codec_release, &out);
        if (st != NATSIO_OK) delete fns;
        detail::check(st);
        return ValueCodec(out);
    }
    /// The C handle (owned by this codec).
    natsio_kv_value_codec* c_handle() const noexcept { return c_.get(); }

private:
    explicit ValueCodec(natsio_kv_value_codec* c) : c_(c, natsio_kv_value_codec_free) {}
    static ValueCodec builtin(int32_t kind) {
        natsio_kv_value_codec* out = nullptr;
        detail::check(natsio_kv_value_codec_new(kind, &out));
        return ValueCodec(out);
    }
    std::shared_ptr<natsio_kv_value_codec> c_;
};

}  // namespace natsio

// detail::KvVerbs, the generated verb layer, needs the result types above.
#include <natsio/gen/kv_verbs.hpp>
namespace natsio {

/// A bound Key-Value bucket (natsio_kv_free on destruction; the bucket
/// itself stays): a move-only RAII owner from JetStream::key_value or
/// create_key_value. Every call has a blocking form, which waits up to the
/// context's timeout, and an `_async` form returning a Future with the
/// same result and errors (argument errors are thrown by the `_async`
/// call itself). It does not keep the client open
/// (ConnectionClosedError once it is closed); thread-safe.
class KeyValue : public detail::KvVerbs<KeyValue> {
public:
    /// No bucket: its calls throw InvalidArgumentError.
    KeyValue() noexcept = default;
    /// Takes ownership of a bucket handle from the C API; `sink` receives
    /// what watcher callbacks throw.
    explicit KeyValue(natsio_kv* kv, detail::SinkPtr sink = nullptr) noexcept
        : kv_(kv), sink_(std::move(sink)) {}
    /// Takes over the bucket handle of `other`, which is left without one.
    KeyValue(KeyValue&& other) noexcept
        : kv_(std::exchange(other.kv_, nullptr)), sink_(std::move(other.sink_)) {}
    /// Frees this handle and takes over the one of `other`.
    KeyValue& operator=(KeyValue&& other) noexcept {
        if (this != &other) {
            natsio_kv_free(kv_);
            kv_ = std::exchange(other.kv_, nullptr);
            sink_ = std::move(other.sink_);
        }
        return *this;
    }
    /// Not copyable: bind the bucket again for a second handle.
    KeyValue(const KeyValue&) = delete;
    /// Not copyable.
    KeyValue& operator=(const KeyValue&) = delete;
    /// Frees the handle (natsio_kv_free); the bucket itself stays.
    ~KeyValue() { natsio_kv_free(kv_); }

    /// The bucket's name ("" without a handle).
    std::string_view bucket() const noexcept { return detail::view_of(natsio_kv_bucket(kv_)); }

    /// The same bucket through codecs (natsio_kv_with_codecs): every verb
    /// of the returned handle encodes the keys, filters and values it is
    /// given and decodes what it returns; only the encoded key is
    /// validated. NULL leaves keys or values as they are.
    KeyValue with_codecs(const KeyCodec* key, const ValueCodec* value = nullptr) const {
        natsio_kv* out = nullptr;
        detail::check(natsio_kv_with_codecs(kv_, key ? key->c_handle() : nullptr,
                                            value ? value->c_handle() : nullptr, &out));
        return KeyValue(out, sink_);
    }

    /// Stores `value` under `key`; returns the new revision.
    /// InvalidKeyError, ApiError (e.g. larger than max_value_size).
    std::uint64_t put(std::string_view key, ByteView value) const {
        return raw_put(key, value, nullptr);
    }
    /// The future form of put: the new revision.
    Future<std::uint64_t> put_async(std::string_view key, ByteView value) const {
        return raw_put_async(key, value, nullptr);
    }

    /// As put, and the new revision expires `ttl` after it is stored
    /// (ADR-48 per-key TTL, a `Nats-TTL` header): whole seconds, at least
    /// 1, or natsio::ttl_never (never expires, even if the bucket has a
    /// ttl). When it expires the server removes it and writes a purge
    /// marker (watchers see it) that itself expires after the bucket's
    /// limit_marker_ttl. The bucket needs "limit_marker_ttl" in its config
    /// (KvStatus::limit_marker_ttl not zero); otherwise the server refuses
    /// the write (ApiError). Blocks until the stream acks; thread-safe.
    /// Returns the new revision. InvalidArgumentError (`ttl` negative
    /// other than ttl_never; zero is no TTL of its own; an embedded NUL),
    /// InvalidKeyError, ApiError, TimeoutError, ConnectionClosedError.
    std::uint64_t put(std::string_view key, ByteView value, std::chrono::seconds ttl) const {
        const natsio_kv_write_options opts = write_options(ttl);
        return raw_put(key, value, &opts);
    }
    /// The future form of put with a TTL: the new revision (argument
    /// errors, `ttl` included, are thrown at once).
    Future<std::uint64_t> put_async(std::string_view key, ByteView value,
                                    std::chrono::seconds ttl) const {
        const natsio_kv_write_options opts = write_options(ttl);
        return raw_put_async(key, value, &opts);
    }

    /// Stores `value` only if `key` has no live value (a deleted or purged
    /// key can be created again); KeyExistsError otherwise.
    std::uint64_t create(std::string_view key, ByteView value) const {
        return raw_create(key, value, nullptr);
    }
    /// The future form of create: the new revision.
    Future<std::uint64_t> create_async(std::string_view key, ByteView value) const {
        return raw_create_async(key, value, nullptr);
    }

    /// As create, and the new revision expires `ttl` after it is stored
    /// (ADR-48 per-key TTL, a `Nats-TTL` header): whole seconds, at least
    /// 1, or natsio::ttl_never (never expires, even if the bucket has a
    /// ttl). When it expires the server removes it and writes a purge
    /// marker (watchers see it) that itself expires after the bucket's
    /// limit_marker_ttl. The bucket needs "limit_marker_ttl" in its config
    /// (KvStatus::limit_marker_ttl not zero); otherwise the server refuses
    /// the write (ApiError). Blocks until the stream acks; thread-safe.
    /// Returns the new revision. KeyExistsError, InvalidArgumentError
    /// (`ttl` negative other than ttl_never; zero is no TTL of its own; an embedded NUL),
    /// InvalidKeyError, ApiError, TimeoutError, ConnectionClosedError.
    std::uint64_t create(std::string_view key, ByteView value, std::chrono::seconds ttl) const {
        const natsio_kv_write_options opts = write_options(ttl);
        return raw_create(key, value, &opts);
    }
    /// The future form of create with a TTL: the new revision (argument
    /// errors, `ttl` included, are thrown at once).
    Future<std::uint64_t> create_async(std::string_view key, ByteView value,
                                       std::chrono::seconds ttl) const {
        const natsio_kv_write_options opts = write_options(ttl);
        return raw_create_async(key, value, &opts);
    }

    /// Compare and set: stores `value` only if `key`'s latest revision is
    /// `last`; WrongLastSequenceError otherwise.
    std::uint64_t update(std::string_view key, ByteView value, std::uint64_t last) const {
        return raw_update(key, value, last);
    }
    /// The future form of update: the new revision.
    Future<std::uint64_t> update_async(std::string_view key, ByteView value,
                                       std::uint64_t last) const {
        return raw_update_async(key, value, last);
    }

    /// The latest value of `key`. KeyNotFoundError, or KeyDeletedError (a
    /// KeyNotFoundError) when its latest revision is a delete/purge marker.
    KvEntry get(std::string_view key) const {
        detail::CString c_key(key, "key");
        natsio_kv_entry* entry = nullptr;
        detail::check(natsio_kv_get(kv_, c_key.get(), &entry));
        return KvEntry(entry);
    }
    /// The future form of get.
    Future<KvEntry> get_async(std::string_view key) const { return raw_get_async(key); }

    /// Like get, but std::nullopt when the key has no live value.
    std::optional<KvEntry> try_get(std::string_view key) const {
        detail::CString c_key(key, "key");
        natsio_kv_entry* entry = nullptr;
        Status status = natsio_kv_get(kv_, c_key.get(), &entry);
        if (status == NATSIO_ERR_KEY_NOT_FOUND || status == NATSIO_ERR_KEY_DELETED) {
            return std::nullopt;
        }
        detail::check(status);
        return KvEntry(entry);
    }

    /// Revision `revision` of `key`; KeyNotFoundError when that revision
    /// belongs to another key or is gone.
    KvEntry get_revision(std::string_view key, std::uint64_t revision) const {
        return raw_get_revision(key, revision);
    }
    /// The future form of get_revision.
    Future<KvEntry> get_revision_async(std::string_view key, std::uint64_t revision) const {
        return raw_get_revision_async(key, revision);
    }

    /// Deletes `key` by writing a delete marker (history is kept); returns
    /// the marker's revision. With `last`, only if the key's latest
    /// revision is `*last` (WrongLastSequenceError otherwise).
    std::uint64_t del(std::string_view key,
                      std::optional<std::uint64_t> last = std::nullopt) const {
        return raw_delete(key, last);
    }
    /// The future form of del: the marker's revision.
    Future<std::uint64_t> del_async(std::string_view key,
                                    std::optional<std::uint64_t> last = std::nullopt) const {
        return raw_delete_async(key, last);
    }

    /// Purges `key`: a purge marker replaces all its earlier revisions;
    /// returns its revision. `last` as for del.
    std::uint64_t purge(std::string_view key,
                        std::optional<std::uint64_t> last = std::nullopt) const {
        return raw_purge(key, last, nullptr);
    }
    /// The future form of purge: the marker's revision.
    Future<std::uint64_t> purge_async(std::string_view key,
                                      std::optional<std::uint64_t> last = std::nullopt) const {
        return raw_purge_async(key, last, nullptr);
    }

    /// As purge, and the purge marker itself expires `ttl` after it is
    /// stored (ADR-48, a `Nats-TTL` header): then the key leaves no trace
    /// (get throws KeyDeletedError until it expires, KeyNotFoundError
    /// after; watchers saw the purge). `ttl`: whole seconds, at least 1, or
    /// natsio::ttl_never. The bucket needs "limit_marker_ttl" in its config
    /// (otherwise ApiError). `last` as for del. Returns the marker's
    /// revision. Blocks until the stream acks; thread-safe.
    /// InvalidArgumentError (`ttl` negative other than ttl_never (zero: no TTL),
    /// an embedded NUL), WrongLastSequenceError, InvalidKeyError, ApiError,
    /// TimeoutError, ConnectionClosedError.
    std::uint64_t purge(std::string_view key, std::chrono::seconds ttl,
                        std::optional<std::uint64_t> last = std::nullopt) const {
        const natsio_kv_write_options opts = write_options(ttl);
        return raw_purge(key, last, &opts);
    }
    /// The future form of purge with a TTL: the marker's revision
    /// (argument errors, `ttl` included, are thrown at once).
    Future<std::uint64_t> purge_async(std::string_view key, std::chrono::seconds ttl,
                                      std::optional<std::uint64_t> last = std::nullopt) const {
        const natsio_kv_write_options opts = write_options(ttl);
        return raw_purge_async(key, last, &opts);
    }

    /// Removes delete and purge markers (as nats.go's PurgeDeletes): every
    /// key whose latest revision is a marker is purged on the server. A
    /// marker older than `older_than` goes too, with every earlier revision
    /// (the key leaves no trace); a younger one stays and only the key's
    /// earlier revisions go (readers and watchers still learn of the
    /// delete). `older_than` zero (the default) means 30 minutes;
    /// natsio::all_markers (any negative duration) removes every marker
    /// whatever its age. Keys whose latest revision is a value are not
    /// touched. Returns how many messages the server removed in all
    /// (markers and earlier revisions). Reads the bucket through a
    /// short-lived consumer, then sends one purge per marker; blocks until
    /// all are done (a failure stops at that key: the markers before it
    /// are already gone). Thread-safe. BucketNotFoundError, TimeoutError,
    /// ConnectionClosedError, InvalidArgumentError (no handle).
    std::uint64_t purge_deletes(milliseconds older_than = milliseconds{0}) const {
        return raw_purge_deletes(detail::to_ms(older_than));
    }
    /// The future form of purge_deletes: how many messages were removed.
    Future<std::uint64_t> purge_deletes_async(milliseconds older_than = milliseconds{0}) const {
        return raw_purge_deletes_async(detail::to_ms(older_than));
    }

    /// The keys that hold a value now (deleted and purged keys are left
    /// out). Reads the bucket through a short-lived consumer.
    std::vector<std::string> keys() const { return raw_keys(); }
    /// The future form of keys.
    Future<std::vector<std::string>> keys_async() const { return raw_keys_async(); }

    /// The keys matching `filter` (key tokens, `*` as a whole token, `>` as
    /// the last one, as for watch; ">" is every key) that hold a value now,
    /// as nats.go's ListKeysFiltered. InvalidKeyError for a bad filter;
    /// otherwise errors as keys().
    std::vector<std::string> keys(std::string_view filter) const {
        const std::string_view one[] = {filter};
        return raw_keys_filtered(
            detail::CStringArray(std::begin(one), std::end(one), "key filter"));
    }
    /// The keys matching any of `filters` (a std::vector, std::array, ...
    /// of strings or string views; every key when there are none), read
    /// through one consumer. Filters that overlap (other than repeats, which
    /// count once), such as "a.*" and "a.>", are refused by the server
    /// (ApiError).
    template <class Filters, class = detail::enable_if_pattern_range<Filters>>
    std::vector<std::string> keys(const Filters& filters) const {
        using std::begin;
        using std::end;
        return raw_keys_filtered(detail::CStringArray(begin(filters), end(filters), "key filter"));
    }
    /// `kv.keys({"a.*", "b.>"})`: as the range overload.
    std::vector<std::string> keys(std::initializer_list<std::string_view> filters) const {
        return raw_keys_filtered(
            detail::CStringArray(filters.begin(), filters.end(), "key filter"));
    }
    /// The future form of keys(filter).
    Future<std::vector<std::string>> keys_async(std::string_view filter) const {
        const std::string_view one[] = {filter};
        return raw_keys_filtered_async(
            detail::CStringArray(std::begin(one), std::end(one), "key filter"));
    }
    /// The future form of keys(filters).
    template <class Filters, class = detail::enable_if_pattern_range<Filters>>
    Future<std::vector<std::string>> keys_async(const Filters& filters) const {
        using std::begin;
        using std::end;
        return raw_keys_filtered_async(
            detail::CStringArray(begin(filters), end(filters), "key filter"));
    }
    /// The future form of `keys({"a.*", "b.>"})`.
    Future<std::vector<std::string>> keys_async(
        std::initializer_list<std::string_view> filters) const {
        return raw_keys_filtered_async(
            detail::CStringArray(filters.begin(), filters.end(), "key filter"));
    }

    /// Lists every key that holds a value as a KvKeyLister (a Feed of
    /// std::string), as nats.go's ListKeys: the keys come as they are read,
    /// without the whole set in memory. Returns at once; how the listing
    /// ends comes through the iterator (BucketNotFoundError, ...).
    /// ConnectionClosedError.
    KvKeyLister list_keys() const {
        return list_keys_of(detail::CStringArray(nullptr_range(), nullptr_range(), "key filter"));
    }
    /// Lists the keys matching `filter` (as keys(filter)) as a KvKeyLister.
    /// InvalidKeyError for a bad filter, at once.
    KvKeyLister list_keys(std::string_view filter) const {
        const std::string_view one[] = {filter};
        return list_keys_of(detail::CStringArray(std::begin(one), std::end(one), "key filter"));
    }
    /// Lists the keys matching any of `filters` (every key when there are
    /// none) as a KvKeyLister, as nats.go's ListKeysFiltered.
    template <class Filters, class = detail::enable_if_pattern_range<Filters>>
    KvKeyLister list_keys(const Filters& filters) const {
        using std::begin;
        using std::end;
        return list_keys_of(detail::CStringArray(begin(filters), end(filters), "key filter"));
    }
    /// `kv.list_keys({"a.*", "b.>"})`: as the range overload.
    KvKeyLister list_keys(std::initializer_list<std::string_view> filters) const {
        return list_keys_of(detail::CStringArray(filters.begin(), filters.end(), "key filter"));
    }

    /// Every kept revision of `key`, oldest first, delete and purge markers
    /// included (each entry's delta() counts the newer ones).
    /// KeyNotFoundError when there is none, InvalidKeyError. The entries
    /// are views into the returned list.
    KvEntryList history(std::string_view key) const { return raw_history(key); }
    /// The future form of history.
    Future<KvEntryList> history_async(std::string_view key) const { return raw_history_async(key); }

    /// Watches every key of the bucket: see KvWatcher. Errors as put.
    KvWatcher watch(const KvWatchOptions& options = {}) const {
        return watch_list(detail::CStringArray(nullptr_range(), nullptr_range(), "key pattern"),
                          options);
    }
    /// Watches the keys matching `pattern` (key tokens, `*` as a whole
    /// token, `>` as the last one; ">" is every key). InvalidKeyError for a
    /// bad pattern; otherwise errors as put.
    KvWatcher watch(std::string_view pattern, const KvWatchOptions& options = {}) const {
        const std::string_view one[] = {pattern};
        return watch_list(detail::CStringArray(std::begin(one), std::end(one), "key pattern"),
                          options);
    }
    /// Watches the keys matching any of `patterns` (a std::vector,
    /// std::array, ... of strings or string views; every key when there
    /// are none).
    template <class Patterns, class = detail::enable_if_pattern_range<Patterns>>
    KvWatcher watch(const Patterns& patterns, const KvWatchOptions& options = {}) const {
        using std::begin;
        using std::end;
        return watch_list(detail::CStringArray(begin(patterns), end(patterns), "key pattern"),
                          options);
    }
    /// `kv.watch({"a.*", "b.>"})`: as the range overload.
    KvWatcher watch(std::initializer_list<std::string_view> patterns,
                    const KvWatchOptions& options = {}) const {
        return watch_list(detail::CStringArray(patterns.begin(), patterns.end(), "key pattern"),
                          options);
    }

    /// The future forms of watch: the KvWatcher once its first consumer
    /// exists (it can be taken once).
    Future<KvWatcher> watch_async(const KvWatchOptions& options = {}) const {
        return watch_list_async(
            detail::CStringArray(nullptr_range(), nullptr_range(), "key pattern"), options);
    }
    /// The future form of watch(pattern, options).
    Future<KvWatcher> watch_async(std::string_view pattern,
                                  const KvWatchOptions& options = {}) const {
        const std::string_view one[] = {pattern};
        return watch_list_async(
            detail::CStringArray(std::begin(one), std::end(one), "key pattern"), options);
    }
    /// The future form of watch(patterns, options) for a range of patterns.
    template <class Patterns, class = detail::enable_if_pattern_range<Patterns>>
    Future<KvWatcher> watch_async(const Patterns& patterns,
                                  const KvWatchOptions& options = {}) const {
        using std::begin;
        using std::end;
        return watch_list_async(
            detail::CStringArray(begin(patterns), end(patterns), "key pattern"), options);
    }
    /// The future form of `watch({"a.*", "b.>"}, options)`.
    Future<KvWatcher> watch_async(std::initializer_list<std::string_view> patterns,
                                  const KvWatchOptions& options = {}) const {
        return watch_list_async(
            detail::CStringArray(patterns.begin(), patterns.end(), "key pattern"), options);
    }

    /// The bucket's status: its backing stream's StreamInfo JSON (config
    /// with history as max_msgs_per_subject, ttl as max_age; state with the
    /// values as messages and bytes). BucketNotFoundError; otherwise errors
    /// as put.
    std::string status() const { return raw_status(); }
    /// The future form of status.
    Future<std::string> status_async() const { return raw_status_async(); }

    /// The bucket's typed status (a copy the caller owns), read from its
    /// stream's info in one request; status() gives the same as JSON.
    /// Blocks up to the context's timeout; thread-safe.
    /// BucketNotFoundError, TimeoutError, ConnectionClosedError,
    /// InvalidArgumentError (no handle).
    KvStatus get_status() const { return raw_get_status(); }
    /// The future form of get_status: the KvStatus.
    Future<KvStatus> get_status_async() const { return raw_get_status_async(); }

    /// True when this object holds a bucket handle.
    explicit operator bool() const noexcept { return kv_ != nullptr; }
    /// The C bucket handle (null for none), still owned by this object.
    natsio_kv* c_kv() const noexcept { return kv_; }
    /// Gives up ownership of the handle (free it with natsio_kv_free).
    natsio_kv* release() noexcept { return std::exchange(kv_, nullptr); }

private:
    friend class detail::KvVerbs<KeyValue>;
    natsio_kv* c_handle() const noexcept { return kv_; }
    const detail::SinkPtr& sink() const noexcept { return sink_; }

    static const std::string_view* nullptr_range() noexcept { return nullptr; }

    /// A write's options with `ttl` as the C `ttl_s` (the library judges
    /// the value).
    static natsio_kv_write_options write_options(std::chrono::seconds ttl) {
        natsio_kv_write_options opts{};
        detail::check(natsio_kv_write_options_init(&opts));
        opts.ttl_s = static_cast<std::int64_t>(ttl.count());
        return opts;
    }

    static natsio_kv_watch_options to_c(const KvWatchOptions& options) {
        natsio_kv_watch_options c_options{};
        detail::check(natsio_kv_watch_options_init(&c_options));
        c_options.include_history = options.include_history;
        c_options.ignore_deletes = options.ignore_deletes;
        c_options.meta_only = options.meta_only;
        c_options.updates_only = options.updates_only;
        c_options.resume_from_revision = options.resume_from_revision;
        return c_options;
    }

    KvKeyLister list_keys_of(const detail::CStringArray& filters) const {
        return raw_list_keys(filters);
    }

    KvWatcher watch_list(const detail::CStringArray& patterns,
                         const KvWatchOptions& options) const {
        natsio_kv_watch_options c_options = to_c(options);
        return raw_watch(patterns, &c_options);
    }

    Future<KvWatcher> watch_list_async(const detail::CStringArray& patterns,
                                       const KvWatchOptions& options) const {
        natsio_kv_watch_options c_options = to_c(options);
        return raw_watch_async(patterns, &c_options);
    }

    natsio_kv* kv_ = nullptr;
    detail::SinkPtr sink_;
};

namespace detail {
inline KeyValue from_c(natsio_kv* kv, const SinkPtr& sink) noexcept { return KeyValue(kv, sink); }
}  // namespace detail

// ---------------------------------------------------------------------------
// JetStream
// ---------------------------------------------------------------------------

class ObjectStore;
struct ObjectStoreStatus;

}  // namespace natsio
// detail::JsVerbs, the generated verb layer of natsio_js (its Object Store
// results are defined in object.hpp).
#include <natsio/gen/js_verbs.hpp>
namespace natsio {

/// An owned JetStream context (natsio_js_free on destruction; pending
/// asynchronous publishes go on and their futures stay valid): a
/// move-only RAII owner. Every call has a blocking form, which waits up to
/// the context's timeout unless it says otherwise, and an `_async` form
/// returning a Future with the same result and errors (argument errors
/// are thrown by the `_async` call itself). It does not keep its Client
/// open (ConnectionClosedError once the client is closed); thread-safe.
class JetStream : private detail::JsVerbs<JetStream> {
public:
    /// No context: its calls throw InvalidArgumentError.
    JetStream() noexcept = default;
    /// A context over `client` (sends nothing). ConfigError for a bad
    /// domain or prefix, InvalidArgumentError for a negative setting.
    explicit JetStream(const Client& client, const JetStreamOptions& options = {})
        : sink_(client.sink_) {
        detail::OptionalCString c_domain(options.domain, "domain");
        detail::OptionalCString c_prefix(options.api_prefix, "api_prefix");
        natsio_js_options c_options{};
        detail::check(natsio_js_options_init(&c_options));
        c_options.domain = c_domain.get();
        c_options.api_prefix = c_prefix.get();
        c_options.timeout_ms = detail::to_ms(options.timeout);
        c_options.publish_async_max_pending = options.publish_async_max_pending;
        c_options.publish_async_stall_wait_ms = detail::to_ms(options.publish_async_stall_wait);
        c_options.publish_async_timeout_ms = detail::to_ms(options.publish_async_timeout);
        detail::check(natsio_client_jetstream(client.c_client(), &c_options, &js_));
    }
    /// Takes ownership of a context from the C API.
    explicit JetStream(natsio_js* js, detail::SinkPtr sink = nullptr) noexcept
        : js_(js), sink_(std::move(sink)) {}
    /// Takes over the context of `other`, which is left without one.
    JetStream(JetStream&& other) noexcept
        : js_(std::exchange(other.js_, nullptr)), sink_(std::move(other.sink_)) {}
    /// Frees this context and takes over the one of `other`.
    JetStream& operator=(JetStream&& other) noexcept {
        if (this != &other) {
            natsio_js_free(js_);
            js_ = std::exchange(other.js_, nullptr);
            sink_ = std::move(other.sink_);
        }
        return *this;
    }
    /// Not copyable: create a second context from the Client instead.
    JetStream(const JetStream&) = delete;
    /// Not copyable.
    JetStream& operator=(const JetStream&) = delete;
    /// Frees the context (natsio_js_free); pending asynchronous publishes
    /// go on and their Futures stay valid.
    ~JetStream() { natsio_js_free(js_); }

    // Publishing -------------------------------------------------------------

    /// Publishes and waits for the stream's ack ("no responders" is retried
    /// twice, 250 ms apart, unless PublishOptions::retry_attempts and
    /// retry_wait say otherwise). NoStreamResponseError (no stream holds the
    /// subject), WrongLastSequenceError, ApiError (other rejections, e.g. a
    /// wrong expected stream), TimeoutError, ConnectionClosedError.
    PubAck publish(std::string_view subject, ByteView data = {},
                   const PublishOptions& options = {}) const {
        detail::CPublishOptions c_options(options);
        return raw_publish(subject, data, &c_options.c);
    }

    /// Publishes without waiting: the Future completes with the PubAck or
    /// the publish's error (NoStreamResponseError, AsyncPublishTimeoutError,
    /// WrongLastSequenceError, ApiError, ...). Throws TooManyStalledMsgsError
    /// (nothing sent) when the pending window stayed full for the stall wait,
    /// and argument errors at once (InvalidArgumentError for a negative
    /// PublishOptions::retry_attempts or retry_wait). "No responders" is
    /// retried as by publish.
    Future<PubAck> publish_async(std::string_view subject, ByteView data = {},
                                 const PublishOptions& options = {}) const {
        detail::CString c_subject(subject, "subject");
        detail::CPublishOptions c_options(options);
        return detail::start_async<PubAck>(sink_, natsio_js_publish_async, js_, c_subject.get(),
                                           data.data(), data.size(),
                                           static_cast<const natsio_js_publish_options*>(
                                               &c_options.c));
    }

    /// Waits up to `timeout` (default: the context's timeout) until every
    /// asynchronous publish of this context completed (acked or failed);
    /// TimeoutError when some are still pending.
    void publish_async_complete(milliseconds timeout = default_timeout) const {
        raw_publish_async_complete(detail::to_ms(timeout));
    }
    /// The future form of publish_async_complete.
    Future<void> publish_async_complete_async(milliseconds timeout = default_timeout) const {
        return raw_publish_async_complete_async(detail::to_ms(timeout));
    }

    /// How many asynchronous publishes await their ack.
    std::size_t publish_async_pending() const noexcept {
        return natsio_js_publish_async_pending(js_);
    }

    // Account and streams ------------------------------------------------------

    /// The account's JetStream usage and limits, as JSON.
    /// JetStreamNotEnabledError when the account or the server has no
    /// JetStream (other calls report a server without it as
    /// NoRespondersError).
    std::string account_info() const { return raw_account_info(); }
    /// The future form of account_info.
    Future<std::string> account_info_async() const { return raw_account_info_async(); }

    /// The JetStream API level the server implements (2.11 reports 1, 2.12
    /// reports 2, ...; 0 for a server too old to report one), read from
    /// the account info. Blocks up to the context's timeout; thread-safe.
    /// JetStreamNotEnabledError, TimeoutError, ConnectionClosedError,
    /// InvalidArgumentError (no context).
    std::uint64_t api_level() const { return raw_api_level(); }
    /// The future form of api_level: the level, or api_level's errors
    /// through the future (InvalidArgumentError for no context is thrown
    /// at once).
    Future<std::uint64_t> api_level_async() const { return raw_api_level_async(); }

    /// Creates, updates or creates-or-updates (per `action`) a stream from
    /// a StreamConfig JSON object ("name" required); returns its StreamInfo
    /// JSON. Create of a stream with the same configuration succeeds.
    /// ConfigError (the text names the field), InvalidArgumentError (bad
    /// name), StreamNameInUseError (exists with another configuration),
    /// StreamNotFoundError (Update of a missing stream), ApiError (other
    /// server rejections).
    std::string create_stream(std::string_view config_json,
                              CreateAction action = CreateAction::Create) const {
        return raw_stream_create(config_json, action_of(action));
    }
    /// The future form of create_stream: the StreamInfo JSON.
    Future<std::string> create_stream_async(std::string_view config_json,
                                            CreateAction action = CreateAction::Create) const {
        return raw_stream_create_async(config_json, action_of(action));
    }

    /// The StreamInfo JSON of stream `name`. StreamNotFoundError.
    std::string stream_info(std::string_view name) const { return raw_stream_info(name, nullptr); }
    /// The future form of stream_info.
    Future<std::string> stream_info_async(std::string_view name) const {
        return raw_stream_info_async(name, nullptr);
    }

    /// The StreamInfo JSON of stream `name`, as stream_info returns it, with
    /// "state"."subjects": an object mapping each stored subject matching
    /// `subjects_filter` (wildcards allowed, e.g. "orders.>") to its message
    /// count (an object with no entries, or no "subjects" at all, when none
    /// match). Large maps come from the server in pages; all are merged into
    /// the one text. Blocks up to the context's timeout (per page);
    /// thread-safe. StreamNotFoundError, BadSubjectError (bad filter),
    /// InvalidArgumentError (bad name, embedded NUL), TimeoutError,
    /// ConnectionClosedError.
    std::string stream_info_with_subjects(std::string_view name,
                                          std::string_view subjects_filter) const {
        detail::CString c_filter(subjects_filter, "subjects filter");
        natsio_stream_info_options c_options = subjects_options(c_filter.get());
        return raw_stream_info(name, &c_options);
    }
    /// The future form of stream_info_with_subjects: the StreamInfo JSON
    /// (argument errors are thrown at once, the others come through the
    /// future).
    Future<std::string> stream_info_with_subjects_async(std::string_view name,
                                                        std::string_view subjects_filter) const {
        detail::CString c_filter(subjects_filter, "subjects filter");
        natsio_stream_info_options c_options = subjects_options(c_filter.get());
        return raw_stream_info_async(name, &c_options);
    }
    /// natsio_js_stream_info's options asking for the subjects matching
    /// `filter` (borrowed: keep it alive for the call).
    static natsio_stream_info_options subjects_options(const char* filter) {
        natsio_stream_info_options c_options;
        natsio_stream_info_options_init(&c_options);
        c_options.subjects_filter = filter;
        return c_options;
    }

    /// The StreamInfo JSON of every stream, or of those holding `subject`
    /// (wildcards allowed), one JSON text (as stream_info returns it) per
    /// stream; empty when there is none. Pages through the server's stream
    /// list as needed, each page waiting up to the context's timeout;
    /// thread-safe. BadSubjectError, InvalidArgumentError (embedded NUL),
    /// JetStreamNotEnabledError (the account has no JetStream),
    /// NoRespondersError (nobody answered: no JetStream on the server),
    /// TimeoutError, ConnectionClosedError.
    std::vector<std::string> stream_infos(
        std::optional<std::string_view> subject = std::nullopt) const {
        return raw_stream_infos(subject);
    }
    /// The future form of stream_infos: one StreamInfo JSON per stream
    /// (argument errors are thrown at once, the others come through the
    /// future).
    Future<std::vector<std::string>> stream_infos_async(
        std::optional<std::string_view> subject = std::nullopt) const {
        return raw_stream_infos_async(subject);
    }

    /// Deletes stream `name` and its messages. StreamNotFoundError.
    void delete_stream(std::string_view name) const { raw_stream_delete(name); }
    /// The future form of delete_stream.
    Future<void> delete_stream_async(std::string_view name) const {
        return raw_stream_delete_async(name);
    }

    /// Purges stream `name`: every message, or as `options_json` says
    /// ({"filter": subject, "seq": below this sequence, "keep": newest to
    /// keep}). Returns how many messages were removed. ConfigError.
    std::uint64_t purge_stream(std::string_view name,
                               std::optional<std::string_view> options_json = std::nullopt) const {
        return raw_stream_purge(name, options_json);
    }
    /// The future form of purge_stream: how many messages were removed.
    Future<std::uint64_t> purge_stream_async(
        std::string_view name, std::optional<std::string_view> options_json = std::nullopt) const {
        return raw_stream_purge_async(name, options_json);
    }

    /// The names of all streams, or of those holding `subject`.
    std::vector<std::string> stream_names(
        std::optional<std::string_view> subject = std::nullopt) const {
        return raw_stream_names(subject);
    }
    /// The future form of stream_names.
    Future<std::vector<std::string>> stream_names_async(
        std::optional<std::string_view> subject = std::nullopt) const {
        return raw_stream_names_async(subject);
    }

    /// Message `seq` of `stream`, read with Direct Get when the stream has
    /// allow_direct, else from the stream's leader (the context reads each
    /// stream's config once to know). MessageNotFoundError (also for a
    /// stream deleted since, when a Direct Get gets no answer),
    /// StreamNotFoundError.
    StoredMsg get_msg(std::string_view stream, std::uint64_t seq) const {
        return raw_stream_get_msg(stream, seq, std::nullopt);
    }
    /// The future form of get_msg.
    Future<StoredMsg> get_msg_async(std::string_view stream, std::uint64_t seq) const {
        return raw_stream_get_msg_async(stream, seq, std::nullopt);
    }

    /// The last message of `stream` on `subject`, or on any subject it
    /// matches when it has wildcards (such as "s.*" or "s.>"). MessageNotFoundError,
    /// StreamNotFoundError, BadSubjectError.
    StoredMsg get_last_msg(std::string_view stream, std::string_view subject) const {
        return raw_stream_get_msg(stream, 0, subject);
    }
    /// The future form of get_last_msg.
    Future<StoredMsg> get_last_msg_async(std::string_view stream,
                                         std::string_view subject) const {
        return raw_stream_get_msg_async(stream, 0, subject);
    }

    /// The first message of `stream` at or after sequence `seq` whose
    /// subject matches `subject` (wildcards allowed), as a StoredMsg the
    /// caller owns. To walk one subject's messages, start at 1 and
    /// pass the last message's seq() + 1 until MessageNotFoundError. Read
    /// as get_msg reads (Direct Get when the stream has allow_direct).
    /// Blocks up to the context's timeout; thread-safe.
    /// MessageNotFoundError (none at or after `seq`; also when the stream
    /// is gone and a Direct Get got no answer), StreamNotFoundError,
    /// BadSubjectError, InvalidArgumentError (bad name, embedded NUL),
    /// TimeoutError, ConnectionClosedError.
    StoredMsg get_next_msg(std::string_view stream, std::uint64_t seq,
                           std::string_view subject) const {
        return raw_stream_get_next_msg(stream, seq, subject);
    }
    /// The future form of get_next_msg: the message, or get_next_msg's
    /// errors through the future (argument errors are thrown at once).
    Future<StoredMsg> get_next_msg_async(std::string_view stream, std::uint64_t seq,
                                         std::string_view subject) const {
        return raw_stream_get_next_msg_async(stream, seq, subject);
    }

    /// The last message of every subject of `stream` that matches one of
    /// `subjects` (filters, wildcards allowed; a std::vector, std::array,
    /// ... of strings or string views, at least one), in stream order, read
    /// with one batch Direct Get (ADR-31: the stream needs allow_direct,
    /// the server 2.11+); `options` caps how many and reads them as of a
    /// sequence or a time instead of now. Returns a StoredMsgs iterator the
    /// caller owns (see StoredMsgs); the messages are gathered on the
    /// library's threads from now on. Does not block; thread-safe. Throws
    /// at once: InvalidArgumentError (no subjects, a bad stream name, an
    /// embedded NUL, both up_to_seq and up_to_time, up_to_seq 0 or
    /// up_to_time at the epoch, no context), BadSubjectError (a malformed
    /// filter), ConnectionClosedError. How the read ends comes through the
    /// iterator: NoRespondersError (no such stream, or no allow_direct),
    /// ApiError, TimeoutError, ConnectionClosedError.
    template <class Subjects, class = detail::enable_if_pattern_range<Subjects>>
    StoredMsgs get_last_msgs_for(std::string_view stream, const Subjects& subjects,
                                 const LastMsgsOptions& options = {}) const {
        using std::begin;
        using std::end;
        return last_msgs_for(
            stream, detail::CStringArray(begin(subjects), end(subjects), "subject"), options);
    }
    /// `js.get_last_msgs_for(stream, {"a.*", "b.>"})`: as the range overload.
    StoredMsgs get_last_msgs_for(std::string_view stream,
                                 std::initializer_list<std::string_view> subjects,
                                 const LastMsgsOptions& options = {}) const {
        return last_msgs_for(
            stream, detail::CStringArray(subjects.begin(), subjects.end(), "subject"), options);
    }
    /// The last message of every subject matching the one filter `subject`
    /// (e.g. "orders.*"): as the range overload.
    StoredMsgs get_last_msgs_for(std::string_view stream, std::string_view subject,
                                 const LastMsgsOptions& options = {}) const {
        const std::string_view one[] = {subject};
        return last_msgs_for(
            stream, detail::CStringArray(std::begin(one), std::end(one), "subject"), options);
    }

    /// Deletes message `seq` of `stream`. By default (`erase` true, as in
    /// the reference client and nats.js) the server also overwrites its
    /// bytes on disk (a secure erase); `erase` false only marks it deleted
    /// (the request carries "no_erase": true, nats.go's DeleteMsg).
    /// MessageNotFoundError.
    void delete_msg(std::string_view stream, std::uint64_t seq, bool erase = true) const {
        raw_stream_delete_msg(stream, seq, erase);
    }
    /// The future form of delete_msg (erases by default, as delete_msg).
    Future<void> delete_msg_async(std::string_view stream, std::uint64_t seq,
                                  bool erase = true) const {
        return raw_stream_delete_msg_async(stream, seq, erase);
    }

    // Pull consumers -----------------------------------------------------------

    /// Creates, updates or creates-or-updates (per `action`) a pull consumer
    /// on `stream` from a ConsumerConfig JSON object ("durable_name" or
    /// "name", "filter_subject(s)", "deliver_policy", "ack_policy",
    /// "ack_wait", "max_deliver", "inactive_threshold", ...); returns its
    /// ConsumerInfo JSON, whose "name" is the consumer's name (generated
    /// when the config has none: an ephemeral consumer, give it an
    /// "inactive_threshold"; Update needs the name). Create with the same
    /// configuration succeeds. ConfigError (the text names the field),
    /// InvalidArgumentError (bad name), StreamNotFoundError,
    /// ConsumerNotFoundError (Update of a missing consumer), ApiError (e.g.
    /// exists with another configuration).
    std::string create_consumer(std::string_view stream, std::string_view config_json,
                                CreateAction action = CreateAction::Create) const {
        return raw_consumer_create(stream, config_json, action_of(action));
    }
    /// The future form of create_consumer: the ConsumerInfo JSON.
    Future<std::string> create_consumer_async(std::string_view stream,
                                              std::string_view config_json,
                                              CreateAction action = CreateAction::Create) const {
        return raw_consumer_create_async(stream, config_json, action_of(action));
    }

    /// The ConsumerInfo JSON of `consumer` on `stream` (config, delivered,
    /// ack_floor, num_pending, num_ack_pending, num_waiting, ...).
    /// ConsumerNotFoundError, StreamNotFoundError.
    std::string consumer_info(std::string_view stream, std::string_view consumer) const {
        return raw_consumer_info(stream, consumer);
    }
    /// The future form of consumer_info.
    Future<std::string> consumer_info_async(std::string_view stream,
                                            std::string_view consumer) const {
        return raw_consumer_info_async(stream, consumer);
    }

    /// Deletes `consumer` of `stream`; a fetch waiting on it throws
    /// ConsumerDeletedError. ConsumerNotFoundError, StreamNotFoundError.
    void delete_consumer(std::string_view stream, std::string_view consumer) const {
        raw_consumer_delete(stream, consumer);
    }
    /// The future form of delete_consumer.
    Future<void> delete_consumer_async(std::string_view stream, std::string_view consumer) const {
        return raw_consumer_delete_async(stream, consumer);
    }

    /// The names of `stream`'s consumers. StreamNotFoundError.
    std::vector<std::string> consumer_names(std::string_view stream) const {
        return raw_consumer_names(stream);
    }
    /// The future form of consumer_names.
    Future<std::vector<std::string>> consumer_names_async(std::string_view stream) const {
        return raw_consumer_names_async(stream);
    }

    /// The ConsumerInfo JSON of every consumer of `stream`, one per
    /// consumer, paging through the server's list as needed (each page
    /// waits up to the context's timeout); thread-safe.
    /// StreamNotFoundError, InvalidArgumentError (bad name),
    /// TimeoutError, ConnectionClosedError.
    std::vector<std::string> consumer_infos(std::string_view stream) const {
        return raw_consumer_infos(stream);
    }
    /// The future form of consumer_infos.
    Future<std::vector<std::string>> consumer_infos_async(std::string_view stream) const {
        return raw_consumer_infos_async(stream);
    }

    /// Pauses consumer `consumer` of `stream` until `until`: it delivers
    /// nothing before then and pulls wait (server 2.11+); a time already
    /// past leaves it running. Returns the server's answer as JSON:
    /// {"paused": bool, "pause_until": RFC 3339, "pause_remaining": ns}.
    /// Blocks up to the context's timeout; thread-safe.
    /// ConsumerNotFoundError, StreamNotFoundError, InvalidArgumentError
    /// (bad names, a time not after the epoch), TimeoutError,
    /// ConnectionClosedError.
    std::string pause_consumer(std::string_view stream, std::string_view consumer,
                               std::chrono::system_clock::time_point until) const {
        return raw_consumer_pause(stream, consumer, detail::ns_from_time(until));
    }
    /// The future form of pause_consumer.
    Future<std::string> pause_consumer_async(std::string_view stream, std::string_view consumer,
                                             std::chrono::system_clock::time_point until) const {
        return raw_consumer_pause_async(stream, consumer, detail::ns_from_time(until));
    }
    /// Resumes a paused consumer now (a running one stays running);
    /// returns the answer as pause_consumer does ("paused": false). Throws
    /// as pause_consumer.
    std::string resume_consumer(std::string_view stream, std::string_view consumer) const {
        return raw_consumer_resume(stream, consumer);
    }
    /// The future form of resume_consumer.
    Future<std::string> resume_consumer_async(std::string_view stream,
                                              std::string_view consumer) const {
        return raw_consumer_resume_async(stream, consumer);
    }

    /// Releases the pinned client of priority group `group` (ADR-42
    /// pinned_client): the next pull of any client in the group gets
    /// pinned. Blocks up to the context's timeout. ConsumerNotFoundError,
    /// StreamNotFoundError, InvalidArgumentError (bad names, a group not
    /// among the consumer's), TimeoutError, ConnectionClosedError.
    void unpin_consumer(std::string_view stream, std::string_view consumer,
                        std::string_view group) const {
        raw_consumer_unpin(stream, consumer, group);
    }
    /// The future form of unpin_consumer.
    Future<void> unpin_consumer_async(std::string_view stream, std::string_view consumer,
                                      std::string_view group) const {
        return raw_consumer_unpin_async(stream, consumer, group);
    }

    /// Pulls up to `options.max_messages` messages from the pull consumer
    /// `consumer` of `stream`, until the batch is full or the request ends;
    /// the list may be empty (none before `expires`, or none now with
    /// `no_wait`). Acknowledge each message (MsgView::ack, nak, term, ...)
    /// unless the ack policy is "none". ConsumerDeletedError (deleted while
    /// waiting), ConsumerNotFoundError, JetStreamError (a request the
    /// consumer's limits refuse: beyond its max_batch, max_expires or
    /// max_bytes, or max_waiting requests waiting; what() gives the
    /// server's reason), InvalidArgumentError (bad names, negative
    /// options), ConnectionClosedError. With `no_wait`, ends at the latest
    /// a second after the request when the server holds it.
    MsgList fetch(std::string_view stream, std::string_view consumer,
                  const FetchOptions& options = {}) const {
        natsio_fetch_options c_options = to_c(options);
        return raw_fetch(stream, consumer, &c_options);
    }
    /// The future form of fetch: the MsgList.
    Future<MsgList> fetch_async(std::string_view stream, std::string_view consumer,
                                const FetchOptions& options = {}) const {
        natsio_fetch_options c_options = to_c(options);
        return raw_fetch_async(stream, consumer, &c_options);
    }

    /// The messages of one fetch (the pull request fetch sends, with its
    /// options), handed out as they arrive instead of once the batch is
    /// complete (nats.go's Consumer.Fetch MessageBatch, nats.js's
    /// consumer.fetch() iterator). Returns once the request is sent. The
    /// iteration ends (next() returns std::nullopt) where fetch returns its
    /// batch: max_messages delivered, max_bytes reached, the request
    /// expired or ended by the server; fetch's errors (ConsumerDeletedError,
    /// JetStreamError, TimeoutError for missed heartbeats, ...) end it
    /// after the messages that came before them. Nothing is dropped: at
    /// most max_messages are buffered. stop() (or destroying the Messages)
    /// withdraws the request at the server first: a message published
    /// after goes to the consumer's next reader; messages received but not
    /// read are not acknowledged (redelivered after the ack wait). Errors
    /// of the call: InvalidArgumentError (bad names or options, a priority
    /// group that is not the consumer's), ConsumerNotFoundError (only when
    /// reading the consumer's info for a priority group),
    /// ConnectionClosedError. (natsio_js_fetch_messages.)
    Messages fetch_messages(std::string_view stream, std::string_view consumer,
                            const FetchOptions& options = {}) const {
        natsio_fetch_options c_options = to_c(options);
        return raw_fetch_messages(stream, consumer, &c_options);
    }
    /// The future form of fetch_messages: the Messages (taken once).
    Future<Messages> fetch_messages_async(std::string_view stream, std::string_view consumer,
                                          const FetchOptions& options = {}) const {
        natsio_fetch_options c_options = to_c(options);
        return raw_fetch_messages_async(stream, consumer, &c_options);
    }

    /// One message from the pull consumer, waiting up to `timeout`
    /// (default: the context's timeout; no_wait: only one available now;
    /// forever is InvalidArgumentError). NoMessagesError (also a
    /// TimeoutError) when none came in time; otherwise as fetch.
    Msg next(std::string_view stream, std::string_view consumer,
             milliseconds timeout = default_timeout) const {
        natsio_fetch_options c_options = next_wait(timeout);
        return raw_next(stream, consumer, &c_options);
    }
    /// The future form of next: the message, or NoMessagesError.
    Future<Msg> next_async(std::string_view stream, std::string_view consumer,
                           milliseconds timeout = default_timeout) const {
        natsio_fetch_options c_options = next_wait(timeout);
        return raw_next_async(stream, consumer, &c_options);
    }
    /// next's wait as natsio_js_next's options: default_timeout is
    /// expires 0 (the context's timeout), no_wait is no_wait, a positive
    /// wait is expires; anything else (forever) goes on as a negative
    /// expires, which the library refuses (InvalidArgumentError).
    static natsio_fetch_options next_wait(milliseconds timeout) {
        natsio_fetch_options c_options;
        natsio_fetch_options_init(&c_options);
        const int64_t ms = detail::to_ms(timeout);
        c_options.no_wait = ms == NATSIO_NO_WAIT;
        c_options.expires_ms = ms == NATSIO_TIMEOUT_DEFAULT ? 0 : ms;
        return c_options;
    }
    /// next with a fetch's options (natsio_js_next's): `expires`
    /// is the wait (0: the context's timeout), plus no_wait,
    /// idle_heartbeat and the priority-group fields; max_messages 0 or 1.
    /// Throws as next.
    Msg next(std::string_view stream, std::string_view consumer, const FetchOptions& options) const {
        natsio_fetch_options c_options = to_c(options);
        return raw_next(stream, consumer, &c_options);
    }
    /// The future form of next with options.
    Future<Msg> next_async(std::string_view stream, std::string_view consumer,
                           const FetchOptions& options) const {
        natsio_fetch_options c_options = to_c(options);
        return raw_next_async(stream, consumer, &c_options);
    }

    /// Consumes the pull consumer `consumer` of `stream` continuously (see
    /// Messages), once it is known to exist. ConsumerNotFoundError,
    /// StreamNotFoundError, InvalidArgumentError (bad names or options),
    /// TimeoutError, ConnectionClosedError.
    Messages consume(std::string_view stream, std::string_view consumer,
                     const ConsumeOptions& options = {}) const {
        natsio_consume_options c_options = to_c(options);
        return raw_consume(stream, consumer, &c_options);
    }
    /// The future form of consume: the Messages (taken once).
    Future<Messages> consume_async(std::string_view stream, std::string_view consumer,
                                   const ConsumeOptions& options = {}) const {
        natsio_consume_options c_options = to_c(options);
        return raw_consume_async(stream, consumer, &c_options);
    }

    /// Consumes the push consumer `consumer` of `stream` (one created with
    /// a "deliver_subject"): the library subscribes to its deliver subject
    /// (in its "deliver_group" when it has one) and hands what the server
    /// sends on as Messages, as consume does (natsio_js_push_consume says
    /// how flow control and heartbeats are handled). ConsumerNotFoundError,
    /// StreamNotFoundError, InvalidArgumentError (bad names; a pull
    /// consumer), TimeoutError, ConnectionClosedError.
    Messages push_consume(std::string_view stream, std::string_view consumer) const {
        return raw_push_consume(stream, consumer);
    }
    /// The future form of push_consume: the Messages (taken once).
    Future<Messages> push_consume_async(std::string_view stream, std::string_view consumer) const {
        return raw_push_consume_async(stream, consumer);
    }

    /// An ordered consumer on `stream` reading what `config` says (see
    /// OrderedConsumer). Checks the arguments only (a missing stream shows
    /// at start() or messages()): InvalidArgumentError (bad stream name,
    /// a start sequence or time missing or given with another policy, a
    /// start sequence of 0, a start time at the epoch, a name prefix that
    /// is no consumer name, a negative inactive threshold, a NUL byte),
    /// InvalidUtf8Error (e.g. metadata that is not UTF-8), BadSubjectError.
    OrderedConsumer ordered_consumer(std::string_view stream,
                                     const OrderedConsumerConfig& config = {}) const {
        if (config.opt_start_seq && *config.opt_start_seq == 0) {
            throw InvalidArgumentError(NATSIO_ERR_INVALID_ARGUMENT,
                                       "opt_start_seq must be at least 1");
        }
        const std::int64_t start_ns =
            config.opt_start_time ? detail::ns_from_time(*config.opt_start_time) : 0;
        if (config.opt_start_time && start_ns == 0) {
            throw InvalidArgumentError(NATSIO_ERR_INVALID_ARGUMENT,
                                       "opt_start_time must not be the epoch itself");
        }
        detail::CStringArray filters(config.filter_subjects.begin(), config.filter_subjects.end(),
                                     "filter subject");
        natsio_ordered_consumer_options c{};
        detail::check(natsio_ordered_consumer_options_init(&c));
        c.filter_subjects = filters.data();
        c.filter_subjects_count = filters.size();
        c.deliver_policy = static_cast<std::int32_t>(config.deliver_policy);
        c.opt_start_seq = config.opt_start_seq.value_or(0);
        c.opt_start_time_ns = start_ns;
        c.headers_only = config.headers_only;
        detail::OptionalCString prefix(
            config.name_prefix.empty() ? std::nullopt
                                       : std::optional<std::string_view>(config.name_prefix),
            "name prefix");
        c.name_prefix = prefix.get();
        c.inactive_threshold_ms = detail::to_ms(config.inactive_threshold);
        c.max_deliver = config.max_deliver;
        c.filter_subjects_as_list = config.filter_subjects_as_list;
        // Kept until the call returns (the library copies it).
        std::string metadata_json;
        if (!config.metadata.empty()) {
            detail::append_json_string_map(metadata_json, config.metadata);
            c.metadata_json = metadata_json.c_str();
        }
        return raw_ordered_consumer(stream, &c);
    }

    // Key-Value buckets --------------------------------------------------------

    /// Creates, updates or creates-or-updates (per `action`) a bucket from
    /// a KeyValueConfig JSON object ("bucket" required; "history", "ttl",
    /// "max_value_size", "storage", ...) and binds it; Create of an
    /// identical existing bucket simply binds it. As nats.go's, "mirror"
    /// (a StreamSource naming a bucket, with or without "KV_"; "domain"
    /// for one in another JetStream domain) makes a read-only copy of that
    /// bucket, whose handle reads the keys it holds and writes to the
    /// mirrored bucket (through the mirror's domain); "sources" (a list of
    /// them) copies their keys into this bucket, which keeps its own.
    /// ConfigError (the text
    /// names the field), InvalidBucketNameError, BucketExistsError (exists
    /// with another configuration), BucketNotFoundError (Update of a
    /// missing bucket).
    KeyValue create_key_value(std::string_view config_json,
                              CreateAction action = CreateAction::Create) const {
        return raw_kv_create(config_json, action_of(action));
    }
    /// The future form of create_key_value: the bound KeyValue.
    Future<KeyValue> create_key_value_async(std::string_view config_json,
                                            CreateAction action = CreateAction::Create) const {
        return raw_kv_create_async(config_json, action_of(action));
    }

    /// Binds the existing bucket `bucket`. BucketNotFoundError,
    /// InvalidBucketNameError.
    KeyValue key_value(std::string_view bucket) const { return raw_kv_bind(bucket); }
    /// The future form of key_value: the bound KeyValue.
    Future<KeyValue> key_value_async(std::string_view bucket) const {
        return raw_kv_bind_async(bucket);
    }

    /// Deletes bucket `bucket` with all its keys and history.
    /// BucketNotFoundError.
    void delete_key_value(std::string_view bucket) const { raw_kv_delete(bucket); }
    /// The future form of delete_key_value.
    Future<void> delete_key_value_async(std::string_view bucket) const {
        return raw_kv_delete_async(bucket);
    }

    /// The names of every Key-Value bucket: streams named "KV_" and the
    /// bucket's name that hold the bucket's `$KV` subjects (other streams,
    /// even on `$KV` subjects, are left out), from the paged stream names. Blocks up to
    /// the context's timeout per page; thread-safe.
    /// JetStreamNotEnabledError (the account has no JetStream),
    /// NoRespondersError (nobody answered: no JetStream on the server),
    /// TimeoutError, ConnectionClosedError,
    /// InvalidArgumentError (no context).
    std::vector<std::string> key_value_names() const { return raw_kv_names(); }
    /// The future form of key_value_names.
    Future<std::vector<std::string>> key_value_names_async() const { return raw_kv_names_async(); }

    /// The status of every Key-Value bucket (those key_value_names lists),
    /// built from the paged stream list without a request per bucket.
    /// Blocks and throws as key_value_names; thread-safe.
    std::vector<KvStatus> key_value_statuses() const { return raw_kv_statuses(); }
    /// The future form of key_value_statuses.
    Future<std::vector<KvStatus>> key_value_statuses_async() const {
        return raw_kv_statuses_async();
    }

    // Object Store buckets (defined in natsio/object.hpp) ----------------------

    /// Creates, updates or creates-or-updates (per `action`) an Object
    /// Store bucket from an ObjectStoreConfig JSON object ("bucket"
    /// required; "description", "ttl", "max_bytes", "storage", "replicas",
    /// "placement", "compression", "metadata") and binds it; Create of an
    /// identical existing bucket simply binds it; other fields go to the
    /// backing stream's config. ConfigError (a malformed field; the text
    /// names it), InvalidBucketNameError, BucketExistsError (exists with
    /// another configuration), BucketNotFoundError (Update of a missing
    /// bucket), ApiError (a field the server refuses).
    inline ObjectStore create_object_store(std::string_view config_json,
                                           CreateAction action = CreateAction::Create) const;
    /// The future form of create_object_store: the bound ObjectStore.
    inline Future<ObjectStore> create_object_store_async(
        std::string_view config_json, CreateAction action = CreateAction::Create) const;

    /// Binds the existing bucket `bucket`. BucketNotFoundError,
    /// InvalidBucketNameError.
    inline ObjectStore object_store(std::string_view bucket) const;
    /// The future form of object_store: the bound ObjectStore.
    inline Future<ObjectStore> object_store_async(std::string_view bucket) const;

    /// Deletes bucket `bucket` with all its objects. BucketNotFoundError.
    inline void delete_object_store(std::string_view bucket) const;
    /// The future form of delete_object_store.
    inline Future<void> delete_object_store_async(std::string_view bucket) const;

    /// The names of the Object Store buckets.
    inline std::vector<std::string> object_store_names() const;
    /// The future form of object_store_names.
    inline Future<std::vector<std::string>> object_store_names_async() const;

    /// The status of every Object Store bucket.
    inline std::vector<ObjectStoreStatus> object_store_statuses() const;
    /// The future form of object_store_statuses.
    inline Future<std::vector<ObjectStoreStatus>> object_store_statuses_async() const;

    /// True when this object holds a context.
    explicit operator bool() const noexcept { return js_ != nullptr; }
    /// The C context (null for none), still owned by this object.
    natsio_js* c_js() const noexcept { return js_; }
    /// Gives up ownership of the handle (free it with natsio_js_free).
    natsio_js* release() noexcept { return std::exchange(js_, nullptr); }

private:
    friend class detail::JsVerbs<JetStream>;
    natsio_js* c_handle() const noexcept { return js_; }
    const detail::SinkPtr& sink() const noexcept { return sink_; }

    static std::int32_t action_of(CreateAction action) noexcept {
        return static_cast<std::int32_t>(action);
    }

    static natsio_fetch_options to_c(const FetchOptions& options) {
        natsio_fetch_options c_options{};
        detail::check(natsio_fetch_options_init(&c_options));
        c_options.max_messages = options.max_messages;
        c_options.max_bytes = options.max_bytes;
        c_options.expires_ms = detail::to_ms(options.expires);
        c_options.no_wait = options.no_wait;
        c_options.idle_heartbeat_ms = detail::to_ms(options.idle_heartbeat);
        c_options.group = group_of(options.group);
        c_options.min_pending = options.min_pending;
        c_options.min_ack_pending = options.min_ack_pending;
        c_options.priority = options.priority;
        return c_options;
    }

    /// The C form of a group (NULL when empty); refuses an embedded NUL,
    /// which C would read as a shorter name.
    static const char* group_of(const std::string& group) {
        if (group.find('\0') != std::string::npos) {
            throw InvalidArgumentError(NATSIO_ERR_INVALID_ARGUMENT, "group contains a NUL byte");
        }
        return group.empty() ? nullptr : group.c_str();
    }

    static natsio_consume_options to_c(const ConsumeOptions& options) {
        natsio_consume_options c_options{};
        detail::check(natsio_consume_options_init(&c_options));
        c_options.max_messages = options.max_messages;
        c_options.expires_ms = detail::to_ms(options.expires);
        c_options.idle_heartbeat_ms = detail::to_ms(options.idle_heartbeat);
        c_options.max_bytes = options.max_bytes;
        c_options.threshold = options.threshold;
        c_options.threshold_messages = options.threshold_messages;
        c_options.threshold_bytes = options.threshold_bytes;
        c_options.group = group_of(options.group);
        c_options.min_pending = options.min_pending;
        c_options.min_ack_pending = options.min_ack_pending;
        c_options.priority = options.priority;
        return c_options;
    }

    StoredMsgs last_msgs_for(std::string_view stream, const detail::CStringArray& subjects,
                             const LastMsgsOptions& options) const {
        // The C ABI reads 0 as "unset": a bound that maps to 0 would be
        // dropped silently, so it is refused instead.
        if (options.up_to_seq && *options.up_to_seq == 0) {
            throw InvalidArgumentError(NATSIO_ERR_INVALID_ARGUMENT,
                                       "up_to_seq must be at least 1");
        }
        const std::int64_t up_to_time_ns =
            options.up_to_time ? detail::ns_from_time(*options.up_to_time) : 0;
        if (options.up_to_time && up_to_time_ns == 0) {
            throw InvalidArgumentError(NATSIO_ERR_INVALID_ARGUMENT,
                                       "up_to_time must not be the epoch itself");
        }
        return raw_stream_get_last_msgs_for(stream, subjects, options.batch,
                                            options.up_to_seq.value_or(0), up_to_time_ns);
    }

    natsio_js* js_ = nullptr;
    detail::SinkPtr sink_;
};

}  // namespace natsio

// detail::TokenReader of the results above (generated).
#include <natsio/gen/jetstream_results.hpp>

// Object Store: ObjectStore and the definitions of JetStream's bucket calls.
#include <natsio/object.hpp>

#endif  // NATSIO_CPP_JETSTREAM_HPP
