//! curl's command line: short options that bundle (`-sSL`), values attached or
//! separate (`-ofile`, `-o file`), long options with a separate value only (curl
//! has no `--opt=value`), `--no-` for booleans, and every other word a URL.

/// One option: short letter (or none), long name, takes a value.
type Def = (Option<char>, &'static str, bool);

/// The options we implement.
const DEFS: &[Def] = &[
    (Some('s'), "silent", false),
    (Some('S'), "show-error", false),
    (Some('f'), "fail", false),
    (None, "fail-with-body", false),
    (Some('L'), "location", false),
    (None, "max-redirs", true),
    (Some('o'), "output", true),
    (Some('O'), "remote-name", false),
    (None, "create-dirs", false),
    (Some('d'), "data", true),
    (None, "data-ascii", true),
    (None, "data-binary", true),
    (None, "data-raw", true),
    (None, "data-urlencode", true),
    (None, "json", true),
    (Some('G'), "get", false),
    (Some('F'), "form", true),
    (None, "form-string", true),
    (Some('H'), "header", true),
    (Some('X'), "request", true),
    (Some('T'), "upload-file", true),
    (Some('u'), "user", true),
    (Some('A'), "user-agent", true),
    (Some('e'), "referer", true),
    (Some('b'), "cookie", true),
    (Some('i'), "include", false),
    (Some('I'), "head", false),
    (Some('w'), "write-out", true),
    (Some('m'), "max-time", true),
    (None, "connect-timeout", true),
    (None, "retry", true),
    (Some('k'), "insecure", false),
    (Some('v'), "verbose", false),
    (None, "compressed", false),
    (Some('#'), "progress-bar", false),
    (None, "url", true),
    (Some('h'), "help", false),
    (Some('V'), "version", false),
    // Accepted and ignored: they change nothing we do (no progress meter, no
    // buffering choice, HTTP/1.1 only, no URL globbing).
    (None, "no-progress-meter", false),
    (Some('N'), "no-buffer", false),
    (None, "http1.1", false),
    (Some('g'), "globoff", false),
];

/// A parsed option: its long name, its value, and whether it was negated (`--no-x`).
#[derive(Clone, Debug)]
pub struct Opt {
    /// Long name.
    pub name: &'static str,
    /// Value, for options that take one.
    pub value: Option<String>,
    /// `--no-NAME` was used.
    pub negated: bool,
}

/// Options in order, and URLs.
#[derive(Clone, Debug, Default)]
pub struct Parsed {
    /// Options in order.
    pub opts: Vec<Opt>,
    /// URLs (operands and `--url`).
    pub urls: Vec<String>,
}

impl Parsed {
    /// True if boolean `name` is on (last occurrence wins).
    pub fn on(&self, name: &str) -> bool {
        self.opts
            .iter()
            .rev()
            .find(|o| o.name == name)
            .is_some_and(|o| !o.negated)
    }

    /// The last value of `name`.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.opts
            .iter()
            .rev()
            .find(|o| o.name == name)
            .and_then(|o| o.value.as_deref())
    }
}

/// A command-line error, worded like curl (`option --x: is unknown`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

/// Parses curl's arguments (without argv[0]).
pub fn parse(args: &[String]) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let mut i = 0;
    let mut only_urls = false;
    while let Some(a) = args.get(i) {
        i += 1;
        if only_urls || !a.starts_with('-') || a == "-" {
            out.urls.push(a.clone());
            continue;
        }
        if a == "--" {
            only_urls = true;
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (def, negated) = match DEFS.iter().find(|d| d.1 == long) {
                Some(d) => (d, false),
                None => match long
                    .strip_prefix("no-")
                    .and_then(|n| DEFS.iter().find(|d| d.1 == n && !d.2))
                {
                    Some(d) => (d, true),
                    None => return Err(ParseError(format!("option {a}: is unknown"))),
                },
            };
            let value = if def.2 {
                let Some(v) = args.get(i) else {
                    return Err(ParseError(format!("option {a}: requires parameter")));
                };
                i += 1;
                Some(v.clone())
            } else {
                None
            };
            push(&mut out, def, value, negated);
            continue;
        }
        // A bundle of short options.
        let body: Vec<char> = a.chars().skip(1).collect();
        let mut k = 0;
        while let Some(&c) = body.get(k) {
            k += 1;
            let Some(def) = DEFS.iter().find(|d| d.0 == Some(c)) else {
                return Err(ParseError(format!("option -{c}: is unknown")));
            };
            if def.2 {
                let rest: String = body.get(k..).unwrap_or(&[]).iter().collect();
                let value = if !rest.is_empty() {
                    rest
                } else if let Some(v) = args.get(i) {
                    i += 1;
                    v.clone()
                } else {
                    return Err(ParseError(format!("option -{c}: requires parameter")));
                };
                push(&mut out, def, Some(value), false);
                break;
            }
            push(&mut out, def, None, false);
        }
    }
    Ok(out)
}

fn push(out: &mut Parsed, def: &Def, value: Option<String>, negated: bool) {
    if def.1 == "url" {
        if let Some(v) = value {
            out.urls.push(v);
        }
        return;
    }
    out.opts.push(Opt {
        name: def.1,
        value,
        negated,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(a: &[&str]) -> Result<Parsed, ParseError> {
        parse(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn bundles_and_values() {
        let r = p(&["-sSLofile", "http://x", "-H", "A: b", "--no-location"]).unwrap();
        assert!(r.on("silent") && r.on("show-error"));
        assert!(!r.on("location"));
        assert_eq!(r.value("output"), Some("file"));
        assert_eq!(r.value("header"), Some("A: b"));
        assert_eq!(r.urls, vec!["http://x"]);
    }

    #[test]
    fn errors_like_curl() {
        assert_eq!(p(&["--bogus"]).unwrap_err().0, "option --bogus: is unknown");
        assert_eq!(p(&["-o"]).unwrap_err().0, "option -o: requires parameter");
        assert!(p(&["--output=x"]).is_err());
    }
}
