// ES module entry point of natsio/transport-node: the CommonJS module (transport-node.js)
// under its named exports (one instance, so instanceof holds across
// import and require). test/compat.test.js checks the list.
import m from './transport-node.js';

export const {
  connect,
  headers,
  MsgHdrsImpl,
  Match,
  canonicalMIMEHeaderKey,
  Empty,
  nuid,
  Nuid,
  createInbox,
  nanos,
  millis,
  deferred,
  delay,
  errors,
  AuthorizationError,
  ClosedConnectionError,
  ConnectionError,
  DrainingConnectionError,
  InvalidArgumentError,
  InvalidOperationError,
  InvalidSubjectError,
  NoRespondersError,
  PermissionViolationError,
  ProtocolError,
  RequestError,
  TimeoutError,
  UserAuthenticationExpiredError,
  usernamePasswordAuthenticator,
  tokenAuthenticator,
  nkeyAuthenticator,
  credsAuthenticator,
  jwtAuthenticator,
} = m;
