//! `natsio_kv`: a Key-Value bucket, `natsio_kv_entry`, the watcher
//! `natsio_kv_watcher` and the key listing `natsio_kv_key_lister`. Every request-shaped call has a token form.

use std::ffi::{c_char, c_void, CString};
use std::sync::{Arc, OnceLock};

use super::bucket;
use super::iter::{self, natsio_iter_stats};
use super::js::{json_result, natsio_js, ttl_arg};
use super::list::{count, natsio_string_list, string_list_result, write_list};
use super::status::natsio_status;
use super::token::{natsio_token, token_value, with_outcome, wrong_kind};
use super::{
    arg, bytes_arg, cstring, free_box, guard, guard_value, options_arg, out_arg, start_op, str_arg,
    write_box, TakeOnce,
};
use crate::client_handle::ClientHandle;
use crate::error::Result;
use crate::jetstream::{CreateAction, JetStream};
use crate::kv::{Entry, KeyLister, KeyValue, KeyValueStatus, Operation, WatchEvent, Watcher};
use crate::op::Op;

/// A bound Key-Value bucket. Created by `natsio_js_kv_create` or
/// `natsio_js_kv_bind`, freed with `natsio_kv_free`. Like its context it
/// does not keep the client open. Every function is thread-safe.
pub struct natsio_kv {
    pub(super) kv: KeyValue,
    bucket: CString,
}

impl natsio_kv {
    pub(super) fn new(kv: KeyValue) -> Self {
        let bucket = CString::new(kv.bucket()).unwrap_or_default();
        natsio_kv { kv, bucket }
    }

    fn client_handle(&self) -> ClientHandle {
        ClientHandle::from(self.kv.client())
    }
}

/// What an entry records.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum natsio_kv_operation {
    NATSIO_KV_PUT = 0,
    /// A delete marker (`natsio_kv_delete`).
    NATSIO_KV_DEL = 1,
    /// A purge marker (`natsio_kv_purge`, or written by the server on expiry).
    NATSIO_KV_PURGE = 2,
    /// Not a revision: a watcher's marker that every value that existed
    /// when the watch started has been delivered (empty key and value,
    /// revision 0). Changes follow.
    NATSIO_KV_INITIAL_DONE = 3,
}

/// An entry: one revision of a key, or a watcher's marker. Owned by the
/// caller, freed with `natsio_kv_entry_free`; read-only, safe to share
/// between threads.
pub struct natsio_kv_entry {
    /// `None` for the initial-values marker.
    entry: Option<Arc<Entry>>,
    /// The marker's bucket.
    marker_bucket: Option<Arc<str>>,
    /// C strings made when first asked for (most readers never do).
    bucket: OnceLock<CString>,
    key: OnceLock<CString>,
}

impl natsio_kv_entry {
    pub(crate) fn from_entry(entry: impl Into<Arc<Entry>>) -> Self {
        natsio_kv_entry {
            entry: Some(entry.into()),
            marker_bucket: None,
            bucket: OnceLock::new(),
            key: OnceLock::new(),
        }
    }

    fn from_event(ev: WatchEvent) -> Self {
        match ev {
            WatchEvent::Entry(e) => natsio_kv_entry::from_entry(e),
            WatchEvent::InitialDone(bucket) => natsio_kv_entry {
                entry: None,
                marker_bucket: Some(bucket),
                bucket: OnceLock::new(),
                key: OnceLock::new(),
            },
        }
    }

    fn bucket_ptr(&self) -> *const c_char {
        let name = match (&self.entry, &self.marker_bucket) {
            (Some(e), _) => &*e.bucket,
            (None, Some(b)) => &**b,
            (None, None) => "",
        };
        self.bucket
            .get_or_init(|| CString::new(name).unwrap_or_default())
            .as_ptr()
    }

    fn key_ptr(&self) -> *const c_char {
        let key = self.entry.as_ref().map_or("", |e| e.key.as_str());
        self.key
            .get_or_init(|| CString::new(key).unwrap_or_default())
            .as_ptr()
    }
}

impl bucket::BucketKind for natsio_kv {
    type Bucket = KeyValue;
    type Status = KeyValueStatus;
    type Handle = natsio_kv;
    type StatusHandle = natsio_kv_bucket_status;
    type StatusList = natsio_kv_bucket_status_list;
    const OUT: &'static str = "kv_out";

    fn create(js: &JetStream, config_json: &str, action: CreateAction) -> Op<KeyValue> {
        js.create_key_value(config_json, action)
    }
    fn bind(js: &JetStream, bucket: &str) -> Op<KeyValue> {
        js.key_value(bucket)
    }
    fn delete(js: &JetStream, bucket: &str) -> Op<()> {
        js.delete_key_value(bucket)
    }
    fn names(js: &JetStream) -> Op<Vec<String>> {
        js.key_value_names()
    }
    fn statuses(js: &JetStream) -> Op<Vec<KeyValueStatus>> {
        js.key_values()
    }
    fn handle(kv: KeyValue) -> natsio_kv {
        natsio_kv::new(kv)
    }
    fn status_handle(status: KeyValueStatus) -> natsio_kv_bucket_status {
        natsio_kv_bucket_status::new(status)
    }
    fn status_list(items: Vec<natsio_kv_bucket_status>) -> natsio_kv_bucket_status_list {
        natsio_kv_bucket_status_list { items }
    }
    fn status_items(list: &natsio_kv_bucket_status_list) -> &Vec<natsio_kv_bucket_status> {
        &list.items
    }
}

fn kv<'a>(p: *const natsio_kv) -> Result<&'a natsio_kv> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "kv") }
}

/// Creates, updates or creates-or-updates (per `action`, a
/// `natsio_create_action` value) a bucket from `config_json`, a
/// KeyValueConfig object: "bucket" (required, [A-Za-z0-9_-]+),
/// "description", "history" (1..64, default 1), "ttl" (duration:
/// nanoseconds or "90s"; 0 or at least 100ms), "max_value_size",
/// "max_bytes", "storage" ("file"|"memory"), "replicas", "compression"
/// (bool), "placement", "republish", "allow_msg_ttl", "limit_marker_ttl",
/// "metadata", and "mirror" or "sources" (as nats.go's):
/// - "mirror", a StreamSource object naming a bucket ("name", with or
///   without its `KV_` prefix; "domain" for a bucket in another JetStream
///   domain, or "external"): the bucket becomes a read-only copy of that
///   one (its stream has no subjects and answers Direct Gets for it). A
///   handle of a mirror reads the keys it holds and writes to the mirrored
///   bucket, through the mirror's domain. The mirror answers the mirrored
///   bucket's Direct Gets too (mirror_direct), so a read of that bucket
///   right after a write may come from the mirror before it has the write:
///   compare revisions to read your own write.
/// - "sources", StreamSource objects naming buckets: their keys are copied
///   into this bucket as they are written there (a source with its own
///   "subject_transforms" is taken as given: any stream).
///
/// Binds it through `kv_out` (free with `natsio_kv_free`).
/// NATSIO_CREATE of an identical existing bucket simply binds it. Blocks up
/// to the context's timeout. Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_CONFIG (the detail names the field),
/// NATSIO_ERR_INVALID_BUCKET_NAME, NATSIO_ERR_INVALID_ARGUMENT (action),
/// NATSIO_ERR_BUCKET_EXISTS (exists with another configuration),
/// NATSIO_ERR_BUCKET_NOT_FOUND (NATSIO_UPDATE of a missing bucket),
/// NATSIO_ERR_JS_NOT_ENABLED (the account has no JetStream),
/// NATSIO_ERR_NO_RESPONDERS (nobody answered: no leader during an election,
/// retry; or the server has no JetStream),
/// NATSIO_ERR_JS_API, NATSIO_ERR_TIMEOUT, NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_kv_create(
    js: *const natsio_js,
    config_json: *const c_char,
    action: i32,
    kv_out: *mut *mut natsio_kv,
) -> natsio_status {
    bucket::create::<natsio_kv>(js, config_json, action, kv_out)
}

