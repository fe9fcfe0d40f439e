// natsio/natsio.hpp: header-only C++17 binding of libnatsio.
//
// A thin layer over include/natsio.h that adds idiom, not behaviour:
//   - move-only RAII owners for every C handle (Client, Options,
//     Subscription, Msg, Headers, Token, Replies); each destructor calls the
//     handle's _free, so the C guarantees carry over (e.g. once a
//     Subscription or Client is destroyed, none of its handlers runs again);
//   - std::string_view / ByteView in, borrowed views out (MsgView,
//     HeadersView), valid as long as their owner;
//   - exceptions (natsio/errors.hpp) instead of status codes;
//   - std::function handlers, with every exception caught before it could
//     unwind into the library and reported to the client's error handler;
//   - std::future results built on completion tokens (AsyncResult), and
//     range-for over subscriptions and request_many replies.
//
// Timeouts are std::chrono::milliseconds and keep the C meaning of each
// function (a negative value is "forever" or "the option's default", as the
// function's comment says).
//
// Threads: every type may be used from any thread, except Options (configure
// from one thread), like the C handles they own. Handlers run on the
// library's dispatcher threads; do not wait on an AsyncResult from inside
// the client's error handler (completions run on that same thread).
#ifndef NATSIO_CPP_NATSIO_HPP
#define NATSIO_CPP_NATSIO_HPP

#include <natsio.h>
#include <natsio/errors.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <future>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace natsio {

using std::chrono::milliseconds;

/// "Wait forever" where a function accepts it (next_msg, Token::wait_for).
inline constexpr milliseconds forever{-1};

/// The library version, e.g. "0.1.0".
inline std::string_view version() noexcept { return natsio_version(); }

/// Worker threads of the library's runtime; only before the first
/// connection (IllegalStateError afterwards), 1..=256.
inline void set_worker_threads(std::uint32_t count) {
    detail::check(natsio_runtime_set_worker_threads(count));
}

// ---------------------------------------------------------------------------
// Byte views
// ---------------------------------------------------------------------------

/// A borrowed, read-only run of bytes: what publish and respond take as a
/// payload. Converts implicitly from text (string_view, std::string, C
/// strings) and from contiguous containers of std::byte / unsigned char
/// (std::vector<std::uint8_t>, std::array, std::span in C++20).
class ByteView {
public:
    constexpr ByteView() noexcept = default;
    ByteView(const void* data, std::size_t size) noexcept
        : data_(static_cast<const std::byte*>(data)), size_(size) {}
    ByteView(std::string_view text) noexcept : ByteView(text.data(), text.size()) {}
    ByteView(const char* text) noexcept : ByteView(std::string_view(text)) {}
    ByteView(const std::string& text) noexcept : ByteView(text.data(), text.size()) {}

    template <class Container,
              class Element = std::remove_cv_t<
                  std::remove_pointer_t<decltype(std::data(std::declval<const Container&>()))>>,
              class = std::enable_if_t<std::is_same_v<Element, std::byte> ||
                                       std::is_same_v<Element, unsigned char>>>
    ByteView(const Container& bytes) noexcept
        : ByteView(std::data(bytes), std::size(bytes)) {}

    const std::byte* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    const std::byte* begin() const noexcept { return data_; }
    const std::byte* end() const noexcept { return data_ + size_; }
    std::byte operator[](std::size_t i) const noexcept { return data_[i]; }
    /// The same bytes seen as text.
    std::string_view as_string() const noexcept {
        return {reinterpret_cast<const char*>(data_), size_};
    }

private:
    const std::byte* data_ = nullptr;
    std::size_t size_ = 0;
};

namespace detail {

inline std::string_view view_of(const char* s) noexcept {
    return s != nullptr ? std::string_view(s) : std::string_view();
}

inline std::int64_t to_ms(milliseconds timeout) noexcept {
    return static_cast<std::int64_t>(timeout.count());
}

/// A NUL-terminated copy of a string_view for one C call; short strings
/// (subjects, header names) stay on the stack. A view with an embedded NUL
/// cannot cross the C ABI unchanged, so it is rejected instead of being
/// silently cut short.
class CString {
public:
    CString(std::string_view text, const char* what) {
        // string_view's own find/copy: no null data() of an empty view
        // reaches memchr/memcpy, and g++ 12 -O3 reports no false
        // stringop-overread for temporaries (as it did with memchr).
        if (text.find('\0') != std::string_view::npos) {
            throw InvalidArgumentError(NATSIO_ERR_INVALID_ARGUMENT,
                                       std::string(what) + " contains a NUL byte");
        }
        if (text.size() < sizeof(small_)) {
            text.copy(small_, text.size());
            small_[text.size()] = '\0';
            ptr_ = small_;
        } else {
            large_.assign(text);
            ptr_ = large_.c_str();
        }
    }
    CString(const CString&) = delete;
    CString& operator=(const CString&) = delete;

    const char* get() const noexcept { return ptr_; }

private:
    char small_[128];
    std::string large_;
    const char* ptr_ = nullptr;
};

/// CString for an optional argument: NULL when absent.
class OptionalCString {
public:
    OptionalCString(std::optional<std::string_view> text, const char* what)
        : value_(text.value_or(std::string_view()), what), present_(text.has_value()) {}
    const char* get() const noexcept { return present_ ? value_.get() : nullptr; }

private:
    // A plain member rather than std::optional<CString>: g++ 12 at -O3
    // reports a false -Wmaybe-uninitialized for the optional's string.
    CString value_;
    bool present_;
};

/// Takes a string the library returned through `char **`.
inline std::string take_string(char* s) {
    std::string copy = s != nullptr ? std::string(s) : std::string();
    natsio_string_free(s);
    return copy;
}

/// User data handed to the library with a release function. The C ABI does
/// not say whether a registering call that fails has already released its
/// user data (natsio_client_subscribe_callback releases it on some failure
/// paths and not on others), so ownership is settled here: a release that
/// happens while the registering call is still running is deferred to
/// `settle`, which frees the box on failure in every case.
template <class T>
class CallbackBox {
public:
    explicit CallbackBox(T value) : value(std::move(value)) {}

    T value;

    static void release(void* user_data) noexcept {
        auto* box = static_cast<CallbackBox*>(user_data);
        if (box->state_.exchange(kReleased) == kRegistered) {
            delete box;
        }
    }

    /// Call right after the registering C call returned `status`, before
    /// anything else: throws for a failure (having freed the box).
    static void settle(CallbackBox* box, Status status) {
        if (status != NATSIO_OK) {
            std::string detail = natsio_last_error();
            delete box;
            throw_error(status, std::move(detail));
        }
        if (box->state_.exchange(kRegistered) == kReleased) {
            delete box;
        }
    }

private:
    enum : int { kCalling, kRegistered, kReleased };
    std::atomic<int> state_{kCalling};
};

}  // namespace detail

// ---------------------------------------------------------------------------
// Asynchronous errors and the error handler
// ---------------------------------------------------------------------------

/// One asynchronous error, as passed to the client's error handler.
struct AsyncError {
    enum class Source {
        /// Reported by the library (slow consumer, server -ERR, lost
        /// connection, drain timeout, ...): `status` says which.
        Library,
        /// A message handler of this binding threw; `status` is NATSIO_OK
        /// and `error` holds what it threw.
        Handler,
    };

    Source source = Source::Library;
    Status status = NATSIO_OK;
    /// Library detail text, or the handler exception's what().
    std::string text;
    /// Subscription concerned (0 and "" when none).
    std::uint64_t sid = 0;
    std::string subject;
    /// The mapped natsio::Error (Library) or the handler's exception.
    std::exception_ptr error;

