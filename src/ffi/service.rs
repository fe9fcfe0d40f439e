//! `natsio_service`, `natsio_service_group`, `natsio_endpoint` and
//! `natsio_service_request`: services (ADR-32). An endpoint is an
//! iterator of requests (`_next`, `_next_async`, or a callback); a request
//! owns what it needs to be answered later, from any thread.

use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::Arc;

use super::client::{client, natsio_client, request_many_options};
use super::iter::{self, natsio_iter_stats};
use super::msg::natsio_msg;
use super::replies::natsio_replies;
use super::status::{self, natsio_status};
use super::token::{natsio_token, with_outcome, wrong_kind};
use super::{
    arg, bytes_arg, cstring, free_box, guard, guard_value, opt_arg_headers, opt_str_arg, out_arg,
    str_arg, write_box, write_string, Released,
};
use crate::client_handle::ClientHandle;
use crate::completion::Outcome;
use crate::error::{Error, ErrorKind, Result};
use crate::feed::Delivery;
use crate::headers::Headers;
use crate::service::{
    self, config::group_config_from_json as group_config, EndpointConfig, EndpointRef, Group,
    Request, Service, ServiceConfig, ServiceError, Verb,
};

/// A running service. Owned, freed with `natsio_service_free`; every
/// function is thread-safe.
pub struct natsio_service {
    svc: Service,
    client: ClientHandle,
    id: CString,
    name: CString,
    version: CString,
}

/// A group of endpoints (a subject prefix and a queue group). Owned,
/// freed with `natsio_service_group_free` (the group's endpoints keep
/// running).
pub struct natsio_service_group {
    group: Group,
}

/// An endpoint of a service: an iterator of requests. Owned, freed with
/// `natsio_endpoint_free` (the endpoint keeps running until the service
/// stops); every function is thread-safe.
pub struct natsio_endpoint {
    ep: service::Endpoint,
    client: ClientHandle,
    name: CString,
    subject: CString,
    queue_group: Option<CString>,
}

/// A request to an endpoint. One handed to a callback is borrowed for the
/// call (`natsio_service_request_clone` keeps it); one returned through
/// `natsio_service_request **` is owned and freed with
/// `natsio_service_request_free`. Thread-safe: it may be answered from any
/// thread, later.
pub struct natsio_service_request {
    req: Request,
    msg: natsio_msg,
}

impl natsio_service_request {
    fn new(req: Request, client: ClientHandle) -> Self {
        let msg = natsio_msg::new(req.message().clone(), client);
        natsio_service_request { req, msg }
    }
}

/// A monitoring verb of `natsio_client_service_discover`.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum natsio_service_verb {
    NATSIO_SERVICE_PING = 0,
    NATSIO_SERVICE_INFO = 1,
    NATSIO_SERVICE_STATS = 2,
}

/// Receives an endpoint's requests in push mode
/// (`natsio_endpoint_set_callback`): each request with NATSIO_OK (`req`
/// borrowed for the call), then once `req` NULL with the status that ended
/// the endpoint (NATSIO_DONE after the service's stop). A status other
/// than NATSIO_OK returned for a request is a handler failure: the
/// service's error callback is called, then the requester gets a 500
/// error reply (unless answered already) and the endpoint counts an error.
/// The return value of the final call is ignored.
pub type natsio_service_request_cb = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        req: *const natsio_service_request,
        status: natsio_status,
    ) -> natsio_status,
>;

/// Gives an endpoint's `data` for STATS: JSON text allocated with
/// `malloc` (the library frees it with `free`), or NULL to leave the field
/// out. Called on a library thread for every STATS request and
/// `natsio_service_stats_json`, possibly from several threads at once.
pub type natsio_service_stats_cb = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        endpoint_name: *const c_char,
        endpoint_subject: *const c_char,
    ) -> *mut c_char,
>;

