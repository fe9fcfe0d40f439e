//! `natsio_obj`: an Object Store bucket (ADR-20), with `natsio_obj_info`
//! (an object's description), `natsio_obj_status`, the streamed writer
//! `natsio_obj_writer`, the streamed reader `natsio_obj_reader` and the
//! watcher `natsio_obj_watcher`. Every request-shaped call has a token form.

use std::ffi::{c_char, c_void, CString};
use std::sync::{Arc, OnceLock};

use super::bucket;
use super::iter::{self, natsio_iter_stats};
use super::js::natsio_js;
use super::list::{count, natsio_string_list, write_list};
use super::status::natsio_status;
use super::token::{natsio_token, token_value, with_outcome, wrong_kind};
use super::{
    arg, bytes_arg, cstring, free_box, guard, guard_value, guard_void, opt_str_arg, options_arg,
    out_arg, start_op, str_arg, timeout_arg, write_box, TakeOnce,
};
use crate::client_handle::ClientHandle;
use crate::error::{Error, ErrorKind, Result};
use crate::headers::Headers;
use crate::jetstream::{CreateAction, JetStream};
use crate::object::{
    Chunk, ObjectInfo, ObjectMeta, ObjectReader, ObjectStore, ObjectStoreStatus, ObjectWatchEvent,
    ObjectWatchOptions, ObjectWatcher, ObjectWriter,
};
use crate::op::Op;

/// How long `natsio_obj_reader_read` waits for a chunk by default (the
/// reference's chunk_timeout).
const DEFAULT_CHUNK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

fn opt_ptr(s: &Option<CString>) -> *const c_char {
    s.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())
}

// ---- buckets ---------------------------------------------------------------

/// A bound Object Store bucket. Created by `natsio_js_obj_create` or
/// `natsio_js_obj_bind`, freed with `natsio_obj_free`. Like its context it
/// does not keep the client open. Every function is thread-safe.
pub struct natsio_obj {
    os: ObjectStore,
    bucket: CString,
}

impl natsio_obj {
    fn new(os: ObjectStore) -> Self {
        let bucket = cstring(os.bucket());
        natsio_obj { os, bucket }
    }

    fn client_handle(&self) -> ClientHandle {
        ClientHandle::from(self.os.client())
    }
}

impl bucket::BucketKind for natsio_obj {
    type Bucket = ObjectStore;
    type Status = ObjectStoreStatus;
    type Handle = natsio_obj;
    type StatusHandle = natsio_obj_status;
    type StatusList = natsio_obj_status_list;
    const OUT: &'static str = "obj_out";

    fn create(js: &JetStream, config_json: &str, action: CreateAction) -> Op<ObjectStore> {
        js.create_object_store(config_json, action)
    }
    fn bind(js: &JetStream, bucket: &str) -> Op<ObjectStore> {
        js.object_store(bucket)
    }
    fn delete(js: &JetStream, bucket: &str) -> Op<()> {
        js.delete_object_store(bucket)
    }
    fn names(js: &JetStream) -> Op<Vec<String>> {
        js.object_store_names()
    }
    fn statuses(js: &JetStream) -> Op<Vec<ObjectStoreStatus>> {
        js.object_stores()
    }
    fn handle(os: ObjectStore) -> natsio_obj {
        natsio_obj::new(os)
    }
    fn status_handle(status: ObjectStoreStatus) -> natsio_obj_status {
        natsio_obj_status::new(status)
    }
    fn status_list(items: Vec<natsio_obj_status>) -> natsio_obj_status_list {
        natsio_obj_status_list { items }
    }
    fn status_items(list: &natsio_obj_status_list) -> &Vec<natsio_obj_status> {
        &list.items
    }
}

fn obj<'a>(p: *const natsio_obj) -> Result<&'a natsio_obj> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "obj") }
}

/// Creates, updates or creates-or-updates (per `action`, a
/// `natsio_create_action` value) an Object Store bucket from
/// `config_json`, an ObjectStoreConfig object: "bucket" (required,
/// [A-Za-z0-9_-]+), "description", "ttl" (duration: nanoseconds or "90s"),
/// "max_bytes" (default -1), "storage" ("file", the default, or "memory"),
/// "replicas", "placement", "compression" (bool), "metadata" (object of
/// strings). The backing stream is `OBJ_<bucket>` on `$O.<bucket>.C.>` and
/// `$O.<bucket>.M.>`, as nats.go and nats.js make it. Binds it through
/// `obj_out` (free with `natsio_obj_free`). NATSIO_CREATE of an identical
/// existing bucket simply binds it. Blocks up to the context's timeout.
/// Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_CONFIG (the detail names
/// the field), NATSIO_ERR_INVALID_BUCKET_NAME, NATSIO_ERR_INVALID_ARGUMENT
/// (action), NATSIO_ERR_BUCKET_EXISTS (exists with another configuration),
/// NATSIO_ERR_BUCKET_NOT_FOUND (NATSIO_UPDATE of a missing bucket),
/// NATSIO_ERR_JS_NOT_ENABLED (the account has no JetStream),
/// NATSIO_ERR_NO_RESPONDERS (nobody answered: no leader during an election,
/// retry; or the server has no JetStream),
/// NATSIO_ERR_JS_API, NATSIO_ERR_TIMEOUT, NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_obj_create(
    js: *const natsio_js,
    config_json: *const c_char,
    action: i32,
    obj_out: *mut *mut natsio_obj,
) -> natsio_status {
    bucket::create::<natsio_obj>(js, config_json, action, obj_out)
}

/// The token form of `natsio_js_obj_create`; the bucket handle is read
/// with `natsio_token_obj`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_obj_create_async(
    js: *const natsio_js,
    config_json: *const c_char,
    action: i32,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    bucket::create_async::<natsio_obj>(js, config_json, action, token_out)
}

/// Binds the existing bucket `bucket` through `obj_out`. Errors:
/// NATSIO_ERR_BUCKET_NOT_FOUND, NATSIO_ERR_INVALID_BUCKET_NAME, and the
/// request errors of `natsio_js_obj_create`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_obj_bind(
    js: *const natsio_js,
    bucket: *const c_char,
    obj_out: *mut *mut natsio_obj,
) -> natsio_status {
    bucket::bind::<natsio_obj>(js, bucket, obj_out)
}

/// The token form of `natsio_js_obj_bind` (`natsio_token_obj`).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_obj_bind_async(
    js: *const natsio_js,
    bucket: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    bucket::bind_async::<natsio_obj>(js, bucket, token_out)
}

/// The bucket a `natsio_js_obj_create_async` or `natsio_js_obj_bind_async`
/// produced, as a new handle (each call) freed with `natsio_obj_free`.
/// Returns as `natsio_token_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_obj(
    token: *const natsio_token,
    obj_out: *mut *mut natsio_obj,
) -> natsio_status {
    bucket::token_bucket::<natsio_obj>(token, obj_out)
}

