//! Reading and writing outside the roots, links, /proc, protected and hidden paths, exec.
use crate::common::*;

#[test]
fn read_sibling_dir() {
    let w = World::new();
    let p = w.sibling.join("secret.txt");
    let r = denied(w.py(&format!(
        "attempt('read', lambda: read({p:?}))\nattempt('list', lambda: os.listdir({:?}))",
        w.sibling
    )));
    assert!(!r.out.contains("sibling-secret"));
}

#[test]
fn read_etc_shadow() {
    let before = std::fs::read("/etc/shadow").unwrap();
    let w = World::new();
    denied(w.py(
        "attempt('shadow', lambda: leak('/etc/shadow'))\nattempt('gshadow', lambda: leak('/etc/gshadow'))\n\
         try:\n    write('/etc/shadow', b'root::0:0:::::')\nexcept OSError:\n    pass",
    ));
    // The mask is /dev/null: a write goes nowhere.
    assert_eq!(std::fs::read("/etc/shadow").unwrap(), before);
}

#[test]
fn read_home_ssh() {
    let w = World::new();
    let home = w.base.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY").unwrap();
    let mut s = w.py("h = os.environ['HOME']\nattempt('key', lambda: read(h + '/.ssh/id_ed25519'))\nattempt('list', lambda: os.listdir(h + '/.ssh'))\nattempt('root', lambda: os.listdir('/root'))");
    s.env.retain(|(k, _)| k != "HOME");
    s.env.push(("HOME".into(), home.display().to_string()));
    let r = denied(s);
    assert!(!r.out.contains("PRIVATE KEY"));
}

#[test]
fn write_sibling_dir() {
    let w = World::new();
    let p = w.sibling.join("planted");
    denied(w.py(&format!(
        "attempt('write', lambda: write({p:?}))\nattempt('mkdir', lambda: os.mkdir({p:?} + 'd'))"
    )));
    assert!(!exists(&p));
    assert!(!exists(&w.sibling.join("plantedd")));
}

#[test]
fn write_system_dirs() {
    let w = World::new();
    denied(w.py("attempt('etc', lambda: write('/etc/safesh-planted'))\nattempt('usr', lambda: write('/usr/local/bin/safesh-planted'))\nattempt('bashrc', lambda: write('/root/.bashrc', b'evil'))"));
    assert!(!exists(std::path::Path::new("/etc/safesh-planted")));
    assert!(!exists(std::path::Path::new(
        "/usr/local/bin/safesh-planted"
    )));
}

#[test]
fn write_real_tmp_lands_in_private_tmp() {
    let w = World::new();
    let name = format!("safesh-escape-{}", std::process::id());
    let r = go(w.py(&format!(
        "write('/tmp/{name}', b'hello')\nprint('WROTE', flush=True)"
    )));
    r.started();
    assert!(r.out.contains("WROTE"), "{r:?}");
    assert!(
        !exists(&std::path::Path::new("/tmp").join(&name)),
        "reached the host /tmp"
    );
    assert!(exists(&w.tmp.join(&name)), "private /tmp is the tmp_dir");
}

#[test]
fn dev_shm_is_private() {
    let w = World::new();
    let name = format!("safesh-shm-{}", std::process::id());
    let r = go(w.py(&format!(
        "write('/dev/shm/{name}')\nprint('WROTE', flush=True)"
    )));
    r.started();
    assert!(!exists(&std::path::Path::new("/dev/shm").join(&name)));
}

#[test]
fn symlink_to_outside() {
    let w = World::new();
    let code = format!(
        "os.symlink({:?}, 'link')\nos.symlink({:?}, 'dirlink')\nattempt('read', lambda: read('link'))\nattempt('write', lambda: write('dirlink/new'))",
        w.sibling.join("secret.txt"),
        w.sibling
    );
    let r = denied(w.py(&code));
    assert!(!r.out.contains("sibling-secret"));
    assert!(!exists(&w.sibling.join("new")));
}

#[test]
fn hardlink_to_outside() {
    let w = World::new();
    let code = format!(
        "attempt('link', lambda: os.link({:?}, 'hl'))\nattempt('passwd', lambda: os.link('/etc/passwd', 'pw'))\nattempt('shadow', lambda: os.link('/etc/shadow', 'sh'))",
        w.sibling.join("secret.txt")
    );
    denied(w.py(&code));
    assert!(!exists(&w.root.join("hl")));
    assert!(!exists(&w.root.join("sh")));
}

#[test]
fn proc_self_root() {
    let w = World::new();
    let p = w.sibling.join("secret.txt");
    denied(w.py(&format!("attempt('root', lambda: read('/proc/self/root' + {p:?}))\nattempt('shadow', lambda: leak('/proc/self/root/etc/shadow'))")));
}

