//! Recursive-descent parser from tokens to the [`Program`] tree.

use crate::ast::*;
use crate::lexer::{Lexer, Tok};
use std::collections::HashMap;
use std::rc::Rc;

/// Names of the special variables, in their fixed global slots.
pub const SPECIALS: &[&str] = &[
    "NF", "NR", "FNR", "FS", "OFS", "ORS", "RS", "FILENAME", "SUBSEP", "RSTART", "RLENGTH",
    "CONVFMT", "OFMT", "ENVIRON", "ARGC", "ARGV",
];

/// Why parsing failed.
#[derive(Debug)]
pub enum ParseError {
    /// A syntax error (mawk wording, with the line).
    Syntax(String),
    /// A construct safesh refuses (running commands).
    Refused(String),
}

/// Parses a program text.
pub fn parse(src: &[u8]) -> Result<Program, ParseError> {
    let mut p = Parser {
        lex: Lexer::new(src),
        tok: Tok::Eof,
        prog: Program::default(),
        globals: HashMap::new(),
        funcs: HashMap::new(),
        locals: None,
        refusal: None,
        in_rule: false,
        loops: 0,
        depth: 0,
        group_ok: false,
        calls: Vec::new(),
    };
    for (i, name) in SPECIALS.iter().enumerate() {
        p.globals.insert((*name).to_string(), i);
        p.prog.globals.push((*name).to_string());
    }
    let r = p.advance().and_then(|_| p.program());
    if let Some(msg) = p.refusal.take() {
        return Err(ParseError::Refused(msg));
    }
    r.map_err(|m| ParseError::Syntax(format!("line {}: {}", p.lex.line, m)))?;
    for f in &p.prog.funcs {
        if p.globals.contains_key(&f.name) {
            return Err(ParseError::Syntax(format!(
                "line {}: illegal reference to variable {}",
                p.lex.line, f.name
            )));
        }
        // mawk finds undefined functions at the end of the text (one line
        // past the last) and names each call, the last first; a surplus
        // argument is found at the call.
        if !f.defined {
            let lines: Vec<String> = p
                .calls
                .iter()
                .rev()
                .filter_map(|&c| p.prog.funcs.get(c).filter(|f| !f.defined))
                .map(|f| format!("line {}: function {} never defined", p.lex.line + 1, f.name))
                .collect();
            return Err(ParseError::Syntax(lines.join("\n")));
        }
        if f.max_args > f.nparams {
            return Err(ParseError::Syntax(format!(
                "line {}: too many arguments in call to {}",
                f.max_args_line, f.name
            )));
        }
    }
    crate::analysis::infer_array_params(&mut p.prog);
    Ok(p.prog)
}

const NOT_SUPPORTED: &str =
    "is not supported in safesh: commands cannot be run from awk (use the shell)";

struct Parser<'a> {
    lex: Lexer<'a>,
    tok: Tok,
    prog: Program,
    globals: HashMap<String, usize>,
    funcs: HashMap<String, usize>,
    locals: Option<HashMap<String, usize>>,
    refusal: Option<String>,
    /// Inside a main rule's action (where `next` is allowed).
    in_rule: bool,
    /// The next primary may be a `(a, b)` print argument list.
    group_ok: bool,
    /// Every call of a user function, by index, in the order the calls end
    /// (after their arguments): mawk lists the undefined ones from the last.
    calls: Vec<usize>,
    /// How many loops enclose the statement being parsed (`break` and
    /// `continue` outside any are compile errors, as in mawk).
    loops: usize,
    /// Current recursion depth (bounded so hostile programs cannot overflow the stack).
    depth: usize,
}

/// Deepest nesting of expressions/statements the parser accepts.
const MAX_NESTING: usize = 3000;

type R<T> = Result<T, String>;