/// Deletes bucket `bucket` with every object in it. Errors:
/// NATSIO_ERR_BUCKET_NOT_FOUND, as for `natsio_js_obj_bind`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_obj_delete(
    js: *const natsio_js,
    bucket: *const c_char,
) -> natsio_status {
    bucket::delete::<natsio_obj>(js, bucket)
}

/// The token form of `natsio_js_obj_delete` (`natsio_token_status`).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_obj_delete_async(
    js: *const natsio_js,
    bucket: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    bucket::delete_async::<natsio_obj>(js, bucket, token_out)
}

/// The names of every Object Store bucket through `list_out` (free with
/// `natsio_string_list_free`): streams named `OBJ_<name>` that hold the
/// `$O.*.C.>` subjects (a plain stream on `$O` subjects is no bucket).
/// Errors: the request errors of `natsio_js_obj_create`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_obj_names(
    js: *const natsio_js,
    list_out: *mut *mut natsio_string_list,
) -> natsio_status {
    bucket::names::<natsio_obj>(js, list_out)
}

/// The token form of `natsio_js_obj_names` (`natsio_token_string_list`).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_obj_names_async(
    js: *const natsio_js,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    bucket::names_async::<natsio_obj>(js, token_out)
}

/// The status of every Object Store bucket (as `natsio_js_obj_names`
/// filters them) through `list_out` (free with
/// `natsio_obj_status_list_free`), built from the paged stream list
/// without a request per bucket. Errors: as `natsio_js_obj_names`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_obj_statuses(
    js: *const natsio_js,
    list_out: *mut *mut natsio_obj_status_list,
) -> natsio_status {
    bucket::statuses::<natsio_obj>(js, list_out)
}

/// The token form of `natsio_js_obj_statuses`
/// (`natsio_token_obj_status_list`).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_obj_statuses_async(
    js: *const natsio_js,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    bucket::statuses_async::<natsio_obj>(js, token_out)
}

/// The bucket's name (borrowed from the handle; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_bucket(obj: *const natsio_obj) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(self::obj(obj)?.bucket.as_ptr()))
}

/// Frees a bucket handle (the bucket itself stays). Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_free(obj: *mut natsio_obj) {
    free_box(obj)
}

/// The bucket's status through `status_out` (free with
/// `natsio_obj_status_free`). Errors: NATSIO_ERR_BUCKET_NOT_FOUND, the
/// request errors of `natsio_js_obj_create`.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_get_status(
    obj: *const natsio_obj,
    status_out: *mut *mut natsio_obj_status,
) -> natsio_status {
    guard(|| {
        let o = self::obj(obj)?;
        let out = out_arg(status_out, "status_out")?;
        write_box(out, natsio_obj_status::new(o.os.status().wait()?));
        Ok(())
    })
}

/// The token form of `natsio_obj_get_status` (`natsio_token_obj_status`).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_get_status_async(
    obj: *const natsio_obj,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let o = self::obj(obj)?;
        start_op(o.os.status(), o.client_handle(), token_out)
    })
}

/// Seals the bucket: it can still be read, no longer changed (a put then
/// fails with NATSIO_ERR_BUCKET_SEALED). Errors: as `natsio_obj_get_status`.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_seal(obj: *const natsio_obj) -> natsio_status {
    guard(|| self::obj(obj)?.os.seal().wait())
}

/// The token form of `natsio_obj_seal` (`natsio_token_status`).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_seal_async(
    obj: *const natsio_obj,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let o = self::obj(obj)?;
        start_op(o.os.seal(), o.client_handle(), token_out)
    })
}

// ---- bucket status ---------------------------------------------------------

/// A bucket's status. Owned by the caller, freed with
/// `natsio_obj_status_free`; read-only, safe to share between threads.
pub struct natsio_obj_status {
    status: ObjectStoreStatus,
    bucket: CString,
    description: Option<CString>,
    storage: CString,
    metadata_json: CString,
    stream_info_json: OnceLock<CString>,
}

impl natsio_obj_status {
    fn new(status: ObjectStoreStatus) -> Self {
        natsio_obj_status {
            bucket: cstring(&status.bucket),
            description: status.description.as_deref().map(cstring),
            storage: cstring(&status.storage),
            metadata_json: cstring(&status.metadata_json()),
            stream_info_json: OnceLock::new(),
            status,
        }
    }
}

fn status_arg<'a>(p: *const natsio_obj_status) -> Result<&'a natsio_obj_status> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "status") }
}

/// The bucket's name (borrowed; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_status_bucket(s: *const natsio_obj_status) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(status_arg(s)?.bucket.as_ptr()))
}

/// The bucket's description (borrowed; NULL if none or for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_status_description(
    s: *const natsio_obj_status,
) -> *const c_char {
    guard_value(std::ptr::null(), || {
        Ok(opt_ptr(&status_arg(s)?.description))
    })
}

/// How long objects live, in nanoseconds (0: forever, and for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_status_ttl_ns(s: *const natsio_obj_status) -> i64 {
    guard_value(0, || Ok(status_arg(s)?.status.ttl_ns))
}

/// "file" or "memory" (borrowed; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_status_storage(s: *const natsio_obj_status) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(status_arg(s)?.storage.as_ptr()))
}

/// How many replicas the bucket has (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_status_replicas(s: *const natsio_obj_status) -> i64 {
    guard_value(0, || Ok(status_arg(s)?.status.replicas))
}

/// Bytes stored: chunks and descriptions (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_status_size(s: *const natsio_obj_status) -> u64 {
    guard_value(0, || Ok(status_arg(s)?.status.size))
}

/// Whether the bucket is sealed (false for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_status_sealed(s: *const natsio_obj_status) -> bool {
    guard_value(false, || Ok(status_arg(s)?.status.sealed))
}

/// Whether the bucket's stream compresses (s2; false for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_status_compression(s: *const natsio_obj_status) -> bool {
    guard_value(false, || Ok(status_arg(s)?.status.compression))
}

/// The bucket's metadata as a JSON object of strings ("{}" if none;
/// borrowed; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_status_metadata_json(
    s: *const natsio_obj_status,
) -> *const c_char {
    guard_value(std::ptr::null(), || {
        Ok(status_arg(s)?.metadata_json.as_ptr())
    })
}

/// The backing stream's StreamInfo JSON (borrowed; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_status_stream_info_json(
    s: *const natsio_obj_status,
) -> *const c_char {
    guard_value(std::ptr::null(), || {
        let s = status_arg(s)?;
        Ok(s.stream_info_json
            .get_or_init(|| cstring(&s.status.stream_info.to_string()))
            .as_ptr())
    })
}

