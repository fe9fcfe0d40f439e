//! The C ABI. One module per C handle type; every export runs behind a
//! panic boundary and checks its pointers before use.

#![allow(non_camel_case_types)]
#![allow(clippy::missing_safety_doc)]

mod bucket;
pub mod client;
pub mod completion_queue;
pub mod consumer;
pub mod headers;
mod iter;
pub mod js;
pub mod kv;
pub mod kv_codec;
pub mod list;
pub mod msg;
pub mod object;
pub mod options;
pub mod ordered;
pub mod push;
pub mod replies;
pub mod server_pool;
pub mod service;
pub mod status;
pub mod stored_msgs;
pub mod stream;
pub mod sub;
pub mod token;

use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use crate::client_handle::ClientHandle;
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
    utf8_arg(CStr::from_ptr(p).to_bytes(), what)
}

/// A string argument given by pointer and length, for bindings whose
/// strings carry their length (no copy to NUL-terminate, no strlen). NULL
/// is accepted for the empty string only. A NUL byte is refused
/// (InvalidArgument), as the same string could not be passed as a C string.
pub(crate) unsafe fn str_arg_n<'a>(p: *const c_char, len: usize, what: &str) -> Result<&'a str> {
    if len == 0 {
        return Ok("");
    }
    if p.is_null() {
        return Err(null(what));
    }
    let bytes = std::slice::from_raw_parts(p.cast::<u8>(), len);
    if bytes.contains(&0) {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            format!("{what} contains a NUL byte"),
        ));
    }
    utf8_arg(bytes, what)
}

/// `bytes` as UTF-8, or InvalidUtf8 naming `what`.
fn utf8_arg<'a>(bytes: &'a [u8], what: &str) -> Result<&'a str> {
    if bytes.is_ascii() {
        // SAFETY: ASCII is UTF-8. (Subjects are ASCII; checked first as the
        // cheaper test, on every publish.)
        return Ok(unsafe { std::str::from_utf8_unchecked(bytes) });
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

/// Frees a handle handed to C by `write_box`: NULL is accepted, and its
/// drop (which may stop, close or wait) runs behind the panic boundary.
/// Every plain `_free` export is this.
pub(crate) unsafe fn free_box<T>(handle: *mut T) {
    guard_void(|| {
        if !handle.is_null() {
            drop(Box::from_raw(handle));
        }
    })
}

/// The most items a list argument (`const char *const *items, size_t
/// count`) may have: a larger count is taken for a mistake (an
/// uninitialised count) and refused with NATSIO_ERR_INVALID_ARGUMENT before
/// any item is read.
pub const NATSIO_LIST_MAX_ITEMS: usize = 65536;

/// A list argument, `const char *const *items` and `count` (the header's
/// list encoding): each item a string argument named `item` in errors.
/// `items` may be NULL only when `count` is 0; a count above
/// NATSIO_LIST_MAX_ITEMS is NATSIO_ERR_INVALID_ARGUMENT naming `what`.
pub(crate) unsafe fn strings_arg<'a>(
    items: *const *const c_char,
    count: usize,
    what: &str,
    item: &str,
) -> Result<Vec<&'a str>> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if count > NATSIO_LIST_MAX_ITEMS {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            format!(
                "{what}: {count} items, more than NATSIO_LIST_MAX_ITEMS ({NATSIO_LIST_MAX_ITEMS})"
            ),
        ));
    }
    std::slice::from_raw_parts(arg(items, what)?, count)
        .iter()
        .map(|&p| str_arg(p, item))
        .collect()
}

/// `timeout_ms` value: do not wait; only what is ready now. Accepted where
/// not waiting makes sense (an iterator's `_next`, `natsio_token_wait`);
/// elsewhere it is NATSIO_ERR_INVALID_ARGUMENT.
pub const NATSIO_NO_WAIT: i64 = 0;
/// `timeout_ms` value: the default of the handle the call is made on (the
/// client's request, flush or drain timeout, the JetStream context's
/// timeout, ...; each function names it). Where a handle has no default
/// (an iterator's `_next`, a token), it waits as long as it takes.
pub const NATSIO_TIMEOUT_DEFAULT: i64 = -1;
/// `timeout_ms` value: wait as long as it takes.
pub const NATSIO_WAIT_FOREVER: i64 = -2;

