//! Writing an object (ADR-20): the data is cut into chunks of a uniform
//! size published to a new `$O.<bucket>.C.<nuid>` subject, with a bounded
//! window of unacknowledged chunks (the whole object is never in memory),
//! hashed with SHA-256 on the way; the description goes last, with a
//! rollup and a compare-and-set on the previous one, and only then are the
//! replaced version's chunks purged. A failed or aborted write purges its
//! own chunks and leaves the previous version readable.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE;
use base64::Engine;
use bytes::{Buf, Bytes, BytesMut};
use ring::digest;

use super::{now_ns, validate_name, ObjectInfo, ObjectMeta, ObjectStore, DEFAULT_CHUNK_SIZE};
use crate::client::ReplyFuture;
use crate::error::{Error, ErrorKind, Result};
use crate::jetstream::parse_pub_ack;
use crate::op::Op;

/// Chunk bytes published and not yet acknowledged, at most.
const WINDOW_BYTES: usize = 32 << 20;
/// Bytes `put_blocking` copies from the caller's buffer at a time.
const BLOCKING_PIECE: usize = 1 << 20;
/// Attempts to store the description when concurrent writers of the same
/// name keep replacing it.
const META_RETRIES: usize = 8;

struct State {
    os: ObjectStore,
    meta: ObjectMeta,
    nuid: String,
    subject: String,
    chunk_size: usize,
    ack_timeout: Duration,
    /// The start of the next chunk.
    buf: BytesMut,
    hasher: digest::Context,
    size: u64,
    chunks: u64,
    inflight: VecDeque<(ReplyFuture, usize)>,
    inflight_bytes: usize,
    /// What failed the write; every later call reports it.
    failed: Option<Error>,
    /// Finished or aborted (shared with the writer, which refuses calls
    /// up front once it is set).
    ended: Arc<AtomicBool>,
    /// An operation is under way; still set when the next one starts, it
    /// was dropped half-way (its chunk may or may not be stored).
    busy: bool,
}

/// An object being written in pieces (`ObjectStore::writer`). Cheap to
/// clone; its operations run one at a time, in call order.
#[derive(Clone)]
pub struct ObjectWriter {
    state: Arc<tokio::sync::Mutex<State>>,
    ended: Arc<AtomicBool>,
}

impl std::fmt::Debug for ObjectWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectWriter").finish_non_exhaustive()
    }
}

impl ObjectStore {
    /// Starts writing the object `meta.name` (no I/O until data comes).
    /// A chunk size above the server's max_payload is a `Config` error.
    pub fn writer(&self, meta: ObjectMeta) -> Result<ObjectWriter> {
        validate_name(&meta.name)?;
        let chunk_size = meta.chunk_size.unwrap_or(DEFAULT_CHUNK_SIZE);
        let max = self.client().max_payload();
        if chunk_size == 0 || chunk_size > max {
            return Err(Error::new(
                ErrorKind::Config,
                format!("chunk size {chunk_size} must be 1..={max} (the server's max_payload)"),
            ));
        }
        let nuid = crate::client::new_nuid();
        let state = State {
            subject: self.chunk_subject(&nuid),
            os: self.clone(),
            meta,
            nuid,
            chunk_size,
            ack_timeout: self.js.options().timeout,
            buf: BytesMut::new(),
            hasher: digest::Context::new(&digest::SHA256),
            size: 0,
            chunks: 0,
            inflight: VecDeque::new(),
            inflight_bytes: 0,
            failed: None,
            ended: Arc::new(AtomicBool::new(false)),
            busy: false,
        };
        Ok(ObjectWriter {
            ended: Arc::clone(&state.ended),
            state: Arc::new(tokio::sync::Mutex::new(state)),
        })
    }

