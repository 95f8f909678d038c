//! Conditional expressions: `[[ … ]]` and `test` / `[`.

use super::{Shell, Stop};
use crate::error::Refusal;
use crate::probe::Probe;
use brush_parser::ast::{
    BinaryPredicate as BP, ExtendedTestExpr as X, TestExpr as T, UnaryPredicate as UP,
};
use safesh_label::Label;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;

impl Shell {
    /// A unary file or string test. A file test looks at the entry decided on
    /// ([`Shell::probe`]): a name outside the read roots, or a symlink that
    /// leads out of them, is refused rather than answered.
    pub(crate) fn unary_test(&self, pred: &UP, s: &str) -> Result<bool, Refusal> {
        if !is_file_test(pred) {
            return Ok(self.string_unary_test(pred, s));
        }
        if s.is_empty() {
            return Ok(false);
        }
        let follow = !matches!(pred, UP::FileExistsAndIsSymlink);
        let probe = self.probe(Path::new(s), follow)?;
        let meta = || probe.meta();
        let stream = |input: bool| matches!(probe, Probe::Descriptor { input: i } if i == input);
        Ok(match pred {
            UP::FileExists => probe.exists(),
            UP::FileExistsAndIsDir => meta().is_some_and(|m| m.is_dir()),
            UP::FileExistsAndIsRegularFile => meta().is_some_and(|m| m.is_file()),
            UP::FileExistsAndIsSymlink => meta().is_some_and(|m| m.file_type().is_symlink()),
            UP::FileExistsAndIsNotZeroLength => meta().is_some_and(|m| m.len() > 0),
            UP::FileExistsAndIsReadable => {
                stream(true) || meta().is_some_and(|m| permitted(m, 0o4))
            }
            UP::FileExistsAndIsWritable => {
                stream(false)
                    || meta().is_some_and(|m| permitted(m, 0o2))
                        && self.check_write_path(&self.absolute(Path::new(s))).is_ok()
            }
            UP::FileExistsAndIsExecutable => meta().is_some_and(|m| permitted(m, 0o1)),
            UP::FileExistsAndIsBlockSpecialFile => {
                meta().is_some_and(|m| m.file_type().is_block_device())
            }
            UP::FileExistsAndIsCharSpecialFile => {
                meta().is_some_and(|m| m.file_type().is_char_device())
            }
            // The script's streams are pipes between its commands.
            UP::FileExistsAndIsFifo => {
                matches!(probe, Probe::Descriptor { .. })
                    || meta().is_some_and(|m| m.file_type().is_fifo())
            }
            UP::FileExistsAndIsSocket => meta().is_some_and(|m| m.file_type().is_socket()),
            UP::FileExistsAndIsSetgid => {
                meta().is_some_and(|m| m.permissions().mode() & 0o2000 != 0)
            }
            UP::FileExistsAndIsSetuid => {
                meta().is_some_and(|m| m.permissions().mode() & 0o4000 != 0)
            }
            UP::FileExistsAndHasStickyBit => {
                meta().is_some_and(|m| m.permissions().mode() & 0o1000 != 0)
            }
            UP::FileExistsAndOwnedByEffectiveUserId => {
                // SAFETY: geteuid has no preconditions.
                meta().is_some_and(|m| m.uid() == unsafe { libc::geteuid() })
            }
            UP::FileExistsAndOwnedByEffectiveGroupId => {
                // SAFETY: getegid has no preconditions.
                meta().is_some_and(|m| m.gid() == unsafe { libc::getegid() })
            }
            UP::FileExistsAndModifiedSinceLastRead => meta().is_some_and(|m| m.mtime() > m.atime()),
            _ => false,
        })
    }

    /// The unary tests that do not look at a file.
    fn string_unary_test(&self, pred: &UP, s: &str) -> bool {
        match pred {
            UP::StringHasZeroLength => s.is_empty(),
            UP::StringHasNonZeroLength => !s.is_empty(),
            UP::FdIsOpenTerminal => {
                s.trim().parse::<i32>().is_ok_and(|fd| {
                    (0..=2).contains(&fd) && {
                        // SAFETY: isatty only inspects the descriptor.
                        unsafe { libc::isatty(fd) == 1 }
                    }
                })
            }
            UP::ShellOptionEnabled => crate::builtins::long_option(self, s).unwrap_or(false),
            UP::ShellVariableIsSetAndAssigned => self.var_is_set(s),
            UP::ShellVariableIsSetAndNameRef => self
                .vars
                .get(s)
                .is_some_and(|v| v.attrs.nameref && !v.as_str().is_empty()),
            _ => false,
        }
    }