#[test]
fn proc_of_parent() {
    let w = World::new();
    let r = denied(w.py(
        "pp = os.getppid()\nprint('PPID', pp, flush=True)\n\
         attempt('environ', lambda: read(f'/proc/{pp}/environ'))\n\
         attempt('mem', lambda: read(f'/proc/{pp}/mem'))\n\
         attempt('root', lambda: os.listdir(f'/proc/{pp}/root/root'))\n\
         attempt('cwd', lambda: os.listdir(f'/proc/{pp}/cwd'))\n\
         attempt('fd', lambda: [os.readlink(f'/proc/{pp}/fd/{n}') for n in os.listdir(f'/proc/{pp}/fd')])\n\
         attempt('fdopen', lambda: [read(f'/proc/{pp}/fd/{n}') for n in os.listdir(f'/proc/{pp}/fd')])",
    ));
    // The test process's environment must not leak through the helper's copy of it.
    assert!(!r.out.contains("CARGO"));
}

#[test]
fn no_capabilities_even_as_root() {
    let w = World::new();
    let r = go(w.py("print([l for l in read('/proc/self/status').decode().splitlines() if l.startswith(('CapEff','CapPrm','CapBnd','NoNewPrivs','Seccomp:'))])"));
    r.started();
    assert!(r.out.contains("CapEff:\\t0000000000000000"), "{r:?}");
    assert!(r.out.contains("CapBnd:\\t0000000000000000"), "{r:?}");
    assert!(r.out.contains("NoNewPrivs:\\t1"), "{r:?}");
    assert!(r.out.contains("Seccomp:\\t2"), "{r:?}");
}

#[test]
fn protected_existing_file() {
    let w = World::new();
    let cfg = w.root.join("safesh.toml");
    std::fs::write(&cfg, "original").unwrap();
    let mut s = w.py("attempt('write', lambda: write('safesh.toml', b'evil'))\n\
         attempt('unlink', lambda: os.unlink('safesh.toml'))\n\
         write('other', b'evil')\n\
         attempt('rename', lambda: os.rename('other', 'safesh.toml'))\n\
         attempt('chmod', lambda: os.chmod('safesh.toml', 0o777))");
    s.protect.push(cfg.clone());
    denied(s);
    assert_eq!(std::fs::read_to_string(&cfg).unwrap(), "original");
}

#[test]
fn protected_missing_paths() {
    let w = World::new();
    std::fs::create_dir(w.root.join(".git")).unwrap();
    let mut s = w.py(
        "attempt('config', lambda: write('.git/config', b'[core]\\n\\tfsmonitor = evil'))\n\
         attempt('toml', lambda: write('safesh.toml', b'evil'))\n\
         attempt('hooks', lambda: os.makedirs('.git/hooks', exist_ok=True) or write('.git/hooks/pre-commit', b'evil'))\n\
         attempt('deep', lambda: os.makedirs('sub/.git/hooks'))",
    );
    s.protect = vec![
        w.root.join(".git/config"),
        w.root.join("safesh.toml"),
        w.root.join(".git/hooks"),
        w.root.join("sub/.git/hooks"),
    ];
    denied(s);
    // Nothing was planted, and the placeholders are gone.
    for p in [".git/config", "safesh.toml", ".git/hooks", "sub"] {
        assert!(!exists(&w.root.join(p)), "{p} left behind");
    }
}

#[test]
fn hidden_secrets_read_as_empty() {
    let w = World::new();
    std::fs::write(w.root.join(".env"), "API_KEY=hunter2").unwrap();
    std::fs::create_dir(w.root.join("keys")).unwrap();
    std::fs::write(w.root.join("keys/id_rsa"), "PRIVATE").unwrap();
    let mut s = w.py(
        "print('ENV', read('.env'), flush=True)\nprint('KEYS', os.listdir('keys'), flush=True)\n\
         write('.env', b'x')\n\
         attempt('plant', lambda: write('keys/new', b'x'))\n\
         attempt('unlink', lambda: os.unlink('.env'))",
    );
    s.hide = vec![w.root.join(".env"), w.root.join("keys")];
    let r = denied(s);
    assert!(r.out.contains("ENV b''"), "{r:?}");
    assert!(r.out.contains("KEYS []"), "{r:?}");
    assert!(!r.out.contains("hunter2"));
    assert_eq!(
        std::fs::read_to_string(w.root.join(".env")).unwrap(),
        "API_KEY=hunter2"
    );
}

