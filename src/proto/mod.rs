//! The NATS client protocol: a zero-copy parser for server frames and an
//! encoder for client frames.

mod encode;
mod parser;

pub(crate) use encode::*;
pub(crate) use parser::{decimal, Parser, ServerOp};