/// The token form of `natsio_js_kv_create`; the bucket handle is read with
/// `natsio_token_kv`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_kv_create_async(
    js: *const natsio_js,
    config_json: *const c_char,
    action: i32,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    bucket::create_async::<natsio_kv>(js, config_json, action, token_out)
}

/// Binds the existing bucket `bucket` through `kv_out`.
/// Errors: NATSIO_ERR_BUCKET_NOT_FOUND (no stream `KV_<bucket>`, or one
/// whose subjects do not cover `$KV.<bucket>.>`: no bucket),
/// NATSIO_ERR_INVALID_BUCKET_NAME, and
/// the request errors of `natsio_js_kv_create`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_kv_bind(
    js: *const natsio_js,
    bucket: *const c_char,
    kv_out: *mut *mut natsio_kv,
) -> natsio_status {
    bucket::bind::<natsio_kv>(js, bucket, kv_out)
}

/// The token form of `natsio_js_kv_bind` (`natsio_token_kv`).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_kv_bind_async(
    js: *const natsio_js,
    bucket: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    bucket::bind_async::<natsio_kv>(js, bucket, token_out)
}

/// The bucket a `natsio_js_kv_create_async` or `natsio_js_kv_bind_async`
/// produced, as a new handle freed with `natsio_kv_free`. Returns as
/// `natsio_token_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_kv(
    token: *const natsio_token,
    kv_out: *mut *mut natsio_kv,
) -> natsio_status {
    bucket::token_bucket::<natsio_kv>(token, kv_out)
}

/// Deletes bucket `bucket` with all its keys and history.
/// Errors: NATSIO_ERR_BUCKET_NOT_FOUND, as for `natsio_js_kv_bind`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_kv_delete(
    js: *const natsio_js,
    bucket: *const c_char,
) -> natsio_status {
    bucket::delete::<natsio_kv>(js, bucket)
}

/// The token form of `natsio_js_kv_delete`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_kv_delete_async(
    js: *const natsio_js,
    bucket: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    bucket::delete_async::<natsio_kv>(js, bucket, token_out)
}

/// The names of every Key-Value bucket through `list_out` (free with
/// `natsio_string_list_free`): streams named `KV_<name>` that hold the
/// `$KV.*.>` subjects (other streams, even on `$KV` subjects, are left
/// out), from the paged stream names. Blocks up to the context's timeout
/// per page; thread-safe. Errors: NATSIO_ERR_NULL_ARGUMENT, and the request
/// errors of `natsio_js_kv_create`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_kv_names(
    js: *const natsio_js,
    list_out: *mut *mut natsio_string_list,
) -> natsio_status {
    bucket::names::<natsio_kv>(js, list_out)
}

/// The token form of `natsio_js_kv_names` (`natsio_token_string_list`).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_kv_names_async(
    js: *const natsio_js,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    bucket::names_async::<natsio_kv>(js, token_out)
}

/// The status of every Key-Value bucket (as `natsio_js_kv_names` filters
/// them) through `list_out` (free with `natsio_kv_bucket_status_list_free`),
/// built from the paged stream list without a request per bucket.
/// Errors: as `natsio_js_kv_names`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_kv_statuses(
    js: *const natsio_js,
    list_out: *mut *mut natsio_kv_bucket_status_list,
) -> natsio_status {
    bucket::statuses::<natsio_kv>(js, list_out)
}

/// The token form of `natsio_js_kv_statuses`
/// (`natsio_token_kv_bucket_status_list`).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_kv_statuses_async(
    js: *const natsio_js,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    bucket::statuses_async::<natsio_kv>(js, token_out)
}

/// The bucket's name (borrowed from the handle; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_bucket(kv: *const natsio_kv) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(self::kv(kv)?.bucket.as_ptr()))
}

/// Runs a revision-producing operation; `revision_out` may be NULL.
unsafe fn revision_result(op: Op<u64>, revision_out: *mut u64) -> Result<()> {
    let rev = op.wait()?;
    if !revision_out.is_null() {
        *revision_out = rev;
    }
    Ok(())
}

/// Which write a `write_op` makes; a put or create whose options give a
/// ttl stores a revision that expires.
enum Write {
    Put(*const natsio_kv_write_options),
    Create(*const natsio_kv_write_options),
    Update(u64),
}

/// `natsio_kv_write_options.version` of this header.
pub const NATSIO_KV_WRITE_OPTIONS_VERSION: u32 = 1;

/// Options of a Key-Value write (`natsio_kv_put`, `natsio_kv_create`,
/// `natsio_kv_purge`). Initialise with `natsio_kv_write_options_init`;
/// NULL instead of a struct means all defaults.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_kv_write_options {
    /// NATSIO_KV_WRITE_OPTIONS_VERSION.
    pub version: u32,
    /// The revision (or purge marker) expires this many seconds after it
    /// is stored (ADR-48 per-key TTL, a `Nats-TTL` header): whole seconds,
    /// at least 1, or NATSIO_TTL_NEVER (never expires, even if the bucket
    /// has a ttl); 0: no ttl of its own. The bucket needs limit_marker_ttl
    /// (which allows per-message TTLs); otherwise the server refuses the
    /// write (NATSIO_ERR_JS_API). When a value expires the server removes
    /// it and writes a purge marker (operation NATSIO_KV_PURGE) that
    /// watchers see and that expires itself after limit_marker_ttl; an
    /// expired purge marker leaves no trace of the key.
    pub ttl_s: i64,
}

super::versioned!(natsio_kv_write_options, NATSIO_KV_WRITE_OPTIONS_VERSION);

/// Fills `opts` with the defaults (no ttl) and the version.
/// Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_write_options_init(
    opts: *mut natsio_kv_write_options,
) -> natsio_status {
    guard(|| super::options_init(opts))
}

/// The ttl a write's options give (`None`: none, or no options).
unsafe fn write_ttl(opts: *const natsio_kv_write_options) -> Result<Option<crate::jetstream::Ttl>> {
    if opts.is_null() {
        return Ok(None);
    }
    match options_arg(opts)?.ttl_s {
        0 => Ok(None),
        ttl_s => ttl_arg(ttl_s).map(Some),
    }
}

