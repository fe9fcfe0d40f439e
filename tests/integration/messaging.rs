//! Core client behaviour against a real nats-server.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::TestServer;
use natsio::{Client, Delivery, ErrorKind, Headers, PendingPolicy, RequestManyOptions, SubOptions};

fn connect(s: &TestServer) -> Client {
    Client::connect_url(&s.url()).expect("connect")
}

const T: Option<Duration> = Some(Duration::from_secs(5));

#[test]
fn publish_subscribe_roundtrip_with_headers() {
    let s = TestServer::start();
    let c = connect(&s);
    let sub = c.subscribe("a.*", None, SubOptions::default()).unwrap();
    c.flush(None).unwrap();
    let mut h = Headers::new();
    h.add("X-Tag", "red").unwrap();
    h.add("X-Tag", "blue").unwrap();
    c.publish("a.b", b"hello").unwrap();
    c.publish_with("a.c", Some("r.x"), Some(&h), b"world")
        .unwrap();
    let m = sub.next_msg(T).unwrap().expect("a message");
    assert_eq!((m.subject(), m.payload()), ("a.b", &b"hello"[..]));
    assert!(m.headers().is_none());
    let m = sub.next_msg(T).unwrap().expect("a message");
    assert_eq!(
        (m.subject(), m.reply(), m.payload()),
        ("a.c", Some("r.x"), &b"world"[..])
    );
    assert_eq!(
        m.headers().unwrap().get_all("X-Tag").collect::<Vec<_>>(),
        ["red", "blue"]
    );
    assert_eq!(
        sub.next_msg(Some(Duration::from_millis(50)))
            .unwrap_err()
            .kind(),
        ErrorKind::Timeout
    );
    let st = c.stats();
    assert_eq!((st.out_msgs, st.in_msgs), (2, 2));
}

#[test]
fn request_reply_and_no_responders() {
    let s = TestServer::start();
    let c = connect(&s);
    let svc = c.subscribe("svc", None, SubOptions::default()).unwrap();
    let inner = Client::connect_url(&s.url()).unwrap();
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    // Respond from a callback on another client.
    let responder = inner
        .subscribe("echo", None, SubOptions::default())
        .unwrap();
    let resp_client = Arc::new(inner);
    let rc = resp_client.clone();
    responder
        .set_handler(
            Box::new(move |d| {
                if let Delivery::Item(m) = d {
                    n2.fetch_add(1, Ordering::SeqCst);
                    rc.respond(&m, None, m.payload()).unwrap();
                }
            }),
            Box::new(|| {}),
        )
        .unwrap();
    resp_client.flush(None).unwrap();
    for i in 0..20 {
        let body = format!("ping {i}");
        let r = c.request("echo", None, body.as_bytes(), T).unwrap();
        assert_eq!(r.payload(), body.as_bytes());
    }
    assert_eq!(n.load(Ordering::SeqCst), 20);
    let e = c.request("nobody.home", None, b"?", T).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoResponders);
    // A subscriber that never answers: timeout.
    let e = c
        .request("svc", None, b"?", Some(Duration::from_millis(100)))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    drop(svc);
    let tok = c.request_async("echo", None, b"async", T).unwrap();
    match tok.wait(T).unwrap().unwrap() {
        natsio::Outcome::Msg(m) => assert_eq!(m.payload(), b"async"),
        o => panic!("{o:?}"),
    }
}

#[test]
fn request_many_ends_on_max_stall_and_no_responders() {
    let s = TestServer::start();
    let c = connect(&s);
    let subs: Vec<_> = (0..3)
        .map(|_| c.subscribe("many", None, SubOptions::default()).unwrap())
        .collect();
    c.flush(None).unwrap();
    let r2 = Client::connect_url(&s.url()).unwrap();
    let it = r2
        .request_many(
            "many",
            None,
            b"q",
            RequestManyOptions {
                max_msgs: None,
                stall: Some(Duration::from_millis(300)),
                timeout: Duration::from_secs(5),
            },
        )
        .unwrap();
    for s in &subs {
        let m = s.next_msg(T).unwrap().expect("a message");
        c.respond(&m, None, b"a").unwrap();
    }
    let mut got = 0;
    while let Some(_m) = it.next(None).unwrap() {
        got += 1;
    }
    assert_eq!(got, 3);
    let it = r2
        .request_many(
            "nobody",
            None,
            b"q",
            RequestManyOptions {
                max_msgs: Some(5),
                stall: None,
                timeout: Duration::from_secs(5),
            },
        )
        .unwrap();
    assert!(it.next(None).unwrap().is_none());
}

