//! `curl --compressed`: undoes `Content-Encoding: gzip` / `deflate` while the body
//! streams, so the response head and the byte count stay as received.

use flate2::write::{DeflateDecoder, GzDecoder, ZlibDecoder};
use std::io::{self, Write};

/// A streaming decoder for one response body.
pub enum Decoder {
    /// No encoding (or one we leave alone): bytes pass through.
    Identity,
    /// `gzip` / `x-gzip`.
    Gzip(GzDecoder<Vec<u8>>),
    /// `deflate`: zlib-wrapped, as the RFC says.
    Zlib(ZlibDecoder<Vec<u8>>),
    /// `deflate` sent raw (some servers do); chosen when the zlib header is wrong.
    Raw(DeflateDecoder<Vec<u8>>),
}

impl Decoder {
    /// The decoder for a `Content-Encoding` value.
    pub fn for_encoding(enc: &str) -> Decoder {
        match enc.trim().to_ascii_lowercase().as_str() {
            "gzip" | "x-gzip" => Decoder::Gzip(GzDecoder::new(Vec::new())),
            "deflate" => Decoder::Zlib(ZlibDecoder::new(Vec::new())),
            _ => Decoder::Identity,
        }
    }

    /// Decodes `b`, returning what is ready.
    pub fn feed(&mut self, b: &[u8]) -> io::Result<Vec<u8>> {
        if let Decoder::Zlib(z) = self
            && z.get_ref().is_empty()
            && z.total_in() == 0
            && !zlib_header(b)
        {
            *self = Decoder::Raw(DeflateDecoder::new(Vec::new()));
        }
        match self {
            Decoder::Identity => Ok(b.to_vec()),
            Decoder::Gzip(d) => {
                d.write_all(b)?;
                Ok(std::mem::take(d.get_mut()))
            }
            Decoder::Zlib(d) => {
                d.write_all(b)?;
                Ok(std::mem::take(d.get_mut()))
            }
            Decoder::Raw(d) => {
                d.write_all(b)?;
                Ok(std::mem::take(d.get_mut()))
            }
        }
    }

    /// Flushes the end of the stream.
    pub fn finish(&mut self) -> io::Result<Vec<u8>> {
        match self {
            Decoder::Identity => Ok(Vec::new()),
            Decoder::Gzip(d) => {
                d.try_finish()?;
                Ok(std::mem::take(d.get_mut()))
            }
            Decoder::Zlib(d) => {
                d.try_finish()?;
                Ok(std::mem::take(d.get_mut()))
            }
            Decoder::Raw(d) => {
                d.try_finish()?;
                Ok(std::mem::take(d.get_mut()))
            }
        }
    }
}

/// True if `b` starts with a zlib header (CMF/FLG check).
fn zlib_header(b: &[u8]) -> bool {
    match b {
        [cmf, flg, ..] => cmf & 0x0f == 8 && (u16::from(*cmf) * 256 + u16::from(*flg)) % 31 == 0,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_round_trip_in_pieces() {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b"hello hello hello").unwrap();
        let z = e.finish().unwrap();
        let mut d = Decoder::for_encoding("gzip");
        let mut out = Vec::new();
        for c in z.chunks(3) {
            out.extend(d.feed(c).unwrap());
        }
        out.extend(d.finish().unwrap());
        assert_eq!(out, b"hello hello hello");
    }

    #[test]
    fn raw_deflate_is_accepted() {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b"raw").unwrap();
        let z = e.finish().unwrap();
        let mut d = Decoder::for_encoding("deflate");
        let mut out = d.feed(&z).unwrap();
        out.extend(d.finish().unwrap());
        assert_eq!(out, b"raw");
    }
}
