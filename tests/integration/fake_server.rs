//! Protocol edge cases a real server never produces, against a scripted
//! fake server on loopback: stale connections, -ERR classification, frames
//! split across writes, malformed input.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use natsio::options::EventKind;
use natsio::{Client, ConnState, ErrorKind, Options, SubOptions};

const INFO: &str = "INFO {\"server_id\":\"FAKE\",\"version\":\"2.14.3\",\"proto\":1,\"headers\":true,\"max_payload\":1048576}\r\n";

/// Accepts one client, completes the handshake, then runs `script`.
pub(super) fn fake_server(
    script: impl FnOnce(BufReader<TcpStream>, TcpStream) + Send + 'static,
) -> String {
    let script = Mutex::new(Some(script));
    fake_server_for(1, move |_, rd, sock| {
        let script = script.lock().unwrap().take().expect("one connection");
        script(rd, sock)
    })
}

/// Accepts `connections` clients one after the other, completing each
/// handshake, and runs `script` with each one's index.
pub(super) fn fake_server_for(
    connections: usize,
    script: impl Fn(usize, BufReader<TcpStream>, TcpStream) + Send + 'static,
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("nats://{}", listener.local_addr().unwrap());
    thread::spawn(move || {
        for i in 0..connections {
            let (mut sock, _) = listener.accept().unwrap();
            sock.write_all(INFO.as_bytes()).unwrap();
            let mut rd = BufReader::new(sock.try_clone().unwrap());
            let mut line = String::new();
            rd.read_line(&mut line).unwrap();
            assert!(line.starts_with("CONNECT {"), "{line}");
            line.clear();
            rd.read_line(&mut line).unwrap();
            assert_eq!(line, "PING\r\n");
            sock.write_all(b"PONG\r\n").unwrap();
            script(i, rd, sock);
        }
    });
    url
}

/// Answers PINGs until the client goes away.
fn serve_pings(mut rd: BufReader<TcpStream>, mut sock: TcpStream) {
    let mut line = String::new();
    while rd.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
        if line == "PING\r\n" {
            let _ = sock.write_all(b"PONG\r\n");
        }
        line.clear();
    }
}

/// Fake servers accept one connection: no reconnecting to them.
pub(super) fn options(url: &str) -> Options {
    Options {
        servers: vec![url.to_string()],
        allow_reconnect: false,
        ..Options::default()
    }
}

fn wait_closed(c: &Client) -> bool {
    let end = Instant::now() + Duration::from_secs(5);
    while Instant::now() < end {
        if c.status() == ConnState::Closed {
            return true;
        }
        thread::sleep(Duration::from_millis(10));
    }
    false
}

pub(super) fn error_recorder(o: &mut Options) -> Arc<Mutex<Vec<ErrorKind>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    o.error_callback = Some(Arc::new(move |ev| s2.lock().unwrap().push(ev.error.kind())));
    seen
}

/// Records errors like `error_recorder`, and whether the Closed event has
/// been delivered. Errors and events run in order on one dispatcher thread
/// and Closed is always the last event, so once it is seen every error the
/// client reported while closing has been recorded: a positive barrier, where
/// a short sleep after the status turns Closed is not.
fn close_recorder(o: &mut Options) -> (Arc<Mutex<Vec<ErrorKind>>>, Arc<AtomicBool>) {
    let seen = error_recorder(o);
    let closed = Arc::new(AtomicBool::new(false));
    let c2 = closed.clone();
    o.event_callback = Some(Arc::new(move |ev| {
        if ev.kind == EventKind::Closed {
            c2.store(true, Ordering::SeqCst);
        }
    }));
    (seen, closed)
}

#[test]
fn unanswered_pings_make_the_connection_stale() {
    let url = fake_server(|mut rd, _sock| {
        // Read and ignore everything: PINGs are never answered.
        let mut line = String::new();
        while rd.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
            line.clear();
        }
    });
    let mut o = options(&url);
    o.ping_interval = Duration::from_millis(50);
    o.max_outstanding_pings = 2;
    let (seen, closed) = close_recorder(&mut o);
    let c = Client::connect(o).unwrap();
    assert!(
        wait_closed(&c),
        "client did not detect the stale connection"
    );
    assert!(
        wait_until(|| closed.load(Ordering::SeqCst)),
        "no Closed event"
    );
    assert!(
        seen.lock().unwrap().contains(&ErrorKind::StaleConnection),
        "{:?}",
        seen.lock().unwrap()
    );
}

