//! Consuming a push consumer (ADR-9 heartbeats and flow control, ADR-15):
//! the server sends the consumer's messages to its `deliver_subject` on its
//! own; the library subscribes there (in `deliver_group`'s queue group when
//! the consumer has one) and hands the messages on through the same flow
//! as a pull consumption.
//!
//! Status messages never reach the reader: a flow-control request is
//! answered once the reader has finished with everything delivered before
//! it (so the server sends no faster than the application reads), an idle
//! heartbeat that names a stalled flow-control reply
//! (`Nats-Consumer-Stalled`) gets that reply answered at once, and two
//! heartbeat intervals without a word from the server are reported to the
//! client's error callback (as nats.go hands `ErrNoHeartbeat` to its
//! ConsumeErrHandler) while consuming goes on.
//!
//! What the statuses tell is also read as events (`Flow::status_events`,
//! JSON texts as nats.js's consumer status notifications): each idle
//! heartbeat, each flow-control request answered, and each heartbeat
//! interval missed from the second on, counted.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::pull::{inbox_withdrawal, Consumption};
use super::JetStream;
use crate::client::{ClientInner, Flow, Wake};
use crate::error::{Error, ErrorKind, Result};
use crate::feed::{Feed, Limits};
use crate::message::Message;
use crate::op::Op;
use crate::options::PendingPolicy;
use crate::subscription::{SubOptions, Subscription};

/// The header of an idle heartbeat naming the flow-control reply the
/// server still waits for (ADR-9).
const CONSUMER_STALLED: &str = "Nats-Consumer-Stalled";
/// The headers of an idle heartbeat naming the last sequences delivered.
pub(crate) const LAST_CONSUMER: &str = "Nats-Last-Consumer";
pub(crate) const LAST_STREAM: &str = "Nats-Last-Stream";

/// Status events kept unread at most (the oldest go first).
const STATUS_EVENTS_KEPT: usize = 256;

/// A feed of status events (JSON texts), read through its own token.
pub(crate) fn status_event_feed() -> Arc<Feed<String>> {
    Arc::new(Feed::new(
        Limits {
            items: STATUS_EVENTS_KEPT,
            bytes: usize::MAX,
            policy: PendingPolicy::DropOld,
        },
        |e| Ok(crate::completion::Outcome::value(e)),
    ))
}

/// What a push consumer's ConsumerInfo says about its delivery.
struct PushDelivery {
    subject: String,
    group: Option<String>,
    idle_heartbeat: Duration,
    flow_control: bool,
}