unsafe fn write_op(
    k: &natsio_kv,
    key: *const c_char,
    value: *const c_void,
    len: usize,
    how: Write,
) -> Result<Op<u64>> {
    let key = str_arg(key, "key")?;
    let value = bytes_arg(value, len, "value")?;
    Ok(match how {
        Write::Put(opts) => match write_ttl(opts)? {
            None => k.kv.put(key, value),
            Some(ttl) => k.kv.put_with_ttl(key, value, ttl),
        },
        Write::Create(opts) => match write_ttl(opts)? {
            None => k.kv.create(key, value),
            Some(ttl) => k.kv.create_with_ttl(key, value, ttl),
        },
        Write::Update(last) => k.kv.update(key, value, last),
    })
}

/// Stores `len` bytes of `value` under `key`; `revision_out` (may be NULL)
/// receives the new revision. `opts` (may be NULL) can give the revision
/// a ttl (`natsio_kv_write_options.ttl_s`). Blocks until the bucket's
/// stream acks; thread-safe. Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_INVALID_UTF8, NATSIO_ERR_INVALID_KEY, NATSIO_ERR_MAX_PAYLOAD,
/// NATSIO_ERR_INVALID_ARGUMENT (unknown options version, a ttl_s negative
/// other than NATSIO_TTL_NEVER), NATSIO_ERR_JS_API (e.g. larger than
/// max_value_size, or a ttl on a bucket without limit_marker_ttl),
/// NATSIO_ERR_TIMEOUT, NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_put(
    kv: *const natsio_kv,
    key: *const c_char,
    value: *const c_void,
    len: usize,
    opts: *const natsio_kv_write_options,
    revision_out: *mut u64,
) -> natsio_status {
    guard(|| {
        revision_result(
            write_op(self::kv(kv)?, key, value, len, Write::Put(opts))?,
            revision_out,
        )
    })
}

/// The token form of `natsio_kv_put`; the revision is read with
/// `natsio_token_u64`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_put_async(
    kv: *const natsio_kv,
    key: *const c_char,
    value: *const c_void,
    len: usize,
    opts: *const natsio_kv_write_options,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        start_op(
            write_op(k, key, value, len, Write::Put(opts))?,
            k.client_handle(),
            token_out,
        )
    })
}

/// Stores `value` only if `key` has no live value: fails with
/// NATSIO_ERR_KEY_EXISTS otherwise. A deleted or purged key can be created
/// again (a create that finds a delete or purge marker retries against that
/// marker's revision). Otherwise as `natsio_kv_put`, options included.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_create(
    kv: *const natsio_kv,
    key: *const c_char,
    value: *const c_void,
    len: usize,
    opts: *const natsio_kv_write_options,
    revision_out: *mut u64,
) -> natsio_status {
    guard(|| {
        revision_result(
            write_op(self::kv(kv)?, key, value, len, Write::Create(opts))?,
            revision_out,
        )
    })
}

/// The token form of `natsio_kv_create` (`natsio_token_u64`).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_create_async(
    kv: *const natsio_kv,
    key: *const c_char,
    value: *const c_void,
    len: usize,
    opts: *const natsio_kv_write_options,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        start_op(
            write_op(k, key, value, len, Write::Create(opts))?,
            k.client_handle(),
            token_out,
        )
    })
}

/// Stores `value` only if `key`'s latest revision is `last` (compare and
/// set): fails with NATSIO_ERR_WRONG_LAST_SEQUENCE otherwise. Otherwise as
/// `natsio_kv_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_update(
    kv: *const natsio_kv,
    key: *const c_char,
    value: *const c_void,
    len: usize,
    last: u64,
    revision_out: *mut u64,
) -> natsio_status {
    guard(|| {
        let op = write_op(self::kv(kv)?, key, value, len, Write::Update(last))?;
        revision_result(op, revision_out)
    })
}

/// The token form of `natsio_kv_update` (`natsio_token_u64`).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_update_async(
    kv: *const natsio_kv,
    key: *const c_char,
    value: *const c_void,
    len: usize,
    last: u64,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        let op = write_op(k, key, value, len, Write::Update(last))?;
        start_op(op, k.client_handle(), token_out)
    })
}

unsafe fn get_op(k: &natsio_kv, key: *const c_char, revision: Option<u64>) -> Result<Op<Entry>> {
    Ok(k.kv.get(str_arg(key, "key")?, revision))
}

unsafe fn entry_result(op: Op<Entry>, entry_out: *mut *mut natsio_kv_entry) -> Result<()> {
    let out = out_arg(entry_out, "entry_out")?;
    write_box(out, natsio_kv_entry::from_entry(op.wait()?));
    Ok(())
}

/// The latest value of `key`, through `entry_out` (free with
/// `natsio_kv_entry_free`). Errors: NATSIO_ERR_KEY_NOT_FOUND,
/// NATSIO_ERR_KEY_DELETED (its latest revision is a delete or purge
/// marker), NATSIO_ERR_INVALID_KEY, and the request errors of
/// `natsio_kv_put`. On a replicated bucket the read is a Direct Get, which
/// any replica answers: right after a write (or a leader change) a replica
/// that has not applied it yet returns the revision before it, as with
/// nats.go. A reader that must see its own write compares the revision
/// with the one its put returned.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_get(
    kv: *const natsio_kv,
    key: *const c_char,
    entry_out: *mut *mut natsio_kv_entry,
) -> natsio_status {
    guard(|| entry_result(get_op(self::kv(kv)?, key, None)?, entry_out))
}

/// The token form of `natsio_kv_get`; the entry is read with
/// `natsio_token_kv_entry`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_get_async(
    kv: *const natsio_kv,
    key: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        start_op(get_op(k, key, None)?, k.client_handle(), token_out)
    })
}

/// Revision `revision` of `key` (NATSIO_ERR_KEY_NOT_FOUND if that revision
/// belongs to another key or is gone). Otherwise as `natsio_kv_get`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_get_revision(
    kv: *const natsio_kv,
    key: *const c_char,
    revision: u64,
    entry_out: *mut *mut natsio_kv_entry,
) -> natsio_status {
    guard(|| entry_result(get_op(self::kv(kv)?, key, Some(revision))?, entry_out))
}

/// The token form of `natsio_kv_get_revision` (`natsio_token_kv_entry`).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_get_revision_async(
    kv: *const natsio_kv,
    key: *const c_char,
    revision: u64,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        start_op(
            get_op(k, key, Some(revision))?,
            k.client_handle(),
            token_out,
        )
    })
}

/// The entry an operation produced (`natsio_kv_get_async`, or a watcher's
/// `natsio_kv_watcher_next_async`), as a new `natsio_kv_entry`. Returns as
/// `natsio_token_msg` (NATSIO_DONE once a watch has ended).
#[no_mangle]
pub unsafe extern "C" fn natsio_token_kv_entry(
    token: *const natsio_token,
    entry_out: *mut *mut natsio_kv_entry,
) -> natsio_status {
    if entry_out.is_null() {
        return guard(|| Err(super::null("entry_out")));
    }
    // A get yields an Entry (shared, not copied), a watch a WatchEvent.
    with_outcome(token, |_, o| {
        let e = match (o.downcast::<Entry>(), o.downcast::<WatchEvent>()) {
            (Some(entry), _) => natsio_kv_entry::from_entry(entry),
            (None, Some(ev)) => natsio_kv_entry::from_event((*ev).clone()),
            (None, None) => return Err(wrong_kind("KV entry")),
        };
        write_box(entry_out, e);
        Ok(())
    })
}

