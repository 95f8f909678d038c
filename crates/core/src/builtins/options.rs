//! Shell options: `set` (flags, `-o NAME`, listings) and `shopt`, with bash's
//! option tables so listings (`set -o`, `set +o`, `shopt`, `shopt -p`,
//! `$SHELLOPTS`) come out in bash's order and format.

use super::{args_label, out, texts};
use crate::interp::expand::Field;
use crate::interp::{Exec, Shell, Value};
use safesh_label::Label;

/// `set -o` options in bash's order, with their value in a non-interactive
/// bash when safesh does not track them.
const SET_OPTIONS: &[(&str, bool)] = &[
    ("allexport", false),
    ("braceexpand", true),
    ("emacs", false),
    ("errexit", false),
    ("errtrace", false),
    ("functrace", false),
    ("hashall", true),
    ("histexpand", false),
    ("history", false),
    ("ignoreeof", false),
    ("interactive-comments", true),
    ("keyword", false),
    ("monitor", false),
    ("noclobber", false),
    ("noexec", false),
    ("noglob", false),
    ("nolog", false),
    ("notify", false),
    ("nounset", false),
    ("onecmd", false),
    ("physical", false),
    ("pipefail", false),
    ("posix", false),
    ("privileged", false),
    ("verbose", false),
    ("vi", false),
    ("xtrace", false),
];

/// `shopt` options in bash's order with bash's defaults (extglob is always on
/// in safesh, but reported as bash reports it by default).
const SHOPT_OPTIONS: &[(&str, bool)] = &[
    ("autocd", false),
    ("assoc_expand_once", false),
    ("cdable_vars", false),
    ("cdspell", false),
    ("checkhash", false),
    ("checkjobs", false),
    ("checkwinsize", true),
    ("cmdhist", true),
    ("compat31", false),
    ("compat32", false),
    ("compat40", false),
    ("compat41", false),
    ("compat42", false),
    ("compat43", false),
    ("compat44", false),
    ("complete_fullquote", true),
    ("direxpand", false),
    ("dirspell", false),
    ("dotglob", false),
    ("execfail", false),
    ("expand_aliases", false),
    ("extdebug", false),
    ("extglob", false),
    ("extquote", true),
    ("failglob", false),
    ("force_fignore", true),
    ("globasciiranges", true),
    ("globskipdots", true),
    ("globstar", false),
    ("gnu_errfmt", false),
    ("histappend", false),
    ("histreedit", false),
    ("histverify", false),
    ("hostcomplete", true),
    ("huponexit", false),
    ("inherit_errexit", false),
    ("interactive_comments", true),
    ("lastpipe", false),
    ("lithist", false),
    ("localvar_inherit", false),
    ("localvar_unset", false),
    ("login_shell", false),
    ("mailwarn", false),
    ("no_empty_cmd_completion", false),
    ("nocaseglob", false),
    ("nocasematch", false),
    ("noexpand_translation", false),
    ("nullglob", false),
    ("patsub_replacement", true),
    ("progcomp", true),
    ("progcomp_alias", false),
    ("promptvars", true),
    ("restricted_shell", false),
    ("shift_verbose", false),
    ("sourcepath", true),
    ("varredir_close", false),
    ("xpg_echo", false),
];

/// The value of a `set -o` option, if it is one.
pub(crate) fn long_option(sh: &Shell, name: &str) -> Option<bool> {
    Some(match name {
        "errexit" => sh.opts.errexit,
        "nounset" => sh.opts.nounset,
        "pipefail" => sh.opts.pipefail,
        "noglob" => sh.opts.noglob,
        "noclobber" => sh.opts.noclobber,
        "xtrace" => sh.opts.xtrace,
        "noexec" => sh.opts.noexec,
        "errtrace" => sh.opts.errtrace,
        "functrace" => sh.opts.functrace,
        _ => SET_OPTIONS.iter().find(|(n, _)| *n == name)?.1,
    })
}

/// `$SHELLOPTS`: the `set -o` options that are on, joined by `:`.
pub(crate) fn shellopts(sh: &Shell) -> String {
    SET_OPTIONS
        .iter()
        .filter(|(n, _)| long_option(sh, n) == Some(true))
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(":")
}

fn set_long(sh: &mut Shell, opt: &str, on: bool) -> bool {
    match opt {
        "errexit" => sh.opts.errexit = on,
        "nounset" => sh.opts.nounset = on,
        "pipefail" => sh.opts.pipefail = on,
        "noglob" => sh.opts.noglob = on,
        "noclobber" => sh.opts.noclobber = on,
        "xtrace" => sh.opts.xtrace = on,
        "noexec" => sh.opts.noexec = on,
        "errtrace" => sh.opts.errtrace = on,
        "functrace" => sh.opts.functrace = on,
        _ => return SET_OPTIONS.iter().any(|(n, _)| *n == opt),
    }
    true
}

