//! Input builtins: `read`, `mapfile`/`readarray`, `getopts`, and `printf -v`.

use super::{args_label, texts};
use crate::interp::expand::Field;
use crate::interp::{Exec, Shell, Value};
use safesh_label::Label;

pub(super) fn read(sh: &mut Shell, argv: &[Field]) -> Exec {
    let args = texts(&argv[1..]);
    let mut raw = false;
    let mut array: Option<String> = None;
    let mut delim = b'\n';
    let mut nchars: Option<usize> = None;
    let mut exact = false;
    let mut fd = 0;
    let mut timeout_zero = false;
    let mut names = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a.starts_with('-') && a.len() > 1 && names.is_empty() {
            let mut chars = a[1..].chars();
            while let Some(c) = chars.next() {
                let rest: String = chars.clone().collect();
                let mut value = || -> Option<String> {
                    if !rest.is_empty() {
                        Some(rest.clone())
                    } else {
                        i += 1;
                        args.get(i).cloned()
                    }
                };
                match c {
                    'r' => raw = true,
                    's' | 'e' => {}
                    'a' => {
                        array = value();
                        break;
                    }
                    'd' => {
                        delim = value().and_then(|d| d.bytes().next()).unwrap_or(0);
                        break;
                    }
                    'n' | 'N' => {
                        exact = c == 'N';
                        nchars = value().and_then(|v| v.parse().ok());
                        break;
                    }
                    'p' => {
                        if let Some(p) = value() {
                            // The prompt is one of the words: it carries their label.
                            let label = args_label(sh, argv);
                            let _ = sh.out_fd(2).write_chunk(p.as_bytes(), &label);
                        }
                        break;
                    }
                    't' => {
                        // `-t 0` only asks whether input is there: succeed
                        // without reading (the input is a pipe or a file).
                        timeout_zero = value()
                            .and_then(|v| v.parse::<f64>().ok())
                            .is_some_and(|t| t == 0.0);
                        break;
                    }
                    'u' => {
                        fd = value().and_then(|v| v.parse().ok()).unwrap_or(0);
                        break;
                    }
                    _ => {
                        sh.diag(format!("read: -{c}: invalid option"));
                        sh.set_status(2);
                        return Ok(());
                    }
                }
            }
            i += 1;
            continue;
        }
        names.push(a.clone());
        i += 1;
    }
    if timeout_zero {
        sh.set_status(0);
        return Ok(());
    }
    let input = sh.in_fd(fd);
    let (data, label, found) = match nchars {
        Some(n) => {
            let mut out = Vec::new();
            let mut label = Label::empty();
            let mut found = true;
            // Characters are counted after escapes: a backslash and the
            // character it escapes are one, a backslash-newline none.
            let mut count = 0;
            while count < n {
                let (b, l) = input.read_n(1).unwrap_or_default();
                label.join_assign(&l);
                match b.first() {
                    None => {
                        found = false;
                        break;
                    }
                    Some(&c) if c == delim && !exact => break,
                    Some(&b'\\') if !raw && !exact => {
                        let (next, l) = input.read_n(1).unwrap_or_default();
                        label.join_assign(&l);
                        match next.first() {
                            None => {
                                found = false;
                                break;
                            }
                            Some(&b'\n') => {}
                            Some(&c) => {
                                out.extend_from_slice(&[b'\\', c]);
                                count += 1;
                            }
                        }
                    }
                    Some(&c) => {
                        out.push(c);
                        count += 1;
                    }
                }
            }
            (out, label, found)
        }
        None => {
            let mut all = Vec::new();
            let mut label = Label::empty();
            let found;
            loop {
                let (mut chunk, l, f) = input.read_until(delim).unwrap_or_default();
                label.join_assign(&l);
                if f {
                    chunk.pop();
                }
                // Without -r, a backslash before the delimiter continues the line.
                if f && !raw
                    && chunk.last() == Some(&b'\\')
                    && count_trailing_backslashes(&chunk) % 2 == 1
                {
                    chunk.pop();
                    all.extend_from_slice(&chunk);
                    continue;
                }
                all.extend_from_slice(&chunk);
                found = f;
                break;
            }
            (all, label, found)
        }
    };
    // Each character with whether a backslash escaped it: an escaped one is
    // never a field separator nor trimmed.
    // The C locale with a multibyte IFS: every byte is a character (bash), so
    // each byte of IFS delimits; the fields are made whole text again after.
    let ifs = sh.ifs();
    let bytewise = !ifs.is_ascii() && !sh.utf8_locale();
    let chars = if bytewise {
        escaped_chars_bytewise(&data, raw || exact)
    } else {
        escaped_chars(&data, raw || exact)
    };
    let whole = |s: String| -> String {
        if bytewise {
            safesh_utils::word_bytes::word_from_vec(
                safesh_utils::word_bytes::word_to_bytes(&s).into_owned(),
            )
        } else {
            s
        }
    };
    let line: String = whole(chars.iter().map(|(c, _)| *c).collect());
    let label = label.join(&sh.pc).join(&args_label(sh, argv));
    let ifs = if bytewise {
        safesh_utils::word_bytes::word_to_bytes(&ifs)
            .iter()
            .map(|&b| byte_char(b))
            .collect()
    } else {
        ifs
    };
    // As bash does: the line is read and names are assigned in order; an
    // invalid one stops there with status 1.
    let invalid = |sh: &mut Shell, name: &str| {
        sh.diag(format!("read: `{name}': not a valid identifier"));
        sh.set_status(1);
    };
    if let Some(name) = array {
        if !super::vars::valid_name(&name) {
            invalid(sh, &name);
            return Ok(());
        }
        let items: std::collections::BTreeMap<i64, String> =
            split_escaped(&chars, &ifs, usize::MAX)
                .into_iter()
                .map(whole)
                .enumerate()
                .map(|(i, s)| (i as i64, s))
                .collect();
        sh.vars
            .set_array(&name, items, label)
            .map_err(|e| sh.readonly_stop(&e.0))?;
    } else if names.is_empty() {
        sh.assign_scalar("REPLY", line, label)?;
    } else {
        // `-N` takes the characters as they are, unsplit.
        let parts = if exact {
            vec![line]
        } else {
            split_escaped(&chars, &ifs, names.len())
                .into_iter()
                .map(whole)
                .collect()
        };
        for (k, name) in names.iter().enumerate() {
            let v = parts.get(k).cloned().unwrap_or_default();
            // `read 'a[1]'`: an element of an array.
            if let Some((base, idx)) = name.strip_suffix(']').and_then(|n| n.split_once('['))
                && super::vars::valid_name(base)
            {
                sh.assign_element(base, idx, v, label.clone())?;
                continue;
            }
            if !super::vars::valid_name(name) {
                invalid(sh, name);
                return Ok(());
            }
            sh.assign_scalar(name, v, label.clone())?;
        }
    }
    let eof_status = if !found && (nchars.is_none() || data.is_empty()) {
        1
    } else {
        0
    };
    sh.set_status(eof_status);
    Ok(())
}

