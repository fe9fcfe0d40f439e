//! `natsio_server_list`: a client's server pool as it stood when read
//! (`natsio_client_server_pool`), with each server's reconnect bookkeeping.

use std::ffi::{c_char, CString};

use super::{arg, free_box, guard_value};
use crate::client::PoolServer;

/// One server of a pool listing, borrowed from its `natsio_server_list`.
pub struct natsio_server {
    url: CString,
    server: PoolServer,
}

/// A client's servers in the order they are tried. Owned by the caller,
/// freed with `natsio_server_list_free`.
pub struct natsio_server_list {
    items: Vec<natsio_server>,
}

impl natsio_server_list {
    pub(crate) fn new(servers: Vec<PoolServer>) -> Self {
        natsio_server_list {
            items: servers
                .into_iter()
                .map(|server| natsio_server {
                    url: CString::new(server.url.as_str()).unwrap_or_default(),
                    server,
                })
                .collect(),
        }
    }
}

/// How many servers the list holds (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_server_list_count(list: *const natsio_server_list) -> usize {
    super::list::count(list.as_ref().map(|l| &l.items))
}

/// Server `index` of the list, borrowed until the list is freed (NULL if
/// out of range or `list` is NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_server_list_get(
    list: *const natsio_server_list,
    index: usize,
) -> *const natsio_server {
    guard_value(std::ptr::null(), || {
        Ok(arg(list, "list")?
            .items
            .get(index)
            .map_or(std::ptr::null(), |s| s as *const natsio_server))
    })
}

/// Frees a list and its servers. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_server_list_free(list: *mut natsio_server_list) {
    free_box(list)
}

/// The server's URL as the pool holds it (configured as given; a
/// discovered one as `nats://host:port`, `tls://`, `ws://` or `wss://`),
/// borrowed from its list (NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_server_url(server: *const natsio_server) -> *const c_char {
    server.as_ref().map_or(std::ptr::null(), |s| s.url.as_ptr())
}

/// Attempts to connect to the server that failed since it was last
/// connected to (nats.go's Server.Reconnects; 0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_server_reconnects(server: *const natsio_server) -> u32 {
    server.as_ref().map_or(0, |s| s.server.reconnects)
}

/// Whether the client has been connected to the server (false for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_server_did_connect(server: *const natsio_server) -> bool {
    server.as_ref().is_some_and(|s| s.server.did_connect)
}

/// Whether the server was learned from the cluster (a server's INFO)
/// rather than configured (false for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_server_is_discovered(server: *const natsio_server) -> bool {
    server.as_ref().is_some_and(|s| s.server.discovered)
}
