//! Self-healing against a real server: a priority-group pin that expires or
//! is taken away from a running consume, and a watch resumed from a
//! revision that must carry on after a restart. (The paths a real server
//! produces only by chance, gaps and silence, are in fake_jetstream.rs.)

use crate::common;

use std::time::Duration;

use common::TestServer;
use natsio::jetstream::{
    AckKind, ConsumeOptions, Consumption, CreateAction, JetStream, JetStreamOptions, PublishOptions,
};
use natsio::kv::{WatchEvent, WatchOptions};
use natsio::{Client, ErrorKind, Message};

const PIN_ID: &str = "Nats-Pin-Id";

fn setup(s: &TestServer) -> (Client, JetStream) {
    let c = Client::connect_url(&s.url()).expect("connect");
    let js = JetStream::new(&c, JetStreamOptions::default()).unwrap();
    (c, js)
}

fn in_group(js: &JetStream) -> Consumption {
    let opts = ConsumeOptions {
        group: Some("G".into()),
        expires: Duration::from_secs(2),
        idle_heartbeat: Duration::from_millis(500),
        ..ConsumeOptions::default()
    };
    js.consume("PIN", "p", opts).wait().unwrap()
}

/// The next message of `flow` (acked), within a generous bound.
fn take(js: &JetStream, flow: &Consumption, what: &str) -> Message {
    let m = flow
        .next(Some(Duration::from_secs(20)))
        .unwrap_or_else(|e| panic!("{what}: {e}"))
        .unwrap_or_else(|| panic!("{what}: the flow ended"));
    js.ack(&m, &AckKind::Ack, Some(Duration::from_secs(5)))
        .unwrap();
    m
}

fn pin_of(m: &Message) -> String {
    m.headers()
        .and_then(|h| h.get(PIN_ID))
        .expect("a pinned delivery carries its pin id")
        .to_string()
}

#[test]
fn a_pin_passes_on_when_it_expires_and_a_consume_that_loses_it_carries_on() {
    let s = TestServer::start();
    let (_c, js) = setup(&s);
    js.create_stream(
        r#"{"name":"PIN","subjects":["pin.>"]}"#,
        CreateAction::Create,
    )
    .wait()
    .unwrap();
    js.create_consumer(
        "PIN",
        r#"{"durable_name":"p","ack_policy":"explicit","ack_wait":2000000000,
            "priority_groups":["G"],"priority_policy":"pinned_client",
            "priority_timeout":1000000000}"#,
        CreateAction::Create,
    )
    .wait()
    .unwrap();
    let publish = |body: &str| {
        js.publish("pin.x", body.as_bytes(), &PublishOptions::default())
            .wait()
            .unwrap();
    };
    let (_ca, js_a) = setup(&s);
    let (_cb, js_b) = setup(&s);

    // A is pinned by its first delivery; B, pulling too, gets nothing.
    let a = in_group(&js_a);
    publish("m1");
    let first_pin = pin_of(&take(&js_a, &a, "m1 to A"));
    let b = in_group(&js_b);
    publish("m2");
    assert_eq!(pin_of(&take(&js_a, &a, "m2 to A")), first_pin);
    assert_eq!(
        b.next(Some(Duration::ZERO)).unwrap_err().kind(),
        ErrorKind::Timeout,
        "B got a message while A held the pin"
    );

    // A stops pulling: after the priority timeout (1 s) its pin expires
    // and B, still pulling, is pinned. (A pull request A left open may
    // still take m3 and drop it with the stopped flow: the 2 s ack wait
    // then gives it to B.)
    a.stop();
    publish("m3");
    let m3 = take(&js_b, &b, "m3 to B once A's pin expired");
    assert_eq!(m3.payload(), b"m3");
    let second_pin = pin_of(&m3);
    assert_ne!(second_pin, first_pin);

    // The pin is taken from B while its consume runs: its open request,
    // sent with the old pin id, is answered 423; the consume drops the id
    // and pulls again, is pinned anew and carries on.
    js.unpin_consumer("PIN", "p", "G").wait().unwrap();
    publish("m4");
    let m4 = take(&js_b, &b, "m4 to B after the unpin");
    assert_eq!(m4.payload(), b"m4");
    assert_ne!(pin_of(&m4), second_pin, "a new pin after the unpin");
    b.stop();
    let info = js.consumer_info("PIN", "p").wait().unwrap();
    assert_eq!(info["num_ack_pending"], 0, "{info}");
    assert_eq!(info["num_pending"], 0, "{info}");
}

#[test]
fn a_watch_resumed_from_a_revision_carries_on_after_a_restart_without_repeats() {
    let mut s = TestServer::start();
    let (c, js) = setup(&s);
    let kv = js
        .create_key_value(
            r#"{"bucket":"RES","storage":"file","history":10}"#,
            CreateAction::Create,
        )
        .wait()
        .unwrap();
    for i in 1..=5 {
        kv.put("k", format!("v{i}").as_bytes()).wait().unwrap();
    }
    let w = kv
        .watch(
            &[],
            WatchOptions {
                resume_from_revision: 3,
                ..WatchOptions::default()
            },
        )
        .wait()
        .unwrap();
    let t = Some(Duration::from_secs(30));
    let mut revisions = Vec::new();
    let next_entry = |what: &str| loop {
        match w.next(t).unwrap_or_else(|e| panic!("{what}: {e}")) {
            Some(WatchEvent::Entry(e)) => return e,
            Some(WatchEvent::InitialDone(_)) => continue,
            None => panic!("{what}: the watch ended"),
        }
    };
    for _ in 3..=5 {
        revisions.push(next_entry("before the restart").revision);
    }
    assert_eq!(revisions, [3, 4, 5]);

    // The server goes away and comes back (the watch's consumer with it):
    // the watch carries on after revision 5, not from 3 again.
    s.restart();
    assert!(common::wait_until(Duration::from_secs(30), || c
        .stats()
        .reconnects
        == 1));
    assert!(common::wait_until(Duration::from_secs(30), || kv
        .put("k", b"v6")
        .wait()
        .is_ok()));
    kv.put("k", b"v7").wait().unwrap();
    let after: Vec<(u64, Vec<u8>)> = (0..2)
        .map(|_| {
            let e = next_entry("after the restart");
            (e.revision, e.value.to_vec())
        })
        .collect();
    assert_eq!(after, [(6, b"v6".to_vec()), (7, b"v7".to_vec())]);

    // The consumer lost while connected (deleted): the same.
    for name in js.consumer_names("KV_RES").wait().unwrap() {
        js.delete_consumer("KV_RES", &name).wait().unwrap();
    }
    kv.put("k", b"v8").wait().unwrap();
    let e = next_entry("after the consumer was deleted");
    assert_eq!((e.revision, e.value.to_vec()), (8, b"v8".to_vec()));
    assert_eq!(
        w.next(Some(Duration::from_millis(300))).unwrap_err().kind(),
        ErrorKind::Timeout,
        "nothing more, nothing repeated"
    );
}
