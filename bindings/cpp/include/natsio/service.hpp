/// @file
/// Services (ADR-32 micro services) for the header-only C++ binding of
/// libnatsio (include it next to natsio/natsio.hpp).
///
/// The same model as natsio.hpp over the natsio_service_* / natsio_endpoint_*
/// part of include/natsio.h:
///   - natsio::add_service(client, config) starts a Service (name, SemVer
///     version, description, metadata, default queue group "q" or none),
///     discoverable with `$SRV.PING|INFO|STATS` from the moment it returns
///     (by nats.go's micro client, natscli's `nats micro`, and
///     natsio::discover_services);
///   - Service::add_group / Group::add_group give a subject prefix with its
///     own queue group; add_endpoint gives an Endpoint, a natsio::Feed of
///     Request (next(timeout), next_async(), range-for, stop(), stats()) or,
///     with a handler, push mode: the handler gets each request as a
///     RequestView on the endpoint's own library thread;
///   - a request is answered with respond(data) or respond_error(code,
///     description, data), at once or later from any thread through an owned
///     Request (RequestView::clone(), or a copy of a Request);
///   - a handler that throws answers 500 with the exception's what() (unless
///     it answered already), the error counts in the endpoint's stats, the
///     service's error handler is told, and the next request is served;
///   - an endpoint's pending limits (EndpointConfig::pending_msgs_limit,
///     pending_bytes_limit) bound the requests queued unread and, with a
///     handler, the one it is busy with until it returns (as nats.go
///     counts it): those over them are dropped, counted as the endpoint's
///     errors and told to the service's error handler (code 0);
///   - info() and stats() are the INFO and STATS responses as JSON text with
///     the wire's field names (io.nats.micro.v1.info_response and
///     stats_response; times in nanoseconds), as JetStream infos are;
///   - stop() drains every endpoint (requests received are still delivered
///     and may be answered; new ones find no responder), stop_async() is its
///     Future, stopped() says whether the service has stopped (by stop() or
///     the client's close).
///
/// Lifetimes: a Service does not keep its Client open; the service stops
/// when the client closes. Destroying a Service stops it at once (no drain):
/// keep it while the service should run. A Group or an Endpoint is used
/// while its Service lives (they name it in their calls); destroying an
/// Endpoint does not stop it (it runs, and its handler is called, until the
/// service stops: Endpoint::stop() stops it alone). Configuration errors
/// (a bad name, version, subject or queue group) throw ServiceConfigError,
/// a ConfigError, before anything is sent. Every type is thread-safe.
#ifndef NATSIO_CPP_SERVICE_HPP
#define NATSIO_CPP_SERVICE_HPP

#include <natsio.h>
#include <natsio/errors.hpp>
#include <natsio/natsio.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace natsio {
class Request;
}  // namespace natsio
// detail::ServiceRequestVerbs, EndpointVerbs and ServiceVerbs, the generated
// verb layers of natsio_service_request, natsio_endpoint and natsio_service.
#include <natsio/gen/service_request_verbs.hpp>
#include <natsio/gen/endpoint_verbs.hpp>
#include <natsio/gen/service_verbs.hpp>
namespace natsio {

// ---------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------

/// A borrowed request to an endpoint: what a handler receives (valid for
/// the call), or a view of a Request. Keep it past the call with clone()
/// (an owned Request, to answer later from any thread).
class RequestView : public detail::ServiceRequestVerbs<RequestView> {
public:
    /// No request (operator bool is false).
    RequestView() noexcept = default;
    /// A view of a request borrowed from the C API; it must outlive the
    /// view.
    explicit RequestView(const natsio_service_request* req) noexcept : req_(req) {}

    /// The request message (subject, reply, data, headers), borrowed from
    /// the request.
    MsgView msg() const noexcept { return MsgView(natsio_service_request_msg(req_)); }
    /// The subject the request was sent to.
    std::string_view subject() const noexcept { return msg().subject(); }
    /// The requester's reply subject (std::nullopt for a plain publish,
    /// which cannot be answered).
    std::optional<std::string_view> reply() const noexcept { return msg().reply(); }
    /// The payload as text (it may contain NUL bytes).
    std::string_view data() const noexcept { return msg().data(); }
    /// The payload as bytes.
    ByteView bytes() const noexcept { return msg().bytes(); }
    /// The request's headers; an empty view when it carried none.
    HeadersView headers() const noexcept { return msg().headers(); }

