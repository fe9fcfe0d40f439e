//! Key and value codecs of a Key-Value bucket (the reference's kvcodec,
//! ADR-54): a key codec turns the keys a program uses into the keys stored
//! (and back), a value codec the values. Only the encoded key is validated,
//! so a codec lets a program use keys the key rules refuse.
//!
//! Wire forms, so that other clients read what this one writes:
//! - `Base64KeyCodec::standard()` is nats.js's `Base64KeyCodec` (each
//!   `.`-separated token in the standard alphabet with `=` padding);
//!   `Base64KeyCodec::url_safe()` is orbit.go's kvcodec `Base64Codec` and
//!   ADR-54's (URL-safe alphabet, no padding). Both decode either form.
//! - `PathKeyCodec` is orbit.go's `PathCodec` (`/a/b` <-> `_root_.a.b`).
//! - `Base64ValueCodec` writes orbit.go's form (URL-safe, no padding) and
//!   reads either; `ZlibValueCodec` writes the zlib format (RFC 1950).

use std::borrow::Cow;
use std::io::{Read, Write};
use std::sync::Arc;

use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use bytes::Bytes;

use crate::error::{Error, ErrorKind, Result};

/// Turns a program's key into the stored key and back.
pub trait KeyCodec: Send + Sync {
    fn encode_key(&self, key: &str) -> Result<String>;
    fn decode_key(&self, stored: &str) -> Result<String>;
    /// Encodes a watch or listing filter whose `*` and `>` tokens stay
    /// wildcards; `None` when the codec cannot (the filter is then refused
    /// with `KvWildcardNotSupported`).
    fn encode_filter(&self, _filter: &str) -> Option<Result<String>> {
        None
    }
}

/// Turns a program's value into the stored value and back.
pub trait ValueCodec: Send + Sync {
    fn encode_value<'a>(&self, value: &'a [u8]) -> Result<Cow<'a, [u8]>>;
    fn decode_value(&self, stored: Bytes) -> Result<Bytes>;
}

fn is_wildcard(token: &str) -> bool {
    token == "*" || token == ">"
}

/// Passes keys, filters and values through unchanged.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoOpCodec;

impl KeyCodec for NoOpCodec {
    fn encode_key(&self, key: &str) -> Result<String> {
        Ok(key.to_string())
    }
    fn decode_key(&self, stored: &str) -> Result<String> {
        Ok(stored.to_string())
    }
    fn encode_filter(&self, filter: &str) -> Option<Result<String>> {
        Some(Ok(filter.to_string()))
    }
}

impl ValueCodec for NoOpCodec {
    fn encode_value<'a>(&self, value: &'a [u8]) -> Result<Cow<'a, [u8]>> {
        Ok(Cow::Borrowed(value))
    }
    fn decode_value(&self, stored: Bytes) -> Result<Bytes> {
        Ok(stored)
    }
}

/// Base64 in either alphabet, padded or not (a token of one never holds
/// the other's `+/` or `-_`).
fn decode_base64_any(text: &[u8]) -> std::result::Result<Vec<u8>, String> {
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    let normalized: Vec<u8> = text
        .iter()
        .map(|&c| match c {
            b'-' => b'+',
            b'_' => b'/',
            c => c,
        })
        .collect();
    LENIENT.decode(normalized).map_err(|e| e.to_string())
}

const URL_SAFE_NO_PAD: GeneralPurpose = GeneralPurpose::new(
    &alphabet::URL_SAFE,
    GeneralPurposeConfig::new().with_encode_padding(false),
);

/// Each `.`-separated token of a key base64-encoded on its own, so that
/// the stored keys keep the key's hierarchy and wildcard filters work.
#[derive(Debug, Clone, Copy)]
pub struct Base64KeyCodec {
    url_safe: bool,
}

impl Base64KeyCodec {
    /// nats.js's form: standard alphabet, `=` padding. A token whose
    /// encoding holds `+` is not a valid stored key (`InvalidKey`), as
    /// with nats.js.
    pub fn standard() -> Self {
        Base64KeyCodec { url_safe: false }
    }

    /// orbit.go's kvcodec form (ADR-54): URL-safe alphabet, no padding;
    /// every key encodes to a valid stored key.
    pub fn url_safe() -> Self {
        Base64KeyCodec { url_safe: true }
    }

