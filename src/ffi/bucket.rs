//! What the C calls of Key-Value (`kv.rs`) and Object Store (`object.rs`)
//! buckets share: create, bind, delete, the names and statuses listings,
//! their token readers and status lists. Each kind says what its core
//! calls and C handles are (`BucketKind`); the calls are written here once,
//! so a fix to one is a fix to both. Each `extern "C"` function stays in its
//! kind's module with its own documentation.

use std::ffi::c_char;

use super::js::{create_action, natsio_js};
use super::list::{count, natsio_string_list, string_list_result, write_list};
use super::status::natsio_status;
use super::token::{natsio_token, token_value};
use super::{arg, guard, guard_value, out_arg, start_op, str_arg, write_box};
use crate::error::Result;
use crate::jetstream::{CreateAction, JetStream};
use crate::op::Op;

/// One kind of bucket at the C ABI.
pub(crate) trait BucketKind {
    /// The core's bound bucket (`KeyValue`, `ObjectStore`).
    type Bucket: Clone + Send + Sync + 'static;
    /// The core's bucket status.
    type Status: Clone + Send + Sync + 'static;
    /// The C handle of a bound bucket.
    type Handle;
    /// The C handle of a status.
    type StatusHandle;
    /// The C list of statuses.
    type StatusList;
    /// The name of the bucket output argument (`kv_out`, `obj_out`).
    const OUT: &'static str;

    fn create(js: &JetStream, config_json: &str, action: CreateAction) -> Op<Self::Bucket>;
    fn bind(js: &JetStream, bucket: &str) -> Op<Self::Bucket>;
    fn delete(js: &JetStream, bucket: &str) -> Op<()>;
    fn names(js: &JetStream) -> Op<Vec<String>>;
    fn statuses(js: &JetStream) -> Op<Vec<Self::Status>>;

    fn handle(bucket: Self::Bucket) -> Self::Handle;
    fn status_handle(status: Self::Status) -> Self::StatusHandle;
    fn status_list(items: Vec<Self::StatusHandle>) -> Self::StatusList;
    fn status_items(list: &Self::StatusList) -> &Vec<Self::StatusHandle>;
}

fn js<'a>(p: *const natsio_js) -> Result<&'a natsio_js> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "js") }
}

unsafe fn create_op<K: BucketKind>(
    h: &natsio_js,
    config_json: *const c_char,
    action: i32,
) -> Result<Op<K::Bucket>> {
    let action = create_action(action)?;
    Ok(K::create(
        &h.js,
        str_arg(config_json, "config_json")?,
        action,
    ))
}

/// Runs a bucket-producing operation into `out`.
unsafe fn bucket_result<K: BucketKind>(op: Op<K::Bucket>, out: *mut *mut K::Handle) -> Result<()> {
    let out = out_arg(out, K::OUT)?;
    write_box(out, K::handle(op.wait()?));
    Ok(())
}

pub(crate) unsafe fn create<K: BucketKind>(
    js: *const natsio_js,
    config_json: *const c_char,
    action: i32,
    out: *mut *mut K::Handle,
) -> natsio_status {
    guard(|| bucket_result::<K>(create_op::<K>(self::js(js)?, config_json, action)?, out))
}

pub(crate) unsafe fn create_async<K: BucketKind>(
    js: *const natsio_js,
    config_json: *const c_char,
    action: i32,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        let op = create_op::<K>(h, config_json, action)?;
        start_op(op, h.client_handle(), token_out)
    })
}

pub(crate) unsafe fn bind<K: BucketKind>(
    js: *const natsio_js,
    bucket: *const c_char,
    out: *mut *mut K::Handle,
) -> natsio_status {
    guard(|| bucket_result::<K>(K::bind(&self::js(js)?.js, str_arg(bucket, "bucket")?), out))
}

pub(crate) unsafe fn bind_async<K: BucketKind>(
    js: *const natsio_js,
    bucket: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        let op = K::bind(&h.js, str_arg(bucket, "bucket")?);
        start_op(op, h.client_handle(), token_out)
    })
}

/// Reads the bucket a create or bind token produced.
pub(crate) unsafe fn token_bucket<K: BucketKind>(
    token: *const natsio_token,
    out: *mut *mut K::Handle,
) -> natsio_status {
    token_value(token, out, K::OUT, |_, b: &K::Bucket| {
        Ok(Box::into_raw(Box::new(K::handle(b.clone()))))
    })
}

pub(crate) unsafe fn delete<K: BucketKind>(
    js: *const natsio_js,
    bucket: *const c_char,
) -> natsio_status {
    guard(|| K::delete(&self::js(js)?.js, str_arg(bucket, "bucket")?).wait())
}

pub(crate) unsafe fn delete_async<K: BucketKind>(
    js: *const natsio_js,
    bucket: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        let op = K::delete(&h.js, str_arg(bucket, "bucket")?);
        start_op(op, h.client_handle(), token_out)
    })
}

pub(crate) unsafe fn names<K: BucketKind>(
    js: *const natsio_js,
    list_out: *mut *mut natsio_string_list,
) -> natsio_status {
    guard(|| string_list_result(K::names(&self::js(js)?.js), list_out))
}

pub(crate) unsafe fn names_async<K: BucketKind>(
    js: *const natsio_js,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        start_op(K::names(&h.js), h.client_handle(), token_out)
    })
}

fn status_list<K: BucketKind>(statuses: impl IntoIterator<Item = K::Status>) -> K::StatusList {
    K::status_list(statuses.into_iter().map(K::status_handle).collect())
}

pub(crate) unsafe fn statuses<K: BucketKind>(
    js: *const natsio_js,
    list_out: *mut *mut K::StatusList,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        out_arg(list_out, "list_out")?;
        write_list(list_out, status_list::<K>(K::statuses(&h.js).wait()?))
    })
}

pub(crate) unsafe fn statuses_async<K: BucketKind>(
    js: *const natsio_js,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        start_op(K::statuses(&h.js), h.client_handle(), token_out)
    })
}

/// Reads the statuses a statuses token produced, as a new list.
pub(crate) unsafe fn token_status_list<K: BucketKind>(
    token: *const natsio_token,
    list_out: *mut *mut K::StatusList,
) -> natsio_status {
    token_value(token, list_out, "list_out", |_, v: &Vec<K::Status>| {
        Ok(Box::into_raw(Box::new(status_list::<K>(v.iter().cloned()))))
    })
}

/// Reads the status a status token produced, as a new status.
pub(crate) unsafe fn token_status<K: BucketKind>(
    token: *const natsio_token,
    status_out: *mut *mut K::StatusHandle,
) -> natsio_status {
    token_value(token, status_out, "status_out", |_, s: &K::Status| {
        Ok(Box::into_raw(Box::new(K::status_handle(s.clone()))))
    })
}

pub(crate) unsafe fn status_list_count<K: BucketKind>(list: *const K::StatusList) -> usize {
    count(list.as_ref().map(|l| K::status_items(l)))
}

pub(crate) unsafe fn status_list_get<K: BucketKind>(
    list: *const K::StatusList,
    index: usize,
) -> *const K::StatusHandle {
    guard_value(std::ptr::null(), || {
        Ok(K::status_items(arg(list, "list")?)
            .get(index)
            .map_or(std::ptr::null(), |s| s as *const K::StatusHandle))
    })
}