/// Which marker a `marker_op` writes; a purge whose options give a ttl
/// writes a marker that expires.
enum Marker {
    Delete,
    Purge(*const natsio_kv_write_options),
}

unsafe fn marker_op(
    k: &natsio_kv,
    key: *const c_char,
    last: *const u64,
    which: Marker,
) -> Result<Op<u64>> {
    let key = str_arg(key, "key")?;
    let last = last.as_ref().copied();
    Ok(match which {
        Marker::Delete => k.kv.delete(key, last),
        Marker::Purge(opts) => match write_ttl(opts)? {
            None => k.kv.purge(key, last),
            Some(ttl) => k.kv.purge_with_ttl(key, last, ttl),
        },
    })
}

/// Deletes `key` by writing a delete marker (history is kept);
/// `revision_out` (may be NULL) receives the marker's revision. With `last`
/// not NULL, only if the key's latest revision is `*last`
/// (NATSIO_ERR_WRONG_LAST_SEQUENCE otherwise). Errors as `natsio_kv_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_delete(
    kv: *const natsio_kv,
    key: *const c_char,
    last: *const u64,
    revision_out: *mut u64,
) -> natsio_status {
    guard(|| {
        revision_result(
            marker_op(self::kv(kv)?, key, last, Marker::Delete)?,
            revision_out,
        )
    })
}

/// The token form of `natsio_kv_delete` (`natsio_token_u64`: the marker's
/// revision).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_delete_async(
    kv: *const natsio_kv,
    key: *const c_char,
    last: *const u64,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        start_op(
            marker_op(k, key, last, Marker::Delete)?,
            k.client_handle(),
            token_out,
        )
    })
}

/// Purges `key`: a purge marker replaces all its earlier revisions;
/// `revision_out` (may be NULL) receives its revision. `last` as for
/// `natsio_kv_delete`. `opts` (may be NULL) can give the marker itself a
/// ttl: then the key leaves no trace in the bucket once it expires
/// (watchers saw the purge; `natsio_kv_get` gives NATSIO_ERR_KEY_DELETED
/// until then, NATSIO_ERR_KEY_NOT_FOUND after). Errors as `natsio_kv_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_purge(
    kv: *const natsio_kv,
    key: *const c_char,
    last: *const u64,
    opts: *const natsio_kv_write_options,
    revision_out: *mut u64,
) -> natsio_status {
    guard(|| {
        revision_result(
            marker_op(self::kv(kv)?, key, last, Marker::Purge(opts))?,
            revision_out,
        )
    })
}

/// The token form of `natsio_kv_purge` (`natsio_token_u64`).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_purge_async(
    kv: *const natsio_kv,
    key: *const c_char,
    last: *const u64,
    opts: *const natsio_kv_write_options,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        start_op(
            marker_op(k, key, last, Marker::Purge(opts))?,
            k.client_handle(),
            token_out,
        )
    })
}

fn purge_deletes_op(k: &natsio_kv, older_than_ms: i64) -> Op<u64> {
    let older_than = match older_than_ms {
        0 => Some(crate::kv::DEFAULT_PURGE_DELETES_OLDER_THAN),
        ms if ms > 0 => Some(std::time::Duration::from_millis(ms as u64)),
        _ => None,
    };
    k.kv.purge_deletes(older_than)
}

/// Removes delete and purge markers, as nats.go's PurgeDeletes. Every key
/// whose latest revision is a delete or purge marker is purged on the
/// server: if the marker is older than `older_than_ms` milliseconds, the
/// marker goes too, with every earlier revision (the key leaves no trace);
/// if it is younger, the marker stays and only the key's earlier revisions
/// go (so that watchers and readers still learn of the delete).
/// `older_than_ms` 0 means the default, 30 minutes (as nats.go); a
/// negative value removes every marker whatever its age. Keys whose latest
/// revision is a value are not touched. `purged_out` (may be NULL) gets
/// how many messages the server removed in all (markers and earlier
/// revisions). Reads the bucket's latest revisions through a short-lived
/// ordered consumer, then sends one stream purge per marker; blocks until
/// all are done (a failure stops at that key: the markers before it are
/// already purged). Thread-safe. Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_BUCKET_NOT_FOUND, and the request errors of `natsio_kv_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_purge_deletes(
    kv: *const natsio_kv,
    older_than_ms: i64,
    purged_out: *mut u64,
) -> natsio_status {
    guard(|| revision_result(purge_deletes_op(self::kv(kv)?, older_than_ms), purged_out))
}

/// The token form of `natsio_kv_purge_deletes` (`natsio_token_u64`: how
/// many messages were removed).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_purge_deletes_async(
    kv: *const natsio_kv,
    older_than_ms: i64,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        start_op(
            purge_deletes_op(k, older_than_ms),
            k.client_handle(),
            token_out,
        )
    })
}

/// The bucket's status: its backing stream's StreamInfo JSON (config with
/// history as max_msgs_per_subject, ttl as max_age; state with values as
/// messages and bytes), through `json_out` (free with `natsio_string_free`).
/// Errors: NATSIO_ERR_BUCKET_NOT_FOUND, the request errors of `natsio_kv_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_status(
    kv: *const natsio_kv,
    json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| json_result(self::kv(kv)?.kv.status(), json_out, false))
}

/// The token form of `natsio_kv_status` (`natsio_token_string`).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_status_async(
    kv: *const natsio_kv,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        start_op(
            k.kv.status().map(|v| v.to_string()),
            k.client_handle(),
            token_out,
        )
    })
}

/// The bucket's typed status through `status_out` (free with
/// `natsio_kv_bucket_status_free`), read from its stream's info in one
/// request. `natsio_kv_status` gives the same as JSON. Blocks up to the
/// context's timeout; thread-safe. Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_BUCKET_NOT_FOUND, and the request errors of `natsio_kv_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_get_status(
    kv: *const natsio_kv,
    status_out: *mut *mut natsio_kv_bucket_status,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        let out = out_arg(status_out, "status_out")?;
        write_box(
            out,
            natsio_kv_bucket_status::new(k.kv.bucket_status().wait()?),
        );
        Ok(())
    })
}

/// The token form of `natsio_kv_get_status`
/// (`natsio_token_kv_bucket_status`).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_get_status_async(
    kv: *const natsio_kv,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        start_op(k.kv.bucket_status(), k.client_handle(), token_out)
    })
}

/// The keys that currently hold a value (deleted and purged keys are left
/// out), through `list_out` (free with `natsio_string_list_free`). Reads
/// the bucket through a short-lived ordered consumer. Errors: the request
/// errors of `natsio_kv_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_keys(
    kv: *const natsio_kv,
    list_out: *mut *mut natsio_string_list,
) -> natsio_status {
    guard(|| string_list_result(self::kv(kv)?.kv.keys(), list_out))
}

/// The token form of `natsio_kv_keys` (`natsio_token_string_list`).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_keys_async(
    kv: *const natsio_kv,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        start_op(k.kv.keys(), k.client_handle(), token_out)
    })
}

/// The `nfilters` key patterns in `filters` (NULL allowed when 0).
unsafe fn key_patterns<'a>(filters: *const *const c_char, nfilters: usize) -> Result<Vec<&'a str>> {
    super::strings_arg(filters, nfilters, "filters", "key filter")
}

