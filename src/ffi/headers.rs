//! `natsio_headers`: a multi-value, case-preserving header map.

use std::ffi::c_char;

use super::status::natsio_status;
use super::{arg, arg_mut, free_box, guard, guard_value, out_arg, str_arg, write_box};
use crate::error::{Error, ErrorKind};
use crate::headers::Headers;

// `Headers` is exported to C as the opaque `natsio_headers` (renamed in
// cbindgen.toml): names are printable ASCII without ':', values have no CR,
// LF or NUL, lookup is exact and case-sensitive. A message's headers are
// read-only and may be read from any thread; an owned map is not
// thread-safe for writing.

/// Creates an empty header map, freed with `natsio_headers_free`.
#[no_mangle]
pub unsafe extern "C" fn natsio_headers_new(out: *mut *mut Headers) -> natsio_status {
    guard(|| {
        let out = out_arg(out, "out")?;
        write_box(out, Headers::new());
        Ok(())
    })
}

/// Copies `headers` (e.g. a received message's) into a new, owned map.
#[no_mangle]
pub unsafe extern "C" fn natsio_headers_clone(
    headers: *const Headers,
    out: *mut *mut Headers,
) -> natsio_status {
    guard(|| {
        let h = arg(headers, "headers")?;
        let out = out_arg(out, "out")?;
        write_box(out, h.clone());
        Ok(())
    })
}

/// Frees a header map created by `natsio_headers_new`/`_clone`. Accepts NULL.
/// Never pass a message's borrowed headers here.
#[no_mangle]
pub unsafe extern "C" fn natsio_headers_free(headers: *mut Headers) {
    free_box(headers)
}

/// Appends a value to `name` (multi-value). Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_INVALID_UTF8, NATSIO_ERR_BAD_HEADERS (unsafe name or value;
/// nothing is added).
#[no_mangle]
pub unsafe extern "C" fn natsio_headers_add(
    headers: *mut Headers,
    name: *const c_char,
    value: *const c_char,
) -> natsio_status {
    guard(|| {
        let h = arg_mut(headers, "headers")?;
        h.add(str_arg(name, "name")?, str_arg(value, "value")?)
    })
}

/// Replaces every value of `name` with `value`. Errors: as `natsio_headers_add`.
#[no_mangle]
pub unsafe extern "C" fn natsio_headers_set(
    headers: *mut Headers,
    name: *const c_char,
    value: *const c_char,
) -> natsio_status {
    guard(|| {
        let h = arg_mut(headers, "headers")?;
        h.set(str_arg(name, "name")?, str_arg(value, "value")?)
    })
}

/// Removes every value of `name`. Errors: NATSIO_ERR_NOT_FOUND when absent.
#[no_mangle]
pub unsafe extern "C" fn natsio_headers_delete(
    headers: *mut Headers,
    name: *const c_char,
) -> natsio_status {
    guard(|| {
        let h = arg_mut(headers, "headers")?;
        let name = str_arg(name, "name")?;
        if h.remove(name) == 0 {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!("no header {name:?}"),
            ));
        }
        Ok(())
    })
}

/// The `index`-th value (0 = first) of `name`, borrowed from the map until it
/// is changed or freed. Errors: NATSIO_ERR_NOT_FOUND.
#[no_mangle]
pub unsafe extern "C" fn natsio_headers_get_nth(
    headers: *const Headers,
    name: *const c_char,
    index: usize,
    value_out: *mut *const c_char,
) -> natsio_status {
    guard(|| {
        let h = arg(headers, "headers")?;
        let name = str_arg(name, "name")?;
        let out = out_arg(value_out, "value_out")?;
        let v = h.get_nth_cstr(name, index).ok_or_else(|| {
            Error::new(
                ErrorKind::NotFound,
                format!("no value {index} of header {name:?}"),
            )
        })?;
        *out = v.as_ptr();
        Ok(())
    })
}

/// The first value of `name`; see `natsio_headers_get_nth`.
#[no_mangle]
pub unsafe extern "C" fn natsio_headers_get(
    headers: *const Headers,
    name: *const c_char,
    value_out: *mut *const c_char,
) -> natsio_status {
    natsio_headers_get_nth(headers, name, 0, value_out)
}

/// How many values `name` has (0 when absent or on a NULL argument).
#[no_mangle]
pub unsafe extern "C" fn natsio_headers_count(
    headers: *const Headers,
    name: *const c_char,
) -> usize {
    guard_value(0, || {
        let h = arg(headers, "headers")?;
        Ok(h.get_all(str_arg(name, "name")?).count())
    })
}

/// The description beside the inline status on the header block's first
/// line (e.g. "Request Timeout" in "NATS/1.0 408 Request Timeout"),
/// borrowed like `natsio_headers_get`; NULL when there is none or
/// `headers` is NULL. The code is `natsio_msg_status`.
#[no_mangle]
pub unsafe extern "C" fn natsio_headers_status_description(
    headers: *const Headers,
) -> *const c_char {
    guard_value(std::ptr::null(), || {
        Ok(arg(headers, "headers")?
            .description_cstr()
            .map_or(std::ptr::null(), |d| d.as_ptr()))
    })
}

/// Whether the received header block was corrupt: a first line that is not
/// `NATS/1.0 [code [description]]`, or a line without a colon or with an
/// invalid name or value. Such lines are skipped and the message is still
/// delivered (as the reference client delivers it with `headers_error`
/// set). False for a block that parsed cleanly, one built locally, or NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_headers_malformed(headers: *const Headers) -> bool {
    guard_value(false, || Ok(arg(headers, "headers")?.is_malformed()))
}

/// Number of name/value pairs (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_headers_len(headers: *const Headers) -> usize {
    guard_value(0, || Ok(arg(headers, "headers")?.len()))
}

/// The pair at `index` in wire order, borrowed like `natsio_headers_get`.
/// Errors: NATSIO_ERR_NOT_FOUND when `index` is out of range.
#[no_mangle]
pub unsafe extern "C" fn natsio_headers_entry(
    headers: *const Headers,
    index: usize,
    name_out: *mut *const c_char,
    value_out: *mut *const c_char,
) -> natsio_status {
    guard(|| {
        let h = arg(headers, "headers")?;
        let name_out = out_arg(name_out, "name_out")?;
        let value_out = out_arg(value_out, "value_out")?;
        let (n, v) = h
            .entry_cstr(index)
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("no header entry {index}")))?;
        *name_out = n.as_ptr();
        *value_out = v.as_ptr();
        Ok(())
    })
}
