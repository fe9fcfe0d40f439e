//! async-nats-bench: peer benchmark harness over async-nats (client=async-nats).
//!
//! Implements the CLI, scenarios, clock boundaries and output lines fixed by
//! the project's benchmark spec (shared/bench-spec.md).
//!
//! Every line with a message/operation count (pub, pubsub, req, jspub,
//! jspub-sync, kv-put, kv-get, kv-par, js-consume) has `cpu_ns_per_msg`:
//! user+sys CPU of the whole process (`getrusage(RUSAGE_SELF)`, the tokio
//! workers included) over exactly the timed region, divided by the line's
//! messages/operations. Every result line ends with `rss_peak_kb` (VmHWM).
//!
//! Notes specific to async-nats:
//! * `Client::flush()` only drains the local write buffer, it does not do a
//!   PING/PONG round trip, so `pub` uses the echo barrier (`flush=echo`).
//! * `jspub` keeps its own window of ack futures; the library's in-flight
//!   limit is set to the same value with backpressure on.
//! * `kv` buckets get allow_direct=true (the async-nats default).
//! * `kv-par`: K `Store::get` futures driven with `buffer_unordered(--par)`
//!   (P in flight) on the main task; `threads_peak` from /proc/self/status,
//!   sampled every 2 ms by a tokio task (no extra OS thread).
//! * `js-consume`: a durable pull consumer's `messages()` stream (continuous
//!   pull), `Message::ack` (plain ack) per message.
//! * `obj-put` / `obj-get`: `ObjectStore::put` from a byte slice /
//!   `ObjectStore::get` read to the end into a `Vec` (the `Object` reader
//!   checks the SHA-256 digest at the end). Each measured run is a fresh
//!   process (this program re-run with `--obj-child`), so `rss_peak_mb`
//!   (VmHWM) is that of the one run. `--obj-mode stream`: put from an
//!   `AsyncRead` source that repeats a 1 MiB pattern, get read into one
//!   128 KiB buffer (no buffer of the object's size: the streaming figures).

use std::collections::VecDeque;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, kv, stream};
use async_nats::{Client, ConnectOptions, Event, Subscriber};
use bytes::Bytes;
use futures::StreamExt;
use tokio::io::AsyncReadExt;

const CLIENT: &str = "async-nats";

// ---------------------------------------------------------------------------
// options

#[derive(Clone, Debug)]
struct Opts {
    url: String,
    scenarios: Vec<String>,
    sizes: Vec<usize>,
    n: u64,
    js_n: u64,
    k: u64,
    kv_k: u64,
    window: usize,
    par: usize,
    obj_mb: usize,
    obj_small: usize,
    warmup: u64,
    idle_timeout: Duration,
    max_secs: Duration,
    /// obj-put/obj-get data path: "memory" (the spec's: put from one
    /// buffer, get into one) or "stream" (put from a reader, get into a
    /// fixed buffer: the streaming APIs, for the peak-RSS comparison)
    obj_mode: String,
    /// internal: one obj-put/obj-get run in this process ("obj-put:big")
    obj_child: Option<String>,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            url: "nats://127.0.0.1:4222".into(),
            scenarios: "pub,pubsub,req,jspub,jspub-sync,kv,kv-par,js-consume,obj-put,obj-get"
                .split(',')
                .map(String::from)
                .collect(),
            sizes: vec![16, 1024],
            n: 1_000_000,
            js_n: 200_000,
            k: 10_000,
            kv_k: 10_000,
            window: 4096,
            par: 256,
            obj_mb: 64,
            obj_small: 1000,
            warmup: 100,
            idle_timeout: Duration::from_secs(5),
            max_secs: Duration::from_secs(120),
            obj_mode: "memory".into(),
            obj_child: None,
        }
    }
}

const USAGE: &str = "usage: async-nats-bench [--url URL]
                        [--scenarios pub,pubsub,req,jspub,jspub-sync,kv,kv-par,js-consume,obj-put,obj-get]
                        [--sizes 16,1024] [--n N] [--js-n N] [--k K] [--kv-k K]
                        [--window W] [--par P] [--obj-mb MiB] [--obj-small N]
                        [--warmup W] [--idle-timeout S] [--max-secs S]
                        [--obj-mode memory|stream]";

/// println! of a result line, ended by `rss_peak_kb`: VmHWM, the process's
/// peak resident set so far (run.sh runs one process per scenario and size,
/// so it is that run's peak).
macro_rules! println_result {
    ($($arg:tt)*) => {
        println!(
            "{} rss_peak_kb={}",
            format_args!($($arg)*),
            proc_status("VmHWM").map_or(-1, |kb| kb as i64)
        )
    };
}

fn parse_args() -> Result<Opts, String> {
    fn num<T: std::str::FromStr>(name: &str, v: &str) -> Result<T, String> {
        v.parse::<T>()
            .map_err(|_| format!("bad value for {name}: {v}"))
    }
    fn secs(name: &str, v: &str) -> Result<Duration, String> {
        let x: f64 = num(name, v)?;
        if !(x > 0.0) {
            return Err(format!("bad value for {name}: {v}"));
        }
        Ok(Duration::from_secs_f64(x))
    }
    let mut o = Opts::default();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "-h" || a == "--help" {
            println!("{USAGE}");
            std::process::exit(0);
        }
        if !a.starts_with("--") {
            return Err(format!("unexpected argument: {a}"));
        }
        let (name, val) = match a.split_once('=') {
            Some((n, v)) => (n.to_string(), v.to_string()),
            None => {
                let v = args
                    .next()
                    .ok_or_else(|| format!("missing value for {a}"))?;
                (a.clone(), v)
            }
        };
        match name.as_str() {
            "--url" => o.url = val,
            "--scenarios" => {
                o.scenarios = val
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            }
            "--sizes" => {
                o.sizes = val
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(|s| num::<usize>("--sizes", s))
                    .collect::<Result<_, _>>()?
            }
            "--n" => o.n = num(&name, &val)?,
            "--js-n" => o.js_n = num(&name, &val)?,
            "--k" => o.k = num(&name, &val)?,
            "--kv-k" => o.kv_k = num(&name, &val)?,
            "--window" => o.window = num::<usize>(&name, &val)?.max(1),
            "--par" => o.par = num::<usize>(&name, &val)?.max(1),
            "--obj-mb" => o.obj_mb = num(&name, &val)?,
            "--obj-small" => o.obj_small = num(&name, &val)?,
            "--obj-child" => o.obj_child = Some(val),
            "--obj-mode" => match val.as_str() {
                "memory" | "stream" => o.obj_mode = val,
                _ => return Err(format!("bad value for {name}: {val}")),
            },
            "--warmup" => o.warmup = num(&name, &val)?,
            "--idle-timeout" => o.idle_timeout = secs(&name, &val)?,
            "--max-secs" => o.max_secs = secs(&name, &val)?,
            _ => return Err(format!("unknown option: {name}")),
        }
    }
    Ok(o)
}