    /// `-v NAME[SUBSCRIPT]`: an indexed array's subscript is arithmetic, as
    /// anywhere else (`a[i]`, `a[1+1]`, `a[-1]`), and an error in it ends a
    /// string script; everything else is [`Shell::var_is_set`].
    fn element_is_set(&mut self, s: &str) -> Result<bool, Stop> {
        if let Some((name, idx)) = s.strip_suffix(']').and_then(|x| x.split_once('['))
            && idx != "@"
            && idx != "*"
            && let Some(super::Value::Array(_)) = self.vars.get(name).map(|v| &v.value)
        {
            let i = self.eval_subscript(idx)?;
            let i = self.vars.element_index(name, i);
            return Ok(matches!(
                self.vars.get(name).map(|v| &v.value),
                Some(super::Value::Array(a)) if a.contains_key(&i)
            ));
        }
        Ok(self.var_is_set(s))
    }

    fn var_is_set(&self, s: &str) -> bool {
        // `-v 1`: a positional parameter.
        if let Ok(n) = s.parse::<usize>() {
            return n == 0 || n <= self.positional.len();
        }
        if let Some((name, idx)) = s.strip_suffix(']').and_then(|x| x.split_once('[')) {
            return match self.vars.get(name).map(|v| &v.value) {
                Some(super::Value::Array(a)) => {
                    idx == "@" || idx == "*" || idx.parse::<i64>().is_ok_and(|i| a.contains_key(&i))
                }
                Some(super::Value::Str(_)) => idx == "0" || idx == "@" || idx == "*",
                Some(super::Value::Assoc(a)) => idx == "@" || idx == "*" || a.contains_key(idx),
                None => false,
            };
        }
        self.vars.get(s).is_some()
    }

