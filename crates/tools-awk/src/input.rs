//! Main input (ARGV files, assignments, stdin) and `getline`.

use crate::ast::{Expr, LValue, Var};
use crate::interp::{Cell, Ctl, Interp, Res, slot};
use crate::io::RecordReader;
use crate::value::Value;
use std::fs::File;
use std::io::Read;

/// A main or getline input source.
pub(crate) enum InSrc {
    Stdin,
    File(File),
}

impl InSrc {
    pub(crate) fn reader<'a>(&'a mut self, stdin: &'a mut dyn Read) -> &'a mut dyn Read {
        match self {
            InSrc::Stdin => stdin,
            InSrc::File(f) => f,
        }
    }
}

impl Interp<'_, '_> {
    pub(crate) fn argv_get(&mut self, i: usize) -> Option<Vec<u8>> {
        let a = self.get_array(Var::Global(slot::ARGV)).ok()?;
        let key = crate::array::Key::int(i32::try_from(i).ok()?);
        let mut a = a.borrow_mut();
        // mawk reads ARGV[i] without creating it.
        if !a.contains(&key) {
            return None;
        }
        Some(a.get(&key).to_bytes(&self.convfmt).to_vec())
    }

    /// Opens the next main input source; false when there is none.
    pub(crate) fn open_next(&mut self) -> Res<bool> {
        loop {
            let argc = match self.get_var(Var::Global(slot::ARGC)) {
                Ok(v) => v.num() as usize,
                Err(_) => 0,
            };
            if self.argi >= argc {
                if self.used_file {
                    return Ok(false);
                }
                self.used_file = true;
                self.globals[slot::FILENAME] = Cell::Val(Value::str(b"-"));
                self.main_src = Some((InSrc::Stdin, RecordReader::default()));
                self.fnr = 0.0;
                return Ok(true);
            }
            let i = self.argi;
            self.argi += 1;
            let Some(arg) = self.argv_get(i) else {
                continue;
            };
            if arg.is_empty() {
                continue;
            }
            if let Some(eq) = arg.iter().position(|&b| b == b'=')
                && eq > 0
                && (arg[0].is_ascii_alphabetic() || arg[0] == b'_')
                && arg[..eq]
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
            {
                let name = String::from_utf8_lossy(&arg[..eq]).into_owned();
                self.assign_operand(&name, &arg[eq + 1..])?;
                continue;
            }
            self.used_file = true;
            let src = if arg == b"-" || arg == b"/dev/stdin" {
                InSrc::Stdin
            } else {
                let path = String::from_utf8_lossy(&arg).into_owned();
                match self.ctx.open(&path) {
                    Ok(f) => InSrc::File(f),
                    Err(e) => {
                        return Err(Ctl::Err(format!(
                            "cannot open {path} ({})",
                            safesh_utils::io_error_text(&e)
                        )));
                    }
                }
            };
            self.globals[slot::FILENAME] = Cell::Val(Value::str(&arg));
            self.fnr = 0.0;
            self.main_src = Some((src, RecordReader::default()));
            return Ok(true);
        }
    }

    /// Reads the next main-input record into `buf`, counting NR/FNR.
    pub(crate) fn read_main(&mut self, buf: &mut Vec<u8>) -> Res<bool> {
        if self.main_done {
            return Ok(false);
        }
        loop {
            if self.main_src.is_none() && !self.open_next()? {
                self.main_done = true;
                return Ok(false);
            }
            let Some((src, rdr)) = self.main_src.as_mut() else {
                continue;
            };
            let stdin: &mut dyn Read = &mut *self.ctx.stdin;
            let got = rdr.read(src.reader(stdin), &self.rs, buf);
            match got {
                Ok(true) => {
                    self.nr += 1.0;
                    self.fnr += 1.0;
                    return Ok(true);
                }
                Ok(false) => self.main_src = None,
                Err(e) => {
                    return Err(match crate::budget::interrupt_of(e) {
                        Ok(i) => Ctl::Interrupt(i),
                        Err(e) => {
                            Ctl::Err(format!("read error ({})", safesh_utils::io_error_text(&e)))
                        }
                    });
                }
            }
        }
    }

    pub(crate) fn getline(&mut self, lv: Option<&LValue>, file: Option<&Expr>) -> Res<Value> {
        let mut buf = Vec::new();
        match file {
            None => {
                if !self.read_main(&mut buf)? {
                    return Ok(Value::Num(0.0));
                }
                match lv {
                    None => self.set_record(&buf),
                    Some(lv) => self.set_lv(lv, Value::strnum(&buf))?,
                }
            }
            Some(fe) => {
                let name = self.eval_str(fe)?.to_vec();
                if !self.readers.contains_key(&name) {
                    let src = if name == b"-" || name == b"/dev/stdin" {
                        InSrc::Stdin
                    } else {
                        match self.ctx.open(String::from_utf8_lossy(&name).as_ref()) {
                            Ok(f) => InSrc::File(f),
                            Err(_) => return Ok(Value::Num(-1.0)),
                        }
                    };
                    self.readers
                        .insert(name.clone(), (src, RecordReader::default()));
                }
                let Some((src, rdr)) = self.readers.get_mut(&name) else {
                    return Ok(Value::Num(-1.0));
                };
                let stdin: &mut dyn Read = &mut *self.ctx.stdin;
                match rdr.read(src.reader(stdin), &self.rs, &mut buf) {
                    Ok(true) => {}
                    Ok(false) => return Ok(Value::Num(0.0)),
                    Err(e) => {
                        return Err(match crate::budget::interrupt_of(e) {
                            Ok(i) => Ctl::Interrupt(i),
                            Err(e) => Ctl::Err(format!(
                                "read error ({})",
                                safesh_utils::io_error_text(&e)
                            )),
                        });
                    }
                }
                match lv {
                    None => self.set_record(&buf),
                    Some(lv) => self.set_lv(lv, Value::strnum(&buf))?,
                }
            }
        }
        Ok(Value::Num(1.0))
    }
}
