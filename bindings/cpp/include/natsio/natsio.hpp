/// @file
/// The header-only C++17 binding of libnatsio: clients, messages,
/// headers, subscriptions, futures and feeds (natsio/natsio.hpp).
///
/// A thin layer over include/natsio.h that adds idiom, not behaviour. The C
/// ABI has one asynchronous model and this header mirrors it:
///   - every operation has a blocking form `x(...)` and a future-returning
///     form `x_async(...)` that returns a natsio::Future<T>, one template
///     over the C completion token (natsio_token): get(), wait_for(),
///     ready(), cancel(), then(callback), to_std_future();
///   - every stream of items (Subscription, Replies of request_many, and in
///     jetstream.hpp Messages of consume, KvWatcher and StoredMsgs of
///     get_last_msgs_for; in object.hpp ObjectWatcher; in service.hpp a
///     service's Endpoint of Request) is one template,
///     natsio::Feed, over the C iterator contract: next(timeout) returning
///     std::optional (std::nullopt once the iteration ended), next_async(),
///     a push mode set_callback(on_item, on_end), stop(), stats(), and
///     range-for;
///   - move-only RAII owners for every C handle; each destructor calls the
///     handle's _free, so the C guarantees carry over (after a Feed or a
///     Client is destroyed, none of its callbacks runs again);
///   - std::string_view / ByteView in, borrowed views out (MsgView,
///     HeadersView), valid as long as their owner;
///   - exceptions (natsio/errors.hpp) instead of status codes; callbacks
///     never let an exception unwind into the library: it goes to the
///     client's error handler.
///
/// Timeouts follow the header's one rule: a positive std::chrono duration
/// (converted to milliseconds), or one of the named constants natsio::no_wait
/// (where the C function accepts it), natsio::default_timeout (the owning
/// handle's default: the client's request, flush or drain timeout, the
/// JetStream context's timeout; for an iterator or a future, as long as it
/// takes) and natsio::forever. Every timeout parameter defaults to
/// natsio::default_timeout.
///
/// Threads: every type may be used from any thread, except Options (configure
/// from one thread), like the C handles they own. Callbacks (message
/// handlers, Feed and Future callbacks) run on the library's dispatcher
/// threads; Future::then callbacks run on the client's event thread, so they
/// should not block.
#ifndef NATSIO_CPP_NATSIO_HPP
#define NATSIO_CPP_NATSIO_HPP

#include <natsio.h>
#include <natsio/errors.hpp>

#include <algorithm>
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

/// The C++ binding of libnatsio: a header-only layer over include/natsio.h
/// (natsio/natsio.hpp, natsio/jetstream.hpp, natsio/object.hpp,
/// natsio/errors.hpp).
namespace natsio {

/// Every timeout and delay of the binding is a std::chrono::milliseconds.
using std::chrono::milliseconds;

// The timeout constants of natsio.h as durations (see the header preamble).

/// Do not wait: only what is ready now (an iterator's next, Future::wait_for,
/// JetStream::next); elsewhere the library throws InvalidArgumentError.
inline constexpr milliseconds no_wait{NATSIO_NO_WAIT};
/// The owning handle's default timeout; for iterators and futures, as long
/// as it takes.
inline constexpr milliseconds default_timeout{NATSIO_TIMEOUT_DEFAULT};
/// Wait as long as it takes.
inline constexpr milliseconds forever{NATSIO_WAIT_FOREVER};

/// The URL a client connects to when given none (an empty URL):
/// NATSIO_DEFAULT_URL, "nats://127.0.0.1:4222" (nats.go's DefaultURL).
inline constexpr std::string_view default_url{NATSIO_DEFAULT_URL};

/// The library version, e.g. "0.1.0".
inline std::string_view version() noexcept { return natsio_version(); }

/// Worker threads of the library's runtime; only before the first
/// connection (IllegalStateError afterwards), 1..=256.
inline void set_worker_threads(std::uint32_t count) {
    detail::check(natsio_runtime_set_worker_threads(count));
}

/// How long a thread blocked for an answer (a request's reply, a JetStream
/// or KV call, a blocking next) spins before it sleeps; process-wide, any
/// thread, any time. Zero turns spinning off; the default is 200 us.
/// Longer than 2^32-1 us is clamped. See natsio_runtime_set_wait_spin_us.
inline void set_wait_spin(std::chrono::microseconds spin) noexcept {
    const auto us = std::clamp<std::chrono::microseconds::rep>(spin.count(), 0, UINT32_MAX);
    natsio_runtime_set_wait_spin_us(static_cast<std::uint32_t>(us));
}

// ---------------------------------------------------------------------------
// Byte views
// ---------------------------------------------------------------------------

/// A borrowed, read-only run of bytes: what publish and respond take as a
/// payload. Converts implicitly from text (string_view, std::string, C
/// strings) and from contiguous containers of std::byte / unsigned char
/// (std::vector<std::uint8_t>, std::array, std::span in C++20). It does
/// not own the bytes: they must outlive the view (a call copies what it
/// needs before it returns).
class ByteView {
public:
    /// No bytes (data() is null, size() 0).
    constexpr ByteView() noexcept = default;
    /// The `size` bytes at `data` (which may be null when `size` is 0).
    ByteView(const void* data, std::size_t size) noexcept
        : data_(static_cast<const std::byte*>(data)), size_(size) {}
    /// The bytes of `text`.
    ByteView(std::string_view text) noexcept : ByteView(text.data(), text.size()) {}
    /// The bytes of the NUL-terminated `text`, without the NUL (`text`
    /// must not be null).
    ByteView(const char* text) noexcept : ByteView(std::string_view(text)) {}
    /// The bytes of `text`.
    ByteView(const std::string& text) noexcept : ByteView(text.data(), text.size()) {}

    template <class Container,
              class Element = std::remove_cv_t<
                  std::remove_pointer_t<decltype(std::data(std::declval<const Container&>()))>>,
              class = std::enable_if_t<std::is_same_v<Element, std::byte> ||
                                       std::is_same_v<Element, unsigned char>>>
    /// The elements of a contiguous container of std::byte or unsigned
    /// char (std::vector<std::uint8_t>, std::array, std::span, ...).
    ByteView(const Container& bytes) noexcept
        : ByteView(std::data(bytes), std::size(bytes)) {}

    /// The first byte (null for a default-built view).
    const std::byte* data() const noexcept { return data_; }
    /// The number of bytes.
    std::size_t size() const noexcept { return size_; }
    /// True when there are no bytes.
    bool empty() const noexcept { return size_ == 0; }
    /// Iterator to the first byte.
    const std::byte* begin() const noexcept { return data_; }
    /// Iterator past the last byte.
    const std::byte* end() const noexcept { return data_ + size_; }
    /// Byte `i` (unchecked: `i` must be below size()).
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

/// A timeout as the C `timeout_ms`: the named constants pass through
/// unchanged, as does any other value (the library judges it).
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

/// Appends `text` to `out` as a JSON string literal (the configuration
/// JSON the binding writes: object metadata, service configurations).
inline void append_json_string(std::string& out, std::string_view text) {
    static const char hex[] = "0123456789abcdef";
    out += '"';
    for (char c : text) {
        unsigned char u = static_cast<unsigned char>(c);
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (u < 0x20) {
                out += "\\u00";
                out += hex[u >> 4];
                out += hex[u & 0xF];
            } else {
                out += c;
            }
        }
    }
    out += '"';
}

/// Appends the (name, value) pairs of `pairs` (a std::map of strings, ...)
/// to `out` as a JSON object of strings.
template <class Pairs>
void append_json_string_map(std::string& out, const Pairs& pairs) {
    out += '{';
    bool first = true;
    for (const auto& pair : pairs) {
        if (!first) {
            out += ',';
        }
        first = false;
        append_json_string(out, pair.first);
        out += ':';
        append_json_string(out, pair.second);
    }
    out += '}';
}

/// Takes a string the library returned through `char **`.
inline std::string take_string(char* s) {
    std::string copy = s != nullptr ? std::string(s) : std::string();
    natsio_string_free(s);
    return copy;
}

/// Takes a handle the library returned (a status, an ack, ...): the
/// value `convert(handle)` makes of it, after which `free(handle)` runs
/// (also when `convert` throws).
template <class Handle, class Free, class Convert>
auto take_handle(Handle* handle, Free free, Convert convert) {
    std::unique_ptr<Handle, Free> owner(handle, free);
    return convert(static_cast<const Handle*>(handle));
}

/// Takes a list the library returned: a std::vector of `convert(item)`
/// for each of its `count(list)` items (`get(list, i)`, borrowed), after
/// which `free(list)` runs (also when `convert` throws).
template <class List, class Count, class Get, class Free, class Convert>
auto take_list(List* list, Count count, Get get, Free free, Convert convert) {
    return take_handle(list, free, [&](const List* items) {
        std::vector<decltype(convert(get(items, std::size_t{0})))> out;
        std::size_t n = count(items);
        out.reserve(n);
        for (std::size_t i = 0; i < n; ++i) {
            out.push_back(convert(get(items, i)));
        }
        return out;
    });
}

/// Takes a natsio_string_list (the header's one list encoding for names).
inline std::vector<std::string> take_string_list(natsio_string_list* list) {
    return take_list(list, natsio_string_list_count, natsio_string_list_get,
                     natsio_string_list_free,
                     [](const char* item) { return std::string(view_of(item)); });
}

/// A list argument (`const char *const *items, size_t count`) built from
/// a range of strings; the CStrings keep the text alive for the call.
class CStringArray {
public:
    template <class It>
    CStringArray(It first, It last, const char* what) {
        for (It it = first; it != last; ++it) {
            strings_.push_back(std::make_unique<CString>(std::string_view(*it), what));
        }
        pointers_.reserve(strings_.size());
        for (const auto& s : strings_) {
            pointers_.push_back(s->get());
        }
    }
    const char* const* data() const noexcept {
        return pointers_.empty() ? nullptr : pointers_.data();
    }
    std::size_t size() const noexcept { return pointers_.size(); }

private:
    std::vector<std::unique_ptr<CString>> strings_;
    std::vector<const char*> pointers_;
};

/// User data handed to the library with a release function. The library
/// may call the release (on another thread) before the registering call has
/// returned, e.g. a token callback for an operation that already completed:
/// a release that happens while the registering call is still running is
/// deferred to `settle`, which also frees the box when the call failed
/// (the C rule: a failed registration never releases).
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
            std::exception_ptr error = last_error(status);
            delete box;
            std::rethrow_exception(error);
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
    /// Where the error comes from.
    enum class Source {
        /// Reported by the library (slow consumer, server -ERR, lost
        /// connection, drain timeout, ...): `status` says which.
        Library,
        /// A callback of the application threw (a subscription's message
        /// handler, a Feed's item or end handler, a Future::then callback,
        /// the event handler, an auth callback); `status` is NATSIO_OK and
        /// `error` holds what it threw. The exception never reaches the C
        /// library, and delivery goes on with the next item.
        Handler,
    };

    /// Where it comes from: the library or a throwing handler.
    Source source = Source::Library;
    /// The library's status code (NATSIO_OK for Source::Handler).
    Status status = NATSIO_OK;
    /// Library detail text, or the handler exception's what().
    std::string text;
    /// Subscription concerned (0 and "" when none).
    std::uint64_t sid = 0;
    /// Subject concerned ("" when none): the subscription's subject for a
    /// subscription's errors and its message handler's exceptions, else
    /// the item's (a JetStream message's, a Key-Value entry's key, ...).
    std::string subject;
    /// The mapped natsio::Error (Library) or the handler's exception.
    std::exception_ptr error;

