//! The safesh egress proxy: the only way out of a sandbox whose config allows a list
//! of hosts (`[sandbox] network = ["api.github.com", "127.0.0.1"]`).
//!
//! The sandboxed program runs in its own network namespace with nothing but loopback.
//! In there, [`forward_loopback`] listens on `127.0.0.1:<port>` and pipes every
//! connection to a unix socket on the host, where a [`Proxy`] (host side, outside the
//! namespace) reads the request, checks the host the client *named* against the
//! [`Allowlist`], resolves it (the sandbox has no DNS), connects and pipes the bytes.
//! Every attempt is logged.
//!
//! Protocols: HTTP `CONNECT` (https and any TCP), plain HTTP absolute-form requests
//! (`GET http://host/path HTTP/1.1`, rewritten to origin-form with
//! `Connection: close`), and SOCKS5 `CONNECT` by name or address. Refusals are `403`
//! with a one-line body (SOCKS: reply "not allowed by ruleset"); malformed requests
//! `400`, over-long heads `431`; an unreachable origin `502`.
//!
//! What it does not do: it does not look inside TLS, so a client allowed to
//! `api.github.com` may talk to it about anything; it trusts DNS for allowed names (a
//! name that resolves to a private address is reached there; only the name is
//! checked, never the address it resolves to); plain-HTTP requests pipelined after the
//! first on one connection go to the first request's origin (an allowed one).
//!
//! Memory is bounded: request heads up to [`MAX_HEAD`] bytes, two fixed 16 KiB buffers
//! per connection, at most [`MAX_CONNECTIONS`] connections, [`MAX_LOG_LINES`] log
//! lines.

#![deny(missing_docs)]

mod allow;
mod error;
mod forward;
mod http;
mod pipe;
mod proxy;
mod socks;

pub use allow::{Allowlist, Denial, Host};
pub use error::InvalidEntry;
pub use forward::{Forwarder, forward_loopback};
pub use http::MAX_HEAD;
pub use proxy::{AllowHook, CONNECT_TIMEOUT, HEAD_TIMEOUT, MAX_CONNECTIONS, MAX_LOG_LINES, Proxy};