    fn file_compare(&self, pred: &BP, a: &str, b: &str) -> Result<bool, Refusal> {
        let entry = |s: &str| -> Result<Option<std::fs::Metadata>, Refusal> {
            if s.is_empty() {
                return Ok(None);
            }
            Ok(self.probe(Path::new(s), true)?.meta().cloned())
        };
        let (ma, mb) = (entry(a)?, entry(b)?);
        let mt = |m: &std::fs::Metadata| (m.mtime(), m.mtime_nsec());
        Ok(match pred {
            BP::FilesReferToSameDeviceAndInodeNumbers => match (ma, mb) {
                (Some(x), Some(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
                _ => false,
            },
            BP::LeftFileIsNewerOrExistsWhenRightDoesNot => match (ma, mb) {
                (Some(x), Some(y)) => mt(&x) > mt(&y),
                (Some(_), None) => true,
                _ => false,
            },
            BP::LeftFileIsOlderOrDoesNotExistWhenRightDoes => match (ma, mb) {
                (Some(x), Some(y)) => mt(&x) < mt(&y),
                (None, Some(_)) => true,
                _ => false,
            },
            _ => false,
        })
    }

    /// Evaluates `[[ … ]]`: Some(result), or None for an error (status 2).
    pub(crate) fn eval_extended_test(&mut self, e: &X) -> Result<Option<bool>, Stop> {
        Ok(match e {
            X::And(a, b) => match self.eval_extended_test(a)? {
                Some(true) => self.eval_extended_test(b)?,
                other => other,
            },
            X::Or(a, b) => match self.eval_extended_test(a)? {
                Some(false) => self.eval_extended_test(b)?,
                other => other,
            },
            X::Not(a) => self.eval_extended_test(a)?.map(|v| !v),
            X::Parenthesized(a) => self.eval_extended_test(a)?,
            X::UnaryTest(pred, w) => {
                let v = self.expand_word_single(w)?;
                self.pc.join_assign(&v.label);
                if matches!(pred, UP::ShellVariableIsSetAndAssigned) {
                    Some(self.element_is_set(&v.text)?)
                } else {
                    Some(self.unary_test(pred, &v.text).map_err(refused)?)
                }
            }
            X::BinaryTest(pred, l, r) => {
                let left = self.expand_word_single(l)?;
                self.pc.join_assign(&left.label);
                match pred {
                    BP::StringExactlyMatchesPattern | BP::StringDoesNotExactlyMatchPattern => {
                        let pat = self.expand_pattern(r)?;
                        let icase = self.shopt.nocasematch;
                        let m =
                            super::pattern::matches(&pat, &left.text, icase, self.utf8_locale());
                        Some(m == matches!(pred, BP::StringExactlyMatchesPattern))
                    }
                    BP::StringMatchesRegex => {
                        let (re, label) = self.expand_regex(r)?;
                        self.pc.join_assign(&label);
                        self.regex_match(&left.text, &re, &left.label.join(&label))?
                    }
                    BP::ArithmeticEqualTo
                    | BP::ArithmeticNotEqualTo
                    | BP::ArithmeticLessThan
                    | BP::ArithmeticLessThanOrEqualTo
                    | BP::ArithmeticGreaterThan
                    | BP::ArithmeticGreaterThanOrEqualTo => {
                        let right = self.expand_word_single(r)?;
                        // An arithmetic error (`1x`, `08`) makes this test false
                        // and `[[` goes on (bash), unlike `$((…))`.
                        let a = self.eval_arith_data(&left.text, &left.label);
                        let b = if a.is_ok() {
                            self.eval_arith_data(&right.text, &right.label)
                        } else {
                            Ok(0)
                        };
                        match (a, b) {
                            (Ok(a), Ok(b)) => Some(arith_cmp(pred, a, b)),
                            (Err(Stop::Abort), _) | (_, Err(Stop::Abort)) => Some(false),
                            (Err(e), _) | (_, Err(e)) => return Err(e),
                        }
                    }
                    _ => {
                        let right = self.expand_word_single(r)?;
                        self.pc.join_assign(&right.label);
                        Some(
                            self.string_or_file_binary(pred, &left.text, &right.text)
                                .map_err(refused)?,
                        )
                    }
                }
            }
        })
    }

    fn string_or_file_binary(&self, pred: &BP, a: &str, b: &str) -> Result<bool, Refusal> {
        Ok(match pred {
            BP::StringExactlyMatchesString | BP::StringExactlyMatchesPattern => a == b,
            BP::StringDoesNotExactlyMatchString | BP::StringDoesNotExactlyMatchPattern => a != b,
            BP::StringContainsSubstring => a.contains(b),
            BP::LeftSortsBeforeRight => a.as_bytes() < b.as_bytes(),
            BP::LeftSortsAfterRight => a.as_bytes() > b.as_bytes(),
            _ => return self.file_compare(pred, a, b),
        })
    }

    /// `Some(matched)`, or `None` for an invalid expression.
    fn regex_match(&mut self, text: &str, re: &str, label: &Label) -> Result<Option<bool>, Stop> {
        let translated =
            safesh_utils::posix_regex::translate(re, safesh_utils::posix_regex::Dialect::Extended)
                .unwrap_or_else(|_| re.to_string());
        if ere_rejected(re) {
            return Ok(None);
        }
        // In the C locale a character is a byte (`.` matches one byte of `é`),
        // when the expression can be matched bytewise at all.
        let bytewise = (!text.is_ascii() || !re.is_ascii()) && !self.utf8_locale();
        let groups = match bytewise.then(|| {
            use safesh_utils::posix_regex::{Dialect, Options, Target, translate_with};
            let opts = Options {
                icase: self.shopt.nocasematch,
                target: Target::Bytes,
                ..Options::new(Dialect::Extended)
            };
            let t = translate_with(re, &opts).map_err(drop)?;
            regex::bytes::Regex::new(&t.pattern).map_err(drop)
        }) {
            Some(Ok(rx)) => {
                let bytes = safesh_utils::word_bytes::word_to_bytes(text);
                rx.captures(&bytes).map(|caps| {
                    caps.iter()
                        .map(|c| {
                            c.map(|m| {
                                safesh_utils::word_bytes::word_from_bytes(m.as_bytes()).into_owned()
                            })
                            .unwrap_or_default()
                        })
                        .collect::<Vec<_>>()
                })
            }
            _ => {
                let Ok(rx) = regex::RegexBuilder::new(&translated)
                    .case_insensitive(self.shopt.nocasematch)
                    .build()
                else {
                    // bash: an invalid regular expression is an error, status 2.
                    return Ok(None);
                };
                rx.captures(text).map(|caps| {
                    caps.iter()
                        .map(|c| c.map(|m| m.as_str().to_string()).unwrap_or_default())
                        .collect::<Vec<_>>()
                })
            }
        };
        match groups {
            Some(groups) => {
                let items = (0_i64..).zip(groups).collect();
                let _ = self.vars.set_array("BASH_REMATCH", items, label.clone());
                Ok(Some(true))
            }
            None => {
                let _ = self
                    .vars
                    .set_array("BASH_REMATCH", Default::default(), label.clone());
                Ok(Some(false))
            }
        }
    }

    /// Evaluates `test` / `[` arguments. Returns the exit status (0, 1, or 2 on error).
    pub(crate) fn eval_test_args(&mut self, args: &[String], name: &str) -> Result<i32, Stop> {
        let args: Vec<String> = if name == "[" {
            match args.last() {
                Some(l) if l == "]" => args[..args.len() - 1].to_vec(),
                _ => {
                    self.diag("[: missing `]'");
                    return Ok(2);
                }
            }
        } else {
            args.to_vec()
        };
        if args.is_empty() {
            return Ok(1);
        }
        let parsed = safesh_syntax::catch_quietly(|| brush_parser::test_command::parse(&args));
        let expr = match parsed {
            Ok(Ok(e)) => e,
            _ => {
                let detail = if args.len() > 1 {
                    args[1].clone()
                } else {
                    args[0].clone()
                };
                self.diag(format!("{name}: {detail}: unary operator expected"));
                return Ok(2);
            }
        };
        Ok(match self.eval_test_expr(&expr, name) {
            Ok(true) => 0,
            Ok(false) => 1,
            Err(TestError::Usage) => 2,
            Err(TestError::Refused(r)) => return Err(refused(r)),
            Err(TestError::Stop(stop)) => return Err(stop),
        })
    }

    fn eval_test_expr(&mut self, e: &T, name: &str) -> Result<bool, TestError> {
        Ok(match e {
            T::False => false,
            T::Literal(s) => !s.is_empty(),
            T::And(a, b) => self.eval_test_expr(a, name)? && self.eval_test_expr(b, name)?,
            T::Or(a, b) => self.eval_test_expr(a, name)? || self.eval_test_expr(b, name)?,
            T::Not(a) => !self.eval_test_expr(a, name)?,
            T::Parenthesized(a) => self.eval_test_expr(a, name)?,
            T::UnaryTest(UP::ShellVariableIsSetAndAssigned, s) => {
                self.element_is_set(s).map_err(TestError::Stop)?
            }
            T::UnaryTest(p, s) => self.unary_test(p, s)?,
            T::BinaryTest(p, a, b) => match p {
                BP::ArithmeticEqualTo
                | BP::ArithmeticNotEqualTo
                | BP::ArithmeticLessThan
                | BP::ArithmeticLessThanOrEqualTo
                | BP::ArithmeticGreaterThan
                | BP::ArithmeticGreaterThanOrEqualTo => {
                    let x = self.test_int(a, name).map_err(|()| TestError::Usage)?;
                    let y = self.test_int(b, name).map_err(|()| TestError::Usage)?;
                    arith_cmp(p, x, y)
                }
                BP::StringExactlyMatchesPattern => a == b,
                BP::StringDoesNotExactlyMatchPattern => a != b,
                _ => self.string_or_file_binary(p, a, b)?,
            },
        })
    }

    fn test_int(&self, s: &str, name: &str) -> Result<i64, ()> {
        let t = s.trim();
        match t.parse::<i64>() {
            Ok(v) => Ok(v),
            Err(_) => {
                self.diag(format!("{name}: {s}: integer expression expected"));
                Err(())
            }
        }
    }
}

/// Why `test` / `[` did not give an answer.
enum TestError {
    /// A usage error (status 2, already reported).
    Usage,
    /// Evaluating an operand stopped the command (an error in a subscript).
    Stop(Stop),
    /// A file test on a path the script may not look at: the script stops.
    Refused(Refusal),
}

impl From<Refusal> for TestError {
    fn from(r: Refusal) -> Self {
        TestError::Refused(r)
    }
}

/// A refusal as what stops the script.
fn refused(r: Refusal) -> Stop {
    Stop::Refused(Box::new(r))
}

/// The tests that look at a file (the rest look at strings, variables,
/// options or descriptor numbers).
fn is_file_test(pred: &UP) -> bool {
    !matches!(
        pred,
        UP::StringHasZeroLength
            | UP::StringHasNonZeroLength
            | UP::FdIsOpenTerminal
            | UP::ShellOptionEnabled
            | UP::ShellVariableIsSetAndAssigned
            | UP::ShellVariableIsSetAndNameRef
    )
}

/// What `access(2)` would answer for the permission `bit` (4 read, 2 write, 1
/// execute) on the entry decided on, for the effective user: computed from the
/// entry's own mode rather than asked by name again. Root may read and write
/// anything and execute what has any execute bit (or is a directory).
fn permitted(m: &std::fs::Metadata, bit: u32) -> bool {
    let mode = m.mode();
    // SAFETY: geteuid and getegid have no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    if uid == 0 {
        return bit != 1 || m.is_dir() || mode & 0o111 != 0;
    }
    let shift = if m.uid() == uid {
        6
    } else if m.gid() == gid || in_groups(m.gid()) {
        3
    } else {
        0
    };
    (mode >> shift) & bit != 0
}

/// True when `gid` is one of the process's supplementary groups.
fn in_groups(gid: u32) -> bool {
    // SAFETY: a zero-length query returns the count and writes nothing.
    let n = unsafe { libc::getgroups(0, std::ptr::null_mut()) };
    let Ok(len) = usize::try_from(n) else {
        return false;
    };
    let mut groups = vec![0 as libc::gid_t; len];
    // SAFETY: `groups` has room for `n` entries.
    let got = unsafe { libc::getgroups(n, groups.as_mut_ptr()) };
    usize::try_from(got).is_ok_and(|got| groups.iter().take(got).any(|&g| g == gid))
}

fn arith_cmp(p: &BP, a: i64, b: i64) -> bool {
    match p {
        BP::ArithmeticEqualTo => a == b,
        BP::ArithmeticNotEqualTo => a != b,
        BP::ArithmeticLessThan => a < b,
        BP::ArithmeticLessThanOrEqualTo => a <= b,
        BP::ArithmeticGreaterThan => a > b,
        _ => a >= b,
    }
}

/// True for an extended regular expression glibc's `regcomp` rejects but the
/// translation would accept: a repetition operator with nothing to repeat (`*`,
/// `+`, `?`, `{1}` at the start, after `^`, `(` or `|`) and a `{` that is no
/// interval.
/// bash then fails `[[ =~ ]]` with status 2.
fn ere_rejected(re: &str) -> bool {
    let b = re.as_bytes();
    let mut i = 0;
    let mut at_start = true;
    while i < b.len() {
        match b[i] {
            b'\\' => {
                i += 2;
                at_start = false;
                continue;
            }
            b'[' => {
                // Skip the bracket expression (`]` first is literal).
                let mut j = i + 1;
                if b.get(j) == Some(&b'^') {
                    j += 1;
                }
                if b.get(j) == Some(&b']') {
                    j += 1;
                }
                while j < b.len() && b[j] != b']' {
                    j += 1;
                }
                i = j + 1;
                at_start = false;
                continue;
            }
            b'*' | b'+' | b'?' if at_start => return true,
            b'{' => {
                // Only an interval after something to repeat: `{N}`, `{N,}`,
                // `{N,M}`, `{,M}`; any other `{` is an error for glibc.
                if at_start {
                    return true;
                }
                let rest = &b[i + 1..];
                let n1 = rest.iter().take_while(|c| c.is_ascii_digit()).count();
                let (n2, after) = match rest.get(n1) {
                    Some(b',') => {
                        let n2 = rest[n1 + 1..]
                            .iter()
                            .take_while(|c| c.is_ascii_digit())
                            .count();
                        (n2, n1 + 1 + n2)
                    }
                    _ => (0, n1),
                };
                if n1 + n2 == 0 || rest.get(after) != Some(&b'}') {
                    return true;
                }
                i += 1 + after;
                at_start = false;
            }
            b'(' | b'|' => at_start = true,
            b'^' if at_start => {}
            _ => at_start = false,
        }
        i += 1;
    }
    false
}
