//! Object Store (ADR-20) against a real nats-server: the core's semantics,
//! which every binding inherits.

use crate::common;

use std::time::Duration;

use common::TestServer;
use natsio::jetstream::{CreateAction, JetStream, JetStreamOptions, PublishOptions};
use natsio::object::{ObjectMeta, ObjectReader, ObjectStore, ObjectWatchEvent, ObjectWatchOptions};
use natsio::{Client, ErrorKind};

fn setup(s: &TestServer, bucket: &str) -> (Client, JetStream, ObjectStore) {
    let c = Client::connect_url(&s.url()).expect("connect");
    let js = JetStream::new(&c, JetStreamOptions::default()).unwrap();
    let os = js
        .create_object_store(
            &format!(r#"{{"bucket":"{bucket}","storage":"memory"}}"#),
            CreateAction::Create,
        )
        .wait()
        .unwrap();
    (c, js, os)
}

fn meta(name: &str, chunk_size: Option<usize>) -> ObjectMeta {
    ObjectMeta {
        name: name.into(),
        chunk_size,
        ..ObjectMeta::default()
    }
}

fn read_all(r: &ObjectReader) -> natsio::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 7000];
    loop {
        let n = r.read(&mut buf, Some(Duration::from_secs(10)))?;
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(&buf[..n]);
    }
}

