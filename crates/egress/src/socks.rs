//! SOCKS5 (RFC 1928), `CONNECT` only, no authentication; by domain name or by IP.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::unix::net::UnixStream;

use crate::allow::Host;
use crate::pipe::{Mode, pipe};
use crate::proxy::{Shared, connect};

/// The first byte of a SOCKS5 greeting.
pub(crate) const VERSION: u8 = 5;

const NO_AUTH: u8 = 0;
const NO_METHOD: u8 = 0xFF;
const CMD_CONNECT: u8 = 1;
const GENERAL_FAILURE: u8 = 1;
const NOT_ALLOWED: u8 = 2;
const HOST_UNREACHABLE: u8 = 4;
const REFUSED: u8 = 5;
const CMD_UNSUPPORTED: u8 = 7;
const ATYP_UNSUPPORTED: u8 = 8;

enum Fail {
    /// The connection broke: nothing to answer.
    Io,
    /// Malformed or unsupported: answer with this reply code (if any) and log.
    Bad(Option<u8>, &'static str),
}

fn reply(c: &mut UnixStream, code: u8) -> std::io::Result<()> {
    // Bound address 0.0.0.0:0: the client cannot use it anyway.
    c.write_all(&[VERSION, code, 0, 1, 0, 0, 0, 0, 0, 0])?;
    c.flush()
}

fn read<const N: usize>(c: &mut UnixStream) -> Result<[u8; N], Fail> {
    let mut b = [0u8; N];
    c.read_exact(&mut b).map_err(|_| Fail::Io)?;
    Ok(b)
}

/// The greeting (after its version byte) and the request: where to connect.
fn handshake(c: &mut UnixStream) -> Result<(Host, u16), Fail> {
    let [n] = read::<1>(c)?;
    let mut methods = vec![0u8; usize::from(n)];
    c.read_exact(&mut methods).map_err(|_| Fail::Io)?;
    if !methods.contains(&NO_AUTH) {
        let _ = c.write_all(&[VERSION, NO_METHOD]);
        return Err(Fail::Bad(None, "no acceptable authentication method"));
    }
    c.write_all(&[VERSION, NO_AUTH]).map_err(|_| Fail::Io)?;
    let [ver, cmd, _rsv, atyp] = read::<4>(c)?;
    if ver != VERSION {
        return Err(Fail::Bad(Some(GENERAL_FAILURE), "bad version in request"));
    }
    let host = match atyp {
        1 => Host::Ip(IpAddr::V4(Ipv4Addr::from(read::<4>(c)?))),
        4 => Host::Ip(IpAddr::V6(Ipv6Addr::from(read::<16>(c)?)).to_canonical()),
        3 => {
            let [len] = read::<1>(c)?;
            let mut name = vec![0u8; usize::from(len)];
            c.read_exact(&mut name).map_err(|_| Fail::Io)?;
            std::str::from_utf8(&name)
                .ok()
                .and_then(Host::parse)
                .ok_or(Fail::Bad(Some(GENERAL_FAILURE), "not a valid host name"))?
        }
        _ => {
            return Err(Fail::Bad(
                Some(ATYP_UNSUPPORTED),
                "unsupported address type",
            ));
        }
    };
    let port = u16::from_be_bytes(read::<2>(c)?);
    if cmd != CMD_CONNECT {
        return Err(Fail::Bad(
            Some(CMD_UNSUPPORTED),
            "only CONNECT is supported",
        ));
    }
    if port == 0 {
        return Err(Fail::Bad(Some(GENERAL_FAILURE), "port 0"));
    }
    Ok((host, port))
}

/// Serves one SOCKS5 client whose version byte was already read.
pub(crate) fn serve(shared: &Shared, id: u64, mut c: UnixStream) {
    let (host, port) = match handshake(&mut c) {
        Ok(hp) => hp,
        Err(Fail::Io) => {
            shared.log("bad SOCKS5 (connection closed during the handshake)".into());
            return;
        }
        Err(Fail::Bad(code, why)) => {
            shared.log(format!("bad SOCKS5 ({why})"));
            if let Some(code) = code {
                let _ = reply(&mut c, code);
            }
            return;
        }
    };
    let what = format!("SOCKS5 {host}:{port}");
    if let Err(d) = shared.allow.check(&host, port) {
        shared.log(format!("deny {what} ({d})"));
        let _ = reply(&mut c, NOT_ALLOWED);
        return;
    }
    let up = match connect(&host, port) {
        Ok(up) => up,
        Err(e) => {
            shared.log(format!("error {what} ({})", e.message));
            let _ = reply(&mut c, if e.refused { REFUSED } else { HOST_UNREACHABLE });
            return;
        }
    };
    shared.log(format!("allow {what}"));
    shared.track(id, &up);
    let _ = c.set_read_timeout(None);
    if reply(&mut c, 0).is_err() {
        return;
    }
    let _ = pipe(c, up, Mode::Tunnel);
}
