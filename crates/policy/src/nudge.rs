//! Nudges: advisory refusals that name a better way. `force` overrides a nudge and
//! nothing else. Configured nudges (`[[nudge]]`) come first, then these built-in ones.

/// A built-in nudge.
pub(crate) struct Builtin {
    pub commands: &'static [&'static str],
    pub message: &'static str,
    pub suggest: &'static str,
}

pub(crate) const BUILTIN: &[Builtin] = &[
    Builtin {
        commands: &[
            "vim", "vi", "nvim", "nano", "emacs", "pico", "micro", "joe", "ed", "ex", "hx", "kak",
        ],
        message: "interactive editors cannot run here (there is no terminal)",
        suggest: "write the file with a here-doc (cat > FILE <<'EOF' … EOF) or edit it with sed -i",
    },
    Builtin {
        commands: &["less", "more", "most", "pg", "man", "info"],
        message: "pagers wait for a terminal that is not there",
        suggest: "read the file with cat, head -n N, tail -n N or sed -n 'A,Bp'",
    },
    Builtin {
        commands: &["top", "htop", "btop", "atop", "iotop", "glances"],
        message: "interactive monitors never exit",
        suggest: "use a one-shot command (ps aux, free, df -h) instead",
    },
];

/// Sleeping longer than this (seconds) is nudged toward a background job.
pub(crate) const LONG_SLEEP_SECS: f64 = 60.0;

/// Total seconds of a `sleep` argument list (`1m 30s`), if it parses.
pub(crate) fn sleep_seconds(args: &[String]) -> Option<f64> {
    let mut total = 0.0;
    for a in args {
        let (num, unit) = match a.char_indices().last() {
            Some((i, c)) if c.is_ascii_alphabetic() => (&a[..i], c),
            _ => (a.as_str(), 's'),
        };
        let n: f64 = if num == "inf" || num == "infinity" {
            f64::INFINITY
        } else {
            num.parse().ok()?
        };
        total += n * match unit {
            's' => 1.0,
            'm' => 60.0,
            'h' => 3600.0,
            'd' => 86400.0,
            _ => return None,
        };
    }
    Some(total)
}
