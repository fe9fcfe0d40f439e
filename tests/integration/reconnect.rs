//! Surviving server restarts: reconnect, resubscribe, buffered publishes,
//! lifecycle events, lame-duck moves, force_reconnect.

use crate::common;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{wait_until, TestServer};
use natsio::log::LogLevel;
use natsio::options::{Event, EventKind};
use natsio::{Client, ConnState, ErrorKind, Options, SubOptions};

const T: Option<Duration> = Some(Duration::from_secs(5));

fn fast_reconnect(urls: &[String]) -> (Options, Arc<Mutex<Vec<EventKind>>>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let e2 = events.clone();
    let o = Options {
        servers: urls.to_vec(),
        reconnect_time_wait: Duration::from_millis(50),
        reconnect_time_wait_max: Duration::from_millis(200),
        reconnect_jitter: Duration::from_millis(10),
        max_reconnect_attempts: -1,
        no_randomize: true,
        // Failed attempts are left out: as many as timing makes.
        event_callback: Some(Arc::new(move |ev: &Event| {
            if ev.kind != EventKind::ReconnectFailed {
                e2.lock().unwrap().push(ev.kind)
            }
        })),
        ..Options::default()
    };
    (o, events)
}

fn recv_n(sub: &natsio::Subscription, n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|_| {
            sub.next_msg(T)
                .expect("message")
                .expect("a message")
                .payload()
                .to_vec()
        })
        .collect()
}

#[test]
fn restart_resumes_subscriptions_and_sends_buffered_publishes() {
    let mut s = TestServer::start();
    let (mut o, events) = fast_reconnect(&[s.url()]);
    // A logger at warn sees the lost connection, and no info line.
    let lines = Arc::new(Mutex::new(Vec::new()));
    let l2 = lines.clone();
    o.log_level = LogLevel::Warn;
    o.log_callback = Some(Arc::new(move |level: LogLevel, text: &str| {
        l2.lock().unwrap().push((level, text.to_string()))
    }));
    let c = Client::connect(o).unwrap();
    let sub = c.subscribe("rs.>", None, SubOptions::default()).unwrap();
    let limited = c.subscribe("lim", None, SubOptions::default()).unwrap();
    limited.unsubscribe_after(5).unwrap();
    c.flush(None).unwrap();
    for i in 0..3 {
        c.publish("rs.before", format!("b{i}").as_bytes()).unwrap();
        c.publish("lim", b"x").unwrap();
    }
    c.flush(None).unwrap();
    assert_eq!(recv_n(&sub, 3), [b"b0", b"b1", b"b2"]);
    assert_eq!(recv_n(&limited, 3).len(), 3);

    s.kill();
    assert!(wait_until(Duration::from_secs(5), || c.status()
        == ConnState::Reconnecting));
    // Accepted while disconnected: buffered and sent after the reconnect.
    for i in 0..100 {
        c.publish("rs.during", format!("d{i}").as_bytes()).unwrap();
    }
    s.restart();
    assert!(wait_until(Duration::from_secs(10), || c.status()
        == ConnState::Connected));
    c.flush(T).unwrap();
    let got = recv_n(&sub, 100);
    let want: Vec<Vec<u8>> = (0..100).map(|i| format!("d{i}").into_bytes()).collect();
    assert_eq!(got, want);
    // The auto-unsubscribe limit carried over: 2 more of 5, not 5 more.
    for _ in 0..5 {
        c.publish("lim", b"y").unwrap();
    }
    c.flush(T).unwrap();
    assert_eq!(recv_n(&limited, 2).len(), 2);
    assert!(
        limited.next_msg(T).unwrap().is_none(),
        "the subscription ends after its 5th message"
    );
    // Requests work through the re-created reply subscription.
    let responder = Client::connect_url(&s.url()).unwrap();
    let rsub = responder
        .subscribe("rs.svc", None, SubOptions::default())
        .unwrap();
    responder.flush(None).unwrap();
    let req = std::thread::spawn({
        let c2 = Client::connect_url(&s.url()).unwrap();
        move || {
            let m = rsub.next_msg(T).unwrap().expect("a message");
            c2.respond(&m, None, b"pong").unwrap();
            c2.flush(None).unwrap();
        }
    });
    assert_eq!(
        c.request("rs.svc", None, b"ping", T).unwrap().payload(),
        b"pong"
    );
    req.join().unwrap();
    assert_eq!(c.stats().reconnects, 1);
    c.close();
    assert!(wait_until(Duration::from_secs(2), || events
        .lock()
        .unwrap()
        .last()
        == Some(&EventKind::Closed)));
    assert_eq!(
        events.lock().unwrap().as_slice(),
        &[
            EventKind::Connected,
            EventKind::Disconnected,
            EventKind::Reconnected,
            EventKind::Closed
        ]
    );
    let lines = lines.lock().unwrap();
    assert!(
        lines
            .iter()
            .any(|(l, t)| *l == LogLevel::Warn && t.starts_with("disconnected")),
        "{lines:?}"
    );
    assert!(lines.iter().all(|(l, _)| *l <= LogLevel::Warn), "{lines:?}");
}

