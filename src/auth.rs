//! Authentication: the credentials a client sends in CONNECT, computed
//! afresh for every connection (files are re-read, so rotated credentials
//! are picked up on reconnect).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

use crate::error::{Error, ErrorKind, Result};

/// What goes into CONNECT for the credentials.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthFields {
    pub jwt: Option<String>,
    /// The NKey public key, for NKey (non-JWT) authentication.
    pub nkey: Option<String>,
    /// URL-safe base64 (no padding) of the Ed25519 signature of the nonce.
    pub sig: Option<String>,
    /// User and password, or a token, computed for this connection (by an
    /// application callback): they take the place of the options' `user`,
    /// `password` and `token`. Credentials in the URL still win.
    pub user: Option<String>,
    pub pass: Option<String>,
    pub auth_token: Option<String>,
}

/// An application-provided authenticator (e.g. keys held in an HSM).
/// Called once per connection attempt, off the runtime threads.
pub trait Authenticator: Send + Sync {
    fn authenticate(&self, nonce: &[u8]) -> Result<AuthFields>;
}

/// Key-based credentials, as configured.
#[derive(Clone)]
pub enum Credentials {
    NKeySeed(String),
    NKeyFile(PathBuf),
    CredsFile(PathBuf),
    Custom(Arc<dyn Authenticator>),
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print secrets.
        match self {
            Credentials::NKeySeed(_) => f.write_str("NKeySeed(..)"),
            Credentials::NKeyFile(p) => write!(f, "NKeyFile({p:?})"),
            Credentials::CredsFile(p) => write!(f, "CredsFile({p:?})"),
            Credentials::Custom(_) => f.write_str("Custom(..)"),
        }
    }
}

fn auth_err(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::Config, msg)
}

fn read(path: &Path, what: &str) -> Result<String> {
    std::fs::read_to_string(path)
        .map_err(|e| auth_err(format!("cannot read {what} {}: {e}", path.display())))
}

/// Signs `nonce` with an NKey seed; returns (public key, signature).
pub fn sign_with_seed(seed: &str, nonce: &[u8]) -> Result<(String, String)> {
    let kp = nkeys::KeyPair::from_seed(seed.trim())
        .map_err(|e| auth_err(format!("invalid NKey seed: {e}")))?;
    let sig = kp
        .sign(nonce)
        .map_err(|e| auth_err(format!("cannot sign the server nonce: {e}")))?;
    Ok((kp.public_key(), URL_SAFE_NO_PAD.encode(sig)))
}

/// The first seed line of an NKey seed file (lines starting with 'S').
fn seed_from_file(text: &str) -> Option<&str> {
    text.lines()
        .map(str::trim)
        .find(|l| l.starts_with('S') && l.len() > 50)
}

/// The block between a `-----BEGIN ...{marker}...-----` line and the next
/// `------END` line of a .creds file.
fn creds_section<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
    let mut lines = text.lines().map(str::trim);
    lines.find(|l| l.starts_with("-----BEGIN") && l.contains(marker))?;
    lines
        .take_while(|l| !l.starts_with("------END") && !l.starts_with("-----END"))
        .find(|l| !l.is_empty())
}

/// Parses a .creds file into (user JWT, user seed).
pub fn parse_creds(text: &str) -> Result<(String, String)> {
    let jwt = creds_section(text, "JWT")
        .ok_or_else(|| auth_err("credentials file has no user JWT section"))?;
    let seed = creds_section(text, "SEED")
        .ok_or_else(|| auth_err("credentials file has no NKey seed section"))?;
    Ok((jwt.to_string(), seed.to_string()))
}

impl Credentials {
    /// How configuration errors name this kind.
    pub(crate) fn kind_name(&self) -> &'static str {
        match self {
            Credentials::NKeySeed(_) => "nkey seed",
            Credentials::NKeyFile(_) => "nkey file",
            Credentials::CredsFile(_) => "credentials file",
            Credentials::Custom(_) => "authenticator",
        }
    }

    /// The CONNECT fields for the server's `nonce`.
    pub(crate) fn fields(&self, nonce: Option<&str>) -> Result<AuthFields> {
        let nonce_bytes = nonce.unwrap_or("").as_bytes();
        match self {
            Credentials::NKeySeed(seed) => {
                let (nkey, sig) = sign_with_seed(seed, nonce_bytes)?;
                Ok(AuthFields {
                    jwt: None,
                    nkey: Some(nkey),
                    sig: Some(sig),
                    ..AuthFields::default()
                })
            }
            Credentials::NKeyFile(path) => {
                let text = read(path, "NKey seed file")?;
                let seed = seed_from_file(&text)
                    .ok_or_else(|| auth_err(format!("no NKey seed in {}", path.display())))?;
                let (nkey, sig) = sign_with_seed(seed, nonce_bytes)?;
                Ok(AuthFields {
                    jwt: None,
                    nkey: Some(nkey),
                    sig: Some(sig),
                    ..AuthFields::default()
                })
            }
            Credentials::CredsFile(path) => {
                let (jwt, seed) = parse_creds(&read(path, "credentials file")?)?;
                let (_, sig) = sign_with_seed(&seed, nonce_bytes)?;
                Ok(AuthFields {
                    jwt: Some(jwt),
                    nkey: None,
                    sig: Some(sig),
                    ..AuthFields::default()
                })
            }
            Credentials::Custom(a) => a.authenticate(nonce_bytes),
        }
    }

    /// Checks what can be checked before connecting.
    pub(crate) fn validate(&self) -> Result<()> {
        match self {
            Credentials::NKeySeed(seed) => sign_with_seed(seed, b"").map(|_| ()),
            Credentials::NKeyFile(p) | Credentials::CredsFile(p) if !p.exists() => {
                Err(auth_err(format!("{} does not exist", p.display())))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creds_and_seed_signing() {
        let kp = nkeys::KeyPair::new_user();
        let seed = kp.seed().unwrap();
        let creds = format!(
            "-----BEGIN NATS USER JWT-----\neyJhbGciOi.payload.sig\n------END NATS USER JWT------\n\n\
             ************************* IMPORTANT *************************\n\n\
             -----BEGIN USER NKEY SEED-----\n{seed}\n------END USER NKEY SEED------\n"
        );
        let (jwt, s) = parse_creds(&creds).unwrap();
        assert_eq!(
            (jwt.as_str(), s.as_str()),
            ("eyJhbGciOi.payload.sig", seed.as_str())
        );
        let (public, sig) = sign_with_seed(&seed, b"nonce").unwrap();
        assert_eq!(public, kp.public_key());
        let raw = URL_SAFE_NO_PAD.decode(sig).unwrap();
        kp.verify(b"nonce", &raw).unwrap();
        assert!(sign_with_seed("SUnotaseed", b"x").is_err());
        assert_eq!(
            seed_from_file(&format!("# my key\n{seed}\n")),
            Some(seed.as_str())
        );
        assert!(parse_creds("garbage").is_err());
    }
}