/// Frees a status. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_status_free(s: *mut natsio_obj_status) {
    free_box(s)
}

/// The status a `natsio_obj_get_status_async` produced, as a new
/// `natsio_obj_status`. Returns as `natsio_token_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_obj_status(
    token: *const natsio_token,
    status_out: *mut *mut natsio_obj_status,
) -> natsio_status {
    bucket::token_status::<natsio_obj>(token, status_out)
}

/// Statuses returned by `natsio_js_obj_statuses`. Owned by the caller,
/// freed with `natsio_obj_status_list_free` (which frees its statuses).
pub struct natsio_obj_status_list {
    items: Vec<natsio_obj_status>,
}

/// How many statuses the list holds (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_status_list_count(
    list: *const natsio_obj_status_list,
) -> usize {
    bucket::status_list_count::<natsio_obj>(list)
}

/// Status `index` of the list, borrowed until the list is freed (NULL if
/// out of range).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_status_list_get(
    list: *const natsio_obj_status_list,
    index: usize,
) -> *const natsio_obj_status {
    bucket::status_list_get::<natsio_obj>(list, index)
}

/// Frees a list and its statuses. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_status_list_free(list: *mut natsio_obj_status_list) {
    free_box(list)
}

/// The statuses a `natsio_js_obj_statuses_async` produced, as a new list.
/// Returns as `natsio_token_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_obj_status_list(
    token: *const natsio_token,
    list_out: *mut *mut natsio_obj_status_list,
) -> natsio_status {
    bucket::token_status_list::<natsio_obj>(token, list_out)
}

// ---- object info -----------------------------------------------------------

/// An object's description (ObjectInfo), or a watcher's initial-values
/// marker. Owned by the caller, freed with `natsio_obj_info_free`;
/// read-only, safe to share between threads.
pub struct natsio_obj_info {
    info: Arc<ObjectInfo>,
    initial_done: bool,
    name: CString,
    description: Option<CString>,
    bucket: CString,
    nuid: CString,
    digest: CString,
    link_bucket: Option<CString>,
    link_name: Option<CString>,
    metadata_json: OnceLock<CString>,
    json: OnceLock<CString>,
}

impl natsio_obj_info {
    fn new(info: Arc<ObjectInfo>, initial_done: bool) -> Self {
        natsio_obj_info {
            name: cstring(&info.name),
            description: info.description.as_deref().map(cstring),
            bucket: cstring(&info.bucket),
            nuid: cstring(&info.nuid),
            digest: cstring(info.digest.as_deref().unwrap_or("")),
            link_bucket: info.link.as_ref().map(|l| cstring(&l.bucket)),
            link_name: info
                .link
                .as_ref()
                .and_then(|l| l.name.as_deref())
                .map(cstring),
            metadata_json: OnceLock::new(),
            json: OnceLock::new(),
            info,
            initial_done,
        }
    }

    fn from_event(ev: ObjectWatchEvent) -> Self {
        match ev {
            ObjectWatchEvent::Info(i) => natsio_obj_info::new(i, false),
            ObjectWatchEvent::InitialDone(bucket) => natsio_obj_info::new(
                Arc::new(ObjectInfo {
                    bucket: bucket.to_string(),
                    ..ObjectInfo::default()
                }),
                true,
            ),
        }
    }
}

fn info_arg<'a>(p: *const natsio_obj_info) -> Result<&'a natsio_obj_info> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "info") }
}

/// The object's name (borrowed; "" for the watch marker; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_name(i: *const natsio_obj_info) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(info_arg(i)?.name.as_ptr()))
}

/// The object's description (borrowed; NULL if none or for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_description(i: *const natsio_obj_info) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(opt_ptr(&info_arg(i)?.description)))
}

/// The bucket holding the object (borrowed; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_bucket(i: *const natsio_obj_info) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(info_arg(i)?.bucket.as_ptr()))
}

/// The unique id of this version of the object, which names its chunk
/// subject `$O.<bucket>.C.<nuid>` (borrowed; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_nuid(i: *const natsio_obj_info) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(info_arg(i)?.nuid.as_ptr()))
}

/// The object's size in bytes (0 for links, deleted objects and NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_size(i: *const natsio_obj_info) -> u64 {
    guard_value(0, || Ok(info_arg(i)?.info.size))
}

/// How many chunks hold the object (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_chunks(i: *const natsio_obj_info) -> u64 {
    guard_value(0, || Ok(info_arg(i)?.info.chunks))
}

/// The digest, `SHA-256=<base64url>` ("" for links and deleted objects;
/// borrowed; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_digest(i: *const natsio_obj_info) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(info_arg(i)?.digest.as_ptr()))
}

/// Whether this is the tombstone of a deleted object (false for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_deleted(i: *const natsio_obj_info) -> bool {
    guard_value(false, || Ok(info_arg(i)?.info.deleted))
}

/// When the description was stored (the server's time), in nanoseconds
/// since the Unix epoch; 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_mtime_ns(i: *const natsio_obj_info) -> i64 {
    guard_value(0, || Ok(info_arg(i)?.info.mtime_ns))
}

/// The stream sequence the description is stored at (nats.js's
/// `revision`): as read back (info, get, list, watch) or as stored by the
/// call that returned it (put, link); it grows with every change of the
/// object. 0 for NULL and for a watcher's initial-done marker.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_revision(i: *const natsio_obj_info) -> u64 {
    guard_value(0, || Ok(info_arg(i)?.info.revision))
}

/// The object's headers (borrowed from the info; NULL if none or for
/// NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_headers(i: *const natsio_obj_info) -> *const Headers {
    guard_value(std::ptr::null(), || {
        Ok(info_arg(i)?
            .info
            .headers
            .as_ref()
            .map_or(std::ptr::null(), |h| h as *const Headers))
    })
}

/// The object's metadata as a JSON object of strings ("{}" if none;
/// borrowed; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_metadata_json(i: *const natsio_obj_info) -> *const c_char {
    guard_value(std::ptr::null(), || {
        let i = info_arg(i)?;
        Ok(i.metadata_json
            .get_or_init(|| cstring(&i.info.metadata_json()))
            .as_ptr())
    })
}

/// Whether the object is a link (to an object or a bucket; false for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_is_link(i: *const natsio_obj_info) -> bool {
    guard_value(false, || Ok(info_arg(i)?.info.is_link()))
}

/// The bucket a link points to (borrowed; NULL if not a link or for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_link_bucket(i: *const natsio_obj_info) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(opt_ptr(&info_arg(i)?.link_bucket)))
}

/// The object a link points to (borrowed; NULL for a link to a whole
/// bucket, if not a link, or for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_link_name(i: *const natsio_obj_info) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(opt_ptr(&info_arg(i)?.link_name)))
}

