'use strict';
// Starts a real nats-server on a free loopback port for a test file.
const net = require('node:net');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

function serverBinary() {
  if (process.env.NATS_SERVER_BIN) return process.env.NATS_SERVER_BIN;
  const local = path.resolve(__dirname, '..', '..', '..', '.tools', 'nats-server-2.14.3', 'nats-server');
  if (fs.existsSync(local)) return local;
  throw new Error('nats-server not found: set NATS_SERVER_BIN or run scripts/install-nats-server.sh');
}

function freePort() {
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

/** Starts nats-server; returns {url, port, stop()}. Extra args are passed on. */
async function startServer(extraArgs = []) {
  const port = await freePort();
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
  return {
    port,
    url: `nats://127.0.0.1:${port}`,
    stop() {
      return new Promise((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGKILL');
      });
    },
  };
}

module.exports = { startServer, freePort, serverBinary };
