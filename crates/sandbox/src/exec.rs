//! What the kernel opens to start a program: its `#!` interpreter (and the program `env`
//! starts), the ELF loader (PT_INTERP). These get Landlock's EXECUTE right.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The program, its interpreters and loaders, transitively (at most a few levels).
pub(crate) fn closure(program: &Path, path_var: Option<&str>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut todo = vec![(program.to_path_buf(), 0u32)];
    while let Some((p, depth)) = todo.pop() {
        if out.contains(&p) || depth > 4 {
            continue;
        }
        out.push(p.clone());
        for next in starts(&p, path_var) {
            todo.push((next, depth + 1));
        }
    }
    out
}

/// The files the kernel (or `env`) opens to start `p`.
fn starts(p: &Path, path_var: Option<&str>) -> Vec<PathBuf> {
    let Ok(mut f) = File::open(p) else {
        return vec![];
    };
    let mut head = [0u8; 256];
    let n = read_full(&mut f, &mut head);
    let head = &head[..n];
    if head.starts_with(b"#!") {
        return shebang(head, path_var);
    }
    if head.starts_with(b"\x7fELF") {
        return elf_interp(&mut f, head).into_iter().collect();
    }
    vec![]
}

fn read_full(f: &mut File, buf: &mut [u8]) -> usize {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k,
        }
    }
    n
}

fn shebang(head: &[u8], path_var: Option<&str>) -> Vec<PathBuf> {
    let line = head[2..].split(|&b| b == b'\n').next().unwrap_or(&[]);
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace();
    let Some(interp) = words.next() else {
        return vec![];
    };
    let interp = PathBuf::from(interp);
    let mut out = vec![interp.clone()];
    if interp.file_name().is_some_and(|n| n == "env") {
        // `#!/usr/bin/env [-S] prog args`: env starts prog found on PATH.
        let prog = words.find(|w| !w.starts_with('-') && !w.contains('='));
        if let Some(prog) = prog
            && let Some(found) = which(prog, path_var)
        {
            out.push(found);
        }
    }
    out
}

/// Resolves a command name on a PATH value (default: the usual system dirs).
pub(crate) fn which(name: &str, path_var: Option<&str>) -> Option<PathBuf> {
    if name.contains('/') {
        return Some(PathBuf::from(name));
    }
    let path = path_var.unwrap_or("/usr/local/bin:/usr/bin:/bin");
    path.split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(name))
        .find(|c| c.is_file())
}

fn elf_interp(f: &mut File, head: &[u8]) -> Option<PathBuf> {
    if head.len() < 64 {
        return None;
    }
    let is64 = head[4] == 2;
    let le = head[5] == 1;
    let u16_at = |o: usize| {
        let b = [head[o], head[o + 1]];
        if le {
            u16::from_le_bytes(b)
        } else {
            u16::from_be_bytes(b)
        }
    };
    let u32_of = |b: &[u8]| {
        let a = [b[0], b[1], b[2], b[3]];
        if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let u64_of = |b: &[u8]| {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[..8]);
        if le {
            u64::from_le_bytes(a)
        } else {
            u64::from_be_bytes(a)
        }
    };
    let (phoff, phentsize, phnum) = if is64 {
        (u64_of(&head[32..40]), u16_at(54), u16_at(56))
    } else {
        (u32_of(&head[28..32]) as u64, u16_at(42), u16_at(44))
    };
    let phentsize = phentsize as usize;
    if phentsize < 32 || phnum > 256 {
        return None;
    }
    let mut table = vec![0u8; phentsize * phnum as usize];
    f.seek(SeekFrom::Start(phoff)).ok()?;
    f.read_exact(&mut table).ok()?;
    for ph in table.chunks(phentsize) {
        if u32_of(&ph[0..4]) != 3 {
            continue; // not PT_INTERP
        }
        let (off, size) = if is64 {
            (u64_of(&ph[8..16]), u64_of(&ph[32..40]))
        } else {
            (u32_of(&ph[4..8]) as u64, u32_of(&ph[16..20]) as u64)
        };
        if size == 0 || size > 4096 {
            return None;
        }
        let mut name = vec![0u8; size as usize];
        f.seek(SeekFrom::Start(off)).ok()?;
        f.read_exact(&mut name).ok()?;
        let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        use std::os::unix::ffi::OsStrExt;
        return Some(PathBuf::from(std::ffi::OsStr::from_bytes(&name[..end])));
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn python_has_a_loader() {
        let c = closure(Path::new("/usr/bin/python3"), None);
        assert!(c.len() >= 2, "{c:?}");
        assert!(
            c.iter().any(|p| p.to_string_lossy().contains("ld-")),
            "{c:?}"
        );
    }
}