/// The reconnect buffer counts wire bytes (the header's documented
/// accounting, as in nats.go): a publish of 100 bytes to "ovf" takes its
/// whole frame, "PUB ovf 100\r\n" + payload + "\r\n" = 115 bytes.
const OVF_FRAME: usize = "PUB ovf 100\r\n".len() + 100 + 2;

#[test]
fn reconnect_buffer_holds_exactly_its_wire_bytes_and_loses_nothing_accepted() {
    // Room for exactly 35 frames; counting payload bytes only, 40 would fit.
    const FIT: usize = 35;
    let mut s = TestServer::start();
    let (mut o, _events) = fast_reconnect(&[s.url()]);
    o.reconnect_buf_size = (FIT * OVF_FRAME) as i64;
    let c = Client::connect(o).unwrap();
    let sub = c.subscribe("ovf", None, SubOptions::default()).unwrap();
    c.flush(None).unwrap();
    s.kill();
    assert!(wait_until(Duration::from_secs(5), || c.status()
        == ConnState::Reconnecting));
    // Fixed-size payloads that say which publish they are.
    let payload = |i: usize| format!("{i:0>100}").into_bytes();
    for i in 0..FIT {
        c.publish("ovf", &payload(i))
            .unwrap_or_else(|e| panic!("publish {i} of {FIT} did not fit: {e}"));
    }
    let err = c.publish("ovf", &payload(FIT)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ReconnectBufExceeded);
    // Refused for good while the buffer is full: also the smallest frame
    // ("PUB ovf 0\r\n\r\n", 13 bytes, more than the 0 left).
    assert_eq!(
        c.publish("ovf", b"").unwrap_err().kind(),
        ErrorKind::ReconnectBufExceeded
    );
    s.restart();
    assert!(wait_until(Duration::from_secs(10), || c.status()
        == ConnState::Connected));
    // Exactly the accepted publishes arrive, in order, then a marker sent
    // after the reconnect: nothing refused slipped in between.
    c.publish("ovf", b"marker").unwrap();
    c.flush(T).unwrap();
    let want: Vec<Vec<u8>> = (0..FIT).map(payload).chain([b"marker".to_vec()]).collect();
    assert_eq!(recv_n(&sub, FIT + 1), want);
}

#[test]
fn buffering_disabled_fails_publishes_while_disconnected() {
    let mut s = TestServer::start();
    let (mut o, _events) = fast_reconnect(&[s.url()]);
    o.reconnect_buf_size = -1;
    let c = Client::connect(o).unwrap();
    s.kill();
    assert!(wait_until(Duration::from_secs(5), || c.status()
        == ConnState::Reconnecting));
    assert_eq!(
        c.publish("x", b"1").unwrap_err().kind(),
        ErrorKind::ReconnectBufExceeded
    );
}

