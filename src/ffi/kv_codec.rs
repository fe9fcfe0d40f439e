//! `natsio_kv_key_codec` and `natsio_kv_value_codec`: a Key-Value bucket's
//! codecs (built-in, chained, or C callbacks), attached to a bucket handle
//! by `natsio_kv_with_codecs`.

use std::borrow::Cow;
use std::ffi::{c_char, c_void, CString};
use std::sync::Arc;

use bytes::Bytes;

use super::kv::natsio_kv;
use super::status::{self, natsio_status};
use super::{arg, arg_mut, bytes_arg, free_box, guard, out_arg, write_box, Released};
use crate::error::{Error, ErrorKind, Result};
use crate::kv::{
    Base64KeyCodec, Base64ValueCodec, KeyChainCodec, KeyCodec, NoOpCodec, PathKeyCodec,
    ValueChainCodec, ValueCodec, ZlibValueCodec,
};

/// A key codec: turns the keys a program uses into the keys stored, and
/// back. Created by `natsio_kv_key_codec_new`, `_chain` or `_custom`, freed
/// with `natsio_kv_key_codec_free` (a bucket handle using it keeps its own
/// reference). Thread-safe.
pub struct natsio_kv_key_codec {
    codec: Arc<dyn KeyCodec>,
}

/// A value codec: turns the values a program uses into the values stored,
/// and back. Created by `natsio_kv_value_codec_new`, `_zlib`, `_chain` or
/// `_custom`, freed with `natsio_kv_value_codec_free` (a bucket handle
/// using it keeps its own reference). Thread-safe.
pub struct natsio_kv_value_codec {
    codec: Arc<dyn ValueCodec>,
}

/// Where a custom codec's callback writes its result
/// (`natsio_kv_codec_output_set`). Valid only during the call.
pub struct natsio_kv_codec_output {
    bytes: Vec<u8>,
}

/// The built-in key codecs.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum natsio_kv_key_codec_kind {
    /// Keys as given.
    NATSIO_KV_KEY_CODEC_NOOP = 0,
    /// Each `.`-separated token base64-encoded on its own, `*` and `>`
    /// tokens of filters kept: nats.js's `Base64KeyCodec` (standard
    /// alphabet, `=` padding). A token whose encoding holds `+` is not a
    /// valid stored key (NATSIO_ERR_INVALID_KEY), as with nats.js.
    NATSIO_KV_KEY_CODEC_BASE64 = 1,
    /// As NATSIO_KV_KEY_CODEC_BASE64 in orbit.go kvcodec's form (URL-safe
    /// alphabet, no padding): every key encodes to a valid stored key. Both
    /// base64 codecs decode either form.
    NATSIO_KV_KEY_CODEC_BASE64_URL = 2,
    /// Path-style keys: `/a/b` is stored as `_root_.a.b`, `a/b/` as `a.b`
    /// (orbit.go kvcodec's PathCodec).
    NATSIO_KV_KEY_CODEC_PATH = 3,
}

/// The built-in value codecs (see also `natsio_kv_value_codec_zlib`).
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum natsio_kv_value_codec_kind {
    /// Values as given.
    NATSIO_KV_VALUE_CODEC_NOOP = 0,
    /// Base64, URL-safe alphabet without padding when writing (orbit.go
    /// kvcodec's form); either alphabet, padded or not, when reading.
    NATSIO_KV_VALUE_CODEC_BASE64 = 1,
}

/// A custom codec's step: encodes or decodes the `input_len` bytes at
/// `input` (for keys and filters, UTF-8 and also NUL-terminated) and writes
/// the result with `natsio_kv_codec_output_set` (a key's result must be
/// UTF-8 without NUL). Returns NATSIO_OK, or any other status to fail the
/// operation with the step's status (NATSIO_ERR_KV_KEY_ENCODE_FAILED, ...).
pub type natsio_kv_codec_cb = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        input: *const c_char,
        input_len: usize,
        output: *mut natsio_kv_codec_output,
    ) -> natsio_status,
>;

