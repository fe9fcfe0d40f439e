//! The WebSocket transport against nats-server's websocket listener: the
//! core client and JetStream over ws:// and wss:// (issue 42).

use crate::common;

use std::path::PathBuf;
use std::time::Duration;

use common::TestServer;
use natsio::jetstream::{CreateAction, JetStream, JetStreamOptions, PublishOptions};
use natsio::tls::TlsOptions;
use natsio::{Client, ErrorKind, Options, SubOptions};

const T: Option<Duration> = Some(Duration::from_secs(5));

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tls")
        .join(name)
}

/// A server with a websocket listener (TLS with the test CA when `tls`)
/// and the client options for its ws:// or wss:// URL.
fn ws_server(tls: bool) -> (TestServer, Options) {
    let port = common::free_port();
    let listener = if tls {
        format!(
            "tls {{ cert_file: \"{}\", key_file: \"{}\" }}",
            fixture("server-cert.pem").display(),
            fixture("server-key.pem").display()
        )
    } else {
        "no_tls: true".to_string()
    };
    let s = TestServer::with_config(&format!(
        "websocket {{ listen: \"127.0.0.1:{port}\", {listener} }}"
    ));
    let scheme = if tls { "wss" } else { "ws" };
    let opts = Options {
        servers: vec![format!("{scheme}://127.0.0.1:{port}")],
        connect_timeout: Duration::from_secs(3),
        tls: tls.then(|| TlsOptions {
            ca_file: Some(fixture("ca.pem")),
            ..TlsOptions::default()
        }),
        ..Options::default()
    };
    (s, opts)
}

fn messaging_and_jetstream(tls: bool) {
    let (s, opts) = ws_server(tls);
    let ws = Client::connect(opts).unwrap();
    assert_eq!(ws.server_info().tls_required, tls);
    let tcp = Client::connect_url(&s.url()).unwrap();

    let sub = ws.subscribe("ws.x", None, SubOptions::default()).unwrap();
    ws.flush(None).unwrap();
    let big: Vec<u8> = (0..300_000u32).map(|i| i as u8).collect();
    tcp.publish("ws.x", &big).unwrap();
    assert_eq!(sub.next_msg(T).unwrap().expect("a message").payload(), big);
    ws.publish("ws.x", b"own").unwrap();
    assert_eq!(
        sub.next_msg(T).unwrap().expect("a message").payload(),
        b"own"
    );

    let js = JetStream::new(&ws, JetStreamOptions::default()).unwrap();
    js.create_stream(
        r#"{"name":"WS","subjects":["wsjs.>"]}"#,
        CreateAction::Create,
    )
    .wait()
    .unwrap();
    for i in 1..=3u64 {
        let ack = js
            .publish("wsjs.a", b"stored", &PublishOptions::default())
            .wait()
            .unwrap();
        assert_eq!((ack.stream.as_str(), ack.seq), ("WS", i));
    }
    drop(js);
    ws.close();
}

#[test]
fn messaging_and_jetstream_over_ws() {
    messaging_and_jetstream(false);
}

#[test]
fn messaging_and_jetstream_over_wss() {
    messaging_and_jetstream(true);
}

#[test]
fn a_nats_port_is_no_websocket_endpoint() {
    let s = TestServer::start();
    let opts = Options {
        servers: vec![format!("ws://127.0.0.1:{}", s.port())],
        allow_reconnect: false,
        ..Options::default()
    };
    let e = Client::connect(opts).err().expect("a failure");
    assert_eq!(e.kind(), ErrorKind::Websocket, "{e}");
    assert!(e.detail().contains("not an HTTP response"), "{e}");
}
