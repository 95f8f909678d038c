//! Links the `safesh` binary for a fast start on Linux:
//! * statically, where .cargo/config.toml asks for it (x86_64 glibc: `crt-static`
//!   and `relocation-model=static`): no shared library to map, no symbol to
//!   look up (~270 of them), no relocation to apply;
//! * as a non-PIE executable otherwise too: its relocations are then resolved
//!   at link time instead of at every start (~17k of them);
//! * in an optimized build linked by rust-lld (rustc's default linker for
//!   x86_64 Linux since 1.90), with the functions a start runs
//!   (`startup.order`, written by `bench/startup_order.py`) placed together:
//!   a start then faults in a few pages of code instead of ~75 scattered over
//!   27 MB. With another linker the build is the same, those pages cost more;
//! * when linked dynamically, with gcc's unwinder linked in statically
//!   (`libgcc_eh.a`) where cc has it: libgcc_s.so is then not loaded, and its
//!   constructor's `cpuid`s (each a VM exit on a virtual machine: ~40 µs of
//!   every start) do not run.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=startup.order");
    println!("cargo:rerun-if-env-changed=SAFESH_LINK_MAP");
    let target = std::env::var("TARGET").unwrap_or_default();
    if !target.contains("linux") {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-no-pie");
    // (A static build links the unwinder statically already.)
    let static_crt = std::env::var("CARGO_CFG_TARGET_FEATURE")
        .is_ok_and(|f| f.split(',').any(|f| f == "crt-static"));
    if target.ends_with("-linux-gnu")
        && !static_crt
        && let Some(dir) = libgcc_eh_dir()
    {
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-lib=static=gcc_eh");
    }
    // The link map (which function is where), for bench/startup_order.py.
    if std::env::var_os("SAFESH_LINK_MAP").is_some()
        && let Ok(out) = std::env::var("OUT_DIR")
    {
        println!("cargo:rustc-link-arg-bins=-Wl,-Map={out}/safesh.map");
    }
    let optimized = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let order =
        Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("startup.order");
    if optimized && order.is_file() && links_with_rust_lld(&target) {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        // Names gone since the file was written are expected, not news.
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether rustc links this target with its own lld: x86_64 Linux from rustc
/// 1.90, unless the build chose another linker.
fn links_with_rust_lld(target: &str) -> bool {
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if target != "x86_64-unknown-linux-gnu"
        || flags.contains("linker")
        || std::env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_some()
    {
        return false;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = std::process::Command::new(rustc).arg("--version").output() else {
        return false;
    };
    // "rustc 1.95.0 (…)": the minor version.
    let text = String::from_utf8_lossy(&out.stdout);
    let minor = text
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.split('.').nth(1))
        .and_then(|m| m.parse::<u32>().ok());
    text.starts_with("rustc 1.") && minor.is_some_and(|m| m >= 90)
}

/// The directory of cc's `libgcc_eh.a`, when cc has one.
fn libgcc_eh_dir() -> Option<std::path::PathBuf> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = std::process::Command::new(cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .ok()?;
    // (cc prints the bare name back when it has no such file.)
    let path = std::path::PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    (path.is_absolute() && path.is_file()).then(|| path.parent().map(Path::to_path_buf))?
}