/// What "forever" is for operations that need a deadline (a request): long
/// enough never to matter, short enough not to overflow an `Instant`.
pub(crate) const FOREVER: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

/// Reads a `timeout_ms` argument by the header's one rule: a positive
/// value in milliseconds, NATSIO_NO_WAIT (when `no_wait_ok`),
/// NATSIO_TIMEOUT_DEFAULT (`default`; `None` is "as long as it takes") or
/// NATSIO_WAIT_FOREVER (`None`).
pub(crate) fn timeout_arg(
    ms: i64,
    default: Option<Duration>,
    no_wait_ok: bool,
) -> Result<Option<Duration>> {
    match ms {
        ms if ms > 0 => Ok(Some(Duration::from_millis(ms as u64))),
        NATSIO_NO_WAIT if no_wait_ok => Ok(Some(Duration::ZERO)),
        NATSIO_TIMEOUT_DEFAULT => Ok(default),
        NATSIO_WAIT_FOREVER => Ok(None),
        NATSIO_NO_WAIT => Err(Error::new(
            ErrorKind::InvalidArgument,
            "timeout_ms: NATSIO_NO_WAIT is not allowed here",
        )),
        ms => Err(Error::new(
            ErrorKind::InvalidArgument,
            format!("timeout_ms {ms}: use a positive value, NATSIO_NO_WAIT, NATSIO_TIMEOUT_DEFAULT or NATSIO_WAIT_FOREVER"),
        )),
    }
}

/// A `timeout_ms` for an operation that needs a bound (forever is
/// `FOREVER`); NATSIO_NO_WAIT is not allowed.
pub(crate) fn bounded_timeout(ms: i64, default: Duration) -> Result<Duration> {
    Ok(timeout_arg(ms, Some(default), false)?.unwrap_or(FOREVER))
}

/// A C options struct that can grow: its first field is a version, set
/// by its `_init` function.
pub(crate) trait Versioned: Copy {
    /// The version this library knows (the struct's current layout).
    const VERSION: u32;
    const NAME: &'static str;
    fn set_version(&mut self);
    /// How many leading bytes a struct of `version` has (`None`: a version
    /// this library does not know). Older versions are prefixes of the
    /// current layout: fields are only ever added at the end.
    fn size_of_version(version: u32) -> Option<usize> {
        (version == Self::VERSION).then_some(std::mem::size_of::<Self>())
    }
    /// The defaults: every field zero (NULL, false), unless the struct
    /// says otherwise.
    fn zeroed() -> Self {
        // SAFETY: option structs hold only integers, bools and pointers,
        // for which all-zero bytes are valid values.
        unsafe { std::mem::zeroed() }
    }
}

/// Reads an options struct: NULL means every default; an unknown version
/// (an uninitialised struct, or a newer header than this library) is
/// NATSIO_ERR_INVALID_ARGUMENT.
pub(crate) unsafe fn options_arg<T: Versioned>(p: *const T) -> Result<T> {
    if p.is_null() {
        return Ok(T::zeroed());
    }
    // The version is the first field (a u32): read it alone, since a
    // struct of an older version is shorter than T.
    let version = p.cast::<u32>().read_unaligned();
    let Some(size) = T::size_of_version(version) else {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            format!(
                "{}: version {} is not {} or an older one this library knows (initialise it with its _init function)",
                T::NAME,
                version,
                T::VERSION
            ),
        ));
    };
    // Fields an older version lacks keep their defaults (zero).
    let mut o = T::zeroed();
    std::ptr::copy_nonoverlapping(
        p.cast::<u8>(),
        (&mut o as *mut T).cast::<u8>(),
        size.min(std::mem::size_of::<T>()),
    );
    Ok(o)
}