    /// Answers with `data`. The first answer ends the request's processing
    /// time. NoReplySubjectError, MaxPayloadError, ConnectionClosedError.
    void respond(ByteView data = {}) const { raw_respond(nullptr, data); }
    /// Answers with `headers` and `data`; errors as respond(data).
    void respond(HeadersView headers, ByteView data) const {
        raw_respond(headers.c_headers(), data);
    }
    /// Answers with an error: headers `Nats-Service-Error: <description>`
    /// and `Nats-Service-Error-Code: <code>` (beside `headers`), `data` as
    /// the body. Counts as an error of the endpoint; its `last_error`
    /// becomes "<code>:<description>". InvalidArgumentError (empty
    /// description), BadHeadersError (a description with CR or LF), and the
    /// errors of respond.
    void respond_error(std::int32_t code, std::string_view description, ByteView data = {},
                       HeadersView headers = {}) const {
        raw_respond_error(code, description, headers.c_headers(), data);
    }
    /// Reports a failure of the handling, as a throwing handler does: a 500
    /// error reply with `description` unless answered already, an error
    /// counted, the service's error handler told.
    void fail(std::string_view description) const { raw_fail(description); }

    /// An owned handle to the same request, to answer it after the handler
    /// returned, from any thread.
    inline Request clone() const;

    /// True when there is a request.
    explicit operator bool() const noexcept { return req_ != nullptr; }
    /// The C request (null for none), still owned by its owner.
    const natsio_service_request* c_request() const noexcept { return req_; }

protected:
    /// The viewed request; Request owns it.
    const natsio_service_request* req_ = nullptr;

private:
    friend class detail::ServiceRequestVerbs<RequestView>;
    const natsio_service_request* c_handle() const noexcept { return req_; }
    // A request reports to no client's error handler.
    static const detail::SinkPtr& sink() noexcept {
        static const detail::SinkPtr none;
        return none;
    }
};

/// An owned request (natsio_service_request_free on destruction): what
/// Endpoint::next returns and RequestView::clone makes. Copyable (a copy is
/// a second handle to the same request, natsio_service_request_clone) and
/// movable, so it can be handed to another thread and answered there. A
/// request never answered ends its processing time when its last handle
/// goes (it counts as a request, not an error).
class Request : public RequestView {
public:
    /// No request.
    Request() noexcept = default;
    /// Takes ownership of a request from the C API.
    explicit Request(natsio_service_request* owned) noexcept : RequestView(owned) {}
    /// A second handle to the request of `other`.
    Request(const Request& other) : RequestView(other ? other.clone().release() : nullptr) {}
    /// Frees this handle and takes a second handle to the request of
    /// `other`.
    Request& operator=(const Request& other) {
        if (this != &other) {
            *this = Request(other);
        }
        return *this;
    }
    /// Takes over the handle of `other`, which is left without one.
    Request(Request&& other) noexcept : RequestView(std::exchange(other.req_, nullptr)) {}
    /// Frees this handle and takes over the one of `other`.
    Request& operator=(Request&& other) noexcept {
        if (this != &other) {
            natsio_service_request_free(mutable_req());
            req_ = std::exchange(other.req_, nullptr);
        }
        return *this;
    }
    /// Frees the handle (natsio_service_request_free).
    ~Request() { natsio_service_request_free(mutable_req()); }