/// The chunk size the writer used (0 if it recorded none, or for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_max_chunk_size(i: *const natsio_obj_info) -> u32 {
    guard_value(0, || Ok(info_arg(i)?.info.max_chunk_size.unwrap_or(0)))
}

/// The description as ADR-20 JSON, as nats.go and nats.js store it
/// (mtime: the server's time). Borrowed; NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_json(i: *const natsio_obj_info) -> *const c_char {
    guard_value(std::ptr::null(), || {
        let i = info_arg(i)?;
        Ok(i.json
            .get_or_init(|| cstring(&i.info.to_meta_json()))
            .as_ptr())
    })
}

/// Whether this is a watcher's marker that every object existing when the
/// watch started has been delivered (name "", bucket set); false for NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_is_initial_done(i: *const natsio_obj_info) -> bool {
    guard_value(false, || Ok(info_arg(i)?.initial_done))
}

/// Keeps an info beyond the callback or list that lent it: a copy freed
/// with `natsio_obj_info_free`. Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_clone(
    info: *const natsio_obj_info,
    info_out: *mut *mut natsio_obj_info,
) -> natsio_status {
    guard(|| {
        let i = info_arg(info)?;
        let out = out_arg(info_out, "info_out")?;
        write_box(
            out,
            natsio_obj_info::new(Arc::clone(&i.info), i.initial_done),
        );
        Ok(())
    })
}

/// Frees an info. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_free(info: *mut natsio_obj_info) {
    free_box(info)
}

/// The info an operation produced (a put, `natsio_obj_get_info_async`, a
/// link, or a watcher's `natsio_obj_watcher_next_async`), as a new
/// `natsio_obj_info`. Returns as `natsio_token_msg` (NATSIO_DONE once a
/// watch has ended).
#[no_mangle]
pub unsafe extern "C" fn natsio_token_obj_info(
    token: *const natsio_token,
    info_out: *mut *mut natsio_obj_info,
) -> natsio_status {
    if info_out.is_null() {
        return guard(|| Err(super::null("info_out")));
    }
    with_outcome(token, |_, o| {
        let i = match (o.downcast::<ObjectInfo>(), o.downcast::<ObjectWatchEvent>()) {
            (Some(info), _) => natsio_obj_info::new(info, false),
            (None, Some(ev)) => natsio_obj_info::from_event((*ev).clone()),
            (None, None) => return Err(wrong_kind("object info")),
        };
        write_box(info_out, i);
        Ok(())
    })
}

unsafe fn info_result(op: Op<ObjectInfo>, info_out: *mut *mut natsio_obj_info) -> Result<()> {
    info_out_set(op.wait()?, info_out)
}

/// Hands `info` to the caller when it asked for it (`info_out` not NULL).
unsafe fn info_out_set(info: ObjectInfo, info_out: *mut *mut natsio_obj_info) -> Result<()> {
    if !info_out.is_null() {
        write_box(info_out, natsio_obj_info::new(Arc::new(info), false));
    }
    Ok(())
}

/// Descriptions returned by `natsio_obj_list`. Owned by the caller, freed
/// with `natsio_obj_info_list_free` (which frees its infos).
pub struct natsio_obj_info_list {
    items: Vec<natsio_obj_info>,
}

impl natsio_obj_info_list {
    fn new(infos: impl IntoIterator<Item = ObjectInfo>) -> Self {
        natsio_obj_info_list {
            items: infos
                .into_iter()
                .map(|i| natsio_obj_info::new(Arc::new(i), false))
                .collect(),
        }
    }
}

/// How many infos the list holds (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_list_count(list: *const natsio_obj_info_list) -> usize {
    count(list.as_ref().map(|l| &l.items))
}

/// Info `index` of the list, borrowed until the list is freed (NULL if
/// out of range).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_list_get(
    list: *const natsio_obj_info_list,
    index: usize,
) -> *const natsio_obj_info {
    guard_value(std::ptr::null(), || {
        Ok(arg(list, "list")?
            .items
            .get(index)
            .map_or(std::ptr::null(), |i| i as *const natsio_obj_info))
    })
}

/// Frees a list and its infos. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_info_list_free(list: *mut natsio_obj_info_list) {
    free_box(list)
}

/// The infos a `natsio_obj_list_async` produced, as a new list. Returns as
/// `natsio_token_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_obj_info_list(
    token: *const natsio_token,
    list_out: *mut *mut natsio_obj_info_list,
) -> natsio_status {
    token_value(token, list_out, "list_out", |_, v: &Vec<ObjectInfo>| {
        Ok(Box::into_raw(Box::new(natsio_obj_info_list::new(
            v.iter().cloned(),
        ))))
    })
}

// ---- objects ---------------------------------------------------------------

unsafe fn put_meta(name: *const c_char, meta_json: *const c_char) -> Result<ObjectMeta> {
    ObjectMeta::for_put(str_arg(name, "name")?, opt_str_arg(meta_json, "meta_json")?)
}

unsafe fn put_op(
    o: &natsio_obj,
    name: *const c_char,
    meta_json: *const c_char,
    data: *const c_void,
    len: usize,
) -> Result<Op<ObjectInfo>> {
    let meta = put_meta(name, meta_json)?;
    Ok(o.os.put(meta, bytes_arg(data, len, "data")?))
}

/// Stores `len` bytes of `data` as object `name`, replacing any earlier
/// version (whose chunks are purged once the new one is in place).
/// `meta_json` (may be NULL) is an object of "description", "headers"
/// (`{"Name": ["value", ...]}`; a plain string is one value), "metadata"
/// (object of strings) and "chunk_size" (bytes per chunk, default 131072,
/// at most the server's max_payload); "name", if present, must equal
/// `name`. The data is published in chunks with a bounded window of
/// unacknowledged ones, hashed with SHA-256; the description goes last.
/// `info_out` (may be NULL) receives the new object's info (free with
/// `natsio_obj_info_free`). Blocks until every chunk and the description
/// are acknowledged; `data` is read while the call runs, a piece at a time
/// (never copied whole). A failed put leaves the previous version readable.
/// Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_UTF8,
/// NATSIO_ERR_INVALID_OBJECT_NAME (empty), NATSIO_ERR_CONFIG (meta_json),
/// NATSIO_ERR_BAD_HEADERS, NATSIO_ERR_BUCKET_NOT_FOUND,
/// NATSIO_ERR_BUCKET_SEALED, NATSIO_ERR_JS_API (e.g. the bucket is full),
/// NATSIO_ERR_TIMEOUT, NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_put(
    obj: *const natsio_obj,
    name: *const c_char,
    meta_json: *const c_char,
    data: *const c_void,
    len: usize,
    info_out: *mut *mut natsio_obj_info,
) -> natsio_status {
    guard(|| {
        let meta = put_meta(name, meta_json)?;
        let info = self::obj(obj)?
            .os
            .put_blocking(meta, bytes_arg(data, len, "data")?)?;
        info_out_set(info, info_out)
    })
}

