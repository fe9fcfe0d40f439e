//! TLS with rustls: client configuration from files or memory, verified by default
//! (there is no insecure mode), and the upgrade of a TCP stream.

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use crate::error::{Error, ErrorKind, Result};
use crate::ws::WsStream;

/// PEM text held in memory (certificates or a private key). Its bytes
/// are never printed.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Pem(pub Arc<[u8]>);

impl std::fmt::Debug for Pem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pem({} bytes)", self.0.len())
    }
}

/// TLS settings. Setting any of them requires TLS for every server. Each
/// of the CA, the certificate chain and the key comes from a file or from
/// memory, not both.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// PEM file of trusted CAs; the system's roots when neither it nor
    /// `ca_pem` is set.
    pub ca_file: Option<PathBuf>,
    /// PEM certificate chain and key for mutual TLS.
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
    /// The same three as PEM text in memory.
    pub ca_pem: Option<Pem>,
    pub cert_pem: Option<Pem>,
    pub key_pem: Option<Pem>,
    /// Name to verify the server certificate against instead of the URL host.
    pub hostname: Option<String>,
    /// Start TLS before the server's INFO (server `handshake_first`).
    pub handshake_first: bool,
}

fn tls_err(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::Config, msg)
}

/// Where one PEM item comes from: a file (read on every connect) or memory.
enum PemSource<'a> {
    File(&'a Path),
    Memory(&'a [u8]),
}

impl<'a> PemSource<'a> {
    /// The source of an item set as `file` or `pem`; `None` when neither
    /// is; a config error when both are.
    fn of(file: &'a Option<PathBuf>, pem: &'a Option<Pem>, what: &str) -> Result<Option<Self>> {
        match (file, pem) {
            (Some(_), Some(_)) => Err(tls_err(format!(
                "tls: the {what} is set both as a file and in memory"
            ))),
            (Some(f), None) => Ok(Some(PemSource::File(f))),
            (None, Some(p)) => Ok(Some(PemSource::Memory(&p.0))),
            (None, None) => Ok(None),
        }
    }

    fn name(&self) -> String {
        match self {
            PemSource::File(f) => f.display().to_string(),
            PemSource::Memory(_) => "memory".to_string(),
        }
    }

    fn certs(&self) -> Result<Vec<CertificateDer<'static>>> {
        let bad = |e: rustls::pki_types::pem::Error| {
            tls_err(format!("tls: bad certificate in {}: {e}", self.name()))
        };
        match self {
            PemSource::File(f) => CertificateDer::pem_file_iter(f)
                .map_err(|e| tls_err(format!("tls: cannot read {}: {e}", f.display())))?
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(bad),
            PemSource::Memory(b) => CertificateDer::pem_slice_iter(b)
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(bad),
        }
    }

    fn key(&self) -> Result<PrivateKeyDer<'static>> {
        match self {
            PemSource::File(f) => PrivateKeyDer::from_pem_file(f)
                .map_err(|e| tls_err(format!("tls: cannot read key {}: {e}", f.display()))),
            PemSource::Memory(b) => PrivateKeyDer::from_pem_slice(b)
                .map_err(|e| tls_err(format!("tls: bad key in memory: {e}"))),
        }
    }
}

impl TlsOptions {
    pub(crate) fn validate(&self) -> Result<()> {
        let cert = self.cert_file.is_some() || self.cert_pem.is_some();
        let key = self.key_file.is_some() || self.key_pem.is_some();
        if cert != key {
            return Err(tls_err("tls: the certificate and its key go together"));
        }
        self.client_config().map(|_| ())
    }

