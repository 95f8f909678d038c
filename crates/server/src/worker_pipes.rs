//! The server's ends of a sessionless worker's protocol pipes (`worker.rs`).
//!
//! Both ends are non-blocking (`O_NONBLOCK` on the server's own file
//! descriptions; the worker's ends are separate and stay blocking), so one
//! worker can be driven either way:
//!
//! - from a blocking thread, waiting with `poll` ([`Pipes::send`],
//!   [`Pipes::fill`] after [`super::worker::readable`]);
//! - from the async runtime ([`Pipes::send_async`], [`Pipes::fill_async`]):
//!   the pipes are registered with the runtime's reactor on first use and stay
//!   registered for the worker's life, so a request of a kept worker costs no
//!   blocking thread and no thread hand-off in the server.
//!
//! Frames are read into one buffer and parsed in place, a line at a time.

use crate::worker::{FromWorker, ToWorker};
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::process::{ChildStdin, ChildStdout};
use std::time::Duration;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// How long a blocking write waits for room in the pipe before it looks again.
const WRITE_WAIT: Duration = Duration::from_millis(50);
/// The read buffer's first size (it doubles for a longer frame).
const FIRST_BUF: usize = 16 * 1024;

/// One pipe end: plain until the first async use, then registered (the
/// registration owns the end and is dropped with it).
enum End<T: AsRawFd> {
    Plain(T),
    Registered(AsyncFd<T>),
    /// Only while it is being registered.
    Moving,
}

impl<T: AsRawFd> End<T> {
    fn get_mut(&mut self) -> Option<&mut T> {
        match self {
            End::Plain(t) => Some(t),
            End::Registered(a) => Some(a.get_mut()),
            End::Moving => None,
        }
    }

    fn raw(&self) -> RawFd {
        match self {
            End::Plain(t) => t.as_raw_fd(),
            End::Registered(a) => a.get_ref().as_raw_fd(),
            End::Moving => -1,
        }
    }

    /// The registered end, registering it now for `interest`.
    fn registered(&mut self, interest: Interest) -> std::io::Result<&mut AsyncFd<T>> {
        if let End::Plain(_) = self {
            // Only in a runtime (the async path runs in one); never panic outside.
            if tokio::runtime::Handle::try_current().is_err() {
                return Err(std::io::Error::other("no async runtime"));
            }
            if let End::Plain(t) = std::mem::replace(self, End::Moving) {
                // SAFETY: `t` owns its descriptor (a child's pipe end), which
                // stays open and the same until the AsyncFd is dropped with it.
                match unsafe { AsyncFd::register_with_interest(t, interest) } {
                    Ok(a) => *self = End::Registered(a),
                    Err(e) => {
                        let (t, e) = e.into_parts();
                        *self = End::Plain(t);
                        return Err(e);
                    }
                }
            }
        }
        match self {
            End::Registered(a) => Ok(a),
            _ => Err(std::io::Error::other("pipe end lost")),
        }
    }
}

/// The pipes to and from one worker, with the frames read but not yet taken.
pub(crate) struct Pipes {
    to: End<ChildStdin>,
    from: End<ChildStdout>,
    /// Bytes read: `buf[start..end]` are not taken yet; `buf[end..]` is room.
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl std::fmt::Debug for Pipes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipes")
            .field("to", &self.to.raw())
            .field("from", &self.from.raw())
            .field("pending", &(self.end - self.start))
            .finish()
    }
}

fn set_nonblocking(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: fcntl on a descriptor this process owns (the caller's pipe end).
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A frame as one line.
pub(crate) fn line_of(frame: &ToWorker) -> std::io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(frame).map_err(std::io::Error::other)?;
    line.push(b'\n');
    Ok(line)
}

/// Waits up to `d` for `fd` to take more bytes.
fn writable(fd: RawFd, d: Duration) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one valid pollfd, its count, a bounded timeout.
    let n = unsafe { libc::poll(&raw mut p, 1, d.as_millis() as libc::c_int) };
    n > 0
}

impl Pipes {
    /// The server's ends of a worker's stdin and stdout, made non-blocking.
    pub(crate) fn new(to: ChildStdin, from: ChildStdout) -> std::io::Result<Pipes> {
        set_nonblocking(to.as_raw_fd())?;
        set_nonblocking(from.as_raw_fd())?;
        Ok(Pipes {
            to: End::Plain(to),
            from: End::Plain(from),
            buf: Vec::new(),
            start: 0,
            end: 0,
        })
    }

    /// The descriptor frames come from (for `poll`).
    pub(crate) fn out_fd(&self) -> RawFd {
        self.from.raw()
    }