fn near(t: &Tok) -> String {
    let s = match t {
        Tok::Newline => "end of line".to_string(),
        Tok::Eof => "end of file".to_string(),
        Tok::LBrace => "{".into(),
        Tok::RBrace => "}".into(),
        Tok::LParen => "(".into(),
        Tok::RParen => ")".into(),
        Tok::LBracket => "[".into(),
        Tok::RBracket => "]".into(),
        Tok::Semi => ";".into(),
        Tok::Comma => ",".into(),
        Tok::Number(n) => format!("{n}"),
        Tok::Str(s) => format!("\"{}\"", String::from_utf8_lossy(s)),
        Tok::Name(n) | Tok::FuncName(n) => n.clone(),
        Tok::Plus => "+".into(),
        Tok::Minus => "-".into(),
        Tok::Star => "*".into(),
        Tok::Slash => "/".into(),
        Tok::Percent => "%".into(),
        Tok::Caret => "^".into(),
        Tok::Not => "!".into(),
        Tok::Gt => ">".into(),
        Tok::Lt => "<".into(),
        Tok::Pipe => "|".into(),
        Tok::Question => "?".into(),
        Tok::Colon => ":".into(),
        Tok::Tilde => "~".into(),
        Tok::NoMatch => "!~".into(),
        Tok::Dollar => "$".into(),
        Tok::Assign => "=".into(),
        Tok::AddAssign => "+=".into(),
        Tok::SubAssign => "-=".into(),
        Tok::MulAssign => "*=".into(),
        Tok::DivAssign => "/=".into(),
        Tok::ModAssign => "%=".into(),
        Tok::PowAssign => "^=".into(),
        Tok::Eq => "==".into(),
        Tok::Ne => "!=".into(),
        Tok::Le => "<=".into(),
        Tok::Ge => ">=".into(),
        Tok::And => "&&".into(),
        Tok::Or => "||".into(),
        Tok::Incr => "++".into(),
        Tok::Decr => "--".into(),
        Tok::Append => ">>".into(),
        Tok::Begin => "BEGIN".into(),
        Tok::End => "END".into(),
        other => format!("{other:?}").to_lowercase(),
    };
    format!("syntax error at or near {s}")
}

