//! The tree-walking evaluator: variables, fields, records, control flow, output.

use crate::array::{Array, Key};
use crate::ast::*;
use crate::fields::Splitter;
use crate::input::InSrc;
use crate::io::{RecordReader, RsMode};
use crate::output::OutFile;
use crate::regex::AwkRegex;
use crate::value::{Str, Value};
use safesh_utils::{Interrupt, UtilCtx};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Slots of the special variables (see `parser::SPECIALS`).
pub mod slot {
    /// NF
    pub const NF: usize = 0;
    /// NR
    pub const NR: usize = 1;
    /// FNR
    pub const FNR: usize = 2;
    /// FS
    pub const FS: usize = 3;
    /// OFS
    pub const OFS: usize = 4;
    /// ORS
    pub const ORS: usize = 5;
    /// RS
    pub const RS: usize = 6;
    /// FILENAME
    pub const FILENAME: usize = 7;
    /// SUBSEP
    pub const SUBSEP: usize = 8;
    /// RSTART
    pub const RSTART: usize = 9;
    /// RLENGTH
    pub const RLENGTH: usize = 10;
    /// CONVFMT
    pub const CONVFMT: usize = 11;
    /// OFMT
    pub const OFMT: usize = 12;
    /// ENVIRON
    pub const ENVIRON: usize = 13;
    /// ARGC
    pub const ARGC: usize = 14;
    /// ARGV
    pub const ARGV: usize = 15;
}

/// mawk's evaluation stack holds 1024 cells (a few used by the main program);
/// function parameters and operands held across a call use it up.
const EVAL_STACK: usize = 1008;

/// Nested evaluations/statements allowed (well within the interpreter thread's
/// stack even in debug builds).
pub(crate) const MAX_EVAL_DEPTH: usize = 20_000;

/// A variable's storage.
#[derive(Clone, Debug)]
pub enum Cell {
    /// A scalar (or untyped while `Uninit`).
    Val(Value),
    /// An array (shared when passed to functions).
    Arr(Rc<RefCell<Array>>),
}

/// Non-local control flow and errors.
pub enum Ctl {
    /// `next`
    Next,
    /// `nextfile`
    NextFile,
    /// `exit` (code already stored).
    Exit,
    /// `break`
    Break,
    /// `continue`
    Continue,
    /// `return`
    Return(Value),
    /// Fatal runtime error: message, exit 2.
    Err(String),
    /// Stop quietly with a status (broken pipe, cancellation).
    Quiet(i32),
    /// An interruption from the host.
    Interrupt(Interrupt),
}

/// The result of evaluation.
pub type Res<T> = Result<T, Ctl>;

/// A resolved assignable location.
pub enum Loc {
    /// A variable.
    Var(Var),
    /// An array element.
    Elem(Rc<RefCell<Array>>, Key),
    /// A field.
    Field(usize),
}

/// The interpreter state.
pub struct Interp<'c, 'u> {
    pub(crate) ctx: &'c mut UtilCtx<'u>,
    pub(crate) prog: Rc<Program>,
    pub(crate) globals: Vec<Cell>,
    pub(crate) frames: Vec<Vec<Cell>>,
    pub(crate) regexes: Vec<Rc<AwkRegex>>,
    pub(crate) dyn_regex: HashMap<Vec<u8>, Rc<AwkRegex>>,
    pub(crate) record: Vec<u8>,
    pub(crate) split_done: bool,
    pub(crate) spans: Vec<(usize, usize)>,
    pub(crate) fvals: Option<Vec<Value>>,
    pub(crate) nf: usize,
    pub(crate) nr: f64,
    pub(crate) fnr: f64,
    pub(crate) fs: Splitter,
    pub(crate) rs: RsMode,
    pub(crate) convfmt: Vec<u8>,
    pub(crate) ofmt: Vec<u8>,
    pub(crate) ofs: Vec<u8>,
    pub(crate) ors: Vec<u8>,
    pub(crate) subsep: Vec<u8>,
    pub(crate) out: Vec<u8>,
    /// Reused buffer for building print output.
    pub(crate) scratch: Vec<u8>,
    pub(crate) files: HashMap<Vec<u8>, OutFile>,
    pub(crate) readers: HashMap<Vec<u8>, (InSrc, RecordReader)>,
    pub(crate) main_src: Option<(InSrc, RecordReader)>,
    pub(crate) argi: usize,
    pub(crate) used_file: bool,
    pub(crate) main_done: bool,
    pub(crate) range_on: Vec<bool>,
    /// The argument of the last `srand` (what the next `srand` returns).
    pub(crate) seed: Value,
    pub(crate) rng: crate::random::Random,
    pub(crate) depth: usize,
    pub(crate) pending: usize,
    pub(crate) eval_depth: usize,
    pub(crate) exit_code: i32,
    pub(crate) ticks: u32,
}

