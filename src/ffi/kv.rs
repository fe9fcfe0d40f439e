//! `natsio_kv`: a Key-Value bucket, and `natsio_kv_entry`.

use std::ffi::{c_char, c_void, CString};

use super::js::{js, natsio_js};
use super::status::natsio_status;
use super::{
    arg, bytes_arg, guard, guard_value, guard_void, out_arg, str_arg, write_box, write_string,
};
use crate::error::Result;
use crate::kv::{Entry, KeyValue, Operation};

/// A bound Key-Value bucket. Created by `natsio_js_kv_create`,
/// `natsio_js_kv_bind` and friends, freed with `natsio_kv_free`. Like its
/// context it does not keep the client open. Every function is thread-safe.
pub struct natsio_kv {
    kv: KeyValue,
    bucket: CString,
}

/// What a revision of a key records.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum natsio_kv_operation {
    NATSIO_KV_PUT = 0,
    /// A delete marker (`natsio_kv_delete`).
    NATSIO_KV_DEL = 1,
    /// A purge marker (`natsio_kv_purge`, or written by the server on expiry).
    NATSIO_KV_PURGE = 2,
}

/// One revision of a key. Owned by the caller, freed with
/// `natsio_kv_entry_free`; read-only, safe to share between threads.
pub struct natsio_kv_entry {
    entry: Entry,
    bucket: CString,
    key: CString,
}

fn kv<'a>(p: *const natsio_kv) -> Result<&'a KeyValue> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "kv").map(|k| &k.kv) }
}

unsafe fn bind_with(
    js: *const natsio_js,
    kv_out: *mut *mut natsio_kv,
    f: impl FnOnce(&crate::jetstream::JetStream) -> Result<KeyValue>,
) -> natsio_status {
    guard(|| {
        let j = self::js(js)?;
        let out = out_arg(kv_out, "kv_out")?;
        let kv = f(j)?;
        let bucket = CString::new(kv.bucket()).unwrap_or_default();
        write_box(out, natsio_kv { kv, bucket });
        Ok(())
    })
}

/// Creates a bucket from `config_json`, a KeyValueConfig object: "bucket"
/// (required, [A-Za-z0-9_-]+), "description", "history" (1..64, default 1),
/// "ttl" (duration: nanoseconds or "90s"; 0 or at least 100ms),
/// "max_value_size", "max_bytes", "storage" ("file"|"memory"), "replicas",
/// "compression" (bool), "placement", "republish", "allow_msg_ttl",
/// "limit_marker_ttl", "metadata". Binds it through `kv_out` (free with
/// `natsio_kv_free`). An identical existing bucket is simply bound.
/// Blocks up to the context's timeout. Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_CONFIG (the detail names the field),
/// NATSIO_ERR_INVALID_BUCKET_NAME, NATSIO_ERR_BUCKET_EXISTS (exists with
/// another configuration), NATSIO_ERR_JS_NOT_ENABLED, NATSIO_ERR_JS_API,
/// NATSIO_ERR_TIMEOUT, NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_kv_create(
    js: *const natsio_js,
    config_json: *const c_char,
    kv_out: *mut *mut natsio_kv,
) -> natsio_status {
    bind_with(js, kv_out, |j| {
        j.create_key_value(str_arg(config_json, "config_json")?)
    })
}

/// Changes an existing bucket's configuration (NATSIO_ERR_BUCKET_NOT_FOUND
/// if there is none). Otherwise as `natsio_js_kv_create`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_kv_update(
    js: *const natsio_js,
    config_json: *const c_char,
    kv_out: *mut *mut natsio_kv,
) -> natsio_status {
    bind_with(js, kv_out, |j| {
        j.update_key_value(str_arg(config_json, "config_json")?)
    })
}

/// Updates the bucket, or creates it when it does not exist. Otherwise as
/// `natsio_js_kv_create`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_kv_create_or_update(
    js: *const natsio_js,
    config_json: *const c_char,
    kv_out: *mut *mut natsio_kv,
) -> natsio_status {
    bind_with(js, kv_out, |j| {
        j.create_or_update_key_value(str_arg(config_json, "config_json")?)
    })
}

/// Binds the existing bucket `bucket` through `kv_out`.
/// Errors: NATSIO_ERR_BUCKET_NOT_FOUND, NATSIO_ERR_INVALID_BUCKET_NAME, and
/// the request errors of `natsio_js_kv_create`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_kv_bind(
    js: *const natsio_js,
    bucket: *const c_char,
    kv_out: *mut *mut natsio_kv,
) -> natsio_status {
    bind_with(js, kv_out, |j| j.key_value(str_arg(bucket, "bucket")?))
}