    /// Gives up ownership of the handle (free it with
    /// natsio_service_request_free).
    natsio_service_request* release() noexcept {
        return const_cast<natsio_service_request*>(std::exchange(req_, nullptr));
    }

private:
    natsio_service_request* mutable_req() const noexcept {
        return const_cast<natsio_service_request*>(req_);
    }
};

namespace detail {
inline Request from_c(natsio_service_request* req, const SinkPtr&) noexcept {
    return Request(req);
}

/// The items of an endpoint: requests.
template <>
struct FeedItem<natsio_service_request> {
    using Item = Request;
    using View = RequestView;
    static std::uint64_t sid(const natsio_service_request* req) noexcept {
        return natsio_msg_sid(natsio_service_request_msg(req));
    }
    static const char* subject(const natsio_service_request* req) noexcept {
        return natsio_msg_subject(natsio_service_request_msg(req));
    }
};
}  // namespace detail

inline Request RequestView::clone() const { return raw_clone(); }

// ---------------------------------------------------------------------------
// Configurations
// ---------------------------------------------------------------------------

namespace detail {

/// Writes the configuration JSON of the C ABI: one object, fields in call
/// order.
class JsonObjectWriter {
public:
    JsonObjectWriter& string(const char* key, std::string_view value) {
        field(key);
        append_json_string(out_, value);
        return *this;
    }
    JsonObjectWriter& string_map(const char* key, const std::map<std::string, std::string>& map) {
        field(key);
        append_json_string_map(out_, map);
        return *this;
    }
    JsonObjectWriter& boolean(const char* key, bool value) {
        field(key);
        out_ += value ? "true" : "false";
        return *this;
    }
    /// `key` with `value` when set; nothing when unset.
    JsonObjectWriter& integer(const char* key, std::optional<std::int64_t> value) {
        if (value) {
            field(key);
            out_ += std::to_string(*value);
        }
        return *this;
    }
    /// "queue_group" when set, "queue_group_disabled" when true: what
    /// services, groups and endpoints share.
    JsonObjectWriter& queue_group(const std::optional<std::string>& queue_group, bool disabled) {
        if (queue_group) {
            string("queue_group", *queue_group);
        }
        if (disabled) {
            boolean("queue_group_disabled", true);
        }
        return *this;
    }
    std::string finish() { return std::move(out_) + "}"; }

private:
    void field(const char* key) {
        if (out_.size() > 1) {
            out_ += ',';
        }
        append_json_string(out_, key);
        out_ += ':';
    }
    std::string out_ = "{";
};

}  // namespace detail

/// A handler failure, or requests dropped over an endpoint's pending
/// limits, as the service's error handler receives it (an answer that
/// cannot be sent is respond()'s error, counted in STATS).
struct ServiceError {
    /// The endpoint's name.
    std::string endpoint;
    /// The request's subject; for dropped requests (code 0), the
    /// endpoint's subject.
    std::string subject;
    /// The error code (500 for a handler failure); 0 for requests dropped
    /// over the endpoint's pending limits (EndpointConfig::
    /// pending_msgs_limit: no reply carried it).
    std::int32_t code = 0;
    /// What went wrong (a throwing handler's what(); for code 0 the
    /// slow-consumer text, starting "slow consumer", also the endpoint's
    /// STATS `last_error`).
    std::string description;
};

/// Told of each handler failure, on the thread that saw it (for a
/// throwing handler: the endpoint's), and of
/// each slow-consumer report of an endpoint over its pending limits (code
/// 0, on the client's event thread: do not block in it). What it throws
/// goes to the client's error handler.
using ServiceErrorHandler = std::function<void(const ServiceError&)>;

/// Gives an endpoint's STATS `data` (JSON text; std::nullopt: none), with
/// the endpoint's name and subject, on a library thread for every STATS
/// request and Service::stats(), possibly from several threads at once.
/// What it throws goes to the client's error handler (the field is left
/// out).
using StatsHandler = std::function<std::optional<std::string>(
    std::string_view endpoint_name, std::string_view endpoint_subject)>;

/// Receives an endpoint's requests in push mode, one at a time, in order,
/// on the endpoint's library thread; the RequestView is borrowed for the
/// call (clone() it to answer later). What it throws answers 500 with the
/// exception's what(), counts as an error and reaches the service's error
/// handler; the next request is still delivered.
using RequestHandler = std::function<void(RequestView)>;

/// What natsio::add_service takes: nats.go's micro.Config. Unset fields are
/// not sent.
// (Explicit initializers keep C++20 designated initialization free of
// -Wmissing-field-initializers.)
struct ServiceConfig {
    /// The service's name: `[A-Za-z0-9_-]+` (required).
    std::string name = {};
    /// Its version: SemVer 2.0, e.g. "1.0.0" (required).
    std::string version = {};
    /// A description shown by INFO.
    std::optional<std::string> description = std::nullopt;
    /// Application metadata shown by INFO.
    std::map<std::string, std::string> metadata = {};
    /// The endpoints' default queue group (unset: "q").
    std::optional<std::string> queue_group = std::nullopt;
    /// True: endpoints without a queue group (every instance gets every
    /// request), unless a group or endpoint sets one.
    bool queue_group_disabled = false;
    /// The error handler (Service::set_error_handler), set at start.
    ServiceErrorHandler on_error = {};
    /// The stats handler (Service::set_stats_handler), set at start.
    StatsHandler stats_handler = {};