fn count_trailing_backslashes(b: &[u8]) -> usize {
    b.iter().rev().take_while(|c| **c == b'\\').count()
}

/// The characters of what `read` got, each with whether a backslash escaped
/// it (without `-r` the backslashes go; with it, nothing is escaped).
fn escaped_chars(data: &[u8], raw: bool) -> Vec<(char, bool)> {
    unescape(safesh_utils::word_bytes::word_from_bytes(data).chars(), raw)
}

/// Each character with whether a backslash escaped it (the backslash dropped;
/// with `raw`, backslashes are plain characters).
fn unescape(chars: impl Iterator<Item = char>, raw: bool) -> Vec<(char, bool)> {
    let mut out = Vec::with_capacity(chars.size_hint().0);
    let mut esc = false;
    for c in chars {
        if esc {
            out.push((c, true));
            esc = false;
        } else if c == '\\' && !raw {
            esc = true;
        } else {
            out.push((c, false));
        }
    }
    out
}

/// A byte as one character: ASCII as itself, any other as its escape code point.
fn byte_char(b: u8) -> char {
    if b.is_ascii() {
        char::from(b)
    } else {
        safesh_utils::word_bytes::escape_byte(b)
    }
}

/// [`escaped_chars`] with every byte a character of its own.
fn escaped_chars_bytewise(data: &[u8], raw: bool) -> Vec<(char, bool)> {
    unescape(data.iter().map(|&b| byte_char(b)), raw)
}

/// Splits a line the way `read` does into at most `n` fields: the last field gets
/// the rest of the line, minus trailing IFS whitespace. A character a backslash
/// escaped is text: never a separator, never trimmed.
fn split_escaped(chars: &[(char, bool)], ifs: &str, n: usize) -> Vec<String> {
    let is_ws = |c: (char, bool)| !c.1 && ifs.contains(c.0) && matches!(c.0, ' ' | '\t' | '\n');
    let is_delim = |c: (char, bool)| !c.1 && ifs.contains(c.0) && !matches!(c.0, ' ' | '\t' | '\n');
    let is_sep = |c: (char, bool)| !c.1 && ifs.contains(c.0);
    if ifs.is_empty() {
        return vec![chars.iter().map(|c| c.0).collect()];
    }
    let mut i = 0;
    while i < chars.len() && is_ws(chars[i]) {
        i += 1;
    }
    let mut out = Vec::new();
    while i < chars.len() {
        if out.len() + 1 == n {
            let mut rest: Vec<(char, bool)> = chars[i..].to_vec();
            while rest.last().is_some_and(|c| is_ws(*c)) {
                rest.pop();
            }
            // A single trailing non-whitespace delimiter is dropped too.
            if rest.last().is_some_and(|c| is_delim(*c))
                && !rest[..rest.len() - 1].iter().any(|c| is_delim(*c))
            {
                rest.pop();
            }
            out.push(rest.iter().map(|c| c.0).collect());
            return out;
        }
        let start = i;
        while i < chars.len() && !is_sep(chars[i]) {
            i += 1;
        }
        out.push(chars[start..i].iter().map(|c| c.0).collect());
        // Skip one delimiter (with surrounding IFS whitespace).
        while i < chars.len() && is_ws(chars[i]) {
            i += 1;
        }
        if i < chars.len() && is_delim(chars[i]) {
            i += 1;
            while i < chars.len() && is_ws(chars[i]) {
                i += 1;
            }
        }
    }
    out
}

