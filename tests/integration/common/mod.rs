//! Shared helpers for the natsio integration tests (`tests/integration/`).
//!
//! Use from a test file with:
//!
//! ```ignore
//! mod common;
//! use common::TestServer;
//!
//! #[test]
//! fn connects() {
//!     let srv = TestServer::start();          // JetStream on, fresh store dir
//!     let url = srv.url();                     // "nats://127.0.0.1:PORT"
//!     // ...
//! }                                            // Drop: kill + remove temp dir
//! ```
//!
//! `TestServer` spawns `nats-server -a 127.0.0.1 -p <free port> -js -sd <tmp>/store
//! [-c <tmp>/server.conf]` (`without_jetstream`: no `-js -sd`) and waits (up to 30 s) until its log says it is
//! ready and the port accepts a TCP connect.
//! Binary: env `NATS_SERVER_BIN`, else
//! `$CARGO_MANIFEST_DIR/.tools/nats-server-2.14.3/nats-server` (installed by
//! `scripts/install-nats-server.sh`), else `nats-server` on `PATH`.
//!
//! The client port always belongs to the helper: nats-server lets `-a`/`-p` on
//! the command line override `listen`/`port` in a config file. Other listeners
//! a config declares (cluster, leafnodes, websocket, monitoring) belong to the
//! caller; pick their ports with [`free_port`].
//!
//! Only std is used, so there is no PR_SET_DEATHSIG: servers are killed by
//! `Drop` (which also runs when a test panics, as panics unwind), but a test
//! process killed with SIGKILL leaves its servers behind.
#![allow(dead_code)]

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// nats-server version installed by `scripts/install-nats-server.sh`.
pub const NATS_SERVER_VERSION: &str = "2.14.3";

/// Generous: nats-server starts in well under a second, but a loaded CI
/// machine running the sanitizer suites alongside may stall it for long.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// A nats-server child process with its own temp dir (store, config, log).
pub struct TestServer {
    child: Option<Child>,
    bin: PathBuf,
    port: u16,
    dir: PathBuf,
    store: PathBuf,
    conf: Option<PathBuf>,
    log: PathBuf,
    jetstream: bool,
}

