//! Named descriptors: `exec {fd}>file`, `cmd {fd}<file`, `exec {fd}>&-`.
//!
//! brush-parser reads `{fd}>file` as the word `{fd}` and the redirection
//! `>file`: a word of that form right before a redirection without a
//! descriptor is taken as its name (bash needs them adjacent; a `{fd} >file`
//! with a blank between is rare enough to read the same). As in bash, the
//! shell picks the lowest free descriptor from 10, stores its number in the
//! variable, and the redirection outlives the command (it is applied as
//! `exec` applies one); `{fd}>&-` closes the descriptor the variable names.

use super::Shell;
use super::redirect::RedirectFailed;
use crate::interp::Stop;
use safesh_syntax::ast::{self, CommandPrefixOrSuffixItem as Item};

/// A redirection whose descriptor a variable names.
pub(crate) struct NamedRedirect {
    /// The variable (`fd` of `{fd}`).
    pub name: String,
    /// The redirection, its descriptor still unset.
    pub redirect: ast::IoRedirect,
}

/// The variable name of a `{name}` word.
fn braced_name(w: &ast::Word) -> Option<&str> {
    let name = w.value.strip_prefix('{')?.strip_suffix('}')?;
    let mut chars = name.chars();
    (chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then_some(name)
}

/// Whether `r` names no descriptor of its own (so `{name}` may give one).
fn without_fd(r: &ast::IoRedirect) -> bool {
    matches!(
        r,
        ast::IoRedirect::File(None, ..)
            | ast::IoRedirect::HereDocument(None, _)
            | ast::IoRedirect::HereString(None, _)
    )
}

/// Splits the named redirections out of `items`: the index of each `{name}`
/// word that names the redirection after it, with that redirection.
pub(crate) fn find(items: &[Item]) -> Vec<(usize, NamedRedirect)> {
    let mut out = Vec::new();
    for (i, pair) in items.windows(2).enumerate() {
        if let [Item::Word(w), Item::IoRedirect(r)] = pair
            && without_fd(r)
            && let Some(name) = braced_name(w)
        {
            out.push((
                i,
                NamedRedirect {
                    name: name.to_string(),
                    redirect: r.clone(),
                },
            ));
        }
    }
    out
}

/// `r` with descriptor `fd`.
fn with_fd(r: &ast::IoRedirect, fd: i32) -> ast::IoRedirect {
    match r.clone() {
        ast::IoRedirect::File(_, kind, target) => ast::IoRedirect::File(Some(fd), kind, target),
        ast::IoRedirect::HereDocument(_, doc) => ast::IoRedirect::HereDocument(Some(fd), doc),
        ast::IoRedirect::HereString(_, w) => ast::IoRedirect::HereString(Some(fd), w),
        other => other,
    }
}

/// Whether `r` closes its descriptor (`>&-`, `<&-`).
fn closes(r: &ast::IoRedirect) -> bool {
    matches!(
        r,
        ast::IoRedirect::File(_, _, ast::IoFileRedirectTarget::Duplicate(w)) if w.value == "-"
    )
}

impl Shell {
    /// Applies named redirections for good (as `exec` would). `Ok(Err(_))`:
    /// one failed (reported; the command does not run, status 1).
    pub(crate) fn apply_named_redirects(
        &mut self,
        named: &[NamedRedirect],
    ) -> Result<Result<(), RedirectFailed>, Stop> {
        for n in named {
            if closes(&n.redirect) {
                let value = self
                    .vars
                    .get(&n.name)
                    .map(|v| v.as_str().to_string())
                    .unwrap_or_default();
                let Ok(fd) = value.trim().parse::<i32>() else {
                    self.diag(format!("{value}: ambiguous redirect"));
                    self.set_status(1);
                    return Ok(Err(RedirectFailed));
                };
                if let Err(e) = self.apply_redirects(&[with_fd(&n.redirect, fd)])? {
                    return Ok(Err(e));
                }
                continue;
            }
            let Some(fd) = (10..i32::from(u16::MAX)).find(|fd| !self.fds.contains_key(fd)) else {
                self.diag("no free file descriptor");
                self.set_status(1);
                return Ok(Err(RedirectFailed));
            };
            if let Err(e) = self.apply_redirects(&[with_fd(&n.redirect, fd)])? {
                return Ok(Err(e));
            }
            let label = self.pc.clone();
            self.assign_scalar(&n.name, fd.to_string(), label)?;
        }
        Ok(Ok(()))
    }
}
