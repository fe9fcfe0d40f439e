//! `get_last_msgs_for`: the last message of each of many subjects in one
//! batch Direct Get (ADR-31 `multi_last`), delivered as a flow that the
//! server's end-of-batch status (204) ends.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::config::validate_name;
use super::pull::pull_inbox;
use super::stream::{direct_get_failed, direct_reply, DirectReply};
use super::{JetStream, StoredMsg};
use crate::client::{Flow, Wake};
use crate::completion::Outcome;
use crate::error::{Error, ErrorKind, Result};
use crate::feed::{Feed, FeedItem, Limits};
use crate::subscription::Subscription;

impl FeedItem for StoredMsg {
    fn pending_size(&self) -> usize {
        self.subject.len() + self.payload.len()
    }
}

/// The messages of one `get_last_msgs_for`; dropping it stops the flow.
pub type StoredMsgs = Flow<StoredMsg>;

/// Bounds of a `get_last_msgs_for`; all optional.
#[derive(Debug, Clone, Copy, Default)]
pub struct LastMsgsOptions {
    /// At most this many messages (the server's own cap applies too).
    pub batch: Option<u32>,
    /// The last messages as of this stream sequence.
    pub up_to_seq: Option<u64>,
    /// The last messages as of this time (nanoseconds since the epoch).
    pub up_to_time_ns: Option<i64>,
}

impl JetStream {
    /// Starts a batch Direct Get of the last message on each subject that
    /// matches one of `subjects` (wildcards allowed), in stream order. The
    /// stream needs allow_direct. The flow ends without error at the
    /// server's end of batch, or when nothing matches; it fails when no
    /// server answers (`NoResponders`: no such stream, or no Direct Get),
    /// on another status, or when the batch stalls for the context's
    /// timeout.
    pub fn get_last_msgs_for(
        &self,
        stream: &str,
        subjects: &[&str],
        opts: LastMsgsOptions,
    ) -> Result<StoredMsgs> {
        validate_name("stream", stream)?;
        if subjects.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "get_last_msgs_for needs at least one subject",
            ));
        }
        for s in subjects {
            crate::subject::validate_subscribe(s)?;
        }
        if opts.up_to_seq.is_some() && opts.up_to_time_ns.is_some() {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "up_to_seq and up_to_time exclude each other",
            ));
        }
        let mut req = json!({ "multi_last": subjects });
        if let Some(b) = opts.batch.filter(|b| *b > 0) {
            req["batch"] = Value::from(b);
        }
        if let Some(seq) = opts.up_to_seq {
            req["up_to_seq"] = Value::from(seq);
        }
        if let Some(t) = opts.up_to_time_ns {
            req["up_to_time"] = Value::from(super::time::format_rfc3339_ns(t));
        }
        let client = &self.shared.client;
        let (inbox, sub) = pull_inbox(client)?;
        let subject = format!("{}.DIRECT.GET.{stream}", self.api_prefix());
        client.publish_frame(
            &subject,
            Some(&inbox),
            None,
            req.to_string().as_bytes(),
            Wake::Direct,
        )?;
        let out = Arc::new(Feed::new(Limits::unlimited(), |m| Ok(Outcome::value(m))));
        crate::runtime::handle().spawn(gather(
            sub,
            Arc::clone(&out),
            stream.to_string(),
            self.shared.opts.timeout,
        ));
        Ok(Flow::new(out, client, "natsio-last-msgs"))
    }
}

/// Moves the batch's replies into `out` until the end of batch, a failure,
/// a stall of `stall`, or a stop.
async fn gather(inbox: Subscription, out: Arc<Feed<StoredMsg>>, stream: String, stall: Duration) {
    loop {
        let next = tokio::select! {
            _ = out.until_ended() => break,
            r = tokio::time::timeout(stall, inbox.feed().recv()) => r,
        };
        let msg = match next {
            Ok(Ok(Some(m))) => m,
            Ok(Ok(None)) => {
                out.fail(Error::closed());
                break;
            }
            Ok(Err(e)) => {
                out.fail(e);
                break;
            }
            Err(_) => {
                out.fail(Error::new(
                    ErrorKind::Timeout,
                    format!("the batch Direct Get on stream {stream} stalled before its end"),
                ));
                break;
            }
        };
        if msg.is_no_responders() {
            out.fail(Error::new(
                ErrorKind::NoResponders,
                format!("no Direct Get responders for stream {stream}: it does not exist or does not allow direct get"),
            ));
            break;
        }
        match direct_reply(&msg) {
            Ok(DirectReply::Msg(m)) => {
                out.push(m);
            }
            // 204: end of batch; 404: nothing matched.
            Ok(DirectReply::Status(204 | 404, _)) => {
                out.finish();
                break;
            }
            Ok(DirectReply::Status(code, text)) => {
                out.fail(direct_get_failed(code, &text));
                break;
            }
            Err(e) => {
                out.fail(e);
                break;
            }
        }
    }
}