/// The keys matching one of the `nfilters` patterns in `filters` (none:
/// every key, as `natsio_kv_keys`; a pattern has key tokens, `*` as a whole
/// token, `>` as the last one, e.g. "app.*" or "users.>", as for
/// `natsio_kv_watch`) that currently hold a value (deleted and purged keys
/// are left out), through `list_out` (free with `natsio_string_list_free`),
/// as nats.go's ListKeysFiltered. The bucket is read through one
/// short-lived ordered consumer filtered on all the patterns (a pattern
/// given twice counts once; patterns that overlap otherwise, such as "a.*"
/// and "a.>", are refused by the server: NATSIO_ERR_JS_API). Blocks up to
/// the context's timeout per request. Errors: NATSIO_ERR_NULL_ARGUMENT
/// (`filters` NULL with `nfilters` > 0, a NULL pattern, `list_out`),
/// NATSIO_ERR_INVALID_UTF8, NATSIO_ERR_INVALID_KEY (a bad pattern, "" or
/// "a.>.b" say), NATSIO_ERR_BUCKET_NOT_FOUND, and the request errors of
/// `natsio_kv_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_keys_filtered(
    kv: *const natsio_kv,
    filters: *const *const c_char,
    nfilters: usize,
    list_out: *mut *mut natsio_string_list,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        let patterns = key_patterns(filters, nfilters)?;
        out_arg(list_out, "list_out")?;
        string_list_result(k.kv.keys_filtered(&patterns), list_out)
    })
}

/// The token form of `natsio_kv_keys_filtered`
/// (`natsio_token_string_list`). A bad pattern is returned by this call.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_keys_filtered_async(
    kv: *const natsio_kv,
    filters: *const *const c_char,
    nfilters: usize,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        let patterns = key_patterns(filters, nfilters)?;
        out_arg(token_out, "token_out")?;
        start_op(k.kv.keys_filtered(&patterns), k.client_handle(), token_out)
    })
}

/// A running listing of a bucket's keys (`natsio_kv_list_keys`), read
/// through the iterator contract; each item is a key. Owned by the caller,
/// freed with `natsio_kv_key_lister_free`; every function is thread-safe.
pub struct natsio_kv_key_lister {
    it: KeyLister,
    client: ClientHandle,
}

fn lister<'a>(p: *const natsio_kv_key_lister) -> Result<&'a natsio_kv_key_lister> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "lister") }
}

/// A key listing in push mode (`natsio_kv_key_lister_set_callback`): each
/// key with NATSIO_OK (borrowed for the call), then once `key` NULL with
/// the status that ended the listing (NATSIO_DONE, or an error). Runs on a
/// library thread, one call at a time, in order.
pub type natsio_kv_key_cb =
    Option<unsafe extern "C" fn(user_data: *mut c_void, key: *const c_char, status: natsio_status)>;

/// Lists the keys matching one of the `nfilters` patterns in `filters`
/// (none: every key; patterns as for `natsio_kv_keys_filtered`) that hold
/// a value, as an iterator (nats.go's ListKeys / ListKeysFiltered): through
/// `lister_out` (free with `natsio_kv_key_lister_free`), read with the
/// `natsio_kv_key_lister_` functions. Does not block: the bucket is read on
/// the library's threads from now on, through one ordered consumer (headers
/// only, the last revision of each key; delete and purge markers are
/// skipped), into the lister's buffer, bounded by the client's pending
/// limits (a full buffer pauses reading, counted in the stats' `stalls`).
/// The listing ends (NATSIO_DONE) once every key stored when it started has
/// been delivered, at once for an empty bucket; keys written meanwhile may
/// or may not be listed. A missing bucket shows as
/// NATSIO_ERR_BUCKET_NOT_FOUND from `natsio_kv_key_lister_next`. Errors:
/// NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_UTF8,
/// NATSIO_ERR_INVALID_KEY (a bad pattern), NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_list_keys(
    kv: *const natsio_kv,
    filters: *const *const c_char,
    nfilters: usize,
    lister_out: *mut *mut natsio_kv_key_lister,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        let patterns = key_patterns(filters, nfilters)?;
        let out = out_arg(lister_out, "lister_out")?;
        let it = k.kv.list_keys(&patterns)?;
        write_box(
            out,
            natsio_kv_key_lister {
                it,
                client: k.client_handle(),
            },
        );
        Ok(())
    })
}

/// The next key as a new string (free with `natsio_string_free`), waiting
/// up to `timeout_ms` (NATSIO_TIMEOUT_DEFAULT or NATSIO_WAIT_FOREVER: until
/// one comes or the listing ends; NATSIO_NO_WAIT: only one already read).
/// NATSIO_DONE (`*key_out` set to NULL) once the listing has ended: every
/// key was delivered, none matched, or `natsio_kv_key_lister_stop`.
/// Blocks. Errors: NATSIO_ERR_TIMEOUT (the listing goes on),
/// NATSIO_ERR_BUCKET_NOT_FOUND, NATSIO_ERR_JS_API (the server refused the
/// consumer, e.g. overlapping patterns), NATSIO_ERR_CONNECTION_CLOSED,
/// NATSIO_ERR_ILLEGAL_STATE (callback mode, or on a library runtime
/// thread); an error ends the listing and is returned again by later calls.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_key_lister_next(
    lister: *const natsio_kv_key_lister,
    timeout_ms: i64,
    key_out: *mut *mut c_char,
) -> natsio_status {
    match self::lister(lister) {
        Ok(l) => iter::next_ptr(&l.it.feed, timeout_ms, key_out, "key_out", |k: String| {
            Ok(cstring(&k).into_raw())
        }),
        Err(e) => super::status::record(&e),
    }
}

/// A token for the next key (read with `natsio_token_string`; NATSIO_DONE
/// at the end).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_key_lister_next_async(
    lister: *const natsio_kv_key_lister,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    match self::lister(lister) {
        Ok(l) => iter::next_async(&l.it.feed, l.client.clone(), token_out),
        Err(e) => super::status::record(&e),
    }
}

/// Push mode for a key listing: `cb` gets every key, then a final call
/// with a NULL key and the status that ended it; `release` runs after
/// that. As `natsio_sub_set_callback` otherwise.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_key_lister_set_callback(
    lister: *const natsio_kv_key_lister,
    cb: natsio_kv_key_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
) -> natsio_status {
    guard(|| {
        let l = self::lister(lister)?;
        let Some(f) = cb else {
            return Err(super::null("cb"));
        };
        let call = move |ud: *mut c_void, key: Option<String>, st: natsio_status| match key {
            Some(k) => {
                let c = cstring(&k);
                // SAFETY: the application registered `f` for `ud`.
                unsafe { f(ud, c.as_ptr(), st) }
            }
            // SAFETY: as above.
            None => unsafe { f(ud, std::ptr::null(), st) },
        };
        iter::set_callback(user_data, release, call, |h| {
            l.it.set_handler(h, Box::new(|| {}))
        })
    })
}