    /// Throws `error`, e.g. to catch it by type:
    /// `try { e.rethrow(); } catch (const natsio::SlowConsumerError&) {}`.
    [[noreturn]] void rethrow() const { std::rethrow_exception(error); }
};

/// Receives a client's asynchronous errors and its handlers' exceptions
/// (Options::on_error), on a library thread. If it throws, the error it
/// was given is written to standard error instead.
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

using SinkPtr = std::shared_ptr<ErrorSink>;

/// Reports what a callback threw to `sink`, or to stderr when there is no
/// sink (an owner built from a raw C handle).
inline void report_thrown(const SinkPtr& sink, std::exception_ptr thrown, std::uint64_t sid = 0,
                          const char* subject = nullptr) noexcept {
    if (sink) {
        sink->report_handler_exception(std::move(thrown), sid, subject);
    } else {
        ErrorSink().report_handler_exception(std::move(thrown), sid, subject);
    }
}

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
    /// An attempt to reconnect failed (nats.go's ReconnectErrCB), one per
    /// attempt while the client keeps trying; status: the attempt's error;
    /// text: "reconnect to <url> failed: <why>". Comes after Disconnected,
    /// before Reconnected or Closed.
    ReconnectFailed = NATSIO_EVENT_RECONNECT_FAILED,
};

/// Receives (kind, cause status or NATSIO_OK, text borrowed for the call).
using EventHandler = std::function<void(EventKind, Status, std::string_view)>;

/// Gives the user JWT to present, on every connect (on a library thread).
using JwtHandler = std::function<std::string()>;
/// Signs the server's nonce with the user's Ed25519 key: exactly 64 bytes.
using SignHandler = std::function<std::array<std::uint8_t, 64>(ByteView nonce)>;

/// The credentials of one CONNECT (Options::set_authenticator), named as
/// the protocol names them (`token` is CONNECT's auth_token, `sig` the
/// URL-safe base64 of the nonce's Ed25519 signature, without padding). An
/// empty optional is not sent.
struct AuthFields {
    /// The user of user/password authentication.
    std::optional<std::string> user;
    /// The password.
    std::optional<std::string> pass;
    /// A token (CONNECT's auth_token).
    std::optional<std::string> token;
    /// A user JWT (decentralized authentication; with `sig`).
    std::optional<std::string> jwt;
    /// An NKey public key ("U..."; with `sig`).
    std::optional<std::string> nkey;
    /// The nonce's Ed25519 signature, URL-safe base64 without padding.
    std::optional<std::string> sig;
};
/// Gives the credentials of one connection attempt; `nonce` is the
/// server's (empty when it sent none).
using AuthenticatorHandler = std::function<AuthFields(std::string_view nonce)>;

/// What nkey_sign gives: the seed's public key and the signature.
struct NkeySignature {
    /// The public key of the seed ("U...").
    std::string public_key;
    /// The 64-byte Ed25519 signature as CONNECT carries it: URL-safe
    /// base64 without padding.
    std::string sig;
};

/// Signs `data` (a server's nonce) with the NKey seed `seed` ("SU..."), as
/// the library signs for NKey and JWT authentication (nats.c's
/// nats_Sign): for an authenticator (Options::set_authenticator) that
/// holds its seed. Any thread. ConfigError for a bad seed,
/// InvalidArgumentError for a seed with a NUL byte, InvalidUtf8Error.
/// (natsio_nkey_sign.)
inline NkeySignature nkey_sign(std::string_view seed, ByteView data) {
    detail::CString c_seed(seed, "seed");
    char* public_key = nullptr;
    char* sig = nullptr;
    detail::check(natsio_nkey_sign(c_seed.get(), reinterpret_cast<const std::uint8_t*>(data.data()),
                                   data.size(), &public_key, &sig));
    NkeySignature out;
    out.public_key = detail::take_string(public_key);
    out.sig = detail::take_string(sig);
    return out;
}

namespace detail {

/// For an option callback's catch block: reports the exception being
/// handled to `sink` (the client's on_error), and returns the status the C
/// callback fails with: an Error's own, NATSIO_ERR_INTERNAL for anything
/// else.
inline natsio_status report_current_exception(const std::shared_ptr<ErrorSink>& sink) noexcept {
    if (sink) {
        sink->report_handler_exception(std::current_exception(), 0, nullptr);
    }
    try {
        throw;
    } catch (const Error& e) {
        return e.status();
    } catch (...) {
        return NATSIO_ERR_INTERNAL;
    }
}

struct EventSlot {
    EventHandler handler;
    std::shared_ptr<ErrorSink> sink;

    static void on_event(void* user_data, natsio_event_kind kind, natsio_status status,
                         const char* text) noexcept {
        const EventSlot& slot = static_cast<CallbackBox<EventSlot>*>(user_data)->value;
        try {
            slot.handler(static_cast<EventKind>(kind), status, view_of(text));
        } catch (...) {
            report_current_exception(slot.sink);
        }
    }
};

struct AuthSlot {
    JwtHandler jwt;
    SignHandler sign;
    std::shared_ptr<ErrorSink> sink;
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
            report_current_exception(slot.sink);
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
        } catch (...) {
            return report_current_exception(slot.sink);
        }
    }
};

/// The general authenticator of Options (set_authenticator), called on
/// every connect.
struct AuthenticatorSlot {
    AuthenticatorHandler handler;
    std::shared_ptr<ErrorSink> sink;
    // The C contract: the given strings stay valid until the next call.
    std::unique_ptr<std::mutex> mutex;
    AuthFields last;

    static natsio_status on_fields(void* user_data, const std::uint8_t* nonce, std::size_t len,
                                   natsio_auth_fields* out) noexcept {
        auto& slot = static_cast<CallbackBox<AuthenticatorSlot>*>(user_data)->value;
        try {
            AuthFields given =
                slot.handler(std::string_view(reinterpret_cast<const char*>(nonce), len));
            for (const auto* f : {&given.user, &given.pass, &given.token, &given.jwt, &given.nkey,
                                  &given.sig}) {
                if (*f && (*f)->find('\0') != std::string::npos) {
                    throw InvalidArgumentError(NATSIO_ERR_INVALID_ARGUMENT,
                                               "an authenticator field holds a NUL character");
                }
            }
            std::lock_guard<std::mutex> lock(*slot.mutex);
            slot.last = std::move(given);
            auto c = [](const std::optional<std::string>& f) { return f ? f->c_str() : nullptr; };
            out->user = c(slot.last.user);
            out->pass = c(slot.last.pass);
            out->token = c(slot.last.token);
            out->jwt = c(slot.last.jwt);
            out->nkey = c(slot.last.nkey);
            out->sig = c(slot.last.sig);
            return NATSIO_OK;
        } catch (...) {
            return report_current_exception(slot.sink);
        }
    }
};

/// The user/password or token callback of Options (the callable forms of
/// set_user_password and set_token), called on every connect.
struct CredentialSlot {
    std::function<std::pair<std::string, std::string>()> user_password;
    std::function<std::string()> token;
    std::shared_ptr<ErrorSink> sink;
    // The C contract: the returned strings stay valid until the next call.
    std::unique_ptr<std::mutex> mutex;
    std::pair<std::string, std::string> last;

    static natsio_status on_user_password(void* user_data, const char** user_out,
                                          const char** password_out) noexcept {
        auto& slot = static_cast<CallbackBox<CredentialSlot>*>(user_data)->value;
        try {
            std::pair<std::string, std::string> given = slot.user_password();
            std::lock_guard<std::mutex> lock(*slot.mutex);
            slot.last = std::move(given);
            *user_out = slot.last.first.c_str();
            *password_out = slot.last.second.c_str();
            return NATSIO_OK;
        } catch (...) {
            return report_current_exception(slot.sink);
        }
    }

    static const char* on_token(void* user_data) noexcept {
        auto& slot = static_cast<CallbackBox<CredentialSlot>*>(user_data)->value;
        try {
            std::string token = slot.token();
            std::lock_guard<std::mutex> lock(*slot.mutex);
            slot.last.first = std::move(token);
            return slot.last.first.c_str();
        } catch (...) {
            report_current_exception(slot.sink);
            return nullptr;  // fails this connection attempt
        }
    }
};

/// The reconnect delay handler of Options::set_reconnect_delay_callback
/// behind the C callback: an exception is reported and fails the attempt.
struct ReconnectDelaySlot {
    std::function<std::chrono::milliseconds(std::int64_t)> handler;
    std::shared_ptr<ErrorSink> sink;