    /// Stores `data` as the object `meta.name` (replacing any earlier one).
    pub fn put(&self, meta: ObjectMeta, data: &[u8]) -> Op<ObjectInfo> {
        Op::build(|| {
            let w = self.writer(meta)?;
            let data = Bytes::copy_from_slice(data);
            Ok(async move {
                let mut s = w.state.lock().await;
                s.begin()?;
                let r = s.push(data).await;
                let r = match s.end(r).await {
                    Ok(()) => {
                        s.begin()?;
                        let r = s.finish().await;
                        s.end(r).await
                    }
                    Err(e) => Err(e),
                };
                if r.is_err() && !s.is_ended() {
                    s.abort().await;
                }
                r
            })
        })
    }

    /// `put` for a caller that waits for the end on its own thread: the
    /// caller's buffer outlives the call, so it is copied a piece at a time
    /// as the window takes it, not whole before the first chunk (a large
    /// put from memory no longer doubles the process's memory).
    pub fn put_blocking(&self, meta: ObjectMeta, data: &[u8]) -> Result<ObjectInfo> {
        let w = self.writer(meta)?;
        for piece in data.chunks(BLOCKING_PIECE) {
            if let Err(e) = w.write(piece).wait() {
                let _ = w.abort().wait();
                return Err(e);
            }
        }
        w.finish().wait()
    }
}

fn ended_error() -> Error {
    Error::new(
        ErrorKind::IllegalState,
        "the object writer was already finished or aborted",
    )
}

impl State {
    fn is_ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }

    /// Starts a step of the write: refused once the write ended or failed.
    fn begin(&mut self) -> Result<()> {
        if self.busy && self.failed.is_none() {
            self.failed = Some(Error::new(
                ErrorKind::Cancelled,
                "an earlier call on this object writer was cancelled half-way",
            ));
        }
        if self.is_ended() {
            return Err(ended_error());
        }
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.busy = true;
        Ok(())
    }

    /// Ends a step: a failure (in bucket terms) fails the write.
    async fn end<T>(&mut self, r: Result<T>) -> Result<T> {
        self.busy = false;
        match r {
            Ok(v) => Ok(v),
            Err(e) => {
                let e = self.os.explain(e).await;
                self.failed = Some(e.clone());
                Err(e)
            }
        }
    }

    async fn push(&mut self, mut data: Bytes) -> Result<()> {
        if !self.buf.is_empty() {
            let take = (self.chunk_size - self.buf.len()).min(data.len());
            self.buf.extend_from_slice(&data[..take]);
            data.advance(take);
            if self.buf.len() == self.chunk_size {
                let chunk = self.buf.split().freeze();
                self.send(chunk).await?;
            }
        }
        while data.len() >= self.chunk_size {
            let chunk = data.split_to(self.chunk_size);
            self.send(chunk).await?;
        }
        if !data.is_empty() {
            self.buf.extend_from_slice(&data);
        }
        Ok(())
    }

    async fn send(&mut self, chunk: Bytes) -> Result<()> {
        let reply = self
            .os
            .client()
            .request_fut(&self.subject, None, &chunk, self.ack_timeout)?;
        self.hasher.update(&chunk);
        self.size += chunk.len() as u64;
        self.chunks += 1;
        self.inflight.push_back((reply, chunk.len()));
        self.inflight_bytes += chunk.len();
        while self.inflight_bytes > WINDOW_BYTES {
            self.settle_one().await?;
        }
        Ok(())
    }

    /// Waits for the oldest chunk's ack.
    async fn settle_one(&mut self) -> Result<()> {
        let Some((reply, len)) = self.inflight.pop_front() else {
            return Ok(());
        };
        self.inflight_bytes -= len;
        parse_pub_ack(&reply.await?).map(|_| ())
    }

    async fn finish(&mut self) -> Result<ObjectInfo> {
        if !self.buf.is_empty() {
            let chunk = self.buf.split().freeze();
            self.send(chunk).await?;
        }
        while !self.inflight.is_empty() {
            self.settle_one().await?;
        }
        let sum = self.hasher.clone().finish();
        let meta = std::mem::take(&mut self.meta);
        let mut info = ObjectInfo {
            name: meta.name,
            description: meta.description,
            headers: meta.headers,
            metadata: meta.metadata,
            link: None,
            max_chunk_size: Some(self.chunk_size as u32),
            bucket: self.os.bucket.to_string(),
            nuid: self.nuid.clone(),
            size: self.size,
            chunks: self.chunks,
            digest: Some(format!("SHA-256={}", URL_SAFE.encode(sum.as_ref()))),
            deleted: false,
            mtime_ns: now_ns(),
            revision: 0,
        };
        for _ in 0..META_RETRIES {
            let previous = self.os.stored_info(&info.name).await?;
            let expect = previous.as_ref().map_or(0, |old| old.revision);
            match self.os.publish_meta(&mut info, Some(expect)).await {
                Ok(()) => {
                    self.ended.store(true, Ordering::Release);
                    if let Some(old) = previous {
                        if !old.deleted && !old.nuid.is_empty() && old.nuid != info.nuid {
                            // The new version is in place; its predecessor's
                            // chunks are garbage now. A failure here leaves
                            // them behind but loses nothing.
                            let _ = self
                                .os
                                .purge_subject(&self.os.chunk_subject(&old.nuid))
                                .await;
                        }
                    }
                    return Ok(info);
                }
                Err(e) if e.kind() == ErrorKind::WrongLastSequence => continue,
                Err(e) => return Err(e),
            }
        }
        Err(Error::new(
            ErrorKind::ObjectExists,
            format!(
                "object {:?} kept being replaced by other writers",
                info.name
            ),
        ))
    }

    /// Ends the write without storing it: its chunks are purged.
    async fn abort(&mut self) {
        if self.is_ended() {
            return;
        }
        self.ended.store(true, Ordering::Release);
        // Let published chunks land before purging them.
        while let Some((reply, _)) = self.inflight.pop_front() {
            let _ = reply.await;
        }
        self.inflight_bytes = 0;
        if self.chunks > 0 {
            let _ = self.os.purge_subject(&self.subject).await;
        }
    }
}

