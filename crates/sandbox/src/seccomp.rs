//! The seccomp filters, compiled in the parent and installed by the child right before
//! `execve`.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::Network;

/// The compiled filters, installed in order (each is a `sock_filter` array).
pub(crate) struct Filters {
    pub(crate) programs: Vec<BpfProgram>,
}

const TIOCSTI: u64 = 0x5412;
const TIOCLINUX: u64 = 0x541C;

/// `clone` flags that create namespaces.
const CLONE_NEW: [u64; 7] = [
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    libc::CLONE_NEWCGROUP as u64,
];

fn cond(
    arg: u8,
    len: SeccompCmpArgLen,
    op: SeccompCmpOp,
    v: u64,
) -> Result<SeccompCondition, String> {
    SeccompCondition::new(arg, len, op, v).map_err(|e| e.to_string())
}

fn rule(c: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(c).map_err(|e| e.to_string())
}

/// System calls denied outright (EPERM).
fn denied_syscalls() -> Vec<i64> {
    let mut v = vec![
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_mount_setattr,
        libc::SYS_userfaultfd,
        libc::SYS_pidfd_getfd,
        libc::SYS_process_madvise,
        libc::SYS_acct,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_reboot,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
        libc::SYS_clock_adjtime,
        libc::SYS_adjtimex,
        libc::SYS_quotactl,
        libc::SYS_syslog,
        libc::SYS_vhangup,
        libc::SYS_sethostname,
        libc::SYS_setdomainname,
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([libc::SYS_iopl, libc::SYS_ioperm, libc::SYS_uselib]);
    v
}

/// The filters for a network mode (compiled once per mode, then copied).
pub(crate) fn build(network: &Network) -> Result<Filters, String> {
    use std::sync::Mutex;
    static CACHE: Mutex<[Option<Vec<BpfProgram>>; 3]> = Mutex::new([None, None, None]);
    let slot = match network {
        Network::Off => 0,
        Network::On => 1,
        Network::Hosts(_) => 2,
    };
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = &cache[slot] {
        return Ok(Filters {
            programs: p.clone(),
        });
    }
    let f = compile(network)?;
    cache[slot] = Some(f.programs.clone());
    Ok(f)
}

fn compile(network: &Network) -> Result<Filters, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in denied_syscalls() {
        rules.insert(nr, vec![]);
    }
    // clone with any CLONE_NEW* flag (one rule per flag: rules are OR'd).
    let mut clone_rules = Vec::new();
    for f in CLONE_NEW {
        clone_rules.push(rule(vec![cond(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(f),
            f,
        )?])?);
    }
    rules.insert(libc::SYS_clone, clone_rules);
    // Terminal injection.
    rules.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Eq,
                TIOCSTI,
            )?])?,
            rule(vec![cond(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Eq,
                TIOCLINUX,
            )?])?,
        ],
    );
    // Sockets: unix sockets are never created with socket() (socketpair stays), so a
    // host unix socket (docker, dbus, agents) cannot be connected to; with network off
    // no socket at all; through the proxy only IPv4/IPv6.
    match network {
        Network::Off => {
            rules.insert(libc::SYS_socket, vec![]);
        }
        Network::Hosts(_) => {
            rules.insert(
                libc::SYS_socket,
                vec![rule(vec![
                    cond(
                        0,
                        SeccompCmpArgLen::Dword,
                        SeccompCmpOp::Ne,
                        libc::AF_INET as u64,
                    )?,
                    cond(
                        0,
                        SeccompCmpArgLen::Dword,
                        SeccompCmpOp::Ne,
                        libc::AF_INET6 as u64,
                    )?,
                ])?],
            );
        }
        Network::On => {
            rules.insert(
                libc::SYS_socket,
                vec![rule(vec![cond(
                    0,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::Eq,
                    libc::AF_UNIX as u64,
                )?])?],
            );
        }
    }
    let main = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let main: BpfProgram = main
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;

    // clone3 passes its flags in memory, out of seccomp's reach: ENOSYS makes libc fall
    // back to clone, whose flags the main filter checks.
    let mut c3 = BTreeMap::new();
    c3.insert(libc::SYS_clone3, vec![]);
    let c3 = SeccompFilter::new(
        c3,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let c3: BpfProgram = c3
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;

    let mut programs = vec![main, c3];
    if let Some(x32) = x32_filter() {
        programs.push(x32);
    }
    Ok(Filters { programs })
}

/// On x86_64, the x32 ABI numbers syscalls with bit 30 set; the denylist above would not
/// see them, so they are refused as a whole.
#[cfg(target_arch = "x86_64")]
fn x32_filter() -> Option<BpfProgram> {
    use seccompiler::sock_filter;
    const BPF_LD_W_ABS: u16 = 0x20;
    const BPF_JMP_JGE_K: u16 = 0x35;
    const BPF_RET_K: u16 = 0x06;
    const RET_ALLOW: u32 = 0x7fff_0000;
    const RET_ERRNO: u32 = 0x0005_0000;
    let ins = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    Some(vec![
        // A = seccomp_data.nr
        ins(BPF_LD_W_ABS, 0, 0, 0),
        ins(BPF_JMP_JGE_K, 0, 1, 0x4000_0000),
        ins(BPF_RET_K, 0, 0, RET_ERRNO | libc::ENOSYS as u32),
        ins(BPF_RET_K, 0, 0, RET_ALLOW),
    ])
}

#[cfg(not(target_arch = "x86_64"))]
fn x32_filter() -> Option<BpfProgram> {
    None
}

/// Installs one filter (child side, no allocation). Returns 0 or an errno.
///
/// # Safety
/// `prog` must point to a valid BPF program of `len` instructions.
pub(crate) unsafe fn install_raw(prog: *const seccompiler::sock_filter, len: usize) -> i32 {
    let fprog = libc::sock_fprog {
        len: len as u16,
        filter: prog as *mut libc::sock_filter,
    };
    // SAFETY: fprog describes a live filter; seccompiler's sock_filter is repr(C) and
    // layout-identical to the kernel's.
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0u32,
            &fprog as *const libc::sock_fprog,
        )
    };
    if r < 0 { crate::landlock::errno() } else { 0 }
}

/// Whether seccomp filtering is available here.
pub(crate) fn available() -> bool {
    // SAFETY: PR_GET_SECCOMP takes no pointer arguments.
    let r = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    r >= 0
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn filters_compile_for_every_mode() {
        for n in [Network::Off, Network::On, Network::Hosts(vec!["x".into()])] {
            let a = build(&n).unwrap();
            let b = build(&n).unwrap();
            assert_eq!(a.programs, b.programs);
            assert!(a.programs[0].len() > 50);
        }
    }
}