/// Implements `Versioned` for an options struct whose first field is
/// `version`, current at `$version`.
macro_rules! versioned {
    ($t:ident, $version:expr) => {
        impl $crate::ffi::Versioned for $t {
            const VERSION: u32 = $version;
            const NAME: &'static str = stringify!($t);
            fn set_version(&mut self) {
                self.version = $version;
            }
        }
    };
    // A struct that grew: each older version still accepted, with the
    // field its layout ended before (its size is that field's offset).
    ($t:ident, $version:expr, older: [$($old:literal => $first_new_field:ident),+ $(,)?]) => {
        impl $crate::ffi::Versioned for $t {
            const VERSION: u32 = $version;
            const NAME: &'static str = stringify!($t);
            fn set_version(&mut self) {
                self.version = $version;
            }
            fn size_of_version(version: u32) -> Option<usize> {
                match version {
                    v if v == $version => Some(std::mem::size_of::<$t>()),
                    $($old => Some(std::mem::offset_of!($t, $first_new_field)),)+
                    _ => None,
                }
            }
        }
    };
}
pub(crate) use versioned;

/// Text for C: NUL bytes (never in valid names) become spaces.
pub(crate) fn cstring(s: &str) -> std::ffi::CString {
    std::ffi::CString::new(s)
        .unwrap_or_else(|_| std::ffi::CString::new(s.replace('\0', " ")).unwrap_or_default())
}

/// Fills an options struct with its defaults and version.
pub(crate) unsafe fn options_init<T: Versioned>(p: *mut T) -> Result<()> {
    let out = out_arg(p, "opts")?;
    let mut o = T::zeroed();
    o.set_version();
    *out = o;
    Ok(())
}

/// Starts `op` and hands its token to C through `out`.
pub(crate) unsafe fn start_op<T: std::any::Any + Send + Sync>(
    op: crate::op::Op<T>,
    client: ClientHandle,
    out: *mut *mut token::natsio_token,
) -> Result<()> {
    let out = out_arg(out, "token_out")?;
    op.check()?;
    let c = op.start()?;
    write_box(out, token::natsio_token::new(c, client));
    Ok(())
}

/// A result that is handed out once (a handle moved to C).
pub(crate) struct TakeOnce<T>(std::sync::Mutex<Option<T>>);

impl<T> TakeOnce<T> {
    pub(crate) fn new(v: T) -> Self {
        TakeOnce(std::sync::Mutex::new(Some(v)))
    }

