//! The prompt: the working directory (under `$HOME` shortened to `~`) and the
//! last status when it is not 0. `PS2` continues an open construct.

use std::path::Path;

/// The continuation prompt (bash's `PS2`).
pub const CONTINUATION: &str = "> ";

/// `safesh ~/project $ `, or `safesh ~/project [1] $ ` after a failure.
pub fn primary(cwd: &Path, home: Option<&Path>, status: i32) -> String {
    let dir = shorten(cwd, home);
    if status == 0 {
        format!("safesh {dir} $ ")
    } else {
        format!("safesh {dir} [{status}] $ ")
    }
}

/// `cwd` with the home directory written `~`.
pub fn shorten(cwd: &Path, home: Option<&Path>) -> String {
    if let Some(home) = home.filter(|h| h.components().count() > 1)
        && let Ok(rest) = cwd.strip_prefix(home)
    {
        if rest.as_os_str().is_empty() {
            return "~".into();
        }
        return format!("~/{}", rest.display());
    }
    cwd.display().to_string()
}

/// The prompt in colour: the directory bold blue, a failed status red.
pub fn paint(prompt: &str) -> String {
    let Some(rest) = prompt.strip_prefix("safesh ") else {
        return prompt.to_string();
    };
    let Some(body) = rest.strip_suffix(" $ ") else {
        return prompt.to_string();
    };
    let (dir, status) = match body.rfind(" [") {
        Some(i) if body.ends_with(']') => (&body[..i], Some(&body[i + 1..])),
        _ => (body, None),
    };
    let status = status.map_or(String::new(), |s| format!(" \x1b[1;31m{s}\x1b[0m"));
    format!("\x1b[2msafesh\x1b[0m \x1b[1;34m{dir}\x1b[0m{status} $ ")
}

#[cfg(test)]
mod tests {
    use super::{paint, primary, shorten};
    use std::path::Path;

    #[test]
    fn home_is_shortened_and_status_shown_when_not_zero() {
        let home = Path::new("/home/ann");
        assert_eq!(shorten(Path::new("/home/ann/p"), Some(home)), "~/p");
        assert_eq!(shorten(Path::new("/home/ann"), Some(home)), "~");
        assert_eq!(shorten(Path::new("/home/annex"), Some(home)), "/home/annex");
        assert_eq!(shorten(Path::new("/tmp"), Some(Path::new("/"))), "/tmp");
        assert_eq!(primary(Path::new("/tmp"), None, 0), "safesh /tmp $ ");
        assert_eq!(
            primary(Path::new("/tmp"), None, 130),
            "safesh /tmp [130] $ "
        );
        assert!(paint("safesh /tmp [130] $ ").contains("\x1b[1;31m[130]"));
    }
}