impl TestServer {
    /// Start a server with JetStream; panics (with the log tail) on failure.
    pub fn start() -> TestServer {
        Self::try_start(None).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Start a server with extra nats-server config text (written to a file
    /// passed with `-c`); panics on failure.
    pub fn with_config(cfg: &str) -> TestServer {
        Self::try_start(Some(cfg)).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Start a server without JetStream (and with extra config text, if
    /// any); panics on failure.
    pub fn without_jetstream(cfg: Option<&str>) -> TestServer {
        Self::try_start_with(cfg, false).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Fallible start.
    pub fn try_start(cfg: Option<&str>) -> Result<TestServer, String> {
        Self::try_start_with(cfg, true)
    }

    fn try_start_with(cfg: Option<&str>, jetstream: bool) -> Result<TestServer, String> {
        let bin = server_binary()?;
        let dir = make_temp_dir()?;
        let store = dir.join("store");
        let log = dir.join("server.log");
        let mut srv = TestServer {
            child: None,
            bin,
            port: 0,
            dir,
            store,
            conf: None,
            log,
            jetstream,
        };
        fs::create_dir(&srv.store).map_err(|e| format!("create {}: {e}", srv.store.display()))?;
        if let Some(cfg) = cfg {
            let path = srv.dir.join("server.conf");
            fs::write(&path, format!("{cfg}\n"))
                .map_err(|e| format!("write {}: {e}", path.display()))?;
            srv.conf = Some(path);
        }
        let mut last_err = String::new();
        for _ in 0..5 {
            srv.port = free_port();
            match srv.spawn_and_wait() {
                Ok(()) => return Ok(srv),
                Err(e) => {
                    last_err = e;
                    // Somebody grabbed the port between probe and bind: retry.
                    if !srv.log_text().contains("address already in use") {
                        break;
                    }
                }
            }
        }
        Err(last_err) // Drop removes the temp dir
    }

    /// `nats://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:PORT`
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// JetStream store directory (`-sd`), kept across restarts.
    pub fn store_dir(&self) -> &Path {
        &self.store
    }

    /// The server's temp dir (store/, server.conf, server.log).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Server stdout+stderr, appended across restarts.
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// Pid of the running server, if any.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// True if the process is running (reaps it if it has exited).
    pub fn is_running(&mut self) -> bool {
        match self.child.as_mut().map(|c| c.try_wait()) {
            Some(Ok(None)) => true,
            Some(_) => {
                self.child = None;
                false
            }
            None => false,
        }
    }

    /// SIGKILL the server and reap it; the port and store dir are kept for
    /// [`restart`](Self::restart).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Graceful stop (SIGTERM, SIGKILL after 10 s); the handle stays usable
    /// for [`restart`](Self::restart).
    pub fn stop(&mut self) {
        let Some(mut c) = self.child.take() else {
            return;
        };
        if matches!(c.try_wait(), Ok(None)) {
            let _ = self.signal_pid(c.id(), "term");
            let deadline = Instant::now() + STOP_TIMEOUT;
            while matches!(c.try_wait(), Ok(None)) {
                if Instant::now() >= deadline {
                    let _ = c.kill();
                    break;
                }
                thread::sleep(Duration::from_millis(5));
            }
        }
        let _ = c.wait();
    }

    /// Stop the server if it is running (gracefully), then start it again on
    /// the same port, config and store dir; panics if it does not come back.
    pub fn restart(&mut self) {
        self.stop();
        if let Err(e) = self.spawn_and_wait() {
            panic!("restart on port {} failed: {e}", self.port);
        }
    }

    /// Send a signal by nats-server's name for it (`nats-server --signal
    /// <name>=<pid>`): "ldm" (lame duck mode, SIGUSR2), "reload" (SIGHUP),
    /// "reopen" (SIGUSR1), "term" (SIGTERM), "quit" (SIGINT), "stop" (SIGKILL).
    /// Lame duck: `lame_duck_duration` must be >= 30s;
    /// `lame_duck_grace_period` (default 10s) may be short.
    pub fn signal(&self, name: &str) -> Result<(), String> {
        let pid = self
            .pid()
            .ok_or_else(|| "server is not running".to_string())?;
        self.signal_pid(pid, name)
    }

    /// Entire server log so far (for diagnostics in assertions).
    pub fn log_text(&self) -> String {
        fs::read(&self.log)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    fn signal_pid(&self, pid: u32, name: &str) -> Result<(), String> {
        let out = Command::new(&self.bin)
            .arg("--signal")
            .arg(format!("{name}={pid}"))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("run {} --signal: {e}", self.bin.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "nats-server --signal {name}={pid}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    fn spawn_and_wait(&mut self) -> Result<(), String> {
        // Where this run's output starts in the log, which is appended to
        // across restarts: only a readiness line after it counts.
        let log_start = fs::metadata(&self.log).map(|m| m.len()).unwrap_or(0);
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(|e| format!("open {}: {e}", self.log.display()))?;
        let log2 = log.try_clone().map_err(|e| format!("dup log fd: {e}"))?;
        let mut cmd = Command::new(&self.bin);
        cmd.args(["-a", "127.0.0.1", "-p", &self.port.to_string()]);
        if self.jetstream {
            cmd.arg("-js").arg("-sd").arg(&self.store);
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(log2));
        if let Some(conf) = &self.conf {
            cmd.arg("-c").arg(conf);
        }
        let child = cmd
            .spawn()
            .map_err(|e| format!("spawn {}: {e}", self.bin.display()))?;
        self.child = Some(child);

        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                self.child = None;
                return Err(format!(
                    "nats-server exited during start ({status}); {}",
                    self.log_tail(30)
                ));
            }
            if self.logged_ready_since(log_start) && self.accepts_connect() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                self.kill();
                return Err(format!(
                    "nats-server not accepting on port {} after {:?}; {}",
                    self.port,
                    READY_TIMEOUT,
                    self.log_tail(30)
                ));
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// True if the log, from byte `start` on, says the server is ready:
    /// nats-server prints this once all its listeners are up. A successful TCP
    /// connect alone is no proof that our server listens: a connect to a
    /// loopback port nobody listens on can, rarely, connect to itself (TCP
    /// simultaneous open, when the kernel picks the same port as the source),
    /// and another process may hold the port while ours fails to bind.
    fn logged_ready_since(&self, start: u64) -> bool {
        let Ok(mut f) = File::open(&self.log) else {
            return false;
        };
        let mut buf = Vec::new();
        if f.seek(SeekFrom::Start(start)).is_err() || f.read_to_end(&mut buf).is_err() {
            return false;
        }
        String::from_utf8_lossy(&buf).contains("Server is ready")
    }

    /// True if a TCP connect to the client port reaches a listener: the
    /// connection is not to itself (source port == the server port, see
    /// above). (No INFO check: with `handshake_first` the server sends none.)
    fn accepts_connect(&self) -> bool {
        match TcpStream::connect_timeout(&self.addr(), Duration::from_secs(2)) {
            Ok(s) => s.local_addr().is_ok_and(|a| a.port() != self.port),
            Err(_) => false,
        }
    }

    fn log_tail(&self, lines: usize) -> String {
        let mut text = String::new();
        if let Ok(mut f) = File::open(&self.log) {
            let len = f.metadata().map(|m| m.len()).unwrap_or(0);
            let _ = f.seek(SeekFrom::Start(len.saturating_sub(8192)));
            let mut buf = Vec::new();
            let _ = f.read_to_end(&mut buf);
            text = String::from_utf8_lossy(&buf).into_owned();
        }
        let all: Vec<&str> = text.lines().collect();
        let tail = all[all.len().saturating_sub(lines)..].join("\n");
        format!("tail of {}:\n{tail}", self.log.display())
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.kill();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Three servers without JetStream, routed to each other on loopback
/// (cluster "t", server names n0..n2), each with `extra` config text.
/// Returns once they are started; a caller waits for the routes (for
/// instance until a client's INFO lists every node).
pub fn start_cluster(extra: &str) -> Vec<TestServer> {
    let route_ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    (0..3)
        .map(|i| {
            let routes: Vec<String> = (0..3)
                .filter(|&j| j != i)
                .map(|j| format!("\"nats-route://127.0.0.1:{}\"", route_ports[j]))
                .collect();
            TestServer::without_jetstream(Some(&format!(
                "server_name: \"n{i}\"\ncluster {{\n  name: \"t\"\n  listen: \"127.0.0.1:{}\"\n  routes: [{}]\n}}\n{extra}",
                route_ports[i],
                routes.join(", ")
            )))
        })
        .collect()
}

/// A currently free TCP port on 127.0.0.1 for a server's listener (client,
/// cluster, websocket, ... ports in a config), picked below the kernel's
/// ephemeral range: a port from binding port 0 lies inside it, where any
/// outgoing connection (a test's own client) may take it as its local port
/// before the server binds it. Each process walks its own stretch of
/// [10000, ephemeral low) from a pid-derived start, so ports never repeat
/// within a process; only another process's server can collide, which the
/// probe and the start retries absorb.
pub fn free_port() -> u16 {
    const BASE: u32 = 10_000;
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let low = fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u32>().ok())
        .unwrap_or(32_768);
    if low > BASE + 1000 {
        let span = low - BASE;
        let start = std::process::id().wrapping_mul(2_654_435_761);
        for _ in 0..200 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed) as u32;
            let port = (BASE + start.wrapping_add(n) % span) as u16;
            if TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok() {
                return port;
            }
        }
    }
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind 127.0.0.1:0")
}

/// Poll `pred` every 2 ms until it returns true (-> true) or `timeout` passes.
pub fn wait_until(timeout: Duration, mut pred: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if pred() {
            return true;
        }
        if Instant::now() >= deadline {
            return pred();
        }
        thread::sleep(Duration::from_millis(2));
    }
}

/// The nats-server binary: `NATS_SERVER_BIN`, else the project's pinned
/// install under `.tools/`, else `nats-server` on `PATH`.
pub fn server_binary() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("NATS_SERVER_BIN").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if is_executable(&p) {
            Ok(p)
        } else {
            Err(format!(
                "NATS_SERVER_BIN={} is not an executable file",
                p.display()
            ))
        };
    }
    let tool = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".tools")
        .join(format!("nats-server-{NATS_SERVER_VERSION}"))
        .join("nats-server");
    if is_executable(&tool) {
        return Ok(tool);
    }
    if let Some(path) = std::env::var_os("PATH") {
        for d in std::env::split_paths(&path) {
            let cand = d.join("nats-server");
            if is_executable(&cand) {
                return Ok(cand);
            }
        }
    }
    Err("nats-server not found: set NATS_SERVER_BIN or run scripts/install-nats-server.sh".into())
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

fn make_temp_dir() -> Result<PathBuf, String> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let base = std::env::temp_dir();
    for _ in 0..100 {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("natsio-rs-{}-{n}-{nanos:x}", std::process::id()));
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("create {}: {e}", dir.display())),
        }
    }
    Err(format!(
        "could not create a temp dir under {}",
        base.display()
    ))
}

/// Read one CRLF-terminated protocol line (without CRLF) from a raw socket;
/// handy for protocol-level assertions against the real server.
pub fn read_line(stream: &mut TcpStream, timeout: Duration) -> std::io::Result<String> {
    stream.set_read_timeout(Some(timeout))?;
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        if stream.read(&mut byte)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        if byte[0] == b'\n' {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(String::from_utf8_lossy(&line).into_owned());
        }
        line.push(byte[0]);
    }
}

/// Write all of `data` to a raw socket.
pub fn write_all(stream: &mut TcpStream, data: &[u8]) -> std::io::Result<()> {
    stream.write_all(data)
}