    [[noreturn]] void rethrow() const { std::rethrow_exception(error); }
};

using ErrorHandler = std::function<void(const AsyncError&)>;

namespace detail {

/// Where a client's asynchronous errors go: the user's handler, if any.
/// Shared by the client's C error callback and its subscription handlers.
struct ErrorSink {
    ErrorHandler handler;

    void report(const AsyncError& event) const noexcept {
        if (handler) {
            try {
                handler(event);
                return;
            } catch (...) {
                // The error handler itself threw: nothing is left to tell
                // but stderr below.
            }
        }
        // Without a handler, library errors stay silent like in C, but a
        // throwing message handler is a bug of the application: say so.
        if (event.source == AsyncError::Source::Handler || handler) {
            std::fprintf(stderr, "natsio: unhandled error in handler (subject '%s'): %s\n",
                         event.subject.c_str(), event.text.c_str());
        }
    }

    void report_handler_exception(std::exception_ptr thrown, std::uint64_t sid,
                                  const char* subject) const noexcept {
        try {
            AsyncError event;
            event.source = AsyncError::Source::Handler;
            event.sid = sid;
            event.subject = view_of(subject);
            event.error = thrown;
            try {
                std::rethrow_exception(thrown);
            } catch (const std::exception& e) {
                event.text = e.what();
            } catch (...) {
                event.text = "unknown exception";
            }
            report(event);
        } catch (...) {
            // Out of memory while reporting: drop the report, never unwind
            // into the library.
        }
    }

    static void on_library_error(void* user_data, natsio_status status, const char* text,
                                 std::uint64_t sid, const char* subject) noexcept {
        using Box = CallbackBox<std::shared_ptr<ErrorSink>>;
        try {
            AsyncError event;
            event.source = AsyncError::Source::Library;
            event.status = status;
            event.text = view_of(text);
            event.sid = sid;
            event.subject = view_of(subject);
            event.error = make_error(status, event.text);
            static_cast<Box*>(user_data)->value->report(event);
        } catch (...) {
        }
    }
};

}  // namespace detail

// ---------------------------------------------------------------------------
// Connection events and auth callbacks
// ---------------------------------------------------------------------------

/// Connection lifecycle events (natsio_event_kind), delivered in order on the
/// client's event thread; Closed is always the last one.
enum class EventKind : std::int32_t {
    /// First connection established; text: the server URL.
    Connected = NATSIO_EVENT_CONNECTED,
    /// Connection lost, reconnecting; status and text: why.
    Disconnected = NATSIO_EVENT_DISCONNECTED,
    /// Connected again with subscriptions restored; text: the server URL.
    Reconnected = NATSIO_EVENT_RECONNECTED,
    /// The server entered lame-duck mode; text: the server URL.
    LameDuck = NATSIO_EVENT_LAME_DUCK,
    /// New servers discovered; text: their URLs, comma-separated.
    ServersDiscovered = NATSIO_EVENT_SERVERS_DISCOVERED,
    /// The client closed for good.
    Closed = NATSIO_EVENT_CLOSED,
};

/// Receives (kind, cause status or NATSIO_OK, text borrowed for the call).
using EventHandler = std::function<void(EventKind, Status, std::string_view)>;

/// Gives the user JWT to present, on every connect (on a library thread).
using JwtHandler = std::function<std::string()>;
/// Signs the server's nonce with the user's Ed25519 key: exactly 64 bytes.
using SignHandler = std::function<std::array<std::uint8_t, 64>(ByteView nonce)>;

namespace detail {

struct EventSlot {
    EventHandler handler;
    std::shared_ptr<ErrorSink> sink;

    static void on_event(void* user_data, natsio_event_kind kind, natsio_status status,
                         const char* text) noexcept {
        const EventSlot& slot = static_cast<CallbackBox<EventSlot>*>(user_data)->value;
        try {
            slot.handler(static_cast<EventKind>(kind), status, view_of(text));
        } catch (...) {
            if (slot.sink) {
                slot.sink->report_handler_exception(std::current_exception(), 0, nullptr);
            }
        }
    }
};

struct AuthSlot {
    JwtHandler jwt;
    SignHandler sign;
    // The C contract: the returned JWT stays valid until the next call.
    std::unique_ptr<std::mutex> mutex;
    std::string last_jwt;

    static const char* on_jwt(void* user_data) noexcept {
        auto& slot = static_cast<CallbackBox<AuthSlot>*>(user_data)->value;
        try {
            std::string jwt = slot.jwt();
            std::lock_guard<std::mutex> lock(*slot.mutex);
            slot.last_jwt = std::move(jwt);
            return slot.last_jwt.c_str();
        } catch (...) {
            return nullptr;  // fails this connection attempt
        }
    }

    static natsio_status on_sign(void* user_data, const std::uint8_t* nonce, std::size_t len,
                                 std::uint8_t* signature_out) noexcept {
        auto& slot = static_cast<CallbackBox<AuthSlot>*>(user_data)->value;
        try {
            std::array<std::uint8_t, 64> signature =
                slot.sign(ByteView(nonce, len));
            std::memcpy(signature_out, signature.data(), signature.size());
            return NATSIO_OK;
        } catch (const Error& e) {
            return e.status();
        } catch (...) {
            return NATSIO_ERR_INTERNAL;
        }
    }
};

}  // namespace detail

// ---------------------------------------------------------------------------
// Headers
// ---------------------------------------------------------------------------

/// A borrowed, read-only header map: a received message's headers, or a
/// view of a Headers. Values are borrowed until the map is changed or freed.
/// A default-constructed view is "no headers" (what a message without a
/// header block has).
class HeadersView {
public:
    using Entry = std::pair<std::string_view, std::string_view>;

    HeadersView() noexcept = default;
    explicit HeadersView(const natsio_headers* headers) noexcept : headers_(headers) {}

    /// The first value of `name` (exact, case-sensitive), if any.
    std::optional<std::string_view> get(std::string_view name) const {
        return get_nth(name, 0);
    }

    /// The `index`-th value of `name`, if any.
    std::optional<std::string_view> get_nth(std::string_view name, std::size_t index) const {
        if (headers_ == nullptr) {
            return std::nullopt;
        }
        detail::CString c_name(name, "header name");
        const char* value = nullptr;
        Status status = natsio_headers_get_nth(headers_, c_name.get(), index, &value);
        if (status == NATSIO_ERR_NOT_FOUND) {
            return std::nullopt;
        }
        detail::check(status);
        return detail::view_of(value);
    }

    /// Every value of `name`, in order.
    std::vector<std::string_view> values(std::string_view name) const {
        std::vector<std::string_view> out;
        std::size_t n = count(name);
        out.reserve(n);
        for (std::size_t i = 0; i < n; ++i) {
            if (auto value = get_nth(name, i)) {
                out.push_back(*value);
            }
        }
        return out;
    }

    /// How many values `name` has.
    std::size_t count(std::string_view name) const {
        detail::CString c_name(name, "header name");
        return natsio_headers_count(headers_, c_name.get());
    }

    /// Number of name/value pairs.
    std::size_t size() const noexcept { return natsio_headers_len(headers_); }
    bool empty() const noexcept { return size() == 0; }

    /// The pair at `index` in wire order; NotFoundError when out of range.
    Entry entry(std::size_t index) const {
        const char* name = nullptr;
        const char* value = nullptr;
        detail::check(natsio_headers_entry(headers_, index, &name, &value));
        return {detail::view_of(name), detail::view_of(value)};
    }

    class const_iterator {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = Entry;
        using difference_type = std::ptrdiff_t;
        using pointer = const Entry*;
        using reference = Entry;