impl Parser<'_> {
    fn advance(&mut self) -> R<()> {
        self.tok = self.lex.next_tok()?;
        Ok(())
    }

    fn expect(&mut self, t: Tok) -> R<()> {
        if self.tok == t {
            self.advance()
        } else {
            Err(near(&self.tok))
        }
    }

    fn err<T>(&self) -> R<T> {
        Err(near(&self.tok))
    }

    fn refuse<T>(&mut self, what: &str) -> R<T> {
        self.refusal = Some(format!("{what} {NOT_SUPPORTED}"));
        Err("refused".into())
    }

    fn skip_newlines(&mut self) -> R<()> {
        while self.tok == Tok::Newline {
            self.advance()?;
        }
        Ok(())
    }

    fn skip_terminators(&mut self) -> R<()> {
        while matches!(self.tok, Tok::Newline | Tok::Semi) {
            self.advance()?;
        }
        Ok(())
    }

    fn program(&mut self) -> R<()> {
        self.skip_terminators()?;
        while self.tok != Tok::Eof {
            self.item()?;
            self.skip_terminators()?;
        }
        Ok(())
    }

    fn item(&mut self) -> R<()> {
        match self.tok.clone() {
            Tok::Begin => {
                self.advance()?;
                self.skip_newlines()?;
                let b = self.block()?;
                self.prog.begin.push(b);
            }
            Tok::End => {
                self.advance()?;
                self.skip_newlines()?;
                let b = self.block()?;
                self.prog.end.push(b);
            }
            Tok::Function => self.function()?,
            Tok::LBrace => {
                self.in_rule = true;
                let b = self.block();
                self.in_rule = false;
                let b = b?;
                self.prog.rules.push(Rule {
                    pattern: Pattern::All,
                    action: Some(b),
                });
            }
            _ => {
                let e = self.expr(false)?;
                let pattern = if self.tok == Tok::Comma {
                    self.advance()?;
                    self.skip_newlines()?;
                    let e2 = self.expr(false)?;
                    let n = self.prog.nranges;
                    self.prog.nranges += 1;
                    Pattern::Range(e, e2, n)
                } else {
                    Pattern::Expr(e)
                };
                let action = if self.tok == Tok::LBrace {
                    self.in_rule = true;
                    let b = self.block();
                    self.in_rule = false;
                    Some(b?)
                } else {
                    None
                };
                self.prog.rules.push(Rule { pattern, action });
            }
        }
        Ok(())
    }

    fn func_index(&mut self, name: &str) -> usize {
        if let Some(&i) = self.funcs.get(name) {
            return i;
        }
        let i = self.prog.funcs.len();
        self.prog.funcs.push(Func {
            name: name.to_string(),
            ..Func::default()
        });
        self.funcs.insert(name.to_string(), i);
        i
    }

    fn function(&mut self) -> R<()> {
        self.advance()?;
        let name = match self.tok.clone() {
            Tok::Name(n) | Tok::FuncName(n) => n,
            _ => return self.err(),
        };
        self.advance()?;
        self.expect(Tok::LParen)?;
        let mut params = HashMap::new();
        // `(a, b)`: names separated by single commas; `(a,)`, `(,)` and
        // `(a b)` are syntax errors, as in mawk.
        while let Tok::Name(p) = self.tok.clone() {
            if params.contains_key(&p) {
                return Err(format!("{p} is duplicated in argument list"));
            }
            let n = params.len();
            params.insert(p, n);
            self.advance()?;
            if self.tok != Tok::Comma {
                break;
            }
            self.advance()?;
            self.skip_newlines()?;
            if !matches!(self.tok, Tok::Name(_)) {
                return self.err();
            }
        }
        self.expect(Tok::RParen)?;
        self.skip_newlines()?;
        let idx = self.func_index(&name);
        if self.prog.funcs[idx].defined {
            return Err(format!("function {name} redefined"));
        }
        let nparams = params.len();
        self.locals = Some(params);
        let body = self.block();
        self.locals = None;
        let body = body?;
        let f = &mut self.prog.funcs[idx];
        f.nparams = nparams;
        f.array_params = vec![false; nparams];
        f.body = body;
        f.defined = true;
        Ok(())
    }

    fn block(&mut self) -> R<Vec<Stmt>> {
        self.expect(Tok::LBrace)?;
        let mut v = Vec::new();
        self.skip_terminators()?;
        while self.tok != Tok::RBrace {
            if self.tok == Tok::Eof {
                return Err("missing } near end of file".into());
            }
            v.push(self.stmt()?);
            self.skip_terminators()?;
        }
        self.advance()?;
        Ok(v)
    }

    /// Ends a simple statement: `;`, newline, or a following `}`.
    fn end_simple(&mut self) -> R<()> {
        match self.tok {
            Tok::Semi | Tok::Newline => self.advance(),
            Tok::RBrace | Tok::Eof => Ok(()),
            _ => self.err(),
        }
    }

    fn stmt_body(&mut self) -> R<Stmt> {
        self.skip_newlines()?;
        if self.tok == Tok::Semi {
            self.advance()?;
            return Ok(Stmt::Block(Vec::new()));
        }
        self.stmt()
    }

    fn stmt(&mut self) -> R<Stmt> {
        self.nested(|p| p.stmt_inner())
    }

    fn stmt_inner(&mut self) -> R<Stmt> {
        let s = match self.tok.clone() {
            Tok::LBrace => Stmt::Block(self.block()?),
            Tok::If => {
                self.advance()?;
                self.expect(Tok::LParen)?;
                let c = self.expr(false)?;
                self.expect(Tok::RParen)?;
                let then = self.stmt_body()?;
                // `else` may follow after newlines (a simple body ate its `;`).
                let save = (self.lex.clone(), self.tok.clone());
                self.skip_newlines()?;
                if self.tok == Tok::Else {
                    self.advance()?;
                    let els = self.stmt_body()?;
                    Stmt::If(c, Box::new(then), Some(Box::new(els)))
                } else {
                    self.lex = save.0;
                    self.tok = save.1;
                    Stmt::If(c, Box::new(then), None)
                }
            }
            Tok::While => {
                self.advance()?;
                self.expect(Tok::LParen)?;
                let c = self.expr(false)?;
                self.expect(Tok::RParen)?;
                if self.tok == Tok::Semi {
                    self.advance()?;
                    return Ok(Stmt::While(c, Box::new(Stmt::Block(Vec::new()))));
                }
                let body = self.loop_body()?;
                Stmt::While(c, Box::new(body))
            }
            Tok::Do => {
                self.advance()?;
                let body = self.loop_body()?;
                self.skip_terminators()?;
                self.expect(Tok::While)?;
                self.expect(Tok::LParen)?;
                let c = self.expr(false)?;
                self.expect(Tok::RParen)?;
                self.end_simple()?;
                Stmt::Do(Box::new(body), c)
            }
            Tok::For => return self.for_stmt(),
            Tok::Semi => {
                self.advance()?;
                Stmt::Block(Vec::new())
            }
            _ => {
                let s = self.simple_stmt()?;
                self.end_simple()?;
                s
            }
        };
        Ok(s)
    }

    /// The body of a loop: `break` and `continue` are allowed inside.
    fn loop_body(&mut self) -> R<Stmt> {
        self.loops += 1;
        let body = self.stmt_body();
        self.loops -= 1;
        body
    }

    fn for_stmt(&mut self) -> R<Stmt> {
        self.advance()?;
        self.expect(Tok::LParen)?;
        // Try `(name in array)`.
        if let Tok::Name(k) = self.tok.clone() {
            let save = (self.lex.clone(), self.tok.clone());
            self.advance()?;
            if self.tok == Tok::In {
                self.advance()?;
                if let Tok::Name(a) = self.tok.clone() {
                    self.advance()?;
                    if self.tok == Tok::RParen {
                        self.advance()?;
                        let kv = self.var(&k);
                        let av = self.var(&a);
                        let body = self.loop_body()?;
                        return Ok(Stmt::ForIn(kv, av, Box::new(body)));
                    }
                }
            }
            self.lex = save.0;
            self.tok = save.1;
        }
        let init = if self.tok == Tok::Semi {
            None
        } else {
            Some(Box::new(self.simple_stmt()?))
        };
        self.expect(Tok::Semi)?;
        self.skip_newlines()?;
        let cond = if self.tok == Tok::Semi {
            None
        } else {
            Some(self.expr(false)?)
        };
        self.expect(Tok::Semi)?;
        self.skip_newlines()?;
        let step = if self.tok == Tok::RParen {
            None
        } else {
            Some(Box::new(self.simple_stmt()?))
        };
        self.expect(Tok::RParen)?;
        if self.tok == Tok::Semi {
            self.advance()?;
            return Ok(Stmt::For(
                init,
                cond,
                step,
                Box::new(Stmt::Block(Vec::new())),
            ));
        }
        let body = self.loop_body()?;
        Ok(Stmt::For(init, cond, step, Box::new(body)))
    }

    fn simple_stmt(&mut self) -> R<Stmt> {
        Ok(match self.tok.clone() {
            Tok::Print | Tok::Printf => {
                let is_printf = self.tok == Tok::Printf;
                self.advance()?;
                let mut args = Vec::new();
                if !matches!(
                    self.tok,
                    Tok::Semi
                        | Tok::Newline
                        | Tok::RBrace
                        | Tok::Gt
                        | Tok::Append
                        | Tok::Pipe
                        | Tok::Eof
                ) {
                    self.group_ok = true;
                    let first = self.expr(true);
                    self.group_ok = false;
                    args.push(first?);
                    while self.tok == Tok::Comma {
                        self.advance()?;
                        self.skip_newlines()?;
                        args.push(self.expr(true)?);
                    }
                }
                if args.len() == 1
                    && let Some(Expr::Group(_)) = args.first()
                    && let Some(Expr::Group(g)) = args.pop()
                {
                    args = g;
                }
                let redir = match self.tok {
                    Tok::Gt => {
                        self.advance()?;
                        Some(Redirect::Truncate(self.concat(true)?))
                    }
                    Tok::Append => {
                        self.advance()?;
                        Some(Redirect::Append(self.concat(true)?))
                    }
                    Tok::Pipe => {
                        let what = if is_printf {
                            "printf | \"cmd\""
                        } else {
                            "print | \"cmd\""
                        };
                        return self.refuse(what);
                    }
                    _ => None,
                };
                if is_printf {
                    if args.is_empty() {
                        return self.err();
                    }
                    Stmt::Printf(args, redir)
                } else {
                    Stmt::Print(args, redir)
                }
            }
            Tok::Next | Tok::Nextfile if !self.in_rule => {
                return Err("improper use of next".into());
            }
            Tok::Next => {
                self.advance()?;
                Stmt::Next
            }
            Tok::Nextfile => {
                self.advance()?;
                Stmt::NextFile
            }
            Tok::Return if self.locals.is_none() => {
                return Err("return outside function body".into());
            }
            Tok::Break | Tok::Continue if self.loops == 0 => {
                let what = if self.tok == Tok::Break {
                    "break"
                } else {
                    "continue"
                };
                return Err(format!("{what} statement outside of loop"));
            }
            Tok::Break => {
                self.advance()?;
                Stmt::Break
            }
            Tok::Continue => {
                self.advance()?;
                Stmt::Continue
            }
            Tok::Exit => {
                self.advance()?;
                if matches!(self.tok, Tok::Semi | Tok::Newline | Tok::RBrace | Tok::Eof) {
                    Stmt::Exit(None)
                } else {
                    Stmt::Exit(Some(self.expr(false)?))
                }
            }
            Tok::Return => {
                self.advance()?;
                if matches!(self.tok, Tok::Semi | Tok::Newline | Tok::RBrace | Tok::Eof) {
                    Stmt::Return(None)
                } else {
                    Stmt::Return(Some(self.expr(false)?))
                }
            }
            Tok::Delete => {
                self.advance()?;
                let Tok::Name(n) = self.tok.clone() else {
                    return self.err();
                };
                self.advance()?;
                let v = self.var(&n);
                if self.tok == Tok::LBracket {
                    self.advance()?;
                    let subs = self.expr_list()?;
                    self.expect(Tok::RBracket)?;
                    Stmt::Delete(v, Some(subs))
                } else {
                    Stmt::Delete(v, None)
                }
            }
            _ => Stmt::Expr(self.expr(false)?),
        })
    }

    fn expr_list(&mut self) -> R<Vec<Expr>> {
        let mut v = vec![self.expr(false)?];
        while self.tok == Tok::Comma {
            self.advance()?;
            self.skip_newlines()?;
            v.push(self.expr(false)?);
        }
        Ok(v)
    }

    fn var(&mut self, name: &str) -> Var {
        if let Some(l) = &self.locals
            && let Some(&i) = l.get(name)
        {
            return Var::Local(i);
        }
        if let Some(&i) = self.globals.get(name) {
            return Var::Global(i);
        }
        let i = self.prog.globals.len();
        self.prog.globals.push(name.to_string());
        self.globals.insert(name.to_string(), i);
        Var::Global(i)
    }

    /// Full expression; `no_gt` makes `>` end it (print redirection).
    fn expr(&mut self, no_gt: bool) -> R<Expr> {
        self.nested(|p| p.expr_inner(no_gt))
    }

    /// Runs `f` one nesting level deeper, failing past [`MAX_NESTING`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        if self.depth >= MAX_NESTING {
            return Err("program too deeply nested".into());
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// Counts one more level of a left-associative chain (its tree gets deeper).
    fn deepen(&mut self, chain: &mut usize) -> R<()> {
        if self.depth >= MAX_NESTING {
            return Err("program too deeply nested".into());
        }
        self.depth += 1;
        *chain += 1;
        Ok(())
    }

    fn expr_inner(&mut self, no_gt: bool) -> R<Expr> {
        let lhs = self.ternary(no_gt)?;
        self.assign_tail(lhs, no_gt)
    }

    /// An assignment when `lhs` is an lvalue and an assignment operator
    /// follows, else `lhs`. mawk's grammar makes the right operand of `||`,
    /// `&&`, `~`, `!~` and the comparisons a full `expr`, so this also runs
    /// there: `2 == v = 2` is `2 == (v = 2)` (but `1 + v = 2` stays an error).
    fn assign_tail(&mut self, lhs: Expr, no_gt: bool) -> R<Expr> {
        let op = match self.tok {
            Tok::Assign => None,
            Tok::AddAssign => Some(BinOp::Add),
            Tok::SubAssign => Some(BinOp::Sub),
            Tok::MulAssign => Some(BinOp::Mul),
            Tok::DivAssign => Some(BinOp::Div),
            Tok::ModAssign => Some(BinOp::Mod),
            Tok::PowAssign => Some(BinOp::Pow),
            _ => return Ok(lhs),
        };
        let Some(lv) = to_lvalue(&lhs) else {
            return Ok(lhs);
        };
        self.advance()?;
        self.skip_newlines()?;
        let rhs = self.expr(no_gt)?;
        Ok(Expr::Assign(Box::new(lv), op, Box::new(rhs)))
    }

    fn ternary(&mut self, no_gt: bool) -> R<Expr> {
        let c = self.or(no_gt)?;
        if self.tok != Tok::Question {
            return Ok(c);
        }
        self.advance()?;
        self.skip_newlines()?;
        let a = self.expr(no_gt)?;
        self.skip_newlines()?;
        self.expect(Tok::Colon)?;
        self.skip_newlines()?;
        let b = self.expr(no_gt)?;
        Ok(Expr::Cond(Box::new(c), Box::new(a), Box::new(b)))
    }

    fn or(&mut self, no_gt: bool) -> R<Expr> {
        let mut chain = 0;
        let mut l = self.and(no_gt)?;
        while self.tok == Tok::Or {
            self.advance()?;
            self.skip_newlines()?;
            let r = self.and(no_gt)?;
            let r = self.assign_tail(r, no_gt)?;
            self.deepen(&mut chain)?;
            l = Expr::Or(Box::new(l), Box::new(r));
        }
        self.depth -= chain;
        Ok(l)
    }

    fn and(&mut self, no_gt: bool) -> R<Expr> {
        let mut chain = 0;
        let mut l = self.in_expr(no_gt)?;
        while self.tok == Tok::And {
            self.advance()?;
            self.skip_newlines()?;
            let r = self.in_expr(no_gt)?;
            let r = self.assign_tail(r, no_gt)?;
            self.deepen(&mut chain)?;
            l = Expr::And(Box::new(l), Box::new(r));
        }
        self.depth -= chain;
        Ok(l)
    }

    fn in_expr(&mut self, no_gt: bool) -> R<Expr> {
        let mut chain = 0;
        let mut l = self.matching(no_gt)?;
        while self.tok == Tok::In {
            self.advance()?;
            let Tok::Name(a) = self.tok.clone() else {
                return self.err();
            };
            self.advance()?;
            let v = self.var(&a);
            self.deepen(&mut chain)?;
            l = Expr::In(vec![l], v);
        }
        self.depth -= chain;
        Ok(l)
    }

    fn matching(&mut self, no_gt: bool) -> R<Expr> {
        let mut chain = 0;
        let mut l = self.relational(no_gt)?;
        while matches!(self.tok, Tok::Tilde | Tok::NoMatch) {
            let neg = self.tok == Tok::NoMatch;
            self.advance()?;
            let r = self.relational(no_gt)?;
            let r = self.assign_tail(r, no_gt)?;
            self.deepen(&mut chain)?;
            l = Expr::Match(neg, Box::new(l), Box::new(r));
        }
        self.depth -= chain;
        Ok(l)
    }

    /// Comparisons, left-associative as in mawk (`1 < 2 < 3` is `(1 < 2) < 3`).
    fn relational(&mut self, no_gt: bool) -> R<Expr> {
        let mut chain = 0;
        let mut l = self.concat(no_gt)?;
        loop {
            let op = match self.tok {
                Tok::Lt => CmpOp::Lt,
                Tok::Le => CmpOp::Le,
                Tok::Gt if !no_gt => CmpOp::Gt,
                Tok::Ge => CmpOp::Ge,
                Tok::Eq => CmpOp::Eq,
                Tok::Ne => CmpOp::Ne,
                Tok::Pipe => return self.refuse("\"cmd\" | getline"),
                _ => break,
            };
            self.advance()?;
            let r = self.concat(no_gt)?;
            if self.tok == Tok::Pipe {
                return self.refuse("\"cmd\" | getline");
            }
            let r = self.assign_tail(r, no_gt)?;
            self.deepen(&mut chain)?;
            l = Expr::Cmp(op, Box::new(l), Box::new(r));
        }
        self.depth -= chain;
        Ok(l)
    }

    fn starts_operand(&self) -> bool {
        matches!(
            self.tok,
            Tok::Number(_)
                | Tok::Str(_)
                | Tok::Name(_)
                | Tok::FuncName(_)
                | Tok::Builtin(_)
                | Tok::Dollar
                | Tok::Not
                | Tok::LParen
                | Tok::Incr
                | Tok::Decr
                | Tok::Slash
                | Tok::Minus
                | Tok::Plus
                | Tok::System
        )
    }

    fn concat(&mut self, no_gt: bool) -> R<Expr> {
        let mut chain = 0;
        let mut l = self.additive(no_gt)?;
        while self.starts_operand() && !matches!(self.tok, Tok::Minus | Tok::Plus) {
            // `in` after a grouping handled in primary; `getline` is not an operand here.
            let r = self.additive(no_gt)?;
            self.deepen(&mut chain)?;
            l = Expr::Concat(Box::new(l), Box::new(r));
        }
        self.depth -= chain;
        Ok(l)
    }

    fn additive(&mut self, no_gt: bool) -> R<Expr> {
        let mut chain = 0;
        let mut l = self.multiplicative(no_gt)?;
        loop {
            let op = match self.tok {
                Tok::Plus => BinOp::Add,
                Tok::Minus => BinOp::Sub,
                _ => {
                    self.depth -= chain;
                    return Ok(l);
                }
            };
            self.advance()?;
            let r = self.multiplicative(no_gt)?;
            self.deepen(&mut chain)?;
            l = Expr::Binary(op, Box::new(l), Box::new(r));
        }
    }

    fn multiplicative(&mut self, no_gt: bool) -> R<Expr> {
        let mut chain = 0;
        let mut l = self.unary(no_gt)?;
        loop {
            let op = match self.tok {
                Tok::Star => BinOp::Mul,
                Tok::Slash => BinOp::Div,
                Tok::Percent => BinOp::Mod,
                _ => {
                    self.depth -= chain;
                    return Ok(l);
                }
            };
            self.advance()?;
            let r = self.unary(no_gt)?;
            self.deepen(&mut chain)?;
            l = Expr::Binary(op, Box::new(l), Box::new(r));
        }
    }

    fn unary(&mut self, no_gt: bool) -> R<Expr> {
        self.nested(|p| p.unary_inner(no_gt))
    }

    fn unary_inner(&mut self, no_gt: bool) -> R<Expr> {
        match self.tok {
            Tok::Not => {
                self.advance()?;
                Ok(Expr::Not(Box::new(self.unary(no_gt)?)))
            }
            Tok::Minus => {
                self.advance()?;
                Ok(Expr::Neg(Box::new(self.unary(no_gt)?)))
            }
            Tok::Plus => {
                self.advance()?;
                Ok(Expr::Plus(Box::new(self.unary(no_gt)?)))
            }
            _ => self.power(no_gt),
        }
    }

    fn power(&mut self, no_gt: bool) -> R<Expr> {
        self.nested(|p| p.power_inner(no_gt))
    }

    fn power_inner(&mut self, no_gt: bool) -> R<Expr> {
        let base = self.postfix(no_gt)?;
        if self.tok != Tok::Caret {
            return Ok(base);
        }
        self.advance()?;
        // Right associative; the exponent may carry a sign.
        let exp = match self.tok {
            Tok::Minus => {
                self.advance()?;
                Expr::Neg(Box::new(self.power(no_gt)?))
            }
            Tok::Plus => {
                self.advance()?;
                self.power(no_gt)?
            }
            Tok::Not => {
                self.advance()?;
                Expr::Not(Box::new(self.power(no_gt)?))
            }
            _ => self.power(no_gt)?,
        };
        Ok(Expr::Binary(BinOp::Pow, Box::new(base), Box::new(exp)))
    }

    fn postfix(&mut self, no_gt: bool) -> R<Expr> {
        let e = self.primary(no_gt)?;
        if matches!(self.tok, Tok::Incr | Tok::Decr)
            && let Some(lv) = to_lvalue(&e)
        {
            let d = if self.tok == Tok::Incr { 1.0 } else { -1.0 };
            self.advance()?;
            return Ok(Expr::IncDec(Box::new(lv), d, false));
        }
        Ok(e)
    }

    fn lvalue_operand(&mut self) -> R<LValue> {
        let e = match self.tok.clone() {
            Tok::Dollar => {
                self.advance()?;
                Expr::Field(Box::new(self.field_operand()?))
            }
            Tok::Name(n) => {
                self.advance()?;
                self.name_ref(&n)?
            }
            _ => return self.err(),
        };
        to_lvalue(&e).ok_or_else(|| near(&self.tok))
    }

    /// The operand of `$`: a primary, or a pre-increment.
    fn field_operand(&mut self) -> R<Expr> {
        match self.tok {
            Tok::Incr | Tok::Decr => {
                let d = if self.tok == Tok::Incr { 1.0 } else { -1.0 };
                self.advance()?;
                let lv = self.lvalue_operand()?;
                Ok(Expr::IncDec(Box::new(lv), d, true))
            }
            Tok::Minus => {
                self.advance()?;
                Ok(Expr::Neg(Box::new(self.field_operand()?)))
            }
            _ => self.primary(false),
        }
    }

    fn name_ref(&mut self, n: &str) -> R<Expr> {
        let v = self.var(n);
        if self.tok == Tok::LBracket {
            self.advance()?;
            let subs = self.expr_list()?;
            self.expect(Tok::RBracket)?;
            return Ok(Expr::Index(v, subs));
        }
        Ok(Expr::Var(v))
    }

    fn primary(&mut self, no_gt: bool) -> R<Expr> {
        self.nested(|p| p.primary_inner(no_gt))
    }

    fn primary_inner(&mut self, no_gt: bool) -> R<Expr> {
        // Only the first primary of a print's first argument may be a group.
        let group_ok = std::mem::replace(&mut self.group_ok, false);
        match self.tok.clone() {
            Tok::Number(n) => {
                self.advance()?;
                Ok(Expr::Num(n))
            }
            Tok::Str(s) => {
                self.advance()?;
                Ok(Expr::Str(Rc::from(s)))
            }
            Tok::Slash | Tok::DivAssign => {
                let prefix: &[u8] = if self.tok == Tok::DivAssign {
                    b"="
                } else {
                    b""
                };
                let re = self.lex.read_regex(prefix)?;
                self.advance()?;
                let i = self.prog.regexes.len();
                self.prog.regexes.push(re);
                Ok(Expr::Regex(i))
            }
            Tok::Dollar => {
                self.advance()?;
                let e = self.field_operand()?;
                Ok(Expr::Field(Box::new(e)))
            }
            Tok::Incr | Tok::Decr => {
                let d = if self.tok == Tok::Incr { 1.0 } else { -1.0 };
                self.advance()?;
                let lv = self.lvalue_operand()?;
                Ok(Expr::IncDec(Box::new(lv), d, true))
            }
            Tok::Not => {
                self.advance()?;
                Ok(Expr::Not(Box::new(self.unary(no_gt)?)))
            }
            Tok::Minus => {
                self.advance()?;
                Ok(Expr::Neg(Box::new(self.unary(no_gt)?)))
            }
            Tok::Plus => {
                self.advance()?;
                Ok(Expr::Plus(Box::new(self.unary(no_gt)?)))
            }
            Tok::LParen => {
                self.advance()?;
                self.skip_newlines()?;
                // mawk: `print ()` is `print` (an empty argument list).
                let list = if group_ok && self.tok == Tok::RParen {
                    Vec::new()
                } else {
                    self.expr_list()?
                };
                self.skip_newlines()?;
                self.expect(Tok::RParen)?;
                if self.tok == Tok::In {
                    self.advance()?;
                    let Tok::Name(a) = self.tok.clone() else {
                        return self.err();
                    };
                    self.advance()?;
                    let v = self.var(&a);
                    return Ok(Expr::In(list, v));
                }
                if list.len() == 1 {
                    let mut list = list;
                    return list.pop().ok_or_else(|| near(&self.tok));
                }
                // `(a, b)` is only a print argument list.
                let ends_print = matches!(
                    self.tok,
                    Tok::Semi
                        | Tok::Newline
                        | Tok::RBrace
                        | Tok::Gt
                        | Tok::Append
                        | Tok::Pipe
                        | Tok::Eof
                );
                if !(group_ok && ends_print) {
                    return self.err();
                }
                Ok(Expr::Group(list))
            }
            Tok::Name(n) if !(self.funcs.contains_key(&n) && self.lex.peek_paren()) => {
                self.advance()?;
                self.name_ref(&n)
            }
            Tok::Name(n) | Tok::FuncName(n) => {
                // A known function may be called with blanks before `(` (mawk).
                self.advance()?;
                self.expect(Tok::LParen)?;
                self.skip_newlines()?;
                let args = if self.tok == Tok::RParen {
                    Vec::new()
                } else {
                    self.expr_list()?
                };
                self.skip_newlines()?;
                self.expect(Tok::RParen)?;
                let f = self.func_index(&n);
                self.calls.push(f);
                let line = self.lex.line;
                if let Some(func) = self.prog.funcs.get_mut(f)
                    && args.len() > func.max_args
                {
                    func.max_args = args.len();
                    func.max_args_line = line;
                }
                Ok(Expr::Call(f, args))
            }
            Tok::System => self.refuse("system()"),
            Tok::Builtin(b) => {
                self.advance()?;
                if self.tok != Tok::LParen {
                    if b == Builtin::Length {
                        return Ok(Expr::Builtin(b, Vec::new()));
                    }
                    return self.err();
                }
                self.advance()?;
                self.skip_newlines()?;
                let args = if self.tok == Tok::RParen {
                    Vec::new()
                } else {
                    self.expr_list()?
                };
                self.skip_newlines()?;
                self.expect(Tok::RParen)?;
                self.check_builtin(b, &args)?;
                Ok(Expr::Builtin(b, args))
            }
            Tok::Getline => {
                self.advance()?;
                let lv = if matches!(self.tok, Tok::Name(_) | Tok::Dollar) {
                    Some(Box::new(self.lvalue_operand()?))
                } else {
                    None
                };
                let file = if self.tok == Tok::Lt {
                    self.advance()?;
                    Some(Box::new(self.getline_file()?))
                } else {
                    None
                };
                Ok(Expr::Getline(lv, file))
            }
            _ => self.err(),
        }
    }

    /// The file operand of `getline < file`: a primary (no concatenation).
    fn getline_file(&mut self) -> R<Expr> {
        if self.tok == Tok::Dollar {
            self.advance()?;
            return Ok(Expr::Field(Box::new(self.field_operand()?)));
        }
        self.primary(true)
    }

    fn check_builtin(&self, b: Builtin, args: &[Expr]) -> R<()> {
        let (min, max) = match b {
            Builtin::Length => (0, 1),
            Builtin::Substr => (2, 3),
            Builtin::Index | Builtin::Atan2 => (2, 2),
            Builtin::Split => (2, 3),
            Builtin::Sub | Builtin::Gsub => (2, 3),
            Builtin::Match => (2, 2),
            Builtin::Sprintf => (1, usize::MAX),
            Builtin::Tolower | Builtin::Toupper => (1, 1),
            Builtin::Int
            | Builtin::Sqrt
            | Builtin::Exp
            | Builtin::Log
            | Builtin::Sin
            | Builtin::Cos => (1, 1),
            Builtin::Rand => (0, 0),
            Builtin::Srand | Builtin::Fflush => (0, 1),
            Builtin::Close => (1, 1),
        };
        if args.len() < min || args.len() > max {
            return Err(format!("wrong number of arguments in call to {b:?}").to_lowercase());
        }
        if matches!(b, Builtin::Sub | Builtin::Gsub)
            && let Some(t) = args.get(2)
            && to_lvalue(t).is_none()
        {
            return Err("syntax error at or near )".into());
        }
        if b == Builtin::Split && !matches!(args.get(1), Some(Expr::Var(_))) {
            return Err("syntax error at or near )".into());
        }
        Ok(())
    }
}

fn to_lvalue(e: &Expr) -> Option<LValue> {
    match e {
        Expr::Var(v) => Some(LValue::Var(*v)),
        Expr::Index(v, s) => Some(LValue::Index(*v, s.clone())),
        Expr::Field(f) => Some(LValue::Field(f.clone())),
        _ => None,
    }
}
