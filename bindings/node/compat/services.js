'use strict';
// natsio/services: nats.js 3.x's @nats-io/services over this package's
// binding, whose Svcm already has nats.js's shape; this maps connections
// (a NatsConnection of natsio/transport-node) and messages (headers as
// MsgHdrs, data as Uint8Array).

const natsio = require('../index.js');

const INTERNAL = Symbol.for('natsio.compat.internal');
const core = require('./transport-node.js');

const { bindingConnection, hdrsFrom, hdrsTo, payload, decoder, QueuedIterator } = core[INTERNAL];

/** A request to an endpoint, as nats.js's ServiceMsg. */
class ServiceMsgImpl {
  constructor(m) {
    this._m = m;
    this.subject = m.subject;
    this.reply = m.reply;
    this.data = payload(m.data);
    this.headers = hdrsFrom(m.headers);
    this.sid = 0;
  }

  respond(data = core.Empty, opts) {
    return this._m.respond(data, { headers: hdrsTo(opts?.headers) });
  }

  /** As nats.js's: a reply with the error headers, which the service's
   * STATS do not count as an error (the binding's own respondError does). */
  respondError(code, description, data, opts) {
    const h = new Map(hdrsTo(opts?.headers) ?? []);
    h.set(natsio.ServiceErrorCodeHeader, [String(code)]);
    h.set(natsio.ServiceErrorHeader, [String(description)]);
    return this._m.respond(data ?? core.Empty, { headers: h });
  }

  string() {
    return decoder.decode(this.data);
  }

  json(reviver) {
    return JSON.parse(this.string(), reviver);
  }
}

function endpointOptions(opts) {
  if (typeof opts === 'function') opts = { handler: opts };
  if (!opts) return opts;
  const handler = opts.handler;
  return handler ? { ...opts, handler: (err, m) => handler(err, m && new ServiceMsgImpl(m)) } : { ...opts };
}

/** An endpoint without a handler: nats.js's iterator of ServiceMsg. */
function endpointResult(endpoint, opts) {
  if (typeof opts === 'function' || opts?.handler) return endpoint;
  const out = new QueuedIterator();
  out.stop = () => endpoint.stop();
  out._onBreak = () => endpoint.stop();
  (async () => {
    for await (const m of endpoint) out._push(new ServiceMsgImpl(m));
    out._stop();
  })();
  return out;
}

class ServiceGroupImpl {
  constructor(group) {
    this._g = group;
  }

  addEndpoint(name, opts) {
    return endpointResult(this._g.addEndpoint(name, endpointOptions(opts)), opts);
  }

  addGroup(name = '', queue) {
    return new ServiceGroupImpl(this._g.addGroup(name, queue));
  }
}

class ServiceImpl extends ServiceGroupImpl {
  constructor(service) {
    super(service);
    this._s = service;
    this.stopped = service.stopped;
  }

  get isStopped() {
    return this._s.isStopped;
  }

  info() {
    return this._s.info();
  }

  ping() {
    return this._s.ping();
  }

  stats() {
    return this._s.stats();
  }

  reset() {
    return this._s.reset();
  }

  stop(err) {
    return this._s.stop(err);
  }
}

class Svcm {
  constructor(nc) {
    this._svcm = new natsio.Svcm(bindingConnection(nc));
    this.nc = nc;
  }

  async add(config) {
    return new ServiceImpl(await this._svcm.add(config));
  }

  client(opts, prefix) {
    return this._svcm.client(opts, prefix);
  }
}

module.exports = {
  Svcm,
  ServiceError: natsio.ServiceError,
  ServiceErrorHeader: natsio.ServiceErrorHeader,
  ServiceErrorCodeHeader: natsio.ServiceErrorCodeHeader,
  ServiceVerb: natsio.ServiceVerb,
  ServiceResponseType: natsio.ServiceResponseType,
};