fn push_delivery(info: &Value, consumer: &str) -> Result<PushDelivery> {
    let cfg = info.get("config");
    let text = |field: &str| {
        cfg.and_then(|c| c.get(field))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let subject = text("deliver_subject").ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidArgument,
            format!("consumer {consumer:?} is not a push consumer (it has no deliver_subject)"),
        )
    })?;
    let heartbeat_ns = cfg
        .and_then(|c| c.get("idle_heartbeat"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Ok(PushDelivery {
        subject,
        group: text("deliver_group"),
        idle_heartbeat: Duration::from_nanos(heartbeat_ns),
        flow_control: cfg
            .and_then(|c| c.get("flow_control"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}

impl JetStream {
    /// Starts consuming the push consumer `consumer` of `stream` (once its
    /// info shows it exists and has a `deliver_subject`), into a buffer
    /// read through the flow, bounded by the client's pending limits.
    pub fn push_consume(&self, stream: &str, consumer: &str) -> Op<Consumption> {
        let info = self.consumer_info(stream, consumer);
        let (js, consumer) = (self.clone(), consumer.to_string());
        Op::build(|| {
            info.check()?;
            Ok(async move {
                let delivery = push_delivery(&info.await?, &consumer)?;
                let client = js.client();
                // With flow control the server bounds what it sends ahead of
                // the answers (ADR-9), so nothing it sends may be dropped;
                // without, the client's pending limits bound the
                // subscription as any other.
                let limits = if delivery.flow_control {
                    SubOptions {
                        pending_msgs_limit: Some(0),
                        pending_bytes_limit: Some(0),
                        policy: PendingPolicy::DropNew,
                        limits_count_handler: false,
                    }
                } else {
                    SubOptions::default()
                };
                let sub = client.subscribe(&delivery.subject, delivery.group.as_deref(), limits)?;
                let o = &client.opts;
                let out = Arc::new(
                    Feed::new(
                        Limits::from_config(
                            o.pending_msgs_limit,
                            o.pending_bytes_limit,
                            PendingPolicy::DropNew,
                        ),
                        |m| Ok(crate::completion::Outcome::Msg(m)),
                    )
                    .counting_calls()
                    .drained_by_producer(),
                );
                // Stopping withdraws the interest before `stop` returns: what
                // the server sends afterwards goes to another subscriber of
                // the group, or waits for the consumer's next reader.
                out.on_cut(Box::new(inbox_withdrawal(client, &sub)));
                let events = status_event_feed();
                let pusher = Pusher {
                    client: Arc::clone(client),
                    sub,
                    subject: delivery.subject,
                    idle_heartbeat: delivery.idle_heartbeat,
                    out: Arc::clone(&out),
                    events: Arc::clone(&events),
                };
                crate::runtime::handle().spawn(pusher.run());
                Ok(Flow::new(out, client, "natsio-push-consume").with_status_events(events))
            })
        })
    }
}

/// Moves one push consumer's deliveries from its subscription to the flow.
struct Pusher {
    client: Arc<ClientInner>,
    sub: Subscription,
    subject: String,
    idle_heartbeat: Duration,
    out: Arc<Feed<Message>>,
    events: Arc<Feed<String>>,
}

impl Pusher {
    async fn run(self) {
        self.deliver().await;
        // The reader still gets the events queued, then the end.
        self.events.finish();
    }

    fn event(&self, event: serde_json::Value) {
        self.events.push(event.to_string());
    }

    async fn deliver(&self) {
        let out = &self.out;
        let mut life = self.client.lifecycle();
        let mut last_heard = Instant::now();
        // Heartbeat intervals counted since `last_heard` (reported from the
        // second on).
        let mut missed: u32 = 0;
        // A flow-control request waiting for the reader to catch up.
        let mut flow_control: Option<String> = None;
        let room_at = out.limits().items.saturating_sub(1);
        // Draining: the subscription is being drained (its UNSUB sent);
        // what the server sent before it is handed on, then the flow ends.
        let mut draining = false;
        loop {
            if out.has_ended() {
                return;
            }
            // A full buffer is not read from: the subscription holds the
            // server's messages meanwhile (and reports a slow consumer
            // past its own limits), and silence then is the reader's.
            let full = out.fill().room == 0;
            let silent_until = (!self.idle_heartbeat.is_zero() && !full && !draining).then(|| {
                crate::clock::tokio_instant_after(
                    last_heard,
                    self.idle_heartbeat.saturating_mul((missed + 1).max(2)),
                )
            });
            tokio::select! {
                _ = out.until_ended() => return,
                changed = life.changed() => {
                    if changed.is_err() || life.borrow_and_update().closed {
                        out.fail(Error::closed());
                        return;
                    }
                    // Reconnected: the subscription is renewed by the client
                    // and heartbeats resume on the new connection.
                    last_heard = Instant::now();
                    missed = 0;
                }
                _ = tokio::time::sleep_until(silent_until.unwrap_or_else(Instant::now)), if silent_until.is_some() => {
                    // Every interval from the second on is an event (as
                    // nats.js counts); every second one an error, as before.
                    missed = (missed + 1).max(2);
                    // Keys sorted, as these events have always been written.
                    self.event(serde_json::json!({"count": missed, "type": "heartbeats_missed"}));
                    if missed % 2 != 0 {
                        continue;
                    }
                    self.client.report_error(
                        Error::new(
                            ErrorKind::Timeout,
                            format!(
                                "no heartbeat received: the server sent nothing for {} ms (idle_heartbeat {} ms)",
                                self.idle_heartbeat.saturating_mul(2).as_millis(),
                                self.idle_heartbeat.as_millis()
                            ),
                        ),
                        Some((self.sub.sid(), self.subject.clone())),
                    );
                }
                _ = out.until_drain_requested(), if !draining => {
                    draining = true;
                    // Ends the subscription once the server has processed
                    // its UNSUB (`Ok(None)` below); nothing waits on it here.
                    drop(self.sub.drain_async(None));
                }
                _ = out.wait_for_room(0, usize::MAX), if flow_control.is_some() => {
                    if let Some(reply) = flow_control.take() {
                        self.answer_flow_control(&reply);
                    }
                }
                _ = out.wait_for_room(room_at, usize::MAX), if full => {
                    last_heard = Instant::now();
                    missed = 0;
                }
                r = self.sub.feed().recv(), if !full => match r {
                    Ok(Some(m)) => {
                        last_heard = Instant::now();
                        missed = 0;
                        if let Err(e) = self.on_message(m, &mut flow_control) {
                            out.fail(e);
                            return;
                        }
                    }
                    Ok(None) if draining => {
                        out.finish();
                        return;
                    }
                    Ok(None) => {
                        out.fail(Error::closed());
                        return;
                    }
                    Err(e) => {
                        out.fail(e);
                        return;
                    }
                },
            }
        }
    }

    /// Hands a message on or acts on a status; an error ends the flow.
    fn on_message(&self, m: Message, flow_control: &mut Option<String>) -> Result<()> {
        let Some(code) = m.status() else {
            let (pushed, _) = self.out.push(m);
            if let crate::feed::Pushed::Dropped(n) = pushed {
                self.out.count_dropped(n);
            }
            return Ok(());
        };
        let desc = m.headers().and_then(|h| h.description()).unwrap_or("");
        match code {
            100 => {
                if let Some(reply) = m.reply().filter(|r| !r.is_empty()) {
                    // A flow-control request: answered once the reader has
                    // what came before it; an older one still waiting is
                    // answered now (the server asks again only when it
                    // stalls, and a newer request covers the older).
                    if let Some(older) = flow_control.replace(reply.to_string()) {
                        self.answer_flow_control(&older);
                    }
                } else {
                    let seq = |name: &str| {
                        m.headers()
                            .and_then(|h| h.get(name))
                            .and_then(|v| v.trim().parse::<u64>().ok())
                            .unwrap_or(0)
                    };
                    self.event(serde_json::json!({
                        "last_consumer_seq": seq(LAST_CONSUMER),
                        "last_stream_seq": seq(LAST_STREAM),
                        "type": "heartbeat",
                    }));
                    if let Some(stalled) = m.headers().and_then(|h| h.get(CONSUMER_STALLED)) {
                        self.answer(stalled.trim());
                    }
                }
                Ok(())
            }
            409 if desc.eq_ignore_ascii_case("consumer deleted") => Err(Error::new(
                ErrorKind::ConsumerDeleted,
                "the push consumer was deleted",
            )),
            code => {
                self.client.report_error(
                    Error::new(
                        ErrorKind::JetStreamApi,
                        format!("unexpected push consumer status {code} {desc}"),
                    ),
                    Some((self.sub.sid(), self.subject.clone())),
                );
                Ok(())
            }
        }
    }

    /// Answers a flow-control request, and tells it as an event.
    fn answer_flow_control(&self, reply: &str) {
        self.answer(reply);
        self.event(serde_json::json!({"type": "flow_control"}));
    }

    /// Replies (empty) to a flow-control subject.
    fn answer(&self, reply: &str) {
        if let Err(e) = self
            .client
            .publish_frame(reply, None, None, b"", Wake::Direct)
        {
            self.client
                .report_error(e, Some((self.sub.sid(), self.subject.clone())));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn push_delivery_reads_the_consumer_config() {
        let info = json!({"config": {
            "deliver_subject": "in.1", "deliver_group": "g",
            "idle_heartbeat": 1_500_000_000u64, "flow_control": true
        }});
        let d = push_delivery(&info, "c").unwrap();
        assert_eq!(d.subject, "in.1");
        assert_eq!(d.group.as_deref(), Some("g"));
        assert_eq!(d.idle_heartbeat, Duration::from_millis(1500));
        assert!(d.flow_control);

        // No group, no heartbeats, no flow control: all optional.
        let d = push_delivery(
            &json!({"config": {"deliver_subject": "in.2", "deliver_group": ""}}),
            "c",
        )
        .unwrap();
        assert_eq!(d.group, None);
        assert!(d.idle_heartbeat.is_zero() && !d.flow_control);

        // A pull consumer is refused, naming it.
        let e = push_delivery(&json!({"config": {"durable_name": "p"}}), "p")
            .err()
            .unwrap();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains("\"p\" is not a push consumer"));
    }
}
