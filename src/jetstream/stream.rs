//! Stream management: create, update, info, delete, purge, names, and
//! reading stored messages.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{json, Map, Value};

use super::config::{
    normalize, stream_source_domains, validate_name, PURGE_REQUEST, STREAM_CONFIG,
};
use super::{CreateAction, JetStream};
use crate::error::{Error, ErrorKind, Result};
use crate::headers::Headers;
use crate::op::Op;

/// A message read back from a stream.
#[derive(Debug, Clone)]
pub struct StoredMsg {
    pub subject: String,
    pub seq: u64,
    /// Nanoseconds since the Unix epoch (0 if the server sent none).
    pub time_ns: i64,
    /// Shared with the received message when read with Direct Get.
    pub headers: Option<Arc<Headers>>,
    pub payload: Bytes,
}

/// Which message `get_msg` reads.
#[derive(Debug, Clone)]
pub enum MsgSelector {
    Seq(u64),
    /// The last message whose subject matches `subject` (wildcards
    /// allowed, as the server reads `last_by_subj` as a filter).
    LastBySubject(String),
    /// The first message at or after `seq` whose subject matches `subject`
    /// (wildcards allowed).
    NextBySubject {
        seq: u64,
        subject: String,
    },
}

impl MsgSelector {
    /// The request body both `STREAM.MSG.GET` and Direct Get take.
    fn body(&self) -> Result<Vec<u8>> {
        match self {
            MsgSelector::Seq(seq) => Ok(seq_body(*seq)),
            MsgSelector::LastBySubject(s) => last_by_subject_body(s),
            MsgSelector::NextBySubject { seq, subject } => {
                crate::subject::validate_subscribe(subject)?;
                Ok(json!({ "seq": seq, "next_by_subj": subject })
                    .to_string()
                    .into_bytes())
            }
        }
    }
}

