//! Conditional expressions: `[[ … ]]` and `test` / `[`.

use super::{Shell, Stop};
use brush_parser::ast::{
    BinaryPredicate as BP, ExtendedTestExpr as X, TestExpr as T, UnaryPredicate as UP,
};
use safesh_label::Label;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::PathBuf;

impl Shell {
    fn path_of(&self, s: &str) -> PathBuf {
        let p = PathBuf::from(s);
        if p.is_absolute() { p } else { self.cwd.join(p) }
    }

    /// A unary file or string test.
    pub(crate) fn unary_test(&self, pred: &UP, s: &str) -> bool {
        let meta = || std::fs::metadata(self.path_of(s)).ok();
        match pred {
            UP::StringHasZeroLength => s.is_empty(),
            UP::StringHasNonZeroLength => !s.is_empty(),
            UP::FileExists => !s.is_empty() && meta().is_some(),
            UP::FileExistsAndIsDir => meta().is_some_and(|m| m.is_dir()),
            UP::FileExistsAndIsRegularFile => meta().is_some_and(|m| m.is_file()),
            UP::FileExistsAndIsSymlink => {
                std::fs::symlink_metadata(self.path_of(s)).is_ok_and(|m| m.file_type().is_symlink())
            }
            UP::FileExistsAndIsNotZeroLength => meta().is_some_and(|m| m.len() > 0),
            UP::FileExistsAndIsReadable => meta().is_some() && access(&self.path_of(s), libc::R_OK),
            UP::FileExistsAndIsWritable => meta().is_some() && access(&self.path_of(s), libc::W_OK),
            UP::FileExistsAndIsExecutable => {
                meta().is_some() && access(&self.path_of(s), libc::X_OK)
            }
            UP::FileExistsAndIsBlockSpecialFile => {
                meta().is_some_and(|m| m.file_type().is_block_device())
            }
            UP::FileExistsAndIsCharSpecialFile => {
                meta().is_some_and(|m| m.file_type().is_char_device())
            }
            UP::FileExistsAndIsFifo => meta().is_some_and(|m| m.file_type().is_fifo()),
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
            UP::FdIsOpenTerminal => {
                s.trim().parse::<i32>().is_ok_and(|fd| {
                    (0..=2).contains(&fd) && {
                        // SAFETY: isatty only inspects the descriptor.
                        unsafe { libc::isatty(fd) == 1 }
                    }
                })
            }
            UP::ShellOptionEnabled => match s {
                "errexit" => self.opts.errexit,
                "nounset" => self.opts.nounset,
                "pipefail" => self.opts.pipefail,
                "noglob" => self.opts.noglob,
                "noclobber" => self.opts.noclobber,
                "xtrace" => self.opts.xtrace,
                _ => false,
            },
            UP::ShellVariableIsSetAndAssigned => self.var_is_set(s),
            UP::ShellVariableIsSetAndNameRef => false,
        }
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

    fn file_compare(&self, pred: &BP, a: &str, b: &str) -> bool {
        let ma = std::fs::metadata(self.path_of(a)).ok();
        let mb = std::fs::metadata(self.path_of(b)).ok();
        let mt = |m: &std::fs::Metadata| (m.mtime(), m.mtime_nsec());
        match pred {
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
        }
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
                Some(self.unary_test(pred, &v.text))
            }
            X::BinaryTest(pred, l, r) => {
                let left = self.expand_word_single(l)?;
                self.pc.join_assign(&left.label);
                match pred {
                    BP::StringExactlyMatchesPattern | BP::StringDoesNotExactlyMatchPattern => {
                        let pat = self.expand_pattern(r)?;
                        let m =
                            super::pattern::matches(&pat, &left.text, false, self.utf8_locale());
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
                        let a = self.eval_arith_data(&left.text, &left.label)?;
                        let b = self.eval_arith_data(&right.text, &right.label)?;
                        Some(arith_cmp(pred, a, b))
                    }
                    _ => {
                        let right = self.expand_word_single(r)?;
                        self.pc.join_assign(&right.label);
                        Some(self.string_or_file_binary(pred, &left.text, &right.text))
                    }
                }
            }
        })
    }

    fn string_or_file_binary(&self, pred: &BP, a: &str, b: &str) -> bool {
        match pred {
            BP::StringExactlyMatchesString | BP::StringExactlyMatchesPattern => a == b,
            BP::StringDoesNotExactlyMatchString | BP::StringDoesNotExactlyMatchPattern => a != b,
            BP::StringContainsSubstring => a.contains(b),
            BP::LeftSortsBeforeRight => a.as_bytes() < b.as_bytes(),
            BP::LeftSortsAfterRight => a.as_bytes() > b.as_bytes(),
            _ => self.file_compare(pred, a, b),
        }
    }

    /// `Some(matched)`, or `None` for an invalid expression.
    fn regex_match(&mut self, text: &str, re: &str, label: &Label) -> Result<Option<bool>, Stop> {
        let translated =
            safesh_utils::posix_regex::translate(re, safesh_utils::posix_regex::Dialect::Extended)
                .unwrap_or_else(|_| re.to_string());
        let Ok(rx) = regex::Regex::new(&translated) else {
            // bash: an invalid regular expression is an error, status 2.
            return Ok(None);
        };
        match rx.captures(text) {
            Some(caps) => {
                let mut items = std::collections::BTreeMap::new();
                for (i, c) in caps.iter().enumerate() {
                    items.insert(
                        i as i64,
                        c.map(|m| m.as_str().to_string()).unwrap_or_default(),
                    );
                }
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
    pub(crate) fn eval_test_args(&mut self, args: &[String], name: &str) -> i32 {
        let args: Vec<String> = if name == "[" {
            match args.last() {
                Some(l) if l == "]" => args[..args.len() - 1].to_vec(),
                _ => {
                    self.diag("[: missing `]'");
                    return 2;
                }
            }
        } else {
            args.to_vec()
        };
        if args.is_empty() {
            return 1;
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
                return 2;
            }
        };
        match self.eval_test_expr(&expr, name) {
            Ok(true) => 0,
            Ok(false) => 1,
            Err(()) => 2,
        }
    }

    fn eval_test_expr(&mut self, e: &T, name: &str) -> Result<bool, ()> {
        Ok(match e {
            T::False => false,
            T::Literal(s) => !s.is_empty(),
            T::And(a, b) => self.eval_test_expr(a, name)? && self.eval_test_expr(b, name)?,
            T::Or(a, b) => self.eval_test_expr(a, name)? || self.eval_test_expr(b, name)?,
            T::Not(a) => !self.eval_test_expr(a, name)?,
            T::Parenthesized(a) => self.eval_test_expr(a, name)?,
            T::UnaryTest(p, s) => self.unary_test(p, s),
            T::BinaryTest(p, a, b) => match p {
                BP::ArithmeticEqualTo
                | BP::ArithmeticNotEqualTo
                | BP::ArithmeticLessThan
                | BP::ArithmeticLessThanOrEqualTo
                | BP::ArithmeticGreaterThan
                | BP::ArithmeticGreaterThanOrEqualTo => {
                    let x = self.test_int(a, name)?;
                    let y = self.test_int(b, name)?;
                    arith_cmp(p, x, y)
                }
                BP::StringExactlyMatchesPattern => a == b,
                BP::StringDoesNotExactlyMatchPattern => a != b,
                _ => self.string_or_file_binary(p, a, b),
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

fn access(p: &std::path::Path, mode: i32) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    unsafe { libc::access(c.as_ptr(), mode) == 0 }
}
