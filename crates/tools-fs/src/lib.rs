//! In-process utilities: files, directories and running inner commands.
//!
//! `ls`, `find`, `xargs`, `cp`, `mv`, `rm`, `stat`, `du`, `tree`, `date` and the
//! other file tools, faithful to GNU coreutils 9 / findutils 4.9 in the C locale.
//! Every file access goes through the context (`ctx.check_read`, `ctx.check_write`,
//! `ctx.open`, `ctx.create`) and inner commands through `ctx.host.run`.

use safesh_utils::UtilFn;

mod basename;
mod canon;
mod chmod;
mod common;
mod cp;
mod date;
mod dirname;
mod du;
mod find;
mod glob;
mod ln;
mod ls;
mod mkdir;
mod mktemp;
mod mode;
mod mv;
mod printenv;
mod readlink;
mod realpath;
mod rm;
mod rmdir;
mod sleep;
mod stat;
mod strftime;
mod targets;
mod tee;
mod touch;
mod tree;
mod which;
mod xargs;

/// The utilities of this crate, by name (sorted).
pub static UTILS: &[(&str, UtilFn)] = &[
    ("basename", basename::basename),
    ("chmod", chmod::chmod),
    ("cp", cp::cp),
    ("date", date::date),
    ("dirname", dirname::dirname),
    ("du", du::du),
    ("find", find::find),
    ("ln", ln::ln),
    ("ls", ls::ls),
    ("mkdir", mkdir::mkdir),
    ("mktemp", mktemp::mktemp),
    ("mv", mv::mv),
    ("printenv", printenv::printenv),
    ("readlink", readlink::readlink),
    ("realpath", realpath::realpath),
    ("rm", rm::rm),
    ("rmdir", rmdir::rmdir),
    ("sleep", sleep::sleep),
    ("stat", stat::stat),
    ("tee", tee::tee),
    ("touch", touch::touch),
    ("tree", tree::tree),
    ("which", which::which),
    ("xargs", xargs::xargs),
];
