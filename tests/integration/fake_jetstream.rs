//! JetStream's self-healing paths against a scripted fake JetStream: what
//! a real server produces only by chance (a consumer-sequence gap, a pull
//! request the server forgot, a stream of 409s) is scripted here per pull
//! request, so each healing path runs every time.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use natsio::jetstream::{
    ConsumeOptions, Consumption, CreateAction, FetchOptions, JetStream, JetStreamOptions,
    MsgSelector, OrderedConsumer, OrderedConsumerConfig, OrderedMessagesOptions,
};
use natsio::{Client, ErrorKind, Message};
use serde_json::{json, Value};

use super::fake_server::{error_recorder, fake_server, options, wait_until};
use super::jetstream::kind;

/// What the fake sends in answer to one pull request.
enum Pull {
    /// Nothing at all, not even heartbeats: a request the server lost.
    Silent,
    /// One status message ("NATS/1.0 409 ...").
    Status(&'static str),
    /// Messages as (stream sequence, consumer sequence), each on subject
    /// `orders.<sseq>` with payload `m<sseq>`.
    Deliver(Vec<(u64, u64)>),
}

/// What the client asked of the fake.
#[derive(Default)]
struct Seen {
    /// The config of every consumer created, in order.
    creates: Vec<Value>,
    /// Pull requests, over all consumers.
    pulls: usize,
    /// In order: "pull <reply sid> <body>" per pull request and
    /// "unsub <sid>" per UNSUB.
    log: Vec<String>,
}

/// One publish the client sent the fake, with the means to answer it.
struct Request<'a> {
    subject: &'a str,
    reply: &'a str,
    body: &'a [u8],
    /// The sid of the client's subscription to `reply`.
    reply_sid: String,
}

impl Request<'_> {
    /// Sends `payload` to the reply subject (nothing when there is none).
    fn answer(&self, sock: &mut TcpStream, payload: &[u8]) {
        if self.reply.is_empty() {
            return;
        }
        let (reply, sid) = (self.reply, &self.reply_sid);
        let _ = write!(sock, "MSG {reply} {sid} {}\r\n", payload.len());
        let _ = sock.write_all(payload);
        let _ = sock.write_all(b"\r\n");
    }

    /// Sends a status message ("NATS/1.0 503") to the reply subject.
    fn answer_status(&self, sock: &mut TcpStream, status_line: &str) {
        let (reply, sid) = (self.reply, &self.reply_sid);
        let hdr = format!("{status_line}\r\n\r\n");
        let n = hdr.len();
        let _ = write!(sock, "HMSG {reply} {sid} {n} {n}\r\n{hdr}\r\n");
    }
}

/// Serves one client until it goes away: answers PINGs, records its
/// subscriptions and hands each publish to `on_request`, and each UNSUB
/// as a request with subject "UNSUB" and the sid as `reply_sid`.
fn serve_requests(
    mut rd: BufReader<TcpStream>,
    mut sock: TcpStream,
    mut on_request: impl FnMut(&mut TcpStream, &Request),
) {
    let mut subs: Vec<(String, String)> = Vec::new();
    let mut line = String::new();
    while rd.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
        let parts: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        line.clear();
        match parts.first().map(String::as_str) {
            Some("PING") => {
                let _ = sock.write_all(b"PONG\r\n");
            }
            Some("SUB") => subs.push((parts[1].clone(), parts.last().unwrap().clone())),
            Some("UNSUB") => {
                let unsub = Request {
                    subject: "UNSUB",
                    reply: "",
                    body: b"",
                    reply_sid: parts[1].clone(),
                };
                on_request(&mut sock, &unsub);
            }
            Some("PUB") | Some("HPUB") => {
                let len: usize = parts.last().unwrap().parse().unwrap();
                let mut body = vec![0u8; len + 2];
                rd.read_exact(&mut body).unwrap();
                let reply = if parts.len() > 3 {
                    parts[2].as_str()
                } else {
                    ""
                };
                let request = Request {
                    subject: &parts[1],
                    reply,
                    body: &body[..len],
                    reply_sid: sid_for(&subs, reply),
                };
                on_request(&mut sock, &request);
            }
            _ => {}
        }
    }
}