        const_iterator() noexcept = default;
        const_iterator(const HeadersView* view, std::size_t index) noexcept
            : view_(view), index_(index) {}
        Entry operator*() const { return view_->entry(index_); }
        const_iterator& operator++() noexcept {
            ++index_;
            return *this;
        }
        const_iterator operator++(int) noexcept {
            const_iterator before = *this;
            ++index_;
            return before;
        }
        bool operator==(const const_iterator& other) const noexcept {
            return index_ == other.index_;
        }
        bool operator!=(const const_iterator& other) const noexcept { return !(*this == other); }

    private:
        const HeadersView* view_ = nullptr;
        std::size_t index_ = 0;
    };

    /// Iterates the (name, value) pairs in wire order.
    const_iterator begin() const noexcept { return {this, 0}; }
    const_iterator end() const noexcept { return {this, size()}; }

    /// True when there is a header map (even an empty one).
    explicit operator bool() const noexcept { return headers_ != nullptr; }
    const natsio_headers* c_headers() const noexcept { return headers_; }

protected:
    const natsio_headers* headers_ = nullptr;
};

/// An owned, mutable header map (natsio_headers_new / _free).
class Headers : public HeadersView {
public:
    Headers() {
        natsio_headers* created = nullptr;
        detail::check(natsio_headers_new(&created));
        headers_ = created;
    }

    /// An owned copy of `source` (e.g. a received message's headers).
    static Headers copy_of(HeadersView source) {
        natsio_headers* copied = nullptr;
        detail::check(natsio_headers_clone(source.c_headers(), &copied));
        return Headers(copied);
    }

    /// Takes ownership of a handle from the C API.
    static Headers adopt(natsio_headers* headers) noexcept { return Headers(headers); }

    Headers(Headers&& other) noexcept : HeadersView(std::exchange(other.headers_, nullptr)) {}
    Headers& operator=(Headers&& other) noexcept {
        if (this != &other) {
            natsio_headers_free(mutable_headers());
            headers_ = std::exchange(other.headers_, nullptr);
        }
        return *this;
    }
    Headers(const Headers&) = delete;
    Headers& operator=(const Headers&) = delete;
    ~Headers() { natsio_headers_free(mutable_headers()); }

    /// Appends a value to `name` (BadHeadersError for unsafe text).
    Headers& add(std::string_view name, std::string_view value) {
        detail::CString c_name(name, "header name");
        detail::CString c_value(value, "header value");
        detail::check(natsio_headers_add(mutable_headers(), c_name.get(), c_value.get()));
        return *this;
    }

    /// Replaces every value of `name`.
    Headers& set(std::string_view name, std::string_view value) {
        detail::CString c_name(name, "header name");
        detail::CString c_value(value, "header value");
        detail::check(natsio_headers_set(mutable_headers(), c_name.get(), c_value.get()));
        return *this;
    }

    /// Removes every value of `name`; false when there was none.
    bool remove(std::string_view name) {
        detail::CString c_name(name, "header name");
        Status status = natsio_headers_delete(mutable_headers(), c_name.get());
        if (status == NATSIO_ERR_NOT_FOUND) {
            return false;
        }
        detail::check(status);
        return true;
    }

    /// Gives up ownership of the handle.
    natsio_headers* release() noexcept {
        return const_cast<natsio_headers*>(std::exchange(headers_, nullptr));
    }

private:
    explicit Headers(natsio_headers* headers) noexcept : HeadersView(headers) {}
    // The view stores a const pointer; this object owns the map.
    natsio_headers* mutable_headers() const noexcept {
        return const_cast<natsio_headers*>(headers_);
    }
};

// ---------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------

class Msg;

/// Delivery metadata of a message consumed from a JetStream consumer
/// (MsgView::js_metadata), parsed from its ack subject. The views point into
/// the message and are valid while it is.
struct JsMsgMetadata {
    std::string_view stream;
    std::string_view consumer;
    /// The JetStream domain, if the ack subject names one.
    std::optional<std::string_view> domain = std::nullopt;
    /// How many times the message was delivered (1 the first time).
    std::uint64_t num_delivered = 0;
    std::uint64_t stream_seq = 0;
    std::uint64_t consumer_seq = 0;
    /// When the stream stored it.
    std::chrono::system_clock::time_point timestamp{};
    /// Messages left for the consumer after this one.
    std::uint64_t num_pending = 0;
};

/// A borrowed message: what a handler receives (valid for the call), or a
/// view of a Msg. Everything it returns is borrowed from the message.
///
/// JetStream acknowledgements (ack, ack_sync, nak, term, in_progress) work on
/// messages from JetStream::fetch/next, and on any message whose reply is a
/// JetStream ack subject; otherwise they throw NotJsMessageError. A second
/// ack/nak/term through the same handle throws MessageAlreadyAckedError (a
/// clone() copies that state as it is when cloned); ConnectionClosedError
/// once the client is closed.
class MsgView {
public:
    MsgView() noexcept = default;
    explicit MsgView(const natsio_msg* msg) noexcept : msg_(msg) {}

    std::string_view subject() const noexcept { return detail::view_of(natsio_msg_subject(msg_)); }

    /// The reply subject, if the message has one.
    std::optional<std::string_view> reply() const noexcept {
        const char* reply = natsio_msg_reply(msg_);
        if (reply == nullptr) {
            return std::nullopt;
        }
        return std::string_view(reply);
    }

    /// The payload as text (it may contain NUL bytes).
    std::string_view data() const noexcept {
        const char* bytes = natsio_msg_data(msg_);
        return bytes != nullptr ? std::string_view(bytes, natsio_msg_data_len(msg_))
                                : std::string_view();
    }

    /// The payload as bytes.
    ByteView bytes() const noexcept { return ByteView(data()); }

    /// The headers; an empty view when the message carried none.
    HeadersView headers() const noexcept { return HeadersView(natsio_msg_headers(msg_)); }

    /// The inline status of the header block (e.g. 503), or 0.
    std::int32_t status() const noexcept { return natsio_msg_status(msg_); }

    std::uint64_t sid() const noexcept { return natsio_msg_sid(msg_); }

    /// Publishes a reply to the message's reply subject
    /// (NoReplySubjectError when it has none).
    void respond(ByteView data) const {
        detail::check(natsio_msg_respond(msg_, data.data(), data.size()));
    }
    void respond(HeadersView headers, ByteView data) const {
        detail::check(
            natsio_msg_respond_with(msg_, headers.c_headers(), data.data(), data.size()));
    }

    /// An owned copy that outlives the handler (cheap: shared buffer).
    inline Msg clone() const;

    // JetStream acknowledgements -------------------------------------------

    /// Acknowledges the message (`+ACK`), buffered like a publish.
    void ack() const { detail::check(natsio_msg_ack(msg_)); }
    /// Acknowledges and waits up to `timeout` (0: 5 s) for the server to
    /// confirm it; TimeoutError.
    void ack_sync(milliseconds timeout = milliseconds{0}) const {
        detail::check(natsio_msg_ack_sync(msg_, detail::to_ms(timeout)));
    }
    /// Negative acknowledgement (`-NAK`): redelivered, after `delay` if
    /// positive.
    void nak(milliseconds delay = milliseconds{0}) const {
        detail::check(natsio_msg_nak(msg_, detail::to_ms(delay)));
    }
    /// Terminates delivery (`+TERM`): never redelivered; the server records
    /// `reason`.
    void term(std::optional<std::string_view> reason = std::nullopt) const {
        detail::OptionalCString c_reason(reason, "reason");
        detail::check(natsio_msg_term(msg_, c_reason.get()));
    }
    /// Still being worked on (`+WPI`): resets the ack wait; any number of
    /// times before the final ack.
    void in_progress() const { detail::check(natsio_msg_in_progress(msg_)); }
    /// The delivery metadata; NotJsMessageError for a message that did not
    /// come from a JetStream consumer.
    JsMsgMetadata js_metadata() const {
        natsio_js_msg_metadata c{};
        detail::check(natsio_msg_js_metadata(msg_, &c));
        JsMsgMetadata md;
        md.stream = std::string_view(c.stream, c.stream_len);
        md.consumer = std::string_view(c.consumer, c.consumer_len);
        if (c.domain != nullptr) {
            md.domain = std::string_view(c.domain, c.domain_len);
        }
        md.num_delivered = c.num_delivered;
        md.stream_seq = c.stream_seq;
        md.consumer_seq = c.consumer_seq;
        md.timestamp = std::chrono::system_clock::time_point(
            std::chrono::duration_cast<std::chrono::system_clock::duration>(
                std::chrono::nanoseconds(c.timestamp_ns)));
        md.num_pending = c.num_pending;
        return md;
    }