/// `set -o` (`{name:<15}\ton`) or `set +o` (`set -o name` lines) listings.
fn list_set_options(sh: &Shell, as_commands: bool) -> String {
    let mut text = String::new();
    for (name, _) in SET_OPTIONS {
        let on = long_option(sh, name).unwrap_or(false);
        if as_commands {
            text.push_str(&format!("set {}o {name}\n", if on { '-' } else { '+' }));
        } else {
            text.push_str(&format!("{name:<15}\t{}\n", if on { "on" } else { "off" }));
        }
    }
    text
}

pub(super) fn set(sh: &mut Shell, argv: &[Field]) -> Exec {
    let args = texts(&argv[1..]);
    if args.is_empty() {
        let label = args_label(sh, argv).join(sh.vars.listing_label());
        list_variables(sh, &label);
        sh.set_status(0);
        return Ok(());
    }
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "--" {
            sh.positional = args[i + 1..].to_vec();
            sh.positional_label = argv
                .iter()
                .skip(i + 2)
                .fold(Label::empty(), |l, f| l.join(&f.label));
            sh.set_status(0);
            return Ok(());
        }
        if a == "-o" || a == "+o" {
            let on = a == "-o";
            match args.get(i + 1) {
                Some(opt) => {
                    if !set_long(sh, opt, on) {
                        sh.diag(format!("set: {opt}: invalid option name"));
                        sh.set_status(1);
                        return Ok(());
                    }
                    i += 2;
                    continue;
                }
                None => {
                    let label = args_label(sh, argv);
                    let text = list_set_options(sh, !on);
                    out(sh, &text, &label);
                    i += 1;
                    continue;
                }
            }
        }
        if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 {
            let on = a.starts_with('-');
            let mut takes_name = false;
            for c in a[1..].chars() {
                match c {
                    'o' => takes_name = true,
                    'e' => sh.opts.errexit = on,
                    'u' => sh.opts.nounset = on,
                    'f' => sh.opts.noglob = on,
                    'C' => sh.opts.noclobber = on,
                    'x' => sh.opts.xtrace = on,
                    'n' => sh.opts.noexec = on,
                    'E' => sh.opts.errtrace = on,
                    'T' => sh.opts.functrace = on,
                    'v' | 'h' | 'B' | 'H' | 'm' | 'b' | 'a' | 'P' | 'k' | 't' => {}
                    _ => {
                        sh.diag(format!("set: -{c}: invalid option"));
                        sh.set_status(2);
                        return Ok(());
                    }
                }
            }
            if takes_name {
                // `set -euo pipefail`: the option name follows.
                if let Some(opt) = args.get(i + 1) {
                    if !set_long(sh, opt, on) {
                        sh.diag(format!("set: {opt}: invalid option name"));
                        sh.set_status(1);
                        return Ok(());
                    }
                    i += 1;
                }
            }
            i += 1;
            continue;
        }
        // Operands: new positional parameters.
        sh.positional = args[i..].to_vec();
        sh.positional_label = argv
            .iter()
            .skip(i + 1)
            .fold(Label::empty(), |l, f| l.join(&f.label));
        break;
    }
    sh.set_status(0);
    Ok(())
}

/// `set` without arguments: every variable as bash prints it (arrays too),
/// sorted by name, then the functions.
fn list_variables(sh: &mut Shell, label: &Label) {
    let utf8 = sh.utf8_locale();
    let mut names: Vec<String> = sh.vars.names().cloned().collect();
    names.sort();
    let mut text = String::new();
    let mut shown = label.clone();
    for name in names {
        let Some(v) = sh.vars.get(&name) else {
            continue;
        };
        shown.join_assign(&v.shown_label());
        let value = match &v.value {
            Value::Str(s) => set_quote(s, utf8),
            Value::Array(a) => {
                let items: Vec<String> =
                    a.iter().map(|(k, v)| format!("[{k}]={}", dq(v))).collect();
                format!("({})", items.join(" "))
            }
            Value::Assoc(a) => {
                let items: String = a
                    .iter()
                    .map(|(k, v)| format!("[{}]={} ", assoc_key(k), dq(v)))
                    .collect();
                format!("({items})")
            }
        };
        text.push_str(&format!("{name}={value}\n"));
    }
    let mut funcs: Vec<String> = sh.funcs.keys().cloned().collect();
    funcs.sort();
    for f in funcs {
        if let Some(def) = sh.funcs.get(&f) {
            if let Some(l) = sh.func_labels.get(&f) {
                shown.join_assign(l);
            }
            text.push_str(def.to_string().trim_end_matches('\n'));
            text.push('\n');
        }
    }
    out(sh, &text, &shown);
}

/// A value in double quotes, as `declare -p` and `set` show array elements.
fn dq(s: &str) -> String {
    let escaped = s
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('$', "\\$")
        .replace('`', "\\`");
    format!("\"{escaped}\"")
}

fn is_plain(s: &str) -> bool {
    s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "_=,:@%+-./".contains(c))
}

