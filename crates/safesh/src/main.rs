//! The `safesh` command line.
//!
//! ```text
//! safesh -c SCRIPT [NAME [ARG…]]   run SCRIPT (streams like bash, exits with its status)
//! safesh FILE [ARG…]               run a script file
//! safesh                           the REPL when stdin is a terminal, else the script on stdin
//! safesh run -- PROGRAM [ARG…]     run one command from an argv, no shell parsing
//! safesh code -e SOURCE | FILE.ts  run TypeScript/JavaScript (code mode)
//! safesh task NAME [ARG…]          run a task from [tasks] (see `safesh tasks`)
//! safesh spec validate|plan FILE    check or plan a project spec (project.agsh.yaml)
//! safesh COMMAND …                  check, config, explain, init, trust, doctor, audit,
//!                                   approvals, approve, deny, mcp, rpc, completions
//! ```
//!
//! The whole grammar is `args.rs` (clap): `safesh --help`, `safesh COMMAND --help`.

// Start-up without std's runtime set-up (`main` below): it reads and parses
// /proc/self/maps to place a stack guard, a tenth of `safesh -c true`.
#![no_main]

mod args;
mod cli;
mod code_cmd;
// A static build links glibc's libm.a: nothing is loaded at start either way.
#[cfg(not(target_feature = "crt-static"))]
mod lazy_libm;
mod repl_cmd;
mod serve;
mod spec_cmd;
mod task_cmd;
mod task_progress;
mod tools;
mod tty_approval;
mod watch;

/// The C entry point, in place of std's `lang_start`. What that set-up did and
/// safesh relies on is done here: descriptors 0–2 are open (a program started
/// with one closed must not have its first file land there), and SIGPIPE is
/// ignored (a write to a closed pipe is an `EPIPE` error, which the
/// interpreter turns into status 141 itself). Arguments need no set-up (glibc
/// hands them to std before `main`); `process::exit` flushes stdout. Without
/// std's stack guard, a stack overflow (which the interpreter's depth limits
/// keep from happening) is a plain SIGSEGV instead of an abort with a message.
#[unsafe(no_mangle)]
extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    open_standard_fds();
    // SAFETY: setting a signal's disposition to ignore, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let code = cli::main();
    std::process::exit(code);
}

/// Opens /dev/null on any of descriptors 0, 1 and 2 that is closed.
fn open_standard_fds() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    // SAFETY: poll reads and writes the three structs we pass; open/dup2 act on
    // descriptors this process owns.
    unsafe {
        if libc::poll(fds.as_mut_ptr(), 3, 0) < 0 {
            return;
        }
        for p in fds.iter().filter(|p| p.revents & libc::POLLNVAL != 0) {
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            if null >= 0 && null != p.fd {
                libc::dup2(null, p.fd);
                libc::close(null);
            }
        }
    }
}
