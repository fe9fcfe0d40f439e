'use strict';
// Starts a real nats-server on a free loopback port for a test file.
const net = require('node:net');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');

function serverBinary() {
  if (process.env.NATS_SERVER_BIN) return process.env.NATS_SERVER_BIN;
  const local = path.resolve(__dirname, '..', '..', '..', '.tools', 'nats-server-2.14.3', 'nats-server');
  if (fs.existsSync(local)) return local;
  throw new Error('nats-server not found: set NATS_SERVER_BIN or run scripts/install-nats-server.sh');
}

function listensOn(port) {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

// Walks this process's stretch of the ports below the ephemeral range.
let nextPort = 0;

/** A currently free loopback port for a server's listener, picked below the
 * kernel's ephemeral range: a port from listening on port 0 lies inside it,
 * where any outgoing connection (a test's own client) may take it as its
 * local port before the server binds it. Each process walks its own stretch
 * of [10000, ephemeral low) from a pid-derived start, so ports never repeat
 * within a process; only another process's server can collide, which the
 * probe absorbs. */
async function freePort() {
  const base = 10000;
  let low = 32768;
  try {
    low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || low;
  } catch {
    /* not Linux: keep the default */
  }
  if (low > base + 1000) {
    const span = low - base;
    const start = Math.imul(process.pid, 2654435761) >>> 0;
    for (let tries = 0; tries < 200; tries++) {
      const port = base + ((start + nextPort++) % span);
      if (await listensOn(port)) return port;
    }
  }
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function canConnect(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Spawns nats-server on `port` and waits until it accepts connections. */
async function launch(port, extraArgs) {
  const proc = spawn(serverBinary(), ['-a', '127.0.0.1', '-p', String(port), ...extraArgs], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr += d));
  const deadline = Date.now() + 10000;
  while (!(await canConnect(port))) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`nats-server did not start: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return proc;
}

function kill(proc) {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.kill('SIGKILL');
  });
}

/** Starts nats-server; returns {url, port, pid, stop(), restart()}. Extra
 * args are passed on; `fixedPort` (default: a free one) is the port to
 * use. restart() starts it again on the same port and args; pid is the
 * current process's (for SIGSTOP/SIGCONT). */
async function startServer(extraArgs = [], fixedPort = undefined) {
  const port = fixedPort ?? (await freePort());
  let proc = await launch(port, extraArgs);
  return {
    port,
    url: `nats://127.0.0.1:${port}`,
    get pid() {
      return proc.pid;
    },
    stop() {
      return kill(proc);
    },
    async restart() {
      await kill(proc);
      proc = await launch(port, extraArgs);
    },
  };
}

/** Starts nats-server with `config` text written to a temp file. */
async function startConfiguredServer(config) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'natsio-node-'));
  const file = path.join(dir, 'server.conf');
  fs.writeFileSync(file, config);
  const s = await startServer(['-c', file]);
  s.configFile = file; // rewritten by a test before restart()
  const stop = s.stop;
  s.stop = async () => {
    await stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return s;
}

/** Starts a JetStream hub (domain HUB) and a leaf node of it (domain
 * LEAF), each with its own store in a temp directory, as the C tests'
 * pair: {hub, leaf, stop()}. The leaf connection comes up in its own time:
 * whatever crosses it is polled for. */
async function startHubAndLeaf() {
  const store = fs.mkdtempSync(path.join(os.tmpdir(), 'natsio-node-domains-'));
  const leafPort = await freePort();
  const servers = [];
  const stop = async () => {
    for (const s of servers) await s.stop();
    fs.rmSync(store, { recursive: true, force: true });
  };
  try {
    const jetstream = (domain) => `jetstream { domain: ${domain}, store_dir: ${JSON.stringify(path.join(store, domain))} }`;
    servers.push(
      await startConfiguredServer(`server_name: hub\n${jetstream('HUB')}\nleafnodes { listen: "127.0.0.1:${leafPort}" }\n`),
    );
    servers.push(
      await startConfiguredServer(
        `server_name: leaf\n${jetstream('LEAF')}\nleafnodes { remotes: [ { url: "nats-leaf://127.0.0.1:${leafPort}" } ] }\n`,
      ),
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return { hub: servers[0], leaf: servers[1], stop };
}

/** Absolute path of tests/fixtures/<rel> in the repository. */
function fixture(rel) {
  return path.resolve(__dirname, '..', '..', '..', 'tests', 'fixtures', rel);
}

/** Runs the Node script test/fixtures/<name> with args in a child process,
 * killed after waitMs; resolves {code, stdout, stderr, exitedOnItsOwn}. */
function runNodeFixture(name, args, waitMs) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'fixtures', name), ...args]);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, waitMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, exitedOnItsOwn: !killed });
    });
  });
}

/** The state letter of each thread of process `pid` (T: stopped), read
 * after the last ')' of /proc/<pid>/task/<tid>/stat. */
function threadStates(pid) {
  const dir = `/proc/${pid}/task`;
  return fs.readdirSync(dir).map((tid) => {
    const stat = fs.readFileSync(path.join(dir, tid, 'stat'), 'utf8');
    return stat[stat.lastIndexOf(')') + 2];
  });
}

/** True once every thread of process `pid` is stopped: kill() returns
 * before a SIGSTOP takes effect, and a server thread still running would
 * answer. */
function allThreadsStopped(pid) {
  const states = threadStates(pid);
  return states.length > 0 && states.every((s) => s === 'T');
}

module.exports = { startServer, startConfiguredServer, startHubAndLeaf, fixture, freePort, serverBinary, runNodeFixture, threadStates, allThreadsStopped };
