//! MCP over stdio with a reply for every bad line. rmcp ignores a line that is
//! not JSON (and answers some malformed requests without their id), so the
//! client of a bad line would wait forever. Here a reader thread frames stdin
//! ([`crate::wire::read_frames`], [`crate::wire::MAX_REQUEST_BYTES`]), answers a
//! bad line itself ([`crate::wire::check_mcp`]) and passes good lines to rmcp
//! through an in-memory pipe; one writer task owns stdout, so rmcp's replies
//! and ours never interleave within a line.

use crate::wire::{Frame, check_mcp, read_frames, too_long};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::mpsc;

/// Buffer of each in-memory pipe between the framing and rmcp.
const PIPE: usize = 256 * 1024;

/// The transport rmcp serves: (what it reads, where it writes), and the task
/// that writes stdout (it ends once rmcp's output and the error replies are all
/// written). Also starts the thread and tasks that feed rmcp from stdin.
pub fn transport() -> (DuplexStream, DuplexStream, tokio::task::JoinHandle<()>) {
    let (rmcp_in, mut feed) = tokio::io::duplex(PIPE);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(PIPE);
    let (out_tx, mut out_rx) = mpsc::channel::<Vec<u8>>(64);
    let (good_tx, mut good_rx) = mpsc::channel::<Vec<u8>>(16);

    // Stdin, framed on a plain thread (a blocking read).
    let errors = out_tx.clone();
    let _ = std::thread::Builder::new()
        .name("safesh-mcp-read".into())
        .spawn(move || {
            read_frames(
                std::io::stdin().lock(),
                crate::wire::MAX_REQUEST_BYTES,
                |f| {
                    let bad = match &f {
                        Frame::TooLong(n) => Some(too_long(*n)),
                        Frame::Line(l) => check_mcp(l).err(),
                    };
                    match (bad, f) {
                        (Some(reply), _) => {
                            let mut line = reply.to_string().into_bytes();
                            line.push(b'\n');
                            errors.blocking_send(line).is_ok()
                        }
                        (None, Frame::Line(mut l)) => {
                            l.push(b'\n');
                            good_tx.blocking_send(l).is_ok()
                        }
                        (None, Frame::TooLong(_)) => true,
                    }
                },
            );
        });
    // Set when stdout is gone: rmcp's input ends too, so the server stops
    // (rmcp itself ends only when its input does).
    let gone = std::sync::Arc::new(tokio::sync::Notify::new());
    // Good lines into rmcp; stdin's end (or the client's) closes rmcp's input.
    let client_gone = gone.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                l = good_rx.recv() => match l {
                    Some(l) => {
                        if feed.write_all(&l).await.is_err() {
                            return;
                        }
                    }
                    None => break,
                },
                _ = client_gone.notified() => break,
            }
        }
        let _ = feed.shutdown().await;
    });
    // rmcp's output, line by line, to the one writer.
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(from_rmcp);
        loop {
            let mut line = Vec::new();
            match lines.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    if out_tx.send(line).await.is_err() {
                        return;
                    }
                }
            }
        }
    });
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(l) = out_rx.recv().await {
            if stdout.write_all(&l).await.is_err() || stdout.flush().await.is_err() {
                // The client is gone: end rmcp's input, so the server stops.
                gone.notify_one();
                return;
            }
        }
    });
    (rmcp_in, rmcp_out, writer)
}