fn seq_body(seq: u64) -> Vec<u8> {
    format!(r#"{{"seq":{seq}}}"#).into_bytes()
}

/// `{"last_by_subj":"<subject>"}` in one allocation (every KV get sends
/// one; a JSON value would take five). The subject is a filter: the
/// server answers with the last message on any matching subject.
fn last_by_subject_body(subject: &str) -> Result<Vec<u8>> {
    crate::subject::validate_subscribe(subject)?;
    let mut body = Vec::with_capacity(subject.len() + 24);
    body.extend_from_slice(br#"{"last_by_subj":"#);
    serde_json::to_writer(&mut body, subject)
        .map_err(|e| Error::new(ErrorKind::Internal, format!("request body: {e}")))?;
    body.push(b'}');
    Ok(body)
}

fn stream_config(json: &str) -> Result<(String, Map<String, Value>)> {
    let mut cfg = normalize("StreamConfig", json, STREAM_CONFIG)?;
    stream_source_domains(&mut cfg)?;
    let Some(name) = cfg.get("name").and_then(Value::as_str) else {
        return Err(Error::new(ErrorKind::Config, "StreamConfig.name: required"));
    };
    validate_name("stream", name)?;
    Ok((name.to_string(), cfg))
}

fn bad_response(what: &str) -> Error {
    Error::new(
        ErrorKind::JetStream,
        format!("invalid JetStream API response: {what}"),
    )
}

/// A page of names from a paged `*.NAMES` API response: the names, and
/// the total the server reports.
fn names_page(v: &Value, field: &str) -> (Vec<String>, usize) {
    let page = match v.get(field) {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(), // null when there are none
    };
    let total = v.get("total").and_then(Value::as_u64).unwrap_or(0) as usize;
    (page, total)
}

/// Every name of a paged `*.NAMES` API (`field` holds each page's names).
pub(crate) async fn all_names(
    js: &JetStream,
    api: &str,
    field: &str,
    filter: Option<(&str, &str)>,
) -> Result<Vec<String>> {
    let mut names = Vec::new();
    loop {
        let mut req = json!({ "offset": names.len() });
        if let Some((k, v)) = filter {
            req[k] = Value::from(v);
        }
        let v = js.api(api, req.to_string().as_bytes()).await?;
        let (page, total) = names_page(&v, field);
        let got = page.len();
        names.extend(page);
        if got == 0 || names.len() >= total {
            return Ok(names);
        }
    }
}

/// Every StreamInfo of the paged `STREAM.LIST` (optionally of the streams
/// holding `subject`).
pub(crate) async fn all_stream_infos(js: &JetStream, subject: Option<&str>) -> Result<Vec<Value>> {
    all_infos(
        js,
        "STREAM.LIST",
        "streams",
        subject.map(|s| ("subject", s)),
    )
    .await
}

/// Every info of a paged `*.LIST` API (`field` holds each page's infos),
/// optionally filtered by a request field.
pub(crate) async fn all_infos(
    js: &JetStream,
    api: &str,
    field: &str,
    filter: Option<(&str, &str)>,
) -> Result<Vec<Value>> {
    let mut infos = Vec::new();
    loop {
        let mut req = json!({ "offset": infos.len() });
        if let Some((k, v)) = filter {
            req[k] = Value::from(v);
        }
        let mut v = js.api(api, req.to_string().as_bytes()).await?;
        let total = v.get("total").and_then(Value::as_u64).unwrap_or(0) as usize;
        let page = match v.get_mut(field).map(Value::take) {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        };
        let got = page.len();
        infos.extend(page);
        if got == 0 || infos.len() >= total {
            return Ok(infos);
        }
    }
}

/// One reply to a Direct Get (ADR-31): a message, its metadata in headers,
/// or a status (404 none, 204 end of a batch, 408 bad request ...).
pub(super) enum DirectReply {
    Msg(StoredMsg),
    Status(u16, String),
}

pub(super) fn direct_reply(msg: &crate::message::Message) -> Result<DirectReply> {
    let bad = |what: &str| {
        Error::new(
            ErrorKind::JetStream,
            format!("invalid Direct Get reply: {what}"),
        )
    };
    let Some(h) = msg.headers() else {
        return Err(bad("no headers"));
    };
    match h.status() {
        None | Some(200) => {}
        Some(code) => {
            return Ok(DirectReply::Status(
                code,
                h.description().unwrap_or_default().to_string(),
            ))
        }
    }
    Ok(DirectReply::Msg(StoredMsg {
        subject: h
            .get(super::header_names::SUBJECT)
            .ok_or_else(|| bad("no Nats-Subject"))?
            .to_string(),
        seq: h
            .get(super::header_names::SEQUENCE)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad("no Nats-Sequence"))?,
        time_ns: h
            .get(super::header_names::TIME_STAMP)
            .and_then(super::time::parse_rfc3339_ns)
            .unwrap_or(0),
        headers: msg.headers.clone(),
        payload: msg.payload_bytes(),
    }))
}

pub(super) fn direct_get_failed(code: u16, text: &str) -> Error {
    Error::new(
        ErrorKind::JetStreamApi,
        format!("Direct Get failed: {code} {text}"),
    )
}

fn no_such_message(stream: &str) -> Error {
    Error::new(
        ErrorKind::MessageNotFound,
        format!("no such message in stream {stream}"),
    )
}

fn success(v: &Value, what: &str) -> Result<()> {
    match v.get("success").and_then(Value::as_bool) {
        Some(true) => Ok(()),
        _ => Err(bad_response(&format!("{what} did not succeed"))),
    }
}

fn decode_stored(v: &Value) -> Result<StoredMsg> {
    let m = v.get("message").ok_or_else(|| bad_response("no message"))?;
    let decode = |field: &str| -> Result<Vec<u8>> {
        use base64::Engine;
        match m.get(field).and_then(Value::as_str) {
            None => Ok(Vec::new()),
            Some(s) => base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|_| bad_response("message is not base64")),
        }
    };
    let hdrs = decode("hdrs")?;
    Ok(StoredMsg {
        subject: m
            .get("subject")
            .and_then(Value::as_str)
            .ok_or_else(|| bad_response("message has no subject"))?
            .to_string(),
        seq: m.get("seq").and_then(Value::as_u64).unwrap_or(0),
        time_ns: m
            .get("time")
            .and_then(Value::as_str)
            .and_then(super::time::parse_rfc3339_ns)
            .unwrap_or(0),
        headers: (!hdrs.is_empty()).then(|| Arc::new(Headers::parse(&hdrs))),
        payload: {
            // Keep a NUL after the payload, as received messages have.
            let mut data = decode("data")?;
            let len = data.len();
            data.push(0);
            Bytes::from(data).slice(..len)
        },
    })
}