    explicit operator bool() const noexcept { return msg_ != nullptr; }
    const natsio_msg* c_msg() const noexcept { return msg_; }

protected:
    const natsio_msg* msg_ = nullptr;
};

/// An owned message (natsio_msg_free on destruction).
class Msg : public MsgView {
public:
    Msg() noexcept = default;
    /// Takes ownership of a message from the C API.
    explicit Msg(natsio_msg* owned) noexcept : MsgView(owned) {}
    Msg(Msg&& other) noexcept : MsgView(std::exchange(other.msg_, nullptr)) {}
    Msg& operator=(Msg&& other) noexcept {
        if (this != &other) {
            natsio_msg_free(mutable_msg());
            msg_ = std::exchange(other.msg_, nullptr);
        }
        return *this;
    }
    Msg(const Msg&) = delete;
    Msg& operator=(const Msg&) = delete;
    ~Msg() { natsio_msg_free(mutable_msg()); }

    /// Gives up ownership of the handle.
    natsio_msg* release() noexcept { return const_cast<natsio_msg*>(std::exchange(msg_, nullptr)); }

private:
    natsio_msg* mutable_msg() const noexcept { return const_cast<natsio_msg*>(msg_); }
};

inline Msg MsgView::clone() const {
    natsio_msg* copy = nullptr;
    detail::check(natsio_msg_clone(msg_, &copy));
    return Msg(copy);
}

/// Receives messages of a callback subscription. May throw: the exception
/// is reported to the client's error handler and delivery goes on.
using MsgHandler = std::function<void(MsgView)>;

namespace detail {

/// Input iterator over the messages a source yields; `Source::next_item()`
/// returns std::nullopt at the end.
template <class Source>
class MsgIterator {
public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Msg;
    using difference_type = std::ptrdiff_t;
    using pointer = Msg*;
    using reference = Msg&;

    MsgIterator() noexcept = default;  // the end
    explicit MsgIterator(Source* source) : source_(source) { advance(); }

    Msg& operator*() noexcept { return *current_; }
    Msg* operator->() noexcept { return &*current_; }
    MsgIterator& operator++() {
        advance();
        return *this;
    }
    bool operator==(const MsgIterator& other) const noexcept {
        return current_.has_value() == other.current_.has_value();
    }
    bool operator!=(const MsgIterator& other) const noexcept { return !(*this == other); }

private:
    void advance() {
        current_.reset();
        current_ = source_->next_item();
    }

    Source* source_ = nullptr;
    std::optional<Msg> current_;
};

}  // namespace detail

// ---------------------------------------------------------------------------
// Completion tokens and futures
// ---------------------------------------------------------------------------

namespace detail {

/// The token handle, shared between its Token owner and a pending
/// completion callback, so a future stays valid after the Token is gone.
struct TokenHandle {
    explicit TokenHandle(natsio_token* token) noexcept : token(token) {}
    TokenHandle(const TokenHandle&) = delete;
    TokenHandle& operator=(const TokenHandle&) = delete;
    ~TokenHandle() { natsio_token_free(token); }
    natsio_token* token;
};

template <class T>
struct PromiseSlot {
    std::promise<T> promise;
    std::shared_ptr<TokenHandle> keep_alive;
};

/// Completion callback: moves the token's outcome into the promise.
template <class T>
void fulfil_promise(void* user_data, natsio_token* token) noexcept {
    auto& slot = static_cast<CallbackBox<PromiseSlot<T>>*>(user_data)->value;
    // Holding the last reference here frees the token at the end of this
    // function, which the C API allows from inside its callback.
    std::shared_ptr<TokenHandle> keep = std::move(slot.keep_alive);
    try {
        Status status = natsio_token_status(token);
        if (status != NATSIO_OK) {
            slot.promise.set_exception(make_error(status, natsio_last_error()));
        } else if constexpr (std::is_same_v<T, Msg>) {
            natsio_msg* msg = nullptr;
            status = natsio_token_msg(token, &msg);
            if (status != NATSIO_OK) {
                slot.promise.set_exception(make_error(status, natsio_last_error()));
            } else {
                slot.promise.set_value(Msg(msg));
            }
        } else {
            slot.promise.set_value();
        }
    } catch (...) {
        try {
            slot.promise.set_exception(std::current_exception());
        } catch (...) {
        }
    }
}

}  // namespace detail

/// Owner of a natsio_token: the completion of one asynchronous operation.
class Token {
public:
    Token() noexcept = default;
    /// Takes ownership of a token from the C API.
    explicit Token(natsio_token* token)
        : handle_(std::make_shared<detail::TokenHandle>(token)) {}
    Token(Token&&) noexcept = default;
    Token& operator=(Token&&) noexcept = default;
    Token(const Token&) = delete;
    Token& operator=(const Token&) = delete;
    ~Token() = default;

    /// Waits up to `timeout` (negative: forever); true once completed.
    bool wait_for(milliseconds timeout) const {
        Status status = natsio_token_wait(c_token(), detail::to_ms(timeout));
        if (status == NATSIO_ERR_TIMEOUT) {
            return false;
        }
        detail::check(status);
        return true;
    }
    /// Waits until completed.
    void wait() const { wait_for(forever); }

    bool done() const noexcept { return natsio_token_is_done(c_token()); }

    /// NATSIO_PENDING, NATSIO_OK or the operation's error status.
    Status status() const noexcept { return natsio_token_status(c_token()); }

    /// False while pending, true once succeeded; throws the operation's
    /// error if it failed.
    bool check() const {
        Status status = natsio_token_status(c_token());
        if (status == NATSIO_PENDING) {
            return false;
        }
        detail::check(status);
        return true;
    }

    /// The message the operation produced (a request's reply); throws its
    /// error, or IllegalStateError while pending.
    Msg msg() const {
        natsio_msg* msg = nullptr;
        Status status = natsio_token_msg(c_token(), &msg);
        if (status == NATSIO_PENDING) {
            throw IllegalStateError(status, "the operation is still pending");
        }
        detail::check(status);
        return Msg(msg);
    }

    /// Cancels the operation (it completes with CancelledError);
    /// IllegalStateError if it had already completed.
    void cancel() const { detail::check(natsio_token_cancel(c_token())); }

    /// A future fulfilled on completion (a library dispatcher thread). One
    /// per token: a second call throws IllegalStateError. The future stays
    /// valid when this Token is destroyed first.
    template <class T>
    std::future<T> make_future() const {
        using Box = detail::CallbackBox<detail::PromiseSlot<T>>;
        auto* box = new Box(detail::PromiseSlot<T>{std::promise<T>(), handle_});
        std::future<T> future = box->value.promise.get_future();
        Status status = natsio_token_on_complete(c_token(), &detail::fulfil_promise<T>, box,
                                                 &Box::release);
        Box::settle(box, status);
        return future;
    }

