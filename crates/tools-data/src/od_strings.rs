//! `od -S N` (`--strings`): GNU's `dump_strings`. A string is a run of at
//! least N printable bytes ended by a NUL; each is printed after the address
//! of its first byte. A run cut by a non-printable byte, by the end of the
//! input, or (short of its NUL) by `-N` is dropped — except that GNU prints
//! the run `-N` stops inside once it has N bytes, at an address that wraps
//! below zero; that quirk is kept so output stays byte-identical.

use crate::od::Source;
use crate::out::Out;

/// The state `dump` reads and writes through.
pub(crate) struct Strings<'s, 'c, 'a> {
    pub src: &'s mut Source,
    pub out: &'s mut Out<'c, 'a>,
    pub status: &'s mut i32,
}

impl Strings<'_, '_, '_> {
    /// The next input byte, or None at the end of every input.
    fn byte(&mut self) -> Option<u8> {
        let mut b = [0u8; 1];
        let n = self.src.read(self.out.ctx(), &mut b, self.status);
        (n == 1).then_some(b[0])
    }

    /// Prints the strings of at least `min` bytes found from offset `start`
    /// (after `-j`) up to `end` (`-j` + `-N`), addresses by `addr`.
    pub(crate) fn dump(
        &mut self,
        min: u64,
        start: u64,
        end: Option<u64>,
        addr: impl Fn(u64) -> String,
    ) {
        let printable = |c: u8| (0x20..0x7f).contains(&c);
        let mut address = start;
        let mut buf: Vec<u8> = Vec::new();
        let mut polled = 0u32;
        'tryline: loop {
            polled = polled.wrapping_add(1);
            if polled.is_multiple_of(4096) && self.out.ctx().host.cancelled() {
                return;
            }
            if let Some(e) = end
                && (e < min || e - min <= address)
            {
                return;
            }
            buf.clear();
            for _ in 0..min {
                let Some(c) = self.byte() else { return };
                address += 1;
                if !printable(c) {
                    continue 'tryline;
                }
                buf.push(c);
            }
            while end.is_none_or(|e| address < e) {
                let Some(c) = self.byte() else { return };
                address += 1;
                if c == 0 {
                    break;
                }
                if !printable(c) {
                    continue 'tryline;
                }
                buf.push(c);
            }
            let a = addr(address.wrapping_sub(buf.len() as u64).wrapping_sub(1));
            if !a.is_empty() {
                self.out.write(a.as_bytes());
                self.out.write(b" ");
            }
            self.out.write(&buf);
            self.out.write(b"\n");
        }
    }
}