/// Ends the listing early: `natsio_kv_key_lister_next` returns NATSIO_DONE,
/// now and later (keys not read yet are dropped), and a callback gets its
/// final call before this returns; the server-side consumer is deleted.
/// Idempotent; the handle stays valid until `natsio_kv_key_lister_free`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_key_lister_stop(
    lister: *const natsio_kv_key_lister,
) -> natsio_status {
    guard(|| {
        self::lister(lister)?.it.stop();
        Ok(())
    })
}

/// Reads the live counters into `stats_out` (`delivered`: keys handed
/// out; `stalls`: times the buffer was full and reading paused).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_key_lister_get_stats(
    lister: *const natsio_kv_key_lister,
    stats_out: *mut natsio_iter_stats,
) -> natsio_status {
    guard(|| iter::stats(self::lister(lister)?.it.stats(), stats_out))
}

/// Stops (if needed) and frees a key listing. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_key_lister_free(lister: *mut natsio_kv_key_lister) {
    free_box(lister)
}

/// Every kept revision of `key`, oldest first, delete and purge markers
/// included (each entry's delta counts the newer revisions), through
/// `list_out` (free with `natsio_kv_entry_list_free`). Errors:
/// NATSIO_ERR_KEY_NOT_FOUND, NATSIO_ERR_INVALID_KEY, and the request
/// errors of `natsio_kv_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_history(
    kv: *const natsio_kv,
    key: *const c_char,
    list_out: *mut *mut natsio_kv_entry_list,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        let op = k.kv.history(str_arg(key, "key")?);
        out_arg(list_out, "list_out")?;
        let items = op
            .wait()?
            .into_iter()
            .map(natsio_kv_entry::from_entry)
            .collect();
        write_list(list_out, natsio_kv_entry_list { items })
    })
}

/// The token form of `natsio_kv_history` (`natsio_token_kv_entry_list`).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_history_async(
    kv: *const natsio_kv,
    key: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        start_op(
            k.kv.history(str_arg(key, "key")?),
            k.client_handle(),
            token_out,
        )
    })
}

/// Frees a bucket handle (the bucket itself stays). Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_free(kv: *mut natsio_kv) {
    free_box(kv)
}

fn entry<'a>(e: *const natsio_kv_entry) -> Result<&'a natsio_kv_entry> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(e, "entry") }
}

/// The entry's bucket name (borrowed; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_bucket(e: *const natsio_kv_entry) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(entry(e)?.bucket_ptr()))
}

/// The entry's key (borrowed; "" for the initial-values marker; NULL for
/// NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_key(e: *const natsio_kv_entry) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(entry(e)?.key_ptr()))
}

/// The value (borrowed from the entry). A NUL byte follows it, so text
/// values can be used as C strings; values may contain NUL bytes, so use
/// `natsio_kv_entry_value_len` for the length.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_value(e: *const natsio_kv_entry) -> *const c_char {
    guard_value(std::ptr::null(), || {
        Ok(match &entry(e)?.entry {
            Some(en) if !en.value.is_empty() => en.value.as_ptr().cast(),
            _ => c"".as_ptr(),
        })
    })
}

/// The value's length in bytes (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_value_len(e: *const natsio_kv_entry) -> usize {
    guard_value(0, || {
        Ok(entry(e)?.entry.as_ref().map_or(0, |en| en.value.len()))
    })
}

/// The entry's revision (its stream sequence; 0 for the marker and NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_revision(e: *const natsio_kv_entry) -> u64 {
    guard_value(0, || {
        Ok(entry(e)?.entry.as_ref().map_or(0, |en| en.revision))
    })
}

/// What the entry records (NATSIO_KV_PUT for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_operation(
    e: *const natsio_kv_entry,
) -> natsio_kv_operation {
    guard_value(natsio_kv_operation::NATSIO_KV_PUT, || {
        Ok(match entry(e)?.entry.as_ref().map(|en| en.operation) {
            Some(Operation::Put) => natsio_kv_operation::NATSIO_KV_PUT,
            Some(Operation::Delete) => natsio_kv_operation::NATSIO_KV_DEL,
            Some(Operation::Purge) => natsio_kv_operation::NATSIO_KV_PURGE,
            None => natsio_kv_operation::NATSIO_KV_INITIAL_DONE,
        })
    })
}

/// When the revision was stored, in nanoseconds since the Unix epoch.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_created_ns(e: *const natsio_kv_entry) -> i64 {
    guard_value(0, || {
        Ok(entry(e)?.entry.as_ref().map_or(0, |en| en.created_ns))
    })
}

/// How many newer revisions of the key exist (0 for a `get`).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_delta(e: *const natsio_kv_entry) -> u64 {
    guard_value(0, || Ok(entry(e)?.entry.as_ref().map_or(0, |en| en.delta)))
}

/// Keeps an entry beyond the callback that received it: a copy (the value
/// is shared, not copied), freed with `natsio_kv_entry_free`.
/// Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_clone(
    e: *const natsio_kv_entry,
    out: *mut *mut natsio_kv_entry,
) -> natsio_status {
    guard(|| {
        let src = entry(e)?;
        let out = out_arg(out, "out")?;
        write_box(
            out,
            natsio_kv_entry {
                entry: src.entry.clone(),
                marker_bucket: src.marker_bucket.clone(),
                bucket: OnceLock::new(),
                key: OnceLock::new(),
            },
        );
        Ok(())
    })
}

/// Frees an entry. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_free(e: *mut natsio_kv_entry) {
    free_box(e)
}

/// `natsio_kv_watch_options.version` of this header (2 added
/// `resume_from_revision`; version 1 structs are still accepted).
pub const NATSIO_KV_WATCH_OPTIONS_VERSION: u32 = 2;

/// Options of `natsio_kv_watch`. Initialise with
/// `natsio_kv_watch_options_init` (all false).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_kv_watch_options {
    /// NATSIO_KV_WATCH_OPTIONS_VERSION.
    pub version: u32,
    /// Deliver every kept revision first, not only the latest per key.
    pub include_history: bool,
    /// Leave out delete and purge markers.
    pub ignore_deletes: bool,
    /// Entries without their values (revision, operation and key only).
    pub meta_only: bool,
    /// No initial values: only changes made after the watch starts.
    pub updates_only: bool,
    /// Resume at this revision (0: not set): the watch delivers every
    /// revision from it on of the matching keys (markers included unless
    /// `ignore_deletes`; as with `include_history`, which may be set too
    /// and changes nothing), then the NATSIO_KV_INITIAL_DONE marker once
    /// the revisions stored when the watch started are delivered (at once
    /// if there were none from it on), then changes. A revision past the
    /// next one to be written skips the changes before it. Contradicts
    /// `updates_only` (NATSIO_ERR_INVALID_ARGUMENT).
    pub resume_from_revision: u64,
}

super::versioned!(
    natsio_kv_watch_options,
    NATSIO_KV_WATCH_OPTIONS_VERSION,
    older: [1 => resume_from_revision]
);

/// Fills `opts` with the defaults and the version.
/// Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_watch_options_init(
    opts: *mut natsio_kv_watch_options,
) -> natsio_status {
    guard(|| super::options_init(opts))
}

/// A running watch of a bucket (`natsio_kv_watch`), read through the
/// iterator contract. Owned by the caller, freed with
/// `natsio_kv_watcher_free`; every function is thread-safe.
pub struct natsio_kv_watcher {
    it: Watcher,
}