#[test]
fn force_reconnect_and_gives_up_after_max_attempts() {
    let mut s = TestServer::start();
    let (mut o, events) = fast_reconnect(&[s.url()]);
    o.max_reconnect_attempts = 3;
    let c = Client::connect(o).unwrap();
    let sub = c.subscribe("fr", None, SubOptions::default()).unwrap();
    c.flush(None).unwrap();
    c.force_reconnect().unwrap();
    assert!(wait_until(Duration::from_secs(5), || c.stats().reconnects == 1));
    c.publish("fr", b"after").unwrap();
    assert_eq!(
        sub.next_msg(T).unwrap().expect("a message").payload(),
        b"after"
    );
    s.kill();
    assert!(wait_until(Duration::from_secs(10), || c.status() == ConnState::Closed));
    assert!(wait_until(Duration::from_secs(2), || events
        .lock()
        .unwrap()
        .last()
        == Some(&EventKind::Closed)));
    assert_eq!(
        c.publish("fr", b"x").unwrap_err().kind(),
        ErrorKind::ConnectionClosed
    );
}

#[test]
fn retry_on_failed_connect_connects_when_the_server_appears() {
    let mut s = TestServer::start();
    s.kill();
    let (mut o, events) = fast_reconnect(&[s.url()]);
    o.retry_on_failed_connect = true;
    let c = Client::connect(o).unwrap();
    assert_eq!(c.status(), ConnState::Reconnecting);
    let sub = c.subscribe("early", None, SubOptions::default()).unwrap();
    c.publish("early", b"buffered").unwrap();
    s.restart();
    assert!(wait_until(Duration::from_secs(10), || c.status()
        == ConnState::Connected));
    assert_eq!(
        sub.next_msg(T).unwrap().expect("a message").payload(),
        b"buffered"
    );
    // Events reach the callback on their own thread: the status can say
    // Connected before the event is handed over.
    assert!(wait_until(Duration::from_secs(2), || !events
        .lock()
        .unwrap()
        .is_empty()));
    assert_eq!(events.lock().unwrap().first(), Some(&EventKind::Connected));
    assert_eq!(c.stats().reconnects, 0);
}

#[test]
fn block_policy_pause_holds_across_a_reconnect() {
    use natsio::PendingPolicy;
    let mut s = TestServer::start();
    let (o, _events) = fast_reconnect(&[s.url()]);
    let c = Client::connect(o).unwrap();
    let sub = c
        .subscribe(
            "blk",
            None,
            SubOptions {
                pending_msgs_limit: Some(5),
                pending_bytes_limit: None,
                policy: PendingPolicy::Block,
                ..Default::default()
            },
        )
        .unwrap();
    c.flush(None).unwrap();
    let p = Client::connect_url(&s.url()).unwrap();
    for i in 0..50u32 {
        p.publish("blk", &i.to_be_bytes()).unwrap();
    }
    p.flush(None).unwrap();
    drop(p);
    assert!(wait_until(Duration::from_secs(5), || sub
        .stats()
        .pending_items
        == 6));
    // The server goes away and comes back while the reader is paused.
    s.kill();
    s.restart();
    // Consume slowly: the queue never exceeds the limit (+1 for the message
    // that found it full), before or after the reconnect.
    let mut got = Vec::new();
    while let Ok(Some(m)) = sub.next_msg(Some(Duration::from_millis(500))) {
        assert!(sub.stats().pending_items <= 6, "{:?}", sub.stats());
        got.push(u32::from_be_bytes(m.payload().try_into().unwrap()));
    }
    assert!(got.windows(2).all(|w| w[0] < w[1]), "out of order: {got:?}");
    assert_eq!(sub.stats().dropped, 0);
    // The subscription resumed on the new connection.
    assert!(wait_until(Duration::from_secs(10), || c.status()
        == ConnState::Connected));
    let p = Client::connect_url(&s.url()).unwrap();
    p.publish("blk", &999u32.to_be_bytes()).unwrap();
    p.flush(None).unwrap();
    let m = sub.next_msg(T).unwrap().expect("a message");
    assert_eq!(m.payload(), 999u32.to_be_bytes());
}