// ---------------------------------------------------------------------------
// helpers

fn payload(size: usize) -> Bytes {
    Bytes::from(vec![b'x'; size])
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect()
}

fn emit_status(scen: &str, size: usize, status: &str, err: Option<&str>) {
    match err {
        Some(e) => println!(
            "scenario={scen} client={CLIENT} size={size} n=- status={status} error={}",
            sanitize(e)
        ),
        None => println!("scenario={scen} client={CLIENT} size={size} n=- status={status}"),
    }
}

struct Lat {
    mean: f64,
    p50: f64,
    p99: f64,
}

/// nearest rank: sorted[ceil(p/100*K)-1]
fn lat_stats(mut us: Vec<f64>) -> Lat {
    if us.is_empty() {
        return Lat { mean: 0.0, p50: 0.0, p99: 0.0 };
    }
    us.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let k = us.len();
    let rank = |p: f64| {
        let idx = ((p / 100.0 * k as f64).ceil() as usize).saturating_sub(1);
        us[idx.min(k - 1)]
    };
    Lat {
        mean: us.iter().sum::<f64>() / k as f64,
        p50: rank(50.0),
        p99: rank(99.0),
    }
}

/// Asynchronous client errors seen during one scenario run.
#[derive(Default)]
struct Counters {
    async_errs: AtomicU64,
    closing: AtomicBool,
}

impl Counters {
    fn errs(&self) -> u64 {
        self.async_errs.load(Ordering::Relaxed)
    }
    fn reset(&self) {
        self.async_errs.store(0, Ordering::Relaxed)
    }
}

