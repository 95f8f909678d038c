//! The immutable blocklist: programs no config can allow. Shells and anything
//! that hands a string to a shell, privilege tools, safesh itself, and wrappers
//! safesh does not implement in-process (their inner command would escape the
//! policy).

/// Why a name is blocked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocked {
    /// A shell: it would run strings the policy never sees.
    Shell,
    /// A privilege tool.
    Privilege,
    /// safesh itself (a second safesh would not be bound by this one's session).
    Safesh,
    /// A wrapper that would run its inner command outside safesh.
    Wrapper,
    /// The dynamic loader: `ld.so PROGRAM` runs any program without executing
    /// it, past the exec allowlist.
    Loader,
}

impl Blocked {
    /// The rule name for refusals.
    pub fn rule(self) -> &'static str {
        match self {
            Blocked::Shell => "blocklist.shells",
            Blocked::Privilege => "blocklist.privilege",
            Blocked::Safesh => "blocklist.safesh",
            Blocked::Wrapper => "blocklist.wrappers",
            Blocked::Loader => "blocklist.loader",
        }
    }

    /// Why, for the message.
    pub fn reason(self) -> &'static str {
        match self {
            Blocked::Shell => "a shell would run text that safesh's policy never sees",
            Blocked::Privilege => "privilege tools are never available",
            Blocked::Safesh => "safesh cannot start itself (it would not be bound by this session)",
            Blocked::Wrapper => {
                "this wrapper would run its command outside safesh (safesh does not implement it in-process)"
            }
            Blocked::Loader => {
                "the dynamic loader runs the program named in its arguments, past the list of allowed programs"
            }
        }
    }

    /// What to do instead.
    pub fn suggestion(self, name: &str) -> String {
        match self {
            Blocked::Shell => "write the commands directly: safesh is the shell (pipes, loops, functions, here-docs all work)".to_string(),
            Blocked::Privilege => "run without elevated privileges; ask the human if root is really needed".to_string(),
            Blocked::Safesh => "run the commands directly in this script".to_string(),
            Blocked::Wrapper if name == "watch" => {
                "use a loop: `for i in 1 2 3; do CMD; sleep 2; done`, or a background job".to_string()
            }
            Blocked::Wrapper => "run the inner command directly".to_string(),
            Blocked::Loader => "run the program itself; it must be allowed in safesh.toml".to_string(),
        }
    }
}

const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "pdksh", "oksh", "loksh", "yash", "posh", "fish",
    "csh", "tcsh", "rbash", "ash", "busybox", "toybox", "elvish", "nu", "xonsh", "pwsh", "rc",
    "es", "scsh", "osh", "ysh", "oil", "brush",
];

const PRIVILEGE: &[&str] = &[
    "sudo",
    "su",
    "doas",
    "pkexec",
    "run0",
    "sudoedit",
    "runuser",
    "setpriv",
    "capsh",
    "chroot",
    "newgrp",
    "sg",
    "machinectl",
    "systemd-run",
];

/// Wrappers and tools that run a command or a shell string outside safesh's view.
const WRAPPERS: &[&str] = &[
    "watch",
    "parallel",
    "script",
    "unshare",
    "nsenter",
    "strace",
    "ltrace",
    "gdb",
    "lldb",
    "valgrind",
    "expect",
    "tmux",
    "screen",
    "at",
    "batch",
    "crontab",
    "xterm",
    "chpst",
    "start-stop-daemon",
    "firejail",
    "bwrap",
    "flatpak-spawn",
    "fakeroot",
    "proot",
    "faketime",
    "catchsegv",
    "eatmydata",
    "unbuffer",
    "rlwrap",
    "entr",
    "inotifywait",
    "sshpass",
    "xdg-open",
    "open",
    "nohup.real",
    "daemonize",
    "setarch",
    "linux32",
    "linux64",
    "prlimit",
    "numactl",
    "chrt",
    "cgexec",
    "systemd-nspawn",
    "env.real",
    "dbus-launch",
    "dbus-run-session",
];

/// Whether `name` (a base name) is on the blocklist.
pub fn check(name: &str) -> Option<Blocked> {
    let base = name.rsplit('/').next().unwrap_or(name);
    if SHELLS.contains(&base) {
        Some(Blocked::Shell)
    } else if PRIVILEGE.contains(&base) {
        Some(Blocked::Privilege)
    } else if base == "safesh" {
        Some(Blocked::Safesh)
    } else if WRAPPERS.contains(&base) {
        Some(Blocked::Wrapper)
    } else if is_loader_name(base) {
        Some(Blocked::Loader)
    } else {
        None
    }
}

/// True when `base` names a dynamic loader: `ld.so`, `ld-linux-x86-64.so.2`,
/// `ld-linux.so.2`, `ld64.so.1`, `ld-musl-x86_64.so.1`, `ld-2.31.so`.
pub fn is_loader_name(base: &str) -> bool {
    base.starts_with("ld.so")
        || base.starts_with("ld64.so")
        || (base.starts_with("ld-") && base.contains(".so"))
}