    /// The configuration JSON of the C ABI (natsio_client_add_service).
    std::string to_json() const {
        detail::JsonObjectWriter json;
        json.string("name", name).string("version", version);
        if (description) {
            json.string("description", *description);
        }
        if (!metadata.empty()) {
            json.string_map("metadata", metadata);
        }
        return json.queue_group(queue_group, queue_group_disabled).finish();
    }
};

/// What Service::add_group and Group::add_group take besides the name (a
/// subject prefix). Unset fields are the parent's.
struct GroupOptions {
    /// The queue group of the group's endpoints (unset: the parent's).
    std::optional<std::string> queue_group = std::nullopt;
    /// True: the group's endpoints have no queue group.
    bool queue_group_disabled = false;
};

/// What add_endpoint takes. Unset fields are the group's or service's.
struct EndpointConfig {
    /// The endpoint's name: `[A-Za-z0-9_-]+` (required).
    std::string name = {};
    /// Its subject under the group's prefix (unset: the name; wildcards
    /// allowed, `>` last).
    std::optional<std::string> subject = std::nullopt;
    /// Application metadata shown by INFO.
    std::map<std::string, std::string> metadata = {};
    /// Its queue group (unset: the group's or service's).
    std::optional<std::string> queue_group = std::nullopt;
    /// True: no queue group.
    bool queue_group_disabled = false;
    /// The most requests the endpoint holds (nats.go's
    /// WithEndpointPendingLimits): those queued unread and, with a handler,
    /// the one it is busy with until it returns (as nats.go counts it: a
    /// limit of 2 and a busy handler leave room for one more). std::nullopt (unset) keeps the client's
    /// subscription default (Options::set_pending_limits); negative: no
    /// limit; 0 is refused (add_endpoint throws ServiceConfigError, unlike
    /// SubscribeOptions where 0 means no limit). A request over the limits
    /// is dropped unanswered: it counts as an error of the endpoint (STATS
    /// `num_errors`; `last_error` the slow-consumer text, starting "slow
    /// consumer"), the service's error handler is told (ServiceError code
    /// 0), and the client's error handler gets the slow consumer as for
    /// any subscription. Endpoint::stats().dropped counts the requests
    /// dropped.
    std::optional<std::int64_t> pending_msgs_limit = std::nullopt;
    /// The most bytes of requests queued unread: as pending_msgs_limit
    /// (unset: the client's default; negative: no limit; 0 refused).
    std::optional<std::int64_t> pending_bytes_limit = std::nullopt;

    /// The configuration JSON of the C ABI (natsio_service_add_endpoint).
    std::string to_json() const {
        detail::JsonObjectWriter json;
        json.string("name", name);
        if (subject) {
            json.string("subject", *subject);
        }
        if (!metadata.empty()) {
            json.string_map("metadata", metadata);
        }
        return json.queue_group(queue_group, queue_group_disabled)
            .integer("pending_msgs_limit", pending_msgs_limit)
            .integer("pending_bytes_limit", pending_bytes_limit)
            .finish();
    }
};

// ---------------------------------------------------------------------------
// Endpoints
// ---------------------------------------------------------------------------

/// An endpoint of a service: a Feed of Request (next, next_async,
/// range-for, stop, stats) or, after set_callback (or add_endpoint with a
/// handler), push mode. The iteration ends (std::nullopt) once the service
/// stopped and the requests received before were read, or after stop()
/// (this endpoint alone, at once: its queued requests are dropped; it stays
/// in INFO and STATS). Destroying it does not stop it.
class Endpoint : public Feed<detail::EndpointFeed>, private detail::EndpointVerbs<Endpoint> {
public:
    /// Feed's constructors: none, or ownership of a natsio_endpoint.
    using Feed::Feed;