/// A fake JetStream holding stream `S`. Consumers are numbered in the order
/// the client creates them (a consumer it only names, never creates, gets
/// the next number at its first pull); `plan(consumer, pull)` says what the
/// fake sends for that consumer's pull-th request. Consumer info, create
/// and delete are answered with bare successes.
fn scripted_jetstream(
    plan: impl Fn(usize, usize) -> Pull + Send + 'static,
) -> (String, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let seen2 = seen.clone();
    let url = fake_server(move |rd, sock| {
        let mut consumers: Vec<(String, usize)> = Vec::new(); // name, pulls so far
        serve_requests(rd, sock, |sock, req| {
            let api = |what: &str| {
                req.subject
                    .strip_prefix("$JS.API.CONSUMER.")
                    .and_then(|r| r.strip_prefix(what))
                    .and_then(|r| r.strip_prefix(".S."))
                    .map(|name| name.split('.').next().unwrap_or(name).to_string())
            };
            if api("CREATE").is_some() {
                let req_json: Value = serde_json::from_slice(req.body).unwrap();
                let cfg = req_json["config"].clone();
                let name = cfg["name"].as_str().unwrap().to_string();
                seen2.lock().unwrap().creates.push(cfg.clone());
                consumers.push((name.clone(), 0));
                req.answer(sock, info(&name, cfg).as_bytes());
            } else if let Some(name) = api("INFO") {
                req.answer(sock, info(&name, json!({"name": name})).as_bytes());
            } else if api("DELETE").is_some() {
                req.answer(sock, br#"{"success":true}"#);
            } else if req.subject == "UNSUB" {
                let unsub = format!("unsub {}", req.reply_sid);
                seen2.lock().unwrap().log.push(unsub);
            } else if let Some(name) = api("MSG.NEXT") {
                let index = match consumers.iter().position(|(n, _)| *n == name) {
                    Some(i) => i,
                    None => {
                        consumers.push((name.clone(), 0));
                        consumers.len() - 1
                    }
                };
                let pull = consumers[index].1;
                consumers[index].1 += 1;
                let mut seen = seen2.lock().unwrap();
                seen.pulls += 1;
                let body = String::from_utf8_lossy(req.body);
                seen.log.push(format!("pull {} {body}", req.reply_sid));
                drop(seen);
                match plan(index, pull) {
                    Pull::Silent => {}
                    Pull::Status(st) => req.answer_status(sock, st),
                    Pull::Deliver(msgs) => {
                        let sid = &req.reply_sid;
                        for (sseq, cseq) in msgs {
                            let data = format!("m{sseq}");
                            let _ = write!(
                                sock,
                                "MSG orders.{sseq} {sid} $JS.ACK.S.{name}.1.{sseq}.{cseq}.0.0 {}\r\n{data}\r\n",
                                data.len()
                            );
                        }
                    }
                }
            }
        });
    });
    (url, seen)
}

/// The sid of the last subscription matching `subject` (literal, or a
/// prefix ending in a wildcard, as the client's inbox subscriptions are).
fn sid_for(subs: &[(String, String)], subject: &str) -> String {
    subs.iter()
        .rev()
        .find(|(pat, _)| {
            pat == subject
                || pat
                    .strip_suffix('*')
                    .or_else(|| pat.strip_suffix('>'))
                    .is_some_and(|p| subject.starts_with(p))
        })
        .map(|(_, sid)| sid.clone())
        .unwrap_or_else(|| "1".into())
}

/// A consumer info with nothing delivered and nothing pending.
fn info(name: &str, config: Value) -> String {
    json!({
        "stream_name": "S",
        "name": name,
        "config": config,
        "delivered": {"consumer_seq": 0, "stream_seq": 0},
        "num_pending": 0,
    })
    .to_string()
}

fn js_on(url: &str) -> (Client, JetStream) {
    let c = Client::connect(options(url)).unwrap();
    let js = JetStream::new(&c, JetStreamOptions::default()).unwrap();
    (c, js)
}

fn payload(m: &Message) -> String {
    String::from_utf8(m.payload().to_vec()).unwrap()
}

/// Reads `n` messages (each within a generous bound) as their payloads.
fn read_payloads(flow: &Consumption, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let m = flow
                .next(Some(Duration::from_secs(10)))
                .unwrap_or_else(|e| panic!("message {i}: {e}"))
                .unwrap_or_else(|| panic!("message {i}: the flow ended"));
            payload(&m)
        })
        .collect()
}

