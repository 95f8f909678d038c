//! Bidirectional copying with fixed-size buffers.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;

/// Size of each copy buffer (one per direction per connection).
pub(crate) const BUF: usize = 16 * 1024;

/// A socket that can be cloned and shut down: TCP or unix.
pub(crate) trait Socket: Read + Write + Send + Sized + 'static {
    fn clone_socket(&self) -> io::Result<Self>;
    fn shut(&self, how: Shutdown);
}

impl Socket for TcpStream {
    fn clone_socket(&self) -> io::Result<Self> {
        self.try_clone()
    }
    fn shut(&self, how: Shutdown) {
        let _ = self.shutdown(how);
    }
}

impl Socket for UnixStream {
    fn clone_socket(&self) -> io::Result<Self> {
        self.try_clone()
    }
    fn shut(&self, how: Shutdown) {
        let _ = self.shutdown(how);
    }
}

/// Copies until end of input or an error; returns the bytes copied.
pub(crate) fn copy(from: &mut impl Read, to: &mut impl Write) -> u64 {
    let mut buf = vec![0u8; BUF];
    let mut total = 0u64;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return total,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return total,
        };
        if to.write_all(&buf[..n]).is_err() {
            return total;
        }
        total += n as u64;
    }
}

/// How a pipe ends.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A tunnel: each direction ends on its own (half-close), as TCP would.
    Tunnel,
    /// An HTTP exchange with `Connection: close`: when the origin is done, so is the
    /// client connection.
    Exchange,
}

/// Pipes `client` and `upstream` both ways until both directions end (one thread
/// more than the caller's).
pub(crate) fn pipe<A: Socket, B: Socket>(client: A, upstream: B, mode: Mode) -> io::Result<()> {
    let mut client_r = client.clone_socket()?;
    let mut upstream_w = upstream.clone_socket()?;
    let up = std::thread::Builder::new()
        .name("egress-pipe".into())
        .stack_size(64 * 1024)
        .spawn(move || {
            copy(&mut client_r, &mut upstream_w);
            upstream_w.shut(Shutdown::Write);
        })?;
    let mut upstream_r = upstream;
    let mut client_w = client;
    copy(&mut upstream_r, &mut client_w);
    match mode {
        Mode::Tunnel => client_w.shut(Shutdown::Write),
        Mode::Exchange => {
            client_w.shut(Shutdown::Both);
            upstream_r.shut(Shutdown::Both);
        }
    }
    let _ = up.join();
    Ok(())
}