/// The token form of `natsio_obj_put` (`natsio_token_obj_info`). `data` is
/// copied before this returns.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_put_async(
    obj: *const natsio_obj,
    name: *const c_char,
    meta_json: *const c_char,
    data: *const c_void,
    len: usize,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let o = self::obj(obj)?;
        start_op(
            put_op(o, name, meta_json, data, len)?,
            o.client_handle(),
            token_out,
        )
    })
}

/// The description of object `name` through `info_out` (free with
/// `natsio_obj_info_free`). A deleted object fails with
/// NATSIO_ERR_OBJECT_DELETED unless `show_deleted` (then its tombstone:
/// `natsio_obj_info_deleted` true, size 0). Errors:
/// NATSIO_ERR_OBJECT_NOT_FOUND, NATSIO_ERR_INVALID_OBJECT_NAME,
/// NATSIO_ERR_BUCKET_NOT_FOUND, and the request errors of `natsio_obj_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_get_info(
    obj: *const natsio_obj,
    name: *const c_char,
    show_deleted: bool,
    info_out: *mut *mut natsio_obj_info,
) -> natsio_status {
    guard(|| {
        let o = self::obj(obj)?;
        let op = o.os.info(str_arg(name, "name")?, show_deleted);
        out_arg(info_out, "info_out")?;
        info_result(op, info_out)
    })
}

/// The token form of `natsio_obj_get_info` (`natsio_token_obj_info`).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_get_info_async(
    obj: *const natsio_obj,
    name: *const c_char,
    show_deleted: bool,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let o = self::obj(obj)?;
        let op = o.os.info(str_arg(name, "name")?, show_deleted);
        start_op(op, o.client_handle(), token_out)
    })
}

unsafe fn update_meta_op(
    o: &natsio_obj,
    name: *const c_char,
    meta_json: *const c_char,
) -> Result<Op<()>> {
    let name = str_arg(name, "name")?;
    let meta = ObjectMeta::from_json(opt_str_arg(meta_json, "meta_json")?)?;
    if meta.chunk_size.is_some() {
        return Err(Error::new(
            ErrorKind::Config,
            "ObjectMeta.chunk_size: cannot change after the put",
        ));
    }
    Ok(o.os.update_meta(name, meta))
}

/// Replaces the description, headers and metadata of object `name` with
/// those of `meta_json` (absent ones are cleared); its "name", if present
/// and different, renames the object. Errors: NATSIO_ERR_OBJECT_EXISTS (a
/// live object has the new name), NATSIO_ERR_OBJECT_DELETED,
/// NATSIO_ERR_OBJECT_NOT_FOUND, NATSIO_ERR_INVALID_OBJECT_NAME (an empty
/// "name"), NATSIO_ERR_CONFIG (meta_json, or a "chunk_size"), and the
/// errors of `natsio_obj_get_info`.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_update_meta(
    obj: *const natsio_obj,
    name: *const c_char,
    meta_json: *const c_char,
) -> natsio_status {
    guard(|| update_meta_op(self::obj(obj)?, name, meta_json)?.wait())
}

/// The token form of `natsio_obj_update_meta` (`natsio_token_status`).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_update_meta_async(
    obj: *const natsio_obj,
    name: *const c_char,
    meta_json: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let o = self::obj(obj)?;
        start_op(
            update_meta_op(o, name, meta_json)?,
            o.client_handle(),
            token_out,
        )
    })
}

/// Deletes object `name`: a tombstone replaces its description and its
/// chunks are purged. Deleting a deleted object is harmless. Errors: as
/// `natsio_obj_get_info`.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_delete(
    obj: *const natsio_obj,
    name: *const c_char,
) -> natsio_status {
    guard(|| self::obj(obj)?.os.delete(str_arg(name, "name")?).wait())
}

/// The token form of `natsio_obj_delete` (`natsio_token_status`).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_delete_async(
    obj: *const natsio_obj,
    name: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let o = self::obj(obj)?;
        start_op(
            o.os.delete(str_arg(name, "name")?),
            o.client_handle(),
            token_out,
        )
    })
}

/// The latest description of every object in the bucket (tombstones only
/// with `include_deleted`), through `list_out` (free with
/// `natsio_obj_info_list_free`; empty when there are none). Errors:
/// NATSIO_ERR_BUCKET_NOT_FOUND, the request errors of `natsio_obj_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_list(
    obj: *const natsio_obj,
    include_deleted: bool,
    list_out: *mut *mut natsio_obj_info_list,
) -> natsio_status {
    guard(|| {
        let o = self::obj(obj)?;
        out_arg(list_out, "list_out")?;
        let infos = o.os.list(include_deleted).wait()?;
        write_list(list_out, natsio_obj_info_list::new(infos))
    })
}

/// The token form of `natsio_obj_list` (`natsio_token_obj_info_list`).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_list_async(
    obj: *const natsio_obj,
    include_deleted: bool,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let o = self::obj(obj)?;
        start_op(o.os.list(include_deleted), o.client_handle(), token_out)
    })
}

unsafe fn link_op(
    o: &natsio_obj,
    name: *const c_char,
    target: *const natsio_obj_info,
) -> Result<Op<ObjectInfo>> {
    let name = str_arg(name, "name")?;
    // SAFETY: the caller passes a live handle or NULL.
    let target: &natsio_obj_info = arg(target, "target")?;
    if target.initial_done {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            "target is a watcher's marker, not an object",
        ));
    }
    Ok(o.os.add_link(name, &target.info))
}

/// Makes `name` a link to the object `target` describes (of this or
/// another bucket; from `natsio_obj_get_info` or a put), through
/// `info_out` (may be NULL; the link's info). Reading the link reads the
/// target. Errors: NATSIO_ERR_OBJECT_LINK (the target is deleted or is
/// itself a link), NATSIO_ERR_OBJECT_EXISTS (a live object that is no link
/// has `name`), NATSIO_ERR_INVALID_OBJECT_NAME, and the request errors of
/// `natsio_obj_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_add_link(
    obj: *const natsio_obj,
    name: *const c_char,
    target: *const natsio_obj_info,
    info_out: *mut *mut natsio_obj_info,
) -> natsio_status {
    guard(|| info_result(link_op(self::obj(obj)?, name, target)?, info_out))
}

/// The token form of `natsio_obj_add_link` (`natsio_token_obj_info`).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_add_link_async(
    obj: *const natsio_obj,
    name: *const c_char,
    target: *const natsio_obj_info,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let o = self::obj(obj)?;
        start_op(link_op(o, name, target)?, o.client_handle(), token_out)
    })
}