/// Deletes bucket `bucket` with all its keys and history.
/// Errors: NATSIO_ERR_BUCKET_NOT_FOUND, as for `natsio_js_kv_bind`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_kv_delete(
    js: *const natsio_js,
    bucket: *const c_char,
) -> natsio_status {
    guard(|| self::js(js)?.delete_key_value(str_arg(bucket, "bucket")?))
}

/// The bucket's name (borrowed from the handle; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_bucket(kv: *const natsio_kv) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(arg(kv, "kv")?.bucket.as_ptr()))
}

unsafe fn write_revision(revision_out: *mut u64, rev: u64) {
    if !revision_out.is_null() {
        *revision_out = rev;
    }
}

/// Stores `len` bytes of `value` under `key`; `revision_out` (may be NULL)
/// receives the new revision. Blocks until the bucket's stream acks.
/// Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_UTF8,
/// NATSIO_ERR_INVALID_KEY, NATSIO_ERR_MAX_PAYLOAD, NATSIO_ERR_JS_API (e.g.
/// larger than max_value_size), NATSIO_ERR_TIMEOUT,
/// NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_put(
    kv: *const natsio_kv,
    key: *const c_char,
    value: *const c_void,
    len: usize,
    revision_out: *mut u64,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        let rev = k.put(str_arg(key, "key")?, bytes_arg(value, len, "value")?)?;
        write_revision(revision_out, rev);
        Ok(())
    })
}

/// Stores `value` only if `key` has no live value: fails with
/// NATSIO_ERR_KEY_EXISTS otherwise. A deleted or purged key can be created
/// again. Otherwise as `natsio_kv_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_create(
    kv: *const natsio_kv,
    key: *const c_char,
    value: *const c_void,
    len: usize,
    revision_out: *mut u64,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        let rev = k.create(str_arg(key, "key")?, bytes_arg(value, len, "value")?)?;
        write_revision(revision_out, rev);
        Ok(())
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
        let k = self::kv(kv)?;
        let rev = k.update(str_arg(key, "key")?, bytes_arg(value, len, "value")?, last)?;
        write_revision(revision_out, rev);
        Ok(())
    })
}

fn entry_handle(entry: Entry) -> natsio_kv_entry {
    let c = |s: &str| CString::new(s).unwrap_or_default();
    let bucket = c(&entry.bucket);
    let key = c(&entry.key);
    natsio_kv_entry { entry, bucket, key }
}

unsafe fn write_entry(out: *mut *mut natsio_kv_entry, entry: Entry) {
    write_box(out, entry_handle(entry));
}

/// The latest value of `key`, through `entry_out` (free with
/// `natsio_kv_entry_free`). Errors: NATSIO_ERR_KEY_NOT_FOUND,
/// NATSIO_ERR_KEY_DELETED (its latest revision is a delete or purge
/// marker), NATSIO_ERR_INVALID_KEY, and the request errors of
/// `natsio_kv_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_get(
    kv: *const natsio_kv,
    key: *const c_char,
    entry_out: *mut *mut natsio_kv_entry,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        let key = str_arg(key, "key")?;
        let out = out_arg(entry_out, "entry_out")?;
        write_entry(out, k.get(key, None)?);
        Ok(())
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
    guard(|| {
        let k = self::kv(kv)?;
        let key = str_arg(key, "key")?;
        let out = out_arg(entry_out, "entry_out")?;
        write_entry(out, k.get(key, Some(revision))?);
        Ok(())
    })
}

/// Deletes `key` by writing a delete marker (history is kept). With
/// `last` not NULL, only if the key's latest revision is `*last`
/// (NATSIO_ERR_WRONG_LAST_SEQUENCE otherwise). Errors as `natsio_kv_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_delete(
    kv: *const natsio_kv,
    key: *const c_char,
    last: *const u64,
) -> natsio_status {
    guard(|| self::kv(kv)?.delete(str_arg(key, "key")?, last.as_ref().copied()))
}

/// Purges `key`: a purge marker replaces all its earlier revisions. `last`
/// as for `natsio_kv_delete`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_purge(
    kv: *const natsio_kv,
    key: *const c_char,
    last: *const u64,
) -> natsio_status {
    guard(|| self::kv(kv)?.purge(str_arg(key, "key")?, last.as_ref().copied()))
}

/// The bucket's status: its backing stream's StreamInfo JSON (config with
/// history as max_msgs_per_subject, ttl as max_age; state with values as
/// messages and bytes), through `json_out` (free with `natsio_string_free`).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_status(
    kv: *const natsio_kv,
    json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        let out = out_arg(json_out, "json_out")?;
        write_string(out, &k.status()?.to_string())
    })
}