/// Compiles an awk (POSIX ERE) regex.
pub fn compile_regex(pat: &[u8]) -> Result<AwkRegex, String> {
    AwkRegex::new(pat)
}

fn arith(op: BinOp, a: f64, b: f64) -> f64 {
    match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div => a / b,
        BinOp::Mod => a % b,
        BinOp::Pow => a.powf(b),
    }
}

impl<'c, 'u> Interp<'c, 'u> {
    /// Sets up an interpreter for `prog` over `ctx`; `environ`: the variables
    /// ENVIRON holds (`None`: all of them; each one read is labeled).
    pub fn new(
        ctx: &'c mut UtilCtx<'u>,
        prog: Program,
        environ: Option<Vec<String>>,
    ) -> Result<Self, String> {
        let mut regexes = Vec::new();
        for r in &prog.regexes {
            regexes.push(Rc::new(compile_regex(r)?));
        }
        let mut globals = vec![Cell::Val(Value::Uninit); prog.globals.len()];
        let s = |b: &[u8]| Cell::Val(Value::str(b));
        globals[slot::FS] = s(b" ");
        globals[slot::OFS] = s(b" ");
        globals[slot::ORS] = s(b"\n");
        globals[slot::RS] = s(b"\n");
        globals[slot::FILENAME] = s(b"");
        globals[slot::SUBSEP] = s(b"\x1c");
        globals[slot::RSTART] = Cell::Val(Value::Num(0.0));
        globals[slot::RLENGTH] = Cell::Val(Value::Num(-1.0));
        globals[slot::CONVFMT] = s(b"%.6g");
        globals[slot::OFMT] = s(b"%.6g");
        let mut env = Array::default();
        match environ {
            None => {
                for (k, v) in ctx.env.iter() {
                    env.set(
                        &Key::str(Rc::from(k.as_bytes())),
                        Value::strnum(v.as_bytes()),
                    );
                }
            }
            Some(names) => {
                for k in names {
                    if let Some(v) = ctx.env.get(&k) {
                        env.set(
                            &Key::str(Rc::from(k.as_bytes())),
                            Value::strnum(v.as_bytes()),
                        );
                    }
                }
            }
        }
        globals[slot::ENVIRON] = Cell::Arr(Rc::new(RefCell::new(env)));
        globals[slot::ARGV] = Cell::Arr(Rc::new(RefCell::new(Array::default())));
        let nranges = prog.nranges;
        let seed = Value::Num(0.0);
        Ok(Interp {
            ctx,
            prog: Rc::new(prog),
            globals,
            frames: Vec::new(),
            regexes,
            dyn_regex: HashMap::new(),
            record: Vec::new(),
            split_done: true,
            spans: Vec::new(),
            fvals: None,
            nf: 0,
            nr: 0.0,
            fnr: 0.0,
            fs: Splitter::Space,
            rs: RsMode::Byte(b'\n'),
            convfmt: b"%.6g".to_vec(),
            ofmt: b"%.6g".to_vec(),
            ofs: b" ".to_vec(),
            ors: b"\n".to_vec(),
            subsep: b"\x1c".to_vec(),
            out: Vec::with_capacity(64 * 1024),
            scratch: Vec::new(),
            files: HashMap::new(),
            readers: HashMap::new(),
            main_src: None,
            argi: 1,
            used_file: false,
            main_done: false,
            range_on: vec![false; nranges],
            seed,
            rng: crate::random::Random::new(0),
            depth: 0,
            pending: 0,
            eval_depth: 0,
            exit_code: 0,
            ticks: 0,
        })
    }

    /// Sets ARGV (argv[0] first) and ARGC.
    pub fn set_argv(&mut self, args: &[String]) {
        if let Cell::Arr(a) = &self.globals[slot::ARGV] {
            let mut a = a.borrow_mut();
            for (i, s) in args.iter().enumerate() {
                let v = if i == 0 {
                    Value::str(s.as_bytes())
                } else {
                    Value::strnum(s.as_bytes())
                };
                a.set(&Key::int(i as i32), v);
            }
        }
        self.globals[slot::ARGC] = Cell::Val(Value::Num(args.len() as f64));
    }

