//! natsio-rust-core-pub: the bench spec's `pub` scenario through the natsio
//! Rust core (`natsio::Client::publish`, then `flush`), printing the same
//! line as the C harness with client=natsio-rust-core. Compared with
//! libnatsio's pub figures it gives the cost of the C ABI boundary.
//!
//! The line has `cpu_ns_per_msg` like the other harnesses: user+sys CPU of
//! the whole process (`getrusage(RUSAGE_SELF)`) over exactly the timed
//! region, divided by the messages.
//!
//! Accepts the whole bench CLI so bench/run.sh can interleave it with the
//! other harnesses; every scenario but `pub` prints status=unsupported.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use natsio::{Client, Options};

const CLIENT: &str = "natsio-rust-core";

struct Opts {
    url: String,
    scenarios: Vec<String>,
    sizes: Vec<usize>,
    n: u64,
    idle_timeout: Duration,
    max_secs: Duration,
}

fn parse_args() -> Result<Opts, String> {
    let mut o = Opts {
        url: "nats://127.0.0.1:4222".into(),
        scenarios: vec!["pub".into()],
        sizes: vec![16, 1024],
        n: 1_000_000,
        idle_timeout: Duration::from_secs(5),
        max_secs: Duration::from_secs(120),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (name, value) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), v.to_string()),
            _ => {
                if !arg.starts_with("--") {
                    return Err(format!("unexpected argument: {arg}"));
                }
                let v = args.next().ok_or_else(|| format!("missing value for {arg}"))?;
                (arg, v)
            }
        };
        let bad = || format!("bad value for {name}: {value}");
        match name.as_str() {
            "--url" => o.url = value.clone(),
            "--scenarios" => o.scenarios = value.split(',').map(String::from).collect(),
            "--sizes" => {
                o.sizes = value
                    .split(',')
                    .map(|s| s.parse::<usize>())
                    .collect::<Result<_, _>>()
                    .map_err(|_| bad())?
            }
            "--n" => o.n = value.parse().map_err(|_| bad())?,
            "--idle-timeout" => {
                o.idle_timeout = Duration::from_secs_f64(value.parse().map_err(|_| bad())?)
            }
            "--max-secs" => o.max_secs = Duration::from_secs_f64(value.parse().map_err(|_| bad())?),
            // Options of scenarios this harness does not run.
            "--js-n" | "--k" | "--kv-k" | "--window" | "--warmup" | "--par" | "--obj-mb"
            | "--obj-small" | "--obj-mode" => {}
            _ => return Err(format!("unknown option: {name}")),
        }
    }
    Ok(o)
}

fn no_spaces(s: &str) -> String {
    s.chars().map(|c| if c.is_whitespace() { '_' } else { c }).collect()
}

fn emit_status(scen: &str, size: usize, status: &str, err: Option<&str>) {
    match err {
        Some(e) => println!(
            "scenario={scen} client={CLIENT} size={size} n=- status={status} error={}",
            no_spaces(e)
        ),
        None => println!("scenario={scen} client={CLIENT} size={size} n=- status={status}"),
    }
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

fn run_pub(o: &Opts, size: usize) {
    let payload = vec![b'x'; size];
    let client = match Client::connect(Options {
        servers: vec![o.url.clone()],
        name: Some("natsio-rust-core-pub".into()),
        ..Options::default()
    }) {
        Ok(c) => c,
        Err(e) => return emit_status("pub", size, "failed", Some(&format!("connect:{e}"))),
    };
    let mut errors = 0u64;
    let c0 = cpu_ns();
    let t0 = Instant::now();
    for i in 0..o.n {
        if client.publish("bench.pub", &payload).is_err() {
            errors += 1;
        }
        if i & 4095 == 4095 && t0.elapsed() > o.max_secs {
            client.close();
            return emit_status("pub", size, "timeout", Some("max-secs"));
        }
    }
    let flushed = client.flush(Some(o.idle_timeout));
    let secs = t0.elapsed().as_secs_f64();
    let c1 = cpu_ns();
    if let Err(e) = flushed {
        client.close();
        return emit_status("pub", size, "failed", Some(&format!("flush:{e}")));
    }
    errors += client.stats().errors;
    let n = o.n as f64;
    println!(
        "scenario=pub client={CLIENT} size={size} n={} secs={secs:.6} msgs_per_s={:.1} \
         mb_per_s={:.3} errors={errors} flush=pingpong cpu_ns_per_msg={:.1}",
        o.n,
        n / secs,
        n * size as f64 / 1e6 / secs,
        (c1 - c0) / n.max(1.0)
    );
    client.close();
}

fn main() -> ExitCode {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("natsio-rust-core-pub: {e}");
            return ExitCode::from(2);
        }
    };
    println!("# client={CLIENT} url={}", o.url);
    for scen in &o.scenarios {
        for &size in &o.sizes {
            match scen.as_str() {
                "pub" => run_pub(&o, size),
                "kv" => {
                    emit_status("kv-put", size, "unsupported", None);
                    emit_status("kv-get", size, "unsupported", None);
                }
                other => emit_status(other, size, "unsupported", None),
            }
        }
    }
    ExitCode::SUCCESS
}