unsafe fn bucket_link_op(
    o: &natsio_obj,
    name: *const c_char,
    bucket: *const c_char,
) -> Result<Op<ObjectInfo>> {
    Ok(o.os.add_bucket_link(str_arg(name, "name")?, str_arg(bucket, "bucket")?))
}

/// Makes `name` a link to the whole bucket `bucket` (reading it as an
/// object fails with NATSIO_ERR_OBJECT_LINK), through `info_out` (may be
/// NULL). Errors: NATSIO_ERR_INVALID_BUCKET_NAME, and as
/// `natsio_obj_add_link`.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_add_bucket_link(
    obj: *const natsio_obj,
    name: *const c_char,
    bucket: *const c_char,
    info_out: *mut *mut natsio_obj_info,
) -> natsio_status {
    guard(|| info_result(bucket_link_op(self::obj(obj)?, name, bucket)?, info_out))
}

/// The token form of `natsio_obj_add_bucket_link` (`natsio_token_obj_info`).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_add_bucket_link_async(
    obj: *const natsio_obj,
    name: *const c_char,
    bucket: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let o = self::obj(obj)?;
        start_op(
            bucket_link_op(o, name, bucket)?,
            o.client_handle(),
            token_out,
        )
    })
}

// ---- writer ----------------------------------------------------------------

/// An object being written in pieces (`natsio_obj_writer_open`). Owned by
/// the caller, freed with `natsio_obj_writer_free`. Thread-safe; its calls
/// (and their tokens) take effect in call order.
pub struct natsio_obj_writer {
    w: ObjectWriter,
    client: ClientHandle,
}

fn writer<'a>(p: *const natsio_obj_writer) -> Result<&'a natsio_obj_writer> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "writer") }
}

/// Starts writing object `name` with `meta_json` (may be NULL) as for
/// `natsio_obj_put`, through `writer_out` (free with `natsio_obj_writer_free`).
/// Sends nothing yet. Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_UTF8,
/// NATSIO_ERR_INVALID_OBJECT_NAME, NATSIO_ERR_CONFIG, NATSIO_ERR_BAD_HEADERS.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_writer_open(
    obj: *const natsio_obj,
    name: *const c_char,
    meta_json: *const c_char,
    writer_out: *mut *mut natsio_obj_writer,
) -> natsio_status {
    guard(|| {
        let o = self::obj(obj)?;
        let out = out_arg(writer_out, "writer_out")?;
        let w = o.os.writer(put_meta(name, meta_json)?)?;
        write_box(
            out,
            natsio_obj_writer {
                w,
                client: o.client_handle(),
            },
        );
        Ok(())
    })
}

/// Appends `len` bytes of `data` (copied). Each full chunk is published;
/// this blocks only while 8 MiB of chunks await their acks. Errors: what
/// failed the write so far (e.g. NATSIO_ERR_BUCKET_NOT_FOUND,
/// NATSIO_ERR_BUCKET_SEALED, NATSIO_ERR_TIMEOUT,
/// NATSIO_ERR_CONNECTION_CLOSED; every later call repeats it),
/// NATSIO_ERR_ILLEGAL_STATE after finish or abort, NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_writer_write(
    writer: *mut natsio_obj_writer,
    data: *const c_void,
    len: usize,
) -> natsio_status {
    guard(|| {
        self::writer(writer)?
            .w
            .write(bytes_arg(data, len, "data")?)
            .wait()
    })
}

/// The token form of `natsio_obj_writer_write` (`natsio_token_status`):
/// `data` is copied before this returns; the token completes once the data
/// is taken (the window has room). Writes apply in call order.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_writer_write_async(
    writer: *mut natsio_obj_writer,
    data: *const c_void,
    len: usize,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let w = self::writer(writer)?;
        let op = w.w.write(bytes_arg(data, len, "data")?);
        start_op(op, w.client.clone(), token_out)
    })
}

/// Publishes the rest, waits for every ack and stores the description
/// (with a rollup; the replaced version's chunks are purged after).
/// `info_out` (may be NULL) receives the object's info. On failure the
/// write's chunks are purged and the previous version stays. Errors: as
/// `natsio_obj_writer_write`.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_writer_finish(
    writer: *mut natsio_obj_writer,
    info_out: *mut *mut natsio_obj_info,
) -> natsio_status {
    guard(|| info_result(self::writer(writer)?.w.finish(), info_out))
}

/// The token form of `natsio_obj_writer_finish` (`natsio_token_obj_info`).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_writer_finish_async(
    writer: *mut natsio_obj_writer,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let w = self::writer(writer)?;
        start_op(w.w.finish(), w.client.clone(), token_out)
    })
}

/// Abandons the write: its chunks are purged and the previous version of
/// the object stays readable. Blocks while purging. Harmless after finish
/// or abort. Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_writer_abort(writer: *mut natsio_obj_writer) -> natsio_status {
    guard(|| self::writer(writer)?.w.abort().wait())
}

/// Frees a writer; one neither finished nor aborted is aborted on the
/// library's threads. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_writer_free(writer: *mut natsio_obj_writer) {
    guard_void(|| {
        if !writer.is_null() {
            let w = Box::from_raw(writer);
            w.w.abort_in_background();
        }
    })
}

// ---- reader ----------------------------------------------------------------

/// An object being read (`natsio_obj_get`). Owned by the caller, freed with
/// `natsio_obj_reader_free`. Thread-safe.
pub struct natsio_obj_reader {
    r: ObjectReader,
    info: natsio_obj_info,
}

fn reader<'a>(p: *const natsio_obj_reader) -> Result<&'a natsio_obj_reader> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "reader") }
}

impl natsio_obj_reader {
    fn new(r: ObjectReader) -> Self {
        let info = natsio_obj_info::new(Arc::new(r.info().clone()), false);
        natsio_obj_reader { r, info }
    }
}

unsafe fn get_op(
    o: &natsio_obj,
    name: *const c_char,
    show_deleted: bool,
) -> Result<Op<ObjectReader>> {
    Ok(o.os.get(str_arg(name, "name")?, show_deleted))
}

/// Opens object `name` for reading through `reader_out` (free with
/// `natsio_obj_reader_free`). Through a link to an object it reads the
/// target. From the moment this returns, chunks are pulled on the library's
/// threads a few MiB ahead of the reader. A deleted object fails with
/// NATSIO_ERR_OBJECT_DELETED unless `show_deleted` (then it reads as
/// empty). Errors: NATSIO_ERR_OBJECT_NOT_FOUND, NATSIO_ERR_OBJECT_LINK (a
/// link to a bucket, or to a link), and the errors of `natsio_obj_get_info`.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_get(
    obj: *const natsio_obj,
    name: *const c_char,
    show_deleted: bool,
    reader_out: *mut *mut natsio_obj_reader,
) -> natsio_status {
    guard(|| {
        let op = get_op(self::obj(obj)?, name, show_deleted)?;
        let out = out_arg(reader_out, "reader_out")?;
        write_box(out, natsio_obj_reader::new(op.wait()?));
        Ok(())
    })
}