#[test]
fn auto_unsubscribe_and_drain() {
    let s = TestServer::start();
    let c = connect(&s);
    let sub = c.subscribe("lim", None, SubOptions::default()).unwrap();
    sub.unsubscribe_after(3).unwrap();
    for i in 0..5 {
        c.publish("lim", format!("{i}").as_bytes()).unwrap();
    }
    let mut got = 0;
    loop {
        match sub.next_msg(T) {
            Ok(Some(_)) => got += 1,
            Ok(None) => break,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(got, 3);
    let sub = c.subscribe("dr", None, SubOptions::default()).unwrap();
    for _ in 0..10 {
        c.publish("dr", b"x").unwrap();
    }
    c.flush(None).unwrap();
    let tok = sub.drain_async(None);
    for _ in 0..10 {
        sub.next_msg(T).unwrap().expect("a message");
    }
    tok.wait(T).unwrap().unwrap();
    assert!(sub.is_closed());
}

#[test]
fn pending_policies_under_overload() {
    let s = TestServer::start();
    let c = connect(&s);
    for policy in [
        PendingPolicy::DropNew,
        PendingPolicy::DropOld,
        PendingPolicy::Block,
        PendingPolicy::Error,
    ] {
        let subj = format!("ovl.{policy:?}");
        let sub = c
            .subscribe(
                &subj,
                None,
                SubOptions {
                    pending_msgs_limit: Some(10),
                    pending_bytes_limit: None,
                    policy,
                    ..Default::default()
                },
            )
            .unwrap();
        c.flush(None).unwrap();
        let p = Client::connect_url(&s.url()).unwrap();
        for i in 0..100u32 {
            p.publish(&subj, &i.to_be_bytes()).unwrap();
        }
        p.flush(None).unwrap();
        // Read only once the subscriber has dealt with the burst: all 100
        // queued or dropped, or (Block) the queue at its limit, where the
        // reader pauses, or (Error) the subscription failed.
        assert!(
            common::wait_until(Duration::from_secs(10), || {
                let st = sub.stats();
                match policy {
                    PendingPolicy::Block => st.pending_items >= 10,
                    PendingPolicy::Error => sub.is_closed(),
                    _ => st.dropped + st.pending_items == 100,
                }
            }),
            "{policy:?}: {:?}",
            sub.stats()
        );
        let mut got = Vec::new();
        loop {
            match sub.next_msg(Some(Duration::from_millis(200))) {
                Ok(Some(m)) => got.push(u32::from_be_bytes(m.payload().try_into().unwrap())),
                Ok(None) => panic!("ended"),
                Err(e) => {
                    if policy == PendingPolicy::Error {
                        assert_eq!(e.kind(), ErrorKind::SlowConsumer);
                    } else {
                        assert_eq!(e.kind(), ErrorKind::Timeout, "{policy:?}");
                    }
                    break;
                }
            }
        }
        let st = sub.stats();
        match policy {
            PendingPolicy::DropNew => {
                assert_eq!(got, (0..10).collect::<Vec<_>>());
                assert_eq!(st.dropped, 90);
            }
            PendingPolicy::DropOld => {
                assert_eq!(got, (90..100).collect::<Vec<_>>());
                assert_eq!(st.dropped, 90);
            }
            PendingPolicy::Block => {
                assert_eq!(got, (0..100).collect::<Vec<_>>());
                assert_eq!(st.dropped, 0);
            }
            PendingPolicy::Error => {
                assert!(got.is_empty());
                assert!(sub.is_closed());
            }
        }
    }
}

#[test]
fn max_payload_and_bad_input() {
    let s = TestServer::start();
    let c = connect(&s);
    let big = vec![b'x'; c.max_payload() + 1];
    assert_eq!(
        c.publish("big", &big).unwrap_err().kind(),
        ErrorKind::MaxPayloadExceeded
    );
    assert_eq!(
        c.publish("a b", b"").unwrap_err().kind(),
        ErrorKind::BadSubject
    );
    assert_eq!(
        c.publish("a.*", b"").unwrap_err().kind(),
        ErrorKind::BadSubject
    );
    assert_eq!(
        c.subscribe("a.>.b", None, SubOptions::default())
            .err()
            .unwrap()
            .kind(),
        ErrorKind::BadSubject
    );
    c.close();
    assert_eq!(
        c.publish("x", b"").unwrap_err().kind(),
        ErrorKind::ConnectionClosed
    );
    assert_eq!(
        c.flush(None).unwrap_err().kind(),
        ErrorKind::ConnectionClosed
    );
}

#[test]
fn client_drain_delivers_backlog() {
    let s = TestServer::start();
    let c = connect(&s);
    let sub = c.subscribe("cd", None, SubOptions::default()).unwrap();
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    sub.set_handler(
        Box::new(move |d| {
            if let Delivery::Item(_) = d {
                std::thread::sleep(Duration::from_millis(2));
                n2.fetch_add(1, Ordering::SeqCst);
            }
        }),
        Box::new(|| {}),
    )
    .unwrap();
    c.flush(None).unwrap();
    let p = Client::connect_url(&s.url()).unwrap();
    for _ in 0..200 {
        p.publish("cd", b"x").unwrap();
    }
    p.flush(None).unwrap();
    c.drain(T).unwrap();
    assert_eq!(n.load(Ordering::SeqCst), 200);
    assert_eq!(c.status(), natsio::ConnState::Closed);
}

#[test]
fn async_request_keeps_no_reference_to_its_reply_after_completing() {
    // A pending timeout timer used to hold every reply until the timeout ran
    // out: 20k async requests of 64 KiB grew the process past 1 GB.
    let s = TestServer::start();
    let c = connect(&s);
    let responder = Client::connect_url(&s.url()).unwrap();
    let sub = responder
        .subscribe("big.echo", None, SubOptions::default())
        .unwrap();
    responder.flush(None).unwrap();
    let body = vec![b'x'; 64 * 1024];
    let serve = std::thread::spawn(move || {
        for _ in 0..3 {
            let m = sub.next_msg(T).unwrap().expect("a message");
            responder.respond(&m, None, m.payload()).unwrap();
        }
        responder.flush(None).unwrap();
    });
    for _ in 0..3 {
        let tok = c
            .request_async("big.echo", None, &body, Some(Duration::from_secs(30)))
            .unwrap();
        assert!(matches!(tok.wait(T), Some(Ok(natsio::Outcome::Msg(_)))));
        // The reader thread drops its reference just after completing.
        let released = common::wait_until(Duration::from_secs(2), || Arc::strong_count(&tok) == 1);
        assert!(released, "something still holds the completed request");
    }
    serve.join().unwrap();
}

#[test]
fn request_many_can_be_stopped_from_another_thread() {
    let s = TestServer::start();
    let c = connect(&s);
    let _silent = c.subscribe("quiet", None, SubOptions::default()).unwrap();
    c.flush(None).unwrap();
    let it = c
        .request_many(
            "quiet",
            None,
            b"?",
            RequestManyOptions {
                max_msgs: None,
                stall: None,
                timeout: Duration::from_secs(30),
            },
        )
        .unwrap();
    let stopper = it.stopper();
    let started = std::time::Instant::now();
    let waiter = std::thread::spawn(move || it.next(None).map(|m| m.is_none()));
    std::thread::sleep(Duration::from_millis(100));
    stopper.stop();
    assert!(
        waiter.join().unwrap().unwrap(),
        "next_msg should end the replies"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "next_msg waited out its timeout"
    );
}