/// The keys that currently hold a value (deleted and purged keys are left
/// out), as a JSON array of strings through `json_out` (free with
/// `natsio_string_free`). Reads the bucket through a short-lived consumer.
/// Errors: the request errors of `natsio_kv_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_keys(
    kv: *const natsio_kv,
    json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        let out = out_arg(json_out, "json_out")?;
        write_string(out, &serde_json::Value::from(k.keys()?).to_string())
    })
}

/// Revisions returned by `natsio_kv_history`. Owned by the caller, freed
/// with `natsio_kv_entry_list_free` (which frees its entries).
pub struct natsio_kv_entry_list {
    entries: Vec<natsio_kv_entry>,
}

/// Every kept revision of `key`, oldest first, delete and purge markers
/// included (each entry's delta counts the newer revisions), through
/// `list_out`. Errors: NATSIO_ERR_KEY_NOT_FOUND, NATSIO_ERR_INVALID_KEY, and
/// the request errors of `natsio_kv_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_history(
    kv: *const natsio_kv,
    key: *const c_char,
    list_out: *mut *mut natsio_kv_entry_list,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        let key = str_arg(key, "key")?;
        let out = out_arg(list_out, "list_out")?;
        let entries = k.history(key)?.into_iter().map(entry_handle).collect();
        write_box(out, natsio_kv_entry_list { entries });
        Ok(())
    })
}

/// How many entries the list holds (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_list_count(list: *const natsio_kv_entry_list) -> usize {
    guard_value(0, || Ok(arg(list, "list")?.entries.len()))
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
            .entries
            .get(index)
            .map_or(std::ptr::null(), |e| e as *const natsio_kv_entry))
    })
}

/// Frees a list and its entries. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_list_free(list: *mut natsio_kv_entry_list) {
    guard_void(|| {
        if !list.is_null() {
            drop(Box::from_raw(list));
        }
    })
}

/// Frees a bucket handle (the bucket itself stays). Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_free(kv: *mut natsio_kv) {
    guard_void(|| {
        if !kv.is_null() {
            drop(Box::from_raw(kv));
        }
    })
}

fn entry<'a>(e: *const natsio_kv_entry) -> Result<&'a natsio_kv_entry> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(e, "entry") }
}

/// The entry's bucket name (borrowed; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_bucket(e: *const natsio_kv_entry) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(entry(e)?.bucket.as_ptr()))
}

/// The entry's key (borrowed; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_key(e: *const natsio_kv_entry) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(entry(e)?.key.as_ptr()))
}

/// The value (borrowed from the entry). A NUL byte follows it, so text
/// values can be used as C strings; values may contain NUL bytes, so use
/// `natsio_kv_entry_value_len` for the length.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_value(e: *const natsio_kv_entry) -> *const c_char {
    guard_value(std::ptr::null(), || {
        let v = &entry(e)?.entry.value;
        Ok(if v.is_empty() {
            c"".as_ptr()
        } else {
            v.as_ptr().cast()
        })
    })
}

/// The value's length in bytes (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_value_len(e: *const natsio_kv_entry) -> usize {
    guard_value(0, || Ok(entry(e)?.entry.value.len()))
}

/// The entry's revision (its stream sequence; 0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_revision(e: *const natsio_kv_entry) -> u64 {
    guard_value(0, || Ok(entry(e)?.entry.revision))
}

/// What the revision records (NATSIO_KV_PUT for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_operation(
    e: *const natsio_kv_entry,
) -> natsio_kv_operation {
    guard_value(natsio_kv_operation::NATSIO_KV_PUT, || {
        Ok(match entry(e)?.entry.operation {
            Operation::Put => natsio_kv_operation::NATSIO_KV_PUT,
            Operation::Delete => natsio_kv_operation::NATSIO_KV_DEL,
            Operation::Purge => natsio_kv_operation::NATSIO_KV_PURGE,
        })
    })
}

/// When the revision was stored, in nanoseconds since the Unix epoch.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_created_ns(e: *const natsio_kv_entry) -> i64 {
    guard_value(0, || Ok(entry(e)?.entry.created_ns))
}

/// How many newer revisions of the key exist (0 for a `get`).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_delta(e: *const natsio_kv_entry) -> u64 {
    guard_value(0, || Ok(entry(e)?.entry.delta))
}

/// Frees an entry. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_entry_free(e: *mut natsio_kv_entry) {
    guard_void(|| {
        if !e.is_null() {
            drop(Box::from_raw(e));
        }
    })
}

/// Options of `natsio_kv_watch`. Zero-initialise it (all false).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_kv_watch_options {
    /// Deliver every kept revision first, not only the latest per key.
    pub include_history: bool,
    /// Leave out delete and purge markers.
    pub ignore_deletes: bool,
    /// Entries without their values (revision, operation and key only).
    pub meta_only: bool,
    /// No initial values: only changes made after the watch starts.
    pub updates_only: bool,
}