    /// Bytes read and not yet taken as frames.
    pub(crate) fn pending(&self) -> bool {
        self.start < self.end
    }

    /// The next whole frame read, if any: `Err` for a line that is not one.
    pub(crate) fn next_frame(&mut self) -> Option<Result<FromWorker, serde_json::Error>> {
        let rest = self.buf.get(self.start..self.end)?;
        let nl = rest.iter().position(|&b| b == b'\n')?;
        let frame = parse(&rest[..nl]);
        self.start += nl + 1;
        Some(frame)
    }

    /// One read without waiting: `Ok(0)` at the end of input, `WouldBlock`
    /// when nothing is there yet.
    pub(crate) fn fill(&mut self) -> std::io::Result<usize> {
        let from = self.from.get_mut().ok_or_else(lost)?;
        read_into(&mut self.buf, &mut self.start, &mut self.end, |room| {
            from.read(room)
        })
    }

    /// Sends `line` (one frame), waiting for room in the pipe as long as it takes.
    pub(crate) fn send_line(&mut self, mut line: &[u8]) -> std::io::Result<()> {
        let fd = self.to.raw();
        let to = self.to.get_mut().ok_or_else(lost)?;
        while !line.is_empty() {
            match to.write(line) {
                Ok(0) => return Err(ErrorKind::WriteZero.into()),
                Ok(n) => line = &line[n..],
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    writable(fd, WRITE_WAIT);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// [`Pipes::send_line`] of `frame`.
    pub(crate) fn send(&mut self, frame: &ToWorker) -> std::io::Result<()> {
        self.send_line(&line_of(frame)?)
    }

    /// Sends `line` from the async runtime: waits for room without a thread.
    pub(crate) async fn send_async(&mut self, mut line: &[u8]) -> std::io::Result<()> {
        let to = self.to.registered(Interest::WRITABLE)?;
        while !line.is_empty() {
            // Try first: a pipe with room needs no wait for readiness.
            match to.get_mut().write(line) {
                Ok(0) => return Err(ErrorKind::WriteZero.into()),
                Ok(n) => {
                    line = &line[n..];
                    continue;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if e.kind() != ErrorKind::WouldBlock => return Err(e),
                Err(_) => {}
            }
            let mut ready = to.writable_mut().await?;
            match ready.try_io(|a| a.get_mut().write(line)) {
                Ok(Ok(0)) => return Err(ErrorKind::WriteZero.into()),
                Ok(Ok(n)) => line = &line[n..],
                Ok(Err(e)) if e.kind() == ErrorKind::Interrupted => {}
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => {}
            }
        }
        Ok(())
    }

    /// One read from the async runtime, waiting for bytes without a thread:
    /// `Ok(0)` at the end of input.
    pub(crate) async fn fill_async(&mut self) -> std::io::Result<usize> {
        let from = self.from.registered(Interest::READABLE)?;
        loop {
            // A readiness left from bytes read earlier is cleared by the
            // `WouldBlock` of this read, and the wait starts again.
            let mut ready = from.readable_mut().await?;
            let (buf, start, end) = (&mut self.buf, &mut self.start, &mut self.end);
            match ready.try_io(|a| read_into(buf, start, end, |room| a.get_mut().read(room))) {
                Ok(Err(e)) if e.kind() == ErrorKind::Interrupted => {}
                Ok(r) => return r,
                Err(_would_block) => {}
            }
        }
    }
}

/// One `read` into the room after the bytes not taken (`buf[start..end]`):
/// taken bytes make room first, and the buffer doubles only when a frame
/// longer than it is still incomplete. The buffer is kept, so a round trip
/// allocates and clears nothing.
fn read_into(
    buf: &mut Vec<u8>,
    start: &mut usize,
    end: &mut usize,
    read: impl FnOnce(&mut [u8]) -> std::io::Result<usize>,
) -> std::io::Result<usize> {
    if *start == *end {
        (*start, *end) = (0, 0);
    }
    if *end == buf.len() && *start > 0 {
        buf.copy_within(*start..*end, 0);
        (*start, *end) = (0, *end - *start);
    }
    if *end == buf.len() {
        buf.resize((buf.len() * 2).max(FIRST_BUF), 0);
    }
    let n = read(&mut buf[*end..])?;
    *end += n;
    Ok(n)
}

/// How the worker writes a result frame (serde writes the tag first).
const RESULT_HEAD: &[u8] = br#"{"type":"result","result":"#;

/// One frame. A result (the frame of every request) is parsed straight into
/// its value: serde's path for a tagged enum buffers the whole value once
/// more before it is built. Any line this does not take whole (other frames,
/// another field order) goes the generic way, so both read the same frames.
fn parse(line: &[u8]) -> Result<FromWorker, serde_json::Error> {
    let body = line
        .strip_prefix(RESULT_HEAD)
        .and_then(|b| b.strip_suffix(b"}"));
    if let Some(Ok(result)) = body.map(serde_json::from_slice::<serde_json::Value>) {
        return Ok(FromWorker::Result { result });
    }
    serde_json::from_slice(line)
}

fn lost() -> std::io::Error {
    std::io::Error::other("worker pipe end lost")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    /// `cat` as the worker: it echoes the frames it is sent. Returned as two
    /// halves, the writing one and the reading one, so one test can do both
    /// at once (a frame past a pipe's buffer needs the reader going).
    fn cat() -> (std::process::Child, Pipes, Pipes) {
        let spawned = Command::new("/bin/cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn();
        let Ok(mut c) = spawned else {
            panic!("no /bin/cat")
        };
        let (Some(i), Some(o)) = (c.stdin.take(), c.stdout.take()) else {
            panic!("pipes")
        };
        let Ok(mut p) = Pipes::new(i, o) else {
            panic!("non-blocking")
        };
        let w = Pipes {
            to: std::mem::replace(&mut p.to, End::Moving),
            from: End::Moving,
            buf: Vec::new(),
            start: 0,
            end: 0,
        };
        (c, w, p)
    }

    fn lines(ns: &[usize]) -> Vec<u8> {
        let mut all = Vec::new();
        for &n in ns {
            let f = FromWorker::Result {
                result: serde_json::json!({"n": n, "pad": "x".repeat(n)}),
            };
            all.extend(serde_json::to_vec(&f).unwrap_or_default());
            all.push(b'\n');
        }
        all
    }

    fn n_of(f: Result<FromWorker, serde_json::Error>) -> Option<u64> {
        match f {
            Ok(FromWorker::Result { result }) => result["n"].as_u64(),
            _ => None,
        }
    }

    const NS: [usize; 4] = [1, 200_000, 3, 40_000];

    #[test]
    fn the_result_shortcut_reads_what_serde_reads() {
        let v = serde_json::json!({"exit_code": 0, "stdout": "a}\"b", "n": [1, {"x": null}]});
        let line =
            serde_json::to_vec(&FromWorker::Result { result: v.clone() }).unwrap_or_default();
        assert!(line.starts_with(RESULT_HEAD));
        assert!(matches!(parse(&line), Ok(FromWorker::Result { result }) if result == v));
        // Not a whole result frame: the generic way decides.
        for other in [
            &br#"{"type":"result","result":1,"extra":2}"#[..],
            br#"{"type":"result","result":}"#,
            br#"{"type":"ready","temp_dir":null}"#,
            br#"{"type":"result","result":{"a":1}"#,
        ] {
            let generic = serde_json::from_slice::<FromWorker>(other);
            assert_eq!(
                format!("{:?}", parse(other).ok()),
                format!("{:?}", generic.ok())
            );
        }
    }

    #[test]
    fn frames_come_back_whole_over_blocking_waits() {
        let (mut c, mut w, mut r) = cat();
        let all = lines(&NS);
        let writer = std::thread::spawn(move || w.send_line(&all));
        let mut got = Vec::new();
        while got.len() < NS.len() {
            if let Some(f) = r.next_frame() {
                got.push(n_of(f));
                continue;
            }
            crate::worker::readable(r.out_fd(), Duration::from_millis(50));
            match r.fill() {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => panic!("{e}"),
            }
        }
        assert!(matches!(writer.join(), Ok(Ok(()))));
        let want: Vec<Option<u64>> = NS.iter().map(|&n| Some(n as u64)).collect();
        assert_eq!(got, want);
        assert!(!r.pending());
        let _ = c.kill();
        let _ = c.wait();
    }

    #[test]
    fn frames_come_back_whole_over_async_waits() {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            panic!("runtime")
        };
        let (mut c, mut w, mut r) = cat();
        let all = lines(&NS);
        let (sent, got) = rt.block_on(async {
            let read = async {
                let mut got = Vec::new();
                while got.len() < NS.len() {
                    if let Some(f) = r.next_frame() {
                        got.push(n_of(f));
                        continue;
                    }
                    match r.fill_async().await {
                        Ok(0) => break,
                        Ok(_) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
                got
            };
            tokio::join!(w.send_async(&all), read)
        });
        assert!(sent.is_ok());
        let want: Vec<Option<u64>> = NS.iter().map(|&n| Some(n as u64)).collect();
        assert_eq!(got, want);
        let _ = c.kill();
        let _ = c.wait();
    }
}