    /// Push mode: `on_request` receives every request (queued ones first),
    /// then `on_end` (if set) once, when the service stopped (null) or
    /// with the error that ended the endpoint; both run on the endpoint's
    /// library thread and are released after the final call. A throwing
    /// `on_request` fails that request (see RequestHandler); what `on_end`
    /// throws goes to the client's error handler. IllegalStateError if a
    /// callback is set already or next_async() futures are pending.
    void set_callback(RequestHandler on_request, EndHandler on_end = {}) const {
        if (!on_request) {
            throw NullArgumentError(NATSIO_ERR_NULL_ARGUMENT, "the request handler is empty");
        }
        using Box = detail::CallbackBox<Slot>;
        auto* box = new Box(Slot{std::move(on_request), std::move(on_end), sink()});
        Status status = natsio_endpoint_set_callback(c_handle(), &deliver, box, &Box::release);
        Box::settle(box, status);
    }

    /// The endpoint's name ("" without a handle).
    std::string_view name() const noexcept {
        return detail::view_of(natsio_endpoint_name(c_handle()));
    }
    /// Its full subject, the group's prefix included.
    std::string_view subject() const noexcept {
        return detail::view_of(natsio_endpoint_subject(c_handle()));
    }
    /// Its queue group; std::nullopt when it has none (disabled).
    std::optional<std::string_view> queue_group() const noexcept {
        const char* queue = natsio_endpoint_queue_group(c_handle());
        if (queue == nullptr) {
            return std::nullopt;
        }
        return std::string_view(queue);
    }
    /// Its entry of the STATS response, as JSON ("name", "subject",
    /// "queue_group", "num_requests", "num_errors", "last_error",
    /// "processing_time", "average_processing_time", "data"). stats() is
    /// the Feed's counters (IterStats).
    std::string stats_json() const { return raw_stats_json(); }
    /// Sets its STATS `data` (JSON text; std::nullopt removes it), shown
    /// when the service has no stats handler. InvalidArgumentError (not
    /// JSON).
    void set_stats_data(std::optional<std::string_view> json) const { raw_set_stats_data(json); }

private:
    friend class detail::EndpointVerbs<Endpoint>;

    struct Slot {
        RequestHandler on_request;
        EndHandler on_end;
        detail::SinkPtr sink;
    };

    static natsio_status deliver(void* user_data, const natsio_service_request* req,
                                 natsio_status status) noexcept {
        const Slot& slot = static_cast<detail::CallbackBox<Slot>*>(user_data)->value;
        if (req != nullptr) {
            // The request fails with what the handler threw; returning
            // NATSIO_OK then keeps the library from failing it twice.
            try {
                slot.on_request(RequestView(req));
            } catch (const std::exception& e) {
                natsio_service_request_fail(req, e.what());
            } catch (...) {
                natsio_service_request_fail(req, "unknown exception");
            }
            return NATSIO_OK;
        }
        try {
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
        return NATSIO_OK;
    }
};

namespace detail {
inline Endpoint from_c(natsio_endpoint* ep, const SinkPtr& sink) noexcept {
    return Endpoint(ep, sink);
}

/// A group handle as the generated add_group returns it; Group adds the
/// service it belongs to.
using GroupHandle = std::unique_ptr<natsio_service_group, void (*)(natsio_service_group*)>;
inline GroupHandle from_c(natsio_service_group* group, const SinkPtr&) noexcept {
    return GroupHandle(group, &natsio_service_group_free);
}

/// An endpoint in push mode, from add_endpoint's handler overloads.
inline Endpoint with_handler(Endpoint endpoint, RequestHandler handler) {
    endpoint.set_callback(std::move(handler));
    return endpoint;
}

inline EndpointConfig endpoint_named(std::string_view name) {
    EndpointConfig config;
    config.name = name;
    return config;
}

inline std::string group_config(std::string_view name, const GroupOptions& options) {
    return JsonObjectWriter()
        .string("name", name)
        .queue_group(options.queue_group, options.queue_group_disabled)
        .finish();
}
}  // namespace detail

// ---------------------------------------------------------------------------
// Groups and services
// ---------------------------------------------------------------------------

class Service;

/// A group of endpoints: a subject prefix and a queue group. A move-only
/// owner (natsio_service_group_free: its endpoints keep running); used while
/// its Service lives.
class Group : private detail::ServiceVerbs<Group> {
public:
    /// No group.
    Group() noexcept = default;