/// Sets a custom codec step's result (copied; a later call replaces it).
/// Errors: NATSIO_ERR_NULL_ARGUMENT (`output`, or `data` with a non-zero
/// `len`).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_codec_output_set(
    output: *mut natsio_kv_codec_output,
    data: *const c_void,
    len: usize,
) -> natsio_status {
    guard(|| {
        let output = arg_mut(output, "output")?;
        let data = bytes_arg(data, len, "data")?;
        output.bytes.clear();
        output.bytes.extend_from_slice(data);
        Ok(())
    })
}

/// The C callbacks of a custom codec, with their user data.
struct Callbacks {
    user_data: Released,
}

// SAFETY: the caller promised (natsio_kv_*_codec_custom) that the callbacks
// and their user data may be used from any thread, at the same time.
unsafe impl Send for Callbacks {}
unsafe impl Sync for Callbacks {}

impl Callbacks {
    /// Runs one step; `kind` is the step's failure.
    fn call(&self, step: Step, input: &[u8], kind: ErrorKind) -> Result<Vec<u8>> {
        // NUL-terminated as well (a key is a C string to its codec).
        let mut buf = Vec::with_capacity(input.len() + 1);
        buf.extend_from_slice(input);
        buf.push(0);
        let mut output = natsio_kv_codec_output { bytes: Vec::new() };
        // SAFETY: the callback was registered for this user data; `buf`
        // and `output` outlive the call.
        let status = unsafe {
            step(
                self.user_data.ptr(),
                buf.as_ptr().cast(),
                input.len(),
                &mut output,
            )
        };
        if status != status::CALLBACK_OK {
            return Err(Error::new(
                kind,
                format!("custom codec failed: {}", status::text_of(status)),
            ));
        }
        Ok(output.bytes)
    }

    fn call_str(&self, step: Step, input: &str, kind: ErrorKind) -> Result<String> {
        let out = self.call(step, input.as_bytes(), kind)?;
        match String::from_utf8(out) {
            Ok(s) if !s.contains('\0') => Ok(s),
            _ => Err(Error::new(
                kind,
                "custom key codec returned a key that is not UTF-8 without NUL",
            )),
        }
    }
}

/// A `natsio_kv_codec_cb` called with its status read as an integer
/// (`status::CALLBACK_OK`).
type Step =
    unsafe extern "C" fn(*mut c_void, *const c_char, usize, *mut natsio_kv_codec_output) -> i32;

/// The codec step `cb` as a `Step`.
fn step_of(cb: natsio_kv_codec_cb) -> Option<Step> {
    // SAFETY: the same function type but for the return, natsio_status,
    // which is repr(i32): the same ABI as i32.
    cb.map(|f| unsafe {
        std::mem::transmute::<
            unsafe extern "C" fn(
                *mut c_void,
                *const c_char,
                usize,
                *mut natsio_kv_codec_output,
            ) -> natsio_status,
            Step,
        >(f)
    })
}

struct CustomKeyCodec {
    encode: Step,
    decode: Step,
    encode_filter: Option<Step>,
    callbacks: Callbacks,
}

impl KeyCodec for CustomKeyCodec {
    fn encode_key(&self, key: &str) -> Result<String> {
        self.callbacks
            .call_str(self.encode, key, ErrorKind::KvKeyEncodeFailed)
    }
    fn decode_key(&self, stored: &str) -> Result<String> {
        self.callbacks
            .call_str(self.decode, stored, ErrorKind::KvKeyDecodeFailed)
    }
    fn encode_filter(&self, filter: &str) -> Option<Result<String>> {
        let step = self.encode_filter?;
        Some(
            self.callbacks
                .call_str(step, filter, ErrorKind::KvFilterEncodeFailed),
        )
    }
}

struct CustomValueCodec {
    encode: Step,
    decode: Step,
    callbacks: Callbacks,
}

impl ValueCodec for CustomValueCodec {
    fn encode_value<'a>(&self, value: &'a [u8]) -> Result<Cow<'a, [u8]>> {
        self.callbacks
            .call(self.encode, value, ErrorKind::KvValueEncodeFailed)
            .map(Cow::Owned)
    }
    fn decode_value(&self, stored: Bytes) -> Result<Bytes> {
        self.callbacks
            .call(self.decode, &stored, ErrorKind::KvValueDecodeFailed)
            .map(Bytes::from)
    }
}