/// Told of a handler failure (code 500), on the thread that saw it, and
/// of requests dropped over an endpoint's pending limits (code 0; the
/// endpoint's subject, wildcards as subscribed; the slow-consumer text as
/// the description), on the client's event dispatcher thread, which also
/// runs the client's event and error callbacks (they wait while it runs:
/// return promptly). An answer that cannot be sent is the respond
/// call's error and counts in STATS, without a call here. The strings are
/// borrowed for the call.
pub type natsio_service_error_cb = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        endpoint_name: *const c_char,
        subject: *const c_char,
        code: i32,
        description: *const c_char,
    ),
>;

fn svc<'a>(p: *const natsio_service) -> Result<&'a natsio_service> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "service") }
}

fn endpoint<'a>(p: *const natsio_endpoint) -> Result<&'a natsio_endpoint> {
    // SAFETY: as above.
    unsafe { arg(p, "endpoint") }
}

fn request<'a>(p: *const natsio_service_request) -> Result<&'a natsio_service_request> {
    // SAFETY: as above.
    unsafe { arg(p, "req") }
}

/// Starts a service on `c` from `config_json`: {"name" (required,
/// [A-Za-z0-9_-]+), "version" (required, SemVer 2.0), "description",
/// "metadata" (object of strings), "queue_group" (the endpoints' default;
/// "q" when absent), "queue_group_disabled" (true: endpoints without a
/// queue group, every instance gets every request)}, the field names of
/// nats.go's micro.Config. It answers `$SRV.PING|INFO|STATS` (bare, by
/// name, by name and id) from now on; add endpoints with
/// `natsio_service_add_endpoint`. The service runs until
/// `natsio_service_stop` or the client's close; `*service_out` (free with
/// `natsio_service_free`). Does not block. Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_SERVICE_CONFIG (bad JSON, name, version or queue group:
/// nothing is sent), NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_add_service(
    c: *const natsio_client,
    config_json: *const c_char,
    service_out: *mut *mut natsio_service,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(service_out, "service_out")?;
        let config = ServiceConfig::from_json(str_arg(config_json, "config_json")?)?;
        let svc = Service::add(cl, config)?;
        write_box(
            out,
            natsio_service {
                client: ClientHandle::of(cl),
                id: cstring(svc.id()),
                name: cstring(svc.name()),
                version: cstring(svc.version()),
                svc,
            },
        );
        Ok(())
    })
}

/// Asks services for their PING, INFO or STATS response
/// (`$SRV.<verb>[.<name>[.<id>]]`; `name` and `id` may be NULL, an id
/// needs a name) and returns the replies, one JSON document per instance,
/// as `natsio_client_request_many` does (`opts` may be NULL: the client's
/// request timeout; set `stall_ms` to end soon after the last answer).
/// Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_SERVICE_CONFIG (name, id),
/// NATSIO_ERR_INVALID_ARGUMENT (verb, options),
/// NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_service_discover(
    c: *const natsio_client,
    verb: i32,
    name: *const c_char,
    id: *const c_char,
    opts: *const super::client::natsio_request_many_options,
    replies_out: *mut *mut natsio_replies,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(replies_out, "replies_out")?;
        let verb = match verb {
            0 => Verb::Ping,
            1 => Verb::Info,
            2 => Verb::Stats,
            v => {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    format!("unknown service verb {v}"),
                ))
            }
        };
        let it = service::discover(
            cl,
            verb,
            opt_str_arg(name, "name")?,
            opt_str_arg(id, "id")?,
            request_many_options(cl, opts)?,
        )?;
        write_box(
            out,
            natsio_replies {
                it,
                client: ClientHandle::of(cl),
            },
        );
        Ok(())
    })
}

/// The service's id (a NUID), borrowed from the handle. NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_id(s: *const natsio_service) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(svc(s)?.id.as_ptr()))
}

/// The service's name, borrowed from the handle. NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_name(s: *const natsio_service) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(svc(s)?.name.as_ptr()))
}

/// The service's version, borrowed from the handle. NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_version(s: *const natsio_service) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(svc(s)?.version.as_ptr()))
}

