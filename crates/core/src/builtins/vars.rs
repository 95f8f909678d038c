//! Variable builtins: `export`, `unset`, `readonly`, `local`, `declare`, `set`,
//! `shift`, `let`, `shopt`.

use super::{args_label, out};
use crate::interp::expand::Field;
use crate::interp::{Exec, Shell, Stop, Value};
use safesh_label::Label;

/// Splits `NAME=value` / `NAME+=value` / `NAME`.
fn split_assignment(s: &str) -> (&str, Option<&str>, bool) {
    match s.split_once('=') {
        Some((n, v)) => match n.strip_suffix('+') {
            Some(n) => (n, Some(v), true),
            None => (n, Some(v), false),
        },
        None => (s, None, false),
    }
}

/// A shell variable name: a letter or `_`, then letters, digits, `_`.
pub(super) fn valid_name(n: &str) -> bool {
    let mut chars = n.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Assigns `NAME=value` from a declaration argument; returns false if invalid.
fn declare_one(sh: &mut Shell, f: &Field, builtin: &str) -> Result<bool, Stop> {
    let (name, value, append) = split_assignment(&f.text);
    let (base, index) = match name.split_once('[') {
        Some((b, rest)) => (b, rest.strip_suffix(']')),
        None => (name, None),
    };
    if !valid_name(base) {
        sh.diag(format!("{builtin}: `{}': not a valid identifier", f.text));
        return Ok(false);
    }
    if let Some(v) = value {
        let label = f.label.join(&sh.pc);
        if let Some(inner) = v.strip_prefix('(').and_then(|v| v.strip_suffix(')')) {
            // `declare -a a=(x y)`: the expanded list is parsed again as words, so
            // it is code built from data, like `eval`: it must be trusted, and what
            // it assigns (values, keys) carries its label through the PC.
            let op = if append { "+=" } else { "=" };
            let script = format!("{base}{op}({inner})");
            sh.commit_exec(
                safesh_flow::ExecKind::Eval,
                &f.label,
                std::slice::from_ref(f),
            )?;
            return sh.run_text_labeled(&script, &f.label).map(|_| true);
        }
        match index {
            Some(idx) => sh.assign_element(base, idx, v.to_string(), label)?,
            None => {
                let v = if append {
                    format!("{}{v}", sh.var_str(base))
                } else {
                    v.to_string()
                };
                sh.assign_scalar(base, v, label)?;
            }
        }
    }
    Ok(true)
}

pub(super) fn export(sh: &mut Shell, argv: &[Field]) -> Exec {
    let mut unexport = false;
    let mut status = 0;
    let mut any = false;
    for f in &argv[1..] {
        match f.text.as_str() {
            "-n" => {
                unexport = true;
                continue;
            }
            "-p" | "-f" | "--" => continue,
            _ => {}
        }
        any = true;
        if !declare_one(sh, f, "export")? {
            status = 1;
            continue;
        }
        let (name, _, _) = split_assignment(&f.text);
        // A name bound for this command only (`z=t export z`) stays (bash).
        sh.vars.keep_temp(name);
        if sh.vars.get(name).is_none() {
            // `export X` of an unset variable marks it for export once set.
            let _ = sh.vars.set(name, String::new(), Label::agent());
            sh.vars.mark_declared(name);
        }
        if let Some(v) = sh.vars.get_mut(name) {
            v.exported = !unexport;
        }
    }
    if !any {
        let utf8 = sh.utf8_locale();
        let label = args_label(sh, argv).join(sh.vars.listing_label());
        // Each line carries the labels of what it shows: the value and the name.
        let mut names: Vec<(String, String, Label)> = sh
            .vars
            .iter()
            // (`$_` goes to programs but is not listed, as in bash.)
            .filter(|(k, v)| v.exported && k.as_str() != "_")
            .map(|(k, v)| (k.clone(), v.as_str().to_string(), v.shown_label()))
            .collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        for (k, v, l) in names {
            out(
                sh,
                &format!("declare -x {k}={}\n", declare_quoted(&v, utf8)),
                &label.join(&l),
            );
        }
    }
    sh.set_status(status);
    Ok(())
}

/// A value as `declare -p` shows it: `"…"`, or `$'…'` when it holds control
/// characters or, outside a UTF-8 locale, non-ASCII text (bash's `ansic_quote`:
/// `\n`, `\t`, `\E`, `\001`, …).
fn declare_quoted(s: &str, utf8: bool) -> String {
    let special = |c: char| c.is_control() || (!c.is_ascii() && !utf8);
    if !s.chars().any(special) {
        return format!("\"{}\"", escape_dq(s));
    }
    crate::interp::expand::dollar_quote(s, |c, out| {
        if special(c) {
            for b in safesh_utils::word_bytes::word_to_bytes(&c.to_string()).iter() {
                out.push_str(&format!("\\{b:03o}"));
            }
        } else {
            out.push(c);
        }
    })
}

/// An associative array's key as `declare -p` shows it: as it is, or in
/// double quotes when it holds a character special to the shell (`"a b"`,
/// `"*"`, `"~"`), or as `$'…'` when it holds control characters.
pub(crate) fn shown_key(k: &str, utf8: bool) -> String {
    if k.chars()
        .any(|c| c.is_control() || (!c.is_ascii() && !utf8))
    {
        return declare_quoted(k, utf8);
    }
    let meta = k.chars().enumerate().any(|(i, c)| {
        matches!(
            c,
            ' ' | '\''
                | '"'
                | '\\'
                | '|'
                | '&'
                | ';'
                | '('
                | ')'
                | '<'
                | '>'
                | '!'
                | '{'
                | '}'
                | '*'
                | '['
                | '?'
                | ']'
                | '^'
                | '$'
                | '`'
        ) || (i == 0 && matches!(c, '~' | '#'))
    });
    if meta {
        format!("\"{}\"", escape_dq(k))
    } else {
        k.to_string()
    }
}

fn escape_dq(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('$', "\\$")
        .replace('`', "\\`")
}

pub(super) fn readonly(sh: &mut Shell, argv: &[Field]) -> Exec {
    // `readonly -f NAME…`: functions that cannot be redefined or unset.
    let is_f =
        |t: &str| t.starts_with('-') && t.len() > 1 && t[1..].chars().all(|c| "fp".contains(c));
    if argv[1..]
        .iter()
        .any(|a| is_f(&a.text) && a.text.contains('f'))
    {
        let names: Vec<&Field> = argv[1..].iter().filter(|a| !is_f(&a.text)).collect();
        let mut status = 0;
        if names.is_empty() {
            let label = args_label(sh, argv);
            let mut listed: Vec<String> = sh.readonly_funcs.iter().cloned().collect();
            listed.sort();
            let mut text = String::new();
            for name in listed {
                if let Some(def) = sh.funcs.get(&name) {
                    text.push_str(
                        safesh_syntax::restore_blanks(&def.to_string()).trim_end_matches('\n'),
                    );
                    text.push_str(&format!("\ndeclare -fr {name}\n"));
                }
            }
            out(sh, &text, &label);
        }
        for f in names {
            if sh.funcs.contains_key(&f.text) {
                sh.readonly_funcs.insert(f.text.clone());
            } else {
                sh.diag(format!("readonly: {}: not a function", f.text));
                status = 1;
            }
        }
        sh.set_status(status);
        return Ok(());
    }
    // `readonly` / `readonly -p`: the readonly variables, as `declare -p` shows them.
    if argv[1..].iter().all(|f| f.text == "-p" || f.text == "--") {
        let mut names: Vec<String> = sh
            .vars
            .iter()
            .filter(|(_, v)| v.readonly)
            .map(|(k, _)| k.clone())
            .collect();
        if names.is_empty() {
            sh.set_status(0);
            return Ok(());
        }
        names.sort();
        let mut args = vec![
            Field {
                text: "declare".into(),
                label: argv[0].label.clone(),
            },
            Field {
                text: "-p".into(),
                label: argv[0].label.clone(),
            },
        ];
        args.extend(names.into_iter().map(|text| Field {
            text,
            label: argv[0].label.clone(),
        }));
        return declare(sh, &args);
    }
    let mut status = 0;
    for f in &argv[1..] {
        if f.text.starts_with('-') {
            continue;
        }
        if !declare_one(sh, f, "readonly")? {
            status = 1;
            continue;
        }
        let (name, _, _) = split_assignment(&f.text);
        // As with export: `y=1 readonly y` keeps y.
        sh.vars.keep_temp(name);
        if sh.vars.get(name).is_none() {
            let _ = sh.vars.set(name, String::new(), Label::agent());
            sh.vars.mark_declared(name);
        }
        if let Some(v) = sh.vars.get_mut(name) {
            v.readonly = true;
        }
    }
    sh.set_status(status);
    Ok(())
}

pub(super) fn local(sh: &mut Shell, argv: &[Field]) -> Exec {
    if !sh.vars.in_function() {
        sh.diag("local: can only be used in a function");
        sh.set_status(1);
        return Ok(());
    }
    let mut names = Vec::with_capacity(argv.len());
    let mut status = 0;
    for f in &argv[1..] {
        // `local -`: the shell options are restored when the function returns.
        if f.text == "-" {
            if sh.local_opts.is_none() {
                sh.local_opts = Some(sh.opts);
            }
            continue;
        }
        if f.text.starts_with('-') {
            names.push(f.clone());
            continue;
        }
        let (name, value, _) = split_assignment(&f.text);
        let base = name.split('[').next().unwrap_or(name);
        if !valid_name(base) {
            names.push(f.clone());
            continue;
        }
        if sh.vars.get(base).is_some_and(|v| v.readonly) {
            // bash: an error for this name only; the function goes on.
            sh.diag(format!("local: {base}: readonly variable"));
            status = 1;
            continue;
        }
        names.push(f.clone());
        // `local x` again in the same function keeps x's value (bash).
        let again = sh.vars.is_local_here(base);
        sh.vars.make_local(base);
        if value.is_none() && !again {
            // `local x`: declared in this function but unset (`${x+set}` is
            // empty) until assigned, whatever the caller's x holds.
            let _ = sh.vars.unset(base);
            sh.vars.mark_declared(base);
        }
    }
    // The flags (`-i`, `-a`, `-n`, …) and values: as `declare` in a function.
    // No name left (`local`, or every name refused): nothing to declare, and
    // not `declare`'s listing of every variable.
    let named = names.iter().any(|f| !f.text.starts_with('-'));
    if named {
        let mut argv_rest = vec![argv[0].clone()];
        argv_rest.extend(names);
        declare(sh, &argv_rest)?;
    }
    if status != 0 || !named {
        sh.set_status(status);
    }
    Ok(())
}

/// `declare -f [NAME…]` prints function definitions, `declare -F [NAME…]` only
/// their names; a name that is not a function makes the status 1 (silently, as
/// in bash).
fn declare_functions(sh: &mut Shell, argv: &[Field], names: &[Field], bodies: bool) -> Exec {
    let args = args_label(sh, argv);
    let listed: Vec<String> = if names.is_empty() {
        let mut all: Vec<String> = sh.funcs.keys().cloned().collect();
        all.sort();
        all
    } else {
        names.iter().map(|f| f.text.clone()).collect()
    };
    let mut status = 0;
    let mut text = String::new();
    // The output carries the label of each definition shown (its body and name
    // came from where it was defined: `eval` of secret text makes both secret).
    let mut label = args;
    for name in listed {
        if sh.funcs.contains_key(&name)
            && let Some(l) = sh.func_labels.get(&name)
        {
            label.join_assign(l);
        }
        match sh.funcs.get(&name) {
            Some(def) if bodies => {
                text.push_str(&safesh_syntax::restore_blanks(&def.to_string()));
                if !text.ends_with('\n') {
                    text.push('\n');
                }
            }
            Some(_) if names.is_empty() => text.push_str(&format!("declare -f {name}\n")),
            Some(_) => text.push_str(&format!("{name}\n")),
            None => status = 1,
        }
    }
    out(sh, &text, &label);
    sh.set_status(status);
    Ok(())
}

pub(super) fn declare(sh: &mut Shell, argv: &[Field]) -> Exec {
    let mut export = false;
    let mut readonly = false;
    let mut array = false;
    let mut assoc = false;
    let mut attrs = crate::interp::vars::Attrs::default();
    let mut print = false;
    let mut functions = None;
    let mut status = 0;
    let mut names = Vec::new();
    // `declare +n ref`, `+x`, `+i`…: attributes to remove.
    let mut removed = crate::interp::vars::Attrs::default();
    let mut unexport = false;
    for f in &argv[1..] {
        if let Some(flags) = f.text.strip_prefix('+').filter(|fl| !fl.is_empty()) {
            for c in flags.chars() {
                match c {
                    'n' => removed.nameref = true,
                    'i' => removed.integer = true,
                    'l' => removed.lower = true,
                    'u' => removed.upper = true,
                    'x' => unexport = true,
                    _ => {}
                }
            }
            continue;
        }
        if let Some(flags) = f.text.strip_prefix('-') {
            for c in flags.chars() {
                match c {
                    'f' => functions = Some(functions.unwrap_or(true)),
                    'F' => functions = Some(false),
                    'x' => export = true,
                    'r' => readonly = true,
                    'a' => array = true,
                    'p' => print = true,
                    'A' => assoc = true,
                    'i' => attrs.integer = true,
                    'l' => attrs.lower = true,
                    'u' => attrs.upper = true,
                    'n' => attrs.nameref = true,
                    'g' | 't' => {}
                    _ => {}
                }
            }
            continue;
        }
        names.push(f.clone());
    }
    if let Some(bodies) = functions {
        return declare_functions(sh, argv, &names, bodies);
    }
    if print || names.is_empty() {
        let mut label = args_label(sh, argv);
        if names.is_empty() {
            label.join_assign(sh.vars.listing_label());
        }
        let mut lines = Vec::new();
        let list: Vec<String> = if names.is_empty() {
            let mut n: Vec<String> = sh.vars.names().cloned().collect();
            n.sort();
            n
        } else {
            names.iter().map(|f| f.text.clone()).collect()
        };
        for n in list {
            match sh.vars.get(&n) {
                Some(v) => {
                    let shown = v.shown_label();
                    // bash's order: a/A, i, l, n, r, u, x.
                    let utf8 = sh.utf8_locale();
                    let mut flags = String::new();
                    for (on, c) in [
                        (matches!(v.value, Value::Array(_)), 'a'),
                        (v.attrs.integer, 'i'),
                        (v.attrs.lower, 'l'),
                        (v.attrs.nameref, 'n'),
                        (v.readonly, 'r'),
                        (v.attrs.upper, 'u'),
                        (v.exported, 'x'),
                    ] {
                        if on {
                            flags.push(c);
                        }
                    }
                    if flags.is_empty() {
                        flags.push('-');
                    }
                    let body = match &v.value {
                        Value::Str(s) => declare_quoted(s, utf8),
                        Value::Array(a) => {
                            let items: Vec<String> = a
                                .iter()
                                .map(|(k, v)| format!("[{k}]={}", declare_quoted(v, utf8)))
                                .collect();
                            format!("({})", items.join(" "))
                        }
                        Value::Assoc(a) => {
                            let items: Vec<String> = a
                                .iter()
                                .map(|(k, v)| {
                                    format!("[{}]={} ", shown_key(k, utf8), declare_quoted(v, utf8))
                                })
                                .collect();
                            format!("({})", items.concat())
                        }
                    };
                    if v.is_assoc() {
                        flags = flags.replace('-', "");
                        flags.insert(0, 'A');
                    }
                    let empty = match &v.value {
                        Value::Str(s) => s.is_empty(),
                        Value::Array(a) => a.is_empty(),
                        Value::Assoc(a) => a.is_empty(),
                    };
                    // Declared and never given a value: no `=…` (bash).
                    if empty && sh.vars.declared_only(&n) {
                        lines.push((format!("declare -{flags} {n}\n"), shown));
                    } else {
                        lines.push((format!("declare -{flags} {n}={body}\n"), shown));
                    }
                }
                None if sh.vars.is_declared_unset(&n) => {
                    lines.push((format!("declare -- {n}\n"), Label::empty()));
                }
                None => {
                    sh.diag(format!("declare: {n}: not found"));
                    status = 1;
                }
            }
        }
        for (l, shown) in lines {
            out(sh, &l, &label.join(&shown));
        }
        sh.set_status(status);
        return Ok(());
    }
    for f in &names {
        let (name, value, _) = split_assignment(&f.text);
        let base = name.split('[').next().unwrap_or(name).to_string();
        if sh.vars.in_function()
            && !argv
                .iter()
                .any(|a| a.text.contains('g') && a.text.starts_with('-'))
        {
            sh.vars.make_local(&base);
        }
        if let Some(v) = sh.vars.get_mut(&base) {
            // The ref itself, never what it refers to.
            v.attrs.nameref &= !removed.nameref;
            v.attrs.integer &= !removed.integer;
            v.attrs.lower &= !removed.lower;
            v.attrs.upper &= !removed.upper;
            v.exported &= !unexport;
        }
        if attrs.nameref {
            if !declare_nameref(sh, f, &base, value, export, readonly, attrs) {
                status = 1;
            }
            continue;
        }
        let absent = sh.vars.get(&base).is_none() || sh.vars.declared_only(&base);
        if assoc {
            sh.vars.declare_assoc(&base, f.label.join(&sh.pc));
        }
        if attrs != crate::interp::vars::Attrs::default() {
            if sh.vars.get(&base).is_none() {
                let _ = sh.vars.set(&base, String::new(), Label::agent());
            }
            if let Some(v) = sh.vars.get_mut(&base) {
                v.attrs = attrs;
            }
        }
        if value.is_some() {
            if !declare_one(sh, f, argv[0].text.as_str())? {
                status = 1;
                continue;
            }
        } else if absent {
            // `declare x` alone declares x without setting it (`[[ -v x ]]` is
            // false); an array, export or readonly one exists empty, still
            // shown by `declare -p` without a value.
            if array && sh.vars.get(&base).is_none() {
                let _ = sh.vars.set_array(&base, Default::default(), Label::agent());
            } else if (export || readonly) && sh.vars.get(&base).is_none() {
                let _ = sh.vars.set(&base, String::new(), Label::agent());
            }
            sh.vars.mark_declared(&base);
        }
        if let Some(v) = sh.vars.get_mut(&base) {
            if export {
                v.exported = true;
            }
            if readonly {
                v.readonly = true;
            }
        }
    }
    sh.set_status(status);
    Ok(())
}

/// `declare -n ref[=target]`: sets ref itself (not what it referred to) and
/// makes it a reference; a target that is no variable name (`1`, `#`, `@`) is
/// refused and ref stays a plain variable. False on that error.
fn declare_nameref(
    sh: &mut Shell,
    f: &Field,
    base: &str,
    value: Option<&str>,
    export: bool,
    readonly: bool,
    attrs: crate::interp::vars::Attrs,
) -> bool {
    let target = match value {
        Some(v) => v.to_string(),
        None => sh
            .vars
            .get(base)
            .map(|v| v.as_str().to_string())
            .unwrap_or_default(),
    };
    let name_part = target.split('[').next().unwrap_or_default();
    let subscript_ok = target == name_part || target.ends_with(']');
    let refers = target.is_empty() || (valid_name(name_part) && subscript_ok);
    if !refers {
        sh.diag(format!(
            "declare: `{target}': invalid variable name for name reference"
        ));
        return false;
    }
    let label = f.label.join(&sh.pc);
    if (value.is_some() || sh.vars.get(base).is_none()) && sh.vars.set(base, target, label).is_err()
    {
        sh.diag(format!("declare: {base}: readonly variable"));
        return false;
    }
    if let Some(v) = sh.vars.get_mut(base) {
        v.attrs = attrs;
        v.exported |= export;
        v.readonly |= readonly;
    }
    true
}

pub(super) fn unset(sh: &mut Shell, argv: &[Field]) -> Exec {
    let mut functions = false;
    let mut only_vars = false;
    let mut the_ref = false;
    let mut status = 0;
    for f in &argv[1..] {
        match f.text.as_str() {
            "-f" => {
                functions = true;
                continue;
            }
            "-v" => {
                functions = false;
                only_vars = true;
                continue;
            }
            "-n" => {
                the_ref = true;
                continue;
            }
            _ => {}
        }
        if functions {
            if sh.readonly_funcs.contains(&f.text) {
                sh.diag(format!(
                    "unset: {}: cannot unset: readonly function",
                    f.text
                ));
                status = 1;
                continue;
            }
            sh.funcs.remove(&f.text);
            sh.func_labels.remove(&f.text);
            continue;
        }
        // `unset ref` of a nameref unsets what it refers to (`-n`: the ref).
        let f = &if the_ref {
            f.clone()
        } else {
            match sh.vars.get(&f.text) {
                Some(v) if v.attrs.nameref && !v.as_str().is_empty() => Field {
                    text: sh.vars.resolve(&f.text).to_string(),
                    label: f.label.clone(),
                },
                _ => f.clone(),
            }
        };
        if let Some((name, idx)) = f.text.strip_suffix(']').and_then(|t| t.split_once('[')) {
            let is_assoc = sh.vars.get(name).is_some_and(|v| v.is_assoc());
            let i = if is_assoc {
                0
            } else {
                let i = sh.eval_subscript(idx)?;
                sh.vars.element_index(name, i)
            };
            let pc = sh.pc.clone();
            if let Some(v) = sh.vars.get_mut(name) {
                // Which key is gone depends on the word that named it.
                v.label = v.label.join(&f.label).join(&pc);
                match &mut v.value {
                    Value::Array(a) => {
                        a.remove(&i);
                    }
                    Value::Assoc(a) => {
                        a.remove(idx);
                    }
                    Value::Str(_) => {}
                }
            }
            continue;
        }
        let existed = sh.vars.get(&f.text).is_some();
        if existed && !f.label.is_empty() {
            let label = f.label.join(&sh.pc);
            sh.vars.gone_by(&label);
        }
        if sh.vars.unset_dynamic(&f.text).is_err() {
            sh.diag(format!(
                "unset: {}: cannot unset: readonly variable",
                f.text
            ));
            status = 1;
        } else if !existed && !only_vars {
            // `unset f` removes the function f only when no variable f existed.
            sh.funcs.remove(&f.text);
            sh.func_labels.remove(&f.text);
        }
    }
    sh.set_status(status);
    Ok(())
}

pub(super) fn shift(sh: &mut Shell, argv: &[Field]) -> Exec {
    let n = match argv.get(1) {
        None => 1,
        Some(f) => match f.text.parse::<usize>() {
            Ok(n) => n,
            Err(_) => {
                sh.diag(format!("shift: {}: numeric argument required", f.text));
                sh.set_status(1);
                return Ok(());
            }
        },
    };
    if n > sh.positional.len() {
        sh.set_status(1);
        return Ok(());
    }
    sh.positional.drain(..n);
    sh.set_status(0);
    Ok(())
}

pub(super) fn let_(sh: &mut Shell, argv: &[Field]) -> Exec {
    if argv.len() < 2 {
        sh.diag("let: expression expected");
        sh.set_status(1);
        return Ok(());
    }
    let mut last = 0;
    sh.arith_label = safesh_label::Label::empty();
    for f in &argv[1..] {
        last = match sh.eval_arith_data(&f.text, &f.label) {
            Ok(v) => v,
            // An error abandons `let` alone; one in a subscript (`Exit`)
            // ends the shell, as in bash.
            Err(Stop::Abort) => {
                sh.set_status(1);
                return Ok(());
            }
            Err(e) => return Err(e),
        };
    }
    sh.set_status(if last != 0 { 0 } else { 1 });
    sh.status_label = std::mem::take(&mut sh.arith_label);
    Ok(())
}