async fn connect(o: &Opts, c: &Arc<Counters>) -> Result<Client, async_nats::ConnectError> {
    let c = c.clone();
    ConnectOptions::new()
        .event_callback(move |ev| {
            let c = c.clone();
            async move {
                let counted = matches!(
                    ev,
                    Event::Disconnected
                        | Event::SlowConsumer(_)
                        | Event::ServerError(_)
                        | Event::ClientError(_)
                );
                if counted && !c.closing.load(Ordering::Relaxed) {
                    c.async_errs.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
        .connect(o.url.as_str())
        .await
}

/// Echo barrier: a private subject this connection subscribes to. Publishing
/// an empty message to it and receiving it back proves the server processed
/// everything this connection sent before.
struct Barrier {
    inbox: String,
    sub: Subscriber,
}

impl Barrier {
    async fn new(client: &Client) -> Result<Barrier, async_nats::Error> {
        let inbox = client.new_inbox();
        let sub = client.subscribe(inbox.clone()).await?;
        Ok(Barrier { inbox, sub })
    }

    async fn wait(&mut self, client: &Client, idle: Duration) -> Result<(), String> {
        client
            .publish(self.inbox.clone(), Bytes::new())
            .await
            .map_err(|e| format!("barrier publish: {e}"))?;
        match tokio::time::timeout(idle, self.sub.next()).await {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err("barrier: subscription closed".into()),
            Err(_) => Err("barrier: timeout".into()),
        }
    }
}

fn finish(c: &Counters) {
    c.closing.store(true, Ordering::Relaxed);
}

/// User+sys CPU time of the whole process (every thread), in ns.
fn cpu_ns() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0.0;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 * 1e9 + t.tv_usec as f64 * 1e3;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// cpu_ns_per_msg: the CPU between c0 and c1 (read where the clock starts
/// and stops) divided by the line's count (0 divides by 1).
fn cpu_per_msg(c0: f64, c1: f64, count: u64) -> f64 {
    (c1 - c0) / count.max(1) as f64
}

fn mb(count: u64, size: usize, secs: f64) -> f64 {
    count as f64 * size as f64 / 1e6 / secs
}

// ---------------------------------------------------------------------------
// pub

async fn run_pub(o: &Opts, size: usize) {
    if !PUB_NOTE.swap(true, Ordering::Relaxed) {
        println!(
            "# note client={CLIENT} pub: Client::flush() only drains the local write buffer \
             (no PING/PONG), so pub ends with the echo barrier (flush=echo)"
        );
    }
    let c = Arc::new(Counters::default());
    let client = match connect(o, &c).await {
        Ok(cl) => cl,
        Err(e) => return emit_status("pub", size, "failed", Some(&format!("connect: {e}"))),
    };
    let mut barrier = match Barrier::new(&client).await {
        Ok(b) => b,
        Err(e) => return emit_status("pub", size, "failed", Some(&format!("barrier: {e}"))),
    };
    let data = payload(size);
    let mut errors = 0u64;
    let c0 = cpu_ns();
    let t0 = Instant::now();
    for i in 0..o.n {
        if client.publish("bench.pub", data.clone()).await.is_err() {
            errors += 1;
        }
        if i & 4095 == 4095 && t0.elapsed() > o.max_secs {
            finish(&c);
            return emit_status("pub", size, "timeout", Some("max-secs"));
        }
    }
    if let Err(e) = barrier.wait(&client, o.idle_timeout).await {
        finish(&c);
        let st = if e.contains("timeout") { "timeout" } else { "failed" };
        return emit_status("pub", size, st, Some(&e));
    }
    let secs = t0.elapsed().as_secs_f64();
    let c1 = cpu_ns();
    errors += c.errs();
    finish(&c);
    println_result!(
        "scenario=pub client={CLIENT} size={size} n={} secs={secs:.6} msgs_per_s={:.1} mb_per_s={:.3} errors={errors} flush=echo cpu_ns_per_msg={:.1}",
        o.n,
        o.n as f64 / secs,
        mb(o.n, size, secs),
        cpu_per_msg(c0, c1, o.n)
    );
}

// ---------------------------------------------------------------------------
// pubsub

async fn run_pubsub(o: &Opts, size: usize) {
    let c = Arc::new(Counters::default());
    let (sc, pc) = match (connect(o, &c).await, connect(o, &c).await) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            return emit_status("pubsub", size, "failed", Some(&format!("connect: {e}")))
        }
    };
    let sub = match sc.subscribe("bench.ps").await {
        Ok(s) => s,
        Err(e) => return emit_status("pubsub", size, "failed", Some(&format!("subscribe: {e}"))),
    };
    // barrier on the subscriber connection: its SUB is registered
    let barrier_ok = match Barrier::new(&sc).await {
        Ok(mut b) => b.wait(&sc, o.idle_timeout).await,
        Err(e) => Err(e.to_string()),
    };
    if let Err(e) = barrier_ok {
        return emit_status("pubsub", size, "failed", Some(&e));
    }

    let n = o.n;
    let received = Arc::new(AtomicU64::new(0));
    let badsize = Arc::new(AtomicU64::new(0));
    // the N-th message: its time and the process CPU then
    let (done_tx, mut done_rx) = tokio::sync::oneshot::channel::<(Instant, f64)>();
    let task = {
        let received = received.clone();
        let badsize = badsize.clone();
        let mut sub = sub;
        tokio::spawn(async move {
            let mut done_tx = Some(done_tx);
            while let Some(m) = sub.next().await {
                if m.payload.len() != size {
                    badsize.fetch_add(1, Ordering::Relaxed);
                }
                let r = received.fetch_add(1, Ordering::Relaxed) + 1;
                if r == n {
                    if let Some(tx) = done_tx.take() {
                        let _ = tx.send((Instant::now(), cpu_ns()));
                    }
                }
            }
        })
    };

    let data = payload(size);
    let mut errors = 0u64;
    let c0 = cpu_ns();
    let t0 = Instant::now();
    for i in 0..n {
        if pc.publish("bench.ps", data.clone()).await.is_err() {
            errors += 1;
        }
        if i & 4095 == 4095 && t0.elapsed() > o.max_secs {
            break;
        }
    }
    if pc.flush().await.is_err() {
        errors += 1;
    }

    let mut last_seen = u64::MAX;
    let mut last_progress = Instant::now();
    let t_end;
    let c1;
    let mut done = n == 0;
    if done {
        t_end = t0;
        c1 = c0;
    } else {
        loop {
            match tokio::time::timeout(Duration::from_millis(10), &mut done_rx).await {
                Ok(Ok((t, c))) => {
                    done = true;
                    t_end = t;
                    c1 = c;
                    break;
                }
                Ok(Err(_)) => {
                    // subscriber task ended without reaching N
                    t_end = last_progress;
                    c1 = cpu_ns();
                    break;
                }
                Err(_) => {}
            }
            let r = received.load(Ordering::Relaxed);
            let now = Instant::now();
            if r != last_seen {
                last_seen = r;
                last_progress = now;
            }
            if now - last_progress > o.idle_timeout || now - t0 > o.max_secs {
                t_end = last_progress;
                c1 = cpu_ns();
                break;
            }
        }
    }
    let got = received.load(Ordering::Relaxed).min(n);
    let got = if done { n } else { got };
    let secs = t_end.saturating_duration_since(t0).as_secs_f64().max(1e-9);
    errors += c.errs() + badsize.load(Ordering::Relaxed);
    finish(&c);
    task.abort();
    println_result!(
        "scenario=pubsub client={CLIENT} size={size} n={n} received={got} lost={} secs={secs:.6} msgs_per_s={:.1} mb_per_s={:.3} errors={errors} cpu_ns_per_msg={:.1}",
        n - got,
        got as f64 / secs,
        mb(got, size, secs),
        cpu_per_msg(c0, c1, got)
    );
}

// ---------------------------------------------------------------------------
// req

async fn run_req(o: &Opts, size: usize) {
    let c = Arc::new(Counters::default());
    let (rc, qc) = match (connect(o, &c).await, connect(o, &c).await) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            return emit_status("req", size, "failed", Some(&format!("connect: {e}")))
        }
    };
    let mut sub = match rc.subscribe("bench.req").await {
        Ok(s) => s,
        Err(e) => return emit_status("req", size, "failed", Some(&format!("subscribe: {e}"))),
    };
    let barrier_ok = match Barrier::new(&rc).await {
        Ok(mut b) => b.wait(&rc, o.idle_timeout).await,
        Err(e) => Err(e.to_string()),
    };
    if let Err(e) = barrier_ok {
        return emit_status("req", size, "failed", Some(&e));
    }
    let responder = {
        let rc = rc.clone();
        tokio::spawn(async move {
            while let Some(m) = sub.next().await {
                if let Some(reply) = m.reply {
                    let _ = rc.publish(reply, m.payload).await;
                }
            }
        })
    };

    let data = payload(size);
    let idle = o.idle_timeout;
    for _ in 0..o.warmup {
        let _ = tokio::time::timeout(idle, qc.request("bench.req", data.clone())).await;
    }
    c.reset();

    let mut lat = Vec::with_capacity(o.k as usize);
    let mut errors = 0u64;
    let c0 = cpu_ns();
    let t0 = Instant::now();
    for _ in 0..o.k {
        let a = Instant::now();
        let r = tokio::time::timeout(idle, qc.request("bench.req", data.clone())).await;
        let b = Instant::now();
        match r {
            Ok(Ok(m)) => {
                if m.payload.len() != size {
                    errors += 1;
                }
                lat.push((b - a).as_secs_f64() * 1e6);
            }
            _ => errors += 1,
        }
        if b - t0 > o.max_secs {
            finish(&c);
            responder.abort();
            return emit_status("req", size, "timeout", Some("max-secs"));
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let c1 = cpu_ns();
    errors += c.errs();
    finish(&c);
    responder.abort();
    let l = lat_stats(lat);
    println_result!(
        "scenario=req client={CLIENT} size={size} n={} secs={secs:.6} msgs_per_s={:.1} mean_us={:.1} p50_us={:.1} p99_us={:.1} errors={errors} cpu_ns_per_msg={:.1}",
        o.k,
        o.k as f64 / secs,
        l.mean,
        l.p50,
        l.p99,
        cpu_per_msg(c0, c1, o.k)
    );
}

// ---------------------------------------------------------------------------
// JetStream

async fn fresh_bench_stream(js: &jetstream::Context) -> Result<(), String> {
    let _ = js.delete_stream("BENCH").await;
    js.create_stream(stream::Config {
        name: "BENCH".into(),
        subjects: vec!["bench.js.>".into()],
        storage: stream::StorageType::File,
        num_replicas: 1,
        retention: stream::RetentionPolicy::Limits,
        ..Default::default()
    })
    .await
    .map(|_| ())
    .map_err(|e| format!("create stream: {e}"))
}

/// Publishes `n` messages to bench.js.a with at most --window unacked: a
/// queue of ack futures, the oldest awaited when it is full. Returns the
/// acks, the failed publishes and the time of the last ack; stops early
/// (the rest unacked) past --max-secs.
async fn publish_windowed(
    js: &jetstream::Context,
    o: &Opts,
    n: u64,
    data: &Bytes,
    t0: Instant,
) -> (u64, u64, Instant) {
    let mut window: VecDeque<jetstream::context::PublishAckFuture> =
        VecDeque::with_capacity(o.window);
    let mut acked = 0u64;
    let mut errors = 0u64;
    let mut t_last = t0;
    let mut over = false;
    for i in 0..n {
        if window.len() >= o.window {
            let f = window.pop_front().unwrap();
            match f.await {
                Ok(_) => {
                    acked += 1;
                    t_last = Instant::now();
                }
                Err(_) => errors += 1,
            }
        }
        match js.publish("bench.js.a", data.clone()).await {
            Ok(f) => window.push_back(f),
            Err(_) => errors += 1,
        }
        if i & 1023 == 1023 && t0.elapsed() > o.max_secs {
            over = true;
            break;
        }
    }
    while let Some(f) = window.pop_front() {
        if over || t0.elapsed() > o.max_secs {
            break; // remaining are reported as unacked
        }
        match f.await {
            Ok(_) => {
                acked += 1;
                t_last = Instant::now();
            }
            Err(_) => errors += 1,
        }
    }
    (acked, errors, t_last)
}

/// The jspub context: own window of ack futures, the library's in-flight
/// limit the same value with backpressure on.
fn window_context(o: &Opts, client: &Client) -> jetstream::Context {
    jetstream::ContextBuilder::new()
        .timeout(o.idle_timeout)
        .max_ack_inflight(o.window)
        .backpressure_on_inflight(true)
        .build(client.clone())
}

async fn run_jspub(o: &Opts, size: usize) {
    let c = Arc::new(Counters::default());
    let client = match connect(o, &c).await {
        Ok(cl) => cl,
        Err(e) => return emit_status("jspub", size, "failed", Some(&format!("connect: {e}"))),
    };
    let js = window_context(o, &client);
    if let Err(e) = fresh_bench_stream(&js).await {
        return emit_status("jspub", size, "failed", Some(&e));
    }
    c.reset();

    let data = payload(size);
    let n = o.js_n;
    let c0 = cpu_ns();
    let t0 = Instant::now();
    let (acked, mut errors, t_last) = publish_windowed(&js, o, n, &data, t0).await;
    let c1 = cpu_ns(); // the clock stops at the last ack, when publish_windowed returns
    let secs = t_last.saturating_duration_since(t0).as_secs_f64().max(1e-9);
    errors += c.errs();
    finish(&c);
    println_result!(
        "scenario=jspub client={CLIENT} size={size} n={n} acked={acked} unacked={} secs={secs:.6} msgs_per_s={:.1} mb_per_s={:.3} window={} errors={errors} cpu_ns_per_msg={:.1}",
        n - acked.min(n),
        acked as f64 / secs,
        mb(acked, size, secs),
        o.window,
        cpu_per_msg(c0, c1, acked)
    );
}

async fn run_jspub_sync(o: &Opts, size: usize) {
    let c = Arc::new(Counters::default());
    let client = match connect(o, &c).await {
        Ok(cl) => cl,
        Err(e) => {
            return emit_status("jspub-sync", size, "failed", Some(&format!("connect: {e}")))
        }
    };
    let js = jetstream::ContextBuilder::new()
        .timeout(o.idle_timeout)
        .build(client.clone());
    if let Err(e) = fresh_bench_stream(&js).await {
        return emit_status("jspub-sync", size, "failed", Some(&e));
    }
    let data = payload(size);
    for _ in 0..o.warmup {
        if let Ok(f) = js.publish("bench.js.a", data.clone()).await {
            let _ = f.await;
        }
    }
    c.reset();

    let mut lat = Vec::with_capacity(o.k as usize);
    let mut errors = 0u64;
    let c0 = cpu_ns();
    let t0 = Instant::now();
    for _ in 0..o.k {
        let a = Instant::now();
        let r = match js.publish("bench.js.a", data.clone()).await {
            Ok(f) => f.await.map(|_| ()).map_err(|_| ()),
            Err(_) => Err(()),
        };
        let b = Instant::now();
        match r {
            Ok(()) => lat.push((b - a).as_secs_f64() * 1e6),
            Err(()) => errors += 1,
        }
        if b - t0 > o.max_secs {
            finish(&c);
            return emit_status("jspub-sync", size, "timeout", Some("max-secs"));
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let c1 = cpu_ns();
    errors += c.errs();
    finish(&c);
    let l = lat_stats(lat);
    println_result!(
        "scenario=jspub-sync client={CLIENT} size={size} n={} secs={secs:.6} msgs_per_s={:.1} mean_us={:.1} p50_us={:.1} p99_us={:.1} errors={errors} cpu_ns_per_msg={:.1}",
        o.k,
        o.k as f64 / secs,
        l.mean,
        l.p50,
        l.p99,
        cpu_per_msg(c0, c1, o.k)
    );
}

// ---------------------------------------------------------------------------
// kv

static KV_NOTE: AtomicBool = AtomicBool::new(false);
static PUB_NOTE: AtomicBool = AtomicBool::new(false);

/// A kv-put / kv-get line; `cpu` is the process CPU (ns) over the timed region.
fn kv_line(scen: &str, size: usize, k: u64, secs: f64, lat: Vec<f64>, errors: u64, cpu: f64) {
    let l = lat_stats(lat);
    println_result!(
        "scenario={scen} client={CLIENT} size={size} n={k} secs={secs:.6} ops_per_s={:.1} mean_us={:.1} p50_us={:.1} p99_us={:.1} errors={errors} cpu_ns_per_msg={:.1}",
        k as f64 / secs,
        l.mean,
        l.p50,
        l.p99,
        cpu_per_msg(0.0, cpu, k)
    );
}

/// Bucket BENCHKV deleted and created (history 1, file storage;
/// allow_direct is the async-nats default, printed once in a note line).
async fn fresh_kv(js: &jetstream::Context) -> Result<kv::Store, String> {
    let _ = js.delete_key_value("BENCHKV").await;
    let store = js
        .create_key_value(kv::Config {
            bucket: "BENCHKV".into(),
            history: 1,
            storage: stream::StorageType::File,
            ..Default::default()
        })
        .await
        .map_err(|e| format!("create bucket: {e}"))?;
    if !KV_NOTE.swap(true, Ordering::Relaxed) {
        let direct = match js.get_stream("KV_BENCHKV").await {
            Ok(s) => s.cached_info().config.allow_direct.to_string(),
            Err(_) => "unknown".into(),
        };
        println!("# note client={CLIENT} kv: KV_BENCHKV allow_direct={direct}");
    }
    Ok(store)
}

async fn run_kv(o: &Opts, size: usize) {
    let fail = |what: &str| {
        emit_status("kv-put", size, "failed", Some(what));
        emit_status("kv-get", size, "failed", Some(what));
    };
    let c = Arc::new(Counters::default());
    let client = match connect(o, &c).await {
        Ok(cl) => cl,
        Err(e) => return fail(&format!("connect: {e}")),
    };
    let js = jetstream::ContextBuilder::new()
        .timeout(o.idle_timeout)
        .build(client.clone());
    let store = match fresh_kv(&js).await {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };

    let data = payload(size);
    for i in 0..o.warmup {
        let key = format!("warm{i}");
        let _ = store.put(&key, data.clone()).await;
        let _ = store.get(key).await;
    }
    c.reset();

    // puts
    let k = o.kv_k;
    let mut lat = Vec::with_capacity(k as usize);
    let mut errors = 0u64;
    let mut timed_out = false;
    let c0 = cpu_ns();
    let t0 = Instant::now();
    for i in 0..k {
        let key = format!("k{i}");
        let a = Instant::now();
        let r = store.put(key, data.clone()).await;
        let b = Instant::now();
        match r {
            Ok(_) => lat.push((b - a).as_secs_f64() * 1e6),
            Err(_) => errors += 1,
        }
        if b - t0 > o.max_secs {
            timed_out = true;
            break;
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let c1 = cpu_ns();
    if timed_out {
        emit_status("kv-put", size, "timeout", Some("max-secs"));
    } else {
        kv_line("kv-put", size, k, secs, lat, errors + c.errs(), c1 - c0);
    }

    // gets
    c.reset();
    let mut lat = Vec::with_capacity(k as usize);
    let mut errors = 0u64;
    let mut timed_out = false;
    let c0 = cpu_ns();
    let t0 = Instant::now();
    for i in 0..k {
        let key = format!("k{i}");
        let a = Instant::now();
        let r = store.get(key).await;
        let b = Instant::now();
        match r {
            Ok(Some(v)) => {
                if v.len() != size {
                    errors += 1;
                }
                lat.push((b - a).as_secs_f64() * 1e6);
            }
            _ => errors += 1,
        }
        if b - t0 > o.max_secs {
            timed_out = true;
            break;
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let c1 = cpu_ns();
    if timed_out {
        emit_status("kv-get", size, "timeout", Some("max-secs"));
    } else {
        kv_line("kv-get", size, k, secs, lat, errors + c.errs(), c1 - c0);
    }
    finish(&c);
}

// ---------------------------------------------------------------------------
// kv-par

/// A numeric field of /proc/self/status ("Threads", "VmHWM" in kB).
fn proc_status(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines().find_map(|l| {
        l.strip_prefix(field)?
            .strip_prefix(':')?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    })
}

/// Highest `Threads:` of /proc/self/status, read every 2 ms by a tokio task
/// (on the runtime's workers: no OS thread of its own).
struct ThreadSampler {
    peak: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl ThreadSampler {
    fn start() -> ThreadSampler {
        let peak = Arc::new(AtomicU64::new(proc_status("Threads").unwrap_or(0)));
        let p = peak.clone();
        let task = tokio::spawn(async move {
            let mut iv = tokio::time::interval(Duration::from_millis(2));
            iv.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                iv.tick().await;
                if let Some(t) = proc_status("Threads") {
                    p.fetch_max(t, Ordering::Relaxed);
                }
            }
        });
        ThreadSampler { peak, task }
    }

    fn finish(self) -> u64 {
        self.task.abort();
        if let Some(t) = proc_status("Threads") {
            self.peak.fetch_max(t, Ordering::Relaxed);
        }
        self.peak.load(Ordering::Relaxed)
    }
}

async fn run_kv_par(o: &Opts, size: usize) {
    let c = Arc::new(Counters::default());
    let client = match connect(o, &c).await {
        Ok(cl) => cl,
        Err(e) => return emit_status("kv-par", size, "failed", Some(&format!("connect: {e}"))),
    };
    let js = jetstream::ContextBuilder::new()
        .timeout(o.idle_timeout)
        .build(client.clone());
    let store = match fresh_kv(&js).await {
        Ok(s) => s,
        Err(e) => return emit_status("kv-par", size, "failed", Some(&e)),
    };
    let data = payload(size);
    let k = o.kv_k;
    let keys: Vec<String> = (0..k).map(|i| format!("k{i}")).collect();
    for key in &keys {
        if let Err(e) = store.put(key, data.clone()).await {
            finish(&c);
            return emit_status("kv-par", size, "failed", Some(&format!("put: {e}")));
        }
    }
    c.reset();

    let sampler = ThreadSampler::start();
    let mut errors = 0u64;
    let mut timed_out = false;
    let c0 = cpu_ns();
    let t0 = Instant::now();
    {
        let mut gets = futures::stream::iter(keys.iter())
            .map(|key| store.get(key.as_str()))
            .buffer_unordered(o.par);
        while let Some(r) = gets.next().await {
            match r {
                Ok(Some(v)) if v.len() == size => {}
                _ => errors += 1,
            }
            if t0.elapsed() > o.max_secs {
                timed_out = true;
                break;
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let c1 = cpu_ns();
    let peak = sampler.finish();
    errors += c.errs();
    finish(&c);
    if timed_out {
        return emit_status("kv-par", size, "timeout", Some("max-secs"));
    }
    println_result!(
        "scenario=kv-par client={CLIENT} size={size} n={k} par={} secs={secs:.6} ops_per_s={:.1} threads_peak={peak} errors={errors} cpu_ns_per_msg={:.1}",
        o.par,
        k as f64 / secs,
        cpu_per_msg(c0, c1, k)
    );
}

// ---------------------------------------------------------------------------
// js-consume

async fn run_js_consume(o: &Opts, size: usize) {
    let fail = |what: String| emit_status("js-consume", size, "failed", Some(&what));
    let c = Arc::new(Counters::default());
    let client = match connect(o, &c).await {
        Ok(cl) => cl,
        Err(e) => return fail(format!("connect: {e}")),
    };
    let js = window_context(o, &client);
    if let Err(e) = fresh_bench_stream(&js).await {
        return fail(e);
    }
    let n = o.js_n;
    let data = payload(size);
    let (acked, _, _) = publish_windowed(&js, o, n, &data, Instant::now()).await; // untimed fill
    if acked != n {
        return fail(format!("fill: {acked} of {n} acked"));
    }
    let consumer: jetstream::consumer::PullConsumer = match js.get_stream("BENCH").await {
        Ok(st) => match st
            .create_consumer(jetstream::consumer::pull::Config {
                durable_name: Some("BENCHC".into()),
                ack_policy: jetstream::consumer::AckPolicy::Explicit,
                ..Default::default()
            })
            .await
        {
            Ok(cons) => cons,
            Err(e) => return fail(format!("consumer: {e}")),
        },
        Err(e) => return fail(format!("stream: {e}")),
    };
    c.reset();

    let mut received = 0u64;
    let mut redelivered = 0u64;
    let mut errors = 0u64;
    let c0 = cpu_ns();
    let t0 = Instant::now();
    let mut last_progress = t0;
    let mut c_end = c0; // process CPU where the clock stops
    let mut messages = match consumer.messages().await {
        Ok(m) => m,
        Err(e) => return fail(format!("messages: {e}")),
    };
    while received < n {
        let idle_left = o.idle_timeout.saturating_sub(last_progress.elapsed());
        if idle_left.is_zero() || t0.elapsed() > o.max_secs {
            break;
        }
        match tokio::time::timeout(idle_left, messages.next()).await {
            Ok(Some(Ok(m))) => {
                if m.payload.len() != size {
                    errors += 1;
                }
                if matches!(m.info(), Ok(info) if info.delivered > 1) {
                    redelivered += 1;
                }
                if m.ack().await.is_err() {
                    errors += 1;
                }
                received += 1;
                last_progress = Instant::now();
                if received == n {
                    c_end = cpu_ns();
                }
            }
            Ok(Some(Err(_))) => errors += 1, // e.g. missed heartbeats
            Ok(None) | Err(_) => break,
        }
    }
    let secs = last_progress
        .saturating_duration_since(t0)
        .as_secs_f64()
        .max(1e-9);
    if received < n {
        c_end = cpu_ns(); // gave up: the CPU up to now
    }

    // untimed: wait until the server has every ack
    let mut ack_pending: i64 = -1;
    let deadline = Instant::now() + o.idle_timeout;
    loop {
        if let Ok(info) = consumer.get_info().await {
            ack_pending = info.num_ack_pending as i64;
        }
        if ack_pending == 0 || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    drop(messages);
    errors += c.errs();
    finish(&c);
    println_result!(
        "scenario=js-consume client={CLIENT} size={size} n={n} received={received} secs={secs:.6} msgs_per_s={:.1} mb_per_s={:.3} redelivered={redelivered} ack_pending={ack_pending} errors={errors} cpu_ns_per_msg={:.1}",
        received as f64 / secs,
        mb(received, size, secs),
        cpu_per_msg(c0, c_end, received)
    );
}

// ---------------------------------------------------------------------------
// obj-put / obj-get

/// The spec's object bytes: xorshift32 (x ^= x<<13; x ^= x>>17; x ^= x<<5)
/// from seed 0x2545F491, each state written as 4 little-endian bytes,
/// truncated to n. Every harness generates the same bytes this way.
fn obj_data(n: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(n + 4);
    let mut x: u32 = 0x2545_F491;
    while b.len() < n {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        b.extend_from_slice(&x.to_le_bytes());
    }
    b.truncate(n);
    b
}

const OBJ_NOTE: &str = "data: xorshift32 seed 0x2545F491";
/// --obj-mode stream: the objects are the first MiB of obj_data repeated
/// (object i of a run starts at offset i*size of that endless stream), so
/// no buffer of the object's size is ever held; every harness does the same.
const OBJ_PATTERN: usize = 1 << 20;

/// One of the two runs: one --obj-mb MiB object, or --obj-small x 1 KiB.
struct ObjRun {
    name: &'static str,
    size: usize,
    count: usize,
}

fn obj_runs(o: &Opts) -> [ObjRun; 2] {
    [
        ObjRun { name: "big", size: o.obj_mb << 20, count: 1 },
        ObjRun { name: "small", size: 1024, count: o.obj_small },
    ]
}

fn obj_name(r: &ObjRun, i: usize) -> String {
    if r.name == "big" {
        "big".into()
    } else {
        format!("small-{i}")
    }
}

/// The bytes a run's puts read: all of them (memory mode), or the pattern
/// the stream mode repeats.
fn obj_source(o: &Opts, r: &ObjRun) -> Vec<u8> {
    let total = r.size * r.count;
    if o.obj_mode == "stream" {
        obj_data(total.clamp(4, OBJ_PATTERN))
    } else {
        obj_data(total)
    }
}

/// Stream mode's source: `left` bytes of the repeated pattern from `off`.
struct PatternReader<'a> {
    pat: &'a [u8],
    off: usize,
    left: usize,
}

impl tokio::io::AsyncRead for PatternReader<'_> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let at = self.off % self.pat.len();
        let n = self.left.min(buf.remaining()).min(self.pat.len() - at);
        buf.put_slice(&self.pat[at..at + n]);
        self.off += n;
        self.left -= n;
        std::task::Poll::Ready(Ok(()))
    }
}

/// Stores the run's objects; returns the digest of the last one and the
/// failed puts. Memory mode: `ObjectStore::put` from a slice of `data`;
/// stream mode: from a PatternReader over `data`.
async fn put_objects(
    store: &jetstream::object_store::ObjectStore,
    r: &ObjRun,
    data: &[u8],
    stream: bool,
) -> (String, u64) {
    let mut digest = String::new();
    let mut errors = 0u64;
    for i in 0..r.count {
        let res = if stream {
            let mut rd = PatternReader { pat: data, off: i * r.size, left: r.size };
            store.put(obj_name(r, i).as_str(), &mut rd).await
        } else {
            let mut chunk = &data[i * r.size..(i + 1) * r.size];
            store.put(obj_name(r, i).as_str(), &mut chunk).await
        };
        match res {
            Ok(info) => digest = info.digest.unwrap_or_default(),
            Err(_) => errors += 1,
        }
    }
    (digest, errors)
}

/// Reads the run's objects back. Memory mode: `read_to_end` into a `Vec`;
/// stream mode: `read` into one 128 KiB buffer, bytes counted. Either way
/// the `Object` reader checks the SHA-256 digest at the end.
async fn get_objects(store: &jetstream::object_store::ObjectStore, r: &ObjRun, stream: bool) -> u64 {
    let mut errors = 0u64;
    let mut buf = if stream { vec![0u8; 128 * 1024] } else { Vec::new() };
    for i in 0..r.count {
        let mut obj = match store.get(obj_name(r, i)).await {
            Ok(obj) => obj,
            Err(_) => {
                errors += 1;
                continue;
            }
        };
        let got = if stream {
            let mut got = 0usize;
            loop {
                match obj.read(&mut buf).await {
                    Ok(0) => break Some(got),
                    Ok(n) => got += n,
                    Err(_) => break None,
                }
            }
        } else {
            let mut all = Vec::new();
            obj.read_to_end(&mut all).await.ok().map(|_| all.len())
        };
        if got != Some(r.size) {
            errors += 1;
        }
    }
    errors
}

/// Bucket BENCHOBJ deleted and created; for obj-get the run's objects are
/// stored (untimed).
async fn prepare_obj(o: &Opts, scen: &str, r: &ObjRun) -> Result<(), String> {
    let c = Arc::new(Counters::default());
    let client = connect(o, &c).await.map_err(|e| format!("connect: {e}"))?;
    let js = jetstream::ContextBuilder::new()
        .timeout(o.idle_timeout)
        .build(client.clone());
    let _ = js.delete_object_store("BENCHOBJ").await;
    let store = js
        .create_object_store(jetstream::object_store::Config {
            bucket: "BENCHOBJ".into(),
            storage: stream::StorageType::File,
            ..Default::default()
        })
        .await
        .map_err(|e| format!("create bucket: {e}"))?;
    if scen == "obj-get" {
        let data = obj_source(o, r);
        let put = put_objects(&store, r, &data, o.obj_mode == "stream");
        let (digest, errors) = tokio::time::timeout(o.max_secs, put)
            .await
            .map_err(|_| "put: timeout".to_string())?;
        if errors > 0 {
            return Err(format!("{errors} puts failed"));
        }
        if r.name == "big" {
            println!("# note client={CLIENT} obj: object big digest={digest} mode={} ({OBJ_NOTE})", o.obj_mode);
        }
    }
    finish(&c);
    Ok(())
}

/// Each run: the bucket prepared here, the measured part in a child process.
async fn run_obj(o: &Opts, scen: &str) {
    for r in obj_runs(o) {
        if let Err(e) = prepare_obj(o, scen, &r).await {
            emit_status(scen, r.size, "failed", Some(&format!("prepare: {e}")));
            continue;
        }
        let out = std::env::current_exe().and_then(|exe| {
            std::process::Command::new(exe)
                .args(["--url", o.url.as_str()])
                .args(["--obj-mb", &o.obj_mb.to_string()])
                .args(["--obj-small", &o.obj_small.to_string()])
                .args(["--obj-mode", &o.obj_mode])
                .args(["--idle-timeout", &o.idle_timeout.as_secs_f64().to_string()])
                .args(["--max-secs", &o.max_secs.as_secs_f64().to_string()])
                .args(["--obj-child", &format!("{scen}:{}", r.name)])
                .output()
        });
        match out {
            Ok(out) => {
                let text = String::from_utf8_lossy(&out.stdout);
                print!("{text}");
                if !text.contains(&format!("scenario={scen} ")) {
                    let err = String::from_utf8_lossy(&out.stderr);
                    let err: String = err.trim().chars().take(200).collect();
                    emit_status(scen, r.size, "failed", Some(&format!("child: {}: {err}", out.status)));
                }
            }
            Err(e) => emit_status(scen, r.size, "failed", Some(&format!("child: {e}"))),
        }
    }
}

/// One measured run in a fresh process: "obj-put:big" etc.
async fn obj_child(o: &Opts, spec: &str) -> ExitCode {
    let (scen, which) = spec.split_once(':').unwrap_or((spec, ""));
    let runs = obj_runs(o);
    let Some(r) = runs.iter().find(|r| r.name == which) else {
        eprintln!("async-nats-bench: bad --obj-child: {spec}");
        return ExitCode::from(2);
    };
    if scen != "obj-put" && scen != "obj-get" {
        eprintln!("async-nats-bench: bad --obj-child: {spec}");
        return ExitCode::from(2);
    }
    let stream = o.obj_mode == "stream";
    let data = if scen == "obj-put" { obj_source(o, r) } else { Vec::new() };
    let c = Arc::new(Counters::default());
    let client = match connect(o, &c).await {
        Ok(cl) => cl,
        Err(e) => {
            emit_status(scen, r.size, "failed", Some(&format!("connect: {e}")));
            return ExitCode::SUCCESS;
        }
    };
    let js = jetstream::ContextBuilder::new()
        .timeout(o.idle_timeout)
        .build(client.clone());
    let store = match js.get_object_store("BENCHOBJ").await {
        Ok(s) => s,
        Err(e) => {
            emit_status(scen, r.size, "failed", Some(&format!("bucket: {e}")));
            return ExitCode::SUCCESS;
        }
    };
    let mut digest = String::new();
    let rss_start_kb = proc_status("VmRSS").unwrap_or(0);
    let t0 = Instant::now();
    let res = if scen == "obj-put" {
        tokio::time::timeout(o.max_secs, put_objects(&store, r, &data, stream))
            .await
            .map(|(d, e)| {
                digest = d;
                e
            })
    } else {
        tokio::time::timeout(o.max_secs, get_objects(&store, r, stream)).await
    };
    let secs = t0.elapsed().as_secs_f64();
    let Ok(errors) = res else {
        finish(&c);
        emit_status(scen, r.size, "timeout", Some("max-secs"));
        return ExitCode::SUCCESS;
    };
    let hwm_kb = proc_status("VmHWM").unwrap_or(0);
    if scen == "obj-put" && r.name == "big" {
        println!("# note client={CLIENT} obj: object big digest={digest} mode={} ({OBJ_NOTE})", o.obj_mode);
    }
    let errors = errors + c.errs();
    finish(&c);
    println_result!(
        "scenario={scen} client={CLIENT} size={} n={} secs={secs:.6} mb_per_s={:.3} rss_peak_mb={:.1} rss_start_mb={:.1} mode={} errors={errors}",
        r.size,
        r.count,
        mb(r.count as u64, r.size, secs),
        hwm_kb as f64 * 1024.0 / 1e6,
        rss_start_kb as f64 * 1024.0 / 1e6,
        o.obj_mode
    );
    ExitCode::SUCCESS
}

// ---------------------------------------------------------------------------
// main

/// async-nats version, read from this crate's Cargo.lock at compile time.
fn async_nats_version() -> &'static str {
    let lock = include_str!("../Cargo.lock");
    let mut it = lock.lines();
    while let Some(l) = it.next() {
        if l.trim() == "name = \"async-nats\"" {
            if let Some(v) = it.next() {
                if let Some(v) = v.trim().strip_prefix("version = \"") {
                    return v.trim_end_matches('"');
                }
            }
        }
    }
    "unknown"
}

#[tokio::main]
async fn main() -> ExitCode {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("async-nats-bench: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Some(spec) = o.obj_child.clone() {
        return obj_child(&o, &spec).await;
    }
    println!(
        "# client={CLIENT} version={} url={}",
        async_nats_version(),
        o.url
    );
    for scen in &o.scenarios {
        if scen == "obj-put" || scen == "obj-get" {
            // sizes fixed by the spec: --obj-mb MiB, then --obj-small x 1 KiB
            run_obj(&o, scen).await;
            continue;
        }
        for &size in &o.sizes {
            match scen.as_str() {
                "pub" => run_pub(&o, size).await,
                "pubsub" => run_pubsub(&o, size).await,
                "req" => run_req(&o, size).await,
                "jspub" => run_jspub(&o, size).await,
                "jspub-sync" => run_jspub_sync(&o, size).await,
                "kv" => run_kv(&o, size).await,
                "kv-par" => run_kv_par(&o, size).await,
                "js-consume" => run_js_consume(&o, size).await,
                other => emit_status(other, size, "unsupported", None),
            }
        }
    }
    ExitCode::SUCCESS
}