/// How long a diagnostic stream info may take: the meta leader says "not
/// found" within milliseconds, also while a stream has no leader.
const DIAGNOSE_BOUND: std::time::Duration = std::time::Duration::from_millis(500);

impl JetStream {
    /// Creates, updates or creates-or-updates (per `action`) a stream from
    /// a StreamConfig JSON object; returns its StreamInfo.
    pub fn create_stream(&self, config_json: &str, action: CreateAction) -> Op<Value> {
        Op::build(|| {
            let (name, cfg) = stream_config(config_json)?;
            let body = serde_json::to_vec(&cfg)
                .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
            let js = self.clone();
            Ok(async move {
                let create = format!("STREAM.CREATE.{name}");
                let update = format!("STREAM.UPDATE.{name}");
                let info = match action {
                    CreateAction::Create => js.api_info(&create, &body).await,
                    CreateAction::Update => js.api_info(&update, &body).await,
                    // A create that loses to a concurrent creator (name in
                    // use, another configuration) becomes an update again.
                    CreateAction::CreateOrUpdate => match js.api_info(&update, &body).await {
                        Err(e) if e.kind() == ErrorKind::StreamNotFound => {
                            match js.api_info(&create, &body).await {
                                Err(e) if e.kind() == ErrorKind::StreamNameInUse => {
                                    js.api_info(&update, &body).await
                                }
                                r => r,
                            }
                        }
                        r => r,
                    },
                };
                if let Ok(info) = &info {
                    js.remember_direct(&name, info);
                }
                info
            })
        })
    }

    /// The stream's "not found" error when it is gone, asked with a short
    /// bound: this explains a write nobody answered, and during a leader
    /// election a stream info waits as long as the write did, so a caller
    /// would get a timeout for a cause already known (no response).
    pub(crate) async fn stream_gone(&self, name: &str) -> Option<Error> {
        match tokio::time::timeout(DIAGNOSE_BOUND, self.stream_info(name)).await {
            Ok(Err(gone)) if gone.kind() == ErrorKind::StreamNotFound => Some(gone),
            _ => None,
        }
    }

    /// A stream's StreamInfo.
    pub fn stream_info(&self, name: &str) -> Op<Value> {
        Op::build(|| {
            validate_name("stream", name)?;
            let (js, api) = (self.clone(), format!("STREAM.INFO.{name}"));
            Ok(async move { js.api_info(&api, b"").await })
        })
    }

    /// A stream's StreamInfo with `state.subjects`: the message count of
    /// each subject matching `subjects_filter` (wildcards allowed), every
    /// page of them merged.
    pub fn stream_info_with_subjects(&self, name: &str, subjects_filter: &str) -> Op<Value> {
        Op::build(|| {
            validate_name("stream", name)?;
            crate::subject::validate_subscribe(subjects_filter)?;
            let (js, api) = (self.clone(), format!("STREAM.INFO.{name}"));
            let filter = subjects_filter.to_string();
            Ok(async move {
                let mut subjects = Map::new();
                loop {
                    let req = json!({ "subjects_filter": filter, "offset": subjects.len() });
                    let mut info = js.api_info(&api, req.to_string().as_bytes()).await?;
                    let total = info.get("total").and_then(Value::as_u64).unwrap_or(0) as usize;
                    let page = match info.pointer_mut("/state/subjects").map(Value::take) {
                        Some(Value::Object(m)) => m,
                        _ => Map::new(),
                    };
                    let got = page.len();
                    subjects.extend(page);
                    if got == 0 || subjects.len() >= total {
                        if let Some(m) = info.as_object_mut() {
                            // Paging fields of the last page, not of the info.
                            for k in ["total", "offset", "limit"] {
                                m.shift_remove(k);
                            }
                        }
                        if let Some(state) = info.get_mut("state").and_then(Value::as_object_mut) {
                            state.insert("subjects".into(), Value::Object(subjects));
                        }
                        return Ok(info);
                    }
                }
            })
        })
    }