/// Adds a group under `parent` (NULL: the service itself) from
/// `config_json`: {"name" (a subject prefix, `*` allowed, no `>`),
/// "queue_group", "queue_group_disabled"}; an absent queue group is the
/// parent's. Endpoints added to it listen on `<prefix>.<subject>`. Free
/// `*group_out` with `natsio_service_group_free`. Errors:
/// NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_SERVICE_CONFIG.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_add_group(
    s: *const natsio_service,
    parent: *const natsio_service_group,
    config_json: *const c_char,
    group_out: *mut *mut natsio_service_group,
) -> natsio_status {
    guard(|| {
        let sv = svc(s)?;
        let out = out_arg(group_out, "group_out")?;
        let (name, queue_group) = group_config(str_arg(config_json, "config_json")?)?;
        let group = match parent.as_ref() {
            Some(p) => p.group.add_group(&name, queue_group)?,
            None => sv.svc.add_group(&name, queue_group)?,
        };
        write_box(out, natsio_service_group { group });
        Ok(())
    })
}

/// Frees a group handle (its endpoints keep running). NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_group_free(group: *mut natsio_service_group) {
    free_box(group)
}

/// Adds an endpoint to `group` (NULL: the service itself) from
/// `config_json`: {"name" (required, [A-Za-z0-9_-]+), "subject" (default:
/// the name; wildcards allowed, `>` last), "metadata" (object of strings),
/// "queue_group", "queue_group_disabled", "pending_msgs_limit",
/// "pending_bytes_limit"}; an absent queue group is the group's or
/// service's. The pending limits bound the requests the endpoint holds
/// (nats.go's `WithEndpointPendingLimits`; absent: the client's
/// subscription defaults; negative: none; 0 is refused): those queued
/// unread and, with a callback, the one it is busy with until it returns
/// (as nats.go counts it). A request over them is dropped
/// (`natsio_endpoint_get_stats` counts it in `dropped`); each
/// slow-consumer report (at most one a second) counts one error in the
/// endpoint's STATS (`num_errors`, `last_error`) and is told to the
/// service's error callback (code 0), and the client's error callback
/// gets it as for any subscription. It subscribes at once: requests
/// queue until read with `natsio_endpoint_next`,
/// `natsio_endpoint_next_async` or a callback
/// (`natsio_endpoint_set_callback`). Free `*endpoint_out` with
/// `natsio_endpoint_free`. Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_SERVICE_CONFIG (nothing is sent), NATSIO_ERR_ILLEGAL_STATE
/// (the service has stopped), NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_add_endpoint(
    s: *const natsio_service,
    group: *const natsio_service_group,
    config_json: *const c_char,
    endpoint_out: *mut *mut natsio_endpoint,
) -> natsio_status {
    guard(|| {
        let sv = svc(s)?;
        let out = out_arg(endpoint_out, "endpoint_out")?;
        let config = EndpointConfig::from_json(str_arg(config_json, "config_json")?)?;
        let ep = match group.as_ref() {
            Some(g) => g.group.add_endpoint(config)?,
            None => sv.svc.add_endpoint(config)?,
        };
        write_box(
            out,
            natsio_endpoint {
                client: ClientHandle::from(&ep.subscription().client),
                name: cstring(ep.name()),
                subject: cstring(ep.subject()),
                queue_group: ep.queue_group().map(cstring),
                ep,
            },
        );
        Ok(())
    })
}

/// The INFO response (`io.nats.micro.v1.info_response` JSON) through
/// `*json_out` (free with `natsio_string_free`). Errors:
/// NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_info_json(
    s: *const natsio_service,
    json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let info = svc(s)?.svc.info();
        write_json(json_out, &info)
    })
}

/// The STATS response (`io.nats.micro.v1.stats_response` JSON, times in
/// nanoseconds) through `*json_out` (free with `natsio_string_free`).
/// Calls the stats callback, if any, on this thread. Errors:
/// NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_stats_json(
    s: *const natsio_service,
    json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let stats = svc(s)?.svc.stats();
        write_json(json_out, &stats)
    })
}