fn required(cb: natsio_kv_codec_cb, what: &str) -> Result<Step> {
    step_of(cb).ok_or_else(|| super::null(what))
}

/// The codecs of a chain argument: `count` handles, none NULL.
unsafe fn chain_arg<'a, T>(codecs: *const *const T, count: usize) -> Result<Vec<&'a T>> {
    if count == 0 {
        return Err(Error::new(
            ErrorKind::KvNoCodecs,
            "a codec chain needs at least one codec",
        ));
    }
    if codecs.is_null() {
        return Err(super::null("codecs"));
    }
    if count > super::NATSIO_LIST_MAX_ITEMS {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            "codecs: count is too large",
        ));
    }
    std::slice::from_raw_parts(codecs, count)
        .iter()
        .map(|&c| arg(c, "codecs[i]"))
        .collect()
}

/// A built-in key codec, `kind` a `natsio_kv_key_codec_kind`. Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_INVALID_ARGUMENT (an unknown kind).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_key_codec_new(
    kind: i32,
    codec_out: *mut *mut natsio_kv_key_codec,
) -> natsio_status {
    use natsio_kv_key_codec_kind::*;
    guard(|| {
        let out = out_arg(codec_out, "codec_out")?;
        let codec: Arc<dyn KeyCodec> = match kind {
            k if k == NATSIO_KV_KEY_CODEC_NOOP as i32 => Arc::new(NoOpCodec),
            k if k == NATSIO_KV_KEY_CODEC_BASE64 as i32 => Arc::new(Base64KeyCodec::standard()),
            k if k == NATSIO_KV_KEY_CODEC_BASE64_URL as i32 => Arc::new(Base64KeyCodec::url_safe()),
            k if k == NATSIO_KV_KEY_CODEC_PATH as i32 => Arc::new(PathKeyCodec),
            k => {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    format!("unknown key codec kind {k}"),
                ))
            }
        };
        write_box(out, natsio_kv_key_codec { codec });
        Ok(())
    })
}

/// A key codec applying `codecs` (`count` handles, borrowed: the chain
/// keeps its own references) in order to encode and in reverse order to
/// decode; it encodes filters only if every codec of it does. Errors:
/// NATSIO_ERR_KV_NO_CODECS (`count` 0), NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_key_codec_chain(
    codecs: *const *const natsio_kv_key_codec,
    count: usize,
    codec_out: *mut *mut natsio_kv_key_codec,
) -> natsio_status {
    guard(|| {
        let out = out_arg(codec_out, "codec_out")?;
        let parts = chain_arg(codecs, count)?
            .into_iter()
            .map(|c| Arc::clone(&c.codec))
            .collect();
        let chain = KeyChainCodec::new(parts)?;
        write_box(
            out,
            natsio_kv_key_codec {
                codec: Arc::new(chain),
            },
        );
        Ok(())
    })
}

/// A key codec of C callbacks: `encode` and `decode` (required) turn a key
/// into its stored form and back; `encode_filter` (may be NULL) encodes a
/// watch or listing filter keeping its `*` and `>` tokens. Without it a
/// filter with wildcards fails with NATSIO_ERR_KV_WILDCARD_NOT_SUPPORTED.
///
/// Threads: the callbacks run at the same time on several threads: encoding
/// on the thread that calls a verb (put, get, watch, ...), decoding on a
/// library runtime thread as entries and keys arrive (before they are
/// buffered, so what any reader takes is decoded). They must be quick and
/// must not block; a blocking natsio call in them fails with
/// NATSIO_ERR_ILLEGAL_STATE. `release` (may be NULL) gets `user_data` when
/// the codec and every bucket handle using it are freed.
/// Errors: NATSIO_ERR_NULL_ARGUMENT (`encode`, `decode` or `codec_out`);
/// `release` is not called on failure.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_key_codec_custom(
    encode: natsio_kv_codec_cb,
    decode: natsio_kv_codec_cb,
    encode_filter: natsio_kv_codec_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
    codec_out: *mut *mut natsio_kv_key_codec,
) -> natsio_status {
    guard(|| {
        let out = out_arg(codec_out, "codec_out")?;
        let encode = required(encode, "encode")?;
        let decode = required(decode, "decode")?;
        let codec = CustomKeyCodec {
            encode,
            decode,
            encode_filter: step_of(encode_filter),
            callbacks: Callbacks {
                user_data: Released::new(user_data, release),
            },
        };
        write_box(
            out,
            natsio_kv_key_codec {
                codec: Arc::new(codec),
            },
        );
        Ok(())
    })
}