#[test]
fn exec_shell_from_python() {
    let w = World::new();
    let r = denied(w.py(
        "rc = os.system('echo PWNED')\nprint('system rc', rc, flush=True)\n\
         import subprocess\n\
         attempt('subprocess', lambda: subprocess.run(['/bin/sh', '-c', 'echo PWNED']))\n\
         attempt('execv', lambda: os.execv('/bin/sh', ['sh', '-c', 'echo PWNED']))\n\
         attempt('bash', lambda: subprocess.run(['/usr/bin/bash', '-c', 'echo PWNED']))",
    ));
    assert!(!r.out.contains("PWNED"), "{r:?}");
    assert!(!r.out.contains("system rc 0"), "{r:?}");
}

#[test]
fn exec_copied_binary_in_write_root() {
    let w = World::new();
    let r = denied(w.py(
        "import shutil, subprocess\nshutil.copy('/bin/sh', 'mysh')\nos.chmod('mysh', 0o755)\n\
         write('script.sh', b'#!/bin/sh\\necho PWNED\\n')\nos.chmod('script.sh', 0o755)\n\
         attempt('copied', lambda: subprocess.run(['./mysh', '-c', 'echo PWNED']))\n\
         attempt('script', lambda: subprocess.run(['./script.sh']))\n\
         attempt('tmp', lambda: (shutil.copy('/bin/sh', '/tmp/sh'), os.chmod('/tmp/sh', 0o755), subprocess.run(['/tmp/sh', '-c', 'echo PWNED'])))",
    ));
    assert!(!r.out.contains("PWNED"), "{r:?}");
}

#[test]
fn exec_memfd_copy_of_shell() {
    let w = World::new();
    let r = denied(w.py(
        "def run():\n    fd = os.memfd_create('x', 0)\n    os.write(fd, read('/bin/sh'))\n    os.execve(fd, ['sh', '-c', 'echo PWNED'], {})\n\
         attempt('memfd', run)\n\
         def run2():\n    fd = os.memfd_create('y', 0x10)\n    os.write(fd, read('/bin/sh'))\n    os.execve(f'/proc/self/fd/{fd}', ['sh', '-c', 'echo PWNED'], {})\n\
         attempt('memfd_exec', run2)",
    ));
    assert!(!r.out.contains("PWNED"), "{r:?}");
}

#[test]
fn env_not_inherited() {
    assert!(
        std::env::var("CARGO_MANIFEST_DIR").is_ok(),
        "the test process has the variable"
    );
    let w = World::new();
    let r = go(
        w.py("print('VAR', os.environ.get('CARGO_MANIFEST_DIR'), sorted(os.environ), flush=True)")
    );
    r.started();
    assert!(r.out.contains("VAR None"), "{r:?}");
}

#[test]
fn protected_path_outside_write_roots_needs_no_placeholder() {
    let w = World::new();
    let mut s = w.py(&format!(
        "attempt('plant', lambda: write({:?}))",
        w.sibling.join("safesh.toml")
    ));
    s.protect = vec![w.sibling.join("safesh.toml")];
    denied(s);
    assert!(!exists(&w.sibling.join("safesh.toml")));
}

#[test]
fn protected_symlink_cannot_be_replaced() {
    let w = World::new();
    let real = w.base.path().join("real.toml");
    std::fs::write(&real, "original").unwrap();
    std::os::unix::fs::symlink(&real, w.root.join("safesh.toml")).unwrap();
    let mut s = w.py("attempt('unlink', lambda: os.unlink('safesh.toml'))\n\
         write('evil', b'evil')\n\
         attempt('rename', lambda: os.rename('evil', 'safesh.toml'))");
    s.protect = vec![w.root.join("safesh.toml")];
    denied(s);
    assert!(
        std::fs::symlink_metadata(w.root.join("safesh.toml"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "original");
}

/// Not an escape, a documented limit: Landlock's EXECUTE right governs execve, not
/// mmap, so the loader (which the program itself needs) can map any readable ELF file.
/// What it starts runs inside the same walls (no capabilities, same Landlock domain and
/// seccomp filter), and cannot execve anything either.
#[test]
fn loader_trick_stays_inside_the_walls() {
    let w = World::new();
    let r = go(w.py(
        "import subprocess, glob\nld = sorted(glob.glob('/lib64/ld-linux*') or glob.glob('/lib/ld-linux*'))[0]\n\
         p = subprocess.run([ld, '/bin/sh', '-c', 'cat /etc/shadow; echo via-loader; /bin/true && echo exec-ok'], capture_output=True)\n\
         print('RC', p.returncode, p.stdout, p.stderr[:200], flush=True)",
    ));
    r.started();
    eprintln!("{r:?}");
    assert!(!r.out.contains("exec-ok"), "{r:?}");
    assert!(!r.out.contains("root:"), "{r:?}");
}
