//! Load generator for `safesh mcp --http`: N clients, each with its own MCP
//! session on one keep-alive connection (as the official SDKs keep theirs),
//! call `exec` with a trivial script in a loop for a fixed time and report
//! calls/s and latency percentiles. Standard library only, so that it builds
//! with a bare `rustc -O` (bench/mcp_http.sh does that):
//!
//!   mcp_load ADDR TOKEN [CLIENTS] [SECONDS] [SCRIPT] [WARMUP]
//!
//! Each client makes WARMUP untimed calls (default 1) after its handshake and
//! before the clock starts, so the steady state is measured (a client's first
//! `exec` starts the worker process that serves its later ones); `WARMUP=0`
//! measures the cold start too.
//!
//! With RATE (environment, calls/s over all clients) the load is open: each
//! client sends on a fixed schedule (every CLIENTS/RATE s, the clients spread
//! evenly over one period) instead of as soon as its last answer came, and
//! each latency counts from the call's scheduled time, so a late answer also
//! counts against the calls it delayed (no coordinated omission). That is
//! how a latency goal at a given throughput is measured; without RATE each
//! client's next call waits for its answer (closed load), where latency is
//! CLIENTS / throughput by Little's law.
//!
//! Speaks HTTP/1.1 itself: requests with Content-Length, responses read by
//! Content-Length or chunked transfer coding (rmcp answers a POST with a
//! short `text/event-stream`), so a connection is reused for every call.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

type Res<T> = Result<T, String>;

struct Conn {
    addr: String,
    token: String,
    session: Option<String>,
    r: BufReader<TcpStream>,
    w: TcpStream,
}

/// One HTTP response: status, the `Mcp-Session-Id` header, the body.
struct Reply {
    status: u16,
    session: Option<String>,
    body: Vec<u8>,
}

impl Conn {
    fn open(addr: &str, token: &str) -> Res<Conn> {
        let s = TcpStream::connect(addr).map_err(|e| format!("connect {addr}: {e}"))?;
        // The client side must not add its own Nagle delay to what is measured.
        s.set_nodelay(true).map_err(|e| e.to_string())?;
        let w = s.try_clone().map_err(|e| e.to_string())?;
        Ok(Conn {
            addr: addr.to_string(),
            token: token.to_string(),
            session: None,
            r: BufReader::new(s),
            w,
        })
    }