#[test]
fn drain_while_reconnecting_completes_after_the_reconnect_and_loses_nothing() {
    let mut s = TestServer::start();
    let (o, _) = fast_reconnect(&[s.url()]);
    let c = Client::connect(o).unwrap();
    let sub = c.subscribe("dr.>", None, SubOptions::default()).unwrap();
    c.flush(None).unwrap();
    s.kill();
    assert!(wait_until(Duration::from_secs(5), || c.status()
        == ConnState::Reconnecting));
    for i in 0..50 {
        c.publish("dr.during", format!("d{i}").as_bytes()).unwrap();
    }
    // The drain starts while there is no connection: the client drains
    // (no CONNECTION_CLOSED for a client that is not closed) and stays
    // draining through the reconnect.
    let drained = c.drain_async(Some(Duration::from_secs(20)));
    assert_eq!(c.status(), ConnState::Draining);
    assert_eq!(
        c.drain(None).unwrap_err().kind(),
        ErrorKind::IllegalState,
        "a second drain"
    );
    s.restart();
    // The publishes buffered before the drain reach the subscription (a
    // drain waits for its backlog to be read), then it ends.
    let want: Vec<Vec<u8>> = (0..50).map(|i| format!("d{i}").into_bytes()).collect();
    assert_eq!(recv_n(&sub, 50), want);
    let r = drained
        .wait(Some(Duration::from_secs(20)))
        .expect("drain ended");
    assert!(r.is_ok(), "{:?}", r.err());
    assert_eq!(c.status(), ConnState::Closed);
    assert_eq!(c.stats().reconnects, 1);
    assert!(sub.next_msg(T).unwrap().is_none(), "drained: the end");

    // A drain bounded shorter than the outage ends with DRAIN_TIMEOUT and
    // a closed client.
    let (o, _) = fast_reconnect(&[s.url()]);
    let c = Client::connect(o).unwrap();
    let _sub = c.subscribe("dr.>", None, SubOptions::default()).unwrap();
    c.flush(None).unwrap();
    s.kill();
    assert!(wait_until(Duration::from_secs(5), || c.status()
        == ConnState::Reconnecting));
    let e = c.drain(Some(Duration::from_millis(300))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DrainTimeout, "{e}");
    assert_eq!(c.status(), ConnState::Closed);
}

