//! Process attacks: ptrace, namespaces, mounts, kernel interfaces, escaping the tree.
use std::time::Duration;

use crate::common::*;

#[test]
fn ptrace_parent() {
    let w = World::new();
    denied(w.py("pp = os.getppid()\n\
         attempt('attach', lambda: chk(libc.ptrace(16, pp, 0, 0)))\n\
         attempt('seize', lambda: chk(libc.ptrace(0x4206, pp, 0, 0)))\n\
         attempt('traceme', lambda: chk(libc.ptrace(0, 0, 0, 0)))"));
}

#[test]
fn process_vm_readv_parent() {
    let w = World::new();
    denied(w.py(
        "buf = ctypes.create_string_buffer(16)\n\
         class iov(ctypes.Structure):\n    _fields_ = [('b', ctypes.c_void_p), ('l', ctypes.c_size_t)]\n\
         l = iov(ctypes.addressof(buf), 16); r = iov(0x400000, 16)\n\
         attempt('readv', lambda: chk(libc.process_vm_readv(os.getppid(), ctypes.byref(l), 1, ctypes.byref(r), 1, 0)))",
    ));
}

#[test]
fn mount_and_unshare() {
    let w = World::new();
    denied(w.py(
        "attempt('mount', lambda: chk(libc.mount(b'none', b'/tmp', b'tmpfs', 0, None)))\n\
         attempt('bind', lambda: chk(libc.mount(b'/', b'/tmp', None, 4096, None)))\n\
         attempt('unshare_user', lambda: chk(libc.unshare(0x10000000)))\n\
         attempt('unshare_ns', lambda: chk(libc.unshare(0x00020000)))\n\
         attempt('setns', lambda: chk(libc.setns(os.open('/proc/1/ns/mnt', os.O_RDONLY), 0)))\n\
         attempt('chroot', lambda: chk(libc.chroot(b'/tmp')))",
    ));
}

#[test]
fn clone_new_namespaces() {
    let w = World::new();
    denied(w.py("import subprocess\n\
         attempt('clone_newpid', lambda: chk(libc.syscall(56, 0x20000000 | 17, 0, 0, 0, 0)))"));
}

#[test]
fn kernel_interfaces() {
    let w = World::new();
    denied(
        w.py("attempt('bpf', lambda: chk(libc.syscall(321, 0, 0, 0)))\n\
         attempt('keyctl', lambda: chk(libc.syscall(250, 0, 0, 0, 0, 0)))\n\
         attempt('add_key', lambda: chk(libc.syscall(248, b'user', b'k', b'v', 1, -2)))\n\
         attempt('perf', lambda: chk(libc.syscall(298, 0, 0, -1, -1, 0)))\n\
         attempt('io_uring', lambda: chk(libc.syscall(425, 8, ctypes.create_string_buffer(120))))\n\
         attempt('init_module', lambda: chk(libc.syscall(175, 0, 0, b'')))\n\
         attempt('kexec', lambda: chk(libc.syscall(246, 0, 0, 0, 0)))\n\
         attempt('settime', lambda: chk(libc.syscall(164, ctypes.create_string_buffer(16), 0)))\n\
         attempt('x32', lambda: chk(libc.syscall(0x40000000 | 101, 16, os.getppid(), 0, 0)))"),
    );
}

#[test]
fn terminal_injection() {
    let w = World::new();
    denied(w.py("import fcntl, termios\n\
         attempt('tiocsti', lambda: fcntl.ioctl(0, termios.TIOCSTI, b'x'))\n\
         attempt('tty', lambda: open('/dev/tty', 'rb'))\n\
         print('SID', os.getsid(0) == os.getpid(), flush=True)"));
}

#[test]
fn kill_host_process() {
    let mut victim = std::process::Command::new("/bin/sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let w = World::new();
    denied(w.py(&format!(
        "attempt('kill', lambda: os.kill({}, 9))\nattempt('kill_init', lambda: os.kill(1, 9))\nattempt('kill_all', lambda: os.kill(-1, 0) or os.kill(1, 0) or chk(-1))",
        victim.id()
    )));
    assert!(
        victim.try_wait().unwrap().is_none(),
        "the host process was killed"
    );
    victim.kill().unwrap();
    victim.wait().unwrap();
}

#[test]
fn timed_out_setsid_grandchild_dies() {
    let w = World::new();
    let late = w.root.join("late");
    let mut s = w.py(&format!(
        "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(1.5)\n        write({late:?})\n    os._exit(0)\n\
         print('DENIED forked', flush=True)\ntime.sleep(60)",
    ));
    s.limits.timeout = Duration::from_millis(700);
    s.limits.kill_grace = Duration::from_millis(200);
    let r = denied(s);
    assert!(r.outcome.timed_out, "{r:?}");
    assert!(r.outcome.duration < Duration::from_secs(5), "{r:?}");
    std::thread::sleep(Duration::from_millis(1800));
    assert!(!exists(&late), "the grandchild survived");
}

#[test]
fn background_daemon_dies_with_program() {
    let w = World::new();
    let late = w.root.join("late");
    let r = denied(w.py(&format!(
        "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(1)\n        write({late:?})\n    os._exit(0)\n\
         print('DENIED detached', flush=True)",
    )));
    assert_eq!(r.outcome.status, Some(0));
    std::thread::sleep(Duration::from_millis(1300));
    assert!(!exists(&late), "the daemon survived the program");
}