    fn post(&mut self, body: &str) -> Res<Reply> {
        let mut req = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: {}\r\n",
            self.addr,
            self.token,
            body.len()
        );
        if let Some(s) = &self.session {
            req.push_str(&format!("Mcp-Session-Id: {s}\r\n"));
        }
        req.push_str("\r\n");
        req.push_str(body);
        // One write per request: a request split in pieces would meet the
        // server's delayed ACK the same way a split response meets ours.
        self.w.write_all(req.as_bytes()).map_err(|e| e.to_string())?;
        self.read_reply()
    }

    fn line(&mut self) -> Res<String> {
        let mut l = String::new();
        let n = self.r.read_line(&mut l).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("connection closed".into());
        }
        Ok(l.trim_end_matches(['\r', '\n']).to_string())
    }

    fn read_reply(&mut self) -> Res<Reply> {
        let status_line = self.line()?;
        let status = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("bad status line {status_line:?}"))?;
        let (mut len, mut chunked, mut session) = (None, false, None);
        loop {
            let h = self.line()?;
            if h.is_empty() {
                break;
            }
            let Some((k, v)) = h.split_once(':') else { continue };
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
            match k.as_str() {
                "content-length" => len = v.parse::<usize>().ok(),
                "transfer-encoding" => chunked = v.eq_ignore_ascii_case("chunked"),
                "mcp-session-id" => session = Some(v.to_string()),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                let size_line = self.line()?;
                let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
                    .map_err(|_| format!("bad chunk size {size_line:?}"))?;
                if size == 0 {
                    // Trailers, then the empty line.
                    while !self.line()?.is_empty() {}
                    break;
                }
                let start = body.len();
                body.resize(start + size, 0);
                self.r.read_exact(&mut body[start..]).map_err(|e| e.to_string())?;
                self.line()?;
            }
        } else if let Some(n) = len {
            body.resize(n, 0);
            self.r.read_exact(&mut body).map_err(|e| e.to_string())?;
        }
        Ok(Reply { status, session, body })
    }

    /// `initialize` and `notifications/initialized`: a session of our own.
    fn handshake(&mut self) -> Res<()> {
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"mcp_load","version":"1"}}}"#;
        let r = self.post(init)?;
        if r.status != 200 {
            return Err(format!(
                "initialize: HTTP {}: {}",
                r.status,
                String::from_utf8_lossy(&r.body)
            ));
        }
        self.session = r.session;
        let r = self.post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)?;
        if r.status >= 300 {
            return Err(format!("initialized: HTTP {}", r.status));
        }
        Ok(())
    }
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: mcp_load ADDR TOKEN [CLIENTS] [SECONDS] [SCRIPT] [WARMUP]");
        std::process::exit(2);
    }
    let addr = args[1].clone();
    let token = args[2].clone();
    let clients: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(100);
    let seconds: u64 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(10);
    let script = args.get(5).cloned().unwrap_or_else(|| "true".to_string());
    let warmup: usize = args.get(6).and_then(|s| s.parse().ok()).unwrap_or(1);
    // Open load: each client's period between scheduled calls.
    let rate: Option<f64> = std::env::var("RATE").ok().and_then(|s| s.parse().ok()).filter(|r: &f64| *r > 0.0);
    let period = rate.map(|r| Duration::from_secs_f64(clients as f64 / r));
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"exec","arguments":{{"script":{}}}}}}}"#,
        json_string(&script)
    );
    let lat: Arc<Mutex<Vec<Duration>>> = Arc::new(Mutex::new(Vec::new()));
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    // Every client finishes its handshake before the clock starts.
    let ready = Arc::new(Barrier::new(clients + 1));
    let mut handles = Vec::new();
    let start_at = Arc::new(Mutex::new(None::<Instant>));
    for i in 0..clients {
        let (addr, token, call) = (addr.clone(), token.clone(), call.clone());
        let start_at = start_at.clone();
        let (lat, errors, ready) = (lat.clone(), errors.clone(), ready.clone());
        handles.push(std::thread::spawn(move || {
            let conn = Conn::open(&addr, &token)
                .and_then(|mut c| c.handshake().map(|()| c))
                .and_then(|mut c| {
                    for _ in 0..warmup {
                        let r = c.post(&call)?;
                        if r.status != 200 {
                            return Err(format!("warm-up call: HTTP {}", r.status));
                        }
                    }
                    Ok(c)
                });
            ready.wait();
            let mut c = match conn {
                Ok(c) => c,
                Err(e) => {
                    errors.lock().unwrap_or_else(|p| p.into_inner()).push(e);
                    return;
                }
            };
            let t0 = {
                let mut g = start_at.lock().unwrap_or_else(|p| p.into_inner());
                *g.get_or_insert_with(Instant::now)
            };
            let end = t0 + Duration::from_secs(seconds);
            let mut mine = Vec::new();
            // This client's first scheduled call: spread over one period.
            let mut next = period.map(|p| t0 + p.mul_f64(i as f64 / clients as f64));
            while Instant::now() < end {
                let t = match (next, period) {
                    (Some(due), Some(p)) => {
                        if due >= end {
                            break;
                        }
                        let now = Instant::now();
                        if due > now {
                            std::thread::sleep(due - now);
                        }
                        next = Some(due + p);
                        due
                    }
                    _ => Instant::now(),
                };
                match c.post(&call) {
                    Ok(r) if r.status == 200 && !r.body.windows(8).any(|w| w == b"\"error\"") => {
                        mine.push(t.elapsed());
                    }
                    Ok(r) => {
                        errors.lock().unwrap_or_else(|p| p.into_inner()).push(format!(
                            "HTTP {}: {}",
                            r.status,
                            String::from_utf8_lossy(&r.body)
                        ));
                        return;
                    }
                    Err(e) => {
                        errors.lock().unwrap_or_else(|p| p.into_inner()).push(e);
                        return;
                    }
                }
            }
            lat.lock().unwrap_or_else(|p| p.into_inner()).extend(mine);
        }));
    }
    ready.wait();
    let t0 = Instant::now();
    for h in handles {
        let _ = h.join();
    }
    let wall = t0.elapsed().as_secs_f64();
    let mut lat = std::mem::take(&mut *lat.lock().unwrap_or_else(|p| p.into_inner()));
    lat.sort();
    let errors = errors.lock().unwrap_or_else(|p| p.into_inner());
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    let offered = rate.map_or_else(|| "closed".to_string(), |r| format!("{r:.0}/s"));
    println!(
        "clients {clients}  warm-up {warmup}  load {offered}  calls {}  errors {}  {:.0} calls/s  p50 {:.2} ms  p90 {:.2} ms  p99 {:.2} ms  max {:.2} ms",
        lat.len(),
        errors.len(),
        lat.len() as f64 / wall,
        pct(0.50),
        pct(0.90),
        pct(0.99),
        lat.last().map_or(0.0, |d| d.as_secs_f64() * 1000.0),
    );
    if let Some(e) = errors.first() {
        eprintln!("first error: {e}");
    }
}
