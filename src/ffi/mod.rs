//! The C ABI. One module per C handle type; every export runs behind a
//! panic boundary and checks its pointers before use.

#![allow(non_camel_case_types)]
#![allow(clippy::missing_safety_doc)]

pub mod client;
pub mod consumer;
pub mod headers;
pub mod js;
pub mod kv;
pub mod msg;
pub mod options;
pub mod replies;
pub mod status;
pub mod stream;
pub mod sub;
pub mod token;

use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use crate::error::{Error, ErrorKind, Result};
use status::natsio_status;

/// Called with the user data when the library no longer needs it.
pub type natsio_release_cb = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// User data handed back to a C callback. The caller promised it may be
/// used from the library's threads.
#[derive(Clone, Copy)]
pub(crate) struct UserData(pub *mut c_void);
unsafe impl Send for UserData {}
unsafe impl Sync for UserData {}

/// Owns user data and calls its release function exactly once on drop.
pub(crate) struct Released {
    pub data: UserData,
    release: natsio_release_cb,
}

impl Released {
    /// The user data pointer. (A method, so closures capture the whole
    /// `Released`, not just the raw pointer field.)
    pub fn ptr(&self) -> *mut c_void {
        self.data.0
    }

    /// Gives the user data back to the caller: release will not be called.
    pub fn disarm(mut self) {
        self.release = None;
    }

    pub fn new(data: *mut c_void, release: natsio_release_cb) -> Self {
        Released {
            data: UserData(data),
            release,
        }
    }
}

impl Drop for Released {
    fn drop(&mut self) {
        if let Some(f) = self.release.take() {
            // SAFETY: the application registered `f` for this data.
            unsafe { f(self.data.0) };
        }
    }
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    let msg = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    format!("internal error (panic): {msg}")
}

/// The panic boundary for status-returning exports.
pub(crate) fn guard(f: impl FnOnce() -> Result<()>) -> natsio_status {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => natsio_status::NATSIO_OK,
        Ok(Err(e)) => status::record(&e),
        Err(p) => status::record(&Error::new(ErrorKind::Internal, panic_text(&*p))),
    }
}

/// The panic boundary for exports returning a value; `fallback` on failure.
pub(crate) fn guard_value<T>(fallback: T, f: impl FnOnce() -> Result<T>) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            status::record(&e);
            fallback
        }
        Err(p) => {
            status::record(&Error::new(ErrorKind::Internal, panic_text(&*p)));
            fallback
        }
    }
}

/// Runs a void export behind the panic boundary.
pub(crate) fn guard_void(f: impl FnOnce()) {
    if let Err(p) = catch_unwind(AssertUnwindSafe(f)) {
        status::record(&Error::new(ErrorKind::Internal, panic_text(&*p)));
    }
}

pub(crate) fn null(what: &str) -> Error {
    Error::new(ErrorKind::NullArgument, format!("{what} is NULL"))
}

/// Borrows a handle, failing on NULL.
pub(crate) unsafe fn arg<'a, T>(p: *const T, what: &str) -> Result<&'a T> {
    p.as_ref().ok_or_else(|| null(what))
}

/// Borrows a handle mutably, failing on NULL.
pub(crate) unsafe fn arg_mut<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T> {
    p.as_mut().ok_or_else(|| null(what))
}

/// A required C string argument as UTF-8.
pub(crate) unsafe fn str_arg<'a>(p: *const c_char, what: &str) -> Result<&'a str> {
    if p.is_null() {
        return Err(null(what));
    }
    let bytes = CStr::from_ptr(p).to_bytes();
    if bytes.is_ascii() {
        // SAFETY: ASCII is UTF-8. (Subjects are ASCII; checked first as the
        // cheaper test, on every publish.)
        return Ok(std::str::from_utf8_unchecked(bytes));
    }
    std::str::from_utf8(bytes)
        .map_err(|_| Error::new(ErrorKind::InvalidUtf8, format!("{what} is not valid UTF-8")))
}

/// An optional C string argument (NULL means absent).
pub(crate) unsafe fn opt_str_arg<'a>(p: *const c_char, what: &str) -> Result<Option<&'a str>> {
    if p.is_null() {
        Ok(None)
    } else {
        str_arg(p, what).map(Some)
    }
}

/// A byte buffer argument; NULL is allowed only with length 0.
pub(crate) unsafe fn bytes_arg<'a>(p: *const c_void, len: usize, what: &str) -> Result<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(null(what));
    }
    if len > isize::MAX as usize {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            format!("{what} length is too large"),
        ));
    }
    Ok(std::slice::from_raw_parts(p.cast::<u8>(), len))
}

/// Checks an output pointer up front, so nothing is done when it is NULL.
pub(crate) fn out_arg<T>(p: *mut T, what: &str) -> Result<*mut T> {
    if p.is_null() {
        Err(null(what))
    } else {
        Ok(p)
    }
}

/// Hands ownership of `value` to C through `out`.
pub(crate) unsafe fn write_box<T>(out: *mut *mut T, value: T) {
    *out = Box::into_raw(Box::new(value));
}

/// A millisecond timeout where negative means "none" (wait forever, or the
/// default, as the function documents).
pub(crate) fn ms_timeout(ms: i64) -> Option<Duration> {
    (ms >= 0).then(|| Duration::from_millis(ms as u64))
}

/// A string the caller frees with `natsio_string_free`.
pub(crate) unsafe fn write_string(out: *mut *mut c_char, s: &str) -> Result<()> {
    let c = CString::new(s).map_err(|_| Error::new(ErrorKind::Internal, "string contains NUL"))?;
    *out = c.into_raw();
    Ok(())
}

/// The library version, e.g. "0.1.0". Static string.
#[no_mangle]
pub extern "C" fn natsio_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// Frees a string the library returned through a `char **` output.
/// Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_string_free(s: *mut c_char) {
    guard_void(|| {
        if !s.is_null() {
            drop(CString::from_raw(s));
        }
    })
}

/// Sets the number of worker threads of the library's internal runtime.
/// Only effective before the first connection; afterwards it fails with
/// NATSIO_ERR_ILLEGAL_STATE. `n` must be 1..=256 (NATSIO_ERR_INVALID_ARGUMENT).
/// Default: the number of CPUs, at most 4. Thread-safe.
#[no_mangle]
pub extern "C" fn natsio_runtime_set_worker_threads(n: u32) -> natsio_status {
    guard(|| crate::runtime::set_worker_threads(n as usize))
}

/// Optional headers argument (NULL means none).
pub(crate) unsafe fn opt_arg_headers<'a>(
    h: *const crate::headers::Headers,
) -> Option<&'a crate::headers::Headers> {
    h.as_ref()
}
