//! Which arguments of an in-process utility are paths, and whether it reads or
//! changes them — so that a path outside the roots is refused before anything
//! runs. The utilities check every path again when they touch it (exactly, through
//! the host), so this table only has to avoid false alarms, not be complete.

/// How a utility uses a path argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read only.
    Read,
    /// Created, changed or removed.
    Write,
}

/// The path arguments of `argv` (an in-process utility) with their access.
/// Unknown utilities give nothing.
pub fn paths(argv: &[String]) -> Vec<(String, Access)> {
    let Some(name) = argv.first() else {
        return Vec::new();
    };
    let args = &argv[1..];
    use Access::*;
    // (short options with a value, long options with a value, operands to skip,
    //  access of operands, access of the last operand when different)
    let (valued, long_valued, mut skip, access, last): (
        &str,
        &[&str],
        usize,
        Access,
        Option<Access>,
    ) = match name.as_str() {
        "cat" | "tac" | "rev" | "md5sum" | "sha1sum" | "sha224sum" | "sha256sum" | "sha384sum"
        | "sha512sum" | "cksum" | "b2sum" | "readlink" | "realpath" | "file" => {
            ("s", &[], 0, Read, None)
        }
        "head" | "tail" => (
            "nc",
            &["--lines", "--bytes", "--pid", "--sleep-interval"],
            0,
            Read,
            None,
        ),
        "wc" => ("", &["--files0-from"], 0, Read, None),
        "sort" => (
            "kotST",
            &[
                "--key",
                "--output",
                "--field-separator",
                "--buffer-size",
                "--temporary-directory",
                "--parallel",
                "--batch-size",
                "--compress-program",
                "--files0-from",
                "--random-source",
                "--sort",
            ],
            0,
            Read,
            None,
        ),
        "uniq" => (
            "fsw",
            &[
                "--skip-fields",
                "--skip-chars",
                "--check-chars",
                "--group",
                "--all-repeated",
            ],
            0,
            Read,
            Some(Write),
        ),
        "cut" => (
            "bcdf",
            &[
                "--bytes",
                "--characters",
                "--delimiter",
                "--fields",
                "--output-delimiter",
            ],
            0,
            Read,
            None,
        ),
        "nl" => ("bdfhilnsvw", &[], 0, Read, None),
        "fold" => ("w", &["--width"], 0, Read, None),
        "join" => ("aejot12v", &[], 0, Read, None),
        "column" => (
            "cHNoRs",
            &[
                "--output-width",
                "--columns",
                "--table-hide",
                "--table-columns",
                "--output-separator",
                "--table-right",
                "--separator",
            ],
            0,
            Read,
            None,
        ),
        "expand" | "unexpand" => ("t", &["--tabs"], 0, Read, None),
        "paste" => ("d", &["--delimiters"], 0, Read, None),
        "od" => (
            "AjNtw",
            &[
                "--address-radix",
                "--skip-bytes",
                "--read-bytes",
                "--format",
                "--width",
            ],
            0,
            Read,
            None,
        ),
        "base64" | "base32" => ("w", &["--wrap"], 0, Read, None),
        "stat" => ("c", &["--format", "--printf"], 0, Read, None),
        "du" => (
            "BdtX",
            &[
                "--block-size",
                "--max-depth",
                "--threshold",
                "--exclude-from",
                "--exclude",
                "--time-style",
                "--time",
            ],
            0,
            Read,
            None,
        ),
        "ls" => (
            "ITw",
            &[
                "--ignore",
                "--hide",
                "--width",
                "--tabsize",
                "--format",
                "--sort",
                "--time",
                "--time-style",
                "--color",
                "--quoting-style",
                "--indicator-style",
                "--block-size",
            ],
            0,
            Read,
            None,
        ),
        "tree" => (
            "LPIo",
            &["--filelimit", "--timefmt", "--sort", "--charset"],
            0,
            Read,
            None,
        ),
        "diff" | "cmp" => (
            "CUDIxXSin",
            &[
                "--context",
                "--unified",
                "--ifdef",
                "--ignore-matching-lines",
                "--exclude",
                "--exclude-from",
                "--starting-file",
                "--label",
                "--line-format",
                "--old-line-format",
                "--new-line-format",
                "--unchanged-line-format",
                "--old-group-format",
                "--new-group-format",
                "--changed-group-format",
                "--unchanged-group-format",
                "--horizon-lines",
                "--width",
                "--tabsize",
                "--color",
                "--palette",
                "--from-file",
                "--to-file",
                "--ignore-initial",
                "--bytes",
            ],
            0,
            Read,
            None,
        ),
        "comm" => ("", &["--output-delimiter"], 0, Read, None),
        "touch" => ("dtr", &["--date", "--reference", "--time"], 0, Write, None),
        "mkdir" => ("m", &["--mode", "--context"], 0, Write, None),
        "rmdir" | "rm" | "tee" | "truncate" | "shred" | "unlink" => {
            ("s", &["--size", "--reference"], 0, Write, None)
        }
        "chmod" => ("", &["--reference"], 1, Write, None),
        "cp" | "ln" => (
            "tS",
            &[
                "--target-directory",
                "--suffix",
                "--backup",
                "--sparse",
                "--reflink",
                "--preserve",
                "--no-preserve",
            ],
            0,
            Read,
            Some(Write),
        ),
        "mv" => (
            "tS",
            &["--target-directory", "--suffix", "--backup"],
            0,
            Write,
            None,
        ),
        "grep" | "egrep" | "fgrep" => (
            "efmABCdD",
            &[
                "--regexp",
                "--file",
                "--max-count",
                "--after-context",
                "--before-context",
                "--context",
                "--directories",
                "--devices",
                "--include",
                "--exclude",
                "--exclude-from",
                "--exclude-dir",
                "--label",
                "--color",
                "--colour",
                "--binary-files",
                "--group-separator",
            ],
            1,
            Read,
            None,
        ),
        "sed" => (
            "efl",
            &["--expression", "--file", "--line-length"],
            1,
            Read,
            None,
        ),
        "awk" | "mawk" | "gawk" => (
            "Ffv",
            &["--field-separator", "--file", "--assign"],
            1,
            Read,
            None,
        ),
        "jq" => (
            "fL",
            &[
                "--from-file",
                "--indent",
                "--tab",
                "--arg",
                "--argjson",
                "--slurpfile",
                "--rawfile",
                "--args",
                "--jsonargs",
            ],
            1,
            Read,
            None,
        ),
        "find" => return find_paths(args),
        "source" | "." => {
            return args
                .first()
                .map(|a| vec![(a.clone(), Read)])
                .unwrap_or_default();
        }
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    let mut operands: Vec<String> = Vec::new();
    let mut i = 0;
    let mut in_place = false;
    let mut target_dir: Option<String> = None;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            operands.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(body) = a.strip_prefix("--") {
            let (n, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let full = format!("--{n}");
            let takes = long_valued
                .iter()
                .any(|l| *l == full || (n.len() >= 2 && l.starts_with(&full)));
            let value = if takes {
                inline.or_else(|| {
                    i += 1;
                    args.get(i - 1).cloned()
                })
            } else {
                None
            };
            match (n, value) {
                ("file" | "from-file", Some(v))
                    if matches!(name.as_str(), "grep" | "sed" | "awk" | "jq") =>
                {
                    skip = 0;
                    out.push((v, Read));
                }
                ("regexp" | "expression", Some(_)) => skip = 0,
                ("output", Some(v)) if name == "sort" => out.push((v, Write)),
                ("reference" | "files0-from" | "exclude-from", Some(v)) => out.push((v, Read)),
                ("target-directory", Some(v)) => target_dir = Some(v),
                ("slurpfile" | "rawfile", _) => {
                    i += 1;
                    if let Some(p) = args.get(i - 1) {
                        out.push((p.clone(), Read));
                    }
                }
                ("arg" | "argjson", _) => i += 1,
                ("in-place", _) => in_place = true,
                _ => {}
            }
            if n.starts_with("in-place") {
                in_place = true;
            }
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let chars: Vec<char> = a[1..].chars().collect();
            let mut j = 0;
            while j < chars.len() {
                let c = chars[j];
                j += 1;
                if c == 'i' && name == "sed" {
                    in_place = true;
                    break; // -i[SUFFIX]
                }
                if valued.contains(c) {
                    let rest: String = chars[j..].iter().collect();
                    let v = if rest.is_empty() {
                        i += 1;
                        args.get(i - 1).cloned()
                    } else {
                        Some(rest)
                    };
                    match (name.as_str(), c, v) {
                        ("grep" | "sed" | "awk" | "jq", 'f', Some(v)) => {
                            skip = 0;
                            out.push((v, Read));
                        }
                        ("grep" | "sed", 'e', _) => skip = 0,
                        ("sort", 'o', Some(v)) => out.push((v, Write)),
                        ("touch", 'r', Some(v)) => out.push((v, Read)),
                        ("cp" | "mv" | "ln", 't', Some(v)) => target_dir = Some(v),
                        _ => {}
                    }
                    break;
                }
            }
            continue;
        }
        operands.push(a.clone());
    }
    // rm and rmdir refuse `.` and `..` themselves (as GNU does).
    if matches!(name.as_str(), "rm" | "rmdir") {
        operands.retain(|o| !(o == "." || o == ".." || o.ends_with("/.") || o.ends_with("/..")));
    }
    // `ln -s TARGET LINK`: the target is text stored in the link, not a path
    // touched now; a hard link's source must be writable (the link would be).
    if name == "ln" {
        let symbolic = args.iter().any(|a| {
            a == "--symbolic" || (a.starts_with('-') && !a.starts_with("--") && a.contains('s'))
        });
        let n = operands.len();
        if symbolic {
            if n > 1 {
                operands.drain(..n - 1);
            }
            out.extend(operands.into_iter().map(|o| (o, Write)));
            if let Some(t) = target_dir {
                out.push((t, Write));
            }
            return out;
        } else {
            let mut out_ln: Vec<(String, Access)> =
                operands.iter().map(|o| (o.clone(), Write)).collect();
            if let Some(t) = target_dir {
                out_ln.push((t, Write));
            }
            out.extend(out_ln);
            return out;
        }
    }
    if matches!(name.as_str(), "awk" | "mawk" | "gawk") {
        operands.retain(|o| !o.contains('=') || o.starts_with('/') || o.starts_with('.'));
    }
    let ops: Vec<String> = operands
        .into_iter()
        .skip(skip)
        .filter(|o| o != "-")
        .collect();
    let n = ops.len();
    let access = if in_place { Write } else { access };
    for (k, o) in ops.into_iter().enumerate() {
        let a = match last {
            Some(l) if k + 1 == n && n > 1 && target_dir.is_none() => l,
            _ => access,
        };
        out.push((o, a));
    }
    if let Some(t) = target_dir {
        out.push((t, Write));
    }
    out
}

/// find's starting points: the arguments before the first expression.
fn find_paths(args: &[String]) -> Vec<(String, Access)> {
    let mut out = Vec::new();
    let mut writes = false;
    for a in args {
        if a == "-delete" {
            writes = true;
        }
    }
    for a in args {
        if a.starts_with('-') && !matches!(a.as_str(), "-H" | "-L" | "-P") || a == "(" || a == "!" {
            break;
        }
        if matches!(a.as_str(), "-H" | "-L" | "-P") {
            continue;
        }
        out.push((a.clone(), if writes { Access::Write } else { Access::Read }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: &[&str]) -> Vec<(String, Access)> {
        paths(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn patterns_and_values_are_not_paths() {
        assert_eq!(
            p(&["grep", "-rn", "/api/v1", "src"]),
            vec![("src".into(), Access::Read)]
        );
        assert_eq!(
            p(&["grep", "-e", "/etc", "f"]),
            vec![("f".into(), Access::Read)]
        );
        assert_eq!(
            p(&["head", "-n", "5", "f"]),
            vec![("f".into(), Access::Read)]
        );
        assert_eq!(
            p(&["sed", "-i", "s/a/b/", "f"]),
            vec![("f".into(), Access::Write)]
        );
        assert_eq!(
            p(&["awk", "-F/", "{print}", "x=1", "f"]),
            vec![("f".into(), Access::Read)]
        );
        assert_eq!(
            p(&["cp", "-r", "a", "b"]),
            vec![("a".into(), Access::Read), ("b".into(), Access::Write)]
        );
        assert_eq!(
            p(&["find", "/etc", "-name", "x"]),
            vec![("/etc".into(), Access::Read)]
        );
        assert_eq!(
            p(&["jq", "--arg", "a", "/x", ".", "f.json"]),
            vec![("f.json".into(), Access::Read)]
        );
    }
}
