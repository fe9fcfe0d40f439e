//! Services (ADR-32) against a real nats-server: requests and their stats,
//! error replies, monitoring subjects, groups and queue groups, stop.

use crate::common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::TestServer;
use natsio::service::{
    self, wire, EndpointConfig, QueueGroup, Service, ServiceConfig, Verb, ERROR_CODE_HEADER,
    ERROR_HEADER,
};
use natsio::{Client, Delivery, ErrorKind, RequestManyOptions};

const T: Option<Duration> = Some(Duration::from_secs(5));

fn config(name: &str) -> ServiceConfig {
    ServiceConfig {
        name: name.into(),
        version: "1.2.3".into(),
        description: "echoes".into(),
        metadata: BTreeMap::from([("team".to_string(), "core".to_string())]),
        ..ServiceConfig::default()
    }
}

fn endpoint(name: &str) -> EndpointConfig {
    EndpointConfig {
        name: name.into(),
        ..EndpointConfig::default()
    }
}

/// Answers every request of `ep` with its payload, on the endpoint's thread.
fn echo(ep: &service::Endpoint) {
    ep.set_handler(Box::new(|d| {
        if let Delivery::Item(req) = d {
            let body = req.message().payload().to_vec();
            req.respond(None, &body).unwrap();
        }
    }))
    .unwrap();
}

fn gather(c: &Client, verb: Verb, name: Option<&str>, id: Option<&str>) -> Vec<serde_json::Value> {
    let replies = service::discover(
        c,
        verb,
        name,
        id,
        RequestManyOptions {
            max_msgs: None,
            stall: Some(Duration::from_millis(300)),
            timeout: Duration::from_secs(5),
        },
    )
    .unwrap();
    let mut out = Vec::new();
    while let Some(m) = replies.next(T).unwrap() {
        out.push(serde_json::from_slice(m.payload()).unwrap());
    }
    out
}

#[test]
fn requests_are_answered_and_counted() {
    let s = TestServer::start();
    let c = Client::connect_url(&s.url()).unwrap();
    let svc = Service::add(&c, config("echo")).unwrap();
    let ep = svc.add_endpoint(endpoint("echo")).unwrap();
    assert_eq!(ep.subject(), "echo");
    assert_eq!(ep.queue_group(), Some("q"));
    echo(&ep);
    let requester = Client::connect_url(&s.url()).unwrap();
    for i in 0..10 {
        let body = format!("hi {i}");
        let r = requester.request("echo", None, body.as_bytes(), T).unwrap();
        assert_eq!(r.payload(), body.as_bytes());
    }
    let stats = svc.stats();
    assert_eq!(stats.kind, wire::STATS_RESPONSE_TYPE);
    let e = &stats.endpoints[0];
    assert_eq!((e.num_requests, e.num_errors), (10, 0));
    assert!(e.processing_time > 0);
    assert_eq!(e.average_processing_time, e.processing_time / 10);
    svc.reset();
    assert_eq!(svc.stats().endpoints[0].num_requests, 0);
}