    natsio_token* c_token() const noexcept { return handle_ ? handle_->token : nullptr; }
    explicit operator bool() const noexcept { return handle_ != nullptr; }

private:
    std::shared_ptr<detail::TokenHandle> handle_;
};

/// The result of an asynchronous operation: a std::future fed by the
/// operation's completion token, plus the token for polling and cancelling.
/// T is Msg (request_async) or void (flush, drain).
template <class T>
class AsyncResult {
public:
    explicit AsyncResult(Token token)
        : token_(std::move(token)), future_(token_.template make_future<T>()) {}

    /// Blocks until completion; returns the result or throws its error.
    /// Once only (like std::future::get).
    T get() { return future_.get(); }
    /// Blocks until completion.
    void wait() const { future_.wait(); }
    /// Blocks up to `timeout`; true once completed.
    bool wait_for(milliseconds timeout) const {
        return future_.wait_for(timeout) == std::future_status::ready;
    }
    bool ready() const { return wait_for(milliseconds(0)); }
    /// Cancels the operation (it completes with CancelledError).
    void cancel() const { token_.cancel(); }

    /// The std::future itself (get() is unusable afterwards).
    std::future<T> take_future() noexcept { return std::move(future_); }
    const Token& token() const noexcept { return token_; }

private:
    Token token_;
    std::future<T> future_;
};

// ---------------------------------------------------------------------------
// Replies (request_many)
// ---------------------------------------------------------------------------

/// Options of Client::request_many (see natsio_request_many_options).
struct RequestManyOptions {
    /// Stop after this many replies; 0: no limit.
    std::int64_t max_msgs = 0;
    /// Stop when no reply arrives for this long after the first; 0: none.
    milliseconds stall{0};
    /// Overall deadline; 0: the client's request timeout.
    milliseconds timeout{0};
};

/// The replies of one request_many, owned (natsio_replies_free). Iterate
/// with next() or range-for; each step may block as the request allows.
class Replies {
public:
    using iterator = detail::MsgIterator<Replies>;

    Replies() noexcept = default;
    /// Takes ownership of an iterator from the C API.
    explicit Replies(natsio_replies* replies) noexcept : replies_(replies) {}
    Replies(Replies&& other) noexcept : replies_(std::exchange(other.replies_, nullptr)) {}
    Replies& operator=(Replies&& other) noexcept {
        if (this != &other) {
            natsio_replies_free(replies_);
            replies_ = std::exchange(other.replies_, nullptr);
        }
        return *this;
    }
    Replies(const Replies&) = delete;
    Replies& operator=(const Replies&) = delete;
    ~Replies() { natsio_replies_free(replies_); }

    /// The next reply, or std::nullopt once the replies have ended.
    std::optional<Msg> next() {
        natsio_msg* msg = nullptr;
        Status status = natsio_replies_next(replies_, &msg);
        if (status == NATSIO_DONE) {
            return std::nullopt;
        }
        detail::check(status);
        return Msg(msg);
    }

    /// Ends the replies early; thread-safe: a next() blocked on another
    /// thread returns std::nullopt at once.
    void close() { detail::check(natsio_replies_close(replies_)); }

    iterator begin() { return iterator(this); }
    iterator end() noexcept { return iterator(); }

    natsio_replies* c_replies() const noexcept { return replies_; }

private:
    friend iterator;
    std::optional<Msg> next_item() { return next(); }

    natsio_replies* replies_ = nullptr;
};

// ---------------------------------------------------------------------------
// Subscriptions
// ---------------------------------------------------------------------------

enum class PendingPolicy : std::int32_t {
    DropNew = NATSIO_POLICY_DROP_NEW,
    DropOld = NATSIO_POLICY_DROP_OLD,
    Block = NATSIO_POLICY_BLOCK,
    Error = NATSIO_POLICY_ERROR,
};

/// Settings of a subscription; unset fields keep the library's defaults.
struct SubscribeOptions {
    /// Queue group to join.
    // (The explicit initializers keep C++20 designated initialization,
    // `{.queue = "q"}`, free of -Wmissing-field-initializers.)
    std::optional<std::string_view> queue = std::nullopt;
    /// Pending limits (negative: unlimited).
    std::optional<std::int64_t> pending_msgs_limit = std::nullopt;
    std::optional<std::int64_t> pending_bytes_limit = std::nullopt;
    std::optional<PendingPolicy> policy = std::nullopt;
};

using SubStats = natsio_sub_stats;

/// An owned subscription (natsio_sub_free on destruction: unsubscribes and
/// waits for a running handler, so no handler runs after it is destroyed).
class Subscription {
public:
    /// A range over the next messages: ends when the subscription closes
    /// (or, with a finite timeout, when none arrives in time).
    class Messages {
    public:
        using iterator = detail::MsgIterator<Messages>;
        Messages(const Subscription* sub, milliseconds timeout) noexcept
            : sub_(sub), timeout_(timeout) {}
        iterator begin() { return iterator(this); }
        iterator end() noexcept { return iterator(); }

    private:
        friend iterator;
        std::optional<Msg> next_item() {
            natsio_msg* msg = nullptr;
            Status status = natsio_sub_next_msg(sub_->c_sub(), detail::to_ms(timeout_), &msg);
            if (status == NATSIO_ERR_SUBSCRIPTION_CLOSED || status == NATSIO_ERR_TIMEOUT) {
                return std::nullopt;
            }
            detail::check(status);
            return Msg(msg);
        }

        const Subscription* sub_;
        milliseconds timeout_;
    };

    Subscription() noexcept = default;
    /// Takes ownership of a subscription from the C API.
    explicit Subscription(natsio_sub* sub) noexcept : sub_(sub) {}
    Subscription(Subscription&& other) noexcept : sub_(std::exchange(other.sub_, nullptr)) {}
    Subscription& operator=(Subscription&& other) noexcept {
        if (this != &other) {
            natsio_sub_free(sub_);
            sub_ = std::exchange(other.sub_, nullptr);
        }
        return *this;
    }
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;
    ~Subscription() { natsio_sub_free(sub_); }

    /// Iterator mode: the next message, waiting up to `timeout` (negative:
    /// forever). TimeoutError, SubscriptionClosedError, SlowConsumerError,
    /// NoRespondersError (a 503 status message).
    Msg next_msg(milliseconds timeout = forever) const {
        natsio_msg* msg = nullptr;
        detail::check(natsio_sub_next_msg(sub_, detail::to_ms(timeout), &msg));
        return Msg(msg);
    }

    /// Like next_msg, but std::nullopt when none arrives within `timeout`.
    std::optional<Msg> try_next_msg(milliseconds timeout) const {
        natsio_msg* msg = nullptr;
        Status status = natsio_sub_next_msg(sub_, detail::to_ms(timeout), &msg);
        if (status == NATSIO_ERR_TIMEOUT) {
            return std::nullopt;
        }
        detail::check(status);
        return Msg(msg);
    }

    /// `for (natsio::Msg& m : sub.messages()) ...` until the subscription
    /// closes (unsubscribe_after, drain, client closed) or `timeout` passes
    /// without a message.
    Messages messages(milliseconds timeout = forever) const noexcept { return {this, timeout}; }