    fn encode_token(&self, token: &str) -> String {
        if self.url_safe {
            URL_SAFE_NO_PAD.encode(token)
        } else {
            STANDARD.encode(token)
        }
    }

    fn encode_tokens(&self, key: &str, keep_wildcards: bool) -> String {
        key.split('.')
            .map(|t| {
                if keep_wildcards && is_wildcard(t) {
                    t.to_string()
                } else {
                    self.encode_token(t)
                }
            })
            .collect::<Vec<_>>()
            .join(".")
    }
}

impl KeyCodec for Base64KeyCodec {
    fn encode_key(&self, key: &str) -> Result<String> {
        Ok(self.encode_tokens(key, false))
    }

    fn decode_key(&self, stored: &str) -> Result<String> {
        let mut tokens = Vec::new();
        for t in stored.split('.') {
            let bytes = decode_base64_any(t.as_bytes()).map_err(|e| {
                Error::new(
                    ErrorKind::KvKeyDecodeFailed,
                    format!("key token {t:?} is not base64: {e}"),
                )
            })?;
            tokens.push(String::from_utf8(bytes).map_err(|_| {
                Error::new(
                    ErrorKind::KvKeyDecodeFailed,
                    format!("key token {t:?} does not decode to UTF-8"),
                )
            })?);
        }
        Ok(tokens.join("."))
    }

    fn encode_filter(&self, filter: &str) -> Option<Result<String>> {
        Some(Ok(self.encode_tokens(filter, true)))
    }
}

/// Path-style keys (`/`-separated) stored as keys (`.`-separated): a
/// leading `/` becomes the token `_root_`, a trailing `/` is dropped
/// (orbit.go's PathCodec).
#[derive(Debug, Clone, Copy, Default)]
pub struct PathKeyCodec;

const ROOT_TOKEN: &str = "_root_";

impl KeyCodec for PathKeyCodec {
    fn encode_key(&self, key: &str) -> Result<String> {
        if key == "/" {
            return Ok(ROOT_TOKEN.to_string());
        }
        let rooted;
        let mut path = key;
        if let Some(rest) = key.strip_prefix('/') {
            rooted = format!("{ROOT_TOKEN}.{rest}");
            path = &rooted;
        }
        let path = path.strip_suffix('/').unwrap_or(path);
        Ok(path.replace('/', "."))
    }

    fn decode_key(&self, stored: &str) -> Result<String> {
        if stored == ROOT_TOKEN {
            return Ok("/".to_string());
        }
        match stored
            .strip_prefix(ROOT_TOKEN)
            .and_then(|r| r.strip_prefix('.'))
        {
            Some(rest) => Ok(format!("/{}", rest.replace('.', "/"))),
            None => Ok(stored.replace('.', "/")),
        }
    }

    fn encode_filter(&self, filter: &str) -> Option<Result<String>> {
        Some(self.encode_key(filter))
    }
}

fn no_codecs() -> Error {
    Error::new(
        ErrorKind::KvNoCodecs,
        "a codec chain needs at least one codec",
    )
}

fn in_chain(kind: ErrorKind, index: usize, e: Error) -> Error {
    Error::new(kind, format!("codec {index} of the chain: {}", e.detail()))
}

/// Key codecs applied in order to encode, in reverse order to decode.
#[derive(Clone)]
pub struct KeyChainCodec {
    codecs: Vec<Arc<dyn KeyCodec>>,
}

impl KeyChainCodec {
    /// Fails with `KvNoCodecs` for an empty chain.
    pub fn new(codecs: Vec<Arc<dyn KeyCodec>>) -> Result<Self> {
        if codecs.is_empty() {
            return Err(no_codecs());
        }
        Ok(KeyChainCodec { codecs })
    }
}

impl KeyCodec for KeyChainCodec {
    fn encode_key(&self, key: &str) -> Result<String> {
        let mut k = key.to_string();
        for (i, c) in self.codecs.iter().enumerate() {
            k = c
                .encode_key(&k)
                .map_err(|e| in_chain(ErrorKind::KvKeyEncodeFailed, i, e))?;
        }
        Ok(k)
    }

    fn decode_key(&self, stored: &str) -> Result<String> {
        let mut k = stored.to_string();
        for (i, c) in self.codecs.iter().enumerate().rev() {
            k = c
                .decode_key(&k)
                .map_err(|e| in_chain(ErrorKind::KvKeyDecodeFailed, i, e))?;
        }
        Ok(k)
    }