/// The token form of `natsio_obj_get`; the reader is taken (once) with
/// `natsio_token_obj_reader`.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_get_async(
    obj: *const natsio_obj,
    name: *const c_char,
    show_deleted: bool,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let o = self::obj(obj)?;
        let op = get_op(o, name, show_deleted)?.map(TakeOnce::new);
        start_op(op, o.client_handle(), token_out)
    })
}

/// The reader a `natsio_obj_get_async` opened, through `reader_out` (free
/// with `natsio_obj_reader_free`). It can be taken once
/// (NATSIO_ERR_ILLEGAL_STATE after); a token freed without taking it
/// closes the reader. Returns as `natsio_token_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_obj_reader(
    token: *const natsio_token,
    reader_out: *mut *mut natsio_obj_reader,
) -> natsio_status {
    token_value(
        token,
        reader_out,
        "reader_out",
        |_, r: &TakeOnce<ObjectReader>| {
            Ok(Box::into_raw(Box::new(natsio_obj_reader::new(r.take()?))))
        },
    )
}

/// The info of the object being read (a link's target), borrowed from the
/// reader; NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_reader_info(
    reader: *const natsio_obj_reader,
) -> *const natsio_obj_info {
    guard_value(std::ptr::null(), || {
        Ok(&self::reader(reader)?.info as *const _)
    })
}

/// Copies up to `cap` next bytes of the object into `buf`, waiting up to
/// `timeout_ms` for a chunk (NATSIO_TIMEOUT_DEFAULT: 30 s, the reference's
/// chunk timeout; NATSIO_WAIT_FOREVER; NATSIO_NO_WAIT: only what is
/// buffered). NATSIO_OK: `*n_out` (> 0) bytes were copied. NATSIO_DONE
/// (`*n_out` = 0): every byte was read and its size, chunk count and
/// SHA-256 digest match the description. Errors:
/// NATSIO_ERR_DIGEST_MISMATCH (reported instead of NATSIO_DONE: the data
/// read does not match; the reader has ended), NATSIO_ERR_TIMEOUT (no chunk
/// in time; reading may go on), NATSIO_ERR_CONNECTION_CLOSED,
/// NATSIO_ERR_BUCKET_NOT_FOUND, NATSIO_ERR_NULL_ARGUMENT (also `buf` with
/// `cap` > 0), NATSIO_ERR_INVALID_ARGUMENT (`cap` 0),
/// NATSIO_ERR_ILLEGAL_STATE (on a library runtime thread).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_reader_read(
    reader: *mut natsio_obj_reader,
    buf: *mut c_void,
    cap: usize,
    n_out: *mut usize,
    timeout_ms: i64,
) -> natsio_status {
    let mut done = false;
    let s = guard(|| {
        let r = self::reader(reader)?;
        let n_out = out_arg(n_out, "n_out")?;
        if cap == 0 {
            return Err(Error::new(ErrorKind::InvalidArgument, "cap is 0"));
        }
        if buf.is_null() {
            return Err(super::null("buf"));
        }
        let timeout = timeout_arg(timeout_ms, Some(DEFAULT_CHUNK_TIMEOUT), true)?;
        crate::runtime::ensure_may_block()?;
        let buf = std::slice::from_raw_parts_mut(buf.cast::<u8>(), cap);
        let n = r.r.read(buf, timeout)?;
        *n_out = n;
        done = n == 0;
        Ok(())
    });
    if done {
        natsio_status::NATSIO_DONE
    } else {
        s
    }
}

/// A token for the next piece of the object (what a `natsio_obj_reader_read`
/// left of a chunk, else the next chunk), read with
/// `natsio_token_obj_chunk`; NATSIO_DONE at the verified end, or the
/// reader's error. Pending tokens are served in call order; freeing one
/// before it completed leaves its chunk to the next read.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_reader_next_async(
    reader: *mut natsio_obj_reader,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let r = self::reader(reader)?;
        let out = out_arg(token_out, "token_out")?;
        let c = r.r.next_chunk_async()?;
        write_box(out, natsio_token::for_next(c, ClientHandle::default()));
        Ok(())
    })
}

/// The piece of data a `natsio_obj_reader_next_async` token holds:
/// `*data_out` points at `*len_out` bytes borrowed from the token (valid
/// until `natsio_token_free`). Returns as `natsio_token_msg` (NATSIO_DONE
/// at the end of the object).
#[no_mangle]
pub unsafe extern "C" fn natsio_token_obj_chunk(
    token: *const natsio_token,
    data_out: *mut *const c_void,
    len_out: *mut usize,
) -> natsio_status {
    if data_out.is_null() || len_out.is_null() {
        return guard(|| Err(super::null("data_out or len_out")));
    }
    with_outcome(token, |_, o| {
        let chunk = o
            .downcast::<Chunk>()
            .ok_or_else(|| wrong_kind("object chunk"))?;
        // The token's completion keeps the outcome (and so the bytes) alive.
        *data_out = chunk.0.as_ptr().cast();
        *len_out = chunk.0.len();
        Ok(())
    })
}

/// Closes and frees a reader (what was not read is dropped and its
/// consumer goes away). Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_reader_free(reader: *mut natsio_obj_reader) {
    free_box(reader)
}

// ---- watcher ---------------------------------------------------------------

/// `natsio_obj_watch_options.version` of this header.
pub const NATSIO_OBJ_WATCH_OPTIONS_VERSION: u32 = 1;

/// Options of `natsio_obj_watch`. Initialise with
/// `natsio_obj_watch_options_init` (all false).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_obj_watch_options {
    /// NATSIO_OBJ_WATCH_OPTIONS_VERSION.
    pub version: u32,
    /// Every kept description first, not only the latest per object.
    pub include_history: bool,
    /// Leave out deleted objects (tombstones).
    pub ignore_deletes: bool,
    /// No initial objects: only changes made after the watch starts.
    pub updates_only: bool,
}

super::versioned!(natsio_obj_watch_options, NATSIO_OBJ_WATCH_OPTIONS_VERSION);

/// Fills `opts` with the defaults and the version.
/// Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_watch_options_init(
    opts: *mut natsio_obj_watch_options,
) -> natsio_status {
    guard(|| super::options_init(opts))
}