/// A watcher's entries in push mode (`natsio_kv_watcher_set_callback`):
/// each entry with NATSIO_OK (borrowed for the call), the initial-values
/// marker included, then once `entry` NULL with the status that ended the
/// watch (NATSIO_DONE, or an error). Runs on the watcher's own library
/// thread, one call at a time, in order.
pub type natsio_kv_entry_cb = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        entry: *const natsio_kv_entry,
        status: natsio_status,
    ),
>;

unsafe fn watch_op(
    k: &natsio_kv,
    keys: *const *const c_char,
    nkeys: usize,
    opts: *const natsio_kv_watch_options,
) -> Result<Op<Watcher>> {
    let patterns = super::strings_arg(keys, nkeys, "keys", "key pattern")?;
    let o = if opts.is_null() {
        crate::kv::WatchOptions::default()
    } else {
        let o = options_arg(opts)?;
        crate::kv::WatchOptions {
            include_history: o.include_history,
            ignore_deletes: o.ignore_deletes,
            meta_only: o.meta_only,
            updates_only: o.updates_only,
            resume_from_revision: o.resume_from_revision,
        }
    };
    Ok(k.kv.watch(&patterns, o))
}

/// Watches the keys matching the `nkeys` patterns in `keys` (none: every
/// key; a pattern has key tokens, `*` as a whole token, `>` as the last
/// one, e.g. "app.*" or "users.>") through `watcher_out`. It delivers the
/// current value of each matching key (or its history, or nothing with
/// `updates_only`), then the marker entry (operation
/// NATSIO_KV_INITIAL_DONE), then every change as it happens (a change made
/// while the initial values are still being delivered comes before the
/// marker, as in nats.go). From the
/// moment this returns, changes are pulled into the watcher's buffer on the
/// library's threads whether or not the application reads (up to the
/// client's pending limits: a full buffer pauses pulling, counted in the
/// stats' `stalls`); gaps, lost consumers, missed heartbeats and reconnects
/// are healed by recreating the ordered consumer after the last revision
/// delivered. `opts` may be NULL. Blocks while the first consumer is
/// created. Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_KEY (bad
/// pattern), NATSIO_ERR_INVALID_UTF8, NATSIO_ERR_INVALID_ARGUMENT (unknown
/// options version, or resume_from_revision with updates_only),
/// NATSIO_ERR_BUCKET_NOT_FOUND, and the request errors of `natsio_kv_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_watch(
    kv: *const natsio_kv,
    keys: *const *const c_char,
    nkeys: usize,
    opts: *const natsio_kv_watch_options,
    watcher_out: *mut *mut natsio_kv_watcher,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        let op = watch_op(k, keys, nkeys, opts)?;
        let out = out_arg(watcher_out, "watcher_out")?;
        write_box(out, natsio_kv_watcher { it: op.wait()? });
        Ok(())
    })
}

/// The token form of `natsio_kv_watch`; the watcher is taken (once) with
/// `natsio_token_kv_watcher`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_watch_async(
    kv: *const natsio_kv,
    keys: *const *const c_char,
    nkeys: usize,
    opts: *const natsio_kv_watch_options,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        let op = watch_op(k, keys, nkeys, opts)?.map(TakeOnce::new);
        start_op(op, k.client_handle(), token_out)
    })
}

/// The watcher a `natsio_kv_watch_async` started, through `watcher_out`
/// (free with `natsio_kv_watcher_free`). It can be taken once
/// (NATSIO_ERR_ILLEGAL_STATE after); a token freed without taking it stops
/// the watch. Returns as `natsio_token_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_kv_watcher(
    token: *const natsio_token,
    watcher_out: *mut *mut natsio_kv_watcher,
) -> natsio_status {
    token_value(
        token,
        watcher_out,
        "watcher_out",
        |_, w: &TakeOnce<Watcher>| Ok(Box::into_raw(Box::new(natsio_kv_watcher { it: w.take()? }))),
    )
}

fn watcher<'a>(p: *const natsio_kv_watcher) -> Result<&'a natsio_kv_watcher> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "watcher") }
}

/// The next entry of a watch, waiting up to `timeout_ms`
/// (NATSIO_TIMEOUT_DEFAULT or NATSIO_WAIT_FOREVER: until one comes;
/// NATSIO_NO_WAIT: only one already buffered). NATSIO_OK: `*entry_out` is
/// an entry (free with `natsio_kv_entry_free`): a revision (its operation
/// says put, delete or purge; its delta how many newer revisions the
/// initial values had) or, once, the initial-values marker
/// (NATSIO_KV_INITIAL_DONE). NATSIO_DONE (`*entry_out` set to NULL): the
/// watch was stopped. Errors: NATSIO_ERR_TIMEOUT (nothing changed in time;
/// the watch goes on), NATSIO_ERR_BUCKET_NOT_FOUND (the bucket was
/// deleted: the watch ended), NATSIO_ERR_CONNECTION_CLOSED,
/// NATSIO_ERR_ILLEGAL_STATE (callback mode, or on a library runtime thread).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_watcher_next(
    watcher: *const natsio_kv_watcher,
    timeout_ms: i64,
    entry_out: *mut *mut natsio_kv_entry,
) -> natsio_status {
    match self::watcher(watcher) {
        Ok(w) => iter::next(&w.it.feed, timeout_ms, entry_out, "entry_out", |ev| {
            Ok(natsio_kv_entry::from_event(ev))
        }),
        Err(e) => super::status::record(&e),
    }
}

/// A token for the next entry (`natsio_token_kv_entry`; NATSIO_DONE once
/// stopped). Pending tokens are served in call order; freeing or
/// cancelling one before an entry reached it leaves the entries buffered.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_watcher_next_async(
    watcher: *const natsio_kv_watcher,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    match self::watcher(watcher) {
        Ok(w) => iter::next_async(&w.it.feed, ClientHandle::default(), token_out),
        Err(e) => super::status::record(&e),
    }
}

/// Push mode for a watch: `cb` gets every entry (the marker included),
/// then a final call with a NULL entry and the status that ended it;
/// `release` runs after that. As `natsio_sub_set_callback` otherwise.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_watcher_set_callback(
    watcher: *const natsio_kv_watcher,
    cb: natsio_kv_entry_cb,
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
            iter::item_cb(f, natsio_kv_entry::from_event),
            |h| w.it.set_handler(h, Box::new(|| {})),
        )
    })
}

/// Stops a watch: `natsio_kv_watcher_next` returns NATSIO_DONE, now and
/// later, and a callback gets its final call before this returns; the
/// server-side consumer is deleted. Idempotent.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_watcher_stop(
    watcher: *const natsio_kv_watcher,
) -> natsio_status {
    guard(|| {
        self::watcher(watcher)?.it.stop();
        Ok(())
    })
}

/// Reads the live counters into `stats_out` (`stalls`: times the buffer
/// was full and pulling paused).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_watcher_get_stats(
    watcher: *const natsio_kv_watcher,
    stats_out: *mut natsio_iter_stats,
) -> natsio_status {
    guard(|| iter::stats(self::watcher(watcher)?.it.stats(), stats_out))
}

/// Stops (if needed) and frees a watch. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_watcher_free(watcher: *mut natsio_kv_watcher) {
    free_box(watcher)
}