    static std::int64_t on_delay(void* user_data, std::int64_t attempts) noexcept {
        auto& slot = static_cast<CallbackBox<ReconnectDelaySlot>*>(user_data)->value;
        try {
            std::int64_t ms = slot.handler(attempts).count();
            return ms < 0 ? 0 : ms;
        } catch (...) {
            report_current_exception(slot.sink);
            return -2;  // any negative but NATSIO_RECONNECT_DELAY_DEFAULT fails the attempt
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
    /// One (name, value) pair, both borrowed from the map.
    using Entry = std::pair<std::string_view, std::string_view>;

    /// No headers.
    HeadersView() noexcept = default;
    /// A view of a map borrowed from the C API (null: no headers); the map
    /// must outlive the view.
    explicit HeadersView(const natsio_headers* headers) noexcept : headers_(headers) {}

    /// The first value of `name` (exact, case-sensitive), if any.
    /// InvalidArgumentError for a name with a NUL byte (as for every
    /// `name` below).
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
    /// True when there are no pairs (also for "no headers").
    bool empty() const noexcept { return size() == 0; }

    /// The pair at `index` in wire order; NotFoundError when out of range.
    Entry entry(std::size_t index) const {
        const char* name = nullptr;
        const char* value = nullptr;
        detail::check(natsio_headers_entry(headers_, index, &name, &value));
        return {detail::view_of(name), detail::view_of(value)};
    }

    /// Forward iterator over the (name, value) pairs in wire order; it
    /// yields Entry values and is valid while the map is unchanged.
    class const_iterator {
    public:
        /// A forward iterator.
        using iterator_category = std::forward_iterator_tag;
        /// A (name, value) pair.
        using value_type = Entry;
        /// Distance between two iterators.
        using difference_type = std::ptrdiff_t;
        /// Pointer to an entry (operator* returns by value).
        using pointer = const Entry*;
        /// What operator* returns: an Entry by value.
        using reference = Entry;

        /// A singular iterator.
        const_iterator() noexcept = default;
        /// The pair at `index` of `view`.
        const_iterator(const HeadersView* view, std::size_t index) noexcept
            : view_(view), index_(index) {}
        /// The current pair (HeadersView::entry).
        Entry operator*() const { return view_->entry(index_); }
        /// Advances to the next pair.
        const_iterator& operator++() noexcept {
            ++index_;
            return *this;
        }
        /// Advances to the next pair; returns the iterator before.
        const_iterator operator++(int) noexcept {
            const_iterator before = *this;
            ++index_;
            return before;
        }
        /// Same position (iterators of the same view).
        bool operator==(const const_iterator& other) const noexcept {
            return index_ == other.index_;
        }
        /// Different positions.
        bool operator!=(const const_iterator& other) const noexcept { return !(*this == other); }

    private:
        const HeadersView* view_ = nullptr;
        std::size_t index_ = 0;
    };

    /// Iterates the (name, value) pairs in wire order.
    const_iterator begin() const noexcept { return {this, 0}; }
    /// Iterator past the last pair.
    const_iterator end() const noexcept { return {this, size()}; }

    /// True when there is a header map (even an empty one).
    explicit operator bool() const noexcept { return headers_ != nullptr; }
    /// The C map (null for "no headers"), still owned by its owner.
    const natsio_headers* c_headers() const noexcept { return headers_; }

protected:
    /// The viewed map; Headers owns it.
    const natsio_headers* headers_ = nullptr;
};

/// An owned, mutable header map (natsio_headers_new / _free): a move-only
/// RAII owner, usable wherever a HeadersView is (publish_with, request,
/// PublishOptions::headers, ...). Values read through it are borrowed
/// until the map is changed or destroyed.
class Headers : public HeadersView {
public:
    /// An empty map.
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

    /// Takes over the map of `other`, which is left without one.
    Headers(Headers&& other) noexcept : HeadersView(std::exchange(other.headers_, nullptr)) {}
    /// Frees this map and takes over the map of `other`.
    Headers& operator=(Headers&& other) noexcept {
        if (this != &other) {
            natsio_headers_free(mutable_headers());
            headers_ = std::exchange(other.headers_, nullptr);
        }
        return *this;
    }
    /// Not copyable: use copy_of() for a copy.
    Headers(const Headers&) = delete;
    /// Not copyable: use copy_of() for a copy.
    Headers& operator=(const Headers&) = delete;
    /// Frees the map (natsio_headers_free).
    ~Headers() { natsio_headers_free(mutable_headers()); }

    /// Appends a value to `name` (BadHeadersError for unsafe text).
    Headers& add(std::string_view name, std::string_view value) {
        detail::CString c_name(name, "header name");
        detail::CString c_value(value, "header value");
        detail::check(natsio_headers_add(mutable_headers(), c_name.get(), c_value.get()));
        return *this;
    }

    /// Replaces every value of `name` with `value` (BadHeadersError for
    /// unsafe text).
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

    /// Gives up ownership of the handle (free it with natsio_headers_free);
    /// this object is left without a map.
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
class MsgView;
template <class T>
class Future;

namespace detail {
/// Starts `fn(args..., &token)` and wraps the token in a Future<T>.
template <class T, class Fn, class... Args>
Future<T> start_async(const SinkPtr& sink, Fn fn, Args... args);
}  // namespace detail

}  // namespace natsio
// detail::MsgVerbs, the generated verb layer of natsio_msg.
#include <natsio/gen/msg_verbs.hpp>
namespace natsio {

/// Delivery metadata of a message consumed from a JetStream consumer
/// (MsgView::js_metadata), parsed from its ack subject. The views point into
/// the message and are valid while it is.
struct JsMsgMetadata {
    /// The stream's name.
    std::string_view stream;
    /// The consumer's name.
    std::string_view consumer;
    /// The JetStream domain, if the ack subject names one.
    std::optional<std::string_view> domain = std::nullopt;
    /// How many times the message was delivered (1 the first time).
    std::uint64_t num_delivered = 0;
    /// The message's sequence in the stream.
    std::uint64_t stream_seq = 0;
    /// Its delivery sequence for this consumer.
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
class MsgView : public detail::MsgVerbs<MsgView> {
public:
    /// No message (operator bool is false).
    MsgView() noexcept = default;
    /// A view of a message borrowed from the C API; it must outlive the
    /// view.
    explicit MsgView(const natsio_msg* msg) noexcept : msg_(msg) {}

    /// The subject the message was published to.
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

    /// The description beside the inline status (e.g. "Request Timeout"
    /// for 408); empty when there is none.
    std::string_view status_description() const noexcept {
        const char* description = natsio_msg_status_description(msg_);
        return description != nullptr ? std::string_view(description) : std::string_view();
    }

    /// Whether the received header block had corrupt lines (skipped:
    /// headers() holds the good ones); the message is delivered anyway.
    bool headers_malformed() const noexcept { return natsio_msg_headers_malformed(msg_); }

    /// The id of the subscription it was delivered on (0 for no message).
    std::uint64_t sid() const noexcept { return natsio_msg_sid(msg_); }

    /// Publishes a reply to the message's reply subject, through the
    /// client that received it (NoReplySubjectError when it has none;
    /// ConnectionClosedError, and the errors of Client::publish).
    void respond(ByteView data) const { raw_respond(data); }
    /// Publishes a reply with `headers`; errors as respond(data).
    void respond(HeadersView headers, ByteView data) const {
        raw_respond_with(headers.c_headers(), data);
    }

    /// An owned copy that outlives the handler or list it came from
    /// (cheap: it shares the buffer).
    inline Msg clone() const;

    // JetStream acknowledgements -------------------------------------------

    /// Acknowledges the message (`+ACK`), buffered like a publish; errors
    /// as described for the class.
    void ack() const { raw_ack(); }
    /// Acknowledges and waits up to `timeout` (default: the client's
    /// request timeout) for the server to confirm it; TimeoutError.
    void ack_sync(milliseconds timeout = default_timeout) const {
        raw_ack_sync(detail::to_ms(timeout));
    }
    /// The future form of ack_sync: completes once the server confirmed the
    /// ack (the message may be destroyed meanwhile).
    inline Future<void> ack_sync_async(milliseconds timeout = default_timeout) const;
    /// Negative acknowledgement (`-NAK`): redelivered, after `delay` if
    /// positive.
    void nak(milliseconds delay = milliseconds{0}) const { raw_nak(detail::to_ms(delay)); }
    /// Terminates delivery (`+TERM`): never redelivered; the server records
    /// `reason`.
    void term(std::optional<std::string_view> reason = std::nullopt) const { raw_term(reason); }
    /// Still being worked on (`+WPI`): resets the ack wait; any number of
    /// times before the final ack.
    void in_progress() const { raw_in_progress(); }
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

    /// True when there is a message.
    explicit operator bool() const noexcept { return msg_ != nullptr; }
    /// The C message (null for none), still owned by its owner.
    const natsio_msg* c_msg() const noexcept { return msg_; }

protected:
    /// The viewed message; Msg owns it.
    const natsio_msg* msg_ = nullptr;

private:
    friend class detail::MsgVerbs<MsgView>;
    // natsio_msg_ack_sync takes the message as const.
    const natsio_msg* c_handle() const noexcept { return msg_; }
    // A view reports to no client's error handler.
    static const detail::SinkPtr& sink() noexcept {
        static const detail::SinkPtr none;
        return none;
    }
};

/// An owned message (natsio_msg_free on destruction): a move-only RAII
/// owner of what Client::request, Feed::next, JetStream::next and
/// MsgView::clone return. Views taken from it are valid while it lives.
class Msg : public MsgView {
public:
    /// No message.
    Msg() noexcept = default;
    /// Takes ownership of a message from the C API.
    explicit Msg(natsio_msg* owned) noexcept : MsgView(owned) {}
    /// Takes over the message of `other`, which is left without one.
    Msg(Msg&& other) noexcept : MsgView(std::exchange(other.msg_, nullptr)) {}
    /// Frees this message and takes over the one of `other`.
    Msg& operator=(Msg&& other) noexcept {
        if (this != &other) {
            natsio_msg_free(mutable_msg());
            msg_ = std::exchange(other.msg_, nullptr);
        }
        return *this;
    }
    /// Not copyable: use clone() for a second owner.
    Msg(const Msg&) = delete;
    /// Not copyable: use clone() for a second owner.
    Msg& operator=(const Msg&) = delete;
    /// Frees the message (natsio_msg_free).
    ~Msg() { natsio_msg_free(mutable_msg()); }

    /// Gives up ownership of the handle (free it with natsio_msg_free).
    natsio_msg* release() noexcept { return const_cast<natsio_msg*>(std::exchange(msg_, nullptr)); }

private:
    natsio_msg* mutable_msg() const noexcept { return const_cast<natsio_msg*>(msg_); }
};

namespace detail {
// A message result (see the other from_c overloads below).
inline Msg from_c(natsio_msg* msg, const SinkPtr&) noexcept { return Msg(msg); }
}  // namespace detail

inline Msg MsgView::clone() const {
    return raw_clone();
}

/// Receives messages of a callback subscription, on the subscription's
/// dispatcher thread; the MsgView is borrowed for the call (clone() it to
/// keep it). May throw: the exception is caught before it reaches the
/// library and reported to the client's error handler (Options::on_error)
/// as an AsyncError of Source::Handler carrying it and the subscription's
/// subject; the next message is still delivered.
using MsgHandler = std::function<void(MsgView)>;

// ---------------------------------------------------------------------------
// Futures: one template over the C completion token
// ---------------------------------------------------------------------------

namespace detail {

/// The token handle, shared by the Future(s) holding it and a pending
/// then() callback, so the callback still runs after the Future is gone
/// (natsio_token_free would otherwise withdraw it).
struct TokenHandle {
    explicit TokenHandle(natsio_token* token) noexcept : token(token) {}
    TokenHandle(const TokenHandle&) = delete;
    TokenHandle& operator=(const TokenHandle&) = delete;
    ~TokenHandle() { natsio_token_free(token); }
    natsio_token* token;
};

/// Reads a completed token's typed result: one specialisation per C++
/// result type, generated (gen/<header>_results.hpp) from the ABI's result
/// kinds; each calls the matching natsio_token_* accessor (read_as).
/// `read` returns the accessor's status and sets `out` only on NATSIO_OK;
/// `sink` is the error sink owners built from the result report to.
template <class T>
struct TokenReader;

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

/// What every generated TokenReader does: reads the C result through
/// `reader` (natsio_token_<kind>) and, on NATSIO_OK, makes it the C++
/// value with from_c (the overload for its C type).
template <class T, class C>
Status read_as(Status (*reader)(const natsio_token*, C*), const natsio_token* token,
               const SinkPtr& sink, std::optional<T>& out) {
    C value{};
    Status status = reader(token, &value);
    if (status == NATSIO_OK) {
        out.emplace(from_c(value, sink));
    }
    return status;
}

/// The result of a completed token as T: the value, std::nullopt for an
/// iterator's end when T is an optional, or the operation's error thrown.
template <class T>
T read_result(const natsio_token* token, const SinkPtr& sink) {
    if constexpr (std::is_void_v<T>) {
        (void)sink;
        check(natsio_token_status(token));
    } else if constexpr (is_optional<T>::value) {
        using Value = typename T::value_type;
        std::optional<Value> out;
        Status status = TokenReader<Value>::read(token, sink, out);
        if (status == NATSIO_DONE) {
            return std::nullopt;
        }
        check(status);
        return out;
    } else {
        std::optional<T> out;
        check(TokenReader<T>::read(token, sink, out));
        return std::move(*out);
    }
}

}  // namespace detail

/// The completion of one asynchronous operation (a natsio_token), typed by
/// its result: void, Msg, std::string (JSON), std::uint64_t (revision,
/// sequence, count), std::vector<std::string> (names), Client, and in
/// jetstream.hpp PubAck, KeyValue, KvEntry, StoredMsg, MsgList,
/// KvEntryList, KvStatus, std::vector<KvStatus>, Messages, KvWatcher, in
/// object.hpp ObjectStore,
/// ObjectInfo, std::vector<ObjectInfo>, ObjectStoreStatus,
/// std::vector<ObjectStoreStatus>, ObjectReader, ObjectWatcher;
/// std::optional<Msg> / std::optional<KvEntry> / std::optional<StoredMsg> /
/// std::optional<ObjectInfo> / std::optional<std::string> (a key) /
/// std::optional<Request> (service.hpp) for an iterator's next_async and std::optional<ObjectChunk> for
/// ObjectReader::next_async (std::nullopt: the iteration ended).
/// Move-only; destroying a pending Future lets the operation run on (an
/// iterator's next_async is withdrawn and its item stays in the iterator),
/// unless a then() callback waits for it.
template <class T>
class Future {
public:
    /// The result type T.
    using value_type = T;

    /// An empty Future, holding no operation (operator bool is false).
    Future() noexcept = default;
    /// Takes ownership of a token from the C API; `sink` receives what a
    /// then() callback throws (and the errors of owners built from T).
    explicit Future(natsio_token* token, detail::SinkPtr sink = nullptr)
        : handle_(std::make_shared<detail::TokenHandle>(token)), sink_(std::move(sink)) {}
    /// Takes over the token of another Future, which is left empty.
    Future(Future&&) noexcept = default;
    /// Drops this Future's hold on its token and takes over the other's.
    Future& operator=(Future&&) noexcept = default;
    /// Not copyable: one owner per operation (then() shares it with the
    /// callback).
    Future(const Future&) = delete;
    /// Not copyable.
    Future& operator=(const Future&) = delete;
    /// Drops this Future's hold on the token: a pending operation runs on
    /// (see the class), and a registered then() callback still runs.
    ~Future() = default;

    /// Waits as long as it takes, then returns the result or throws the
    /// operation's error (CancelledError after cancel()). Results that own
    /// a running handle (Client, Messages, KvWatcher, ObjectReader,
    /// ObjectWatcher) can be taken once (IllegalStateError after).
    T get() {
        detail::check(natsio_token_wait(c_token(), NATSIO_WAIT_FOREVER));
        return detail::read_result<T>(c_token(), sink_);
    }

    /// Waits up to `timeout` (no_wait: only checks; default_timeout or
    /// forever: as long as it takes); true once completed, whatever the
    /// outcome.
    bool wait_for(milliseconds timeout) const {
        Status status = natsio_token_wait(c_token(), detail::to_ms(timeout));
        if (status == NATSIO_ERR_TIMEOUT) {
            return false;
        }
        detail::check(status);
        return true;
    }
    /// Waits as long as it takes for the operation to complete, whatever
    /// the outcome (get() then returns or throws at once).
    void wait() const { (void)wait_for(forever); }

    /// True once the operation completed (never blocks).
    bool ready() const noexcept { return natsio_token_is_done(c_token()); }

    /// NATSIO_PENDING while it runs, then NATSIO_OK, NATSIO_DONE (an
    /// iterator's end) or the operation's error status.
    Status status() const noexcept { return natsio_token_status(c_token()); }

    /// Cancels the operation: it completes with CancelledError (a then()
    /// callback still runs). IllegalStateError if it had already completed.
    void cancel() const { detail::check(natsio_token_cancel(c_token())); }

    /// Calls `callback(Future<T>)` once when the operation completes, with a
    /// ready Future sharing this one's token (its get() does not block), on
    /// a library dispatcher thread (the client's event thread: do not block
    /// in it). It runs even if this Future is destroyed first: the token is
    /// kept until then. One callback per Future (IllegalStateError for a
    /// second). What the callback throws goes to the client's error handler.
    template <class Callback>
    void then(Callback callback) const {
        using Box = detail::CallbackBox<ThenSlot<Callback>>;
        auto* box = new Box(ThenSlot<Callback>{std::move(callback), handle_, sink_});
        Status status = natsio_token_on_complete(c_token(), &run_then<Callback>, box,
                                                 &Box::release);
        Box::settle(box, status);
    }

    /// A std::future fed by then(): valid after this Future is destroyed.
    std::future<T> to_std_future() const {
        auto promise = std::make_shared<std::promise<T>>();
        std::future<T> future = promise->get_future();
        then([promise](Future<T> done) {
            try {
                if constexpr (std::is_void_v<T>) {
                    done.get();
                    promise->set_value();
                } else {
                    promise->set_value(done.get());
                }
            } catch (...) {
                promise->set_exception(std::current_exception());
            }
        });
        return future;
    }

    /// The C token (null for an empty Future), still owned by this Future.
    natsio_token* c_token() const noexcept { return handle_ ? handle_->token : nullptr; }
    /// True when this Future holds an operation.
    explicit operator bool() const noexcept { return handle_ != nullptr; }

private:
    template <class Callback>
    struct ThenSlot {
        Callback callback;
        std::shared_ptr<detail::TokenHandle> keep_alive;
        detail::SinkPtr sink;
    };

    Future(std::shared_ptr<detail::TokenHandle> handle, detail::SinkPtr sink) noexcept
        : handle_(std::move(handle)), sink_(std::move(sink)) {}

    template <class Callback>
    static void run_then(void* user_data, natsio_token* /*token*/) noexcept {
        auto& slot = static_cast<detail::CallbackBox<ThenSlot<Callback>>*>(user_data)->value;
        // The slot's reference moves into the ready Future, so the token is
        // freed here (allowed inside its callback) unless the callback keeps
        // the Future or another owner still holds it.
        try {
            slot.callback(Future<T>(std::move(slot.keep_alive), slot.sink));
        } catch (...) {
            detail::report_thrown(slot.sink, std::current_exception());
        }
    }

    std::shared_ptr<detail::TokenHandle> handle_;
    detail::SinkPtr sink_;
};

namespace detail {

template <class T, class Fn, class... Args>
Future<T> start_async(const SinkPtr& sink, Fn fn, Args... args) {
    natsio_token* token = nullptr;
    check(fn(args..., &token));
    return Future<T>(token, sink);
}

// How a C result becomes its C++ value (the generated verbs' blocking
// forms and token readers call these): one overload per C type.
inline std::uint64_t from_c(std::uint64_t value, const SinkPtr&) noexcept { return value; }
inline std::int64_t from_c(std::int64_t value, const SinkPtr&) noexcept { return value; }
inline std::string from_c(char* text, const SinkPtr&) { return take_string(text); }
inline std::vector<std::string> from_c(natsio_string_list* list, const SinkPtr&) {
    return take_string_list(list);
}

}  // namespace detail

inline Future<void> MsgView::ack_sync_async(milliseconds timeout) const {
    return raw_ack_sync_async(detail::to_ms(timeout));
}

}  // namespace natsio
// detail::ClientVerbs and detail::SubVerbs, the generated verb layers of
// natsio_client and natsio_sub.
#include <natsio/gen/client_verbs.hpp>
#include <natsio/gen/sub_verbs.hpp>
// detail::<Iterator>Feed, the C functions of each iterator kind (generated).
#include <natsio/gen/feeds.hpp>
namespace natsio {

// ---------------------------------------------------------------------------
// Feed: one template over the C iterator contract
// ---------------------------------------------------------------------------

/// Live counters of an iterator: delivered, dropped, pending_items,
/// pending_bytes, stalls (natsio_iter_stats).
using IterStats = natsio_iter_stats;

/// How an iteration ended, as a Feed's end handler receives it: null when
/// it ended without error (stopped, drained, finished), else the exception
/// for the status that ended it (ConnectionClosedError, SlowConsumerError,
/// ConsumerDeletedError, BucketNotFoundError, ...).
using EndHandler = std::function<void(std::exception_ptr error)>;

namespace detail {
/// What an iterator's C item (natsio_msg, natsio_kv_entry, ...) is in C++:
/// Item (owned, what next() returns), View (borrowed, what a callback
/// gets), and sid/subject (what a throwing callback is reported with).
/// Written by hand per item type; the iterator side (the C functions) is
/// generated (gen/feeds.hpp).
template <class CItem>
struct FeedItem;

/// True when a FeedItem converts its C item itself (`static Item
/// take(CItem*)`, which also frees it), as for items that are not
/// handles: a key listing's strings.
template <class Items, class = void>
struct has_take : std::false_type {};
template <class Items>
struct has_take<Items, std::void_t<decltype(Items::take(nullptr))>> : std::true_type {};

/// True when an iterator's Traits names the subject its handle is about
/// (`static const char* owner_subject(const Handle*)`: a subscription's
/// subject), which callback errors then report instead of the item's.
template <class Traits, class = void>
struct has_owner_subject : std::false_type {};
template <class Traits>
struct has_owner_subject<Traits, std::void_t<decltype(Traits::owner_subject(nullptr))>>
    : std::true_type {};
}  // namespace detail

/// A stream of items read through the C iterator contract, implemented once
/// for every iterator handle (Traits names the C functions; see
/// detail::SubFeed and the others). The library fills the buffer whether or
/// not anyone reads; this owner reads it in one of three ways:
///   - next(timeout): the next item, std::nullopt once the iteration ended
///     (and on every later call); TimeoutError when nothing came in time
///     (the iteration goes on); the error that ended it otherwise (thrown
///     again by every later call);
///   - next_async(): a Future of the next item (std::nullopt at the end);
///     pending ones are served in call order;
///   - set_callback(on_item, on_end): push mode; on_item gets every item
///     (a view borrowed for the call) in order, one at a time, on a
///     library thread of this iterator, then on_end is called once;
/// and range-for (`for (auto& item : feed)`), which calls next() until the
/// end and throws the error that ended it. stop() ends it (idempotent);
/// once it returns, on_end has been called and no callback runs again
/// (unless stop() is called from the callback itself). The destructor
/// stops and frees. next() may be called from several threads; destroying
/// a Feed while another thread is inside next() is the caller's error.
template <class Traits>
class Feed {
    using Items = detail::FeedItem<typename Traits::CItem>;

public:
    /// The C iterator handle (natsio_sub, natsio_replies,
    /// natsio_stored_msgs, ...).
    using handle_type = typename Traits::Handle;
    /// What next() returns: an owned item (Msg, KvEntry, StoredMsg,
    /// ObjectInfo, or a key as std::string).
    using value_type = typename Items::Item;
    /// What a callback receives: a view borrowed for the call.
    using view_type = typename Items::View;
    /// Receives each item in push mode. May throw: the exception goes to
    /// the client's error handler and delivery goes on.
    using ItemHandler = std::function<void(view_type)>;

    /// Input iterator over the items, for range-for: each step calls
    /// next(forever) and throws what it throws; the iterator equals end()
    /// once the iteration ended.
    class iterator {
    public:
        /// A single-pass input iterator.
        using iterator_category = std::input_iterator_tag;
        /// The owned item (Msg, KvEntry, StoredMsg, ObjectInfo).
        using value_type = typename Feed::value_type;
        /// Distance between two iterators.
        using difference_type = std::ptrdiff_t;
        /// Pointer to the current item.
        using pointer = value_type*;
        /// Reference to the current item, owned by the iterator until the
        /// next step (move it out to keep it).
        using reference = value_type&;

        /// The end iterator.
        iterator() noexcept = default;  // the end
        /// An iterator at the first item of `feed`: waits for it.
        explicit iterator(const Feed* feed) : feed_(feed) { advance(); }

        /// The current item.
        reference operator*() noexcept { return *current_; }
        /// The current item's members.
        pointer operator->() noexcept { return &*current_; }
        /// Waits for the next item (next(forever)).
        iterator& operator++() {
            advance();
            return *this;
        }
        /// Waits for the next item (returns nothing: an input iterator).
        void operator++(int) { advance(); }
        /// True when both are at the end, or neither is.
        bool operator==(const iterator& other) const noexcept {
            return current_.has_value() == other.current_.has_value();
        }
        /// Negation of operator==.
        bool operator!=(const iterator& other) const noexcept { return !(*this == other); }

    private:
        void advance() {
            current_.reset();
            current_ = feed_->next(forever);
        }

        const Feed* feed_ = nullptr;
        std::optional<value_type> current_;
    };

    /// No iterator: its calls throw InvalidArgumentError.
    Feed() noexcept = default;
    /// Takes ownership of an iterator handle from the C API; `sink`
    /// receives what callbacks throw (stderr without one).
    explicit Feed(handle_type* handle, detail::SinkPtr sink = nullptr) noexcept
        : handle_(handle), sink_(std::move(sink)) {}
    /// Takes over the iterator of `other`, which is left without one.
    Feed(Feed&& other) noexcept
        : handle_(std::exchange(other.handle_, nullptr)), sink_(std::move(other.sink_)) {}
    /// Stops and frees this iterator, then takes over the one of `other`.
    Feed& operator=(Feed&& other) noexcept {
        if (this != &other) {
            Traits::free(handle_);
            handle_ = std::exchange(other.handle_, nullptr);
            sink_ = std::move(other.sink_);
        }
        return *this;
    }
    /// Not copyable: one owner per iterator.
    Feed(const Feed&) = delete;
    /// Not copyable: one owner per iterator.
    Feed& operator=(const Feed&) = delete;
    /// Stops the iteration (if needed) and frees the handle: once it
    /// returns, none of this Feed's callbacks runs again.
    ~Feed() { Traits::free(handle_); }

    /// The next item, waiting up to `timeout` (no_wait: only one already
    /// buffered; default_timeout or forever: as long as it takes);
    /// std::nullopt once the iteration ended. TimeoutError when none came
    /// in time; IllegalStateError in push mode; the error that ended the
    /// iteration.
    std::optional<value_type> next(milliseconds timeout = default_timeout) const {
        typename Traits::CItem* item = nullptr;
        Status status = Traits::next(handle_, detail::to_ms(timeout), &item);
        if (status == NATSIO_DONE) {
            return std::nullopt;
        }
        detail::check(status);
        if constexpr (detail::has_take<Items>::value) {
            return Items::take(item);  // an item that is not a handle (a key)
        } else {
            return value_type(item);
        }
    }

    /// A Future of the next item (std::nullopt once the iteration ended).
    /// Destroying it before an item reached it leaves the items here.
    Future<std::optional<value_type>> next_async() const {
        natsio_token* token = nullptr;
        detail::check(Traits::next_async(handle_, &token));
        return Future<std::optional<value_type>>(token, sink_);
    }

    /// Push mode: `on_item` receives every item, buffered ones first, then
    /// `on_end` (if set) once with how the iteration ended. The handlers
    /// are released after that final call. IllegalStateError if a callback
    /// is set already or next_async() futures are pending.
    void set_callback(ItemHandler on_item, EndHandler on_end = {}) const {
        if (!on_item) {
            throw NullArgumentError(NATSIO_ERR_NULL_ARGUMENT, "the item handler is empty");
        }
        using Box = detail::CallbackBox<CallbackSlot>;
        std::string owner_subject;
        if constexpr (detail::has_owner_subject<Traits>::value) {
            owner_subject = detail::view_of(Traits::owner_subject(handle_));
        }
        auto* box = new Box(
            CallbackSlot{std::move(on_item), std::move(on_end), sink_, std::move(owner_subject)});
        Status status = Traits::set_callback(handle_, &deliver, box, &Box::release);
        Box::settle(box, status);
    }

    /// Ends the iteration: next() returns std::nullopt from now on and
    /// on_end has run when this returns. Idempotent; any thread.
    void stop() const { detail::check(Traits::stop(handle_)); }

    /// The live counters of this iterator.
    IterStats stats() const {
        IterStats stats{};
        detail::check(Traits::get_stats(handle_, &stats));
        return stats;
    }

    /// Starts a range-for: waits for the first item (next(forever)).
    iterator begin() const { return iterator(this); }
    /// The end of a range-for.
    iterator end() const noexcept { return iterator(); }

    /// The C iterator (null for none), still owned by this Feed.
    handle_type* c_handle() const noexcept { return handle_; }
    /// True when this Feed holds an iterator.
    explicit operator bool() const noexcept { return handle_ != nullptr; }
    /// Gives up ownership of the handle (still running; free it with its
    /// C _free function).
    handle_type* release() noexcept { return std::exchange(handle_, nullptr); }

protected:
    /// Where this Feed reports what its callbacks throw (for subclasses
    /// that create Futures, e.g. Subscription::drain_async).
    const detail::SinkPtr& sink() const noexcept { return sink_; }

private:
    struct CallbackSlot {
        ItemHandler on_item;
        EndHandler on_end;
        detail::SinkPtr sink;
        // The subscription's subject, reported with what on_item throws
        // ("": the item's subject instead).
        std::string owner_subject;
    };

    static void deliver(void* user_data, const typename Traits::CItem* item,
                        natsio_status status) noexcept {
        const CallbackSlot& slot = static_cast<detail::CallbackBox<CallbackSlot>*>(user_data)->value;
        if (item != nullptr) {
            try {
                slot.on_item(view_type(item));
            } catch (...) {
                detail::report_thrown(slot.sink, std::current_exception(), Items::sid(item),
                                      slot.owner_subject.empty() ? Items::subject(item)
                                                                 : slot.owner_subject.c_str());
            }
            return;
        }
        try {
            // The detail of the ending error is this thread's last error
            // during this call only: read it now.
            std::exception_ptr error;
            if (status != NATSIO_DONE) {
                error = detail::last_error(status);
            }
            if (slot.on_end) {
                slot.on_end(error);
            }
        } catch (...) {
            detail::report_thrown(slot.sink, std::current_exception());
        }
    }

    handle_type* handle_ = nullptr;
    detail::SinkPtr sink_;
};

namespace detail {

/// The items of the message iterators (sub, replies, js_messages).
template <>
struct FeedItem<natsio_msg> {
    using Item = Msg;
    using View = MsgView;
    static std::uint64_t sid(const natsio_msg* msg) noexcept { return natsio_msg_sid(msg); }
    static const char* subject(const natsio_msg* msg) noexcept { return natsio_msg_subject(msg); }
};

}  // namespace detail

// ---------------------------------------------------------------------------
// Replies (request_many)
// ---------------------------------------------------------------------------

/// Options of Client::request_many (natsio_request_many_options); zero
/// means the library's default.
struct RequestManyOptions {
    /// Stop after this many replies; 0: no limit.
    std::int64_t max_msgs = 0;
    /// Stop when no reply arrives for this long after the first; 0: none.
    milliseconds stall{0};
    /// Overall deadline; 0: the client's request timeout.
    milliseconds timeout{0};
};

/// The replies of one request_many: a Feed of Msg. The iteration ends
/// (std::nullopt, the end of a range-for) after max_msgs, a stall, the
/// overall timeout, no responders, or stop().
using Replies = Feed<detail::RepliesFeed>;

namespace detail {
inline Replies from_c(natsio_replies* replies, const SinkPtr& sink) noexcept {
    return Replies(replies, sink);
}
}  // namespace detail

// ---------------------------------------------------------------------------
// Subscriptions
// ---------------------------------------------------------------------------

/// What a subscription does when a pending limit is exceeded
/// (natsio_pending_policy; SubscribeOptions::policy).
enum class PendingPolicy : std::int32_t {
    /// Discard the arriving message (the default).
    DropNew = NATSIO_POLICY_DROP_NEW,
    /// Evict the oldest queued messages to make room.
    DropOld = NATSIO_POLICY_DROP_OLD,
    /// Pause reading from the socket (the whole connection) until the
    /// consumer catches up; nothing is lost (the queue may hold one
    /// message over the limit).
    Block = NATSIO_POLICY_BLOCK,
    /// Fail the subscription with SlowConsumerError: delivery stops at
    /// once and the queued backlog is discarded.
    Error = NATSIO_POLICY_ERROR,
};

/// Settings of a subscription; unset fields keep the library's defaults.
struct SubscribeOptions {
    /// Queue group to join.
    // (The explicit initializers keep C++20 designated initialization,
    // `{.queue = "q"}`, free of -Wmissing-field-initializers.)
    std::optional<std::string_view> queue = std::nullopt;
    /// Pending message limit: std::nullopt (unset) keeps the client's
    /// default (Options::set_pending_limits); 0 or less disables the limit
    /// (no limit, as in the reference client).
    std::optional<std::int64_t> pending_msgs_limit = std::nullopt;
    /// Pending byte limit: std::nullopt keeps the client's default; 0 or
    /// less disables the limit.
    std::optional<std::int64_t> pending_bytes_limit = std::nullopt;
    /// What happens when a limit is exceeded (default: DropNew).
    std::optional<PendingPolicy> policy = std::nullopt;
};

/// A subscription: a Feed of Msg (next, next_async, set_callback, stop,
/// stats, range-for) plus what only subscriptions have. The iteration ends
/// after stop(), drain(), or the unsubscribe_after count; it fails with
/// ConnectionClosedError when the client closes and SlowConsumerError
/// under the Error policy. next() throws NoRespondersError for a 503
/// status message (a callback receives it as a message).
class Subscription : public Feed<detail::SubFeed>, private detail::SubVerbs<Subscription> {
public:
    /// Feed's constructors: none, or ownership of a natsio_sub.
    using Feed::Feed;

    /// Ends after `max` messages in total (counting those received), once
    /// they are handled. InvalidArgumentError for 0,
    /// SubscriptionClosedError when it has ended.
    void unsubscribe_after(std::uint64_t max) const { raw_unsubscribe_after(max); }
    /// Graceful end: new deliveries stop, the backlog is handled, then the
    /// iteration ends. Waits up to `timeout` (default: the client's drain
    /// timeout). In iterator mode another thread must read the backlog.
    /// TimeoutError (the drain goes on), SubscriptionClosedError (stopped
    /// before draining finished), SlowConsumerError,
    /// ConnectionClosedError.
    void drain(milliseconds timeout = default_timeout) const { raw_drain(detail::to_ms(timeout)); }
    /// The future form of drain: completes when the backlog is handled,
    /// or with TimeoutError after `timeout` (default: the client's drain
    /// timeout; the drain goes on); other errors as drain.
    Future<void> drain_async(milliseconds timeout = default_timeout) const {
        return raw_drain_async(detail::to_ms(timeout));
    }

    /// The subject subscribed to ("" without a handle).
    std::string_view subject() const noexcept {
        return detail::view_of(natsio_sub_subject(c_handle()));
    }
    /// The queue group, if any.
    std::optional<std::string_view> queue() const noexcept {
        const char* queue = natsio_sub_queue(c_handle());
        if (queue == nullptr) {
            return std::nullopt;
        }
        return std::string_view(queue);
    }
    /// The subscription id (0 without a handle).
    std::uint64_t sid() const noexcept { return natsio_sub_sid(c_handle()); }
    /// True once the iteration has ended.
    bool is_closed() const noexcept { return natsio_sub_is_closed(c_handle()); }

private:
    friend class detail::SubVerbs<Subscription>;
};

namespace detail {
inline Subscription from_c(natsio_sub* sub, const SinkPtr& sink) noexcept {
    return Subscription(sub, sink);
}
}  // namespace detail

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------

/// How much a client logs (Options::on_log); each level includes those
/// above it. Trace shows every protocol frame.
enum class LogLevel : int {
    /// Nothing (the default).
    Off = NATSIO_LOG_OFF,
    /// Asynchronous errors (those of the error handler, slow consumers
    /// excepted).
    Error = NATSIO_LOG_ERROR,
    /// Slow consumers, lost connections, failed (re)connect attempts.
    Warn = NATSIO_LOG_WARN,
    /// Connected, reconnected, lame duck, servers discovered, closed.
    Info = NATSIO_LOG_INFO,
    /// Each connection attempt.
    Debug = NATSIO_LOG_DEBUG,
    /// Every protocol frame sent and received, payloads cut to a short
    /// preview, CONNECT's password, token, JWT and signature redacted.
    Trace = NATSIO_LOG_TRACE,
};

/// What this binding tells the server it is (CONNECT's lang and version).
inline constexpr const char* kClientLang = "natsio-cpp";

/// Owned connection options (natsio_options_new / _free): a move-only
/// RAII owner. Setters throw ConfigError for invalid values
/// (InvalidArgumentError for a string with a NUL byte) and return *this
/// for chaining. Not thread-safe: configure from one thread. A Client
/// copies what it needs at connect, so the Options may be destroyed once
/// connect returns.
class Options {
public:
    /// The library's defaults (server natsio::default_url, connect
    /// timeout 5 s, request timeout 5 s, flush timeout 10 s, drain timeout
    /// 30 s, ...; see natsio_options_new), announcing this binding as
    /// kClientLang.
    Options() : sink_(std::make_shared<detail::ErrorSink>()) {
        detail::check(natsio_options_new(&opts_));
        detail::check(natsio_options_set_client_lang(opts_, kClientLang, NATSIO_VERSION_STRING));
    }
    /// Takes over the options of `other`, which is left without any.
    Options(Options&& other) noexcept
        : opts_(std::exchange(other.opts_, nullptr)),
          sink_(std::move(other.sink_)),
          event_handler_(std::move(other.event_handler_)),
          auth_jwt_(std::move(other.auth_jwt_)),
          auth_sign_(std::move(other.auth_sign_)),
          user_password_cb_(std::move(other.user_password_cb_)),
          token_cb_(std::move(other.token_cb_)),
          reconnect_delay_(std::move(other.reconnect_delay_)) {}
    /// Frees these options and takes over those of `other`.
    Options& operator=(Options&& other) noexcept {
        if (this != &other) {
            natsio_options_free(opts_);
            opts_ = std::exchange(other.opts_, nullptr);
            sink_ = std::move(other.sink_);
            event_handler_ = std::move(other.event_handler_);
            auth_jwt_ = std::move(other.auth_jwt_);
            auth_sign_ = std::move(other.auth_sign_);
            user_password_cb_ = std::move(other.user_password_cb_);
            token_cb_ = std::move(other.token_cb_);
            reconnect_delay_ = std::move(other.reconnect_delay_);
        }
        return *this;
    }
    /// Not copyable.
    Options(const Options&) = delete;
    /// Not copyable.
    Options& operator=(const Options&) = delete;
    /// Frees the options (natsio_options_free); clients connected with
    /// them are not affected.
    ~Options() { natsio_options_free(opts_); }

    /// The server URL(s): one URL or several, comma-separated
    /// (`nats://host:port`, `host:port`, `nats://user:pass@host`), tried
    /// in order; an empty `url` means natsio::default_url. ConfigError for
    /// a malformed URL.
    Options& set_url(std::string_view url) {
        detail::CString c_url(url, "url");
        detail::check(natsio_options_set_url(opts_, c_url.get()));
        return *this;
    }
    /// The server URLs, one per element; as set_url. ConfigError for a
    /// malformed URL or none.
    Options& set_servers(const std::vector<std::string>& urls) {
        std::vector<const char*> c_urls;
        c_urls.reserve(urls.size());
        for (const std::string& url : urls) {
            c_urls.push_back(url.c_str());
        }
        detail::check(natsio_options_set_servers(opts_, c_urls.data(), c_urls.size()));
        return *this;
    }
    /// The connection name shown by the server's monitoring; std::nullopt
    /// clears it.
    Options& set_name(std::optional<std::string_view> name) {
        detail::OptionalCString c_name(name, "name");
        detail::check(natsio_options_set_name(opts_, c_name.get()));
        return *this;
    }
    /// The timeout of each connection attempt, handshake included
    /// (default 5 s). ConfigError when not positive.
    Options& set_connect_timeout(milliseconds timeout) {
        detail::check(natsio_options_set_connect_timeout_ms(opts_, detail::to_ms(timeout)));
        return *this;
    }
    /// Whether the server sends this connection its own publishes back
    /// when it is subscribed to them (default true).
    Options& set_echo(bool echo) {
        detail::check(natsio_options_set_echo(opts_, echo));
        return *this;
    }
    /// Whether the server acknowledges every protocol operation with +OK
    /// (default false); the client reads past the acknowledgements.
    Options& set_verbose(bool verbose) {
        detail::check(natsio_options_set_verbose(opts_, verbose));
        return *this;
    }
    /// Whether the server checks this connection's protocol strictly
    /// (default false).
    Options& set_pedantic(bool pedantic) {
        detail::check(natsio_options_set_pedantic(opts_, pedantic));
        return *this;
    }
    /// Whether a subscription the server refuses for lack of permission
    /// ends with PermissionsError (besides the error callback's report;
    /// default false: only reported).
    Options& set_permission_err_on_subscribe(bool enabled) {
        detail::check(natsio_options_set_permission_err_on_subscribe(opts_, enabled));
        return *this;
    }
    /// User and password (the password may be absent). Credentials in the
    /// URL take precedence. ConfigError when another kind of
    /// authentication is set.
    Options& set_user_password(std::string_view user, std::optional<std::string_view> password) {
        detail::CString c_user(user, "user");
        detail::OptionalCString c_password(password, "password");
        detail::check(natsio_options_set_user_password(opts_, c_user.get(), c_password.get()));
        return *this;
    }
    /// An authentication token. ConfigError when another kind of
    /// authentication is set.
    Options& set_token(std::string_view token) {
        detail::CString c_token(token, "token");
        detail::check(natsio_options_set_token(opts_, c_token.get()));
        return *this;
    }
    /// How often the client PINGs the server (default 120 s), and how many
    /// PINGs may go unanswered before the connection is declared stale
    /// (default 2). ConfigError when either is not positive.
    Options& set_ping(milliseconds interval, std::int32_t max_outstanding) {
        detail::check(natsio_options_set_ping(opts_, detail::to_ms(interval), max_outstanding));
        return *this;
    }
    /// The write buffer bound in bytes (default 2 MiB): past it, a publish
    /// waits up to the flush timeout for the writer, then throws
    /// TimeoutError.
    Options& set_max_pending_size(std::int64_t bytes) {
        detail::check(natsio_options_set_max_pending_size(opts_, bytes));
        return *this;
    }
    /// Whether a publish past the write buffer bound waits for room (true,
    /// the default; see set_max_pending_size) or is queued over the bound
    /// at once, the buffer growing until the writer catches up (false: for
    /// a caller that must never block, such as an event loop).
    Options& set_wait_for_write_room(bool wait) {
        detail::check(natsio_options_set_wait_for_write_room(opts_, wait));
        return *this;
    }
    /// The default timeout of Client::flush and Client::rtt, and of a
    /// publish waiting on a full write buffer (default 10 s).
    Options& set_flush_timeout(milliseconds timeout) {
        detail::check(natsio_options_set_flush_timeout_ms(opts_, detail::to_ms(timeout)));
        return *this;
    }
    /// The default bound of Client::drain and Subscription::drain (default
    /// 30 s).
    Options& set_drain_timeout(milliseconds timeout) {
        detail::check(natsio_options_set_drain_timeout_ms(opts_, detail::to_ms(timeout)));
        return *this;
    }
    /// The default timeout of requests (Client::request, request_many,
    /// MsgView::ack_sync; default 5 s).
    Options& set_request_timeout(milliseconds timeout) {
        detail::check(natsio_options_set_request_timeout_ms(opts_, detail::to_ms(timeout)));
        return *this;
    }
    /// The prefix of reply inboxes (default "_INBOX"). ConfigError when not
    /// a valid subject without wildcards.
    Options& set_inbox_prefix(std::string_view prefix) {
        detail::CString c_prefix(prefix, "inbox prefix");
        detail::check(natsio_options_set_inbox_prefix(opts_, c_prefix.get()));
        return *this;
    }
    /// The default pending limits of new subscriptions, in messages and
    /// bytes (defaults 65536 and 64 MiB); 0 or less disables a limit.
    Options& set_pending_limits(std::int64_t msgs, std::int64_t bytes) {
        detail::check(natsio_options_set_pending_limits(opts_, msgs, bytes));
        return *this;
    }
    /// The longest control line accepted from the server (default 4096;
    /// at least 64).
    Options& set_max_control_line(std::int64_t bytes) {
        detail::check(natsio_options_set_max_control_line(opts_, bytes));
        return *this;
    }

    /// Receives the asynchronous errors of clients connected with these
    /// options (on the client's event thread), and the exceptions their
    /// callbacks throw on library threads: message handlers of
    /// subscriptions (with the subscription's subject), item and end
    /// handlers of every Feed (KV and object watchers, consume, ...),
    /// Future::then callbacks, the event handler and the auth callbacks
    /// (set_auth_callbacks). Such an exception
    /// arrives as AsyncError::Source::Handler with AsyncError::error
    /// holding it; it never unwinds into the library and delivery goes on.
    /// Without a handler it is written to standard error. Clients keep the
    /// handler they connected with.
    Options& on_error(ErrorHandler handler) {
        auto sink = std::make_shared<detail::ErrorSink>();
        sink->handler = std::move(handler);
        using Box = detail::CallbackBox<std::shared_ptr<detail::ErrorSink>>;
        auto* box = new Box(sink);
        Status status = natsio_options_set_error_callback(
            opts_, &detail::ErrorSink::on_library_error, box, &Box::release);
        Box::settle(box, status);
        sink_ = std::move(sink);
        // Exceptions of the event handler and the auth callbacks go to the
        // error handler of the same options: re-register them with the new
        // sink.
        if (event_handler_) {
            register_event_handler();
        }
        if (auth_jwt_) {
            register_auth_callbacks(auth_jwt_, auth_sign_);
        }
        if (user_password_cb_ || token_cb_) {
            register_credential_callback(user_password_cb_, token_cb_);
        }
        if (authenticator_) {
            register_authenticator(authenticator_);
        }
        if (reconnect_delay_) {
            register_reconnect_delay(reconnect_delay_);
        }
        return *this;
    }

    /// Receives one log line: its level and text (borrowed for the call).
    using LogHandler = std::function<void(LogLevel, std::string_view)>;
    /// Log lines of clients connected with these options, up to `level`:
    /// connections (Info), failed attempts (Warn), asynchronous errors
    /// (Error), each attempt (Debug), every protocol frame with payloads
    /// cut short and CONNECT's secrets redacted (Trace). The handler runs
    /// synchronously on library threads (the I/O thread among them): keep
    /// it quick and do not wait on the client from it; exceptions it
    /// throws are swallowed (a logger has nowhere to report to). An empty
    /// handler writes to standard error. The environment variable
    /// `NATSIO_LOG=<level>` raises the level without a code change.
    /// InvalidArgumentError for a level outside LogLevel.
    Options& on_log(LogLevel level, LogHandler handler = {}) {
        if (!handler) {
            detail::check(natsio_options_set_log(opts_, static_cast<std::int32_t>(level), nullptr, nullptr,
                                                 nullptr));
            return *this;
        }
        using Box = detail::CallbackBox<LogHandler>;
        auto* box = new Box(std::move(handler));
        Status status = natsio_options_set_log(
            opts_, static_cast<std::int32_t>(level),
            [](void* user_data, natsio_log_level lvl, const char* message) {
                try {
                    static_cast<Box*>(user_data)->value(static_cast<LogLevel>(lvl), message);
                } catch (...) {
                }
            },
            box, &Box::release);
        Box::settle(box, status);
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
    /// The handler of set_reconnect_delay_callback: the number of the turn
    /// through the server pool (1, 2, ...) to the wait before its last
    /// server.
    using ReconnectDelayHandler = std::function<milliseconds(std::int64_t attempts)>;
    /// Gives the wait before the next reconnect attempt, called with the
    /// number of the turn through the server pool (1, 2, ... counted
    /// afresh on every reconnect): nats.go's CustomReconnectDelay. After a
    /// lost connection (or a failed first connect with
    /// set_retry_on_failed_connect) the servers are tried in turn, and the
    /// handler is asked before the last server of each turn (with one
    /// server, before every attempt); its answer replaces the backoff of
    /// set_reconnect_wait and the jitter. A negative duration counts as 0.
    /// It runs on a library thread of its own (a slow handler delays only
    /// that attempt; a close does not wait for a running call). An exception it
    /// throws fails that attempt (reported as a failed reconnect attempt
    /// with ConfigError's status, after the default wait) and goes to the
    /// error handler (on_error); it never reaches the library and the
    /// client keeps trying. An empty handler removes it.
    Options& set_reconnect_delay_callback(ReconnectDelayHandler handler) {
        register_reconnect_delay(handler);
        reconnect_delay_ = std::move(handler);
        return *this;
    }
    /// Bytes of publishes kept while disconnected (default 8 MiB; 0: the
    /// default; -1: none, publishes throw ReconnectBufExceededError). Counts
    /// wire bytes: each publish takes its whole PUB/HPUB frame (see
    /// natsio_options_set_reconnect_buf_size).
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
    /// Gives {user, password} (set_user_password_callback).
    using UserPasswordHandler = std::function<std::pair<std::string, std::string>()>;
    /// Gives the token (set_token_callback).
    using TokenHandler = std::function<std::string()>;
    /// Gives {user, password} on every connect and reconnect (on a library
    /// thread), so rotated credentials are picked up: the callable form of
    /// set_user_password. An exception fails that connection attempt (a
    /// natsio::Error's status is passed on) and is reported to the error
    /// handler; it never reaches the library.
    Options& set_user_password_callback(UserPasswordHandler handler) {
        if (!handler) {
            throw NullArgumentError(NATSIO_ERR_NULL_ARGUMENT, "the user/password callback is required");
        }
        register_credential_callback(handler, nullptr);
        user_password_cb_ = std::move(handler);
        return *this;
    }
    /// Gives the token on every connect and reconnect: the callable form of
    /// set_token, otherwise as set_user_password_callback.
    Options& set_token_callback(TokenHandler handler) {
        if (!handler) {
            throw NullArgumentError(NATSIO_ERR_NULL_ARGUMENT, "the token callback is required");
        }
        register_credential_callback(nullptr, handler);
        token_cb_ = std::move(handler);
        return *this;
    }
    /// Gives the CONNECT's credentials (user/password, token, user JWT,
    /// NKey and nonce signature: any of AuthFields) for each connection
    /// attempt, called with that server's nonce on every connect and
    /// reconnect, on a library thread (never two at once for one client):
    /// nats.go's Nkey(pubKey, sigCB) and nats.js's custom authenticators in
    /// one hook. The fields are sent as JSON, so any text is safe in them.
    /// An exception fails that connection attempt (ConfigError naming the
    /// status: a natsio::Error's own, else NATSIO_ERR_INTERNAL) and is
    /// reported to the error handler; it never reaches the library. One
    /// authentication kind per options: with another, ConfigError.
    Options& set_authenticator(AuthenticatorHandler handler) {
        if (!handler) {
            throw NullArgumentError(NATSIO_ERR_NULL_ARGUMENT, "the authenticator is required");
        }
        register_authenticator(handler);
        authenticator_ = std::move(handler);
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
    /// passed on from `sign`) and is reported to the error handler
    /// (AsyncError::Source::Handler); it never reaches the library.
    Options& set_auth_callbacks(JwtHandler jwt, SignHandler sign) {
        if (!jwt || !sign) {
            throw NullArgumentError(NATSIO_ERR_NULL_ARGUMENT,
                                       "both auth callbacks are required");
        }
        register_auth_callbacks(jwt, sign);
        auth_jwt_ = std::move(jwt);
        auth_sign_ = std::move(sign);
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
    /// set_tls from PEM text in memory instead of files (copied now): `ca_pem`
    /// empty means the system roots; `cert_pem` + `key_pem` (both empty or
    /// neither) for mutual TLS. Replaces set_tls's files, and the other way round.
    Options& set_tls_pem(std::string_view ca_pem, std::string_view cert_pem = {},
                         std::string_view key_pem = {}) {
        detail::check(natsio_options_set_tls_pem(opts_, ca_pem.data(), ca_pem.size(), cert_pem.data(),
                                                  cert_pem.size(), key_pem.data(), key_pem.size()));
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

    /// The C options, still owned by this object.
    const natsio_options* c_options() const noexcept { return opts_; }
    /// The C options, still owned by this object (e.g. for a C setter
    /// this class lacks).
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

    void register_auth_callbacks(JwtHandler jwt, SignHandler sign) {
        using Box = detail::CallbackBox<detail::AuthSlot>;
        auto* box = new Box(detail::AuthSlot{std::move(jwt), std::move(sign), sink_,
                                             std::make_unique<std::mutex>(), {}});
        Status status = natsio_options_set_auth_callbacks(
            opts_, &detail::AuthSlot::on_jwt, &detail::AuthSlot::on_sign, box, &Box::release);
        Box::settle(box, status);
    }

    void register_authenticator(AuthenticatorHandler handler) {
        using Box = detail::CallbackBox<detail::AuthenticatorSlot>;
        auto* box = new Box(detail::AuthenticatorSlot{std::move(handler), sink_,
                                                      std::make_unique<std::mutex>(), {}});
        Status status = natsio_options_set_authenticator(opts_, &detail::AuthenticatorSlot::on_fields,
                                                         box, &Box::release);
        Box::settle(box, status);
    }

    void register_reconnect_delay(const ReconnectDelayHandler& handler) {
        if (!handler) {
            detail::check(natsio_options_set_reconnect_delay_callback(opts_, nullptr, nullptr, nullptr));
            return;
        }
        using Box = detail::CallbackBox<detail::ReconnectDelaySlot>;
        auto* box = new Box(detail::ReconnectDelaySlot{handler, sink_});
        Status status = natsio_options_set_reconnect_delay_callback(
            opts_, &detail::ReconnectDelaySlot::on_delay, box, &Box::release);
        Box::settle(box, status);
    }

    void register_credential_callback(UserPasswordHandler user_password, TokenHandler token) {
        using Box = detail::CallbackBox<detail::CredentialSlot>;
        const bool is_token = static_cast<bool>(token);
        auto* box = new Box(detail::CredentialSlot{std::move(user_password), std::move(token), sink_,
                                                   std::make_unique<std::mutex>(), {}});
        Status status = is_token ? natsio_options_set_token_callback(opts_, &detail::CredentialSlot::on_token,
                                                                     box, &Box::release)
                                 : natsio_options_set_user_password_callback(
                                       opts_, &detail::CredentialSlot::on_user_password, box, &Box::release);
        Box::settle(box, status);
    }

    natsio_options* opts_ = nullptr;
    std::shared_ptr<detail::ErrorSink> sink_;
    EventHandler event_handler_;
    JwtHandler auth_jwt_;
    SignHandler auth_sign_;
    UserPasswordHandler user_password_cb_;
    TokenHandler token_cb_;
    AuthenticatorHandler authenticator_;
    ReconnectDelayHandler reconnect_delay_;
};

// ---------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------

/// A client's connection state (natsio_conn_status; Client::status).
enum class ConnStatus : std::int32_t {
    /// Not connected.
    Disconnected = NATSIO_CONN_DISCONNECTED,
    /// Connecting for the first time.
    Connecting = NATSIO_CONN_CONNECTING,
    /// Connected.
    Connected = NATSIO_CONN_CONNECTED,
    /// Connection lost; reconnecting.
    Reconnecting = NATSIO_CONN_RECONNECTING,
    /// Draining (Client::drain), then closing.
    Draining = NATSIO_CONN_DRAINING,
    /// Closed for good (also what a Client without a handle reports).
    Closed = NATSIO_CONN_CLOSED,
};

/// A client's traffic counters: in_msgs, out_msgs, in_bytes, out_bytes,
/// reconnects, errors, server_pings (natsio_client_stats; Client::stats).
using ClientStats = natsio_client_stats;

/// One server of a client's pool (Client::server_pool; nats.go's Server,
/// nats.js's Server): a copy, later changes to the pool do not show in it.
struct Server {
    /// The URL as the pool holds it: a configured one as given, a
    /// discovered one as `nats://host:port` (or `tls://`, `ws://`,
    /// `wss://`).
    std::string url;
    /// Attempts to connect to it that failed since the client was last
    /// connected to it (nats.go's Server.Reconnects).
    std::uint32_t reconnects = 0;
    /// Whether the client has been connected to it (nats.js's didConnect).
    bool did_connect = false;
    /// Whether it was learned from the cluster (a server's INFO) rather
    /// than configured (nats.js's gossiped).
    bool discovered = false;
};

class Client;
class JetStream;
class Service;
struct ServiceConfig;
enum class ServiceVerb : std::int32_t;

namespace detail {
Client from_c(natsio_client* client, const SinkPtr& sink);

/// Takes a natsio_server_list (Client::server_pool's result).
inline std::vector<Server> from_c(natsio_server_list* list, const SinkPtr&) {
    return take_list(list, natsio_server_list_count, natsio_server_list_get,
                     natsio_server_list_free, [](const natsio_server* item) {
                         return Server{std::string(view_of(natsio_server_url(item))),
                                       natsio_server_reconnects(item),
                                       natsio_server_did_connect(item),
                                       natsio_server_is_discovered(item)};
                     });
}
}  // namespace detail

/// An owned connection (natsio_client_free on destruction: closes it; after
/// that no handler of the client runs again). A move-only RAII owner;
/// thread-safe. Subscriptions, messages, futures and JetStream contexts
/// obtained from it do not keep it open: once it is closed or destroyed
/// their calls throw ConnectionClosedError. A default-built or moved-from
/// Client holds no connection and its calls throw InvalidArgumentError.
class Client : private detail::ClientVerbs<Client> {
public:
    /// Connects to `url` (comma-separated URLs allowed; "", the default:
    /// natsio::default_url, as nats.go's Connect("")) with default
    /// options.
    static Client connect(std::string_view url = default_url) {
        Options options;
        options.set_url(url);
        return connect(options);
    }

    /// Connects with `options`, which may be destroyed afterwards.
    static Client connect(const Options& options) {
        natsio_client* client = nullptr;
        detail::check(natsio_client_connect(options.opts_, &client));
        return Client(client, options.sink_);
    }

    /// The future form of connect: the Client, or the connect error
    /// (NoServersError, AuthorizationError, ...). `options` may be
    /// destroyed at once.
    static Future<Client> connect_async(const Options& options) {
        natsio_token* token = nullptr;
        detail::check(natsio_client_connect_async(options.opts_, &token));
        return Future<Client>(token, options.sink_);
    }
    /// The future form of connect(url), with default options.
    static Future<Client> connect_async(std::string_view url = default_url) {
        Options options;
        options.set_url(url);
        return connect_async(options);
    }

    /// No connection.
    Client() noexcept = default;
    /// Takes over the connection of `other`, which is left without one.
    Client(Client&& other) noexcept
        : client_(std::exchange(other.client_, nullptr)), sink_(std::move(other.sink_)) {}
    /// Closes and frees this connection, then takes over the one of
    /// `other`.
    Client& operator=(Client&& other) noexcept {
        if (this != &other) {
            natsio_client_free(client_);
            client_ = std::exchange(other.client_, nullptr);
            sink_ = std::move(other.sink_);
        }
        return *this;
    }
    /// Not copyable: one owner per connection.
    Client(const Client&) = delete;
    /// Not copyable: one owner per connection.
    Client& operator=(const Client&) = delete;
    /// Closes (if needed) and frees the connection; blocks while its
    /// callbacks finish.
    ~Client() { natsio_client_free(client_); }

    /// Publishes `data` to `subject` (buffered; flush() to wait for the
    /// server). BadSubjectError, MaxPayloadError (nothing sent),
    /// ConnectionClosedError, TimeoutError (write buffer full for the
    /// flush timeout), ReconnectBufExceededError (while reconnecting).
    void publish(std::string_view subject, ByteView data = {}) const {
        detail::CString c_subject(subject, "subject");
        detail::check(natsio_client_publish(client_, c_subject.get(), data.data(), data.size()));
    }

    /// Publishes with an optional reply subject and headers (an empty
    /// HeadersView for none); errors as publish, the max_payload check
    /// counting headers and data together.
    void publish_with(std::string_view subject, std::optional<std::string_view> reply,
                      HeadersView headers, ByteView data) const {
        raw_publish_with(subject, reply, headers.c_headers(), data);
    }

    /// Subscribes to `subject` (wildcards allowed); read the messages with
    /// next, next_async, range-for, or a callback set later with
    /// set_callback (messages that arrive before are delivered to it
    /// first). No message sent after this returns is missed (flush() to be
    /// sure the server has the subscription). BadSubjectError,
    /// BadQueueNameError, InvalidArgumentError (options),
    /// ConnectionClosedError.
    Subscription subscribe(std::string_view subject, const SubscribeOptions& options = {}) const {
        natsio_sub_options c_options = to_c(options);
        return raw_subscribe(subject, options.queue, &c_options);
    }

    /// Subscribes in push mode: subscribe() then set_callback(handler).
    /// `handler` runs for every message on the subscription's dispatcher
    /// thread, in order, until the Subscription is stopped or destroyed.
    Subscription subscribe(std::string_view subject, MsgHandler handler,
                           const SubscribeOptions& options = {}) const {
        Subscription sub = subscribe(subject, options);
        sub.set_callback(std::move(handler));
        return sub;
    }

    /// Sends a request and waits up to `timeout` (default: the client's
    /// request timeout) for one reply. NoRespondersError, TimeoutError.
    Msg request(std::string_view subject, ByteView data = {},
                milliseconds timeout = default_timeout, HeadersView headers = {}) const {
        return raw_request(subject, headers.c_headers(), data, detail::to_ms(timeout));
    }
    /// The future form of request: completes with the reply,
    /// NoRespondersError, TimeoutError or CancelledError. Argument errors
    /// are thrown at once.
    Future<Msg> request_async(std::string_view subject, ByteView data = {},
                              milliseconds timeout = default_timeout,
                              HeadersView headers = {}) const {
        return raw_request_async(subject, headers.c_headers(), data, detail::to_ms(timeout));
    }

    /// Sends one request; its replies are gathered from now on and read
    /// through the returned Replies (a Feed of Msg). Errors as
    /// publish_with, InvalidArgumentError (options).
    Replies request_many(std::string_view subject, ByteView data = {},
                         const RequestManyOptions& options = {},
                         HeadersView headers = {}) const {
        natsio_request_many_options c_options = to_c(options);
        return raw_request_many(subject, headers.c_headers(), data, &c_options);
    }

    /// Sends the asynchronous JetStream publishes queued with
    /// PublishOptions::defer_send that nothing has sent yet. Cheap when
    /// there are none; never blocks; any thread.
    void send_deferred() const { raw_send_deferred(); }

    /// Waits until the server processed everything sent before (a
    /// PING/PONG round trip), up to `timeout` (default_timeout: the
    /// client's flush timeout, Options::set_flush_timeout, 10 s unless
    /// set; never longer). TimeoutError past it (e.g. a stopped server),
    /// ConnectionClosedError.
    void flush(milliseconds timeout = default_timeout) const { raw_flush(detail::to_ms(timeout)); }
    /// The future form of flush: completes once the server processed
    /// everything sent before, or with TimeoutError after `timeout`
    /// (default_timeout: the client's flush timeout, as flush(); forever:
    /// no bound).
    Future<void> flush_async(milliseconds timeout = default_timeout) const {
        return raw_flush_async(detail::to_ms(timeout));
    }

    /// Drains and closes: every subscription stops receiving and handles
    /// its backlog, pending publishes are flushed, then the client closes;
    /// up to `timeout` (default: the client's drain timeout).
    /// DrainTimeoutError when it took longer (closed anyway; also reported
    /// to the error handler), IllegalStateError when already draining,
    /// ConnectionClosedError.
    void drain(milliseconds timeout = default_timeout) const { raw_drain(detail::to_ms(timeout)); }
    /// The future form of drain (the drain runs on a library thread).
    Future<void> drain_async(milliseconds timeout = default_timeout) const {
        return raw_drain_async(detail::to_ms(timeout));
    }

    /// Closes the connection (idempotent): buffered publishes are sent
    /// (best effort), pending requests and flushes fail with
    /// ConnectionClosedError, subscriptions and other feeds end with it.
    /// Once it returns no handler of this client runs again (unless called
    /// from one); blocks while they finish. The object stays usable for
    /// queries, and later calls throw ConnectionClosedError.
    void close() const { raw_close(); }
    /// The future form of close: the close runs on a library thread.
    Future<void> close_async() const { return raw_close_async(); }

    /// The connection state (Closed without a handle).
    ConnStatus status() const noexcept {
        return static_cast<ConnStatus>(natsio_client_status(client_));
    }
    /// The largest payload (headers included) the server accepts, in bytes
    /// (-1 without a handle).
    std::int64_t max_payload() const noexcept { return natsio_client_max_payload(client_); }

    /// The server's latest INFO, as JSON.
    std::string server_info() const { return raw_server_info(); }
    /// The URL of the server currently connected to.
    /// ConnectionClosedError.
    std::string connected_url() const { return raw_connected_url(); }
    /// A new unique inbox subject under the inbox prefix.
    std::string new_inbox() const { return raw_new_inbox(); }
    /// The prefix of this client's reply inboxes (set_inbox_prefix,
    /// default "_INBOX"); readable after close too.
    std::string inbox_prefix() const { return raw_inbox_prefix(); }
    /// The traffic counters.
    ClientStats stats() const {
        ClientStats stats{};
        detail::check(natsio_client_get_stats(client_, &stats));
        return stats;
    }

    /// Drops the connection and reconnects (to another server of the pool
    /// when there is one); returns at once. IllegalStateError when not
    /// connected right now.
    void force_reconnect() const { raw_force_reconnect(); }

    /// The time of one PING/PONG round trip, within `timeout` (default: the
    /// flush timeout); errors as flush.
    std::chrono::microseconds rtt(milliseconds timeout = default_timeout) const {
        return std::chrono::microseconds(raw_rtt(detail::to_ms(timeout)));
    }

    /// The server pool, configured and discovered.
    std::vector<std::string> servers() const { return raw_servers(); }
    /// The server pool (configured and discovered) in the order servers
    /// are tried, each with its reconnect bookkeeping (nats.go's
    /// ServerPool, nats.js's getServers): a snapshot. Readable after close.
    std::vector<Server> server_pool() const { return raw_server_pool(); }
    /// Replaces the pool with `urls`, in that order (nats.go's
    /// SetServerPool, nats.js's setServers; never shuffled, whatever
    /// Options::set_no_randomize says). The current connection stays up even when
    /// its server is not listed: the next reconnect picks from the new pool
    /// (force_reconnect moves now). A server already in the pool (same host
    /// and port) keeps its bookkeeping; servers the cluster tells of are
    /// added again unless the options ignore them. Any thread, handlers
    /// included. ConfigError for an empty list or an invalid URL (the pool
    /// is unchanged), InvalidUtf8Error, InvalidArgumentError for an
    /// embedded NUL or more than NATSIO_LIST_MAX_ITEMS URLs,
    /// ConnectionClosedError.
    void set_server_pool(const std::vector<std::string>& urls) const {
        raw_set_server_pool(detail::CStringArray(urls.begin(), urls.end(), "url"));
    }

    /// The C client (null for none), still owned by this object.
    natsio_client* c_client() const noexcept { return client_; }
    /// True when this object holds a connection.
    explicit operator bool() const noexcept { return client_ != nullptr; }

private:
    friend Client detail::from_c(natsio_client* client, const detail::SinkPtr& sink);
    friend class JetStream;
    friend class detail::ClientVerbs<Client>;
    // natsio/service.hpp
    friend Service add_service(const Client& client, const ServiceConfig& config);
    friend Replies discover_services(const Client& client, ServiceVerb verb,
                                     std::optional<std::string_view> name,
                                     std::optional<std::string_view> id,
                                     const RequestManyOptions& options);
    natsio_client* c_handle() const noexcept { return client_; }
    const detail::SinkPtr& sink() const noexcept { return sink_; }

    Client(natsio_client* client, detail::SinkPtr sink) noexcept
        : client_(client), sink_(std::move(sink)) {}

    static natsio_request_many_options to_c(const RequestManyOptions& options) {
        natsio_request_many_options c_options{};
        detail::check(natsio_request_many_options_init(&c_options));
        c_options.max_msgs = options.max_msgs;
        c_options.stall_ms = detail::to_ms(options.stall);
        c_options.timeout_ms = detail::to_ms(options.timeout);
        return c_options;
    }

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
    detail::SinkPtr sink_;
};

/// A connected client (connect_async's result) reports to its own error
/// sink when the options had none.
inline Client detail::from_c(natsio_client* client, const SinkPtr& sink) {
    return Client(client, sink ? sink : std::make_shared<ErrorSink>());
}

}  // namespace natsio

// detail::TokenReader of the results above (generated).
#include <natsio/gen/natsio_results.hpp>

#endif  // NATSIO_CPP_NATSIO_HPP
