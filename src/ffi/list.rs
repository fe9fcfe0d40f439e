//! The one list encoding of the C ABI: a list result is an owned handle
//! with `_count`, `_get` (an element borrowed until the list is freed) and
//! `_free`. Lists of messages (fetch), of KV entries (history) and of
//! strings (names, keys, servers) all have that shape.

use std::ffi::{c_char, CString};

use super::kv::natsio_kv_entry;
use super::msg::natsio_msg;
use super::status::natsio_status;
use super::token::{natsio_token, token_value};
use super::{arg, guard_value, guard_void, write_box};
use crate::error::Result;

/// Messages returned by `natsio_js_fetch`. Owned by the caller, freed with
/// `natsio_msg_list_free` (which frees the messages it holds).
pub struct natsio_msg_list {
    pub(crate) items: Vec<natsio_msg>,
}

/// Revisions returned by `natsio_kv_history`. Owned by the caller, freed
/// with `natsio_kv_entry_list_free` (which frees its entries).
pub struct natsio_kv_entry_list {
    pub(crate) items: Vec<natsio_kv_entry>,
}

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

fn count<T>(items: Option<&Vec<T>>) -> usize {
    items.map_or(0, Vec::len)
}

/// How many messages the list holds (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_list_count(list: *const natsio_msg_list) -> usize {
    count(list.as_ref().map(|l| &l.items))
}

/// Message `index` of the list, borrowed until the list is freed (NULL if
/// out of range). Acknowledge it through this pointer; `natsio_msg_clone`
/// keeps it longer.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_list_get(
    list: *const natsio_msg_list,
    index: usize,
) -> *const natsio_msg {
    guard_value(std::ptr::null(), || {
        Ok(arg(list, "list")?
            .items
            .get(index)
            .map_or(std::ptr::null(), |m| m as *const natsio_msg))
    })
}

/// Frees a list and its messages. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_list_free(list: *mut natsio_msg_list) {
    guard_void(|| {
        if !list.is_null() {
            drop(Box::from_raw(list));
        }
    })
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
    guard_void(|| {
        if !list.is_null() {
            drop(Box::from_raw(list));
        }
    })
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
    guard_void(|| {
        if !list.is_null() {
            drop(Box::from_raw(list));
        }
    })
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

/// The messages a fetch produced, as a new list freed with
/// `natsio_msg_list_free`. Returns as `natsio_token_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_msg_list(
    token: *const natsio_token,
    list_out: *mut *mut natsio_msg_list,
) -> natsio_status {
    token_value(
        token,
        list_out,
        "list_out",
        |t, v: &Vec<crate::message::Message>| {
            let items = v
                .iter()
                .map(|m| natsio_msg::new(m.clone(), t.client.clone()))
                .collect();
            Ok(Box::into_raw(Box::new(natsio_msg_list { items })))
        },
    )
}

/// The entries a history produced, as a new list freed with
/// `natsio_kv_entry_list_free`. Returns as `natsio_token_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_kv_entry_list(
    token: *const natsio_token,
    list_out: *mut *mut natsio_kv_entry_list,
) -> natsio_status {
    token_value(
        token,
        list_out,
        "list_out",
        |_, v: &Vec<crate::kv::Entry>| {
            let items = v.iter().cloned().map(natsio_kv_entry::from_entry).collect();
            Ok(Box::into_raw(Box::new(natsio_kv_entry_list { items })))
        },
    )
}