    /// A group under this one: its prefix is this group's, a dot and
    /// `name`. ServiceConfigError.
    Group add_group(std::string_view name, const GroupOptions& options = {}) const {
        return Group(raw_add_group(group_.get(), detail::group_config(name, options)), service_,
                     sink_);
    }
    /// An endpoint listening on the group's prefix, a dot and its subject,
    /// read as a Feed.
    /// ServiceConfigError, IllegalStateError (the service stopped),
    /// ConnectionClosedError.
    Endpoint add_endpoint(const EndpointConfig& config) const {
        return raw_add_endpoint(group_.get(), config.to_json());
    }
    /// An endpoint whose requests go to `handler` (push mode).
    Endpoint add_endpoint(const EndpointConfig& config, RequestHandler handler) const {
        return detail::with_handler(add_endpoint(config), std::move(handler));
    }
    /// The endpoint `name` (its subject: the name) with `handler`.
    Endpoint add_endpoint(std::string_view name, RequestHandler handler) const {
        return add_endpoint(detail::endpoint_named(name), std::move(handler));
    }

    /// The C group (null for none), still owned by this object.
    const natsio_service_group* c_group() const noexcept { return group_.get(); }
    /// True when this object holds a group.
    explicit operator bool() const noexcept { return group_ != nullptr; }

private:
    friend class Service;
    friend class detail::ServiceVerbs<Group>;

    Group(detail::GroupHandle group, const natsio_service* service, detail::SinkPtr sink) noexcept
        : group_(std::move(group)), service_(service), sink_(std::move(sink)) {}

    const natsio_service* c_handle() const noexcept { return service_; }
    const detail::SinkPtr& sink() const noexcept { return sink_; }

    detail::GroupHandle group_{nullptr, &natsio_service_group_free};
    const natsio_service* service_ = nullptr;
    detail::SinkPtr sink_;
};

/// A running service (natsio::add_service): a move-only RAII owner
/// (natsio_service_free: a service not stopped stops at once, without
/// drain). Thread-safe.
class Service : private detail::ServiceVerbs<Service> {
public:
    /// No service: its calls throw NullArgumentError.
    Service() noexcept = default;
    /// Takes ownership of a service from the C API; `sink` receives what
    /// its handlers throw.
    explicit Service(natsio_service* service, detail::SinkPtr sink = nullptr) noexcept
        : svc_(service), sink_(std::move(sink)) {}
    /// Takes over the service of `other`, which is left without one.
    Service(Service&& other) noexcept
        : svc_(std::exchange(other.svc_, nullptr)), sink_(std::move(other.sink_)) {}
    /// Frees (stopping at once) this service and takes over the one of
    /// `other`.
    Service& operator=(Service&& other) noexcept {
        if (this != &other) {
            natsio_service_free(svc_);
            svc_ = std::exchange(other.svc_, nullptr);
            sink_ = std::move(other.sink_);
        }
        return *this;
    }
    /// Not copyable: one owner per service.
    Service(const Service&) = delete;
    /// Not copyable.
    Service& operator=(const Service&) = delete;
    /// Frees the service (natsio_service_free); one still running stops at
    /// once, dropping the requests not yet delivered.
    ~Service() { natsio_service_free(svc_); }

    /// The service's id (a NUID; "" without a handle).
    std::string_view id() const noexcept { return detail::view_of(natsio_service_id(svc_)); }
    /// Its name.
    std::string_view name() const noexcept { return detail::view_of(natsio_service_name(svc_)); }
    /// Its version.
    std::string_view version() const noexcept {
        return detail::view_of(natsio_service_version(svc_));
    }