/// The stream sequence consumer `i` was created to start at.
fn start_seq(seen: &Mutex<Seen>, i: usize) -> Option<u64> {
    let s = seen.lock().unwrap();
    let cfg = &s.creates[i];
    assert_eq!(cfg["deliver_policy"], "by_start_sequence", "{cfg}");
    cfg["opt_start_seq"].as_u64()
}

/// An ordered consumer on `S` and its running `messages` flow (heartbeat
/// 200 ms, each pull request open for 30 s).
fn ordered_messages(js: &JetStream) -> (OrderedConsumer, Consumption) {
    let oc = js
        .ordered_consumer("S", OrderedConsumerConfig::default())
        .unwrap();
    let opts = OrderedMessagesOptions {
        expires: Duration::from_secs(30),
        idle_heartbeat: Some(Duration::from_millis(200)),
        ..OrderedMessagesOptions::default()
    };
    let flow = oc.messages(opts).wait().unwrap();
    (oc, flow)
}

#[test]
fn an_ordered_consumer_recreates_itself_after_a_consumer_sequence_gap() {
    // Consumer 0 skips consumer sequence 3: its stream sequence 4 must not
    // be delivered before 3. Consumer 1, created from stream sequence 3,
    // delivers 3, 4 and 5.
    let (url, seen) = scripted_jetstream(|consumer, pull| match (consumer, pull) {
        (0, 0) => Pull::Deliver(vec![(1, 1), (2, 2), (4, 4)]),
        (1, 0) => Pull::Deliver(vec![(3, 1), (4, 2), (5, 3)]),
        _ => Pull::Silent,
    });
    let (_c, js) = js_on(&url);
    let (_oc, flow) = ordered_messages(&js);
    assert_eq!(read_payloads(&flow, 5), ["m1", "m2", "m3", "m4", "m5"]);
    assert_eq!(start_seq(&seen, 1), Some(3));
    // Nothing is delivered twice: the next consumers start after 5 and
    // deliver nothing.
    let more = flow.next(Some(Duration::from_millis(500)));
    assert_eq!(
        more.as_ref().map_err(|e| e.kind()).err(),
        Some(ErrorKind::Timeout),
        "{:?}",
        more.map(|m| m.map(|m| payload(&m)))
    );
    let s = seen.lock().unwrap();
    for (i, cfg) in s.creates.iter().enumerate().skip(2) {
        assert_eq!(cfg["opt_start_seq"], 6, "consumer {i}: {cfg}");
    }
}

#[test]
fn an_ordered_consumer_recreates_itself_after_two_missed_heartbeats() {
    // Consumer 0 delivers 1 and 2, then falls silent (a lost pull request
    // or a dead consumer leader): no heartbeat comes. The consumer is
    // recreated from stream sequence 3 within a few heartbeats.
    let (url, seen) = scripted_jetstream(|consumer, pull| match (consumer, pull) {
        (0, 0) => Pull::Deliver(vec![(1, 1), (2, 2)]),
        (1, 0) => Pull::Deliver(vec![(3, 1)]),
        _ => Pull::Silent,
    });
    let (_c, js) = js_on(&url);
    let (_oc, flow) = ordered_messages(&js);
    assert_eq!(read_payloads(&flow, 2), ["m1", "m2"]);
    let silent_from = Instant::now();
    assert_eq!(read_payloads(&flow, 1), ["m3"]);
    let gap = silent_from.elapsed();
    println!(
        "resumed {} ms after the silence began (heartbeat 200 ms)",
        gap.as_millis()
    );
    // Two missed heartbeats are 400 ms; the pull's own expiry (30 s) is
    // what a client without heartbeat checks would wait for.
    assert!(gap < Duration::from_secs(10), "{gap:?}");
    assert_eq!(start_seq(&seen, 1), Some(3));
}

#[test]
fn a_consume_pulls_again_after_two_missed_heartbeats() {
    // The first pull request is lost (nothing comes back, not even
    // heartbeats); the consume must notice within two heartbeats and pull
    // again, well before the request's 30 s expiry.
    let (url, seen) = scripted_jetstream(|_, pull| match pull {
        0 => Pull::Silent,
        1 => Pull::Deliver(vec![(1, 1)]),
        _ => Pull::Silent,
    });
    let (_c, js) = js_on(&url);
    let opts = ConsumeOptions {
        expires: Duration::from_secs(30),
        idle_heartbeat: Duration::from_millis(200),
        ..ConsumeOptions::default()
    };
    let flow = js.consume("S", "C", opts).wait().unwrap();
    assert_eq!(read_payloads(&flow, 1), ["m1"]);
    assert!(seen.lock().unwrap().pulls >= 2);
    flow.stop();
}