    /// Runs `-v` style assignment `name=value` (escapes processed).
    pub fn assign_operand(&mut self, name: &str, val: &[u8]) -> Res<()> {
        let v = Value::strnum(&crate::lexer::unescape(val));
        let idx = self.prog.globals.iter().position(|g| g == name);
        if let Some(i) = idx {
            if let Cell::Arr(_) = self.globals[i] {
                return Err(Ctl::Err(format!("can't assign to array {name}")));
            }
            self.set_var(Var::Global(i), v)?;
        }
        Ok(())
    }

    pub(crate) fn poll(&mut self) -> Res<()> {
        self.ticks = self.ticks.wrapping_add(1);
        if self.ticks.is_multiple_of(4096) && self.ctx.host.cancelled() {
            return Err(Ctl::Quiet(130));
        }
        crate::budget::check_held().map_err(Ctl::Interrupt)
    }

    // ----- variables -----

    pub(crate) fn cell(&mut self, v: Var) -> &mut Cell {
        match v {
            Var::Global(i) => &mut self.globals[i],
            Var::Local(i) => {
                let f = self.frames.len() - 1;
                &mut self.frames[f][i]
            }
        }
    }

    pub(crate) fn get_var(&mut self, v: Var) -> Res<Value> {
        if let Var::Global(i) = v {
            match i {
                slot::NF => {
                    self.ensure_split();
                    return Ok(Value::Num(self.nf as f64));
                }
                slot::NR => return Ok(Value::Num(self.nr)),
                slot::FNR => return Ok(Value::Num(self.fnr)),
                _ => {}
            }
        }
        match self.cell(v) {
            Cell::Val(x) => Ok(x.clone()),
            Cell::Arr(_) => Err(Ctl::Err("can't use array in scalar context".into())),
        }
    }

    /// Assigns a variable; special variables (NF, FS, RS, OFS, ...) take effect.
    pub fn set_var(&mut self, v: Var, val: Value) -> Res<()> {
        if let Var::Global(i) = v
            && i <= slot::ARGV
        {
            match i {
                slot::NF => {
                    let n = val.num();
                    if n > crate::fields::MAX_FIELD as f64 {
                        return Err(Ctl::Err(format!("NF={n} is too large")));
                    }
                    // mawk: NF truncated toward zero must not be negative.
                    if n <= -1.0 {
                        return Err(Ctl::Err(
                            "run time error: negative value assigned to NF".into(),
                        ));
                    }
                    return self.set_nf(if n < 0.0 { 0 } else { n as usize });
                }
                slot::NR => {
                    self.nr = val.num();
                    return Ok(());
                }
                slot::FNR => {
                    self.fnr = val.num();
                    return Ok(());
                }
                _ => {}
            }
            let bytes = val.to_bytes(&self.convfmt).to_vec();
            match i {
                slot::FS => {
                    // The current record keeps the old FS: split it before changing.
                    self.ensure_split();
                    self.fs = self.make_splitter(&bytes)?;
                }
                slot::RS => {
                    self.rs = match bytes.len() {
                        0 => RsMode::Paragraph,
                        1 => RsMode::Byte(bytes[0]),
                        _ => RsMode::Regex(self.regex_for(&bytes)?),
                    };
                }
                slot::OFS => self.ofs = bytes,
                slot::ORS => self.ors = bytes,
                slot::SUBSEP => self.subsep = bytes,
                slot::CONVFMT => self.convfmt = bytes,
                slot::OFMT => self.ofmt = bytes,
                _ => {}
            }
        }
        match self.cell(v) {
            c @ Cell::Val(_) => {
                *c = Cell::Val(val);
                Ok(())
            }
            Cell::Arr(_) => Err(Ctl::Err("can't assign to array".into())),
        }
    }

    /// The field splitter for an FS value (paragraph mode adds newline).
    pub(crate) fn make_splitter(&mut self, fs: &[u8]) -> Res<Splitter> {
        // mawk: in paragraph mode only the default FS also splits at newlines.
        let sp = match fs {
            b" " => Splitter::Space,
            b"" => Splitter::Chars,
            [c] => Splitter::Byte(*c),
            _ => Splitter::Regex(self.regex_for(fs)?),
        };
        Ok(sp)
    }

