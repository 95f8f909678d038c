//! The host contract: data read before egress, egress before any connection and
//! for every hop, refusals stop everything, responses reported before output.

use crate::server::Server;
use safesh_utils::UtilFn;
use safesh_utils::testing::{Event, RecordingHost, run_util_on};

fn tool(name: &str) -> UtilFn {
    safesh_tools_net::UTILS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .unwrap()
}

fn egress(host: &str, port: u16, method: &str, url: &str) -> Event {
    Event::Egress {
        tool: "curl".into(),
        url: url.into(),
        scheme: "http".into(),
        host: host.into(),
        port,
        method: method.into(),
    }
}

#[test]
fn egress_for_every_hop_with_method() {
    let s = Server::start();
    let h = RecordingHost::new(false);
    let d = tempfile::tempdir().unwrap();
    let url = format!("{}/redirect/302?to=/echo/next", s.base());
    let (r, out) = run_util_on(
        tool("curl"),
        &["curl", "-sL", "-d", "x", &url],
        b"",
        d.path(),
        &h,
    );
    assert_eq!(r.unwrap(), 0);
    assert_eq!(out.out(), "GET /echo/next\n");
    let next = format!("{}/echo/next", s.base());
    assert_eq!(
        h.events(),
        vec![
            egress("127.0.0.1", s.port, "POST", &url),
            Event::Received("127.0.0.1".into()),
            egress("127.0.0.1", s.port, "GET", &next),
            Event::Received("127.0.0.1".into()),
        ]
    );
}

#[test]
fn refused_egress_sends_nothing() {
    let s = Server::start();
    let h = RecordingHost::new(true);
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("secret"), b"s3cr3t").unwrap();
    let url = format!("{}/echo", s.base());
    let (r, out) = run_util_on(
        tool("curl"),
        &["curl", "-s", "-d", "@secret", "-o", "out", &url],
        b"",
        d.path(),
        &h,
    );
    assert!(r.is_err(), "the refusal must propagate");
    assert!(out.stdout.is_empty());
    assert!(!d.path().join("out").exists());
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(s.connections(), 0, "no connection at all");
    // The data file was read (labelled) before the egress decision.
    let ev = h.events();
    assert_eq!(ev.first(), Some(&Event::Read(d.path().join("secret"))));
    assert!(matches!(ev.get(1), Some(Event::Egress { method, .. }) if method == "POST"));
    assert_eq!(ev.len(), 2);
}

#[test]
fn files_read_before_egress_and_output_after_response() {
    let s = Server::start();
    let h = RecordingHost::new(false);
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f.txt"), b"form").unwrap();
    std::fs::write(d.path().join("h.txt"), b"X-H: 1\n").unwrap();
    let url = format!("{}/echo", s.base());
    let (r, _) = run_util_on(
        tool("curl"),
        &[
            "curl", "-s", "-F", "a=@f.txt", "-H", "@h.txt", "-o", "out", &url,
        ],
        b"",
        d.path(),
        &h,
    );
    assert_eq!(r.unwrap(), 0);
    let ev = h.events();
    let pos = |e: &dyn Fn(&Event) -> bool| ev.iter().position(e).unwrap();
    let read_f = pos(&|e| *e == Event::Read(d.path().join("f.txt")));
    let read_h = pos(&|e| *e == Event::Read(d.path().join("h.txt")));
    let eg = pos(&|e| matches!(e, Event::Egress { .. }));
    let rec = pos(&|e| matches!(e, Event::Received(_)));
    let wr = pos(&|e| *e == Event::Write(d.path().join("out")));
    assert!(read_f < eg && read_h < eg && eg < rec && rec < wr, "{ev:?}");
}

#[test]
fn every_url_asks() {
    let s = Server::start();
    let h = RecordingHost::new(false);
    let d = tempfile::tempdir().unwrap();
    let a = format!("{}/echo/a", s.base());
    let b = format!("http://localhost:{}/echo/b", s.port);
    let (r, out) = run_util_on(
        tool("curl"),
        &["curl", "-s", "-I", &a, &b],
        b"",
        d.path(),
        &h,
    );
    assert_eq!(r.unwrap(), 0);
    assert!(out.out().starts_with("HTTP/1.1 200 OK"));
    let eg: Vec<Event> = h
        .events()
        .into_iter()
        .filter(|e| matches!(e, Event::Egress { .. }))
        .collect();
    assert_eq!(
        eg,
        vec![
            egress("127.0.0.1", s.port, "HEAD", &a),
            egress("localhost", s.port, "HEAD", &b)
        ]
    );
}

/// A host that allows egress only to URLs without `deny` before the query, and reports
/// cancellation when asked to.
struct Gate {
    rec: RecordingHost,
    deny: &'static str,
    cancelled: bool,
}