    /// A group (subject prefix `name`, `*` allowed). ServiceConfigError.
    Group add_group(std::string_view name, const GroupOptions& options = {}) const {
        return Group(raw_add_group(nullptr, detail::group_config(name, options)), svc_, sink_);
    }
    /// An endpoint, read as a Feed (next, range-for, ...): it subscribes at
    /// once and requests queue until read. ServiceConfigError,
    /// IllegalStateError (the service stopped), ConnectionClosedError.
    Endpoint add_endpoint(const EndpointConfig& config) const {
        return raw_add_endpoint(nullptr, config.to_json());
    }
    /// An endpoint whose requests go to `handler` (push mode).
    Endpoint add_endpoint(const EndpointConfig& config, RequestHandler handler) const {
        return detail::with_handler(add_endpoint(config), std::move(handler));
    }
    /// The endpoint `name` (its subject: the name) with `handler`.
    Endpoint add_endpoint(std::string_view name, RequestHandler handler) const {
        return add_endpoint(detail::endpoint_named(name), std::move(handler));
    }

    /// The INFO response as JSON (io.nats.micro.v1.info_response: "name",
    /// "id", "version", "description", "metadata", "endpoints" with their
    /// "name", "subject", "queue_group", "metadata").
    std::string info() const { return raw_info_json(); }
    /// The STATS response as JSON (io.nats.micro.v1.stats_response:
    /// "started" in RFC 3339, "endpoints" with "num_requests",
    /// "num_errors", "last_error", "processing_time",
    /// "average_processing_time" in nanoseconds, "data"). Calls the stats
    /// handler on this thread.
    std::string stats() const { return raw_stats_json(); }
    /// Zeroes every endpoint's counters and restarts `started`.
    void reset() const { raw_reset(); }

    /// Sets (an empty handler: removes) the error handler.
    void set_error_handler(ServiceErrorHandler handler) const {
        if (!handler) {
            detail::check(natsio_service_set_error_callback(svc_, nullptr, nullptr, nullptr));
            return;
        }
        using Box = detail::CallbackBox<ErrorSlot>;
        auto* box = new Box(ErrorSlot{std::move(handler), sink_});
        Status status =
            natsio_service_set_error_callback(svc_, &ErrorSlot::call, box, &Box::release);
        Box::settle(box, status);
    }
    /// Sets (an empty handler: removes) the stats handler; without one, an
    /// endpoint's `data` is what Endpoint::set_stats_data set.
    void set_stats_handler(StatsHandler handler) const {
        if (!handler) {
            detail::check(natsio_service_set_stats_callback(svc_, nullptr, nullptr, nullptr));
            return;
        }
        using Box = detail::CallbackBox<StatsSlot>;
        auto* box = new Box(StatsSlot{std::move(handler), sink_});
        Status status =
            natsio_service_set_stats_callback(svc_, &StatsSlot::call, box, &Box::release);
        Box::settle(box, status);
    }

    /// Stops the service: every endpoint and monitoring subscription
    /// drains (requests received are still delivered and may be answered;
    /// new ones find no responder), waiting up to `timeout` (default_timeout
    /// or forever: as long as it takes); push-mode handlers have had their
    /// end when it returns. Returns at once when stopped already.
    /// TimeoutError (still draining), IllegalStateError (on a library
    /// thread: use stop_async there).
    void stop(milliseconds timeout = default_timeout) const { raw_stop(detail::to_ms(timeout)); }
    /// The future form of stop: starts the stop, completes once drained.
    Future<void> stop_async() const { return raw_stop_async(); }
    /// A Future that completes once the service has stopped, by stop() or
    /// the client's close, without stopping it.
    Future<void> stopped_async() const { return raw_end_async(); }
    /// True once the service has stopped (a stop completed, or the client
    /// closed).
    bool stopped() const noexcept { return natsio_service_is_stopped(svc_); }

