//! The Rust integration tests, one test binary: each file is a module (the
//! tests against a real nats-server share `common`). One binary instead of
//! seven saves six LTO links of the library in every release test run.
//! tests/fuzz_regressions.rs stays its own binary: it installs a counting
//! global allocator.

mod common;

mod auth;
mod fake_jetstream;
mod fake_server;
mod healing;
mod jetstream;
mod kv_codec;
mod messaging;
mod object;
mod reconnect;
mod service;
mod tls;
mod websocket;