    /// A compiled regex for a dynamic pattern (cached).
    pub(crate) fn regex_for(&mut self, pat: &[u8]) -> Res<Rc<AwkRegex>> {
        if let Some(r) = self.dyn_regex.get(pat) {
            return Ok(r.clone());
        }
        let re = Rc::new(
            compile_regex(pat)
                .map_err(|e| Ctl::Err(format!("{e}\n{}", String::from_utf8_lossy(pat))))?,
        );
        if self.dyn_regex.len() > 500 {
            self.dyn_regex.clear();
        }
        self.dyn_regex.insert(pat.to_vec(), re.clone());
        Ok(re)
    }

    /// The regex denoted by an expression (a literal, or a dynamic string).
    pub(crate) fn regex_of(&mut self, e: &Expr) -> Res<Rc<AwkRegex>> {
        if let Expr::Regex(i) = e
            && let Some(r) = self.regexes.get(*i)
        {
            return Ok(r.clone());
        }
        let s = self.eval_str(e)?;
        self.regex_for(&s)
    }

    pub(crate) fn get_array(&mut self, v: Var) -> Res<Rc<RefCell<Array>>> {
        let c = self.cell(v);
        match c {
            Cell::Arr(a) => Ok(a.clone()),
            Cell::Val(Value::Uninit) => {
                let a = Rc::new(RefCell::new(Array::default()));
                *c = Cell::Arr(a.clone());
                Ok(a)
            }
            Cell::Val(_) => Err(Ctl::Err("can't use scalar as array".into())),
        }
    }

    /// The array key for a subscript list (joined with SUBSEP).
    pub(crate) fn subscript(&mut self, subs: &[Expr]) -> Res<Key> {
        if let [one] = subs {
            let v = self.eval(one)?;
            return Ok(self.key_of(&v));
        }
        let mut k = Vec::new();
        for (i, e) in subs.iter().enumerate() {
            if i > 0 {
                k.extend_from_slice(&self.subsep);
            }
            let v = self.eval(e)?;
            k.extend_from_slice(&v.to_bytes(&self.convfmt));
        }
        Ok(Key::str(Rc::from(k)))
    }

    /// The key for one subscript value: a number with an integral value in
    /// int range is an integer key (mawk's `d_to_I` test), anything else its
    /// string (numbers through CONVFMT).
    pub(crate) fn key_of(&self, v: &Value) -> Key {
        if let Value::Num(d) = v {
            let i = if *d >= i32::MAX as f64 {
                i32::MAX
            } else if *d > -(i32::MAX as f64) {
                *d as i32
            } else {
                -i32::MAX
            };
            if i as f64 == *d {
                return Key::int(i);
            }
        }
        Key::str(v.to_bytes(&self.convfmt))
    }

    // ----- lvalues -----

    /// Resolves an lvalue to a location once (subscripts evaluated once).
    pub(crate) fn locate(&mut self, lv: &LValue) -> Res<Loc> {
        Ok(match lv {
            LValue::Var(v) => Loc::Var(*v),
            LValue::Index(v, subs) => {
                let k = self.subscript(subs)?;
                Loc::Elem(self.get_array(*v)?, k)
            }
            LValue::Field(e) => Loc::Field(self.field_index(e)?),
        })
    }

    pub(crate) fn get_loc(&mut self, loc: &Loc) -> Res<Value> {
        match loc {
            Loc::Var(v) => self.get_var(*v),
            Loc::Elem(a, k) => Ok(a.borrow_mut().get(k)),
            Loc::Field(i) => Ok(self.get_field(*i)),
        }
    }

    pub(crate) fn set_loc(&mut self, loc: Loc, v: Value) -> Res<()> {
        match loc {
            Loc::Var(var) => self.set_var(var, v),
            Loc::Elem(a, k) => {
                a.borrow_mut().set(&k, v);
                Ok(())
            }
            Loc::Field(i) => self.set_field(i, v),
        }
    }

    /// Assigns to an lvalue.
    pub(crate) fn set_lv(&mut self, lv: &LValue, v: Value) -> Res<()> {
        let loc = self.locate(lv)?;
        self.set_loc(loc, v)
    }