#[test]
fn answered_pings_keep_the_connection() {
    let url = fake_server(|mut rd, mut sock| {
        let mut line = String::new();
        while rd.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
            if line == "PING\r\n" {
                let _ = sock.write_all(b"PONG\r\n");
            }
            line.clear();
        }
    });
    let mut o = options(&url);
    // Generous: a loaded CI machine may delay the fake server's PONGs.
    o.ping_interval = Duration::from_millis(100);
    o.max_outstanding_pings = 5;
    let c = Client::connect(o).unwrap();
    // An absence: no stale-connection close over 7 ping intervals.
    thread::sleep(Duration::from_millis(700));
    assert_eq!(c.status(), ConnState::Connected);
}

#[test]
fn non_fatal_err_is_reported_and_connection_stays() {
    let url = fake_server(|mut rd, mut sock| {
        sock.write_all(b"-ERR 'Permissions Violation for Publish to \"secret\"'\r\n")
            .unwrap();
        let mut line = String::new();
        while rd.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
            if line == "PING\r\n" {
                let _ = sock.write_all(b"PONG\r\n");
            }
            line.clear();
        }
    });
    let mut o = options(&url);
    let seen = error_recorder(&mut o);
    let c = Client::connect(o).unwrap();
    // The PONG follows the -ERR on the wire: the error has been read, and
    // its callback is queued or has run.
    c.flush(Some(Duration::from_secs(5))).unwrap();
    assert!(
        wait_until(|| !seen.lock().unwrap().is_empty()),
        "not reported"
    );
    assert_eq!(c.status(), ConnState::Connected);
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        &[ErrorKind::PermissionsViolation]
    );
}

#[test]
fn fatal_err_closes_and_fails_waiters() {
    let url = fake_server(|mut rd, mut sock| {
        let mut line = String::new();
        rd.read_line(&mut line).unwrap(); // the flush's PING: never answered
        sock.write_all(b"-ERR 'Authorization Violation'\r\n")
            .unwrap();
        thread::sleep(Duration::from_millis(200));
    });
    let mut o = options(&url);
    let (seen, closed) = close_recorder(&mut o);
    let c = Client::connect(o).unwrap();
    let e = c.flush(Some(Duration::from_secs(5))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ConnectionClosed);
    assert!(wait_closed(&c));
    assert!(
        wait_until(|| closed.load(Ordering::SeqCst)),
        "no Closed event"
    );
    assert!(seen
        .lock()
        .unwrap()
        .contains(&ErrorKind::AuthorizationViolation));
}

#[test]
fn frames_split_byte_by_byte_are_reassembled() {
    let url = fake_server(|mut rd, mut sock| {
        let mut line = String::new();
        // SUB then PING from the flush.
        rd.read_line(&mut line).unwrap();
        assert!(line.starts_with("SUB split 1"), "{line}");
        line.clear();
        rd.read_line(&mut line).unwrap();
        let frames = b"MSG split 1 5\r\nhello\r\nHMSG split 1 r.1 18 21\r\nNATS/1.0\r\nK: v\r\n\r\nabc\r\nPONG\r\n";
        for b in frames.iter() {
            sock.write_all(&[*b]).unwrap();
            sock.flush().unwrap();
        }
        thread::sleep(Duration::from_millis(500));
    });
    let c = Client::connect(options(&url)).unwrap();
    let sub = c.subscribe("split", None, SubOptions::default()).unwrap();
    c.flush(Some(Duration::from_secs(5))).unwrap();
    let m = sub
        .next_msg(Some(Duration::from_secs(2)))
        .unwrap()
        .expect("a message");
    assert_eq!(m.payload(), b"hello");
    let m = sub
        .next_msg(Some(Duration::from_secs(2)))
        .unwrap()
        .expect("a message");
    assert_eq!((m.reply(), m.payload()), (Some("r.1"), &b"abc"[..]));
    assert_eq!(m.headers().unwrap().get("K"), Some("v"));
}

#[test]
fn malformed_frames_close_the_connection_with_a_parser_error() {
    for garbage in [
        &b"BOGUS frame\r\n"[..],
        b"MSG a 1 notanumber\r\n",
        &[b'x'; 5000][..],
    ] {
        let g = garbage.to_vec();
        let url = fake_server(move |_rd, mut sock| {
            sock.write_all(&g).unwrap();
            thread::sleep(Duration::from_millis(300));
        });
        let mut o = options(&url);
        let (seen, closed) = close_recorder(&mut o);
        let c = Client::connect(o).unwrap();
        assert!(wait_closed(&c));
        assert!(
            wait_until(|| closed.load(Ordering::SeqCst)),
            "no Closed event"
        );
        let kinds = seen.lock().unwrap().clone();
        assert!(
            kinds.contains(&ErrorKind::Parser)
                || kinds.contains(&ErrorKind::MaxControlLineExceeded),
            "{kinds:?}"
        );
    }
}

