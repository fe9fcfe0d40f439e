//! Stream management: create, update, info, delete, purge, names, and
//! reading stored messages.

use bytes::Bytes;
use serde_json::{json, Map, Value};

use super::config::{normalize, validate_name, PURGE_REQUEST, STREAM_CONFIG};
use super::{strip_type, JetStream};
use crate::error::{Error, ErrorKind, Result};
use crate::headers::Headers;

/// A message read back from a stream.
#[derive(Debug, Clone)]
pub struct StoredMsg {
    pub subject: String,
    pub seq: u64,
    /// Nanoseconds since the Unix epoch (0 if the server sent none).
    pub time_ns: i64,
    pub headers: Option<Headers>,
    pub payload: Bytes,
}

/// Which message `get_msg` reads.
#[derive(Debug, Clone, Copy)]
pub enum MsgSelector<'a> {
    Seq(u64),
    LastBySubject(&'a str),
}

fn stream_config(json: &str) -> Result<(String, Map<String, Value>)> {
    let cfg = normalize("StreamConfig", json, STREAM_CONFIG)?;
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

impl JetStream {
    fn stream_request(&self, verb: &str, name: &str, body: &[u8]) -> Result<Value> {
        validate_name("stream", name)?;
        self.api_request(&format!("STREAM.{verb}.{name}"), body)
    }

    fn config_request(&self, verb: &str, config: &Map<String, Value>, name: &str) -> Result<Value> {
        let body = serde_json::to_vec(config)
            .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        let mut info = self.stream_request(verb, name, &body)?;
        strip_type(&mut info);
        Ok(info)
    }

    /// Creates a stream from a StreamConfig JSON object; returns its StreamInfo.
    pub fn create_stream(&self, config_json: &str) -> Result<Value> {
        let (name, cfg) = stream_config(config_json)?;
        self.config_request("CREATE", &cfg, &name)
    }

    /// Updates a stream's configuration; returns its StreamInfo.
    pub fn update_stream(&self, config_json: &str) -> Result<Value> {
        let (name, cfg) = stream_config(config_json)?;
        self.config_request("UPDATE", &cfg, &name)
    }

    /// Updates the stream, or creates it when it does not exist.
    pub fn create_or_update_stream(&self, config_json: &str) -> Result<Value> {
        let (name, cfg) = stream_config(config_json)?;
        match self.config_request("UPDATE", &cfg, &name) {
            Err(e) if e.kind() == ErrorKind::StreamNotFound => {
                self.config_request("CREATE", &cfg, &name)
            }
            r => r,
        }
    }

    /// A stream's StreamInfo.
    pub fn stream_info(&self, name: &str) -> Result<Value> {
        let mut info = self.stream_request("INFO", name, b"")?;
        strip_type(&mut info);
        Ok(info)
    }

    /// Deletes a stream and everything in it.
    pub fn delete_stream(&self, name: &str) -> Result<()> {
        let v = self.stream_request("DELETE", name, b"")?;
        match v.get("success").and_then(Value::as_bool) {
            Some(true) => Ok(()),
            _ => Err(bad_response("delete did not succeed")),
        }
    }

    /// Purges messages (all, or per the options `filter`, `seq`, `keep`);
    /// returns how many were removed.
    pub fn purge_stream(&self, name: &str, options_json: Option<&str>) -> Result<u64> {
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
        let v = self.stream_request("PURGE", name, &body)?;
        if v.get("success").and_then(Value::as_bool) != Some(true) {
            return Err(bad_response("purge did not succeed"));
        }
        Ok(v.get("purged").and_then(Value::as_u64).unwrap_or(0))
    }

    /// Names of all streams (optionally those holding `subject`), in pages.
    pub fn stream_names(&self, subject: Option<&str>) -> Result<Vec<String>> {
        let mut names = Vec::new();
        loop {
            let mut req = json!({ "offset": names.len() });
            if let Some(s) = subject {
                req["subject"] = Value::from(s);
            }
            let v = self.api_request("STREAM.NAMES", req.to_string().as_bytes())?;
            let page: Vec<String> = match v.get("streams") {
                Some(Value::Array(a)) => a
                    .iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect(),
                _ => Vec::new(), // null when there are none
            };
            let total = v.get("total").and_then(Value::as_u64).unwrap_or(0) as usize;
            let got = page.len();
            names.extend(page);
            if got == 0 || names.len() >= total {
                return Ok(names);
            }
        }
    }

    /// Reads one stored message (`STREAM.MSG.GET`). A missing message is
    /// `MessageNotFound`.
    pub fn get_msg(&self, stream: &str, which: MsgSelector<'_>) -> Result<StoredMsg> {
        let req = match which {
            MsgSelector::Seq(seq) => json!({ "seq": seq }),
            MsgSelector::LastBySubject(s) => {
                crate::subject::validate_publish(s)?;
                json!({ "last_by_subj": s })
            }
        };
        let v = self.stream_request("MSG.GET", stream, req.to_string().as_bytes())?;
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
            headers: (!hdrs.is_empty()).then(|| Headers::parse(&hdrs)),
            payload: {
                // Keep a NUL after the payload, as received messages have.
                let mut data = decode("data")?;
                let len = data.len();
                data.push(0);
                Bytes::from(data).slice(..len)
            },
        })
    }

    /// Deletes one message; `erase` overwrites it on disk.
    pub fn delete_msg(&self, stream: &str, seq: u64, erase: bool) -> Result<()> {
        let req = if erase {
            json!({ "seq": seq })
        } else {
            json!({ "seq": seq, "no_erase": true })
        };
        let v = self.stream_request("MSG.DELETE", stream, req.to_string().as_bytes())?;
        match v.get("success").and_then(Value::as_bool) {
            Some(true) => Ok(()),
            _ => Err(bad_response("message delete did not succeed")),
        }
    }
}
