//! What a client tells the application apart from replies and messages:
//! lifecycle events and errors (on the events dispatcher thread, so that
//! the reporter, which may hold locks, runs no user code), and token
//! completion callbacks (on a completions thread of their own).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::completion::lock;
use crate::dispatch::Dispatcher;
use crate::error::{Error, ErrorKind};
use crate::log::{LogLevel, Logger};
use crate::options::{ErrorCallback, ErrorEvent, Event, EventCallback, EventKind};

pub(crate) struct Events {
    log: Logger,
    owner_id: usize,
    events: Dispatcher,
    /// Runs token completion callbacks, apart from lifecycle and error
    /// callbacks, so that either may wait for the other. Started by the
    /// first callback.
    completions: OnceLock<Dispatcher>,
    error_cb: Mutex<Option<ErrorCallback>>,
    event_cb: Mutex<Option<EventCallback>>,
    /// Errors reported (`ClientStats::errors`).
    errors: AtomicU64,
}

impl Events {
    pub(crate) fn new(
        log: Logger,
        owner_id: usize,
        error_cb: Option<ErrorCallback>,
        event_cb: Option<EventCallback>,
    ) -> Events {
        Events {
            log,
            owner_id,
            events: Dispatcher::start("natsio-events", owner_id),
            completions: OnceLock::new(),
            error_cb: Mutex::new(error_cb),
            event_cb: Mutex::new(event_cb),
            errors: AtomicU64::new(0),
        }
    }

    pub(crate) fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }

    /// Delivers a lifecycle event on the events dispatcher thread.
    pub(crate) fn emit(
        &self,
        kind: EventKind,
        url: Option<String>,
        error: Option<Error>,
        servers: Vec<String>,
    ) {
        let ev = Event {
            kind,
            url,
            error,
            servers,
        };
        let level = event_log_level(kind);
        if self.log.enabled(level) {
            let (log, ev) = (self.log.clone(), ev.clone());
            self.events
                .post(Box::new(move || log_event(&log, level, &ev)));
        }
        let Some(cb) = lock(&self.event_cb).clone() else {
            return;
        };
        self.events.post(Box::new(move || cb(&ev)));
    }

    /// Hands an error to the application's error callback, on the events
    /// dispatcher thread.
    pub(crate) fn report_error(&self, error: Error, sub: Option<(u64, String)>) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let level = if error.kind() == ErrorKind::SlowConsumer {
            LogLevel::Warn
        } else {
            LogLevel::Error
        };
        if self.log.enabled(level) {
            // On the events thread: the reporter may hold locks a log
            // callback that publishes would need.
            let text = match &sub {
                Some((sid, subject)) => format!("{error} (subject {subject}, sid {sid})"),
                None => error.to_string(),
            };
            let log = self.log.clone();
            self.events
                .post(Box::new(move || log.write(level, format_args!("{text}"))));
        }
        let Some(cb) = lock(&self.error_cb).clone() else {
            return;
        };
        let (sid, subject) = match sub {
            Some((sid, s)) => (Some(sid), Some(s)),
            None => (None, None),
        };
        let ev = ErrorEvent {
            error,
            sid,
            subject,
        };
        self.events.post(Box::new(move || cb(&ev)));
    }

    /// Runs `job` on the events dispatcher thread, in order with the
    /// events and errors posted there.
    pub(crate) fn post_event(&self, job: Box<dyn FnOnce() + Send>) {
        self.events.post(job);
    }

    /// Runs a token's completion callback on this client's completions
    /// thread.
    pub(crate) fn post_completion(&self, job: Box<dyn FnOnce() + Send>) {
        self.completions
            .get_or_init(|| Dispatcher::start("natsio-completions", self.owner_id))
            .post(job);
    }

    /// Forgets the event callback: a client whose connect failed never
    /// existed for the application, so it delivers no events.
    pub(crate) fn drop_event_callback(&self) {
        drop(lock(&self.event_cb).take());
    }

    /// At close, after the last event: runs what is queued, ends the
    /// threads and releases the application's callback state here, not on
    /// a runtime thread.
    pub(crate) fn stop(&self) {
        self.events.stop();
        if let Some(c) = self.completions.get() {
            c.stop();
        }
        drop(lock(&self.event_cb).take());
        drop(lock(&self.error_cb).take());
    }
}

/// A lifecycle event's log level: warn for a lost connection, debug for a
/// failed reconnect attempt (the connector logs it at warn already), else
/// info.
fn event_log_level(kind: EventKind) -> LogLevel {
    match kind {
        EventKind::Disconnected => LogLevel::Warn,
        EventKind::ReconnectFailed => LogLevel::Debug,
        _ => LogLevel::Info,
    }
}

/// A lifecycle event as a log line (the caller checked `level` is enabled).
fn log_event(log: &Logger, level: LogLevel, ev: &Event) {
    let url = ev.url.as_deref().unwrap_or("");
    let why = ev
        .error
        .as_ref()
        .map(|e| format!(": {e}"))
        .unwrap_or_default();
    match ev.kind {
        EventKind::Connected => log.write(level, format_args!("connected to {url}")),
        EventKind::Disconnected => {
            log.write(level, format_args!("disconnected{why}; reconnecting"))
        }
        EventKind::Reconnected => log.write(level, format_args!("reconnected to {url}")),
        EventKind::LameDuck => log.write(level, format_args!("{url} entered lame duck mode")),
        EventKind::ServersDiscovered => log.write(
            level,
            format_args!("servers discovered: {}", ev.servers.join(", ")),
        ),
        EventKind::Closed => log.write(level, format_args!("closed{why}")),
        // Its error names the server: "reconnect to <url> failed: ...".
        EventKind::ReconnectFailed => match &ev.error {
            Some(e) => log.write(level, format_args!("{e}")),
            None => log.write(level, format_args!("reconnect to {url} failed")),
        },
    }
}
