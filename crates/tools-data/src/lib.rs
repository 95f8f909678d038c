//! In-process utilities: printing, encoding and comparing (`echo`, `printf`, `expr`,
//! `seq`, `yes`, `base64`, `md5sum`, `sha1sum` … `sha512sum`, `cmp`, `comm`, `od`, `diff`),
//! faithful to bash 5.2 builtins and GNU coreutils / diffutils in the C locale.

use safesh_utils::UtilFn;

mod b64;
mod cfmt;
mod cmp;
mod comm;
mod diff;
mod echo;
mod esc;
mod expr;
mod ld;
mod num;
mod od;
mod od_float;
mod od_strings;
mod out;
mod printf;
mod quote;
mod seq;
mod sum;
mod tz;
mod yes;

pub use printf::printf_builtin;

/// The utilities of this crate, by name (sorted).
pub static UTILS: &[(&str, UtilFn)] = &[
    ("base64", b64::base64),
    ("cmp", cmp::cmp),
    ("comm", comm::comm),
    ("diff", diff::diff),
    ("echo", echo::echo),
    ("expr", expr::expr),
    ("md5sum", sum::md5sum),
    ("od", od::od),
    ("printf", printf::printf),
    ("seq", seq::seq),
    ("sha1sum", sum::sha1sum),
    ("sha224sum", sum::sha224sum),
    ("sha256sum", sum::sha256sum),
    ("sha384sum", sum::sha384sum),
    ("sha512sum", sum::sha512sum),
    ("yes", yes::yes),
];

#[cfg(test)]
mod tests {
    #[test]
    fn table_is_sorted_and_unique() {
        let names: Vec<&str> = super::UTILS.iter().map(|(n, _)| *n).collect();
        assert!(names.windows(2).all(|w| w[0] < w[1]), "{names:?}");
    }
}