    /// Filterable only when every codec of the chain is.
    fn encode_filter(&self, filter: &str) -> Option<Result<String>> {
        let mut f = filter.to_string();
        for (i, c) in self.codecs.iter().enumerate() {
            match c.encode_filter(&f)? {
                Ok(next) => f = next,
                Err(e) => return Some(Err(in_chain(ErrorKind::KvFilterEncodeFailed, i, e))),
            }
        }
        Some(Ok(f))
    }
}

/// A value base64-encoded: orbit.go's form (URL-safe, no padding) when
/// writing, either alphabet, padded or not, when reading.
#[derive(Debug, Clone, Copy, Default)]
pub struct Base64ValueCodec;

impl ValueCodec for Base64ValueCodec {
    fn encode_value<'a>(&self, value: &'a [u8]) -> Result<Cow<'a, [u8]>> {
        Ok(Cow::Owned(URL_SAFE_NO_PAD.encode(value).into_bytes()))
    }

    fn decode_value(&self, stored: Bytes) -> Result<Bytes> {
        decode_base64_any(&stored).map(Bytes::from).map_err(|e| {
            Error::new(
                ErrorKind::KvValueDecodeFailed,
                format!("value is not base64: {e}"),
            )
        })
    }
}

/// The most a zlib value may decode to: 256 MiB, four times the largest
/// payload a NATS server can be configured to carry (64 MiB).
const ZLIB_DECODED_MAX: u64 = 256 << 20;

/// A value compressed in the zlib format (RFC 1950), as Python's
/// `zlib.compress(value, level)`.
#[derive(Debug, Clone, Copy)]
pub struct ZlibValueCodec {
    level: flate2::Compression,
}

impl ZlibValueCodec {
    /// `level` 0 (store) to 9 (smallest), or -1 for zlib's default (6);
    /// another fails with `InvalidArgument`.
    pub fn new(level: i32) -> Result<Self> {
        let level = match level {
            -1 => flate2::Compression::default(),
            0..=9 => flate2::Compression::new(level as u32),
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    format!("zlib level {level}: use 0..=9, or -1 for the default"),
                ))
            }
        };
        Ok(ZlibValueCodec { level })
    }
}

impl ValueCodec for ZlibValueCodec {
    fn encode_value<'a>(&self, value: &'a [u8]) -> Result<Cow<'a, [u8]>> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), self.level);
        z.write_all(value)
            .and_then(|()| z.finish())
            .map(Cow::Owned)
            .map_err(|e| Error::new(ErrorKind::KvValueEncodeFailed, format!("zlib: {e}")))
    }

    fn decode_value(&self, stored: Bytes) -> Result<Bytes> {
        inflate_bounded(&stored, ZLIB_DECODED_MAX)
    }
}

/// Inflates zlib data, failing with `KvValueDecodeFailed` past `max`
/// bytes: a stored value is untrusted input, and a few KiB of zlib data
/// can expand a thousandfold.
fn inflate_bounded(stored: &[u8], max: u64) -> Result<Bytes> {
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(stored)
        .take(max + 1)
        .read_to_end(&mut out)
        .map_err(|e| {
            Error::new(
                ErrorKind::KvValueDecodeFailed,
                format!("value is not zlib data: {e}"),
            )
        })?;
    if out.len() as u64 > max {
        return Err(Error::new(
            ErrorKind::KvValueDecodeFailed,
            format!("zlib value decodes to more than {max} bytes"),
        ));
    }
    Ok(Bytes::from(out))
}

/// Value codecs applied in order to encode, in reverse order to decode.
#[derive(Clone)]
pub struct ValueChainCodec {
    codecs: Vec<Arc<dyn ValueCodec>>,
}

impl ValueChainCodec {
    /// Fails with `KvNoCodecs` for an empty chain.
    pub fn new(codecs: Vec<Arc<dyn ValueCodec>>) -> Result<Self> {
        if codecs.is_empty() {
            return Err(no_codecs());
        }
        Ok(ValueChainCodec { codecs })
    }
}

