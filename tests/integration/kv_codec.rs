//! Key-Value codecs against a real nats-server: every verb of a handle
//! with codecs encodes what it is given and decodes what it returns, and
//! the stored form is the other clients' (checked through a plain handle
//! on the same bucket).

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::TestServer;
use natsio::jetstream::{CreateAction, JetStream, JetStreamOptions};
use natsio::kv::{
    Base64KeyCodec, KeyChainCodec, KeyCodec, Operation, PathKeyCodec, ValueChainCodec, WatchEvent,
    WatchOptions, ZlibValueCodec,
};
use natsio::{Client, ErrorKind};

use crate::jetstream::kind;

fn setup(s: &TestServer) -> (Client, JetStream) {
    let c = Client::connect_url(&s.url()).expect("connect");
    let js = JetStream::new(&c, JetStreamOptions::default()).unwrap();
    (c, js)
}

fn zlib_inflate(stored: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(stored)
        .read_to_end(&mut out)
        .expect("zlib data");
    out
}

#[test]
fn kv_codecs_encode_and_decode_every_verb() {
    let s = TestServer::start();
    let (_c, js) = setup(&s);
    let plain = js
        .create_key_value(r#"{"bucket":"CODEC","history":5}"#, CreateAction::Create)
        .wait()
        .unwrap();
    let kv = plain.with_codecs(
        Some(Arc::new(Base64KeyCodec::standard())),
        Some(Arc::new(ZlibValueCodec::new(9).unwrap())),
    );
    // A key the key rules refuse is fine once encoded.
    let key = "user.john doe";
    assert_eq!(kind(plain.put(key, b"v").wait()), ErrorKind::InvalidKey);
    let r1 = kv.put(key, b"first").wait().unwrap();

    // Stored as nats.js's Base64KeyCodec writes it, the value as zlib data.
    assert_eq!(plain.keys().wait().unwrap(), vec!["dXNlcg==.am9obiBkb2U="]);
    let stored = plain.get("dXNlcg==.am9obiBkb2U=", None).wait().unwrap();
    assert_eq!(zlib_inflate(&stored.value), b"first");

    let e = kv.get(key, None).wait().unwrap();
    assert_eq!(
        (e.key.as_str(), &e.value[..], e.revision),
        (key, &b"first"[..], r1)
    );
    let r2 = kv.update(key, b"second", r1).wait().unwrap();
    assert_eq!(
        kind(kv.update(key, b"x", r1).wait()),
        ErrorKind::WrongLastSequence
    );
    assert_eq!(kind(kv.create(key, b"x").wait()), ErrorKind::KeyExists);
    kv.create("user.jane", b"created").wait().unwrap();
    assert_eq!(&kv.get(key, Some(r1)).wait().unwrap().value[..], b"first");

    let mut keys = kv.keys().wait().unwrap();
    keys.sort();
    assert_eq!(keys, vec!["user.jane", key]);
    assert_eq!(kv.keys_filtered(&["user.*"]).wait().unwrap().len(), 2);
    assert_eq!(
        kv.keys_filtered(&["user.jane"]).wait().unwrap(),
        vec!["user.jane"]
    );

    let h = kv.history(key).wait().unwrap();
    let values: Vec<&[u8]> = h.iter().map(|e| &e.value[..]).collect();
    assert_eq!(values, vec![&b"first"[..], b"second"]);
    assert!(h.iter().all(|e| e.key == key));

    // Watch with a wildcard filter: encoded keeping the wildcard, entries
    // decoded, markers passed through without a value to decode.
    let t = Some(Duration::from_secs(5));
    let w = kv
        .watch(&["user.*"], WatchOptions::default())
        .wait()
        .unwrap();
    let mut seen = Vec::new();
    while let WatchEvent::Entry(e) = w.next(t).unwrap().expect("an item") {
        seen.push((e.key, e.value.to_vec()));
    }
    seen.sort();
    assert_eq!(
        seen,
        vec![
            ("user.jane".to_string(), b"created".to_vec()),
            (key.to_string(), b"second".to_vec()),
        ]
    );
    let rd = kv.delete(key, Some(r2)).wait().unwrap();
    match w.next(t).unwrap().expect("an item") {
        WatchEvent::Entry(e) => {
            assert_eq!(
                (e.key.as_str(), e.operation, e.revision),
                (key, Operation::Delete, rd)
            )
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(kind(kv.get(key, None).wait()), ErrorKind::KeyDeleted);
    kv.purge("user.jane", None).wait().unwrap();
    match w.next(t).unwrap().expect("an item") {
        WatchEvent::Entry(e) => assert_eq!(
            (e.key.as_str(), e.operation),
            ("user.jane", Operation::Purge)
        ),
        other => panic!("unexpected {other:?}"),
    }
    assert!(kv.keys().wait().unwrap().is_empty());
    // The markers are kept by purge_deletes' younger-than rule and gone
    // with no age limit: their stored keys name the subjects.
    kv.purge_deletes(None).wait().unwrap();
    assert_eq!(kind(kv.history(key).wait()), ErrorKind::KeyNotFound);
}

#[test]
fn kv_codecs_paths_chains_and_failures() {
    let s = TestServer::start();
    let (_c, js) = setup(&s);
    let plain = js
        .create_key_value(r#"{"bucket":"PATHS"}"#, CreateAction::Create)
        .wait()
        .unwrap();
    let paths = plain.with_codecs(Some(Arc::new(PathKeyCodec)), None);
    paths.put("/etc/hosts", b"h").wait().unwrap();
    paths.put("var/log/", b"l").wait().unwrap();
    let mut stored = plain.keys().wait().unwrap();
    stored.sort();
    assert_eq!(stored, vec!["_root_.etc.hosts", "var.log"]);
    let mut keys = paths.keys_filtered(&["/etc/*"]).wait().unwrap();
    keys.extend(paths.keys_filtered(&["var/>"]).wait().unwrap());
    assert_eq!(keys, vec!["/etc/hosts", "var/log"]);

    // A chain: path, then base64 in orbit.go's form (every key valid).
    let chain = plain.with_codecs(
        Some(Arc::new(
            KeyChainCodec::new(vec![
                Arc::new(PathKeyCodec),
                Arc::new(Base64KeyCodec::url_safe()),
            ])
            .unwrap(),
        )),
        Some(Arc::new(
            ValueChainCodec::new(vec![
                Arc::new(ZlibValueCodec::new(-1).unwrap()),
                Arc::new(natsio::kv::Base64ValueCodec),
            ])
            .unwrap(),
        )),
    );
    chain.put("/a b/~~~", b"chained").wait().unwrap();
    assert!(plain
        .keys()
        .wait()
        .unwrap()
        .contains(&"X3Jvb3Rf.YSBi.fn5-".to_string()));
    assert_eq!(
        &chain.get("/a b/~~~", None).wait().unwrap().value[..],
        b"chained"
    );
    assert_eq!(
        chain.keys_filtered(&["/a b/*"]).wait().unwrap(),
        vec!["/a b/~~~"]
    );

    // A key codec without a filter form refuses wildcard filters.
    struct Reversed;
    impl KeyCodec for Reversed {
        fn encode_key(&self, key: &str) -> natsio::Result<String> {
            Ok(key.chars().rev().collect())
        }
        fn decode_key(&self, stored: &str) -> natsio::Result<String> {
            Ok(stored.chars().rev().collect())
        }
    }
    let reversed = plain.with_codecs(Some(Arc::new(Reversed)), None);
    reversed.put("ab.cd", b"r").wait().unwrap();
    assert_eq!(&plain.get("dc.ba", None).wait().unwrap().value[..], b"r");
    assert_eq!(
        reversed.keys_filtered(&["ab.cd"]).wait().unwrap(),
        vec!["ab.cd"]
    );
    assert_eq!(
        kind(reversed.keys_filtered(&["ab.*"]).wait()),
        ErrorKind::KvWildcardNotSupported
    );
    assert_eq!(
        kind(reversed.watch(&["ab.>"], WatchOptions::default()).wait()),
        ErrorKind::KvWildcardNotSupported
    );
    // Only the encoded key is validated.
    assert_eq!(
        kind(reversed.put("a..b", b"x").wait()),
        ErrorKind::InvalidKey
    );

    // A stored value the codec cannot read fails the get, and a stored key
    // it cannot read ends the listing, each with its codec error.
    plain.put("k", b"not zlib").wait().unwrap();
    let zlib = plain.with_codecs(None, Some(Arc::new(ZlibValueCodec::new(1).unwrap())));
    assert_eq!(
        kind(zlib.get("k", None).wait()),
        ErrorKind::KvValueDecodeFailed
    );
    let b64 = plain.with_codecs(Some(Arc::new(Base64KeyCodec::standard())), None);
    plain.put("x", b"x").wait().unwrap();
    assert_eq!(kind(b64.keys().wait()), ErrorKind::KvKeyDecodeFailed);
}