impl safesh_utils::Host for Gate {
    fn check_read(&self, p: &std::path::Path) -> std::io::Result<()> {
        self.rec.check_read(p)
    }
    fn check_write(&self, p: &std::path::Path) -> std::io::Result<()> {
        self.rec.check_write(p)
    }
    fn run(
        &self,
        argv: &[String],
        cwd: &std::path::Path,
        i: &mut dyn std::io::Read,
        o: &mut dyn std::io::Write,
        e: &mut dyn std::io::Write,
    ) -> safesh_utils::UtilResult {
        self.rec.run(argv, cwd, i, o, e)
    }
    fn cancelled(&self) -> bool {
        self.cancelled
    }
    fn sleep(&self, d: std::time::Duration) -> Result<(), safesh_utils::Interrupt> {
        self.rec.sleep(d)
    }
    fn command_kind(&self, n: &str) -> Option<&'static str> {
        self.rec.command_kind(n)
    }
    fn egress(&self, r: &safesh_utils::Egress<'_>) -> Result<(), safesh_utils::Interrupt> {
        self.rec.egress(r)?;
        let path = r.url.split('?').next().unwrap_or("");
        if path.contains(self.deny) {
            return Err(safesh_utils::Interrupt(Box::new(std::io::Error::other(
                "denied",
            ))));
        }
        Ok(())
    }
    fn received_from(&self, h: &str) {
        self.rec.received_from(h)
    }
}

#[test]
fn refused_redirect_hop_is_not_followed() {
    let s = Server::start();
    let h = Gate {
        rec: RecordingHost::new(false),
        deny: "/echo/forbidden",
        cancelled: false,
    };
    let d = tempfile::tempdir().unwrap();
    let url = format!("{}/redirect/307?to=/echo/forbidden", s.base());
    for argv in [
        vec!["curl", "-sL", "-d", "secret", &url],
        vec!["wget", "-q", "-O-", "--post-data", "secret", &url],
    ] {
        s.take();
        let (r, out) = run_util_on(tool(argv[0]), &argv, b"", d.path(), &h);
        assert!(r.is_err(), "{argv:?}");
        assert!(out.stdout.is_empty());
        let got = s.take();
        assert_eq!(got.len(), 1, "only the first hop reached the server");
        assert!(got[0].target.starts_with("/redirect/307"));
    }
    let tools: Vec<String> = h
        .rec
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Egress { tool, .. } => Some(tool),
            _ => None,
        })
        .collect();
    assert_eq!(tools, ["curl", "curl", "wget", "wget"]);
}

#[test]
fn cancelled_transfer_stops_with_130() {
    let s = Server::start();
    let h = Gate {
        rec: RecordingHost::new(false),
        deny: "never",
        cancelled: true,
    };
    let d = tempfile::tempdir().unwrap();
    let url = format!("{}/big", s.base());
    let (r, out) = run_util_on(tool("curl"), &["curl", "-s", &url], b"", d.path(), &h);
    assert_eq!(r.unwrap(), 130);
    assert!(out.stdout.len() < 100_000);
    let (r, out) = run_util_on(
        tool("wget"),
        &["wget", "-q", "-O-", &url],
        b"",
        d.path(),
        &h,
    );
    assert_eq!(r.unwrap(), 130);
    assert!(out.stdout.len() < 100_000);
}

#[test]
fn wget_asks_again_for_the_authenticated_retry() {
    let s = Server::start();
    let h = RecordingHost::new(false);
    let d = tempfile::tempdir().unwrap();
    let url = format!("{}/auth", s.base());
    let (r, out) = run_util_on(
        tool("wget"),
        &["wget", "-q", "-O-", "--user=u", "--password=p", &url],
        b"",
        d.path(),
        &h,
    );
    assert_eq!(r.unwrap(), 0);
    assert_eq!(out.out(), "authed Basic dTpw\n");
    let n = h
        .events()
        .iter()
        .filter(|e| matches!(e, Event::Egress { tool, .. } if tool == "wget"))
        .count();
    assert_eq!(n, 2);
}

#[test]
fn wget_reads_post_file_before_egress_and_writes_after() {
    let s = Server::start();
    let h = RecordingHost::new(false);
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("body"), b"b=1").unwrap();
    let url = format!("{}/echo/saved", s.base());
    let (r, _) = run_util_on(
        tool("wget"),
        &["wget", "-q", "--post-file", "body", &url],
        b"",
        d.path(),
        &h,
    );
    assert_eq!(r.unwrap(), 0);
    assert_eq!(
        std::fs::read(d.path().join("saved")).unwrap(),
        b"POST /echo/saved\nb=1"
    );
    let ev = h.events();
    let read = ev
        .iter()
        .position(|e| *e == Event::Read(d.path().join("body")));
    let eg = ev
        .iter()
        .position(|e| matches!(e, Event::Egress { method, .. } if method == "POST"));
    let rec = ev.iter().position(|e| matches!(e, Event::Received(_)));
    let wr = ev
        .iter()
        .position(|e| *e == Event::Write(d.path().join("saved")));
    assert!(
        read < eg && eg < rec && rec < wr && read.is_some(),
        "{ev:?}"
    );
}