/// Lame duck of the node a subscriber is on, while a publisher on another
/// node publishes steadily (flushing every 10): the subscriber moves to
/// another node and receives, in order and once each, every message the
/// publisher had flushed before the signal and every one after its move.
/// Core NATS loses what is published while no node holds the moving
/// subscription's interest (between the old node closing it and the new
/// node's interest crossing the route), nats.go too: at most one run of
/// messages, inside the move, printed.
#[test]
fn lame_duck_of_a_subscribers_node_moves_it_and_loses_nothing_that_reached_the_node() {
    // lame_duck_duration must be >= 30s; clients get INFO ldm at once and
    // the server starts closing them after the grace period.
    let nodes =
        common::start_cluster("lame_duck_duration: \"30s\"\nlame_duck_grace_period: \"1s\"");
    let (o, events) = fast_reconnect(&[nodes[0].url()]);
    let subscriber = Client::connect(o).unwrap();
    let sub = subscriber
        .subscribe("ldm.>", None, SubOptions::default())
        .unwrap();
    subscriber.flush(T).unwrap();
    // A's INFO lists B and C once its routes are up.
    assert!(
        wait_until(Duration::from_secs(15), || subscriber.servers().len() == 3),
        "{:?}",
        subscriber.servers()
    );
    let publisher = Client::connect(Options {
        servers: vec![nodes[1].url()],
        ignore_discovered_servers: true,
        ..Options::default()
    })
    .unwrap();
    // The subscription's interest has crossed the route from A to B.
    assert!(wait_until(Duration::from_secs(15), || {
        publisher.publish("ldm.probe", b"p").unwrap();
        publisher.flush(T).unwrap();
        matches!(sub.next_msg(Some(Duration::from_millis(50))), Ok(Some(_)))
    }));

    let stop = Arc::new(AtomicBool::new(false));
    let flushed = Arc::new(AtomicU32::new(0)); // published and flushed to B
    let (stop2, flushed2) = (stop.clone(), flushed.clone());
    let publishing = std::thread::spawn(move || {
        let mut published = 0u32;
        while !stop2.load(Ordering::SeqCst) {
            publisher
                .publish("ldm.data", published.to_string().as_bytes())
                .unwrap();
            published += 1;
            if published % 10 == 0 {
                publisher.flush(T).unwrap();
                flushed2.store(published, Ordering::SeqCst);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        // After every data message on the same path: the end.
        publisher.publish("ldm.end", b"").unwrap();
        publisher.flush(T).unwrap();
        published
    });

    let mut received: Vec<u32> = Vec::new();
    let next_data = || loop {
        let m = sub.next_msg(T).unwrap().expect("a message");
        if m.subject() == "ldm.data" {
            return std::str::from_utf8(m.payload())
                .unwrap()
                .parse::<u32>()
                .unwrap();
        }
    };
    while received.len() < 200 {
        received.push(next_data());
    }
    let flushed_at_signal = flushed.load(Ordering::SeqCst);
    nodes[0].signal("ldm").unwrap();
    let signalled = std::time::Instant::now();
    assert!(wait_until(Duration::from_secs(20), || events
        .lock()
        .unwrap()
        .contains(&EventKind::Reconnected)));
    let move_took = signalled.elapsed();
    let moved_at = received.len();
    while received.len() < moved_at + 200 {
        received.push(next_data());
    }
    stop.store(true, Ordering::SeqCst);
    let published = publishing.join().unwrap();
    loop {
        let m = sub.next_msg(T).unwrap().expect("a message");
        if m.subject() == "ldm.end" {
            break;
        }
        received.push(std::str::from_utf8(m.payload()).unwrap().parse().unwrap());
    }

    // In order, once each, and the same run with at most one gap.
    assert!(
        received.windows(2).all(|w| w[0] < w[1]),
        "out of order or repeated: {received:?}"
    );
    let gaps: Vec<(u32, u32)> = received
        .windows(2)
        .filter(|w| w[1] != w[0] + 1)
        .map(|w| (w[0] + 1, w[1]))
        .collect();
    println!(
        "lame duck: published {published}, received {} in order once each, flushed before the signal {flushed_at_signal}, lost in the move {:?} (half-open ranges), moved within {move_took:?} of the signal",
        received.len(),
        gaps
    );
    assert_eq!(received.first(), Some(&0));
    assert_eq!(received.last(), Some(&(published - 1)));
    assert!(gaps.len() <= 1, "{gaps:?}");
    if let Some(&(from, _)) = gaps.first() {
        assert!(
            from >= flushed_at_signal,
            "lost {gaps:?}, flushed before the signal {flushed_at_signal}"
        );
    }
    let lifecycle: Vec<EventKind> = events
        .lock()
        .unwrap()
        .iter()
        .copied()
        .filter(|k| *k != EventKind::ServersDiscovered)
        .collect();
    assert_eq!(
        lifecycle,
        [
            EventKind::Connected,
            EventKind::LameDuck,
            EventKind::Disconnected,
            EventKind::Reconnected
        ]
    );
    let now_on = subscriber.connected_url().unwrap();
    assert!(
        now_on.ends_with(&format!(":{}", nodes[1].port()))
            || now_on.ends_with(&format!(":{}", nodes[2].port())),
        "on {now_on} after lame duck of {}",
        nodes[0].url()
    );
}