unsafe fn write_json<T: serde::Serialize>(out: *mut *mut c_char, v: &T) -> Result<()> {
    let out = out_arg(out, "json_out")?;
    let json = serde_json::to_string(v)
        .map_err(|e| Error::new(ErrorKind::Internal, format!("encoding JSON: {e}")))?;
    write_string(out, &json)
}

/// Zeroes every endpoint's counters and restarts the service's `started`
/// clock. Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_reset(s: *const natsio_service) -> natsio_status {
    guard(|| {
        svc(s)?.svc.reset();
        Ok(())
    })
}

/// Sets (or with `cb` NULL removes) the callback that gives each
/// endpoint's STATS `data` (see `natsio_service_stats_cb`); without one,
/// an endpoint reports what `natsio_endpoint_set_stats_data` set. The
/// previous callback's `release` runs once no call of it is running.
/// Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_set_stats_callback(
    s: *const natsio_service,
    cb: natsio_service_stats_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
) -> natsio_status {
    guard(|| {
        let sv = svc(s)?;
        let Some(f) = cb else {
            sv.svc.set_stats_handler(None);
            return Ok(());
        };
        let held = Arc::new(Released::new(user_data, release));
        sv.svc
            .set_stats_handler(Some(Arc::new(move |ep: &EndpointRef<'_>| {
                let (name, subject) = (cstring(ep.name), cstring(ep.subject));
                // SAFETY: the application registered `f` for this user data.
                let p = unsafe { f(held.ptr(), name.as_ptr(), subject.as_ptr()) };
                if p.is_null() {
                    return None;
                }
                // SAFETY: the callback returned a NUL-terminated malloc'd string.
                let text = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
                // SAFETY: allocated with malloc, as the callback's contract says.
                unsafe { libc::free(p.cast()) };
                Some(text)
            })));
        Ok(())
    })
}

/// Sets (or with `cb` NULL removes) the callback told of handler failures
/// and of requests dropped over an endpoint's pending limits (see
/// `natsio_service_error_cb`).
/// The previous callback's `release` runs once no call of it is running.
/// Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_set_error_callback(
    s: *const natsio_service,
    cb: natsio_service_error_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
) -> natsio_status {
    guard(|| {
        let sv = svc(s)?;
        let Some(f) = cb else {
            sv.svc.set_error_handler(None);
            return Ok(());
        };
        let held = Arc::new(Released::new(user_data, release));
        sv.svc
            .set_error_handler(Some(Arc::new(move |e: &ServiceError| {
                let (ep, subject, desc) = (
                    cstring(&e.endpoint),
                    cstring(&e.subject),
                    cstring(&e.description),
                );
                // SAFETY: the application registered `f` for this user data.
                unsafe {
                    f(
                        held.ptr(),
                        ep.as_ptr(),
                        subject.as_ptr(),
                        e.code,
                        desc.as_ptr(),
                    )
                };
            })));
        Ok(())
    })
}

/// Stops the service: every endpoint and monitoring subscription drains
/// (requests already received are still delivered and may be answered;
/// new ones find no responder), then waits up to `timeout_ms`
/// (NATSIO_TIMEOUT_DEFAULT or NATSIO_WAIT_FOREVER: as long as it takes)
/// for the drain. Endpoint callbacks get their final call (NATSIO_DONE)
/// before it returns. Stopping a stopped service returns at once. Blocks.
/// Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_TIMEOUT (still draining),
/// NATSIO_ERR_ILLEGAL_STATE (runtime thread).
#[no_mangle]
pub unsafe extern "C" fn natsio_service_stop(
    s: *const natsio_service,
    timeout_ms: i64,
) -> natsio_status {
    guard(|| {
        let sv = svc(s)?;
        let timeout = super::timeout_arg(timeout_ms, None, true)?;
        sv.svc.stop(timeout)?;
        for ep in sv.svc.endpoints() {
            // The final callback has run once this returns.
            ep.subscription().feed().join_dispatcher();
        }
        Ok(())
    })
}

