//! TLS against servers configured with the test CA (tests/fixtures/tls).

use crate::common;

use std::path::PathBuf;
use std::time::Duration;

use common::TestServer;
use natsio::tls::{Pem, TlsOptions};
use natsio::{Client, ErrorKind, Options};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tls")
        .join(name)
}

fn tls_server(extra: &str) -> TestServer {
    TestServer::with_config(&format!(
        "tls {{ cert_file: \"{}\", key_file: \"{}\", ca_file: \"{}\" {extra} }}",
        fixture("server-cert.pem").display(),
        fixture("server-key.pem").display(),
        fixture("ca.pem").display()
    ))
}

fn tls_opts(url: String, tls: TlsOptions) -> Options {
    Options {
        servers: vec![url],
        allow_reconnect: false,
        connect_timeout: Duration::from_secs(3),
        tls: Some(tls),
        ..Options::default()
    }
}

fn ca(name: &str) -> TlsOptions {
    TlsOptions {
        ca_file: Some(fixture(name)),
        ..TlsOptions::default()
    }
}

#[test]
fn verified_tls_with_the_right_ca() {
    let s = tls_server("");
    let c = Client::connect(tls_opts(s.url().replace("nats://", "tls://"), ca("ca.pem"))).unwrap();
    assert!(c.server_info().tls_required);
    let sub = c.subscribe("tls.x", None, Default::default()).unwrap();
    c.publish("tls.x", b"secret").unwrap();
    assert_eq!(
        sub.next_msg(Some(Duration::from_secs(5)))
            .unwrap()
            .expect("a message")
            .payload(),
        b"secret"
    );
    // A plain nats:// URL upgrades when the server requires TLS.
    let plain = Client::connect(tls_opts(s.url(), ca("ca.pem"))).unwrap();
    plain.flush(None).unwrap();
}

#[test]
fn wrong_ca_and_default_roots_are_rejected() {
    let s = tls_server("");
    for t in [ca("other-ca.pem"), TlsOptions::default()] {
        let e = Client::connect(tls_opts(s.url(), t)).err().unwrap();
        assert_eq!(e.kind(), ErrorKind::Io, "{e}");
        assert!(
            e.detail().contains("TLS") || e.detail().contains("certificate"),
            "{e}"
        );
    }
    // Without any TLS option, a server requiring TLS is still verified.
    let e = Client::connect(Options {
        servers: vec![s.url()],
        allow_reconnect: false,
        ..Options::default()
    })
    .err()
    .unwrap();
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
}

#[test]
fn mutual_tls_required_and_satisfied() {
    let s = tls_server(", verify: true");
    let mut t = ca("ca.pem");
    t.cert_file = Some(fixture("client-cert.pem"));
    t.key_file = Some(fixture("client-key.pem"));
    Client::connect(tls_opts(s.url(), t))
        .unwrap()
        .flush(None)
        .unwrap();
    // No client certificate: the server refuses.
    let e = Client::connect(tls_opts(s.url(), ca("ca.pem")))
        .and_then(|c| c.flush(None))
        .unwrap_err();
    // TLS 1.3: the server's alert arrives after the client's side of the
    // handshake, at the first read.
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert!(e.detail().contains("CertificateRequired"), "{e}");
}

#[test]
fn mutual_tls_from_certificates_in_memory() {
    let s = tls_server(", verify: true");
    let pem = |name: &str| Some(Pem(std::fs::read(fixture(name)).unwrap().into()));
    let t = TlsOptions {
        ca_pem: pem("ca.pem"),
        cert_pem: pem("client-cert.pem"),
        key_pem: pem("client-key.pem"),
        ..TlsOptions::default()
    };
    Client::connect(tls_opts(s.url(), t.clone()))
        .unwrap()
        .flush(None)
        .unwrap();
    // Another CA in memory does not verify the server.
    let other = TlsOptions {
        ca_pem: pem("other-ca.pem"),
        ..t.clone()
    };
    let e = Client::connect(tls_opts(s.url(), other)).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    // A file and memory for the same item, or text that is no PEM, are
    // config errors.
    let both = TlsOptions {
        ca_file: Some(fixture("ca.pem")),
        ..t.clone()
    };
    let e = Client::connect(tls_opts(s.url(), both)).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    let garbage = TlsOptions {
        key_pem: Some(Pem(b"not a key".to_vec().into())),
        ..t
    };
    let e = Client::connect(tls_opts(s.url(), garbage)).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
}

#[test]
fn hostname_override_and_tls_first() {
    let s = tls_server(", handshake_first: true");
    let mut t = ca("ca.pem");
    t.hostname = Some("localhost".into());
    t.handshake_first = true;
    Client::connect(tls_opts(s.url(), t))
        .unwrap()
        .flush(None)
        .unwrap();
    // A name the certificate does not carry fails verification.
    let mut t = ca("ca.pem");
    t.hostname = Some("not-in-the-cert.example".into());
    t.handshake_first = true;
    let e = Client::connect(tls_opts(s.url(), t)).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert!(
        e.detail()
            .contains("certificate not valid for name \"not-in-the-cert.example\""),
        "{e}"
    );
}

#[test]
fn bad_tls_files_are_config_errors() {
    let mut t = ca("ca.pem");
    t.cert_file = Some(fixture("client-cert.pem"));
    let e = Client::connect(tls_opts("tls://127.0.0.1:1".into(), t))
        .err()
        .unwrap();
    assert_eq!(e.kind(), ErrorKind::Config);
    let e = Client::connect(tls_opts("tls://127.0.0.1:1".into(), ca("missing.pem")))
        .err()
        .unwrap();
    assert_eq!(e.kind(), ErrorKind::Config);
}