    /// Builds the rustls configuration (re-read on every connect, so
    /// rotated files are picked up).
    pub(crate) fn client_config(&self) -> Result<Arc<ClientConfig>> {
        let mut roots = RootCertStore::empty();
        match PemSource::of(&self.ca_file, &self.ca_pem, "CA")? {
            Some(ca) => {
                for c in ca.certs()? {
                    roots.add(c).map_err(|e| {
                        tls_err(format!(
                            "tls: unusable CA certificate in {}: {e}",
                            ca.name()
                        ))
                    })?;
                }
                if roots.is_empty() {
                    return Err(tls_err(format!("tls: no CA certificate in {}", ca.name())));
                }
            }
            None => {
                for c in rustls_native_certs::load_native_certs().certs {
                    let _ = roots.add(c);
                }
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| tls_err(format!("tls: {e}")))?
            .with_root_certificates(roots);
        let cert = PemSource::of(&self.cert_file, &self.cert_pem, "certificate")?;
        let key = PemSource::of(&self.key_file, &self.key_pem, "key")?;
        let config = match (cert, key) {
            (Some(cert), Some(key)) => builder
                .with_client_auth_cert(cert.certs()?, key.key()?)
                .map_err(|e| tls_err(format!("tls: client certificate rejected: {e}")))?,
            _ => builder.with_no_client_auth(),
        };
        Ok(Arc::new(config))
    }
}

/// Runs the TLS handshake over `tcp`, verifying the server as `host`.
pub(crate) async fn upgrade(
    tcp: TcpStream,
    host: &str,
    opts: &TlsOptions,
) -> Result<TlsStream<TcpStream>> {
    let name = opts.hostname.as_deref().unwrap_or(host).to_string();
    let server_name = ServerName::try_from(name.clone())
        .map_err(|_| tls_err(format!("tls: invalid server name {name:?}")))?;
    TlsConnector::from(opts.client_config()?)
        .connect(server_name, tcp)
        .await
        .map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("TLS handshake with {name} failed: {e}"),
            )
        })
}

/// A connection's byte stream: plain TCP, TLS over TCP, or WebSocket
/// frames over either.
pub(crate) enum Transport {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
    Ws(Box<WsStream<Transport>>),
}

impl AsyncRead for Transport {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Transport::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
            Transport::Ws(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Transport {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Transport::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
            Transport::Ws(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Transport::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
            Transport::Ws(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Transport::Plain(s) => s.is_write_vectored(),
            Transport::Tls(s) => s.is_write_vectored(),
            Transport::Ws(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Transport::Plain(s) => Pin::new(s).poll_flush(cx),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
            Transport::Ws(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Transport::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
            Transport::Ws(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// The read half of a `Transport`. Plain TCP splits without a lock.
pub(crate) enum ReadHalf {
    Plain(tokio::net::tcp::OwnedReadHalf),
    Tls(tokio::io::ReadHalf<TlsStream<TcpStream>>),
    Ws(tokio::io::ReadHalf<WsStream<Transport>>),
}

/// The write half of a `Transport`.
pub(crate) enum WriteHalf {
    Plain(tokio::net::tcp::OwnedWriteHalf),
    Tls(tokio::io::WriteHalf<TlsStream<TcpStream>>),
    Ws(tokio::io::WriteHalf<WsStream<Transport>>),
}

impl Transport {
    /// Whether the bytes travel over TLS (tls://, or wss://).
    pub(crate) fn is_tls(&self) -> bool {
        match self {
            Transport::Plain(_) => false,
            Transport::Tls(_) => true,
            Transport::Ws(s) => s.inner().is_tls(),
        }
    }

    pub(crate) fn split(self) -> (ReadHalf, WriteHalf) {
        match self {
            Transport::Plain(s) => {
                let (r, w) = s.into_split();
                (ReadHalf::Plain(r), WriteHalf::Plain(w))
            }
            Transport::Tls(s) => {
                let (r, w) = tokio::io::split(*s);
                (ReadHalf::Tls(r), WriteHalf::Tls(w))
            }
            // The halves share the stream (a lock): the reading side
            // answers pings on the writing side's connection.
            Transport::Ws(s) => {
                let (r, w) = tokio::io::split(*s);
                (ReadHalf::Ws(r), WriteHalf::Ws(w))
            }
        }
    }
}

impl AsyncRead for ReadHalf {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            ReadHalf::Plain(s) => Pin::new(s).poll_read(cx, buf),
            ReadHalf::Tls(s) => Pin::new(s).poll_read(cx, buf),
            ReadHalf::Ws(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for WriteHalf {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            WriteHalf::Plain(s) => Pin::new(s).poll_write(cx, buf),
            WriteHalf::Tls(s) => Pin::new(s).poll_write(cx, buf),
            WriteHalf::Ws(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            WriteHalf::Plain(s) => Pin::new(s).poll_flush(cx),
            WriteHalf::Tls(s) => Pin::new(s).poll_flush(cx),
            WriteHalf::Ws(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            WriteHalf::Plain(s) => Pin::new(s).poll_shutdown(cx),
            WriteHalf::Tls(s) => Pin::new(s).poll_shutdown(cx),
            WriteHalf::Ws(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}