impl ObjectWriter {
    /// Refuses a call made after the write ended (a call queued behind
    /// the one that ends it fails when its turn comes).
    fn check_open(&self) -> Result<()> {
        if self.ended.load(Ordering::Acquire) {
            return Err(ended_error());
        }
        Ok(())
    }

    /// Appends `data` (copied now). Publishes each full chunk; waits only
    /// while the window of unacknowledged chunks is full.
    pub fn write(&self, data: &[u8]) -> Op<()> {
        if let Err(e) = self.check_open() {
            return Op::fail(e);
        }
        let data = Bytes::copy_from_slice(data);
        let state = Arc::clone(&self.state);
        Op::new(async move {
            let mut s = state.lock_owned().await;
            s.begin()?;
            let r = s.push(data).await;
            s.end(r).await
        })
    }

    /// Publishes what is left, waits for every ack and stores the
    /// description; the replaced version's chunks are purged after.
    pub fn finish(&self) -> Op<ObjectInfo> {
        if let Err(e) = self.check_open() {
            return Op::fail(e);
        }
        let state = Arc::clone(&self.state);
        Op::new(async move {
            let mut s = state.lock_owned().await;
            s.begin()?;
            let r = s.finish().await;
            let r = s.end(r).await;
            if r.is_err() && !s.is_ended() {
                s.abort().await;
            }
            r
        })
    }

    /// Abandons the write: its chunks are purged, the previous version of
    /// the object stays. Harmless once finished or aborted.
    pub fn abort(&self) -> Op<()> {
        let state = Arc::clone(&self.state);
        Op::new(async move {
            state.lock_owned().await.abort().await;
            Ok(())
        })
    }

    /// Aborts on the runtime, without waiting (a handle freed unfinished).
    pub fn abort_in_background(&self) {
        let state = Arc::clone(&self.state);
        crate::runtime::handle().spawn(async move { state.lock_owned().await.abort().await });
    }
}