#[test]
fn a_drained_consume_withdraws_its_inbox_once_the_consumer_has_nothing_left_for_its_request() {
    // The first request stays open (2 of its 500 delivered). The drain asks
    // on an inbox of its own whether the consumer has more for it (no_wait,
    // room for no message): the first answer says a message was due (409),
    // the next one that nothing is left (404); only then is the request's
    // inbox withdrawn (withdrawn earlier, the server could still answer the
    // request with messages that reach no one).
    let (url, seen) = scripted_jetstream(|_, pull| match pull {
        0 => Pull::Deliver(vec![(1, 1), (2, 2)]),
        1 => Pull::Status("NATS/1.0 409 Message Size Exceeds MaxBytes"),
        2 => Pull::Status("NATS/1.0 404 No Messages"),
        _ => Pull::Silent,
    });
    let (_c, js) = js_on(&url);
    let flow = js
        .consume("S", "C", ConsumeOptions::default())
        .wait()
        .unwrap();
    assert_eq!(read_payloads(&flow, 2), ["m1", "m2"]);
    flow.drain(Some(Duration::from_secs(10))).unwrap();
    assert!(flow.next(Some(Duration::from_secs(1))).unwrap().is_none());
    let log = seen.lock().unwrap().log.clone();
    let pulls: Vec<(&str, Value)> = log
        .iter()
        .filter_map(|l| l.strip_prefix("pull "))
        .map(|l| {
            let (sid, body) = l.split_once(' ').unwrap();
            (sid, serde_json::from_str(body).unwrap())
        })
        .collect();
    assert_eq!(pulls.len(), 3, "{log:?}");
    assert_eq!(pulls[0].1["batch"], 500, "{log:?}");
    assert!(pulls[0].1.get("no_wait").is_none(), "{log:?}");
    for (sid, probe) in &pulls[1..] {
        assert_ne!(*sid, pulls[0].0, "{log:?}");
        assert_eq!(probe["no_wait"], true, "{log:?}");
        assert_eq!(probe["max_bytes"], 1, "{log:?}");
    }
    let unsub = format!("unsub {}", pulls[0].0);
    let withdrawn = log.iter().position(|l| *l == unsub);
    let withdrawn = withdrawn.expect("the inbox withdrawn");
    let last_probe = format!("pull {} ", pulls[2].0);
    let last_probe = log.iter().position(|l| l.starts_with(&last_probe));
    let last_probe = last_probe.unwrap();
    assert!(withdrawn > last_probe, "{log:?}");
}

#[test]
fn a_fetch_with_heartbeats_ends_when_two_of_them_are_missed() {
    let (url, seen) = scripted_jetstream(|_, _| Pull::Silent);
    let (_c, js) = js_on(&url);
    let opts = FetchOptions {
        expires: Duration::from_secs(10),
        idle_heartbeat: Duration::from_millis(100),
        ..FetchOptions::default()
    };
    let start = Instant::now();
    let e = js.fetch("S", "C", &opts).wait().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(e.to_string().contains("no heartbeat"), "{e}");
    // Well before the request's own 10 s expiry.
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    // The fake reads on a thread of its own: on a loaded machine it may
    // count the pull after the fetch gave up. One pull, not retried.
    assert!(wait_until(|| seen.lock().unwrap().pulls >= 1), "no pull");
    assert_eq!(seen.lock().unwrap().pulls, 1);
}