pub(super) fn mapfile(sh: &mut Shell, argv: &[Field]) -> Exec {
    let args = texts(&argv[1..]);
    let mut strip = false;
    let mut delim = b'\n';
    let mut count: Option<usize> = None;
    let mut skip = 0usize;
    let mut fd = 0;
    let mut origin: Option<i64> = None;
    let mut name = "MAPFILE".to_string();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "-t" => strip = true,
            "-d" => {
                i += 1;
                delim = args.get(i).and_then(|d| d.bytes().next()).unwrap_or(0);
            }
            "-n" => {
                i += 1;
                count = args.get(i).and_then(|v| v.parse().ok()).filter(|n| *n > 0);
            }
            "-s" => {
                i += 1;
                skip = args.get(i).and_then(|v| v.parse().ok()).unwrap_or(0);
            }
            "-u" => {
                i += 1;
                fd = args.get(i).and_then(|v| v.parse().ok()).unwrap_or(0);
            }
            "-O" => {
                i += 1;
                origin = args.get(i).and_then(|v| v.parse().ok());
            }
            s => name = s.to_string(),
        }
        i += 1;
    }
    let input = sh.in_fd(fd);
    // `-O N`: lines go from index N on, into the array as it is (not cleared).
    let mut items = match (origin, sh.vars.get(&name).map(|v| &v.value)) {
        (Some(_), Some(Value::Array(a))) => a.clone(),
        _ => std::collections::BTreeMap::new(),
    };
    let mut label = sh.pc.clone();
    let mut k = 0i64;
    let base = origin.unwrap_or(0);
    let mut seen = 0usize;
    loop {
        if count.is_some_and(|c| k as usize >= c) {
            break;
        }
        sh.check_cancel()?;
        let (mut line, l, found) = input.read_until(delim).unwrap_or_default();
        if line.is_empty() && !found {
            break;
        }
        seen += 1;
        if seen <= skip {
            continue;
        }
        label.join_assign(&l);
        if strip && found {
            line.pop();
        }
        items.insert(base + k, safesh_utils::word_bytes::word_from_vec(line));
        k += 1;
    }
    sh.vars
        .set_array(&name, items, label)
        .map_err(|e| sh.readonly_stop(&e.0))?;
    sh.set_status(0);
    Ok(())
}