    /// The StreamInfo of every stream (of those holding `subject` when
    /// given), in pages of the server's size.
    pub fn stream_infos(&self, subject: Option<&str>) -> Op<Vec<Value>> {
        Op::build(|| {
            if let Some(s) = subject {
                crate::subject::validate_subscribe(s)?;
            }
            let (js, subject) = (self.clone(), subject.map(str::to_string));
            Ok(async move { all_stream_infos(&js, subject.as_deref()).await })
        })
    }

    /// The JetStream API level of the server (`INFO`'s `api.level`; 0 for
    /// servers older than 2.11, which report none).
    pub fn api_level(&self) -> Op<u64> {
        let js = self.clone();
        Op::new(async move {
            let info = js.account_info_json().await?;
            Ok(info
                .pointer("/api/level")
                .and_then(Value::as_u64)
                .unwrap_or(0))
        })
    }

    /// Deletes a stream and everything in it.
    pub fn delete_stream(&self, name: &str) -> Op<()> {
        Op::build(|| {
            validate_name("stream", name)?;
            let (js, api) = (self.clone(), format!("STREAM.DELETE.{name}"));
            let name = name.to_string();
            Ok(async move {
                success(&js.api(&api, b"").await?, "delete")?;
                js.forget_direct(&name);
                Ok(())
            })
        })
    }

    /// Purges messages (all, or per the options `filter`, `seq`, `keep`);
    /// returns how many were removed.
    pub fn purge_stream(&self, name: &str, options_json: Option<&str>) -> Op<u64> {
        Op::build(|| {
            validate_name("stream", name)?;
            let body = match options_json {
                Some(j) => {
                    let opts = normalize("purge options", j, PURGE_REQUEST)?;
                    if opts.contains_key("seq") && opts.contains_key("keep") {
                        return Err(Error::new(
                            ErrorKind::Config,
                            "purge options: seq and keep exclude each other",
                        ));
                    }
                    serde_json::to_vec(&opts)
                        .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?
                }
                None => Vec::new(),
            };
            let (js, api) = (self.clone(), format!("STREAM.PURGE.{name}"));
            Ok(async move {
                let v = js.api(&api, &body).await?;
                success(&v, "purge")?;
                Ok(v.get("purged").and_then(Value::as_u64).unwrap_or(0))
            })
        })
    }

    /// Names of all streams (optionally those holding `subject`), in pages.
    pub fn stream_names(&self, subject: Option<&str>) -> Op<Vec<String>> {
        let js = self.clone();
        let subject = subject.map(str::to_string);
        Op::new(async move {
            all_names(
                &js,
                "STREAM.NAMES",
                "streams",
                subject.as_deref().map(|s| ("subject", s)),
            )
            .await
        })
    }

    /// Reads one stored message: with Direct Get (ADR-31) when the stream
    /// allows it, else with `STREAM.MSG.GET`. A missing message is
    /// `MessageNotFound`, and so is a Direct Get nobody answers (503).
    pub fn get_msg(&self, stream: &str, which: MsgSelector) -> Op<StoredMsg> {
        Op::build(|| {
            validate_name("stream", stream)?;
            let body = which.body()?;
            let (js, stream) = (self.clone(), stream.to_string());
            Ok(async move {
                let direct = js.allows_direct(&stream).await?;
                match js.read_stored(&stream, &body, direct).await {
                    // Unanswered: the stream is gone or no longer allows
                    // Direct Get; read its config again next time.
                    Err(e) if direct && e.kind() == ErrorKind::NoResponders => {
                        js.forget_direct(&stream);
                        Err(no_such_message(&stream))
                    }
                    r => r,
                }
            })
        })
    }