#[test]
fn monitoring_subjects_answer_with_the_adr_shapes() {
    let s = TestServer::start();
    let c = Client::connect_url(&s.url()).unwrap();
    let svc = Service::add(&c, config("calc")).unwrap();
    let math = svc
        .add_group("math", QueueGroup::Named("mq".into()))
        .unwrap();
    let add = math
        .add_endpoint(EndpointConfig {
            name: "add".into(),
            metadata: BTreeMap::from([("unit".to_string(), "n".to_string())]),
            ..EndpointConfig::default()
        })
        .unwrap();
    assert_eq!((add.subject(), add.queue_group()), ("math.add", Some("mq")));
    let other = Service::add(&c, config("other")).unwrap();
    let requester = Client::connect_url(&s.url()).unwrap();

    // Bare: every service; by name: one kind; by name and id: one instance.
    assert_eq!(gather(&requester, Verb::Ping, None, None).len(), 2);
    let pings = gather(&requester, Verb::Ping, Some("calc"), None);
    assert_eq!(pings.len(), 1);
    assert_eq!(pings[0]["type"], wire::PING_RESPONSE_TYPE);
    assert_eq!(pings[0]["id"], svc.id());
    assert_eq!(pings[0]["metadata"]["team"], "core");
    let info = gather(&requester, Verb::Info, Some("calc"), Some(svc.id()));
    assert_eq!(info.len(), 1);
    let info: wire::InfoResponse = serde_json::from_value(info[0].clone()).unwrap();
    assert_eq!(info.description, "echoes");
    assert_eq!(info.endpoints.len(), 1);
    assert_eq!(info.endpoints[0].subject, "math.add");
    assert_eq!(info.endpoints[0].queue_group, "mq");
    assert_eq!(info.endpoints[0].metadata.as_ref().unwrap()["unit"], "n");
    let stats = gather(&requester, Verb::Stats, Some("other"), None);
    assert_eq!(stats[0]["type"], wire::STATS_RESPONSE_TYPE);
    assert_eq!(stats[0]["id"], other.id());
    assert!(
        natsio::jetstream::time::parse_rfc3339_ns(stats[0]["started"].as_str().unwrap()).is_some()
    );
}

#[test]
fn error_replies_and_failing_handlers() {
    let s = TestServer::start();
    let c = Client::connect_url(&s.url()).unwrap();
    let errors = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&errors);
    let mut cfg = config("fails");
    cfg.error_handler = Some(Arc::new(move |e: &service::ServiceError| {
        seen.lock()
            .unwrap()
            .push((e.endpoint.clone(), e.code, e.description.clone()));
    }));
    let svc = Service::add(&c, cfg).unwrap();
    let ep = svc.add_endpoint(endpoint("op")).unwrap();
    ep.set_handler(Box::new(|d| {
        if let Delivery::Item(req) = d {
            match req.message().payload() {
                b"bad" => req.respond_error(400, "bad input", None, b"why").unwrap(),
                b"boom" => req.fail("it broke"),
                _ => req.respond(None, b"ok").unwrap(),
            }
        }
    }))
    .unwrap();
    let r = c.request("op", None, b"bad", T).unwrap();
    let h = r.headers().unwrap();
    assert_eq!(h.get(ERROR_HEADER), Some("bad input"));
    assert_eq!(h.get(ERROR_CODE_HEADER), Some("400"));
    assert_eq!(r.payload(), b"why");
    let r = c.request("op", None, b"boom", T).unwrap();
    assert_eq!(r.headers().unwrap().get(ERROR_CODE_HEADER), Some("500"));
    assert_eq!(r.headers().unwrap().get(ERROR_HEADER), Some("it broke"));
    // The service keeps serving.
    assert_eq!(c.request("op", None, b"fine", T).unwrap().payload(), b"ok");
    let st = svc.stats();
    assert_eq!(
        (st.endpoints[0].num_requests, st.endpoints[0].num_errors),
        (3, 2)
    );
    assert_eq!(st.endpoints[0].last_error, "500:it broke");
    assert_eq!(
        *errors.lock().unwrap(),
        vec![("op".to_string(), 500, "it broke".to_string())]
    );
}

#[test]
fn bad_configurations_are_refused_before_anything_is_sent() {
    let s = TestServer::start();
    let c = Client::connect_url(&s.url()).unwrap();
    for (name, version) in [
        ("", "1.0.0"),
        ("a b", "1.0.0"),
        ("a.b", "1.0.0"),
        ("ok", "1.0"),
        ("ok", "v1.0.0"),
    ] {
        let mut cfg = config(name);
        cfg.version = version.into();
        let e = Service::add(&c, cfg).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ServiceConfig, "{name:?} {version:?}");
    }
    let svc = Service::add(&c, config("ok")).unwrap();
    for (name, subject) in [("a.b", None), ("ok", Some("a >")), ("ok", Some("a.>.b"))] {
        let e = svc
            .add_endpoint(EndpointConfig {
                name: name.into(),
                subject: subject.map(str::to_string),
                ..EndpointConfig::default()
            })
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ServiceConfig, "{name:?} {subject:?}");
    }
    assert_eq!(
        svc.add_group("a.>", QueueGroup::Inherit)
            .unwrap_err()
            .kind(),
        ErrorKind::ServiceConfig
    );
    assert!(svc.info().endpoints.is_empty());
}