/// Frees a key codec (bucket handles using it keep it). Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_key_codec_free(codec: *mut natsio_kv_key_codec) {
    free_box(codec)
}

/// A built-in value codec, `kind` a `natsio_kv_value_codec_kind`. Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_INVALID_ARGUMENT (an unknown kind).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_value_codec_new(
    kind: i32,
    codec_out: *mut *mut natsio_kv_value_codec,
) -> natsio_status {
    use natsio_kv_value_codec_kind::*;
    guard(|| {
        let out = out_arg(codec_out, "codec_out")?;
        let codec: Arc<dyn ValueCodec> = match kind {
            k if k == NATSIO_KV_VALUE_CODEC_NOOP as i32 => Arc::new(NoOpCodec),
            k if k == NATSIO_KV_VALUE_CODEC_BASE64 as i32 => Arc::new(Base64ValueCodec),
            k => {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    format!("unknown value codec kind {k}"),
                ))
            }
        };
        write_box(out, natsio_kv_value_codec { codec });
        Ok(())
    })
}

/// A value codec compressing in the zlib format (RFC 1950) at `level`: 0
/// (stored) to 9 (smallest), or -1 for zlib's default (6). A stored value
/// that decodes to more than 256 MiB (a decompression bomb) is refused
/// with NATSIO_ERR_KV_VALUE_DECODE_FAILED. Errors:
/// NATSIO_ERR_INVALID_ARGUMENT (another level), NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_value_codec_zlib(
    level: i32,
    codec_out: *mut *mut natsio_kv_value_codec,
) -> natsio_status {
    guard(|| {
        let out = out_arg(codec_out, "codec_out")?;
        let codec = ZlibValueCodec::new(level)?;
        write_box(
            out,
            natsio_kv_value_codec {
                codec: Arc::new(codec),
            },
        );
        Ok(())
    })
}

/// A value codec applying `codecs` (`count` handles, borrowed) in order to
/// encode and in reverse order to decode. Errors: NATSIO_ERR_KV_NO_CODECS
/// (`count` 0), NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_value_codec_chain(
    codecs: *const *const natsio_kv_value_codec,
    count: usize,
    codec_out: *mut *mut natsio_kv_value_codec,
) -> natsio_status {
    guard(|| {
        let out = out_arg(codec_out, "codec_out")?;
        let parts = chain_arg(codecs, count)?
            .into_iter()
            .map(|c| Arc::clone(&c.codec))
            .collect();
        let chain = ValueChainCodec::new(parts)?;
        write_box(
            out,
            natsio_kv_value_codec {
                codec: Arc::new(chain),
            },
        );
        Ok(())
    })
}

/// A value codec of C callbacks: `encode` and `decode` (required) turn a
/// value into its stored form and back. Delete and purge markers carry no
/// value and are not passed to it. Threads and `release` as
/// `natsio_kv_key_codec_custom`. Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_value_codec_custom(
    encode: natsio_kv_codec_cb,
    decode: natsio_kv_codec_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
    codec_out: *mut *mut natsio_kv_value_codec,
) -> natsio_status {
    guard(|| {
        let out = out_arg(codec_out, "codec_out")?;
        let encode = required(encode, "encode")?;
        let decode = required(decode, "decode")?;
        let codec = CustomValueCodec {
            encode,
            decode,
            callbacks: Callbacks {
                user_data: Released::new(user_data, release),
            },
        };
        write_box(
            out,
            natsio_kv_value_codec {
                codec: Arc::new(codec),
            },
        );
        Ok(())
    })
}