#[test]
fn connect_fails_cleanly_on_refused_and_silent_servers() {
    // Nothing listening.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = Client::connect_url(&format!("nats://127.0.0.1:{port}"))
        .err()
        .unwrap();
    assert_eq!(e.kind(), ErrorKind::NoServers);
    // Accepts but never sends INFO: the connect timeout applies.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("nats://{}", listener.local_addr().unwrap());
    let mut o = options(&url);
    o.connect_timeout = Duration::from_millis(200);
    let e = Client::connect(o).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    drop(listener);
}

/// Every `-ERR` a connected client can get, as nats-server spells it, with
/// the kind it surfaces as and whether the server closes the connection
/// after it (src/error.rs classifies them; this checks what the client
/// does with each).
const SERVER_ERRORS: &[(&str, ErrorKind, bool)] = &[
    (
        "Permissions Violation for Publish to \"deny.x\"",
        ErrorKind::PermissionsViolation,
        false,
    ),
    (
        "Permissions Violation for Subscription to \"deny.x\"",
        ErrorKind::PermissionsViolation,
        false,
    ),
    (
        "maximum subscriptions exceeded",
        ErrorKind::MaxSubscriptionsExceeded,
        false,
    ),
    ("Invalid Subject", ErrorKind::BadSubject, false),
    ("Stale Connection", ErrorKind::StaleConnection, true),
    (
        "Authorization Violation",
        ErrorKind::AuthorizationViolation,
        true,
    ),
    (
        "User Authentication Expired",
        ErrorKind::AuthenticationExpired,
        true,
    ),
    (
        "User Authentication Revoked",
        ErrorKind::AuthenticationExpired,
        true,
    ),
    (
        "Account Authentication Expired",
        ErrorKind::AuthenticationExpired,
        true,
    ),
    (
        "Maximum Payload Violation",
        ErrorKind::MaxPayloadExceeded,
        true,
    ),
    (
        "Maximum Control Line Exceeded",
        ErrorKind::MaxControlLineExceeded,
        true,
    ),
    ("maximum connections exceeded", ErrorKind::Server, true),
    ("Unknown Protocol Operation", ErrorKind::Server, true),
];

/// An error that keeps the connection reaches the error callback, and the
/// connection serves on; after one the server closes the connection on,
/// the client reports that error as the cause of DISCONNECTED and
/// reconnects.
#[test]
fn each_server_err_keeps_or_ends_the_connection_as_classified() {
    for &(text, kind, fatal) in SERVER_ERRORS {
        let frame = format!("-ERR '{text}'\r\n");
        let url = fake_server_for(if fatal { 2 } else { 1 }, move |i, rd, mut sock| {
            if i == 0 {
                sock.write_all(frame.as_bytes()).unwrap();
                if fatal {
                    // As nats-server does after such an error.
                    return;
                }
            }
            serve_pings(rd, sock);
        });
        let mut o = options(&url);
        o.allow_reconnect = true;
        o.reconnect_time_wait = Duration::from_millis(10);
        o.reconnect_time_wait_max = Duration::from_millis(10);
        o.reconnect_jitter = Duration::ZERO;
        let errors = error_recorder(&mut o);
        let events = Arc::new(Mutex::new(Vec::new()));
        let ev2 = events.clone();
        o.event_callback = Some(Arc::new(move |ev| {
            ev2.lock()
                .unwrap()
                .push((ev.kind, ev.error.as_ref().map(|e| e.kind())))
        }));
        let c = Client::connect(o).unwrap();
        if fatal {
            assert!(
                wait_until(|| events.lock().unwrap().len() >= 3),
                "{text}: {:?}",
                events.lock().unwrap()
            );
            assert_eq!(
                events.lock().unwrap().as_slice(),
                &[
                    (EventKind::Connected, None),
                    (EventKind::Disconnected, Some(kind)),
                    (EventKind::Reconnected, None),
                ],
                "{text}"
            );
        } else {
            // The PONG follows the -ERR on the wire: it has been read.
            c.flush(Some(Duration::from_secs(5))).unwrap();
            assert!(
                wait_until(|| !errors.lock().unwrap().is_empty()),
                "{text}: not reported"
            );
            assert_eq!(errors.lock().unwrap().as_slice(), &[kind], "{text}");
            assert_eq!(
                events.lock().unwrap().as_slice(),
                &[(EventKind::Connected, None)],
                "{text}"
            );
        }
        assert_eq!(c.status(), ConnState::Connected, "{text}");
        c.flush(Some(Duration::from_secs(5))).unwrap();
    }
}

