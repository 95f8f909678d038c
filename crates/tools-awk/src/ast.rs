//! The syntax tree of an awk program.

use crate::value::Str;

/// A variable reference resolved at parse time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Var {
    /// Global slot.
    Global(usize),
    /// Slot in the current function frame.
    Local(usize),
}

/// Something that can be assigned.
#[derive(Clone, Debug)]
pub enum LValue {
    /// A scalar variable.
    Var(Var),
    /// An array element; several subscripts join with SUBSEP.
    Index(Var, Vec<Expr>),
    /// A field `$e`.
    Field(Box<Expr>),
}

/// Binary arithmetic operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
    /// `^`
    Pow,
}

/// Comparison operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
}

/// Builtin functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// length
    Length,
    /// substr
    Substr,
    /// index
    Index,
    /// split
    Split,
    /// sub
    Sub,
    /// gsub
    Gsub,
    /// match
    Match,
    /// sprintf
    Sprintf,
    /// tolower
    Tolower,
    /// toupper
    Toupper,
    /// int
    Int,
    /// sqrt
    Sqrt,
    /// exp
    Exp,
    /// log
    Log,
    /// sin
    Sin,
    /// cos
    Cos,
    /// atan2
    Atan2,
    /// rand
    Rand,
    /// srand
    Srand,
    /// close
    Close,
    /// fflush
    Fflush,
}

/// Expressions.
#[derive(Clone, Debug)]
pub enum Expr {
    /// Numeric constant.
    Num(f64),
    /// String constant.
    Str(Str),
    /// Regex literal (index into the program's regex table); alone it means `$0 ~ re`.
    Regex(usize),
    /// Variable read.
    Var(Var),
    /// Array element read.
    Index(Var, Vec<Expr>),
    /// `$e`.
    Field(Box<Expr>),
    /// Assignment, optionally compound.
    Assign(Box<LValue>, Option<BinOp>, Box<Expr>),
    /// `c ? a : b`.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `&&`.
    And(Box<Expr>, Box<Expr>),
    /// `||`.
    Or(Box<Expr>, Box<Expr>),
    /// `!e`.
    Not(Box<Expr>),
    /// `-e`.
    Neg(Box<Expr>),
    /// `+e`.
    Plus(Box<Expr>),
    /// Arithmetic.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// Comparison.
    Cmp(CmpOp, Box<Expr>, Box<Expr>),
    /// String concatenation.
    Concat(Box<Expr>, Box<Expr>),
    /// `a ~ re` (negated for `!~`).
    Match(bool, Box<Expr>, Box<Expr>),
    /// `(subs) in arr`.
    In(Vec<Expr>, Var),
    /// `++x` / `x--` etc: lvalue, delta, is-prefix.
    IncDec(Box<LValue>, f64, bool),
    /// User function call.
    Call(usize, Vec<Expr>),
    /// Builtin call.
    Builtin(Builtin, Vec<Expr>),
    /// `getline [lv] [< file]`.
    Getline(Option<Box<LValue>>, Option<Box<Expr>>),
    /// A parenthesized list `(a, b)` (only valid as print arguments).
    Group(Vec<Expr>),
}

/// Where print output goes.
#[derive(Clone, Debug)]
pub enum Redirect {
    /// `> file`
    Truncate(Expr),
    /// `>> file`
    Append(Expr),
}

/// Statements.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// Expression statement.
    Expr(Expr),
    /// `print args [redir]`.
    Print(Vec<Expr>, Option<Redirect>),
    /// `printf fmt, args [redir]`.
    Printf(Vec<Expr>, Option<Redirect>),
    /// `if`.
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    /// `while`.
    While(Expr, Box<Stmt>),
    /// `do ... while`.
    Do(Box<Stmt>, Expr),
    /// `for (init; cond; step)`.
    For(
        Option<Box<Stmt>>,
        Option<Expr>,
        Option<Box<Stmt>>,
        Box<Stmt>,
    ),
    /// `for (k in arr)`.
    ForIn(Var, Var, Box<Stmt>),
    /// `{ ... }`.
    Block(Vec<Stmt>),
    /// `next`.
    Next,
    /// `nextfile`.
    NextFile,
    /// `exit [e]`.
    Exit(Option<Expr>),
    /// `return [e]`.
    Return(Option<Expr>),
    /// `break`.
    Break,
    /// `continue`.
    Continue,
    /// `delete arr[subs]` or `delete arr`.
    Delete(Var, Option<Vec<Expr>>),
}

/// A rule's pattern.
#[derive(Clone, Debug)]
pub enum Pattern {
    /// Every record.
    All,
    /// An expression.
    Expr(Expr),
    /// `p1, p2` with its slot in the range-state table.
    Range(Expr, Expr, usize),
}

/// A pattern-action rule.
#[derive(Clone, Debug)]
pub struct Rule {
    /// When it runs.
    pub pattern: Pattern,
    /// What it does (`None`: print $0).
    pub action: Option<Vec<Stmt>>,
}

/// A user-defined function.
#[derive(Clone, Debug, Default)]
pub struct Func {
    /// Its name.
    pub name: String,
    /// Number of parameters.
    pub nparams: usize,
    /// Whether each parameter is used as an array.
    pub array_params: Vec<bool>,
    /// Body.
    pub body: Vec<Stmt>,
    /// Defined (not just called).
    pub defined: bool,
    /// The most arguments any call passes (more than `nparams` is a compile
    /// error in mawk).
    pub max_args: usize,
    /// The line of the call that passes `max_args`.
    pub max_args_line: usize,
}

/// A whole program.
#[derive(Debug, Default)]
pub struct Program {
    /// BEGIN actions in order.
    pub begin: Vec<Vec<Stmt>>,
    /// Main rules.
    pub rules: Vec<Rule>,
    /// END actions.
    pub end: Vec<Vec<Stmt>>,
    /// Functions.
    pub funcs: Vec<Func>,
    /// Global variable names by slot.
    pub globals: Vec<String>,
    /// Regex literal sources.
    pub regexes: Vec<Vec<u8>>,
    /// Number of range patterns.
    pub nranges: usize,
}