fn pseudo_random(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn kind<T: std::fmt::Debug>(r: natsio::Result<T>) -> ErrorKind {
    r.expect_err("expected an error").kind()
}

#[test]
fn round_trips_at_chunk_boundaries() {
    let s = TestServer::start();
    let (_c, _js, os) = setup(&s, "RT");
    for (i, len) in [0usize, 1, 1024, 1025, 300_000].into_iter().enumerate() {
        let data = pseudo_random(len, i as u64 + 1);
        let name = format!("obj-{len}");
        let info = os.put(meta(&name, Some(1024)), &data).wait().unwrap();
        assert_eq!(info.size, len as u64);
        assert_eq!(info.chunks, len.div_ceil(1024) as u64);
        assert!(info.digest.as_deref().unwrap().starts_with("SHA-256="));
        let r = os.get(&name, false).wait().unwrap();
        assert_eq!(r.info().size, len as u64);
        assert_eq!(r.info().digest, info.digest);
        assert_eq!(read_all(&r).unwrap(), data, "{name}");
    }
    // A default-sized (128 KiB) multi-chunk object through a writer fed in
    // odd pieces.
    let data = pseudo_random(1_000_003, 9);
    let w = os.writer(meta("pieces", None)).unwrap();
    for piece in data.chunks(77_777) {
        w.write(piece).wait().unwrap();
    }
    let info = w.finish().wait().unwrap();
    assert_eq!(info.chunks, 8);
    assert_eq!(
        kind(w.write(b"late").wait()),
        ErrorKind::IllegalState,
        "a finished writer refuses more"
    );
    let got = read_all(&os.get("pieces", false).wait().unwrap()).unwrap();
    assert_eq!(got, data);
}

#[test]
fn a_corrupted_object_fails_with_digest_mismatch() {
    let s = TestServer::start();
    let (c, js, os) = setup(&s, "BAD");
    let info = os
        .put(meta("x", Some(100)), &pseudo_random(250, 3))
        .wait()
        .unwrap();
    // One chunk more than recorded.
    js.publish(
        &format!("$O.BAD.C.{}", info.nuid),
        b"junk",
        &PublishOptions::default(),
    )
    .wait()
    .unwrap();
    let r = os.get("x", false).wait().unwrap();
    assert_eq!(kind(read_all(&r)), ErrorKind::DigestMismatch);
    // The same size but other bytes: replace the chunks of a new object.
    let info = os.put(meta("y", Some(100)), &[7u8; 100]).wait().unwrap();
    let opts = format!(r#"{{"filter":"$O.BAD.C.{}"}}"#, info.nuid);
    js.purge_stream("OBJ_BAD", Some(&opts)).wait().unwrap();
    js.publish(
        &format!("$O.BAD.C.{}", info.nuid),
        &[8u8; 100],
        &PublishOptions::default(),
    )
    .wait()
    .unwrap();
    let r = os.get("y", false).wait().unwrap();
    assert_eq!(kind(read_all(&r)), ErrorKind::DigestMismatch);
    drop(c);
}

#[test]
fn replace_delete_rename_and_links() {
    let s = TestServer::start();
    let (_c, js, os) = setup(&s, "OPS");
    let first = os.put(meta("a", Some(64)), &[1u8; 640]).wait().unwrap();
    let second = os.put(meta("a", Some(64)), &[2u8; 100]).wait().unwrap();
    assert_ne!(first.nuid, second.nuid);
    // The first version's 10 chunks are gone: 2 chunks and 1 description.
    let st = os.status().wait().unwrap();
    assert_eq!(st.stream_info["state"]["messages"], 3);
    assert_eq!(
        read_all(&os.get("a", false).wait().unwrap()).unwrap(),
        vec![2u8; 100]
    );

    // Rename; renaming onto a live object is refused.
    os.put(meta("b", None), b"bee").wait().unwrap();
    let rename = |to: &str| ObjectMeta {
        name: to.into(),
        description: Some("renamed".into()),
        ..ObjectMeta::default()
    };
    assert_eq!(
        kind(os.update_meta("a", rename("b")).wait()),
        ErrorKind::ObjectExists
    );
    os.update_meta("a", rename("c")).wait().unwrap();
    assert_eq!(kind(os.info("a", false).wait()), ErrorKind::ObjectNotFound);
    let c = os.info("c", false).wait().unwrap();
    assert_eq!(c.description.as_deref(), Some("renamed"));
    assert_eq!(c.nuid, second.nuid);

    // Links: to an object, to a bucket; not to a link or a deleted object.
    let link = os.add_link("to-c", &c).wait().unwrap();
    assert!(link.is_link());
    let through = os.get("to-c", false).wait().unwrap();
    assert_eq!(through.info().name, "c");
    assert_eq!(read_all(&through).unwrap(), vec![2u8; 100]);
    assert_eq!(kind(os.add_link("x", &link).wait()), ErrorKind::ObjectLink);
    assert_eq!(
        kind(os.add_link("b", &c).wait()),
        ErrorKind::ObjectExists,
        "a link does not replace a live object"
    );
    os.add_bucket_link("all", "OPS").wait().unwrap();
    assert_eq!(kind(os.get("all", false).wait()), ErrorKind::ObjectLink);

    // Delete: a tombstone, chunks purged.
    os.delete("c").wait().unwrap();
    assert_eq!(kind(os.get("c", false).wait()), ErrorKind::ObjectDeleted);
    let gone = os.info("c", true).wait().unwrap();
    assert!(gone.deleted);
    assert_eq!(gone.size, 0);
    assert_eq!(kind(os.add_link("x", &gone).wait()), ErrorKind::ObjectLink);
    let deleted_read = os.get("c", true).wait().unwrap();
    assert!(read_all(&deleted_read).unwrap().is_empty());

    let names = |v: Vec<natsio::object::ObjectInfo>| {
        let mut n: Vec<String> = v.into_iter().map(|i| i.name).collect();
        n.sort();
        n
    };
    assert_eq!(names(os.list(false).wait().unwrap()), ["all", "b", "to-c"]);
    assert_eq!(
        names(os.list(true).wait().unwrap()),
        ["all", "b", "c", "to-c"]
    );
    drop(js);
}

#[test]
fn an_aborted_write_keeps_the_previous_version() {
    let s = TestServer::start();
    let (_c, _js, os) = setup(&s, "AB");
    os.put(meta("doc", Some(128)), b"version one")
        .wait()
        .unwrap();
    let w = os.writer(meta("doc", Some(128))).unwrap();
    w.write(&[9u8; 1000]).wait().unwrap();
    w.abort().wait().unwrap();
    assert_eq!(
        read_all(&os.get("doc", false).wait().unwrap()).unwrap(),
        b"version one"
    );
    // Only the first version's chunk and description are left.
    assert_eq!(
        os.status().wait().unwrap().stream_info["state"]["messages"],
        2
    );
}

#[test]
fn buckets_seal_names_and_statuses() {
    let s = TestServer::start();
    let (_c, js, os) = setup(&s, "S1");
    js.create_object_store(
        r#"{"bucket":"S2","description":"two","metadata":{"k":"v"},"ttl":"1h","storage":"memory"}"#,
        CreateAction::Create,
    )
    .wait()
    .unwrap();
    assert_eq!(
        kind(
            js.create_object_store(
                r#"{"bucket":"S2","description":"other","storage":"memory"}"#,
                CreateAction::Create
            )
            .wait()
        ),
        ErrorKind::BucketExists
    );
    assert_eq!(
        kind(
            js.create_object_store(r#"{"bucket":"NOPE"}"#, CreateAction::Update)
                .wait()
        ),
        ErrorKind::BucketNotFound
    );
    // A plain stream on $O subjects is no bucket.
    js.create_stream(
        r#"{"name":"PLAIN","subjects":["$O.PLAIN.C.>"],"storage":"memory"}"#,
        CreateAction::Create,
    )
    .wait()
    .unwrap();
    let mut names = js.object_store_names().wait().unwrap();
    names.sort();
    assert_eq!(names, ["S1", "S2"]);
    let statuses = js.object_stores().wait().unwrap();
    let s2 = statuses.iter().find(|s| s.bucket == "S2").unwrap();
    assert_eq!(s2.description.as_deref(), Some("two"));
    assert_eq!(s2.ttl_ns, 3_600_000_000_000);
    assert_eq!(s2.storage, "memory");
    assert_eq!(s2.metadata.get("k").map(String::as_str), Some("v"));

    os.put(meta("kept", None), b"still here").wait().unwrap();
    os.seal().wait().unwrap();
    assert!(os.status().wait().unwrap().sealed);
    assert_eq!(
        kind(os.put(meta("new", None), b"no").wait()),
        ErrorKind::BucketSealed
    );
    assert_eq!(
        read_all(&os.get("kept", false).wait().unwrap()).unwrap(),
        b"still here"
    );
    js.delete_object_store("S2").wait().unwrap();
    assert_eq!(
        kind(js.object_store("S2").wait()),
        ErrorKind::BucketNotFound
    );
    assert_eq!(
        kind(js.object_store("bad.name").wait()),
        ErrorKind::InvalidBucketName
    );
}

#[test]
fn watch_delivers_initial_values_then_changes() {
    let s = TestServer::start();
    let (_c, _js, os) = setup(&s, "W");
    os.put(meta("one", None), b"1").wait().unwrap();
    os.put(meta("two", None), b"2").wait().unwrap();
    os.delete("two").wait().unwrap();
    let w = os
        .watch(ObjectWatchOptions {
            ignore_deletes: true,
            ..ObjectWatchOptions::default()
        })
        .wait()
        .unwrap();
    let next = || w.next(Some(Duration::from_secs(5))).unwrap().unwrap();
    let name_of = |e: ObjectWatchEvent| match e {
        ObjectWatchEvent::Info(i) => i.name.clone(),
        ObjectWatchEvent::InitialDone(_) => "<initial done>".into(),
    };
    assert_eq!(name_of(next()), "one");
    assert_eq!(name_of(next()), "<initial done>");
    os.put(meta("three", None), b"3").wait().unwrap();
    assert_eq!(name_of(next()), "three");
    os.delete("three").wait().unwrap();
    os.put(meta("four", None), b"4").wait().unwrap();
    assert_eq!(name_of(next()), "four", "the deletion is left out");

    let updates = os
        .watch(ObjectWatchOptions {
            updates_only: true,
            ..ObjectWatchOptions::default()
        })
        .wait()
        .unwrap();
    let first = updates.next(Some(Duration::from_secs(5))).unwrap().unwrap();
    assert!(matches!(first, ObjectWatchEvent::InitialDone(_)));
    os.put(meta("five", None), b"5").wait().unwrap();
    let got = updates.next(Some(Duration::from_secs(5))).unwrap().unwrap();
    assert_eq!(name_of(got), "five");
}