pub(super) fn wait_until(mut pred: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end {
        if pred() {
            return true;
        }
        thread::sleep(Duration::from_millis(5));
    }
    pred()
}

/// Reads protocol lines until one starts with "SUB ": its sid. Answers the
/// PINGs met on the way.
fn read_sub_sid(rd: &mut BufReader<TcpStream>, sock: &mut TcpStream) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(rd.read_line(&mut line).unwrap() > 0, "closed before SUB");
        if line == "PING\r\n" {
            sock.write_all(b"PONG\r\n").unwrap();
        }
        if let Some(rest) = line.strip_prefix("SUB ") {
            return rest.split_whitespace().last().unwrap().to_string();
        }
    }
}

/// Reads lines until the client closes its side: the lines, and whether
/// the close was a clean FIN (a RST, sent when a client drops a socket with
/// unread bytes, makes the read fail instead).
fn read_to_close(rd: &mut BufReader<TcpStream>, sock: &mut TcpStream) -> (Vec<String>, bool) {
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        match rd.read_line(&mut line) {
            Ok(0) => return (lines, true),
            Ok(_) => {
                if line == "PING\r\n" {
                    let _ = sock.write_all(b"PONG\r\n");
                }
                lines.push(line);
            }
            Err(_) => return (lines, false),
        }
    }
}

fn event_recorder(o: &mut Options) -> Arc<Mutex<Vec<EventKind>>> {
    let events = Arc::new(Mutex::new(Vec::new()));
    let ev2 = events.clone();
    o.event_callback = Some(Arc::new(move |ev| ev2.lock().unwrap().push(ev.kind)));
    events
}

/// The lame-duck INFO and a message behind it come in one TCP write: the
/// message is delivered, the event reported, and the connection kept
/// (publishes still go out on it) until the server closes it.
#[test]
fn lame_duck_info_keeps_reading_and_publishing_until_the_server_closes() {
    let (tx, rx) = std::sync::mpsc::channel();
    let url = fake_server(move |mut rd, mut sock| {
        let sid = read_sub_sid(&mut rd, &mut sock);
        let ldm = INFO.replace("\"max_payload\"", "\"ldm\":true,\"max_payload\"");
        sock.write_all(format!("{ldm}MSG ldm.x {sid} 5\r\nhello\r\n").as_bytes())
            .unwrap();
        // The client keeps publishing here: wait for its PUB, then close.
        let mut line = String::new();
        while rd.read_line(&mut line).unwrap() > 0 {
            if line.starts_with("PUB ldm.after ") {
                tx.send(()).unwrap();
                return;
            }
            if line == "PING\r\n" {
                sock.write_all(b"PONG\r\n").unwrap();
            }
            line.clear();
        }
    });
    let mut o = options(&url);
    let events = event_recorder(&mut o);
    let c = Client::connect(o).unwrap();
    let sub = c.subscribe("ldm.x", None, SubOptions::default()).unwrap();
    c.flush(Some(Duration::from_secs(5))).unwrap();
    let m = sub
        .next_msg(Some(Duration::from_secs(5)))
        .unwrap()
        .expect("the message behind the lame-duck INFO");
    assert_eq!(m.payload(), b"hello");
    assert!(wait_until(|| events
        .lock()
        .unwrap()
        .contains(&EventKind::LameDuck)));
    assert_eq!(c.status(), ConnState::Connected);
    c.publish("ldm.after", b"x").unwrap();
    c.flush(Some(Duration::from_secs(5))).unwrap_or(());
    rx.recv_timeout(Duration::from_secs(5))
        .expect("the publish after the lame-duck INFO reached the same server");
    assert!(wait_closed(&c), "the server's close ends the connection");
    assert!(wait_until(|| events.lock().unwrap().len() >= 3));
    assert_eq!(
        events.lock().unwrap().as_slice(),
        &[EventKind::Connected, EventKind::LameDuck, EventKind::Closed]
    );
}