impl ValueCodec for ValueChainCodec {
    fn encode_value<'a>(&self, value: &'a [u8]) -> Result<Cow<'a, [u8]>> {
        let mut v = Cow::Borrowed(value);
        for (i, c) in self.codecs.iter().enumerate() {
            v = Cow::Owned(
                c.encode_value(&v)
                    .map_err(|e| in_chain(ErrorKind::KvValueEncodeFailed, i, e))?
                    .into_owned(),
            );
        }
        Ok(v)
    }

    fn decode_value(&self, stored: Bytes) -> Result<Bytes> {
        let mut v = stored;
        for (i, c) in self.codecs.iter().enumerate().rev() {
            v = c
                .decode_value(v)
                .map_err(|e| in_chain(ErrorKind::KvValueDecodeFailed, i, e))?;
        }
        Ok(v)
    }
}

/// A bucket handle's codecs (none: keys and values as given).
#[derive(Clone, Default)]
pub(crate) struct Codecs {
    pub key: Option<Arc<dyn KeyCodec>>,
    pub value: Option<Arc<dyn ValueCodec>>,
}

/// An error of a codec's own as the kind its step stands for (a custom
/// codec's failure keeps its detail).
fn as_step(kind: ErrorKind, e: Error) -> Error {
    if matches!(
        e.kind(),
        ErrorKind::KvKeyEncodeFailed
            | ErrorKind::KvKeyDecodeFailed
            | ErrorKind::KvValueEncodeFailed
            | ErrorKind::KvValueDecodeFailed
            | ErrorKind::KvFilterEncodeFailed
            | ErrorKind::KvWildcardNotSupported
    ) {
        return e;
    }
    Error::new(kind, e.detail().to_string())
}

impl Codecs {
    pub fn encode_key(&self, key: &str) -> Result<String> {
        match &self.key {
            None => Ok(key.to_string()),
            Some(c) => c
                .encode_key(key)
                .map_err(|e| as_step(ErrorKind::KvKeyEncodeFailed, e)),
        }
    }

    pub fn decode_key(&self, stored: &str) -> Result<String> {
        match &self.key {
            None => Ok(stored.to_string()),
            Some(c) => c
                .decode_key(stored)
                .map_err(|e| as_step(ErrorKind::KvKeyDecodeFailed, e)),
        }
    }

    /// A filter goes through the key codec's filter form (orbit.go's
    /// kvcodec); a codec without one takes filters without `*` or `>` as
    /// keys and refuses the others.
    pub fn encode_filter(&self, filter: &str) -> Result<String> {
        let Some(c) = &self.key else {
            return Ok(filter.to_string());
        };
        if let Some(r) = c.encode_filter(filter) {
            return r.map_err(|e| as_step(ErrorKind::KvFilterEncodeFailed, e));
        }
        if filter.contains(['*', '>']) {
            return Err(Error::new(
                ErrorKind::KvWildcardNotSupported,
                format!(
                    "filter {filter:?} has wildcards and the bucket's key codec cannot encode them"
                ),
            ));
        }
        self.encode_key(filter)
    }

