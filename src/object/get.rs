//! Reading an object: its chunks come in order from an ordered consumer on
//! its chunk subject (a one-chunk object's with one Get), buffered ahead of
//! the reader a few MiB at most, and are checked on the way: more chunks or bytes than the description
//! records, or a different SHA-256 digest at the end, fail the read with
//! `DigestMismatch` instead of ending it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use base64::Engine;
use bytes::{Buf, Bytes};
use ring::digest;

use super::{ObjectInfo, ObjectStore};
use crate::client::Flow;
use crate::completion::{lock, Completion, Outcome};
use crate::error::{Error, ErrorKind, Result};
use crate::feed::{Feed, FeedItem, Limits};
use crate::jetstream::{start_ordered, DeliverPolicy, MsgMetadata, OrderedConfig, OrderedSink};
use crate::message::Message;
use crate::op::Op;
use crate::options::PendingPolicy;

/// Chunk bytes buffered ahead of the reader, about.
const READ_AHEAD_BYTES: u64 = 8 << 20;

/// A piece of an object's data, as a reader hands it out.
#[derive(Debug, Clone)]
pub struct Chunk(pub Bytes);

impl FeedItem for Chunk {
    fn pending_size(&self) -> usize {
        self.0.len()
    }
}

fn chunk_outcome(c: Chunk) -> Result<Outcome> {
    Ok(Outcome::value(c))
}

/// The bytes of a `SHA-256=` digest, in either base64 alphabet, padded or
/// not (nats.go writes URL-safe with padding; older clients differ).
fn digest_bytes(digest: &str) -> Option<Vec<u8>> {
    let b64 = digest.strip_prefix("SHA-256=")?.trim_end_matches('=');
    URL_SAFE_NO_PAD
        .decode(b64)
        .or_else(|_| STANDARD_NO_PAD.decode(b64))
        .ok()
}

fn mismatch(info: &ObjectInfo, what: String) -> Error {
    Error::new(
        ErrorKind::DigestMismatch,
        format!("object {:?}: {what}", info.name),
    )
}

/// Checks the chunks of one object as they arrive.
struct ChunkSink {
    info: Arc<ObjectInfo>,
    hasher: digest::Context,
    size: u64,
    chunks: u64,
}

impl ChunkSink {
    fn new(info: &Arc<ObjectInfo>) -> Self {
        ChunkSink {
            info: Arc::clone(info),
            hasher: digest::Context::new(&digest::SHA256),
            size: 0,
            chunks: 0,
        }
    }

    /// Counts and hashes one chunk; more than the description records is
    /// a mismatch at once.
    fn take(&mut self, data: &[u8]) -> Result<()> {
        self.hasher.update(data);
        self.size += data.len() as u64;
        self.chunks += 1;
        if self.size > self.info.size || self.chunks > self.info.chunks {
            return Err(mismatch(
                &self.info,
                format!(
                    "more data than its description records ({} bytes in {} chunks)",
                    self.info.size, self.info.chunks
                ),
            ));
        }
        Ok(())
    }

    fn verify_end(&self) -> Result<()> {
        let info = &self.info;
        if self.size != info.size || self.chunks != info.chunks {
            return Err(mismatch(
                info,
                format!(
                    "read {} bytes in {} chunks, its description records {} in {}",
                    self.size, self.chunks, info.size, info.chunks
                ),
            ));
        }
        let Some(expected) = info.digest.as_deref() else {
            return Ok(()); // nothing recorded to check against
        };
        let sum = self.hasher.clone().finish();
        match digest_bytes(expected) {
            Some(want) if want == sum.as_ref() => Ok(()),
            Some(_) => Err(mismatch(
                info,
                "its SHA-256 digest differs from the recorded one".into(),
            )),
            None => Err(mismatch(info, format!("unreadable digest {expected:?}"))),
        }
    }
}

impl OrderedSink for ChunkSink {
    type Item = Chunk;

    fn started(&mut self, pending: u64, out: &Feed<Chunk>) {
        // Recreated after a loss, it resumes after the last chunk; at the
        // start with nothing stored, the end is now.
        if pending == 0 && self.chunks == 0 {
            if let Err(e) = self.verify_end() {
                out.fail(e);
            }
        }
    }

    fn deliver(&mut self, m: Message, md: &MsgMetadata<'_>, out: &Feed<Chunk>) -> Result<()> {
        let data = m.payload_bytes();
        self.take(&data)?;
        if md.num_pending == 0 {
            self.verify_end()?;
        }
        out.push(Chunk(data));
        Ok(())
    }

    fn map_error(&self, e: Error) -> Error {
        super::bucket_error(e, &self.info.bucket)
    }
}

/// An object being read (`ObjectStore::get`). Thread-safe.
pub struct ObjectReader {
    info: Arc<ObjectInfo>,
    flow: Flow<Chunk>,
    /// What is left of a chunk `read` handed out in part.
    partial: Mutex<Bytes>,
}

impl std::fmt::Debug for ObjectReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectReader")
            .field("name", &self.info.name)
            .finish()
    }
}

