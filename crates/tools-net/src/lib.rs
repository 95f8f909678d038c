//! In-process network utilities: `curl` and `wget` on a real HTTP client
//! (reqwest, rustls). Everything a request sends is read through the context first,
//! then the host decides egress (`Host::egress`) before each connection and each
//! redirect hop; responses are reported with `Host::received_from` before any of
//! their bytes are written. Output files go through `ctx.create`.

use safesh_utils::UtilFn;

mod curl;
mod decode;
mod error;
mod output;
mod transfer;
mod wget;

/// The version of the local curl we imitate (its exit codes, its User-Agent).
pub const CURL_VERSION: &str = "7.88.1";
/// curl's default User-Agent, the same as the local curl's so servers see the same.
pub const CURL_UA: &str = "curl/7.88.1";

/// The hosts a network utility's command line names for its first requests (the
/// URLs as the utility itself parses its arguments, without argv[0]): lets a
/// check before running refuse a host that is not on the network list. `None`
/// for another tool or arguments that do not parse (decided when run).
pub fn first_hosts(tool: &str, args: &[String]) -> Option<Vec<String>> {
    match tool {
        "curl" => curl::first_hosts(args),
        "wget" => wget::first_hosts(args),
        _ => None,
    }
}

/// The utilities of this crate, by name (sorted).
pub static UTILS: &[(&str, UtilFn)] = &[("curl", curl::curl), ("wget", wget::wget)];