    /// Stops delivery at once, discarding queued messages.
    void unsubscribe() { detail::check(natsio_sub_unsubscribe(sub_)); }
    /// Closes after `max` messages in total.
    void unsubscribe_after(std::uint64_t max) {
        detail::check(natsio_sub_unsubscribe_after(sub_, max));
    }
    /// Graceful close: the backlog is handled first. Negative: forever.
    void drain(milliseconds timeout = forever) {
        detail::check(natsio_sub_drain(sub_, detail::to_ms(timeout)));
    }
    AsyncResult<void> drain_async() {
        natsio_token* token = nullptr;
        detail::check(natsio_sub_drain_async(sub_, &token));
        return AsyncResult<void>(Token(token));
    }

    std::string_view subject() const noexcept { return detail::view_of(natsio_sub_subject(sub_)); }
    std::optional<std::string_view> queue() const noexcept {
        const char* queue = natsio_sub_queue(sub_);
        if (queue == nullptr) {
            return std::nullopt;
        }
        return std::string_view(queue);
    }
    std::uint64_t sid() const noexcept { return natsio_sub_sid(sub_); }
    bool is_closed() const noexcept { return natsio_sub_is_closed(sub_); }
    SubStats stats() const {
        SubStats stats{};
        detail::check(natsio_sub_get_stats(sub_, &stats));
        return stats;
    }

    natsio_sub* c_sub() const noexcept { return sub_; }
    explicit operator bool() const noexcept { return sub_ != nullptr; }
    /// Gives up ownership of the handle.
    natsio_sub* release() noexcept { return std::exchange(sub_, nullptr); }

private:
    natsio_sub* sub_ = nullptr;
};