#[test]
fn a_consume_backs_off_after_409s_and_reports_unknown_statuses() {
    // Every pull ends at once with "Exceeded MaxWaiting": without a
    // backoff the consume would pull again in a tight loop.
    let (url, seen) = scripted_jetstream(|_, _| Pull::Status("NATS/1.0 409 Exceeded MaxWaiting"));
    let (_c, js) = js_on(&url);
    let flow = js
        .consume("S", "C", ConsumeOptions::default())
        .wait()
        .unwrap();
    let e = flow.next(Some(Duration::from_millis(1000))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    let n = seen.lock().unwrap().pulls;
    // 100 + 200 + 400 ms of backoff fit in the second: about 4 pulls.
    assert!((2..=6).contains(&n), "{n} pulls in a second");
    flow.stop();

    // An unknown status goes to the error callback; the consume goes on.
    let (url, _) = scripted_jetstream(|_, _| Pull::Status("NATS/1.0 499 Something New"));
    let mut o = options(&url);
    let errors = error_recorder(&mut o);
    let c = Client::connect(o).unwrap();
    let js = JetStream::new(&c, JetStreamOptions::default()).unwrap();
    let flow = js
        .consume("S", "C", ConsumeOptions::default())
        .wait()
        .unwrap();
    assert!(wait_until(|| errors
        .lock()
        .unwrap()
        .contains(&ErrorKind::JetStreamApi)));
    let still = flow.next(Some(Duration::from_millis(200))).unwrap_err();
    assert_eq!(still.kind(), ErrorKind::Timeout, "{still}");
    flow.stop();

    // 409 "Consumer is push based" ends it with a JetStream error.
    let (url, _) = scripted_jetstream(|_, _| Pull::Status("NATS/1.0 409 Consumer is push based"));
    let (_c, js) = js_on(&url);
    let flow = js
        .consume("S", "C", ConsumeOptions::default())
        .wait()
        .unwrap();
    let e = flow.next(Some(Duration::from_secs(3))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::JetStream, "{e}");
}

/// A fake JetStream whose API answers each request as `answer` does.
fn jetstream_answering(answer: impl Fn(&mut TcpStream, &Request) + Send + 'static) -> String {
    fake_server(move |rd, sock| {
        serve_requests(rd, sock, |sock, req| {
            if req.subject.starts_with("$JS.API.") {
                answer(sock, req);
            }
        })
    })
}

#[test]
fn a_jetstream_request_nobody_answers_is_no_responders_and_account_info_is_not_enabled() {
    // The status a server sends when nothing serves the subject, as for a
    // stream without a leader during an election: a caller may retry, and
    // JetStream is not reported missing (as nats.go does it).
    let url = jetstream_answering(|sock, req| req.answer_status(sock, "NATS/1.0 503"));
    let (_c, js) = js_on(&url);
    let e = js.stream_info("S").wait().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoResponders, "{e}");
    assert!(e.detail().contains("$JS.API.STREAM.INFO.S"), "{e}");
    assert_eq!(
        kind(
            js.create_stream(r#"{"name":"S"}"#, CreateAction::Create)
                .wait()
        ),
        ErrorKind::NoResponders
    );
    assert_eq!(kind(js.stream_names(None).wait()), ErrorKind::NoResponders);
    assert_eq!(kind(js.delete_stream("S").wait()), ErrorKind::NoResponders);
    assert_eq!(
        kind(js.get_msg("S", MsgSelector::Seq(1)).wait()),
        ErrorKind::NoResponders
    );
    assert_eq!(
        kind(js.consumer_info("S", "C").wait()),
        ErrorKind::NoResponders
    );
    assert_eq!(kind(js.key_value("B").wait()), ErrorKind::NoResponders);
    // The account-info check alone reads it as JetStream missing.
    let e = js.account_info().wait().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::JetStreamNotEnabled, "{e}");
    assert!(e.detail().contains("no responders on $JS.API.INFO"), "{e}");
    assert_eq!(kind(js.api_level().wait()), ErrorKind::JetStreamNotEnabled);
}

#[test]
fn only_the_not_enabled_err_codes_are_jetstream_not_enabled() {
    // STREAM.INFO.E<err_code> is answered with that API error, code 503.
    let url = jetstream_answering(|sock, req| {
        let err_code: u32 = req
            .subject
            .strip_prefix("$JS.API.STREAM.INFO.E")
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let body = json!({"error": {"code": 503, "err_code": err_code, "description": "refused"}});
        req.answer(sock, body.to_string().as_bytes());
    });
    let (_c, js) = js_on(&url);
    for (err_code, want) in [
        (10039, ErrorKind::JetStreamNotEnabled), // not enabled for the account
        (10076, ErrorKind::JetStreamNotEnabled), // not enabled on the server
        (10008, ErrorKind::JetStreamApi),        // temporarily unavailable (an election)
        (10023, ErrorKind::JetStreamApi),        // insufficient resources
    ] {
        let e = js.stream_info(&format!("E{err_code}")).wait().unwrap_err();
        assert_eq!(e.kind(), want, "err_code {err_code}: {e}");
        assert_eq!((e.data().code, e.data().err_code), (503, err_code), "{e}");
    }
}