impl ObjectStore {
    /// Reads object `name` (through a link to an object: the target). A
    /// deleted object fails with `ObjectDeleted` unless `show_deleted`
    /// (then it reads as empty); a link to a bucket fails with
    /// `ObjectLink`.
    pub fn get(&self, name: &str, show_deleted: bool) -> Op<ObjectReader> {
        self.on_object(name, move |os, name| async move {
            let mut info = os.info_of(&name, show_deleted).await?;
            let mut source = os.clone();
            if let Some(link) = info.link.clone() {
                let Some(target) = link.name else {
                    return Err(Error::new(
                        ErrorKind::ObjectLink,
                        format!(
                            "{name:?} links to the bucket {:?}, not an object",
                            link.bucket
                        ),
                    ));
                };
                if link.bucket != *os.bucket {
                    source = os.js.object_store(&link.bucket).await?;
                }
                info = source.info_of(&target, false).await?;
                if info.link.is_some() {
                    return Err(Error::new(
                        ErrorKind::ObjectLink,
                        format!("{name:?} links to {target:?}, itself a link"),
                    ));
                }
            }
            source.read(info).await
        })
    }

    async fn read(&self, info: ObjectInfo) -> Result<ObjectReader> {
        let info = Arc::new(info);
        let client = Arc::clone(self.client());
        let feed = if info.size == 0 || info.deleted {
            let feed = Arc::new(Feed::new(Limits::unlimited(), chunk_outcome));
            feed.finish();
            feed
        } else if info.chunks == 1 {
            self.read_one_chunk(&info).await?
        } else {
            let per_chunk = (info.size / info.chunks.max(1)).max(1);
            let window = (READ_AHEAD_BYTES / per_chunk).clamp(2, 256) as usize;
            let cfg = OrderedConfig {
                stream: self.stream.to_string(),
                filter_subjects: vec![self.chunk_subject(&info.nuid)],
                deliver: DeliverPolicy::All,
                headers_only: false,
                until_drained: true,
                batch: window,
                expires: Duration::from_secs(30),
                idle_heartbeat: Duration::from_secs(5),
                limits: Limits {
                    items: window,
                    bytes: usize::MAX,
                    policy: PendingPolicy::DropNew,
                },
                covers_stream: false,
            };
            start_ordered(self.js.clone(), cfg, ChunkSink::new(&info), chunk_outcome)
                .await?
                .feed
        };
        Ok(ObjectReader {
            info,
            flow: Flow::new(feed, &client, "natsio-obj-get"),
            partial: Mutex::new(Bytes::new()),
        })
    }
    /// The chunk of a one-chunk object, read with one (Direct) Get of its
    /// chunk subject's last message instead of an ordered consumer's three
    /// round trips (create, pull, delete): most small objects are one
    /// chunk. Checked as the consumer's chunks are; a failed check fails
    /// the reads, as there.
    async fn read_one_chunk(&self, info: &Arc<ObjectInfo>) -> Result<Arc<Feed<Chunk>>> {
        let chunk = self
            .last_msg_on(&self.chunk_subject(&info.nuid))
            .await?
            .map(|m| m.payload);
        let mut sink = ChunkSink::new(info);
        let checked = match &chunk {
            Some(data) => sink.take(data),
            None => Ok(()),
        }
        .and_then(|()| sink.verify_end());
        let feed = Arc::new(Feed::new(Limits::unlimited(), chunk_outcome));
        match checked {
            Ok(()) => {
                if let Some(data) = chunk {
                    feed.push(Chunk(data));
                }
                feed.finish();
            }
            Err(e) => {
                feed.fail(e);
            }
        }
        Ok(feed)
    }
}

impl ObjectReader {
    /// The object read (a link's target).
    pub fn info(&self) -> &ObjectInfo {
        &self.info
    }

    /// Copies the next bytes into `buf`, waiting up to `timeout` for a
    /// chunk (`None`: as long as it takes). `Ok(0)` (for a non-empty
    /// `buf`): the end, with size and digest verified.
    pub fn read(&self, buf: &mut [u8], timeout: Option<Duration>) -> Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let mut partial = lock(&self.partial);
        if partial.is_empty() {
            match self.flow.next(timeout)? {
                Some(Chunk(data)) => *partial = data,
                None => return Ok(0),
            }
        }
        let n = partial.len().min(buf.len());
        buf[..n].copy_from_slice(&partial[..n]);
        partial.advance(n);
        Ok(n)
    }

    /// The next piece of data as a completion (`Outcome::Value(Chunk)`;
    /// `Outcome::End` at the verified end): what `read` left of a chunk,
    /// else the next chunk.
    pub fn next_chunk_async(&self) -> Result<Arc<Completion>> {
        let rest = std::mem::take(&mut *lock(&self.partial));
        if !rest.is_empty() {
            return Ok(Completion::completed(Ok(Outcome::value(Chunk(rest)))));
        }
        self.flow.feed.next_async()
    }

    /// Stops reading (the consumer goes away).
    pub fn stop(&self) {
        self.flow.feed.stop();
    }
}

impl Drop for ObjectReader {
    fn drop(&mut self) {
        self.flow.feed.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::digest_bytes;

    #[test]
    fn digests_in_either_alphabet() {
        let url = digest_bytes("SHA-256=_-8=").unwrap();
        assert_eq!(url, vec![0xff, 0xef]);
        assert_eq!(digest_bytes("SHA-256=/+8").unwrap(), url);
        assert_eq!(digest_bytes("SHA-256=_-8").unwrap(), url);
        assert!(digest_bytes("MD5=abc").is_none());
    }
}