/// An associative array key: bare when plain, else double-quoted.
fn assoc_key(k: &str) -> String {
    if !k.is_empty() && is_plain(k) {
        k.to_string()
    } else {
        dq(k)
    }
}

/// A scalar as `set` shows it, so the listing can be run again: bare when
/// plain, `$'…'` when it holds control characters (or non-ASCII text outside a
/// UTF-8 locale), else single-quoted.
fn set_quote(s: &str, utf8: bool) -> String {
    if is_plain(s) {
        return s.to_string();
    }
    let ansi = s
        .chars()
        .any(|c| c.is_control() || (!c.is_ascii() && !utf8));
    if !ansi {
        return format!("'{}'", s.replace('\'', "'\\''"));
    }
    crate::interp::expand::dollar_quote(s, |c, out| {
        if c.is_control() || (!c.is_ascii() && !utf8) {
            for b in safesh_utils::word_bytes::word_to_bytes(&c.to_string()).iter() {
                out.push_str(&format!("\\{b:03o}"));
            }
        } else {
            out.push(c);
        }
    })
}

pub(super) fn shopt(sh: &mut Shell, argv: &[Field]) -> Exec {
    let args = texts(&argv[1..]);
    let mut mode: Option<bool> = None;
    let mut set_o = false;
    let mut quiet = false;
    let mut print = false;
    let mut names = Vec::new();
    for a in &args {
        match a.strip_prefix('-') {
            Some(flags) if !flags.is_empty() && names.is_empty() => {
                for c in flags.chars() {
                    match c {
                        's' => mode = Some(true),
                        'u' => mode = Some(false),
                        'o' => set_o = true,
                        'q' => quiet = true,
                        'p' => print = true,
                        _ => {
                            sh.diag(format!("shopt: -{c}: invalid option"));
                            sh.set_status(2);
                            return Ok(());
                        }
                    }
                }
            }
            _ => names.push(a.clone()),
        }
    }
    let label = args_label(sh, argv);
    // Without names: every option (`-s`/`-u` alone: those on / off).
    let listed: Vec<String> = if names.is_empty() {
        let table = if set_o { SET_OPTIONS } else { SHOPT_OPTIONS };
        table.iter().map(|(n, _)| n.to_string()).collect()
    } else {
        names.clone()
    };
    let mut status = 0;
    let mut text = String::new();
    for n in &listed {
        let current = if set_o {
            long_option(sh, n)
        } else {
            shopt_get(sh, n)
        };
        let Some(current) = current else {
            sh.diag(format!("shopt: {n}: invalid shell option name"));
            status = 1;
            continue;
        };
        match mode {
            Some(on) if !names.is_empty() => {
                if set_o {
                    set_long(sh, n, on);
                } else {
                    shopt_set(sh, n, on);
                }
            }
            // `shopt -s` alone lists the options that are on.
            Some(on) if current != on => {}
            _ => {
                if !current && !names.is_empty() {
                    status = 1;
                }
                if quiet {
                    continue;
                }
                text.push_str(&match (print, set_o) {
                    (true, true) => format!("set {}o {n}\n", if current { '-' } else { '+' }),
                    (true, false) => format!("shopt {} {n}\n", if current { "-s" } else { "-u" }),
                    _ => format!("{n:<15}\t{}\n", if current { "on" } else { "off" }),
                });
            }
        }
    }
    out(sh, &text, &label);
    sh.set_status(status);
    Ok(())
}

/// The value of a `shopt` option (those safesh does not track keep bash's
/// default).
fn shopt_get(sh: &Shell, name: &str) -> Option<bool> {
    Some(match name {
        "nullglob" => sh.shopt.nullglob,
        "dotglob" => sh.shopt.dotglob,
        "failglob" => sh.shopt.failglob,
        "lastpipe" => sh.shopt.lastpipe,
        "nocaseglob" => sh.shopt.nocaseglob,
        "nocasematch" => sh.shopt.nocasematch,
        "globstar" => sh.shopt.globstar,
        "inherit_errexit" => sh.shopt.inherit_errexit,
        "expand_aliases" => sh.shopt.expand_aliases,
        _ => SHOPT_OPTIONS.iter().find(|(n, _)| *n == name)?.1,
    })
}

fn shopt_set(sh: &mut Shell, name: &str, on: bool) {
    match name {
        "nullglob" => sh.shopt.nullglob = on,
        "dotglob" => sh.shopt.dotglob = on,
        "failglob" => sh.shopt.failglob = on,
        "lastpipe" => sh.shopt.lastpipe = on,
        "nocaseglob" => sh.shopt.nocaseglob = on,
        "nocasematch" => sh.shopt.nocasematch = on,
        "globstar" => sh.shopt.globstar = on,
        "inherit_errexit" => sh.shopt.inherit_errexit = on,
        "expand_aliases" => sh.shopt.expand_aliases = on,
        _ => {}
    }
}