/// Frees a value codec (bucket handles using it keep it). Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_value_codec_free(codec: *mut natsio_kv_value_codec) {
    free_box(codec)
}

/// A new handle on `kv`'s bucket whose every verb goes through the given
/// codecs (the reference's `key_codec` and `value_codec`): put, create,
/// update, delete, purge, get, history, keys, key listings and watch encode
/// the keys, filters and values they are given, and the keys and values
/// they return are decoded. Only the encoded key is validated. A filter
/// with `*` or `>` tokens is encoded with the key codec's filter form
/// (NATSIO_ERR_KV_WILDCARD_NOT_SUPPORTED when it has none). A stored key or
/// value that does not decode fails a get with
/// NATSIO_ERR_KV_KEY_DECODE_FAILED / NATSIO_ERR_KV_VALUE_DECODE_FAILED and
/// ends a watch or listing with it. Delete and purge markers carry no
/// value: none is encoded or decoded.
///
/// `key_codec` and `value_codec` may be NULL (keys or values as given; both
/// NULL: a plain handle) and are borrowed: the new handle keeps its own
/// references. `kv` keeps its own codecs; the new handle replaces them.
/// Free the new handle with `natsio_kv_free`. Thread-safe. Errors:
/// NATSIO_ERR_NULL_ARGUMENT (`kv`, `kv_out`).
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_with_codecs(
    kv: *const natsio_kv,
    key_codec: *const natsio_kv_key_codec,
    value_codec: *const natsio_kv_value_codec,
    kv_out: *mut *mut natsio_kv,
) -> natsio_status {
    guard(|| {
        let kv = arg(kv, "kv")?;
        let out = out_arg(kv_out, "kv_out")?;
        let key = key_codec.as_ref().map(|c| Arc::clone(&c.codec));
        let value = value_codec.as_ref().map(|c| Arc::clone(&c.codec));
        write_box(out, natsio_kv::new(kv.kv.with_codecs(key, value)));
        Ok(())
    })
}

/// Runs a key codec's encode (the key as stored). Writes a new C string to
/// `key_out`, freed with `natsio_string_free`. For checking a codec, and for
/// bindings that apply codecs around their calls. Errors:
/// NATSIO_ERR_KV_KEY_ENCODE_FAILED, NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_INVALID_UTF8.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_key_codec_encode(
    codec: *const natsio_kv_key_codec,
    key: *const c_char,
    key_out: *mut *mut c_char,
) -> natsio_status {
    key_step(codec, key, key_out, |c, k| {
        c.encode_key(k)
            .map_err(|e| as_kind(e, ErrorKind::KvKeyEncodeFailed))
    })
}

/// Runs a key codec's decode (the key a program sees), as
/// `natsio_kv_key_codec_encode`. Errors: NATSIO_ERR_KV_KEY_DECODE_FAILED,
/// NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_UTF8.
#[no_mangle]
pub unsafe extern "C" fn natsio_kv_key_codec_decode(
    codec: *const natsio_kv_key_codec,
    key: *const c_char,
    key_out: *mut *mut c_char,
) -> natsio_status {
    key_step(codec, key, key_out, |c, k| {
        c.decode_key(k)
            .map_err(|e| as_kind(e, ErrorKind::KvKeyDecodeFailed))
    })
}

fn as_kind(e: Error, kind: ErrorKind) -> Error {
    if e.kind() == kind {
        e
    } else {
        Error::new(kind, e.detail().to_string())
    }
}

unsafe fn key_step(
    codec: *const natsio_kv_key_codec,
    key: *const c_char,
    key_out: *mut *mut c_char,
    step: impl FnOnce(&dyn KeyCodec, &str) -> Result<String>,
) -> natsio_status {
    guard(|| {
        let codec = arg(codec, "codec")?;
        let key = super::str_arg(key, "key")?;
        let out = out_arg(key_out, "key_out")?;
        let result = step(&*codec.codec, key)?;
        *out = CString::new(result)
            .map_err(|_| Error::new(ErrorKind::InvalidArgument, "the key holds a NUL byte"))?
            .into_raw();
        Ok(())
    })
}