/// The token form of `natsio_service_stop`: starts the stop and completes
/// once every subscription has drained.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_stop_async(
    s: *const natsio_service,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let sv = svc(s)?;
        let out = out_arg(token_out, "token_out")?;
        let c = sv.svc.stop_async();
        write_box(out, natsio_token::new(c, sv.client.clone()));
        Ok(())
    })
}

/// A token that completes once the service has stopped, by
/// `natsio_service_stop` or its client's close, without stopping it.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_end_async(
    s: *const natsio_service,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let sv = svc(s)?;
        let out = out_arg(token_out, "token_out")?;
        write_box(
            out,
            natsio_token::new(sv.svc.stopped_async(), sv.client.clone()),
        );
        Ok(())
    })
}

/// Whether the service has stopped (a stop completed, or the client
/// closed). False for NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_is_stopped(s: *const natsio_service) -> bool {
    guard_value(false, || Ok(svc(s)?.svc.is_stopped()))
}

/// Frees the handle. A service not stopped stops at once (no drain:
/// queued requests are dropped). NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_free(s: *mut natsio_service) {
    free_box(s)
}

/// The endpoint's name, borrowed from the handle. NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_endpoint_name(ep: *const natsio_endpoint) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(endpoint(ep)?.name.as_ptr()))
}

/// The endpoint's full subject (group prefix included), borrowed from the
/// handle. NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_endpoint_subject(ep: *const natsio_endpoint) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(endpoint(ep)?.subject.as_ptr()))
}

/// The endpoint's queue group, borrowed from the handle; NULL when it has
/// none (disabled) or for NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_endpoint_queue_group(ep: *const natsio_endpoint) -> *const c_char {
    guard_value(std::ptr::null(), || {
        Ok(endpoint(ep)?
            .queue_group
            .as_ref()
            .map_or(std::ptr::null(), |q| q.as_ptr()))
    })
}

/// The endpoint's STATS entry (JSON, as in `natsio_service_stats_json`)
/// through `*json_out` (free with `natsio_string_free`). Errors:
/// NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_endpoint_stats_json(
    ep: *const natsio_endpoint,
    json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let stats = endpoint(ep)?.ep.stats();
        write_json(json_out, &stats)
    })
}

/// Sets the endpoint's STATS `data` (JSON text; NULL removes it), used
/// when the service has no stats callback. Errors:
/// NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_ARGUMENT (not JSON).
#[no_mangle]
pub unsafe extern "C" fn natsio_endpoint_set_stats_data(
    ep: *const natsio_endpoint,
    json: *const c_char,
) -> natsio_status {
    guard(|| endpoint(ep)?.ep.set_stats_data(opt_str_arg(json, "json")?))
}

/// The next request (owned; free with `natsio_service_request_free`),
/// waiting up to `timeout_ms` (NATSIO_TIMEOUT_DEFAULT or
/// NATSIO_WAIT_FOREVER: as long as it takes; NATSIO_NO_WAIT: only one
/// already received). NATSIO_DONE (`*req_out` set to NULL) once the
/// endpoint has ended (the service stopped and the backlog was read).
/// Blocks. Errors: NATSIO_ERR_TIMEOUT, NATSIO_ERR_CONNECTION_CLOSED,
/// NATSIO_ERR_ILLEGAL_STATE (callback mode, runtime thread).
#[no_mangle]
pub unsafe extern "C" fn natsio_endpoint_next(
    ep: *const natsio_endpoint,
    timeout_ms: i64,
    req_out: *mut *mut natsio_service_request,
) -> natsio_status {
    let e = match endpoint(ep) {
        Ok(e) => e,
        Err(err) => return status::record(&err),
    };
    let client = e.client.clone();
    let shared = e.ep.clone();
    iter::next(
        e.ep.subscription().feed(),
        timeout_ms,
        req_out,
        "req_out",
        |m| Ok(natsio_service_request::new(shared.request_for(m), client)),
    )
}