    pub(crate) fn take(&self) -> Result<T> {
        crate::completion::lock(&self.0).take().ok_or_else(|| {
            Error::new(
                ErrorKind::IllegalState,
                "this token's result was already taken",
            )
        })
    }
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

/// Whether this library serves a program built against the header of
/// version `major.minor.patch` (pass NATSIO_VERSION_MAJOR, _MINOR and
/// _PATCH, or use NATSIO_VERSION_IS_COMPATIBLE()): the same major version
/// and at least that minor.patch; while the major version is 0, the same
/// minor and at least that patch. A program that checks this at start
/// fails clearly instead of at its first call into a function the library
/// it loaded does not have. Any thread; never fails.
#[no_mangle]
pub extern "C" fn natsio_version_compatible(major: u32, minor: u32, patch: u32) -> bool {
    version_serves(library_version(), (major, minor, patch))
}

fn library_version() -> (u32, u32, u32) {
    let part = |s: &str| s.parse::<u32>().unwrap_or(0);
    (
        part(env!("CARGO_PKG_VERSION_MAJOR")),
        part(env!("CARGO_PKG_VERSION_MINOR")),
        part(env!("CARGO_PKG_VERSION_PATCH")),
    )
}

/// Semantic versioning as cargo reads it: a library serves programs built
/// against an older or equal version of its own compatible range.
fn version_serves(library: (u32, u32, u32), wanted: (u32, u32, u32)) -> bool {
    let (lmaj, lmin, lpat) = library;
    let (wmaj, wmin, wpat) = wanted;
    if lmaj != wmaj {
        return false;
    }
    if lmaj == 0 {
        lmin == wmin && lpat >= wpat
    } else {
        (lmin, lpat) >= (wmin, wpat)
    }
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
/// Default: one less than the number of CPUs, 1 to 4 (the calling threads
/// keep a core). Thread-safe.
#[no_mangle]
pub extern "C" fn natsio_runtime_set_worker_threads(n: u32) -> natsio_status {
    guard(|| crate::runtime::set_worker_threads(n as usize))
}

/// Sets how long a thread blocked in the library for an answer (a
/// request's reply, a JetStream or KV call, natsio_token_wait, a
/// subscription's or iterator's blocking _next) first
/// spins, checking for it, before it sleeps; 0 turns spinning off.
/// An answer that comes within the spin is seen with no thread wake-up,
/// which on a virtual machine can cost as much as the round trip itself;
/// the price is CPU time while spinning. At most half the CPUs spin at
/// once (none on a single-CPU machine); other waiters sleep at once.
/// Default: 200 microseconds, skipped while other programs keep the CPUs
/// busy (everything but this process used the CPUs the spinners leave
/// since the last reading, read from /proc/stat at most every 250 ms;
/// else the load average at the CPU count): a spinning
/// thread keeps its CPU looking busy, so the thread bringing the answer
/// waits behind the other work for a scheduler tick. A value set
/// here applies as set, whatever the load. Takes effect for waits that
/// start after it; any thread, at any time; never fails.
#[no_mangle]
pub extern "C" fn natsio_runtime_set_wait_spin_us(us: u32) {
    guard_void(|| crate::spin::set_limit_us(us))
}

/// The wait spin set by `natsio_runtime_set_wait_spin_us` (default 200), in
/// microseconds, or 0 on a single-CPU machine (where no thread spins): for
/// a binding that waits on its own event loop and spins there by the same
/// bound (while the default is skipped on contended CPUs, see there, it
/// reads the same and `natsio_runtime_spin_until_set` declines each step).
/// Any thread; never fails.
///
/// Binding support (natsio_sys.h).
#[no_mangle]
pub extern "C" fn natsio_runtime_wait_spin_us() -> u32 {
    guard_value(0, || Ok(crate::spin::limit_us()))
}

/// Whether the library's blocked waits skip their spin now because other
/// programs keep the CPUs busy (the default wait spin only: never once the
/// application set one with `natsio_runtime_set_wait_spin_us`; see there
/// for how the load is read). For a binding that can wait either in the
/// library (woken directly by the thread that completes the wait, after a
/// spin) or in a wait of its own: without the spin, a thread blocked in
/// the library gains little, and Go's scheduler takes the processor of a
/// goroutine blocked in C after 20 us and wakes another thread for it.
/// Any thread; never fails.
///
/// Binding support (natsio_sys.h).
#[no_mangle]
pub extern "C" fn natsio_runtime_wait_spin_skipped() -> bool {
    guard_value(false, || Ok(crate::spin::default_skipped()))
}

/// What `natsio_runtime_spin_until_set` came to.
///
/// Binding support (natsio_sys.h).
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum natsio_spin_result {
    /// The flag was set (perhaps before the call).
    NATSIO_SPIN_SET = 0,
    /// `max_us` or the wait spin passed first.
    NATSIO_SPIN_TIMED_OUT = 1,
    /// It did not spin: spinning is off (`natsio_runtime_set_wait_spin_us`
    /// 0, or a single CPU), the default spin is skipped (contended CPUs),
    /// every spinning slot is taken, or `flag` is NULL. Sleep rather than
    /// call again at once.
    NATSIO_SPIN_DECLINED = 2,
}

/// For a binding that waits on its own event loop: spins the calling
/// thread until `*flag` is true (read with acquire ordering; set it with a
/// release or stronger atomic store, e.g. `__atomic_store_n(flag, true,
/// __ATOMIC_RELEASE)`), for at most `max_us` microseconds and never longer
/// than the wait spin (`natsio_runtime_wait_spin_us`). It takes one of the
/// spinning slots the library's own blocked waiters use, so that a process
/// never spins on more than half its CPUs, and it yields the CPU now and
/// then, so that the thread that will set the flag is not held up. Call it
/// in short steps (tens of microseconds) from a loop that serves its other
/// work between them. `flag` is borrowed for the call. Any thread; never
/// fails.
///
/// # Safety
/// `flag` is NULL or points to a `bool` that stays valid for the call and
/// is written only with atomic stores while it runs.
///
/// Binding support (natsio_sys.h).
#[no_mangle]
pub unsafe extern "C" fn natsio_runtime_spin_until_set(
    flag: *const bool,
    max_us: u32,
) -> natsio_spin_result {
    guard_value(natsio_spin_result::NATSIO_SPIN_DECLINED, || {
        if flag.is_null() {
            return Ok(natsio_spin_result::NATSIO_SPIN_DECLINED);
        }
        // SAFETY: AtomicBool has bool's layout; the caller writes the flag
        // only atomically while this runs, and keeps it valid.
        let flag = std::sync::atomic::AtomicBool::from_ptr(flag.cast_mut());
        Ok(match crate::spin::spin_until_set(flag, max_us) {
            crate::spin::Spun::Ready => natsio_spin_result::NATSIO_SPIN_SET,
            crate::spin::Spun::TimedOut => natsio_spin_result::NATSIO_SPIN_TIMED_OUT,
            crate::spin::Spun::Declined => natsio_spin_result::NATSIO_SPIN_DECLINED,
        })
    })
}

/// Optional headers argument (NULL means none).
pub(crate) unsafe fn opt_arg_headers<'a>(
    h: *const crate::headers::Headers,
) -> Option<&'a crate::headers::Headers> {
    h.as_ref()
}

