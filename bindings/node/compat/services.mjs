// ES module entry point of natsio/services: the CommonJS module (services.js)
// under its named exports (one instance, so instanceof holds across
// import and require). test/compat.test.js checks the list.
import m from './services.js';

export const {
  Svcm,
  ServiceError,
  ServiceErrorHeader,
  ServiceErrorCodeHeader,
  ServiceVerb,
  ServiceResponseType,
} = m;