    /// The last message stored on `subject` (or the one at `seq`), read
    /// with Direct Get (ADR-31: any replica answers, metadata in headers)
    /// when `direct`, else with `STREAM.MSG.GET`. `None` when there is no
    /// such message or it belongs to another subject.
    pub(crate) async fn stored_msg(
        &self,
        stream: &str,
        subject: &str,
        seq: Option<u64>,
        direct: bool,
    ) -> Result<Option<StoredMsg>> {
        let body = match seq {
            Some(s) => seq_body(s),
            None => last_by_subject_body(subject)?,
        };
        match self.read_stored(stream, &body, direct).await {
            Ok(m) => Ok((m.subject == subject).then_some(m)),
            Err(e) if e.kind() == ErrorKind::MessageNotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// One stored message (`body` selects it): with Direct Get when
    /// `direct`, else with the leader's `STREAM.MSG.GET`. None is
    /// `MessageNotFound` either way.
    async fn read_stored(&self, stream: &str, body: &[u8], direct: bool) -> Result<StoredMsg> {
        if direct {
            return self
                .direct_get(stream, body)
                .await?
                .ok_or_else(|| no_such_message(stream));
        }
        decode_stored(&self.api(&format!("STREAM.MSG.GET.{stream}"), body).await?)
    }

    /// Whether `stream` allows Direct Get: its config, read once per
    /// context (and again after a create, update or a 503).
    async fn allows_direct(&self, stream: &str) -> Result<bool> {
        if let Some(d) = crate::completion::lock(&self.shared.direct).get(stream) {
            return Ok(*d);
        }
        let info = self.api(&format!("STREAM.INFO.{stream}"), b"").await?;
        Ok(self.remember_direct(stream, &info))
    }

    fn remember_direct(&self, stream: &str, info: &Value) -> bool {
        let direct = info
            .pointer("/config/allow_direct")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        crate::completion::lock(&self.shared.direct).insert(stream.to_string(), direct);
        direct
    }

    fn forget_direct(&self, stream: &str) {
        crate::completion::lock(&self.shared.direct).remove(stream);
    }

    /// One Direct Get: the message, or `None` when there is none (404).
    /// Nobody answering (503) is `NoResponders`, which callers read in
    /// their own terms (bucket gone, message not found).
    async fn direct_get(&self, stream: &str, body: &[u8]) -> Result<Option<StoredMsg>> {
        let msg = self.api_msg(&format!("DIRECT.GET.{stream}"), body)?.await?;
        match direct_reply(&msg)? {
            DirectReply::Msg(m) => Ok(Some(m)),
            DirectReply::Status(404, _) => Ok(None),
            DirectReply::Status(503, _) => Err(Error::new(
                ErrorKind::NoResponders,
                format!("no Direct Get responders for stream {stream}"),
            )),
            DirectReply::Status(code, text) => Err(direct_get_failed(code, &text)),
        }
    }

    /// Deletes one message; `erase` overwrites it on disk.
    pub fn delete_msg(&self, stream: &str, seq: u64, erase: bool) -> Op<()> {
        Op::build(|| {
            validate_name("stream", stream)?;
            let req = if erase {
                json!({ "seq": seq })
            } else {
                json!({ "seq": seq, "no_erase": true })
            };
            let (js, api) = (self.clone(), format!("STREAM.MSG.DELETE.{stream}"));
            Ok(async move {
                success(
                    &js.api(&api, req.to_string().as_bytes()).await?,
                    "message delete",
                )
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(body: &[u8]) -> Value {
        serde_json::from_slice(body).expect("the body is JSON")
    }

    #[test]
    fn request_bodies_are_the_json_the_server_reads() {
        for s in ["$KV.b.k", "a.\"quoted\".b\\c", "ünï.cødé", "s.*", "s.>"] {
            assert_eq!(
                parsed(&MsgSelector::LastBySubject(s.into()).body().unwrap()),
                json!({ "last_by_subj": s })
            );
        }
        assert_eq!(
            parsed(&MsgSelector::Seq(u64::MAX).body().unwrap()),
            json!({ "seq": u64::MAX })
        );
        let next = MsgSelector::NextBySubject {
            seq: 7,
            subject: "a.>".into(),
        };
        assert_eq!(
            parsed(&next.body().unwrap()),
            json!({ "seq": 7, "next_by_subj": "a.>" })
        );
        assert_eq!(
            MsgSelector::LastBySubject("bad subject".into())
                .body()
                .unwrap_err()
                .kind(),
            ErrorKind::BadSubject
        );
    }
}
