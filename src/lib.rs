//! libnatsio: one native NATS client core, exposed to C, C++, Go and Node
//! through a stable C ABI (see `include/natsio.h`).
//!
//! The core (everything outside `ffi`) is safe, async Rust that knows
//! nothing of C; `ffi` is the only place that does.

pub mod auth;
mod cache_line;
pub mod client;
mod client_handle;
mod clock;
pub mod completion;
mod dispatch;
pub mod error;
pub mod feed;
pub mod ffi;
#[doc(hidden)]
pub mod fuzzing;
pub mod headers;
pub mod jetstream;
pub mod kv;
mod library_thread;
pub mod log;
pub mod message;
pub mod object;
pub mod op;
pub mod options;
mod pool;
mod proto;
mod pub_ring;
pub mod runtime;
mod server_addr;
pub mod service;
mod spin;
pub mod subject;
pub mod subscription;
pub mod tls;
pub mod ws;

pub use client::ServerInfo;
pub use client::{
    Client, ClientStats, ConnState, Flow, FlowStopper, PoolServer, Replies, RequestManyOptions,
};
pub use completion::{Completion, Outcome};
pub use error::{Error, ErrorKind, Result};
pub use feed::{Delivery, FeedStats};
pub use headers::Headers;
pub use message::Message;
pub use op::Op;
pub use options::{ErrorEvent, Options, PendingPolicy};
pub use subscription::{SubOptions, SubStats, Subscription};