namespace detail {

struct HandlerSlot {
    MsgHandler handler;
    std::shared_ptr<ErrorSink> sink;
};

/// The C message callback: runs the handler, and reports instead of
/// propagating whatever it throws.
inline void deliver_message(void* user_data, natsio_sub* /*sub*/, const natsio_msg* msg) noexcept {
    const HandlerSlot& slot = static_cast<CallbackBox<HandlerSlot>*>(user_data)->value;
    try {
        slot.handler(MsgView(msg));
    } catch (...) {
        if (slot.sink) {
            slot.sink->report_handler_exception(std::current_exception(), natsio_msg_sid(msg),
                                                natsio_msg_subject(msg));
        }
    }
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------

/// Owned connection options (natsio_options_new / _free). Setters throw
/// ConfigError for invalid values and return *this for chaining.
class Options {
public:
    Options() : sink_(std::make_shared<detail::ErrorSink>()) {
        detail::check(natsio_options_new(&opts_));
    }
    Options(Options&& other) noexcept
        : opts_(std::exchange(other.opts_, nullptr)),
          sink_(std::move(other.sink_)),
          event_handler_(std::move(other.event_handler_)) {}
    Options& operator=(Options&& other) noexcept {
        if (this != &other) {
            natsio_options_free(opts_);
            opts_ = std::exchange(other.opts_, nullptr);
            sink_ = std::move(other.sink_);
            event_handler_ = std::move(other.event_handler_);
        }
        return *this;
    }
    Options(const Options&) = delete;
    Options& operator=(const Options&) = delete;
    ~Options() { natsio_options_free(opts_); }

    /// One URL or several, comma-separated.
    Options& set_url(std::string_view url) {
        detail::CString c_url(url, "url");
        detail::check(natsio_options_set_url(opts_, c_url.get()));
        return *this;
    }
    Options& set_servers(const std::vector<std::string>& urls) {
        std::vector<const char*> c_urls;
        c_urls.reserve(urls.size());
        for (const std::string& url : urls) {
            c_urls.push_back(url.c_str());
        }
        detail::check(natsio_options_set_servers(opts_, c_urls.data(), c_urls.size()));
        return *this;
    }
    Options& set_name(std::optional<std::string_view> name) {
        detail::OptionalCString c_name(name, "name");
        detail::check(natsio_options_set_name(opts_, c_name.get()));
        return *this;
    }
    Options& set_connect_timeout(milliseconds timeout) {
        detail::check(natsio_options_set_connect_timeout_ms(opts_, detail::to_ms(timeout)));
        return *this;
    }
    Options& set_echo(bool echo) {
        detail::check(natsio_options_set_echo(opts_, echo));
        return *this;
    }
    Options& set_user_password(std::string_view user, std::optional<std::string_view> password) {
        detail::CString c_user(user, "user");
        detail::OptionalCString c_password(password, "password");
        detail::check(natsio_options_set_user_password(opts_, c_user.get(), c_password.get()));
        return *this;
    }
    Options& set_token(std::string_view token) {
        detail::CString c_token(token, "token");
        detail::check(natsio_options_set_token(opts_, c_token.get()));
        return *this;
    }
    Options& set_ping(milliseconds interval, std::int32_t max_outstanding) {
        detail::check(natsio_options_set_ping(opts_, detail::to_ms(interval), max_outstanding));
        return *this;
    }
    Options& set_max_pending_size(std::int64_t bytes) {
        detail::check(natsio_options_set_max_pending_size(opts_, bytes));
        return *this;
    }
    Options& set_flush_timeout(milliseconds timeout) {
        detail::check(natsio_options_set_flush_timeout_ms(opts_, detail::to_ms(timeout)));
        return *this;
    }
    Options& set_drain_timeout(milliseconds timeout) {
        detail::check(natsio_options_set_drain_timeout_ms(opts_, detail::to_ms(timeout)));
        return *this;
    }
    Options& set_request_timeout(milliseconds timeout) {
        detail::check(natsio_options_set_request_timeout_ms(opts_, detail::to_ms(timeout)));
        return *this;
    }
    Options& set_inbox_prefix(std::string_view prefix) {
        detail::CString c_prefix(prefix, "inbox prefix");
        detail::check(natsio_options_set_inbox_prefix(opts_, c_prefix.get()));
        return *this;
    }
    Options& set_pending_limits(std::int64_t msgs, std::int64_t bytes) {
        detail::check(natsio_options_set_pending_limits(opts_, msgs, bytes));
        return *this;
    }
    Options& set_max_control_line(std::int64_t bytes) {
        detail::check(natsio_options_set_max_control_line(opts_, bytes));
        return *this;
    }

    /// Receives the asynchronous errors of clients connected with these
    /// options (on the client's event thread), and the exceptions their
    /// message handlers throw. Clients keep the handler they connected with.
    Options& on_error(ErrorHandler handler) {
        auto sink = std::make_shared<detail::ErrorSink>();
        sink->handler = std::move(handler);
        using Box = detail::CallbackBox<std::shared_ptr<detail::ErrorSink>>;
        auto* box = new Box(sink);
        Status status = natsio_options_set_error_callback(
            opts_, &detail::ErrorSink::on_library_error, box, &Box::release);
        Box::settle(box, status);
        sink_ = std::move(sink);
        // Exceptions of the event handler go to the error handler of the
        // same options: re-register it with the new sink.
        if (event_handler_) {
            register_event_handler();
        }
        return *this;
    }

    /// Receives the connection lifecycle events of clients connected with
    /// these options, in order, on the client's event thread. Exceptions it
    /// throws are reported to the error handler (AsyncError::Source::Handler).
    /// An empty handler removes it.
    Options& on_event(EventHandler handler) {
        event_handler_ = std::move(handler);
        if (!event_handler_) {
            detail::check(natsio_options_set_event_callback(opts_, nullptr, nullptr, nullptr));
            return *this;
        }
        register_event_handler();
        return *this;
    }

    // Reconnect ------------------------------------------------------------

    /// Whether to reconnect after losing the connection (default true).
    Options& set_allow_reconnect(bool allow) {
        detail::check(natsio_options_set_allow_reconnect(opts_, allow));
        return *this;
    }
    /// Consecutive failed attempts per server before it leaves the pool
    /// (default 60; -1: unlimited).
    Options& set_max_reconnect_attempts(std::int64_t attempts) {
        detail::check(natsio_options_set_max_reconnect_attempts(opts_, attempts));
        return *this;
    }
    /// Wait between attempts to one server, doubling up to `wait_max`
    /// (defaults 2 s and 8 s).
    Options& set_reconnect_wait(milliseconds wait, milliseconds wait_max) {
        detail::check(natsio_options_set_reconnect_wait(opts_, detail::to_ms(wait),
                                                        detail::to_ms(wait_max)));
        return *this;
    }
    /// Random extra wait per attempt, plain and TLS (defaults 100 ms, 1 s).
    Options& set_reconnect_jitter(milliseconds jitter, milliseconds jitter_tls) {
        detail::check(natsio_options_set_reconnect_jitter(opts_, detail::to_ms(jitter),
                                                          detail::to_ms(jitter_tls)));
        return *this;
    }
    /// Bytes of publishes kept while disconnected (default 8 MiB; 0: the
    /// default; -1: none, publishes throw ReconnectBufExceededError).
    Options& set_reconnect_buf_size(std::int64_t bytes) {
        detail::check(natsio_options_set_reconnect_buf_size(opts_, bytes));
        return *this;
    }
    /// Try servers in the configured order (default: randomized).
    Options& set_no_randomize(bool no_randomize) {
        detail::check(natsio_options_set_no_randomize(opts_, no_randomize));
        return *this;
    }
    /// Ignore the servers announced in INFO.
    Options& set_ignore_discovered_servers(bool ignore) {
        detail::check(natsio_options_set_ignore_discovered_servers(opts_, ignore));
        return *this;
    }
    /// Return a reconnecting client instead of throwing when no server is
    /// reachable at connect.
    Options& set_retry_on_failed_connect(bool retry) {
        detail::check(natsio_options_set_retry_on_failed_connect(opts_, retry));
        return *this;
    }
    /// Keep retrying a server that rejects the credentials twice in a row.
    Options& set_ignore_auth_error_abort(bool ignore) {
        detail::check(natsio_options_set_ignore_auth_error_abort(opts_, ignore));
        return *this;
    }

    // Authentication (one kind per Options; a second throws ConfigError) ----

    /// An NKey seed ("SU...").
    Options& set_nkey_seed(std::string_view seed) {
        detail::CString c_seed(seed, "nkey seed");
        detail::check(natsio_options_set_nkey_seed(opts_, c_seed.get()));
        return *this;
    }
    /// A file holding an NKey seed, read on every connect.
    Options& set_nkey_file(std::string_view path) {
        detail::CString c_path(path, "nkey file");
        detail::check(natsio_options_set_nkey_file(opts_, c_path.get()));
        return *this;
    }
    /// A .creds file (user JWT + NKey seed), read on every connect.
    Options& set_credentials_file(std::string_view path) {
        detail::CString c_path(path, "credentials file");
        detail::check(natsio_options_set_credentials_file(opts_, c_path.get()));
        return *this;
    }
    /// Application callbacks giving the user JWT and signing the server's
    /// nonce, on every connect, on a library thread. An exception from
    /// either fails that connection attempt (a natsio::Error's status is
    /// passed on from `sign`).
    Options& set_auth_callbacks(JwtHandler jwt, SignHandler sign) {
        if (!jwt || !sign) {
            throw InvalidArgumentError(NATSIO_ERR_NULL_ARGUMENT,
                                       "both auth callbacks are required");
        }
        using Box = detail::CallbackBox<detail::AuthSlot>;
        auto* box = new Box(detail::AuthSlot{std::move(jwt), std::move(sign), std::make_unique<std::mutex>(), {}});
        Status status = natsio_options_set_auth_callbacks(
            opts_, &detail::AuthSlot::on_jwt, &detail::AuthSlot::on_sign, box, &Box::release);
        Box::settle(box, status);
        return *this;
    }

    // TLS --------------------------------------------------------------------

    /// Requires TLS, verified against `ca_file` (nullopt: the system roots),
    /// presenting `cert_file` + `key_file` for mutual TLS (both or neither).
    Options& set_tls(std::optional<std::string_view> ca_file,
                     std::optional<std::string_view> cert_file = std::nullopt,
                     std::optional<std::string_view> key_file = std::nullopt) {
        detail::OptionalCString c_ca(ca_file, "CA file");
        detail::OptionalCString c_cert(cert_file, "certificate file");
        detail::OptionalCString c_key(key_file, "key file");
        detail::check(natsio_options_set_tls(opts_, c_ca.get(), c_cert.get(), c_key.get()));
        return *this;
    }
    /// Verify the server certificate against `hostname` instead of the URL's.
    Options& set_tls_hostname(std::string_view hostname) {
        detail::CString c_hostname(hostname, "TLS hostname");
        detail::check(natsio_options_set_tls_hostname(opts_, c_hostname.get()));
        return *this;
    }
    /// Start TLS before the server's INFO (servers with handshake_first).
    Options& set_tls_handshake_first(bool first) {
        detail::check(natsio_options_set_tls_handshake_first(opts_, first));
        return *this;
    }

    const natsio_options* c_options() const noexcept { return opts_; }
    natsio_options* c_options() noexcept { return opts_; }

private:
    friend class Client;

    void register_event_handler() {
        using Box = detail::CallbackBox<detail::EventSlot>;
        auto* box = new Box(detail::EventSlot{event_handler_, sink_});
        Status status = natsio_options_set_event_callback(opts_, &detail::EventSlot::on_event,
                                                          box, &Box::release);
        Box::settle(box, status);
    }

    natsio_options* opts_ = nullptr;
    std::shared_ptr<detail::ErrorSink> sink_;
    EventHandler event_handler_;
};

// ---------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------

enum class ConnStatus : std::int32_t {
    Disconnected = NATSIO_CONN_DISCONNECTED,
    Connecting = NATSIO_CONN_CONNECTING,
    Connected = NATSIO_CONN_CONNECTED,
    Reconnecting = NATSIO_CONN_RECONNECTING,
    Draining = NATSIO_CONN_DRAINING,
    Closed = NATSIO_CONN_CLOSED,
};

using ClientStats = natsio_client_stats;

/// An owned connection (natsio_client_free on destruction: closes it; after
/// that no handler of the client runs again). Thread-safe.
class Client {
public:
    /// Connects to `url` (comma-separated URLs allowed) with default options.
    static Client connect(std::string_view url) {
        detail::CString c_url(url, "url");
        natsio_client* client = nullptr;
        detail::check(natsio_client_connect_url(c_url.get(), &client));
        return Client(client, std::make_shared<detail::ErrorSink>());
    }

    /// Connects with `options`, which may be destroyed afterwards.
    static Client connect(const Options& options) {
        natsio_client* client = nullptr;
        detail::check(natsio_client_connect(options.opts_, &client));
        return Client(client, options.sink_);
    }

    Client() noexcept = default;
    Client(Client&& other) noexcept
        : client_(std::exchange(other.client_, nullptr)), sink_(std::move(other.sink_)) {}
    Client& operator=(Client&& other) noexcept {
        if (this != &other) {
            natsio_client_free(client_);
            client_ = std::exchange(other.client_, nullptr);
            sink_ = std::move(other.sink_);
        }
        return *this;
    }
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;
    ~Client() { natsio_client_free(client_); }

    /// Publishes `data` to `subject` (buffered; flush() to wait for the server).
    void publish(std::string_view subject, ByteView data = {}) const {
        detail::CString c_subject(subject, "subject");
        detail::check(natsio_client_publish(client_, c_subject.get(), data.data(), data.size()));
    }

    /// Publishes with an optional reply subject and headers.
    void publish_with(std::string_view subject, std::optional<std::string_view> reply,
                      HeadersView headers, ByteView data) const {
        detail::CString c_subject(subject, "subject");
        detail::OptionalCString c_reply(reply, "reply");
        detail::check(natsio_client_publish_with(client_, c_subject.get(), c_reply.get(),
                                                 headers.c_headers(), data.data(), data.size()));
    }

    /// Iterator-mode subscription (next_msg, messages()).
    Subscription subscribe(std::string_view subject, const SubscribeOptions& options = {}) const {
        detail::CString c_subject(subject, "subject");
        detail::OptionalCString c_queue(options.queue, "queue");
        natsio_sub_options c_options = to_c(options);
        natsio_sub* sub = nullptr;
        detail::check(
            natsio_client_subscribe(client_, c_subject.get(), c_queue.get(), &c_options, &sub));
        return Subscription(sub);
    }

    /// Callback-mode subscription: `handler` runs for every message on the
    /// subscription's dispatcher thread, in order, until the Subscription
    /// is destroyed or closed.
    Subscription subscribe(std::string_view subject, MsgHandler handler,
                           const SubscribeOptions& options = {}) const {
        detail::CString c_subject(subject, "subject");
        detail::OptionalCString c_queue(options.queue, "queue");
        natsio_sub_options c_options = to_c(options);
        using Box = detail::CallbackBox<detail::HandlerSlot>;
        auto* box = new Box(detail::HandlerSlot{std::move(handler), sink_});
        natsio_sub* sub = nullptr;
        Status status = natsio_client_subscribe_callback(client_, c_subject.get(), c_queue.get(),
                                                         &c_options, &detail::deliver_message,
                                                         box, &Box::release, &sub);
        Box::settle(box, status);
        return Subscription(sub);
    }

    /// Sends a request and waits for one reply. `timeout` 0 or less: the
    /// client's request timeout. NoRespondersError, TimeoutError.
    Msg request(std::string_view subject, ByteView data = {}, milliseconds timeout = {},
                HeadersView headers = {}) const {
        detail::CString c_subject(subject, "subject");
        natsio_msg* reply = nullptr;
        detail::check(natsio_client_request(client_, c_subject.get(), headers.c_headers(),
                                            data.data(), data.size(), detail::to_ms(timeout),
                                            &reply));
        return Msg(reply);
    }

    /// Starts a request; the reply (or its error) arrives through the result.
    AsyncResult<Msg> request_async(std::string_view subject, ByteView data = {},
                                   milliseconds timeout = {}, HeadersView headers = {}) const {
        detail::CString c_subject(subject, "subject");
        natsio_token* token = nullptr;
        detail::check(natsio_client_request_async(client_, c_subject.get(), headers.c_headers(),
                                                  data.data(), data.size(),
                                                  detail::to_ms(timeout), &token));
        return AsyncResult<Msg>(Token(token));
    }

    /// Sends one request and iterates over its replies.
    Replies request_many(std::string_view subject, ByteView data = {},
                         const RequestManyOptions& options = {},
                         HeadersView headers = {}) const {
        detail::CString c_subject(subject, "subject");
        natsio_request_many_options c_options{options.max_msgs, detail::to_ms(options.stall),
                                              detail::to_ms(options.timeout)};
        natsio_replies* replies = nullptr;
        detail::check(natsio_client_request_many(client_, c_subject.get(), headers.c_headers(),
                                                 data.data(), data.size(), &c_options,
                                                 &replies));
        return Replies(replies);
    }

    /// Waits until the server processed everything sent before. Negative
    /// timeout: the flush timeout option.
    void flush(milliseconds timeout = forever) const {
        detail::check(natsio_client_flush(client_, detail::to_ms(timeout)));
    }
    AsyncResult<void> flush_async() const {
        natsio_token* token = nullptr;
        detail::check(natsio_client_flush_async(client_, &token));
        return AsyncResult<void>(Token(token));
    }

    /// Drains and closes. Negative timeout: the drain timeout option.
    /// DrainTimeoutError when it took longer (the client is closed anyway).
    void drain(milliseconds timeout = forever) const {
        detail::check(natsio_client_drain(client_, detail::to_ms(timeout)));
    }
    AsyncResult<void> drain_async(milliseconds timeout = forever) const {
        natsio_token* token = nullptr;
        detail::check(natsio_client_drain_async(client_, detail::to_ms(timeout), &token));
        return AsyncResult<void>(Token(token));
    }

    /// Closes the connection (idempotent); the object stays usable for
    /// queries, and later calls throw ConnectionClosedError.
    void close() const { detail::check(natsio_client_close(client_)); }

    ConnStatus status() const noexcept {
        return static_cast<ConnStatus>(natsio_client_status(client_));
    }
    std::int64_t max_payload() const noexcept { return natsio_client_max_payload(client_); }

    /// The server's latest INFO, as JSON.
    std::string server_info() const {
        char* json = nullptr;
        detail::check(natsio_client_server_info(client_, &json));
        return detail::take_string(json);
    }
    std::string connected_url() const {
        char* url = nullptr;
        detail::check(natsio_client_connected_url(client_, &url));
        return detail::take_string(url);
    }
    std::string new_inbox() const {
        char* inbox = nullptr;
        detail::check(natsio_client_new_inbox(client_, &inbox));
        return detail::take_string(inbox);
    }
    ClientStats stats() const {
        ClientStats stats{};
        detail::check(natsio_client_get_stats(client_, &stats));
        return stats;
    }

    /// Drops the connection and reconnects (to another server of the pool
    /// when there is one); returns at once. IllegalStateError when not
    /// connected right now.
    void force_reconnect() const { detail::check(natsio_client_force_reconnect(client_)); }

    /// One PING/PONG round trip. Blocks; negative timeout: the flush timeout.
    std::chrono::microseconds rtt(milliseconds timeout = milliseconds{-1}) const {
        std::int64_t rtt_us = 0;
        detail::check(natsio_client_rtt(client_, detail::to_ms(timeout), &rtt_us));
        return std::chrono::microseconds(rtt_us);
    }

    /// The server pool, configured and discovered.
    std::vector<std::string> servers() const {
        char* joined = nullptr;
        detail::check(natsio_client_servers(client_, &joined));
        std::string text = detail::take_string(joined);
        std::vector<std::string> urls;
        std::size_t start = 0;
        while (start < text.size()) {
            std::size_t comma = text.find(',', start);
            if (comma == std::string::npos) {
                comma = text.size();
            }
            if (comma > start) {
                urls.push_back(text.substr(start, comma - start));
            }
            start = comma + 1;
        }
        return urls;
    }

    natsio_client* c_client() const noexcept { return client_; }
    explicit operator bool() const noexcept { return client_ != nullptr; }

private:
    Client(natsio_client* client, std::shared_ptr<detail::ErrorSink> sink) noexcept
        : client_(client), sink_(std::move(sink)) {}

    static natsio_sub_options to_c(const SubscribeOptions& options) {
        natsio_sub_options c_options{};
        detail::check(natsio_sub_options_init(&c_options));
        if (options.pending_msgs_limit) {
            c_options.pending_msgs_limit = *options.pending_msgs_limit;
        }
        if (options.pending_bytes_limit) {
            c_options.pending_bytes_limit = *options.pending_bytes_limit;
        }
        if (options.policy) {
            c_options.policy = static_cast<std::int32_t>(*options.policy);
        }
        return c_options;
    }

    natsio_client* client_ = nullptr;
    std::shared_ptr<detail::ErrorSink> sink_;
};

}  // namespace natsio

#endif  // NATSIO_CPP_NATSIO_HPP