#[cfg(test)]
mod tests {
    use super::version_serves;

    #[test]
    fn a_library_serves_programs_of_its_compatible_range_only() {
        // 0.x: the minor is the breaking number.
        assert!(version_serves((0, 1, 3), (0, 1, 0)));
        assert!(version_serves((0, 1, 3), (0, 1, 3)));
        assert!(!version_serves((0, 1, 3), (0, 1, 4)));
        assert!(!version_serves((0, 2, 0), (0, 1, 0)));
        assert!(!version_serves((0, 1, 0), (0, 2, 0)));
        // 1.x and on: the major is.
        assert!(version_serves((1, 4, 0), (1, 2, 9)));
        assert!(!version_serves((1, 2, 0), (1, 2, 1)));
        assert!(!version_serves((2, 0, 0), (1, 9, 9)));
        assert!(!version_serves((1, 0, 0), (0, 9, 9)));
        assert!(super::natsio_version_compatible(
            env!("CARGO_PKG_VERSION_MAJOR").parse().unwrap(),
            env!("CARGO_PKG_VERSION_MINOR").parse().unwrap(),
            env!("CARGO_PKG_VERSION_PATCH").parse().unwrap(),
        ));
    }

    #[test]
    fn an_options_struct_of_an_older_version_is_read_as_its_prefix() {
        use super::kv::natsio_kv_watch_options;
        use super::{options_arg, Versioned};
        use crate::error::ErrorKind;
        let mut o = natsio_kv_watch_options::zeroed();
        o.set_version();
        o.ignore_deletes = true;
        o.resume_from_revision = 7;
        // SAFETY: `o` is a live struct of the current layout throughout.
        let current = unsafe { options_arg(&o) }.unwrap();
        assert_eq!(current.resume_from_revision, 7);
        // Version 1 ended before resume_from_revision: that field is not
        // read (a version 1 caller's struct has no such bytes).
        o.version = 1;
        let v1 = unsafe { options_arg(&o) }.unwrap();
        assert!(v1.ignore_deletes);
        assert_eq!(v1.resume_from_revision, 0);
        for unknown in [0, 3, u32::MAX] {
            o.version = unknown;
            let e = unsafe { options_arg(&o) }.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
            assert!(
                e.detail().contains("natsio_kv_watch_options"),
                "{}",
                e.detail()
            );
        }
        assert_eq!(
            natsio_kv_watch_options::size_of_version(1),
            Some(std::mem::offset_of!(
                natsio_kv_watch_options,
                resume_from_revision
            ))
        );
    }
}
