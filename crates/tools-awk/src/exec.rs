//! Statements, patterns and the BEGIN / main / END driver.

use crate::ast::*;
use crate::interp::{Ctl, Interp, Res};
use crate::value::{Value, num_to_str};
use safesh_utils::Interrupt;

impl Interp<'_, '_> {
    pub(crate) fn exec_block(&mut self, b: &[Stmt]) -> Res<()> {
        for s in b {
            self.exec(s)?;
        }
        Ok(())
    }

    pub(crate) fn print_item(&mut self, e: &Expr, buf: &mut Vec<u8>) -> Res<()> {
        let v = if let Expr::Field(i) = e {
            let i = self.field_index(i)?;
            if let Some(b) = self.field_bytes(i) {
                buf.extend_from_slice(b);
                return Ok(());
            }
            self.get_field(i)
        } else {
            self.eval(e)?
        };
        match v {
            Value::Num(n) => buf.extend_from_slice(&num_to_str(n, &self.ofmt)),
            v => v.write_to(buf, b""),
        }
        Ok(())
    }

    pub(crate) fn exec(&mut self, s: &Stmt) -> Res<()> {
        // Statements count toward the same recursion bound as expressions.
        if self.eval_depth >= crate::interp::MAX_EVAL_DEPTH {
            return Err(Ctl::Err(
                "program limit exceeded: eval stack size=1024".into(),
            ));
        }
        self.eval_depth += 1;
        let r = self.exec_inner(s);
        self.eval_depth -= 1;
        r
    }