/// A token for the next request, read with `natsio_token_service_request`
/// (NATSIO_DONE once the endpoint has ended). Errors:
/// NATSIO_ERR_ILLEGAL_STATE (callback mode).
#[no_mangle]
pub unsafe extern "C" fn natsio_endpoint_next_async(
    ep: *const natsio_endpoint,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    match endpoint(ep) {
        Ok(e) => iter::next_async(e.ep.subscription().feed(), e.client.clone(), token_out),
        Err(err) => status::record(&err),
    }
}

/// The request a `natsio_endpoint_next_async` token produced, as a new
/// owned request (free with `natsio_service_request_free`). Returns
/// NATSIO_PENDING while waiting, NATSIO_DONE when the endpoint ended, its
/// error status if it failed, NATSIO_ERR_ILLEGAL_STATE if the token is not
/// an endpoint's.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_service_request(
    token: *const natsio_token,
    req_out: *mut *mut natsio_service_request,
) -> natsio_status {
    if req_out.is_null() {
        return guard(|| Err(super::null("req_out")));
    }
    with_outcome(token, |t, o| match o {
        Outcome::Msg(m) => {
            let req = service::request_for_message(&t.client, m)?;
            write_box(req_out, natsio_service_request::new(req, t.client.clone()));
            Ok(())
        }
        _ => Err(wrong_kind("service request")),
    })
}

/// Switches the endpoint to push mode: `cb` receives every request
/// (borrowed for the call), in order, one at a time, on the endpoint's own
/// library thread, then the end (see `natsio_service_request_cb`). It may
/// block and may call any natsio function. Requests queued before the call
/// are delivered first. `release` (may be NULL) is called with
/// `user_data` after the last call; if this function fails it is not.
/// Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_ILLEGAL_STATE (a callback
/// is set already, or tokens are pending).
#[no_mangle]
pub unsafe extern "C" fn natsio_endpoint_set_callback(
    ep: *const natsio_endpoint,
    cb: natsio_service_request_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
) -> natsio_status {
    guard(|| {
        let e = endpoint(ep)?;
        let Some(f) = cb else {
            return Err(super::null("cb"));
        };
        // SAFETY: the same function type but for the return, natsio_status,
        // which is repr(i32): read as an integer (status::CALLBACK_OK).
        let f = std::mem::transmute::<
            unsafe extern "C" fn(
                *mut c_void,
                *const natsio_service_request,
                natsio_status,
            ) -> natsio_status,
            unsafe extern "C" fn(*mut c_void, *const natsio_service_request, natsio_status) -> i32,
        >(f);
        let client = e.client.clone();
        let held = Arc::new(Released::new(user_data, release));
        let handler = Box::new(move |d: Delivery<Request>| match d {
            Delivery::Item(req) => {
                let h = natsio_service_request::new(req, client.clone());
                // SAFETY: the application registered `f` for this user data.
                let st = unsafe { f(held.ptr(), &h, natsio_status::NATSIO_OK) };
                if st != status::CALLBACK_OK {
                    h.req.fail(&status::failure_text(st));
                }
            }
            Delivery::Batch(reqs) => {
                for req in reqs {
                    let h = natsio_service_request::new(req, client.clone());
                    // SAFETY: as above.
                    let st = unsafe { f(held.ptr(), &h, natsio_status::NATSIO_OK) };
                    if st != status::CALLBACK_OK {
                        h.req.fail(&status::failure_text(st));
                    }
                }
            }
            Delivery::End(err) => {
                // SAFETY: as above.
                unsafe { f(held.ptr(), std::ptr::null(), iter::end_status(err)) };
            }
        });
        e.ep.set_handler(handler)
    })
}