/// A running watch of a bucket's objects (`natsio_obj_watch`), read through
/// the iterator contract. Owned by the caller, freed with
/// `natsio_obj_watcher_free`; every function is thread-safe.
pub struct natsio_obj_watcher {
    it: ObjectWatcher,
}

/// A watcher's infos in push mode (`natsio_obj_watcher_set_callback`):
/// each info with NATSIO_OK (borrowed for the call), the initial-values
/// marker included, then once `info` NULL with the status that ended the
/// watch (NATSIO_DONE, or an error). Runs on the watcher's own library
/// thread, one call at a time, in order.
pub type natsio_obj_info_cb = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        info: *const natsio_obj_info,
        status: natsio_status,
    ),
>;

unsafe fn watch_op(
    o: &natsio_obj,
    opts: *const natsio_obj_watch_options,
) -> Result<Op<ObjectWatcher>> {
    let opts = if opts.is_null() {
        ObjectWatchOptions::default()
    } else {
        let w = options_arg(opts)?;
        ObjectWatchOptions {
            include_history: w.include_history,
            ignore_deletes: w.ignore_deletes,
            updates_only: w.updates_only,
        }
    };
    Ok(o.os.watch(opts))
}

/// Watches the bucket's objects through `watcher_out`: the latest
/// description of each object (or every one kept, or none with
/// `updates_only`), then a marker info (`natsio_obj_info_is_initial_done`),
/// then every change (put, update, delete, link) as it happens. From the
/// moment this returns, changes are pulled into the watcher's buffer on the
/// library's threads (up to the client's pending limits: a full buffer
/// pauses pulling, counted in the stats' `stalls`); lost consumers and
/// reconnects are healed. `opts` may be NULL. Blocks while the consumer is
/// created. Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_ARGUMENT
/// (options version), NATSIO_ERR_BUCKET_NOT_FOUND, and the request errors
/// of `natsio_obj_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_watch(
    obj: *const natsio_obj,
    opts: *const natsio_obj_watch_options,
    watcher_out: *mut *mut natsio_obj_watcher,
) -> natsio_status {
    guard(|| {
        let op = watch_op(self::obj(obj)?, opts)?;
        let out = out_arg(watcher_out, "watcher_out")?;
        write_box(out, natsio_obj_watcher { it: op.wait()? });
        Ok(())
    })
}

/// The token form of `natsio_obj_watch`; the watcher is taken (once) with
/// `natsio_token_obj_watcher`.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_watch_async(
    obj: *const natsio_obj,
    opts: *const natsio_obj_watch_options,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let o = self::obj(obj)?;
        let op = watch_op(o, opts)?.map(TakeOnce::new);
        start_op(op, o.client_handle(), token_out)
    })
}

/// The watcher a `natsio_obj_watch_async` started, through `watcher_out`
/// (free with `natsio_obj_watcher_free`). It can be taken once
/// (NATSIO_ERR_ILLEGAL_STATE after); a token freed without taking it stops
/// the watch. Returns as `natsio_token_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_obj_watcher(
    token: *const natsio_token,
    watcher_out: *mut *mut natsio_obj_watcher,
) -> natsio_status {
    token_value(
        token,
        watcher_out,
        "watcher_out",
        |_, w: &TakeOnce<ObjectWatcher>| {
            Ok(Box::into_raw(Box::new(natsio_obj_watcher {
                it: w.take()?,
            })))
        },
    )
}

fn watcher<'a>(p: *const natsio_obj_watcher) -> Result<&'a natsio_obj_watcher> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "watcher") }
}

/// The next info of a watch, waiting up to `timeout_ms`
/// (NATSIO_TIMEOUT_DEFAULT or NATSIO_WAIT_FOREVER: until one comes;
/// NATSIO_NO_WAIT: only one already buffered). NATSIO_OK: `*info_out` is
/// an info (free with `natsio_obj_info_free`): an object's description
/// (`natsio_obj_info_deleted` for a deletion) or, once, the initial-values
/// marker. NATSIO_DONE (`*info_out` set to NULL): the watch was stopped.
/// Errors: NATSIO_ERR_TIMEOUT (nothing changed in time; the watch goes
/// on), NATSIO_ERR_BUCKET_NOT_FOUND (the bucket was deleted: the watch
/// ended), NATSIO_ERR_CONNECTION_CLOSED, NATSIO_ERR_ILLEGAL_STATE
/// (callback mode, or on a library runtime thread).
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_watcher_next(
    watcher: *const natsio_obj_watcher,
    timeout_ms: i64,
    info_out: *mut *mut natsio_obj_info,
) -> natsio_status {
    match self::watcher(watcher) {
        Ok(w) => iter::next(&w.it.feed, timeout_ms, info_out, "info_out", |ev| {
            Ok(natsio_obj_info::from_event(ev))
        }),
        Err(e) => super::status::record(&e),
    }
}

/// A token for the next info (`natsio_token_obj_info`; NATSIO_DONE once
/// stopped). Pending tokens are served in call order; freeing or
/// cancelling one before an info reached it leaves the infos buffered.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_watcher_next_async(
    watcher: *const natsio_obj_watcher,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    match self::watcher(watcher) {
        Ok(w) => iter::next_async(&w.it.feed, ClientHandle::default(), token_out),
        Err(e) => super::status::record(&e),
    }
}

/// Push mode for a watch: `cb` gets every info (the marker included), then
/// a final call with a NULL info and the status that ended it; `release`
/// runs after that. As `natsio_sub_set_callback` otherwise.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_watcher_set_callback(
    watcher: *const natsio_obj_watcher,
    cb: natsio_obj_info_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
) -> natsio_status {
    guard(|| {
        let w = self::watcher(watcher)?;
        let Some(f) = cb else {
            return Err(super::null("cb"));
        };
        iter::set_callback(
            user_data,
            release,
            iter::item_cb(f, natsio_obj_info::from_event),
            |h| w.it.set_handler(h, Box::new(|| {})),
        )
    })
}

/// Stops a watch: `natsio_obj_watcher_next` returns NATSIO_DONE, now and
/// later, and a callback gets its final call before this returns; the
/// server-side consumer is deleted. Idempotent.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_watcher_stop(
    watcher: *const natsio_obj_watcher,
) -> natsio_status {
    guard(|| {
        self::watcher(watcher)?.it.stop();
        Ok(())
    })
}

/// Reads the live counters into `stats_out`.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_watcher_get_stats(
    watcher: *const natsio_obj_watcher,
    stats_out: *mut natsio_iter_stats,
) -> natsio_status {
    guard(|| iter::stats(self::watcher(watcher)?.it.stats(), stats_out))
}

/// Stops (if needed) and frees a watch. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_obj_watcher_free(watcher: *mut natsio_obj_watcher) {
    free_box(watcher)
}
