//! The one list encoding of the C ABI: a list result is an owned handle
//! with `_count`, `_get` (an element borrowed until the list is freed) and
//! `_free`. Lists of messages (`natsio_msg_list`, in msg.rs), of KV entries
//! (`natsio_kv_entry_list`, in kv.rs) and of strings (here: names, keys,
//! servers) all have that shape.

use std::ffi::{c_char, CString};

use super::status::natsio_status;
use super::token::{natsio_token, token_value};
use super::{arg, free_box, guard_value, out_arg, write_box};
use crate::error::Result;
use crate::op::Op;

/// Strings returned by name and key listings. Owned by the caller, freed
/// with `natsio_string_list_free`.
pub struct natsio_string_list {
    pub(crate) items: Vec<CString>,
}

impl natsio_string_list {
    pub(crate) fn new(strings: &[String]) -> Self {
        natsio_string_list {
            items: strings
                .iter()
                .map(|s| CString::new(s.as_str()).unwrap_or_default())
                .collect(),
        }
    }
}

/// Hands a list to C through `out`.
pub(crate) unsafe fn write_list<L>(out: *mut *mut L, list: L) -> Result<()> {
    let out = super::out_arg(out, "list_out")?;
    write_box(out, list);
    Ok(())
}

/// JSON values (infos of a listing) as one JSON text each.
pub(crate) fn json_texts(infos: Vec<serde_json::Value>) -> Vec<String> {
    infos.iter().map(serde_json::Value::to_string).collect()
}

/// Waits for `op` and writes the strings it yields to `list_out` as a new
/// list (a NULL `list_out` fails before the wait).
pub(crate) unsafe fn string_list_result(
    op: Op<Vec<String>>,
    list_out: *mut *mut natsio_string_list,
) -> Result<()> {
    out_arg(list_out, "list_out")?;
    write_list(list_out, natsio_string_list::new(&op.wait()?))
}

pub(crate) fn count<T>(items: Option<&Vec<T>>) -> usize {
    items.map_or(0, Vec::len)
}

/// How many strings the list holds (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_string_list_count(list: *const natsio_string_list) -> usize {
    count(list.as_ref().map(|l| &l.items))
}

/// String `index` of the list (NUL-terminated UTF-8), borrowed until the
/// list is freed (NULL if out of range).
#[no_mangle]
pub unsafe extern "C" fn natsio_string_list_get(
    list: *const natsio_string_list,
    index: usize,
) -> *const c_char {
    guard_value(std::ptr::null(), || {
        Ok(arg(list, "list")?
            .items
            .get(index)
            .map_or(std::ptr::null(), |s| s.as_ptr()))
    })
}

/// Frees a list and its strings. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_string_list_free(list: *mut natsio_string_list) {
    free_box(list)
}

/// The strings an operation produced (stream, consumer or key names), as a
/// new list freed with `natsio_string_list_free`. Returns as
/// `natsio_token_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_string_list(
    token: *const natsio_token,
    list_out: *mut *mut natsio_string_list,
) -> natsio_status {
    token_value(token, list_out, "list_out", |_, v: &Vec<String>| {
        Ok(Box::into_raw(Box::new(natsio_string_list::new(v))))
    })
}