/// A running watch of a bucket (`natsio_kv_watch`). Owned by the caller,
/// freed with `natsio_kv_watcher_free`. `_next` is for one thread at a time
/// (calls are serialised); `_stop` may come from any thread.
pub struct natsio_kv_watcher {
    watcher: std::sync::Mutex<crate::kv::Watcher>,
    stopper: crate::kv::WatchStopper,
}

/// Watches the keys matching `keys` (NULL: every key; else one pattern or
/// several separated by commas, e.g. "app.*,users.>": key tokens, `*` as a
/// whole token, `>` as the last one) through `watcher_out`. It delivers the
/// current value of each matching key (or its history, or nothing with
/// `updates_only`), then a marker (NATSIO_DONE from
/// `natsio_kv_watcher_next`), then every change as it happens. Runs an
/// ordered consumer that recovers by itself from gaps and lost consumers.
/// `opts` may be NULL. Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_INVALID_KEY (bad pattern), NATSIO_ERR_INVALID_UTF8, and the
/// request errors of `natsio_kv_put`.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_watch(
    kv: *const natsio_kv,
    keys: *const c_char,
    opts: *const natsio_kv_watch_options,
    watcher_out: *mut *mut natsio_kv_watcher,
) -> natsio_status {
    guard(|| {
        let k = self::kv(kv)?;
        let keys = super::opt_str_arg(keys, "keys")?;
        let out = out_arg(watcher_out, "watcher_out")?;
        let patterns: Vec<&str> = keys.map(|k| k.split(',').collect()).unwrap_or_default();
        let o = opts
            .as_ref()
            .map_or_else(crate::kv::WatchOptions::default, |o| {
                crate::kv::WatchOptions {
                    include_history: o.include_history,
                    ignore_deletes: o.ignore_deletes,
                    meta_only: o.meta_only,
                    updates_only: o.updates_only,
                }
            });
        let watcher = k.watch(&patterns, o)?;
        let stopper = watcher.stopper();
        write_box(
            out,
            natsio_kv_watcher {
                watcher: std::sync::Mutex::new(watcher),
                stopper,
            },
        );
        Ok(())
    })
}

/// The next event of a watch, waiting up to `timeout_ms` (negative:
/// forever). NATSIO_OK: `*entry_out` is an entry (free with
/// `natsio_kv_entry_free`; its operation says put, delete or purge, its
/// delta how many newer revisions the initial values had). NATSIO_DONE
/// (once; `*entry_out` is set to NULL): every initial value has been
/// delivered, changes follow. Errors: NATSIO_ERR_TIMEOUT (nothing changed
/// in time; the watch goes on), NATSIO_ERR_SUBSCRIPTION_CLOSED (stopped),
/// NATSIO_ERR_CONNECTION_CLOSED, NATSIO_ERR_ILLEGAL_STATE (on a library
/// runtime thread).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_watcher_next(
    watcher: *const natsio_kv_watcher,
    timeout_ms: i64,
    entry_out: *mut *mut natsio_kv_entry,
) -> natsio_status {
    let mut initial_done = false;
    let s = guard(|| {
        let w = arg(watcher, "watcher")?;
        let out = out_arg(entry_out, "entry_out")?;
        let event = crate::completion::lock(&w.watcher).next(super::ms_timeout(timeout_ms))?;
        match event {
            crate::kv::WatchEvent::Entry(e) => write_entry(out, e),
            crate::kv::WatchEvent::InitialDone => {
                *out = std::ptr::null_mut();
                initial_done = true;
            }
        }
        Ok(())
    });
    if initial_done {
        natsio_status::NATSIO_DONE
    } else {
        s
    }
}

/// Stops a watch: a `natsio_kv_watcher_next` blocked on another thread
/// returns NATSIO_ERR_SUBSCRIPTION_CLOSED, and so do later calls. Accepts
/// NULL; idempotent.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_watcher_stop(watcher: *const natsio_kv_watcher) {
    guard_void(|| {
        if let Some(w) = watcher.as_ref() {
            w.stopper.stop();
        }
    })
}

/// Stops (if needed) and frees a watch, asking the server to delete its
/// consumer. Accepts NULL. Must not race with a `natsio_kv_watcher_next` on
/// the same handle (stop first).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_watcher_free(watcher: *mut natsio_kv_watcher) {
    guard_void(|| {
        if !watcher.is_null() {
            let w = Box::from_raw(watcher);
            w.stopper.stop();
            drop(w);
        }
    })
}