    pub(crate) fn assign(&mut self, lv: &LValue, op: Option<BinOp>, rhs: &Expr) -> Res<Value> {
        let loc = self.locate(lv)?;
        let nv = match op {
            None => self.eval(rhs)?,
            Some(op) => {
                let r = self.eval_num(rhs)?;
                if let Loc::Elem(a, k) = &loc {
                    return Ok(a.borrow_mut().update(k, |v| {
                        *v = Value::Num(arith(op, v.num(), r));
                        v.clone()
                    }));
                }
                let old = self.get_loc(&loc)?.num();
                Value::Num(arith(op, old, r))
            }
        };
        self.set_loc(loc, nv.clone())?;
        Ok(nv)
    }

    // ----- expressions -----

    pub(crate) fn eval_str(&mut self, e: &Expr) -> Res<Str> {
        let v = self.eval(e)?;
        Ok(v.to_bytes(&self.convfmt))
    }

    pub(crate) fn eval_num(&mut self, e: &Expr) -> Res<f64> {
        match e {
            Expr::Num(n) => Ok(*n),
            Expr::Field(i) => {
                let i = self.field_index(i)?;
                match self.field_bytes(i) {
                    Some(b) => Ok(crate::value::str_to_num(b)),
                    None => Ok(self.get_field(i).num()),
                }
            }
            _ => Ok(self.eval(e)?.num()),
        }
    }

    pub(crate) fn truth(&mut self, e: &Expr) -> Res<bool> {
        match e {
            Expr::Regex(i) => {
                let re = self.regexes.get(*i).cloned();
                Ok(re.is_some_and(|r| r.is_match(&self.record)))
            }
            _ => Ok(self.eval(e)?.truth()),
        }
    }

    pub(crate) fn compare(&self, a: &Value, b: &Value) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        if a.is_numeric() && b.is_numeric() {
            let (x, y) = (a.num(), b.num());
            if x < y {
                Ordering::Less
            } else if x > y {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        } else {
            a.to_bytes(&self.convfmt).cmp(&b.to_bytes(&self.convfmt))
        }
    }

    /// Evaluates an expression.
    pub(crate) fn eval(&mut self, e: &Expr) -> Res<Value> {
        // Bounds Rust recursion for pathological programs (deep expressions inside
        // deep recursion) so the interpreter thread's stack cannot overflow.
        if self.eval_depth >= MAX_EVAL_DEPTH {
            return Err(Ctl::Err(
                "program limit exceeded: eval stack size=1024".into(),
            ));
        }
        self.eval_depth += 1;
        let r = self.eval_inner(e);
        self.eval_depth -= 1;
        r
    }