/// With another server in the pool the client connects to it, then lets
/// the lame-duck one go cleanly: everything published before the move
/// reaches the old server followed by a FIN (no RST), the message behind
/// the INFO is delivered, and the subscription moves to the new server.
#[test]
fn lame_duck_moves_to_the_next_server_after_reading_the_old_one_to_its_end() {
    let (old_tx, old_rx) = std::sync::mpsc::channel();
    let old = fake_server(move |mut rd, mut sock| {
        let sid = read_sub_sid(&mut rd, &mut sock);
        let ldm = INFO.replace("\"max_payload\"", "\"ldm\":true,\"max_payload\"");
        sock.write_all(format!("{ldm}MSG ldm.y {sid} 5\r\nhello\r\n").as_bytes())
            .unwrap();
        old_tx.send(read_to_close(&mut rd, &mut sock)).unwrap();
    });
    let (new_tx, new_rx) = std::sync::mpsc::channel();
    let new = fake_server(move |mut rd, mut sock| {
        let sid = read_sub_sid(&mut rd, &mut sock);
        new_tx.send(sid).unwrap();
        serve_pings(rd, sock);
    });
    let mut o = options(&old);
    o.servers.push(new.clone());
    o.no_randomize = true;
    o.allow_reconnect = true;
    let events = event_recorder(&mut o);
    let c = Client::connect(o).unwrap();
    let sub = c.subscribe("ldm.y", None, SubOptions::default()).unwrap();
    for i in 0..200 {
        c.publish("ldm.before", format!("{i}").as_bytes()).unwrap();
    }
    let m = sub
        .next_msg(Some(Duration::from_secs(5)))
        .unwrap()
        .expect("the message behind the lame-duck INFO");
    assert_eq!(m.payload(), b"hello");
    new_rx
        .recv_timeout(Duration::from_secs(5))
        .expect("the subscription was re-sent to the next server");
    let (lines, clean) = old_rx
        .recv_timeout(Duration::from_secs(5))
        .expect("the old connection was closed");
    assert!(clean, "the old connection ended with a RST");
    let pubs = lines
        .iter()
        .filter(|l| l.starts_with("PUB ldm.before "))
        .count();
    // Each publish reached exactly one server: the old one, or (made during
    // the move) the new one. The old one saw a prefix, whole.
    assert!(pubs <= 200, "{pubs}");
    assert!(wait_until(
        || c.status() == ConnState::Connected && c.connected_url().as_deref() == Some(new.as_str())
    ));
    assert!(wait_until(|| events.lock().unwrap().len() >= 4));
    assert_eq!(
        events.lock().unwrap().as_slice(),
        &[
            EventKind::Connected,
            EventKind::LameDuck,
            EventKind::Disconnected,
            EventKind::Reconnected
        ]
    );
    // "hello" came once.
    assert_eq!(
        sub.next_msg(Some(Duration::from_millis(100)))
            .unwrap_err()
            .kind(),
        ErrorKind::Timeout
    );
}

/// A fatal -ERR with a message behind it in the same write: the message is
/// delivered, and the client closes with a FIN, reading to the end.
#[test]
fn fatal_err_delivers_what_follows_it_and_closes_cleanly() {
    let (tx, rx) = std::sync::mpsc::channel();
    let url = fake_server_for(2, move |i, mut rd, mut sock| {
        if i == 1 {
            return serve_pings(rd, sock);
        }
        let sid = read_sub_sid(&mut rd, &mut sock);
        sock.write_all(
            format!("MSG e.x {sid} 1\r\n1\r\n-ERR 'Stale Connection'\r\nMSG e.x {sid} 1\r\n2\r\n")
                .as_bytes(),
        )
        .unwrap();
        tx.send(read_to_close(&mut rd, &mut sock).1).unwrap();
    });
    let mut o = options(&url);
    o.allow_reconnect = true;
    o.reconnect_time_wait = Duration::from_millis(10);
    let c = Client::connect(o).unwrap();
    let sub = c.subscribe("e.x", None, SubOptions::default()).unwrap();
    c.flush(Some(Duration::from_secs(5))).unwrap_or(());
    for want in [b"1", b"2"] {
        let m = sub
            .next_msg(Some(Duration::from_secs(5)))
            .unwrap()
            .expect("a message");
        assert_eq!(m.payload(), want);
    }
    assert!(
        rx.recv_timeout(Duration::from_secs(5)).unwrap(),
        "closed with a RST"
    );
    assert!(wait_until(|| c.stats().reconnects == 1));
}
