//! JetStream and Key-Value against a real nats-server (JetStream enabled).

use crate::common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::TestServer;
use natsio::jetstream::{
    AckKind, CreateAction, JetStream, JetStreamOptions, MsgSelector, PublishOptions,
};
use natsio::kv::Operation;
use natsio::{Client, ErrorKind, Headers, SubOptions};

fn setup(s: &TestServer) -> (Client, JetStream) {
    let c = Client::connect_url(&s.url()).expect("connect");
    let js = JetStream::new(&c, JetStreamOptions::default()).unwrap();
    (c, js)
}

pub(super) fn kind<T: std::fmt::Debug>(r: natsio::Result<T>) -> ErrorKind {
    r.expect_err("expected an error").kind()
}

/// Creates the stream `name` from `config` and a durable pull consumer
/// "d" on it.
fn stream_with_durable(js: &JetStream, name: &str, config: &str) {
    js.create_stream(config, CreateAction::Create)
        .wait()
        .unwrap();
    js.create_consumer(name, r#"{"durable_name":"d"}"#, CreateAction::Create)
        .wait()
        .unwrap();
}

#[test]
fn stream_lifecycle_and_config_validation() {
    let s = TestServer::start();
    let (_c, js) = setup(&s);
    let info = js
        .create_stream(
            r#"{"name":"ORDERS","subjects":["orders.>"],"max_age":"1h","storage":"memory"}"#,
            CreateAction::Create,
        )
        .wait()
        .unwrap();
    assert_eq!(info["config"]["name"], "ORDERS");
    assert_eq!(info["config"]["max_age"], 3_600_000_000_000i64);
    assert_eq!(info["config"]["storage"], "memory");
    assert!(info.get("type").is_none());
    // Same config again: fine. Another config: name in use.
    js.create_stream(
        r#"{"name":"ORDERS","subjects":["orders.>"],"max_age":"1h","storage":"memory"}"#,
        CreateAction::Create,
    )
    .wait()
    .unwrap();
    assert_eq!(
        kind(
            js.create_stream(
                r#"{"name":"ORDERS","subjects":["other.>"],"storage":"memory"}"#,
                CreateAction::Create
            )
            .wait()
        ),
        ErrorKind::StreamNameInUse
    );
    let upd = js
        .create_stream(
            r#"{"name":"ORDERS","subjects":["orders.>"],"max_age":"2h","storage":"memory"}"#,
            CreateAction::Update,
        )
        .wait()
        .unwrap();
    assert_eq!(upd["config"]["max_age"], 7_200_000_000_000i64);
    assert_eq!(
        kind(
            js.create_stream(
                r#"{"name":"NOPE","subjects":["nope"]}"#,
                CreateAction::Update
            )
            .wait()
        ),
        ErrorKind::StreamNotFound
    );
    js.create_stream(
        r#"{"name":"NEW","subjects":["new.>"]}"#,
        CreateAction::CreateOrUpdate,
    )
    .wait()
    .unwrap();

    // Config errors name the field and send nothing.
    let e = js
        .create_stream(r#"{"name":"X","max_age":"soon"}"#, CreateAction::Create)
        .wait()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
    assert!(
        e.detail().contains("StreamConfig.max_age"),
        "{}",
        e.detail()
    );
    assert_eq!(
        kind(
            js.create_stream(r#"{"subjects":["a"]}"#, CreateAction::Create)
                .wait()
        ),
        ErrorKind::Config
    );
    assert_eq!(
        kind(
            js.create_stream(r#"{"name":"a.b"}"#, CreateAction::Create)
                .wait()
        ),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        kind(js.create_stream("not json", CreateAction::Create).wait()),
        ErrorKind::Config
    );
    // Fields the library does not model reach the server unchanged.
    let e = js
        .create_stream(r#"{"name":"X","x_unknown":1}"#, CreateAction::Create)
        .wait()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::JetStreamApi);
    assert!(
        e.detail().contains("x_unknown") && e.detail().contains("10025"),
        "{}",
        e.detail()
    );
    // A server-side rejection: overlapping subjects.
    assert_eq!(
        kind(
            js.create_stream(
                r#"{"name":"OVERLAP","subjects":["orders.new"]}"#,
                CreateAction::Create
            )
            .wait()
        ),
        ErrorKind::JetStreamApi
    );

    let mut names = js.stream_names(None).wait().unwrap();
    names.sort();
    assert_eq!(names, vec!["NEW", "ORDERS"]);
    assert_eq!(
        js.stream_names(Some("orders.x")).wait().unwrap(),
        vec!["ORDERS"]
    );

    for i in 0..5 {
        js.publish(
            &format!("orders.{}", i % 2),
            b"x",
            &PublishOptions::default(),
        )
        .wait()
        .unwrap();
    }
    assert_eq!(
        js.purge_stream("ORDERS", Some(r#"{"filter":"orders.0"}"#))
            .wait()
            .unwrap(),
        3
    );
    assert_eq!(
        js.purge_stream("ORDERS", Some(r#"{"keep":1}"#))
            .wait()
            .unwrap(),
        1
    );
    assert_eq!(
        kind(
            js.purge_stream("ORDERS", Some(r#"{"keep":1,"seq":2}"#))
                .wait()
        ),
        ErrorKind::Config
    );
    assert_eq!(
        js.stream_info("ORDERS").wait().unwrap()["state"]["messages"],
        1
    );
    assert_eq!(js.purge_stream("ORDERS", None).wait().unwrap(), 1);

    js.delete_stream("ORDERS").wait().unwrap();
    assert_eq!(
        kind(js.stream_info("ORDERS").wait()),
        ErrorKind::StreamNotFound
    );
    assert_eq!(
        kind(js.delete_stream("ORDERS").wait()),
        ErrorKind::StreamNotFound
    );
    assert!(js.account_info().wait().unwrap()["streams"]
        .as_u64()
        .is_some());
}

#[test]
fn publish_acks_dedupes_and_checks_expectations() {
    let s = TestServer::start();
    let (_c, js) = setup(&s);
    js.create_stream(
        r#"{"name":"S","subjects":["s.>"],"allow_msg_ttl":true}"#,
        CreateAction::Create,
    )
    .wait()
    .unwrap();
    let a1 = js
        .publish("s.a", b"one", &PublishOptions::default())
        .wait()
        .unwrap();
    assert_eq!((a1.stream.as_str(), a1.seq, a1.duplicate), ("S", 1, false));

    let dedupe = PublishOptions {
        msg_id: Some("id-1".into()),
        ..Default::default()
    };
    let a2 = js.publish("s.a", b"two", &dedupe).wait().unwrap();
    let a3 = js.publish("s.a", b"two again", &dedupe).wait().unwrap();
    assert_eq!(a2.seq, 2);
    assert!(a3.duplicate);
    assert_eq!(a3.seq, 2);

    let expect = |seq| PublishOptions {
        expected_last_seq: Some(seq),
        ..Default::default()
    };
    assert_eq!(
        kind(js.publish("s.a", b"x", &expect(1)).wait()),
        ErrorKind::WrongLastSequence
    );
    assert_eq!(js.publish("s.a", b"x", &expect(2)).wait().unwrap().seq, 3);
    let subj = |seq| PublishOptions {
        expected_last_subject_seq: Some(seq),
        ..Default::default()
    };
    assert_eq!(
        js.publish("s.b", b"first on s.b", &subj(0))
            .wait()
            .unwrap()
            .seq,
        4
    );
    assert_eq!(
        kind(js.publish("s.b", b"x", &subj(0)).wait()),
        ErrorKind::WrongLastSequence
    );
    let wrong_stream = PublishOptions {
        expected_stream: Some("OTHER".into()),
        ..Default::default()
    };
    assert_eq!(
        kind(js.publish("s.a", b"x", &wrong_stream).wait()),
        ErrorKind::JetStreamApi
    );

    // User headers and TTL travel with the message.
    let mut h = Headers::new();
    h.add("X-Trace", "t1").unwrap();
    let opts = PublishOptions {
        headers: Some(h),
        ttl: Some(natsio::jetstream::Ttl::Seconds(60)),
        ..Default::default()
    };
    let seq = js
        .publish("s.h", b"with headers", &opts)
        .wait()
        .unwrap()
        .seq;
    let stored = js.get_msg("S", MsgSelector::Seq(seq)).wait().unwrap();
    assert_eq!(&stored.payload[..], b"with headers");
    let hdrs = stored.headers.unwrap();
    assert_eq!(hdrs.get("X-Trace"), Some("t1"));
    assert_eq!(hdrs.get("Nats-TTL"), Some("60s"));
    let last = js
        .get_msg("S", MsgSelector::LastBySubject("s.b".into()))
        .wait()
        .unwrap();
    assert_eq!((last.seq, &last.payload[..]), (4, &b"first on s.b"[..]));
    let now_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64;
    assert!(
        (now_ns - last.time_ns).abs() < 60_000_000_000,
        "time {}",
        last.time_ns
    );
    js.delete_msg("S", 4, false).wait().unwrap();
    assert_eq!(
        kind(js.get_msg("S", MsgSelector::Seq(4)).wait()),
        ErrorKind::MessageNotFound
    );

    // No stream on the subject: retried, then NoStreamResponse.
    assert_eq!(
        kind(
            js.publish("nostream", b"x", &PublishOptions::default())
                .wait()
        ),
        ErrorKind::NoStreamResponse
    );
}

#[test]
fn async_publish_window_acks_every_message() {
    let s = TestServer::start();
    let c = Client::connect_url(&s.url()).unwrap();
    let js = JetStream::new(
        &c,
        JetStreamOptions {
            publish_async_max_pending: 64,
            ..Default::default()
        },
    )
    .unwrap();
    js.create_stream(r#"{"name":"A","subjects":["a.>"]}"#, CreateAction::Create)
        .wait()
        .unwrap();
    let n = 2000;
    let mut tokens = Vec::new();
    for i in 0..n {
        tokens.push(
            js.publish_async(
                "a.x",
                format!("m{i}").as_bytes(),
                &PublishOptions::default(),
            )
            .unwrap(),
        );
    }
    js.publish_async_complete(Some(Duration::from_secs(10)))
        .wait()
        .unwrap();
    assert_eq!(js.publish_async_pending(), 0);
    let mut seqs: Vec<u64> = tokens
        .iter()
        .map(|t| {
            let o = t.result().unwrap().unwrap();
            o.downcast::<natsio::jetstream::PubAck>()
                .expect("a PubAck")
                .seq
        })
        .collect();
    seqs.sort();
    assert_eq!(seqs, (1..=n as u64).collect::<Vec<_>>());
    assert_eq!(js.stream_info("A").wait().unwrap()["state"]["messages"], n);

    // No stream: the token fails with NoStreamResponse.
    let t = js
        .publish_async("none.here", b"x", &PublishOptions::default())
        .unwrap();
    let r = t.wait(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(r.unwrap_err().kind(), ErrorKind::NoStreamResponse);
}

#[test]
fn async_publish_stalls_then_times_out() {
    let s = TestServer::start();
    let c = Client::connect_url(&s.url()).unwrap();
    // A plain subscriber that never acks stands in for a stuck stream.
    let _sink = c.subscribe("stuck", None, SubOptions::default()).unwrap();
    c.flush(None).unwrap();
    let js = JetStream::new(
        &c,
        JetStreamOptions {
            publish_async_max_pending: 2,
            publish_async_stall_wait: Duration::from_millis(50),
            publish_async_timeout: Some(Duration::from_millis(300)),
            ..Default::default()
        },
    )
    .unwrap();
    let t1 = js
        .publish_async("stuck", b"1", &PublishOptions::default())
        .unwrap();
    let t2 = js
        .publish_async("stuck", b"2", &PublishOptions::default())
        .unwrap();
    assert_eq!(
        kind(js.publish_async("stuck", b"3", &PublishOptions::default())),
        ErrorKind::TooManyStalledMsgs
    );
    assert_eq!(js.publish_async_pending(), 2);
    assert_eq!(
        kind(
            js.publish_async_complete(Some(Duration::from_millis(10)))
                .wait()
        ),
        ErrorKind::Timeout
    );
    for t in [&t1, &t2] {
        let r = t.wait(Some(Duration::from_secs(5))).expect("completes");
        assert_eq!(r.unwrap_err().kind(), ErrorKind::AsyncPublishTimeout);
    }
    js.publish_async_complete(Some(Duration::from_secs(1)))
        .wait()
        .unwrap();
    // Room again; a cancelled publish frees its slot too.
    let t3 = js
        .publish_async("stuck", b"3", &PublishOptions::default())
        .unwrap();
    assert!(t3.cancel());
    assert_eq!(js.publish_async_pending(), 0);
}

#[test]
fn a_server_without_jetstream_is_not_enabled_for_account_info_and_unanswered_for_other_calls() {
    let s = TestServer::without_jetstream(None);
    let c = Client::connect_url(&s.url()).unwrap();
    let js = JetStream::new(&c, JetStreamOptions::default()).unwrap();
    let e = js.account_info().wait().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::JetStreamNotEnabled, "{e}");
    // Nobody serves the API: as nats.go reports it, what a leaderless
    // stream in a cluster also gives.
    let e = js
        .create_stream(r#"{"name":"S"}"#, CreateAction::Create)
        .wait()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoResponders, "{e}");
    assert!(e.detail().contains("no JetStream on the server"), "{e}");
}

#[test]
fn jetstream_not_enabled_and_closed_client() {
    // An account without JetStream on a server with it.
    let s =
        TestServer::with_config("accounts: { NOJS: { users: [ { user: u, password: p } ] } }\n");
    let c = Client::connect_url(&format!("nats://u:p@127.0.0.1:{}", s.port())).unwrap();
    let js = JetStream::new(&c, JetStreamOptions::default()).unwrap();
    assert_eq!(
        kind(js.account_info().wait()),
        ErrorKind::JetStreamNotEnabled
    );
    assert_eq!(
        kind(
            js.create_stream(r#"{"name":"S"}"#, CreateAction::Create)
                .wait()
        ),
        ErrorKind::JetStreamNotEnabled
    );
    c.close();
    assert_eq!(
        kind(js.stream_info("S").wait()),
        ErrorKind::ConnectionClosed
    );
    assert_eq!(
        kind(js.publish("s", b"x", &PublishOptions::default()).wait()),
        ErrorKind::ConnectionClosed
    );
    assert_eq!(
        kind(js.publish_async("s", b"x", &PublishOptions::default())),
        ErrorKind::ConnectionClosed
    );
    assert_eq!(js.publish_async_pending(), 0);
}

#[test]
fn domain_and_prefix_options() {
    let s = TestServer::start();
    let c = Client::connect_url(&s.url()).unwrap();
    let js = JetStream::new(
        &c,
        JetStreamOptions {
            domain: Some("hub".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(js.api_prefix(), "$JS.hub.API");
    let js = JetStream::new(
        &c,
        JetStreamOptions {
            api_prefix: Some("$JS.API.".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(js.api_prefix(), "$JS.API");
    js.account_info().wait().unwrap();
    for bad in [
        JetStreamOptions {
            domain: Some("a.b".into()),
            ..Default::default()
        },
        JetStreamOptions {
            api_prefix: Some("bad prefix".into()),
            ..Default::default()
        },
        JetStreamOptions {
            publish_async_max_pending: 0,
            ..Default::default()
        },
    ] {
        assert_eq!(
            JetStream::new(&c, bad).err().unwrap().kind(),
            ErrorKind::Config
        );
    }
}

#[test]
fn kv_put_get_cas_delete_purge() {
    let s = TestServer::start();
    let (_c, js) = setup(&s);
    let kv = js
        .create_key_value(
            r#"{"bucket":"CFG","history":5,"ttl":"1h"}"#,
            CreateAction::Create,
        )
        .wait()
        .unwrap();
    assert_eq!(kv.bucket(), "CFG");
    let info = js.stream_info("KV_CFG").wait().unwrap();
    assert_eq!(info["config"]["max_msgs_per_subject"], 5);
    assert_eq!(info["config"]["subjects"][0], "$KV.CFG.>");
    assert_eq!(info["config"]["allow_direct"], true);
    assert_eq!(info["config"]["discard"], "new");
    assert_eq!(info["config"]["duplicate_window"], 120_000_000_000i64);

    let r1 = kv.put("app.color", b"red").wait().unwrap();
    let r2 = kv.put("app.color", b"blue").wait().unwrap();
    assert!(r2 > r1);
    let e = kv.get("app.color", None).wait().unwrap();
    assert_eq!(
        (&e.value[..], e.revision, e.operation),
        (&b"blue"[..], r2, Operation::Put)
    );
    assert_eq!(e.key, "app.color");
    let now_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64;
    assert!((now_ns - e.created_ns).abs() < 60_000_000_000);
    assert_eq!(
        &kv.get("app.color", Some(r1)).wait().unwrap().value[..],
        b"red"
    );
    assert_eq!(
        kind(kv.get("app.size", Some(r1)).wait()),
        ErrorKind::KeyNotFound
    );
    assert_eq!(kind(kv.get("missing", None).wait()), ErrorKind::KeyNotFound);

    assert_eq!(
        kind(kv.update("app.color", b"green", r1).wait()),
        ErrorKind::WrongLastSequence
    );
    let r3 = kv.update("app.color", b"green", r2).wait().unwrap();
    assert_eq!(
        kind(kv.create("app.color", b"x").wait()),
        ErrorKind::KeyExists
    );
    let rc = kv.create("app.new", b"fresh").wait().unwrap();
    assert!(rc > r3);

    kv.delete("app.color", None).wait().unwrap();
    assert_eq!(
        kind(kv.get("app.color", None).wait()),
        ErrorKind::KeyDeleted
    );
    // A deleted key can be created again.
    let r4 = kv.create("app.color", b"again").wait().unwrap();
    assert_eq!(
        &kv.get("app.color", None).wait().unwrap().value[..],
        b"again"
    );
    assert_eq!(
        kind(kv.delete("app.color", Some(r4 - 1)).wait()),
        ErrorKind::WrongLastSequence
    );
    kv.purge("app.color", Some(r4)).wait().unwrap();
    assert_eq!(
        kind(kv.get("app.color", None).wait()),
        ErrorKind::KeyDeleted
    );
    // Purge removed the older revisions.
    assert_eq!(
        kind(kv.get("app.color", Some(r1)).wait()),
        ErrorKind::KeyNotFound
    );

    for bad in ["", ".a", "a.", "a..b", "a b", "a*", "a>", "ü"] {
        assert_eq!(
            kind(kv.put(bad, b"x").wait()),
            ErrorKind::InvalidKey,
            "{bad:?}"
        );
    }
    assert_eq!(kv.put("a/b_c-d=e.F9", b"").wait().map(|_| ()).unwrap(), ());
    assert_eq!(kv.get("a/b_c-d=e.F9", None).wait().unwrap().value.len(), 0);
    assert_eq!(kv.status().wait().unwrap()["config"]["name"], "KV_CFG");
}

#[test]
fn kv_bind_refuses_a_stream_that_is_no_bucket() {
    let s = TestServer::start();
    let (_c, js) = setup(&s);
    // A stream named as a bucket's but holding other subjects is no bucket.
    js.create_stream(
        r#"{"name":"KV_PLAIN","subjects":["plain.>"],"storage":"memory"}"#,
        CreateAction::Create,
    )
    .wait()
    .unwrap();
    let e = js
        .key_value("PLAIN")
        .wait()
        .expect_err("bound a plain stream");
    assert_eq!(e.kind(), ErrorKind::BucketNotFound);
    assert!(e.detail().contains("$KV.PLAIN.>"), "{}", e.detail());
    // Subjects that cover the bucket's keyspace bind.
    js.create_stream(
        r#"{"name":"KV_WIDE","subjects":["$KV.*.>"],"storage":"memory"}"#,
        CreateAction::Create,
    )
    .wait()
    .unwrap();
    let kv = js.key_value("WIDE").wait().unwrap();
    kv.put("k", b"v").wait().unwrap();
}

#[test]
fn kv_buckets_bind_and_msg_get_fallback() {
    let s = TestServer::start();
    let (_c, js) = setup(&s);
    assert_eq!(kind(js.key_value("NONE").wait()), ErrorKind::BucketNotFound);
    assert_eq!(
        kind(js.key_value("bad.name").wait()),
        ErrorKind::InvalidBucketName
    );
    assert_eq!(
        kind(
            js.create_key_value(r#"{"bucket":"b c"}"#, CreateAction::Create)
                .wait()
        ),
        ErrorKind::InvalidBucketName
    );
    assert_eq!(
        kind(
            js.create_key_value(r#"{"bucket":"B","history":65}"#, CreateAction::Create)
                .wait()
        ),
        ErrorKind::Config
    );
    assert_eq!(
        kind(
            js.create_key_value(r#"{"bucket":"B","ttl":"10ms"}"#, CreateAction::Create)
                .wait()
        ),
        ErrorKind::Config
    );
    assert_eq!(
        kind(
            js.create_key_value(r#"{"history":2}"#, CreateAction::Create)
                .wait()
        ),
        ErrorKind::Config
    );
    assert_eq!(
        kind(
            js.create_key_value(r#"{"bucket":"B"}"#, CreateAction::Update)
                .wait()
        ),
        ErrorKind::BucketNotFound
    );

    let kv = js
        .create_key_value(r#"{"bucket":"B","storage":"memory"}"#, CreateAction::Create)
        .wait()
        .unwrap();
    // Same config: bound; other config: exists.
    js.create_key_value(r#"{"bucket":"B","storage":"memory"}"#, CreateAction::Create)
        .wait()
        .unwrap();
    assert_eq!(
        kind(
            js.create_key_value(
                r#"{"bucket":"B","history":3,"storage":"memory"}"#,
                CreateAction::Create
            )
            .wait()
        ),
        ErrorKind::BucketExists
    );
    js.create_key_value(
        r#"{"bucket":"B","history":3,"storage":"memory"}"#,
        CreateAction::Update,
    )
    .wait()
    .unwrap();
    js.create_key_value(r#"{"bucket":"C"}"#, CreateAction::CreateOrUpdate)
        .wait()
        .unwrap();
    kv.put("k", b"v1").wait().unwrap();

    // A bucket without Direct Get is read with STREAM.MSG.GET.
    let mut cfg = js.stream_info("KV_B").wait().unwrap()["config"].clone();
    cfg["allow_direct"] = serde_json::Value::from(false);
    js.create_stream(&cfg.to_string(), CreateAction::Update)
        .wait()
        .unwrap();
    let bound = js.key_value("B").wait().unwrap();
    let e = bound.get("k", None).wait().unwrap();
    assert_eq!(&e.value[..], b"v1");
    bound.delete("k", None).wait().unwrap();
    assert_eq!(kind(bound.get("k", None).wait()), ErrorKind::KeyDeleted);
    assert_eq!(
        kind(bound.get("nothing", None).wait()),
        ErrorKind::KeyNotFound
    );

    js.delete_key_value("B").wait().unwrap();
    assert_eq!(kind(js.key_value("B").wait()), ErrorKind::BucketNotFound);
    assert_eq!(
        kind(js.delete_key_value("B").wait()),
        ErrorKind::BucketNotFound
    );
}

#[test]
fn shorter_publish_timeout_is_not_held_behind_a_longer_one() {
    let s = TestServer::start();
    let c = Client::connect_url(&s.url()).unwrap();
    let _sink = c.subscribe("stuck", None, SubOptions::default()).unwrap();
    c.flush(None).unwrap();
    let js = JetStream::new(
        &c,
        JetStreamOptions {
            publish_async_timeout: Some(Duration::from_millis(1500)),
            ..Default::default()
        },
    )
    .unwrap();
    let long = js
        .publish_async("stuck", b"1", &PublishOptions::default())
        .unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let started = std::time::Instant::now();
    let short_opts = PublishOptions {
        timeout: Some(Duration::from_millis(100)),
        ..Default::default()
    };
    let short = js.publish_async("stuck", b"2", &short_opts).unwrap();
    let r = short.wait(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(r.unwrap_err().kind(), ErrorKind::AsyncPublishTimeout);
    assert!(
        started.elapsed() < Duration::from_millis(1000),
        "{:?}",
        started.elapsed()
    );
    assert!(!long.is_done());
    // Tokens outlive their context and still time out.
    drop(js);
    let r = long.wait(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(r.unwrap_err().kind(), ErrorKind::AsyncPublishTimeout);
}

#[test]
fn pull_consumer_fetch_ack_nak_term() {
    use natsio::jetstream::{parse_metadata, AckKind, CreateAction, FetchOptions};
    let s = TestServer::start();
    let (_c, js) = setup(&s);
    js.create_stream(r#"{"name":"Q","subjects":["q.>"]}"#, CreateAction::Create)
        .wait()
        .unwrap();
    for i in 0..10 {
        js.publish(
            &format!("q.{}", i % 2),
            format!("m{i}").as_bytes(),
            &PublishOptions::default(),
        )
        .wait()
        .unwrap();
    }
    let info = js
        .create_consumer("Q", r#"{"durable_name":"work","ack_policy":"explicit","ack_wait":"2s","filter_subject":"q.0"}"#, CreateAction::Create).wait()
        .unwrap();
    assert_eq!(info["name"], "work");
    assert_eq!(info["config"]["ack_wait"], 2_000_000_000i64);
    assert_eq!(info["num_pending"], 5);
    // Same config again is fine; another config fails; update changes it.
    js.create_consumer(
        "Q",
        r#"{"durable_name":"work","ack_policy":"explicit","ack_wait":"2s","filter_subject":"q.0"}"#,
        CreateAction::Create,
    )
    .wait()
    .unwrap();
    assert_eq!(
        kind(js.create_consumer("Q", r#"{"durable_name":"work","ack_policy":"explicit","ack_wait":"3s","filter_subject":"q.0"}"#, CreateAction::Create).wait()),
        ErrorKind::JetStreamApi
    );
    assert_eq!(
        kind(
            js.create_consumer(
                "Q",
                r#"{"name":"nope","ack_policy":"explicit"}"#,
                CreateAction::Update
            )
            .wait()
        ),
        ErrorKind::ConsumerNotFound
    );
    let eph = js
        .create_consumer(
            "Q",
            r#"{"inactive_threshold":"30s"}"#,
            CreateAction::CreateOrUpdate,
        )
        .wait()
        .unwrap();
    let eph_name = eph["name"].as_str().unwrap().to_string();
    // Acks are explicit unless the config says otherwise.
    assert_eq!(eph["config"]["ack_policy"], "explicit");
    let mut names = js.consumer_names("Q").wait().unwrap();
    names.sort();
    let mut want = vec!["work".to_string(), eph_name.clone()];
    want.sort();
    assert_eq!(names, want);
    assert_eq!(
        kind(
            js.create_consumer("Q", r#"{"ack_policy":"sometimes"}"#, CreateAction::Create)
                .wait()
        ),
        ErrorKind::Config
    );

    let batch = js
        .fetch(
            "Q",
            "work",
            &FetchOptions {
                max_messages: 3,
                expires: Duration::from_secs(2),
                ..Default::default()
            },
        )
        .wait()
        .unwrap();
    let bodies: Vec<&[u8]> = batch.iter().map(|m| m.payload()).collect();
    assert_eq!(bodies, vec![&b"m0"[..], b"m2", b"m4"]);
    let md = parse_metadata(batch[0].reply().unwrap()).unwrap();
    assert_eq!(
        (
            md.stream,
            md.consumer,
            md.stream_seq,
            md.consumer_seq,
            md.num_delivered,
            md.num_pending
        ),
        ("Q", "work", 1, 1, 1, 4)
    );
    js.ack(&batch[0], &AckKind::Ack, Some(Duration::from_secs(2)))
        .unwrap();
    js.ack(&batch[1], &AckKind::Term(Some("bad input".into())), None)
        .unwrap();
    js.ack(&batch[2], &AckKind::InProgress, None).unwrap();
    js.ack(&batch[2], &AckKind::Nak(None), None).unwrap();
    // The nak'ed one comes again (delivered twice), with the rest.
    let rest = js
        .fetch(
            "Q",
            "work",
            &FetchOptions {
                max_messages: 10,
                expires: Duration::from_millis(500),
                ..Default::default()
            },
        )
        .wait()
        .unwrap();
    let mut got: Vec<(Vec<u8>, u64)> = rest
        .iter()
        .map(|m| {
            (
                m.payload().to_vec(),
                parse_metadata(m.reply().unwrap()).unwrap().num_delivered,
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            (b"m4".to_vec(), 2),
            (b"m6".to_vec(), 1),
            (b"m8".to_vec(), 1)
        ]
    );
    for m in &rest {
        js.ack(m, &AckKind::Ack, Some(Duration::from_secs(2)))
            .unwrap();
    }
    // Nothing left: no_wait returns at once, next times out.
    let t0 = std::time::Instant::now();
    let none = js
        .fetch(
            "Q",
            "work",
            &FetchOptions {
                no_wait: true,
                ..Default::default()
            },
        )
        .wait()
        .unwrap();
    assert!(none.is_empty());
    assert!(t0.elapsed() < Duration::from_secs(2));
    assert_eq!(
        kind(js.next("Q", "work", Duration::from_millis(200)).wait()),
        ErrorKind::NoMessages
    );
    assert_eq!(
        js.consumer_info("Q", "work").wait().unwrap()["num_ack_pending"],
        0
    );

    // A fetch waiting on a consumer that gets deleted.
    let js2 = js.clone();
    let waiter = std::thread::spawn(move || {
        js2.fetch(
            "Q",
            "work",
            &FetchOptions {
                max_messages: 5,
                expires: Duration::from_secs(5),
                ..Default::default()
            },
        )
        .wait()
    });
    // Delete once the fetch's pull request is waiting on the server.
    assert!(common::wait_until(Duration::from_secs(10), || js
        .consumer_info("Q", "work")
        .wait()
        .is_ok_and(|i| i["num_waiting"].as_u64() >= Some(1))));
    js.delete_consumer("Q", "work").wait().unwrap();
    assert_eq!(kind(waiter.join().unwrap()), ErrorKind::ConsumerDeleted);
    assert_eq!(
        kind(js.consumer_info("Q", "work").wait()),
        ErrorKind::ConsumerNotFound
    );
    assert_eq!(
        kind(js.delete_consumer("Q", "work").wait()),
        ErrorKind::ConsumerNotFound
    );

    // Pulling from a consumer that does not exist.
    assert_eq!(
        kind(
            js.fetch(
                "Q",
                "nope",
                &FetchOptions {
                    no_wait: true,
                    ..Default::default()
                }
            )
            .wait()
        ),
        ErrorKind::ConsumerNotFound
    );

    // Not a JetStream message.
    assert_eq!(
        parse_metadata("_INBOX.x").unwrap_err().kind(),
        ErrorKind::NotJsMessage
    );
    assert_eq!(
        parse_metadata("$JS.ACK.a.b.c.1.2.3.4.5")
            .unwrap_err()
            .kind(),
        ErrorKind::NotJsMessage
    );
    let v2 = parse_metadata("$JS.ACK.hub.ACCHASH.S.C.1.2.3.1700000000000000000.4.tok").unwrap();
    assert_eq!(
        (v2.domain, v2.stream, v2.consumer, v2.num_pending),
        (Some("hub"), "S", "C", 4)
    );
    assert_eq!(
        parse_metadata("$JS.ACK._.H.S.C.1.2.3.4.5.x")
            .unwrap()
            .domain,
        None
    );
}

#[test]
fn kv_keys_and_history() {
    let s = TestServer::start();
    let (_c, js) = setup(&s);
    let kv = js
        .create_key_value(r#"{"bucket":"H","history":10}"#, CreateAction::Create)
        .wait()
        .unwrap();
    assert!(kv.keys().wait().unwrap().is_empty());
    assert_eq!(kind(kv.history("a").wait()), ErrorKind::KeyNotFound);
    for i in 0..3 {
        kv.put("a", format!("a{i}").as_bytes()).wait().unwrap();
    }
    kv.put("b.c", b"x").wait().unwrap();
    kv.put("gone", b"x").wait().unwrap();
    kv.delete("gone", None).wait().unwrap();
    for i in 0..300 {
        kv.put(&format!("many.{i}"), b"v").wait().unwrap();
    }
    let mut keys = kv.keys().wait().unwrap();
    keys.sort();
    assert_eq!(keys.len(), 302);
    assert_eq!(&keys[..2], &["a".to_string(), "b.c".to_string()]);
    assert!(!keys.contains(&"gone".to_string()));

    let h = kv.history("a").wait().unwrap();
    let values: Vec<&[u8]> = h.iter().map(|e| &e.value[..]).collect();
    assert_eq!(values, vec![&b"a0"[..], b"a1", b"a2"]);
    assert_eq!(h.iter().map(|e| e.delta).collect::<Vec<_>>(), vec![2, 1, 0]);
    assert!(h.windows(2).all(|w| w[0].revision < w[1].revision));
    let g = kv.history("gone").wait().unwrap();
    assert_eq!(
        g.iter().map(|e| e.operation).collect::<Vec<_>>(),
        vec![Operation::Put, Operation::Delete]
    );
    // Scans leave no consumers behind.
    assert!(js.consumer_names("KV_H").wait().unwrap().is_empty());
}

#[test]
fn consume_pulls_continuously_and_stops() {
    use natsio::jetstream::{AckKind, ConsumeOptions};
    let s = TestServer::start();
    let (_c, js) = setup(&s);
    stream_with_durable(&js, "C", r#"{"name":"C","subjects":["c.>"]}"#);
    for i in 0..1000 {
        js.publish_async("c.x", format!("{i}").as_bytes(), &PublishOptions::default())
            .unwrap();
    }
    js.publish_async_complete(Some(Duration::from_secs(10)))
        .wait()
        .unwrap();
    let opts = ConsumeOptions {
        max_messages: 64,
        expires: Duration::from_secs(2),
        idle_heartbeat: Duration::from_millis(500),
        ..ConsumeOptions::default()
    };
    let pull = js.consume("C", "d", opts.clone()).wait().unwrap();
    for i in 0..1000 {
        let m = pull
            .next(Some(Duration::from_secs(5)))
            .unwrap()
            .expect("a message");
        assert_eq!(m.payload(), format!("{i}").as_bytes());
        js.ack(&m, &AckKind::Ack, None).unwrap();
    }
    // Nothing more: a bounded wait times out, across pull request expiry.
    let t0 = std::time::Instant::now();
    assert_eq!(
        kind(pull.next(Some(Duration::from_millis(2500)))),
        ErrorKind::Timeout
    );
    assert!(t0.elapsed() >= Duration::from_millis(2400));
    // New messages arrive on the running consumption.
    js.publish("c.x", b"late", &PublishOptions::default())
        .wait()
        .unwrap();
    assert_eq!(
        pull.next(Some(Duration::from_secs(5)))
            .unwrap()
            .expect("a message")
            .payload(),
        b"late"
    );

    // stop() from another thread ends a blocked next.
    let stopper = pull.stopper();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        stopper.stop();
    });
    assert!(pull.next(None).unwrap().is_none(), "a stopped consume ends");
    t.join().unwrap();

    // A consumer deleted under an open pull request ends the consumption
    // with ConsumerDeleted (the server's 409 on that request). Its requests
    // last 30 s here, so the deletion meets one: the server lists it as
    // waiting before the delete is sent.
    let long = ConsumeOptions {
        expires: Duration::from_secs(30),
        idle_heartbeat: Duration::from_secs(5),
        ..opts.clone()
    };
    let pull = js.consume("C", "d", long).wait().unwrap();
    assert!(common::wait_until(Duration::from_secs(10), || js
        .consumer_info("C", "d")
        .wait()
        .is_ok_and(|i| i["num_waiting"].as_u64() >= Some(1))));
    js.delete_consumer("C", "d").wait().unwrap();
    let e = pull.next(Some(Duration::from_secs(10))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ConsumerDeleted, "{e}");
    assert_eq!(
        kind(js.consume("C", "d", opts.clone()).wait()),
        ErrorKind::ConsumerNotFound
    );
    let bad = ConsumeOptions {
        idle_heartbeat: Duration::from_secs(2),
        ..opts
    };
    assert_eq!(
        kind(js.consume("C", "d", bad).wait()),
        ErrorKind::InvalidArgument
    );
}

/// Stopping a consume withdraws its pull request before `stop` returns:
/// a message published right after goes to the next consume of the same
/// durable consumer, not to the abandoned request (where it would wait out
/// the ack wait, 30 s).
#[test]
fn a_message_published_right_after_stop_reaches_the_next_consume() {
    use natsio::jetstream::ConsumeOptions;
    let s = TestServer::start();
    let (_c, js) = setup(&s);
    stream_with_durable(&js, "S", r#"{"name":"S","subjects":["s.>"]}"#);
    let opts = ConsumeOptions {
        expires: Duration::from_secs(30),
        ..ConsumeOptions::default()
    };
    for round in 0..10 {
        let pull = js.consume("S", "d", opts.clone()).wait().unwrap();
        // Its request waits at the server.
        let mut info = serde_json::Value::Null;
        assert!(
            common::wait_until(Duration::from_secs(5), || {
                info = js.consumer_info("S", "d").wait().unwrap();
                info["num_waiting"].as_u64().unwrap_or(0) > 0
            }),
            "no pull request: {info}"
        );
        pull.stop();
        js.publish_async(
            "s.x",
            format!("{round}").as_bytes(),
            &PublishOptions::default(),
        )
        .unwrap();
        let next = js.consume("S", "d", opts.clone()).wait().unwrap();
        let m = next
            .next(Some(Duration::from_secs(5)))
            .unwrap_or_else(|e| panic!("round {round}: {e}"))
            .expect("a message");
        assert_eq!(m.payload(), format!("{round}").as_bytes());
        js.ack(&m, &AckKind::Ack, None).unwrap();
    }
}

/// Cancelling a started fetch withdraws its pull request before `cancel`
/// returns, also once the fetch runs on the runtime (a first message woke
/// it): a message published right after goes to the next fetch of the same
/// durable consumer, not to the abandoned request.
#[test]
fn a_message_published_right_after_a_fetch_is_cancelled_reaches_the_next_fetch() {
    use natsio::jetstream::FetchOptions;
    let s = TestServer::start();
    let (_c, js) = setup(&s);
    stream_with_durable(&js, "S", r#"{"name":"S","subjects":["s.>"]}"#);
    let waiting = FetchOptions {
        max_messages: 2,
        expires: Duration::from_secs(30),
        ..FetchOptions::default()
    };
    let ack_pending = |n: u64| {
        common::wait_until(Duration::from_secs(5), || {
            js.consumer_info("S", "d").wait().unwrap()["num_ack_pending"].as_u64() == Some(n)
        })
    };
    for round in 0..10u64 {
        let fetch = js.fetch("S", "d", &waiting).start().unwrap();
        // The first message reaches the fetch, which waits for a second.
        js.publish("s.first", b"first", &PublishOptions::default())
            .wait()
            .unwrap();
        assert!(ack_pending(round + 1), "round {round}: not delivered");
        assert!(fetch.cancel(), "round {round}: the fetch had ended");
        js.publish_async(
            "s.x",
            format!("{round}").as_bytes(),
            &PublishOptions::default(),
        )
        .unwrap();
        let m = js
            .next("S", "d", Duration::from_secs(5))
            .wait()
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert_eq!(m.payload(), format!("{round}").as_bytes());
        js.ack(&m, &AckKind::Ack, None).unwrap();
    }
}

#[test]
fn kv_watch_initial_values_updates_and_recovery() {
    use natsio::kv::{validate_key_pattern, WatchEvent, WatchOptions};
    let s = TestServer::start();
    let (_c, js) = setup(&s);
    let kv = js
        .create_key_value(r#"{"bucket":"W","history":5}"#, CreateAction::Create)
        .wait()
        .unwrap();
    kv.put("a.1", b"x1").wait().unwrap();
    kv.put("a.1", b"x2").wait().unwrap();
    kv.put("b.1", b"y").wait().unwrap();
    let t = Some(Duration::from_secs(5));
    let entry = |e: WatchEvent| match e {
        WatchEvent::Entry(e) => (e.key, e.value.to_vec(), e.operation),
        WatchEvent::InitialDone(_) => panic!("unexpected InitialDone"),
    };

    let w = kv.watch(&[], WatchOptions::default()).wait().unwrap();
    let first = [
        entry(w.next(t).unwrap().expect("an item")),
        entry(w.next(t).unwrap().expect("an item")),
    ];
    assert_eq!(first[0], ("a.1".into(), b"x2".to_vec(), Operation::Put));
    assert_eq!(first[1], ("b.1".into(), b"y".to_vec(), Operation::Put));
    assert!(matches!(
        w.next(t).unwrap().expect("an item"),
        WatchEvent::InitialDone(_)
    ));
    kv.put("c", b"z").wait().unwrap();
    assert_eq!(
        entry(w.next(t).unwrap().expect("an item")),
        ("c".into(), b"z".to_vec(), Operation::Put)
    );
    kv.delete("a.1", None).wait().unwrap();
    assert_eq!(
        entry(w.next(t).unwrap().expect("an item")).2,
        Operation::Delete
    );
    assert_eq!(
        kind(w.next(Some(Duration::from_millis(200)))),
        ErrorKind::Timeout
    );

    // The consumer vanishes (e.g. a server restart): the watch recreates it
    // after the last revision and goes on without repeating anything.
    for name in js.consumer_names("KV_W").wait().unwrap() {
        js.delete_consumer("KV_W", &name).wait().unwrap();
    }
    kv.put("d", b"after").wait().unwrap();
    assert_eq!(
        entry(w.next(t).unwrap().expect("an item")),
        ("d".into(), b"after".to_vec(), Operation::Put)
    );
    drop(w);

    // Patterns, history, updates only, ignore deletes.
    let w = kv
        .watch(
            &["a.*"],
            WatchOptions {
                include_history: true,
                ..Default::default()
            },
        )
        .wait()
        .unwrap();
    let vals: Vec<_> = (0..3)
        .map(|_| entry(w.next(t).unwrap().expect("an item")))
        .collect();
    assert_eq!(
        vals.iter().map(|v| v.2).collect::<Vec<_>>(),
        vec![Operation::Put, Operation::Put, Operation::Delete]
    );
    assert!(matches!(
        w.next(t).unwrap().expect("an item"),
        WatchEvent::InitialDone(_)
    ));
    let u = kv
        .watch(
            &["b.>", "c"],
            WatchOptions {
                updates_only: true,
                ignore_deletes: true,
                ..Default::default()
            },
        )
        .wait()
        .unwrap();
    assert!(matches!(
        u.next(t).unwrap().expect("an item"),
        WatchEvent::InitialDone(_)
    ));
    kv.delete("c", None).wait().unwrap();
    kv.put("a.2", b"not watched").wait().unwrap();
    kv.put("b.1", b"y2").wait().unwrap();
    assert_eq!(
        entry(u.next(t).unwrap().expect("an item")),
        ("b.1".into(), b"y2".to_vec(), Operation::Put)
    );
    // Updates only, consumer lost before any change: nothing is skipped.
    for name in js.consumer_names("KV_W").wait().unwrap() {
        js.delete_consumer("KV_W", &name).wait().unwrap();
    }
    kv.put("b.2", b"while gone").wait().unwrap();
    assert_eq!(
        entry(u.next(t).unwrap().expect("an item")),
        ("b.2".into(), b"while gone".to_vec(), Operation::Put)
    );
    // The bucket deleted under two watches: each ends with BucketNotFound,
    // not a plain timeout, and the end is final. Usually the deletion's
    // "409 Consumer Deleted" ends it at once; but the server queues that
    // notice on the stream's send loop and then stops the loop, which may
    // quit first (nats-server 2.14, `stream.stop`), and then two missed 5 s
    // heartbeats end it (5 to 10 s after the deletion). The wait covers both.
    js.delete_key_value("W").wait().unwrap();
    let gone = Some(Duration::from_secs(15));
    for watcher in [&u, &w] {
        let err = loop {
            match watcher.next(gone) {
                // `w` may still hold changes made before the deletion.
                Ok(Some(WatchEvent::Entry(_))) => continue,
                other => break kind(other),
            }
        };
        assert_eq!(err, ErrorKind::BucketNotFound);
        assert_eq!(kind(watcher.next(t)), ErrorKind::BucketNotFound);
    }
    drop(w);
    // An empty bucket: InitialDone right away.
    let empty = js
        .create_key_value(r#"{"bucket":"E"}"#, CreateAction::Create)
        .wait()
        .unwrap();
    let e = empty.watch(&[], WatchOptions::default()).wait().unwrap();
    assert!(matches!(
        e.next(t).unwrap().expect("an item"),
        WatchEvent::InitialDone(_)
    ));
    let stopper = e.stopper();
    stopper.stop();
    assert!(e.next(t).unwrap().is_none(), "a stopped watch ends");

    for bad in ["", "a..b", "a.>.b", "a*", "*x"] {
        assert_eq!(
            validate_key_pattern(bad).unwrap_err().kind(),
            ErrorKind::InvalidKey,
            "{bad:?}"
        );
        assert_eq!(
            kind(kv.watch(&[bad], WatchOptions::default()).wait()),
            ErrorKind::InvalidKey
        );
    }
    for good in ["a", "a.*", ">", "a.>", "*.b"] {
        validate_key_pattern(good).unwrap();
    }
}

#[test]
fn consume_and_watch_report_a_closed_client() {
    use natsio::jetstream::{ConsumeOptions, CreateAction};
    use natsio::kv::WatchOptions;
    let s = TestServer::start();
    let (c, js) = setup(&s);
    stream_with_durable(&js, "Z", r#"{"name":"Z","subjects":["z"]}"#);
    let kv = js
        .create_key_value(r#"{"bucket":"ZKV"}"#, CreateAction::Create)
        .wait()
        .unwrap();
    let pull = js
        .consume("Z", "d", ConsumeOptions::default())
        .wait()
        .unwrap();
    let w = kv.watch(&[], WatchOptions::default()).wait().unwrap();
    w.next(Some(Duration::from_secs(5)))
        .unwrap()
        .expect("the initial-done marker");
    let closer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        c.close();
    });
    assert_eq!(
        kind(pull.next(Some(Duration::from_secs(5)))),
        ErrorKind::ConnectionClosed
    );
    closer.join().unwrap();
    assert_eq!(
        kind(pull.next(Some(Duration::from_secs(1)))),
        ErrorKind::ConnectionClosed
    );
    assert_eq!(
        kind(w.next(Some(Duration::from_secs(1)))),
        ErrorKind::ConnectionClosed
    );
}

#[test]
fn consume_and_watch_resume_soon_after_the_server_restarts() {
    use natsio::jetstream::ConsumeOptions;
    use natsio::kv::{WatchEvent, WatchOptions};
    let mut s = TestServer::start();
    let (c, js) = setup(&s);
    stream_with_durable(
        &js,
        "R",
        r#"{"name":"R","subjects":["r.>"],"storage":"file"}"#,
    );
    let kv = js
        .create_key_value(r#"{"bucket":"RKV","storage":"file"}"#, CreateAction::Create)
        .wait()
        .unwrap();
    let consume = js
        .consume("R", "d", ConsumeOptions::default())
        .wait()
        .unwrap();
    let w = kv.watch(&[], WatchOptions::default()).wait().unwrap();
    let t = Some(Duration::from_secs(5));
    assert!(matches!(
        w.next(t).unwrap().expect("an item"),
        WatchEvent::InitialDone(_)
    ));
    js.publish("r.a", b"before", &PublishOptions::default())
        .wait()
        .unwrap();
    let m = consume.next(t).unwrap().expect("a message");
    assert_eq!(m.payload(), b"before");
    js.ack(&m, &AckKind::Ack, Some(Duration::from_secs(2)))
        .unwrap();

    s.kill();
    s.restart();
    let back = std::time::Instant::now();
    // The client reconnects after its reconnect wait (2 s by default).
    assert!(common::wait_until(Duration::from_secs(30), || c
        .stats()
        .reconnects
        == 1));
    let reconnected = std::time::Instant::now();
    // Publish as soon as JetStream answers again.
    let other = Client::connect_url(&s.url()).unwrap();
    let ojs = JetStream::new(&other, JetStreamOptions::default()).unwrap();
    assert!(common::wait_until(Duration::from_secs(30), || ojs
        .publish("r.a", b"after", &PublishOptions::default())
        .wait()
        .is_ok()));
    // Latencies count from the write being stored (its ack), not from the
    // reconnect: what lies between is this test's own setup (a second
    // client, JetStream round trips), which a loaded machine may stretch
    // to seconds and which says nothing of the library.
    let published = std::time::Instant::now();
    // The server was killed, not stopped: its file store may not have
    // written the consumer's ack floor yet, so "before" may come again
    // (at-least-once). Once at most, and never after "after".
    let mut m = consume
        .next(Some(Duration::from_secs(30)))
        .unwrap()
        .expect("a message");
    if m.payload() == b"before" {
        js.ack(&m, &AckKind::Ack, Some(Duration::from_secs(2)))
            .unwrap();
        m = consume
            .next(Some(Duration::from_secs(30)))
            .unwrap()
            .expect("a message");
    }
    let consume_after = published.elapsed();
    assert_eq!(m.payload(), b"after");
    let okv = ojs.key_value("RKV").wait().unwrap();
    okv.put("k", b"after").wait().unwrap();
    let put = std::time::Instant::now();
    let e = match w.next(Some(Duration::from_secs(30))).unwrap() {
        Some(WatchEvent::Entry(e)) => e,
        other => panic!("{other:?}"),
    };
    let watch_after = put.elapsed();
    assert_eq!(&e.value[..], b"after");
    println!(
        "server back -> client reconnected: {:?}; stored -> consume resumed: {consume_after:?}, watch resumed: {watch_after:?}",
        reconnected - back
    );
    // Resuming on the reconnect itself delivers within round trips. Without
    // it, the consume would notice its lost pull only after two missed
    // heartbeats (30 s by default) and the watch after two missed 5 s
    // heartbeats (10 s): well above these bounds, which are generous
    // enough for a loaded machine running debug builds.
    assert!(consume_after < Duration::from_secs(6), "{consume_after:?}");
    assert!(watch_after < Duration::from_secs(6), "{watch_after:?}");
}

#[test]
fn a_watcher_whose_buffer_fills_reports_what_the_bucket_discarded() {
    use natsio::kv::{WatchEvent, WatchOptions};
    use natsio::Options;
    use std::sync::{Arc, Mutex};
    let s = TestServer::start();
    let reports = Arc::new(Mutex::new(Vec::new()));
    let r2 = Arc::clone(&reports);
    let c = Client::connect(Options {
        servers: vec![s.url()],
        // A watcher buffers up to the client's pending limits.
        pending_msgs_limit: 5,
        error_callback: Some(Arc::new(move |ev: &natsio::ErrorEvent| {
            r2.lock()
                .unwrap()
                .push((ev.error.kind(), ev.error.detail().to_string()));
        })),
        ..Options::default()
    })
    .unwrap();
    let js = JetStream::new(&c, JetStreamOptions::default()).unwrap();
    let kv = js
        .create_key_value(r#"{"bucket":"FULL","history":1}"#, CreateAction::Create)
        .wait()
        .unwrap();
    let w = kv.watch(&[], WatchOptions::default()).wait().unwrap();
    let t = Some(Duration::from_secs(5));
    assert!(matches!(
        w.next(t).unwrap().expect("an item"),
        WatchEvent::InitialDone(_)
    ));
    // 20 revisions of one key; the bucket keeps only the latest.
    for i in 0..20u32 {
        kv.put("k", i.to_string().as_bytes()).wait().unwrap();
    }
    assert!(common::wait_until(Duration::from_secs(5), || w
        .stats()
        .stalls
        >= 1));
    let mut got = Vec::new();
    while let Ok(Some(WatchEvent::Entry(e))) = w.next(Some(Duration::from_millis(500))) {
        got.push(e.revision);
    }
    let st = w.stats();
    assert!(got.len() < 20, "the buffer was full: {got:?}");
    assert_eq!(*got.last().unwrap(), 20, "the latest revision arrives");
    assert_eq!(
        got.len() as u64 + st.dropped,
        20,
        "every revision is delivered or counted as missed: {got:?} {st:?}"
    );
    let reports = reports.lock().unwrap();
    assert!(
        reports
            .iter()
            .any(|(k, d)| *k == ErrorKind::SlowConsumer && d.contains("discarded")),
        "{reports:?}"
    );
}

#[test]
fn a_watcher_counts_a_revision_discarded_before_its_first_delivery() {
    // Regression: a revision the bucket replaced before the watcher's
    // first delivery was neither delivered nor counted (a gap was counted
    // only after some message had arrived). On a loaded machine the
    // server's delivery of revision 1 can lose the race with the put of
    // revision 2; here the race is settled: the InitialDone marker fills
    // a one-item buffer, so nothing is pulled until the reader takes it.
    use natsio::kv::{WatchEvent, WatchOptions};
    use natsio::Options;
    let s = TestServer::start();
    let c = Client::connect(Options {
        servers: vec![s.url()],
        pending_msgs_limit: 1,
        ..Options::default()
    })
    .unwrap();
    let js = JetStream::new(&c, JetStreamOptions::default()).unwrap();
    let kv = js
        .create_key_value(r#"{"bucket":"FIRST","history":1}"#, CreateAction::Create)
        .wait()
        .unwrap();
    let w = kv.watch(&[], WatchOptions::default()).wait().unwrap();
    assert!(common::wait_until(Duration::from_secs(30), || w
        .stats()
        .stalls
        >= 1));
    kv.put("k", b"1").wait().unwrap();
    kv.put("k", b"2").wait().unwrap();
    let t = Some(Duration::from_secs(30));
    assert!(matches!(
        w.next(t).unwrap().expect("an item"),
        WatchEvent::InitialDone(_)
    ));
    let e = match w.next(t).unwrap() {
        Some(WatchEvent::Entry(e)) => e,
        other => panic!("{other:?}"),
    };
    assert_eq!((e.revision, &e.value[..]), (2, &b"2"[..]));
    assert_eq!(w.stats().dropped, 1, "revision 1 is counted as missed");
}

#[test]
fn consume_delivers_every_message_in_order_across_many_pulls() {
    // Small windows mean many re-pulls; a message handed to the pull
    // engine while it was busy elsewhere used to be dropped.
    use natsio::jetstream::ConsumeOptions;
    let s = TestServer::start();
    let (_c, js) = setup(&s);
    for round in 0..20 {
        let stream = format!("ORD{round}");
        js.create_stream(
            &format!(r#"{{"name":"{stream}","subjects":["ord{round}"],"storage":"memory"}}"#),
            CreateAction::Create,
        )
        .wait()
        .unwrap();
        for i in 0..1000u32 {
            js.publish_async(
                &format!("ord{round}"),
                &i.to_be_bytes(),
                &PublishOptions::default(),
            )
            .unwrap();
        }
        js.publish_async_complete(Some(Duration::from_secs(10)))
            .wait()
            .unwrap();
        js.create_consumer(
            &stream,
            r#"{"durable_name":"d","ack_wait":"30s"}"#,
            CreateAction::Create,
        )
        .wait()
        .unwrap();
        let opts = ConsumeOptions {
            max_messages: 100,
            expires: Duration::from_secs(2),
            idle_heartbeat: Duration::from_secs(1),
            ..ConsumeOptions::default()
        };
        let it = js.consume(&stream, "d", opts).wait().unwrap();
        for i in 0..1000u32 {
            let m = it
                .next(Some(Duration::from_secs(5)))
                .unwrap()
                .unwrap_or_else(|| panic!("round {round}: ended at {i}"));
            assert_eq!(m.payload(), i.to_be_bytes(), "round {round}");
            js.ack(&m, &AckKind::Ack, None).unwrap();
        }
    }
}

/// A watch subscribes to its stream's leader-elected advisories to resume
/// at once after a leader change; a user not allowed `$JS.EVENT.>` still
/// watches, and that refused subscription is not reported as an error.
#[test]
fn a_watch_without_permission_for_advisories_works_and_reports_nothing() {
    use natsio::kv::{WatchEvent, WatchOptions};
    use natsio::Options;
    use std::sync::{Arc, Mutex};
    let s = TestServer::with_config(
        r#"authorization { users = [ { user: w, password: w, permissions: {
            publish: ">", subscribe: { allow: ">", deny: "$JS.EVENT.>" } } } ] }"#,
    );
    let reports = Arc::new(Mutex::new(Vec::new()));
    let r2 = Arc::clone(&reports);
    let c = Client::connect(Options {
        servers: vec![s.url()],
        user: Some("w".into()),
        password: Some("w".into()),
        error_callback: Some(Arc::new(move |ev: &natsio::ErrorEvent| {
            r2.lock().unwrap().push(ev.error.detail().to_string());
        })),
        ..Options::default()
    })
    .unwrap();
    let js = JetStream::new(&c, JetStreamOptions::default()).unwrap();
    let kv = js
        .create_key_value(r#"{"bucket":"QUIET"}"#, CreateAction::Create)
        .wait()
        .unwrap();
    let w = kv.watch(&[], WatchOptions::default()).wait().unwrap();
    let t = Some(Duration::from_secs(5));
    assert!(matches!(
        w.next(t).unwrap().expect("an item"),
        WatchEvent::InitialDone(_)
    ));
    kv.put("k", b"v").wait().unwrap();
    match w.next(t).unwrap().expect("an entry") {
        WatchEvent::Entry(e) => assert_eq!((e.key.as_str(), e.revision), ("k", 1)),
        other => panic!("{other:?}"),
    }
    // The server has answered everything sent, the refused SUB included.
    c.flush(None).unwrap();
    // A user's own subscription to a subject it may not take is reported.
    let _own = c
        .subscribe("$JS.EVENT.ADVISORY.>", None, SubOptions::default())
        .unwrap();
    c.flush(None).unwrap();
    assert!(common::wait_until(Duration::from_secs(5), || !reports
        .lock()
        .unwrap()
        .is_empty()));
    let reports = reports.lock().unwrap();
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert!(reports[0].contains("$JS.EVENT.ADVISORY.>"), "{reports:?}");
}

/// The top-level keys of a JSON object, in order.
fn keys(v: &serde_json::Value) -> Vec<String> {
    v.as_object().expect("an object").keys().cloned().collect()
}

#[test]
fn infos_keep_the_servers_key_order_and_type_on_request() {
    let s = TestServer::start();
    let (c, js) = setup(&s);
    js.create_stream(
        r#"{"name":"KO","subjects":["ko.>"],"storage":"memory"}"#,
        CreateAction::Create,
    )
    .wait()
    .unwrap();
    js.create_consumer("KO", r#"{"durable_name":"d"}"#, CreateAction::Create)
        .wait()
        .unwrap();
    let raw = |api: &str| -> serde_json::Value {
        let m = c.request(api, None, b"", None).unwrap();
        serde_json::from_slice(m.payload()).unwrap()
    };
    let server_stream = raw("$JS.API.STREAM.INFO.KO");
    let server_consumer = raw("$JS.API.CONSUMER.INFO.KO.d");
    assert_eq!(
        server_stream["type"],
        "io.nats.jetstream.api.v1.stream_info_response"
    );

    // By default: the server's keys in its order, without `type`.
    let mut want = keys(&server_stream);
    want.retain(|k| k != "type");
    let info = js.stream_info("KO").wait().unwrap();
    assert_eq!(keys(&info), want);
    assert_eq!(keys(&info["config"]), keys(&server_stream["config"]));

    // keep_response_type: exactly the server's keys, `type` first.
    let kept = JetStream::new(
        &c,
        JetStreamOptions {
            keep_response_type: true,
            ..Default::default()
        },
    )
    .unwrap();
    let info = kept.stream_info("KO").wait().unwrap();
    assert_eq!(keys(&info), keys(&server_stream));
    assert_eq!(info["type"], server_stream["type"]);
    let info = kept.consumer_info("KO", "d").wait().unwrap();
    assert_eq!(keys(&info), keys(&server_consumer));
    assert_eq!(keys(&info["config"]), keys(&server_consumer["config"]));
    assert_eq!(
        info["type"],
        "io.nats.jetstream.api.v1.consumer_info_response"
    );
}

#[test]
fn an_ordered_consumers_server_side_consumers_are_configured_as_nats_go_does() {
    use natsio::jetstream::{
        parse_metadata, DeliverPolicy, OrderedConsumerConfig, OrderedMessagesOptions,
    };
    let s = TestServer::start();
    let (_c, js) = setup(&s);
    js.create_stream(
        r#"{"name":"OCFG","subjects":["ocfg.>"],"storage":"memory"}"#,
        CreateAction::Create,
    )
    .wait()
    .unwrap();
    for i in 1..=3 {
        js.publish(
            &format!("ocfg.{i}"),
            format!("m{i}").as_bytes(),
            &PublishOptions::default(),
        )
        .wait()
        .unwrap();
    }
    let oc = js
        .ordered_consumer("OCFG", OrderedConsumerConfig::default())
        .unwrap();
    let started = oc.start().wait().unwrap();
    let name = started["name"].as_str().unwrap().to_string();
    // `<NUID>_<serial>`: a 22-character prefix, the first consumer 1.
    let prefix = name.strip_suffix("_1").unwrap_or_else(|| panic!("{name}"));
    assert_eq!(prefix.len(), 22, "{name}");
    assert!(
        prefix.chars().all(|ch| ch.is_ascii_alphanumeric()),
        "{name}"
    );
    // What a user reads back from the server.
    let info = js.consumer_info("OCFG", &name).wait().unwrap();
    let cfg = &info["config"];
    assert_eq!(cfg["name"], name.as_str(), "{cfg}");
    assert_eq!(cfg["deliver_policy"], "all", "{cfg}");
    assert!(cfg.get("opt_start_seq").is_none(), "{cfg}");
    assert_eq!(cfg["ack_policy"], "none", "{cfg}");
    assert_eq!(cfg["max_deliver"], -1, "{cfg}");
    assert_eq!(cfg["mem_storage"], true, "{cfg}");
    assert_eq!(cfg["num_replicas"], 1, "{cfg}");
    assert_eq!(cfg["inactive_threshold"], 300_000_000_000u64, "{cfg}");
    assert!(cfg.get("durable_name").is_none(), "{cfg}");

    let flow = oc
        .messages(OrderedMessagesOptions {
            expires: Duration::from_secs(2),
            idle_heartbeat: Some(Duration::from_millis(500)),
            ..Default::default()
        })
        .wait()
        .unwrap();
    let t = Some(Duration::from_secs(10));
    for i in 1..=3 {
        let m = flow.next(t).unwrap().expect("a message");
        assert_eq!(m.payload(), format!("m{i}").as_bytes());
    }
    // Its consumer lost: the next one is `<prefix>_<serial>`, starting
    // right after the last stream sequence delivered.
    js.delete_consumer("OCFG", &name).wait().unwrap();
    js.publish("ocfg.4", b"m4", &PublishOptions::default())
        .wait()
        .unwrap();
    let m = flow.next(t).unwrap().expect("a message");
    assert_eq!(m.payload(), b"m4");
    let md = parse_metadata(m.reply().unwrap()).unwrap();
    let serial: u64 = md
        .consumer
        .strip_prefix(prefix)
        .and_then(|s| s.strip_prefix('_'))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{}", md.consumer));
    assert!(serial >= 2, "{}", md.consumer);
    let cfg = js.consumer_info("OCFG", md.consumer).wait().unwrap()["config"].clone();
    assert_eq!(cfg["deliver_policy"], "by_start_sequence", "{cfg}");
    assert_eq!(cfg["opt_start_seq"], 4, "{cfg}");
    assert_eq!(cfg["ack_policy"], "none", "{cfg}");
    assert_eq!(cfg["mem_storage"], true, "{cfg}");
    oc.stop().wait().unwrap();

    // A name prefix, an inactive threshold, max_deliver, a deliver policy.
    let oc = js
        .ordered_consumer(
            "OCFG",
            OrderedConsumerConfig {
                deliver_policy: DeliverPolicy::Last,
                filter_subjects: vec!["ocfg.2".into()],
                name_prefix: Some("mine".into()),
                inactive_threshold: Some(Duration::from_secs(10)),
                max_deliver: Some(1),
                metadata: [("team".to_string(), "billing".to_string())].into(),
                ..Default::default()
            },
        )
        .unwrap();
    let info = oc.start().wait().unwrap();
    assert_eq!(info["name"], "mine_1");
    assert_eq!(info["config"]["metadata"]["team"], "billing", "{info}");
    let cfg = js.consumer_info("OCFG", "mine_1").wait().unwrap()["config"].clone();
    assert_eq!(cfg["deliver_policy"], "last", "{cfg}");
    assert_eq!(cfg["filter_subject"], "ocfg.2", "{cfg}");
    assert_eq!(cfg["inactive_threshold"], 10_000_000_000u64, "{cfg}");
    assert_eq!(cfg["max_deliver"], 1, "{cfg}");
    oc.stop().wait().unwrap();
    let bad = OrderedConsumerConfig {
        name_prefix: Some("a.b".into()),
        ..Default::default()
    };
    assert_eq!(
        js.ordered_consumer("OCFG", bad).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}