    pub fn encode_value<'a>(&self, value: &'a [u8]) -> Result<Cow<'a, [u8]>> {
        match &self.value {
            None => Ok(Cow::Borrowed(value)),
            Some(c) => c
                .encode_value(value)
                .map_err(|e| as_step(ErrorKind::KvValueEncodeFailed, e)),
        }
    }

    pub fn decode_value(&self, stored: Bytes) -> Result<Bytes> {
        match &self.value {
            None => Ok(stored),
            Some(c) => c
                .decode_value(stored)
                .map_err(|e| as_step(ErrorKind::KvValueDecodeFailed, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zlib_refuses_a_value_that_decodes_past_the_bound() {
        let codec = ZlibValueCodec::new(9).unwrap();
        let stored = codec.encode_value(&[0u8; 4097]).unwrap().into_owned();
        assert!(stored.len() < 100, "{} bytes", stored.len());
        let err = inflate_bounded(&stored, 4096).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::KvValueDecodeFailed);
        assert!(err.to_string().contains("more than 4096 bytes"), "{err}");
        assert_eq!(inflate_bounded(&stored, 4097).unwrap().len(), 4097);
        let err = codec
            .decode_value(Bytes::from_static(b"not zlib"))
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::KvValueDecodeFailed);
    }

    #[test]
    fn base64_keys_are_encoded_per_token_in_both_forms() {
        let std = Base64KeyCodec::standard();
        assert_eq!(std.encode_key("users.john").unwrap(), "dXNlcnM=.am9obg==");
        let url = Base64KeyCodec::url_safe();
        assert_eq!(url.encode_key("users.john").unwrap(), "dXNlcnM.am9obg");
        // Either codec reads either form.
        for stored in ["dXNlcnM=.am9obg==", "dXNlcnM.am9obg"] {
            assert_eq!(std.decode_key(stored).unwrap(), "users.john");
            assert_eq!(url.decode_key(stored).unwrap(), "users.john");
        }
        assert_eq!(url.encode_key("~~~").unwrap(), "fn5-");
        assert_eq!(std.decode_key("fn5-").unwrap(), "~~~");
        assert_eq!(
            std.encode_filter("users.*.x.>").unwrap().unwrap(),
            "dXNlcnM=.*.eA==.>"
        );
        assert_eq!(
            std.decode_key("!!").unwrap_err().kind(),
            ErrorKind::KvKeyDecodeFailed
        );
    }

    #[test]
    fn path_keys_map_a_leading_slash_to_the_root_token() {
        let p = PathKeyCodec;
        for (path, stored, back) in [
            ("/a/b", "_root_.a.b", "/a/b"),
            ("a/b/", "a.b", "a/b"),
            ("/", "_root_", "/"),
            ("a", "a", "a"),
        ] {
            assert_eq!(p.encode_key(path).unwrap(), stored);
            assert_eq!(p.decode_key(stored).unwrap(), back);
        }
        assert_eq!(p.encode_filter("/a/*").unwrap().unwrap(), "_root_.a.*");
    }

    #[test]
    fn chains_encode_in_order_and_decode_in_reverse() {
        let chain = KeyChainCodec::new(vec![
            Arc::new(PathKeyCodec),
            Arc::new(Base64KeyCodec::url_safe()),
        ])
        .unwrap();
        let stored = chain.encode_key("/a/b").unwrap();
        assert_eq!(stored, "X3Jvb3Rf.YQ.Yg");
        assert_eq!(chain.decode_key(&stored).unwrap(), "/a/b");
        assert_eq!(
            KeyChainCodec::new(vec![]).err().unwrap().kind(),
            ErrorKind::KvNoCodecs
        );

        let values = ValueChainCodec::new(vec![
            Arc::new(ZlibValueCodec::new(9).unwrap()),
            Arc::new(Base64ValueCodec),
        ])
        .unwrap();
        let stored = values
            .encode_value(b"hello hello hello")
            .unwrap()
            .into_owned();
        assert!(stored
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || b"-_".contains(c)));
        assert_eq!(
            &values.decode_value(Bytes::from(stored)).unwrap()[..],
            b"hello hello hello"
        );
        assert_eq!(
            values
                .decode_value(Bytes::from_static(b"eJw"))
                .unwrap_err()
                .kind(),
            ErrorKind::KvValueDecodeFailed
        );
    }

    #[test]
    fn zlib_writes_the_zlib_format() {
        let z = ZlibValueCodec::new(-1).unwrap();
        let stored = z.encode_value(b"abc").unwrap();
        // CMF 0x78: deflate with a 32 KiB window; the header is a multiple of 31.
        assert_eq!(stored[0], 0x78);
        assert_eq!((u16::from(stored[0]) << 8 | u16::from(stored[1])) % 31, 0);
        assert_eq!(
            ZlibValueCodec::new(10).unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
    }

    #[test]
    fn a_wildcard_filter_needs_a_filterable_key_codec() {
        struct Upper;
        impl KeyCodec for Upper {
            fn encode_key(&self, key: &str) -> Result<String> {
                Ok(key.to_uppercase())
            }
            fn decode_key(&self, stored: &str) -> Result<String> {
                Ok(stored.to_lowercase())
            }
        }
        let codecs = Codecs {
            key: Some(Arc::new(Upper)),
            value: None,
        };
        assert_eq!(codecs.encode_filter("a.b").unwrap(), "A.B");
        assert_eq!(
            codecs.encode_filter("a.*").unwrap_err().kind(),
            ErrorKind::KvWildcardNotSupported
        );
        let chain = Codecs {
            key: Some(Arc::new(
                KeyChainCodec::new(vec![Arc::new(PathKeyCodec), Arc::new(Upper)]).unwrap(),
            )),
            value: None,
        };
        assert_eq!(
            chain.encode_filter("a/>").unwrap_err().kind(),
            ErrorKind::KvWildcardNotSupported
        );
    }
}