pub(super) fn getopts(sh: &mut Shell, argv: &[Field]) -> Exec {
    let args = texts(&argv[1..]);
    if args.len() < 2 {
        sh.diag("getopts: usage: getopts optstring name [arg ...]");
        sh.set_status(2);
        return Ok(());
    }
    let optstring = args[0].clone();
    let name = args[1].clone();
    let params: Vec<String> = if args.len() > 2 {
        args[2..].to_vec()
    } else {
        sh.positional.clone()
    };
    let silent = optstring.starts_with(':');
    if !super::vars::valid_name(&name) {
        // bash still consumes the option (OPTIND, OPTARG), then fails.
        let mut probe = argv.to_vec();
        probe[2].text = "_safesh_getopts_probe".into();
        getopts(sh, &probe)?;
        let _ = sh.vars.unset("_safesh_getopts_probe");
        sh.diag(format!("getopts: `{name}': not a valid identifier"));
        sh.set_status(1);
        return Ok(());
    }
    let mut optind: usize = sh.var_str("OPTIND").parse().unwrap_or(1).max(1);
    let mut pos: usize = sh.getopts_pos;
    let label = args_label(sh, argv);
    let Some(arg) = params.get(optind - 1).cloned() else {
        // Past the end (a new `set --` with OPTIND left over): bash puts
        // OPTIND just after the last argument.
        optind = optind.min(params.len() + 1);
        sh.getopts_pos = 0;
        sh.assign_scalar("OPTIND", optind.to_string(), label.clone())?;
        let _ = sh.vars.unset("OPTARG");
        sh.assign_scalar(&name, "?".into(), label)?;
        sh.set_status(1);
        return Ok(());
    };
    if pos == 0 {
        if arg == "--" {
            sh.assign_scalar("OPTIND", (optind + 1).to_string(), label.clone())?;
            sh.assign_scalar(&name, "?".into(), label)?;
            sh.set_status(1);
            return Ok(());
        }
        if !arg.starts_with('-') || arg == "-" {
            let _ = sh.vars.unset("OPTARG");
            sh.assign_scalar(&name, "?".into(), label)?;
            sh.set_status(1);
            return Ok(());
        }
        pos = 1;
    }
    let chars: Vec<char> = arg.chars().collect();
    let c = chars.get(pos).copied().unwrap_or('?');
    pos += 1;
    let spec = optstring.trim_start_matches(':');
    let idx = spec.find(c).filter(|_| c != ':');
    let advance = |pos: &mut usize, optind: &mut usize| {
        if *pos >= chars.len() {
            *pos = 0;
            *optind += 1;
        }
    };
    match idx {
        None => {
            if silent {
                sh.assign_scalar("OPTARG", c.to_string(), label.clone())?;
            } else {
                sh.diag(format!("illegal option -- {c}"));
                let _ = sh.vars.unset("OPTARG");
            }
            sh.assign_scalar(&name, "?".into(), label.clone())?;
            advance(&mut pos, &mut optind);
        }
        Some(k) => {
            let takes = spec[k + c.len_utf8()..].starts_with(':');
            if takes {
                let value = if pos < chars.len() {
                    let v: String = chars[pos..].iter().collect();
                    pos = 0;
                    optind += 1;
                    Some(v)
                } else {
                    pos = 0;
                    optind += 1;
                    let v = params.get(optind - 1).cloned();
                    if v.is_some() {
                        optind += 1;
                    }
                    v
                };
                match value {
                    Some(v) => {
                        sh.assign_scalar("OPTARG", v, label.clone())?;
                        sh.assign_scalar(&name, c.to_string(), label.clone())?;
                    }
                    None => {
                        if silent {
                            sh.assign_scalar(&name, ":".into(), label.clone())?;
                            sh.assign_scalar("OPTARG", c.to_string(), label.clone())?;
                        } else {
                            sh.diag(format!("option requires an argument -- {c}"));
                            sh.assign_scalar(&name, "?".into(), label.clone())?;
                        }
                    }
                }
            } else {
                // An option without an argument leaves no OPTARG behind.
                let _ = sh.vars.unset("OPTARG");
                sh.assign_scalar(&name, c.to_string(), label.clone())?;
                advance(&mut pos, &mut optind);
            }
        }
    }
    sh.getopts_pos = pos;
    sh.assign_scalar("OPTIND", optind.to_string(), label)?;
    sh.set_status(0);
    Ok(())
}

pub(super) fn printf(sh: &mut Shell, argv: &[Field]) -> Exec {
    // bash's builtin; the registry's `printf` is coreutils' program.
    let util: safesh_utils::UtilFn = safesh_tools_data::printf_builtin;
    let label = args_label(sh, argv);
    if argv.get(1).is_some_and(|f| f.text == "-v") {
        let Some(var) = argv.get(2).map(|f| f.text.clone()) else {
            sh.diag("printf: -v: option requires an argument");
            sh.set_status(2);
            return Ok(());
        };
        // bash checks the name first: `printf -v 1a …` assigns nothing.
        let base = var
            .strip_suffix(']')
            .and_then(|v| v.split_once('['))
            .map_or(var.as_str(), |(name, _)| name);
        if !crate::interp::vars::valid_name(base) {
            sh.diag(format!("printf: `{var}': not a valid identifier"));
            sh.set_status(2);
            return Ok(());
        }
        let mut args = vec!["printf".to_string()];
        args.extend(texts(&argv[3..]));
        let sink = crate::io::Sink::capture(sh.shared.limits.string_bytes);
        let saved = sh.fds.insert(1, crate::interp::Fd::Out(sink.clone()));
        let r = sh.run_utility(util, args, label, Vec::new());
        match saved {
            Some(fd) => {
                sh.fds.insert(1, fd);
            }
            None => {
                sh.fds.remove(&1);
            }
        }
        r?;
        let status = sh.last_status;
        let captured = sink.take_captured();
        let text = safesh_utils::word_bytes::word_from_bytes(&captured.data).into_owned();
        if let Some((name, idx)) = var.strip_suffix(']').and_then(|v| v.split_once('[')) {
            let i = sh.eval_subscript(idx)?;
            sh.vars
                .set_index(name, i, text, captured.label)
                .map_err(|e| sh.readonly_stop(&e.0))?;
        } else {
            sh.assign_scalar(&var, text, captured.label)?;
        }
        sh.set_status(status);
        return Ok(());
    }
    sh.run_utility(util, texts(argv), label, Vec::new())
}