/// Revisions returned by `natsio_kv_history`. Owned by the caller, freed
/// with `natsio_kv_entry_list_free` (which frees its entries).
pub struct natsio_kv_entry_list {
    pub(crate) items: Vec<natsio_kv_entry>,
}

/// How many entries the list holds (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_list_count(list: *const natsio_kv_entry_list) -> usize {
    count(list.as_ref().map(|l| &l.items))
}

/// Entry `index` of the list, borrowed until the list is freed (NULL if
/// out of range).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_list_get(
    list: *const natsio_kv_entry_list,
    index: usize,
) -> *const natsio_kv_entry {
    guard_value(std::ptr::null(), || {
        Ok(arg(list, "list")?
            .items
            .get(index)
            .map_or(std::ptr::null(), |e| e as *const natsio_kv_entry))
    })
}

/// Frees a list and its entries. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_list_free(list: *mut natsio_kv_entry_list) {
    free_box(list)
}

/// The entries a history produced, as a new list freed with
/// `natsio_kv_entry_list_free`. Returns as `natsio_token_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_kv_entry_list(
    token: *const natsio_token,
    list_out: *mut *mut natsio_kv_entry_list,
) -> natsio_status {
    token_value(token, list_out, "list_out", |_, v: &Vec<Entry>| {
        let items = v.iter().cloned().map(natsio_kv_entry::from_entry).collect();
        Ok(Box::into_raw(Box::new(natsio_kv_entry_list { items })))
    })
}

// ---- bucket status ---------------------------------------------------------

/// A Key-Value bucket's typed status (`natsio_kv_get_status`,
/// `natsio_js_kv_statuses`). Owned by the caller, freed with
/// `natsio_kv_bucket_status_free`; read-only, safe to share between
/// threads. Its strings are borrowed until it is freed.
pub struct natsio_kv_bucket_status {
    status: KeyValueStatus,
    bucket: CString,
    description: Option<CString>,
    storage: CString,
    metadata_json: CString,
    stream_info_json: OnceLock<CString>,
}

impl natsio_kv_bucket_status {
    fn new(status: KeyValueStatus) -> Self {
        natsio_kv_bucket_status {
            bucket: cstring(&status.bucket),
            description: status.description.as_deref().map(cstring),
            storage: cstring(&status.storage),
            metadata_json: cstring(&status.metadata_json()),
            stream_info_json: OnceLock::new(),
            status,
        }
    }
}

fn status_arg<'a>(p: *const natsio_kv_bucket_status) -> Result<&'a natsio_kv_bucket_status> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "status") }
}

/// The bucket's name (borrowed; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_bucket_status_bucket(
    s: *const natsio_kv_bucket_status,
) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(status_arg(s)?.bucket.as_ptr()))
}

/// How many revisions the bucket stores, markers included (the stream's
/// message count; 0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_bucket_status_values(s: *const natsio_kv_bucket_status) -> u64 {
    guard_value(0, || Ok(status_arg(s)?.status.values))
}

/// How many revisions are kept per key (1..64; 0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_bucket_status_history(s: *const natsio_kv_bucket_status) -> i64 {
    guard_value(0, || Ok(status_arg(s)?.status.history))
}

/// How long revisions live, in nanoseconds (0: forever, and for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_bucket_status_ttl_ns(s: *const natsio_kv_bucket_status) -> i64 {
    guard_value(0, || Ok(status_arg(s)?.status.ttl_ns))
}

/// Bytes stored (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_bucket_status_bytes(s: *const natsio_kv_bucket_status) -> u64 {
    guard_value(0, || Ok(status_arg(s)?.status.bytes))
}

/// "file" or "memory" (borrowed; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_bucket_status_storage(
    s: *const natsio_kv_bucket_status,
) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(status_arg(s)?.storage.as_ptr()))
}

/// How many replicas the bucket has (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_bucket_status_replicas(
    s: *const natsio_kv_bucket_status,
) -> i64 {
    guard_value(0, || Ok(status_arg(s)?.status.replicas))
}

/// Whether the bucket's stream compresses (s2; false for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_bucket_status_is_compressed(
    s: *const natsio_kv_bucket_status,
) -> bool {
    guard_value(false, || Ok(status_arg(s)?.status.compressed))
}

/// The bucket's description (borrowed; NULL if none or for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_bucket_status_description(
    s: *const natsio_kv_bucket_status,
) -> *const c_char {
    guard_value(std::ptr::null(), || {
        Ok(status_arg(s)?
            .description
            .as_ref()
            .map_or(std::ptr::null(), |d| d.as_ptr()))
    })
}

/// The bucket's metadata as a JSON object of strings ("{}" if none;
/// borrowed; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_bucket_status_metadata_json(
    s: *const natsio_kv_bucket_status,
) -> *const c_char {
    guard_value(std::ptr::null(), || {
        Ok(status_arg(s)?.metadata_json.as_ptr())
    })
}

/// How long the server keeps the markers it writes when a key's TTL or a
/// limit removes it, in nanoseconds (the config's limit_marker_ttl; 0: no
/// markers and no per-key TTL, and for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_bucket_status_limit_marker_ttl_ns(
    s: *const natsio_kv_bucket_status,
) -> i64 {
    guard_value(0, || Ok(status_arg(s)?.status.limit_marker_ttl_ns))
}

/// The backing stream's StreamInfo JSON (borrowed; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_bucket_status_stream_info_json(
    s: *const natsio_kv_bucket_status,
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
pub unsafe extern "C" fn natsio_kv_bucket_status_free(s: *mut natsio_kv_bucket_status) {
    free_box(s)
}

/// The status a `natsio_kv_get_status_async` produced, as a new
/// `natsio_kv_bucket_status`. Returns as `natsio_token_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_kv_bucket_status(
    token: *const natsio_token,
    status_out: *mut *mut natsio_kv_bucket_status,
) -> natsio_status {
    bucket::token_status::<natsio_kv>(token, status_out)
}

/// Statuses returned by `natsio_js_kv_statuses`. Owned by the caller,
/// freed with `natsio_kv_bucket_status_list_free` (which frees its
/// statuses).
pub struct natsio_kv_bucket_status_list {
    items: Vec<natsio_kv_bucket_status>,
}

/// How many statuses the list holds (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_bucket_status_list_count(
    list: *const natsio_kv_bucket_status_list,
) -> usize {
    bucket::status_list_count::<natsio_kv>(list)
}

/// Status `index` of the list, borrowed until the list is freed (NULL if
/// out of range or for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_bucket_status_list_get(
    list: *const natsio_kv_bucket_status_list,
    index: usize,
) -> *const natsio_kv_bucket_status {
    bucket::status_list_get::<natsio_kv>(list, index)
}

/// Frees a list and its statuses. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_bucket_status_list_free(
    list: *mut natsio_kv_bucket_status_list,
) {
    free_box(list)
}

/// The statuses a `natsio_js_kv_statuses_async` produced, as a new list
/// (free with `natsio_kv_bucket_status_list_free`). Returns as
/// `natsio_token_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_kv_bucket_status_list(
    token: *const natsio_token,
    list_out: *mut *mut natsio_kv_bucket_status_list,
) -> natsio_status {
    bucket::token_status_list::<natsio_kv>(token, list_out)
}
