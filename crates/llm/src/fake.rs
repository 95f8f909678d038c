//! A local OpenAI-compatible server for tests (feature `fake-server`): real HTTP
//! on 127.0.0.1, real chat-completions JSON, answers scripted by the test.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// One request the server received.
#[derive(Clone, Debug)]
pub struct Received {
    /// The request line's path.
    pub path: String,
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
    /// The JSON body.
    pub body: Value,
}

/// How the server answers one request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// 200 with a chat completion whose message content is this text.
    Content(String),
    /// This status and raw body.
    Raw(u16, String),
    /// Wait this long, then answer with the content.
    Slow(Duration, String),
}

type Script = Arc<dyn Fn(&Received) -> Reply + Send + Sync>;

/// A running fake server; it stops accepting when dropped (its thread ends
/// with the test process).
pub struct FakeServer {
    /// `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl FakeServer {
    /// Starts a server answering each request with `script(request)`.
    pub fn start(
        script: impl Fn(&Received) -> Reply + Send + Sync + 'static,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let script: Script = Arc::new(script);
        let log = received.clone();
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let script = script.clone();
                let log = log.clone();
                thread::spawn(move || {
                    let _ = serve(stream, &script, &log);
                });
            }
        });
        Ok(FakeServer {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            received,
        })
    }

    /// The requests received so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

/// A chat-completions reply body whose message content is `content`.
pub fn completion(content: &str) -> String {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    })
    .to_string()
}

fn serve(stream: TcpStream, script: &Script, log: &Mutex<Vec<Received>>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut length = 0usize;
    let mut authorization = None;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h == "\r\n" || h == "\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            let v = v.trim().to_string();
            match k.trim().to_ascii_lowercase().as_str() {
                "content-length" => length = v.parse().unwrap_or(0),
                "authorization" => authorization = Some(v),
                _ => {}
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let rec = Received {
        path,
        authorization,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    if let Ok(mut l) = log.lock() {
        l.push(rec.clone());
    }
    let (status, text) = match script(&rec) {
        Reply::Content(c) => (200, completion(&c)),
        Reply::Raw(s, b) => (s, b),
        Reply::Slow(d, c) => {
            thread::sleep(d);
            (200, completion(&c))
        }
    };
    let mut out = stream;
    write!(
        out,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    )?;
    out.flush()
}