    /// The C service (null for none), still owned by this object.
    const natsio_service* c_service() const noexcept { return svc_; }
    /// True when this object holds a service.
    explicit operator bool() const noexcept { return svc_ != nullptr; }
    /// Gives up ownership of the handle (still running; free it with
    /// natsio_service_free).
    natsio_service* release() noexcept { return std::exchange(svc_, nullptr); }

private:
    friend class detail::ServiceVerbs<Service>;
    const natsio_service* c_handle() const noexcept { return svc_; }
    const detail::SinkPtr& sink() const noexcept { return sink_; }

    struct ErrorSlot {
        ServiceErrorHandler handler;
        detail::SinkPtr sink;

        static void call(void* user_data, const char* endpoint, const char* subject,
                         std::int32_t code, const char* description) noexcept {
            const ErrorSlot& slot = static_cast<detail::CallbackBox<ErrorSlot>*>(user_data)->value;
            try {
                slot.handler(ServiceError{std::string(detail::view_of(endpoint)),
                                          std::string(detail::view_of(subject)), code,
                                          std::string(detail::view_of(description))});
            } catch (...) {
                detail::report_thrown(slot.sink, std::current_exception(), 0, subject);
            }
        }
    };

    struct StatsSlot {
        StatsHandler handler;
        detail::SinkPtr sink;

        // The library frees the text with free(): it is malloc'd here.
        static char* call(void* user_data, const char* endpoint, const char* subject) noexcept {
            const StatsSlot& slot = static_cast<detail::CallbackBox<StatsSlot>*>(user_data)->value;
            try {
                std::optional<std::string> data =
                    slot.handler(detail::view_of(endpoint), detail::view_of(subject));
                if (!data) {
                    return nullptr;
                }
                auto* text = static_cast<char*>(std::malloc(data->size() + 1));
                if (text != nullptr) {
                    std::memcpy(text, data->c_str(), data->size() + 1);
                }
                return text;
            } catch (...) {
                detail::report_thrown(slot.sink, std::current_exception(), 0, subject);
                return nullptr;
            }
        }
    };

    natsio_service* svc_ = nullptr;
    detail::SinkPtr sink_;
};

namespace detail {
inline Service from_c(natsio_service* service, const SinkPtr& sink) noexcept {
    return Service(service, sink);
}
}  // namespace detail

/// Starts a service on `client` (nats.go's micro.AddService): it answers
/// `$SRV.PING|INFO|STATS` from now on; add its endpoints with
/// Service::add_endpoint and add_group. Its handlers report what they
/// throw to the client's error handler. ServiceConfigError (a bad name,
/// version or queue group: nothing is sent), ConnectionClosedError.
inline Service add_service(const Client& client, const ServiceConfig& config) {
    Service service = client.raw_add_service(config.to_json());
    if (config.on_error) {
        service.set_error_handler(config.on_error);
    }
    if (config.stats_handler) {
        service.set_stats_handler(config.stats_handler);
    }
    return service;
}

/// The monitoring requests of natsio::discover_services.
enum class ServiceVerb : std::int32_t {
    /// `$SRV.PING`: io.nats.micro.v1.ping_response (name, id, version,
    /// metadata).
    Ping = 0,
    /// `$SRV.INFO`: io.nats.micro.v1.info_response (Service::info()).
    Info = 1,
    /// `$SRV.STATS`: io.nats.micro.v1.stats_response (Service::stats()).
    Stats = 2,
};

/// Asks the services on the client's account (all; those named `name`; the
/// instance `id` of `name`) for their PING, INFO or STATS response: one
/// reply per instance, its data the JSON document. The Replies end after
/// `options.stall` without a reply (set it: without, they end at the
/// overall timeout, the client's request timeout), max_msgs or the
/// timeout. ServiceConfigError (name, id), InvalidArgumentError (options),
/// ConnectionClosedError.
inline Replies discover_services(const Client& client, ServiceVerb verb,
                                 std::optional<std::string_view> name = std::nullopt,
                                 std::optional<std::string_view> id = std::nullopt,
                                 const RequestManyOptions& options = {}) {
    natsio_request_many_options c_options = Client::to_c(options);
    return client.raw_service_discover(static_cast<std::int32_t>(verb), name, id, &c_options);
}

}  // namespace natsio

// detail::TokenReader of Request (generated).
#include <natsio/gen/service_results.hpp>

#endif  // NATSIO_CPP_SERVICE_HPP