    fn eval_inner(&mut self, e: &Expr) -> Res<Value> {
        Ok(match e {
            Expr::Num(n) => Value::Num(*n),
            Expr::Str(s) => Value::Str(s.clone()),
            Expr::Regex(_) => Value::Num(if self.truth(e)? { 1.0 } else { 0.0 }),
            Expr::Var(v) => self.get_var(*v)?,
            Expr::Index(v, subs) => {
                let k = self.subscript(subs)?;
                let loc = Loc::Elem(self.get_array(*v)?, k);
                self.get_loc(&loc)?
            }
            Expr::Field(i) => {
                let i = self.field_index(i)?;
                self.get_field(i)
            }
            Expr::Assign(lv, op, rhs) => self.assign(lv, *op, rhs)?,
            Expr::Cond(c, a, b) => {
                if self.truth(c)? {
                    self.eval(a)?
                } else {
                    self.eval(b)?
                }
            }
            Expr::And(a, b) => Value::Num((self.truth(a)? && self.truth(b)?) as i32 as f64),
            Expr::Or(a, b) => Value::Num((self.truth(a)? || self.truth(b)?) as i32 as f64),
            Expr::Not(a) => Value::Num(!self.truth(a)? as i32 as f64),
            Expr::Neg(a) => Value::Num(-self.eval_num(a)?),
            Expr::Plus(a) => Value::Num(self.eval_num(a)?),
            Expr::Binary(op, a, b) => {
                let x = self.eval_num(a)?;
                let y = self.held(|s| s.eval_num(b))?;
                Value::Num(arith(*op, x, y))
            }
            Expr::Cmp(op, a, b) => {
                let x = self.eval(a)?;
                let y = self.held(|s| s.eval(b))?;
                let o = self.compare(&x, &y);
                use std::cmp::Ordering::*;
                let r = match op {
                    CmpOp::Lt => o == Less,
                    CmpOp::Le => o != Greater,
                    CmpOp::Gt => o == Greater,
                    CmpOp::Ge => o != Less,
                    CmpOp::Eq => o == Equal,
                    CmpOp::Ne => o != Equal,
                };
                Value::Num(r as i32 as f64)
            }
            Expr::Concat(a, b) => {
                let x = self.eval(a)?;
                let y = self.held(|s| s.eval(b))?;
                let mut s = Vec::new();
                x.write_to(&mut s, &self.convfmt);
                y.write_to(&mut s, &self.convfmt);
                crate::budget::check_string(s.len()).map_err(Ctl::Interrupt)?;
                Value::Str(Rc::from(s))
            }
            Expr::Match(neg, a, r) => {
                let s = self.eval_str(a)?;
                let re = self.regex_of(r)?;
                Value::Num((re.is_match(&s) != *neg) as i32 as f64)
            }
            Expr::In(subs, v) => {
                let k = self.subscript(subs)?;
                let a = self.get_array(*v)?;
                Value::Num(a.borrow_mut().contains(&k) as i32 as f64)
            }
            Expr::IncDec(lv, d, pre) => {
                let loc = self.locate(lv)?;
                let old = match &loc {
                    Loc::Elem(a, k) => a.borrow_mut().update(k, |v| {
                        let old = v.num();
                        *v = Value::Num(old + d);
                        old
                    }),
                    _ => {
                        let old = self.get_loc(&loc)?.num();
                        self.set_loc(loc, Value::Num(old + d))?;
                        old
                    }
                };
                Value::Num(if *pre { old + d } else { old })
            }
            Expr::Call(f, args) => self.call(*f, args)?,
            Expr::Builtin(b, args) => self.builtin(*b, args)?,
            Expr::Getline(lv, file) => self.getline(lv.as_deref(), file.as_deref())?,
            Expr::Group(list) => {
                // Only meaningful in print; elsewhere concatenate like mawk's error-free path.
                let mut s = Vec::new();
                for (i, x) in list.iter().enumerate() {
                    if i > 0 {
                        s.extend_from_slice(&self.subsep);
                    }
                    let v = self.eval(x)?;
                    v.write_to(&mut s, &self.convfmt);
                }
                Value::Str(Rc::from(s))
            }
        })
    }

    /// Evaluates with one more operand held on (mawk's) evaluation stack.
    pub(crate) fn held<T>(&mut self, f: impl FnOnce(&mut Self) -> Res<T>) -> Res<T> {
        self.pending += 1;
        let r = f(self);
        self.pending -= 1;
        r
    }

    pub(crate) fn call(&mut self, fi: usize, args: &[Expr]) -> Res<Value> {
        let prog = self.prog.clone();
        let Some(f) = prog.funcs.get(fi) else {
            return Err(Ctl::Err("bad function".into()));
        };
        let cells = f.nparams.max(args.len());
        if self.depth + cells + self.pending > EVAL_STACK {
            return Err(Ctl::Err(
                "program limit exceeded: eval stack size=1024".into(),
            ));
        }
        let mut frame = Vec::with_capacity(f.nparams);
        for (k, a) in args.iter().enumerate() {
            let wants_array = f.array_params.get(k).copied().unwrap_or(false);
            if let Expr::Var(v) = a {
                let c = self.cell(*v).clone();
                match c {
                    Cell::Arr(arr) => {
                        frame.push(Cell::Arr(arr));
                        continue;
                    }
                    Cell::Val(Value::Uninit) if wants_array => {
                        let arr = self.get_array(*v)?;
                        frame.push(Cell::Arr(arr));
                        continue;
                    }
                    _ => {}
                }
            }
            let v = self.eval(a)?;
            frame.push(Cell::Val(v));
        }
        frame.truncate(f.nparams);
        while frame.len() < f.nparams {
            frame.push(Cell::Val(Value::Uninit));
        }
        self.frames.push(frame);
        self.depth += cells;
        let r = self.exec_block(&f.body);
        self.depth -= cells;
        self.frames.pop();
        match r {
            Ok(()) => Ok(Value::Uninit),
            Err(Ctl::Return(v)) => Ok(v),
            Err(Ctl::Break | Ctl::Continue) => Ok(Value::Uninit),
            Err(e) => Err(e),
        }
    }
}