/// Stops this endpoint alone at once (unsubscribes, drops its queued
/// requests): `natsio_endpoint_next` returns NATSIO_DONE; it stays in the
/// service's INFO and STATS. Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_endpoint_stop(ep: *const natsio_endpoint) -> natsio_status {
    guard(|| {
        endpoint(ep)?.ep.subscription().stop();
        Ok(())
    })
}

/// The endpoint's iterator counters (requests delivered and queued).
/// Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_endpoint_get_stats(
    ep: *const natsio_endpoint,
    stats_out: *mut natsio_iter_stats,
) -> natsio_status {
    guard(|| iter::stats(endpoint(ep)?.ep.subscription().feed().stats(), stats_out))
}

/// Frees the handle; the endpoint keeps running until the service stops.
/// NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn natsio_endpoint_free(ep: *mut natsio_endpoint) {
    free_box(ep)
}

/// The request's message (subject, reply, data, headers), borrowed from
/// the request. NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_request_msg(
    req: *const natsio_service_request,
) -> *const natsio_msg {
    guard_value(std::ptr::null(), || {
        Ok(&request(req)?.msg as *const natsio_msg)
    })
}

/// Answers the request with `data` (`len` bytes; NULL with 0 for none)
/// and `headers` (may be NULL). The first answer ends its processing
/// time and is counted before it is sent (a requester that has it reads
/// stats that include it); a failure to send counts as an error. Does not block. Errors:
/// NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_NO_REPLY_SUBJECT,
/// NATSIO_ERR_MAX_PAYLOAD, NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_request_respond(
    req: *const natsio_service_request,
    headers: *const Headers,
    data: *const c_void,
    len: usize,
) -> natsio_status {
    guard(|| {
        let r = request(req)?;
        r.req
            .respond(opt_arg_headers(headers), bytes_arg(data, len, "data")?)
    })
}

/// Answers with an error: headers `Nats-Service-Error: <description>` and
/// `Nats-Service-Error-Code: <code>` (beside `headers`, which may be
/// NULL), `data` as the body. Counts as an error; the endpoint's
/// `last_error` becomes "<code>:<description>". Errors:
/// NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_ARGUMENT (empty
/// description), NATSIO_ERR_BAD_HEADERS (a description with CR or LF),
/// NATSIO_ERR_NO_REPLY_SUBJECT, NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_request_respond_error(
    req: *const natsio_service_request,
    code: i32,
    description: *const c_char,
    headers: *const Headers,
    data: *const c_void,
    len: usize,
) -> natsio_status {
    guard(|| {
        let r = request(req)?;
        r.req.respond_error(
            code,
            str_arg(description, "description")?,
            opt_arg_headers(headers),
            bytes_arg(data, len, "data")?,
        )
    })
}

/// Reports that the handler failed with `description` (NULL: "handler
/// error"): what an endpoint callback's error status does, for handlers
/// run by a binding (an exception, a panic, a rejected promise). Calls the
/// service's error callback on this thread, then sends a 500 error reply
/// unless the request was answered, and counts the error: a requester
/// that has the 500 knows the callback ran. Errors:
/// NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_request_fail(
    req: *const natsio_service_request,
    description: *const c_char,
) -> natsio_status {
    guard(|| {
        let r = request(req)?;
        r.req
            .fail(opt_str_arg(description, "description")?.unwrap_or(""));
        Ok(())
    })
}

/// A new owned handle to the same request (to answer it after a callback
/// returns, from any thread). Free with `natsio_service_request_free`.
/// Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_request_clone(
    req: *const natsio_service_request,
    req_out: *mut *mut natsio_service_request,
) -> natsio_status {
    guard(|| {
        let r = request(req)?;
        let out = out_arg(req_out, "req_out")?;
        write_box(
            out,
            natsio_service_request::new(r.req.clone(), r.msg.client.clone()),
        );
        Ok(())
    })
}

/// Frees a request handle. The last handle of a request never answered
/// ends its processing time (it counts as a request, not an error). NULL
/// is ignored.
#[no_mangle]
pub unsafe extern "C" fn natsio_service_request_free(req: *mut natsio_service_request) {
    free_box(req)
}