    fn exec_inner(&mut self, s: &Stmt) -> Res<()> {
        match s {
            Stmt::Expr(e) => {
                self.eval(e)?;
            }
            Stmt::Print(args, redir) => {
                let mut buf = std::mem::take(&mut self.scratch);
                buf.clear();
                if args.is_empty() {
                    buf.extend_from_slice(&self.record);
                } else {
                    for (i, a) in args.iter().enumerate() {
                        if i > 0 {
                            buf.extend_from_slice(&self.ofs);
                        }
                        self.print_item(a, &mut buf)?;
                    }
                }
                buf.extend_from_slice(&self.ors);
                let r = self.emit(redir.as_ref(), &buf);
                self.scratch = buf;
                r?;
            }
            Stmt::Printf(args, redir) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a)?);
                }
                let fmt = vals.remove(0).to_bytes(&self.convfmt);
                let r = crate::format::sprintf(&fmt, &vals, &self.convfmt);
                match r {
                    Ok(b) => self.emit(redir.as_ref(), &b)?,
                    Err((partial, m)) => {
                        self.emit(redir.as_ref(), &partial)?;
                        return Err(Ctl::Err(format!("run time error: {m}")));
                    }
                }
            }
            Stmt::If(c, a, b) => {
                if self.truth(c)? {
                    self.exec(a)?;
                } else if let Some(b) = b {
                    self.exec(b)?;
                }
            }
            Stmt::While(c, body) => {
                while self.truth(c)? {
                    self.poll()?;
                    match self.exec(body) {
                        Err(Ctl::Break) => break,
                        Err(Ctl::Continue) | Ok(()) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            Stmt::Do(body, c) => loop {
                self.poll()?;
                match self.exec(body) {
                    Err(Ctl::Break) => break,
                    Err(Ctl::Continue) | Ok(()) => {}
                    Err(e) => return Err(e),
                }
                if !self.truth(c)? {
                    break;
                }
            },
            Stmt::For(init, cond, step, body) => {
                if let Some(i) = init {
                    self.exec(i)?;
                }
                loop {
                    if let Some(c) = cond
                        && !self.truth(c)?
                    {
                        break;
                    }
                    self.poll()?;
                    match self.exec(body) {
                        Err(Ctl::Break) => break,
                        Err(Ctl::Continue) | Ok(()) => {}
                        Err(e) => return Err(e),
                    }
                    if let Some(s) = step {
                        self.exec(s)?;
                    }
                }
            }
            Stmt::ForIn(k, arr, body) => {
                let a = self.get_array(*arr)?;
                // mawk iterates a snapshot of the keys, deleted ones included,
                // and the loop variable is a string (`k < 10` compares text).
                let keys = a.borrow_mut().keys();
                for key in keys {
                    self.poll()?;
                    self.set_var(*k, Value::Str(key))?;
                    match self.exec(body) {
                        Err(Ctl::Break) => break,
                        Err(Ctl::Continue) | Ok(()) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            Stmt::Block(b) => self.exec_block(b)?,
            Stmt::Next => return Err(Ctl::Next),
            Stmt::NextFile => return Err(Ctl::NextFile),
            Stmt::Exit(e) => {
                if let Some(e) = e {
                    // The status is the low byte, as exit(2) reports it.
                    self.exit_code = (self.eval_num(e)? as i64 & 0xff) as i32;
                }
                return Err(Ctl::Exit);
            }
            Stmt::Return(e) => {
                let v = match e {
                    Some(e) => self.eval(e)?,
                    None => Value::Uninit,
                };
                return Err(Ctl::Return(v));
            }
            Stmt::Break => return Err(Ctl::Break),
            Stmt::Continue => return Err(Ctl::Continue),
            Stmt::Delete(v, subs) => {
                let k = match subs {
                    Some(s) => Some(self.subscript(s)?),
                    None => None,
                };
                let a = self.get_array(*v)?;
                let mut a = a.borrow_mut();
                match k {
                    Some(k) => a.remove(&k),
                    None => a.clear(),
                }
            }
        }
        Ok(())
    }

    pub(crate) fn pattern_matches(&mut self, p: &Pattern) -> Res<bool> {
        match p {
            Pattern::All => Ok(true),
            Pattern::Expr(e) => self.truth(e),
            Pattern::Range(a, b, i) => {
                let on = self.range_on.get(*i).copied().unwrap_or(false);
                if on {
                    if self.truth(b)? {
                        self.range_on[*i] = false;
                    }
                    Ok(true)
                } else if self.truth(a)? {
                    if !self.truth(b)? {
                        self.range_on[*i] = true;
                    }
                    Ok(true)
                } else {
                    Ok(false)
                }
            }
        }
    }

    pub(crate) fn run_main(&mut self) -> Res<()> {
        let prog = self.prog.clone();
        let mut buf = Vec::new();
        loop {
            if !self.read_main(&mut buf)? {
                return Ok(());
            }
            std::mem::swap(&mut self.record, &mut buf);
            self.split_done = false;
            self.fvals = None;
            self.poll()?;
            for r in &prog.rules {
                if !self.pattern_matches(&r.pattern)? {
                    continue;
                }
                let res = match &r.action {
                    Some(a) => self.exec_block(a),
                    None => self.exec(&Stmt::Print(Vec::new(), None)),
                };
                match res {
                    Ok(()) => {}
                    Err(Ctl::Next) => break,
                    Err(Ctl::NextFile) => {
                        self.main_src = None;
                        break;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
    }

    /// Runs the whole program; returns the exit status.
    pub fn run(&mut self) -> Result<i32, Interrupt> {
        let prog = self.prog.clone();
        let mut exiting = false;
        let mut res = Ok(());
        for b in &prog.begin {
            res = self.exec_block(b);
            if res.is_err() {
                break;
            }
        }
        match res {
            Ok(()) => {
                if !prog.rules.is_empty() || !prog.end.is_empty() {
                    res = self.run_main();
                }
            }
            Err(Ctl::Exit) => exiting = true,
            Err(_) => {}
        }
        match res {
            Ok(()) | Err(Ctl::Exit) => {
                let _ = exiting;
                res = Ok(());
                for b in &prog.end {
                    match self.exec_block(b) {
                        Ok(()) => {}
                        Err(Ctl::Exit) => break,
                        Err(e) => {
                            res = Err(e);
                            break;
                        }
                    }
                }
            }
            _ => {}
        }
        let flushed = self.flush_all();
        match res.and(flushed) {
            Ok(()) => Ok(self.exit_code),
            Err(Ctl::Err(m)) => {
                let _ = writeln!(self.ctx.stderr, "awk: {m}");
                Ok(2)
            }
            Err(Ctl::Quiet(c)) => Ok(c),
            Err(Ctl::Interrupt(i)) => Err(i),
            Err(Ctl::Exit) => Ok(self.exit_code),
            Err(Ctl::Next | Ctl::NextFile) => {
                let _ = writeln!(self.ctx.stderr, "awk: improper use of next");
                Ok(2)
            }
            Err(Ctl::Break | Ctl::Continue | Ctl::Return(_)) => Ok(self.exit_code),
        }
    }
}