#[test]
fn queue_groups_split_and_disabled_groups_fan_out() {
    let s = TestServer::start();
    let c = Client::connect_url(&s.url()).unwrap();
    let served = Arc::new(AtomicUsize::new(0));
    let mut services = Vec::new();
    for _ in 0..2 {
        let svc = Service::add(&c, config("pool")).unwrap();
        let ep = svc.add_endpoint(endpoint("work")).unwrap();
        echo(&ep);
        let fan = svc
            .add_endpoint(EndpointConfig {
                name: "all".into(),
                queue_group: QueueGroup::Disabled,
                ..EndpointConfig::default()
            })
            .unwrap();
        assert_eq!(fan.queue_group(), None);
        let n = Arc::clone(&served);
        fan.set_handler(Box::new(move |d| {
            if let Delivery::Item(req) = d {
                n.fetch_add(1, Ordering::SeqCst);
                req.respond(None, b"").unwrap();
            }
        }))
        .unwrap();
        services.push(svc);
    }
    c.flush(None).unwrap();
    let requester = Client::connect_url(&s.url()).unwrap();
    for _ in 0..100 {
        requester.request("work", None, b"x", T).unwrap();
    }
    let per: Vec<u64> = services
        .iter()
        .map(|s| s.stats().endpoints[0].num_requests)
        .collect();
    assert_eq!(per.iter().sum::<u64>(), 100, "{per:?}");
    // Without a queue group both instances get the request.
    let replies = requester
        .request_many(
            "all",
            None,
            b"",
            RequestManyOptions {
                max_msgs: Some(2),
                stall: None,
                timeout: Duration::from_secs(5),
            },
        )
        .unwrap();
    let mut got = 0;
    while replies.next(T).unwrap().is_some() {
        got += 1;
    }
    assert_eq!(got, 2);
    assert!(common::wait_until(Duration::from_secs(5), || served
        .load(Ordering::SeqCst)
        == 2));
}

#[test]
fn stop_finishes_in_flight_requests_and_refuses_new_ones() {
    let s = TestServer::start();
    let c = Client::connect_url(&s.url()).unwrap();
    let svc = Service::add(&c, config("stopper")).unwrap();
    let ep = svc.add_endpoint(endpoint("slow")).unwrap();
    let requester = Client::connect_url(&s.url()).unwrap();
    // A request received, not yet read, when the stop starts.
    let pending = requester.request_async("slow", None, b"late", T).unwrap();
    assert!(common::wait_until(Duration::from_secs(5), || ep
        .subscription()
        .stats()
        .pending_items
        == 1));
    let stopped = svc.stop_async();
    let req = ep.next(T).unwrap().expect("the queued request");
    req.respond(None, b"done").unwrap();
    assert!(
        ep.next(T).unwrap().is_none(),
        "the endpoint ends after its backlog"
    );
    stopped.wait(T).expect("stopped in time").unwrap();
    assert!(svc.is_stopped());
    match pending.wait(T).unwrap().unwrap() {
        natsio::Outcome::Msg(m) => assert_eq!(m.payload(), b"done"),
        o => panic!("{o:?}"),
    }
    let e = requester.request("slow", None, b"x", T).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoResponders);
    assert!(gather(&requester, Verb::Ping, Some("stopper"), None).is_empty());
    assert_eq!(
        svc.add_endpoint(endpoint("again")).unwrap_err().kind(),
        ErrorKind::IllegalState
    );
}

#[test]
fn a_service_stops_when_its_client_closes() {
    let s = TestServer::start();
    let c = Client::connect_url(&s.url()).unwrap();
    let svc = Service::add(&c, config("closing")).unwrap();
    svc.add_endpoint(endpoint("x")).unwrap();
    c.close();
    svc.stopped_async().wait(T).expect("stopped").unwrap();
    assert!(svc.is_stopped());
}
