//! Static analysis after parsing: which function parameters are arrays.

use crate::ast::*;

/// Marks function parameters used as arrays (directly, or passed on to a
/// parameter that is), so callers can pass an untyped variable by reference.
pub fn infer_array_params(prog: &mut Program) {
    let n = prog.funcs.len();
    // Direct uses first.
    for f in prog.funcs.iter_mut() {
        let mut marks = vec![false; f.nparams];
        for s in &f.body {
            walk_stmt(s, &mut |v| {
                if let Var::Local(i) = v
                    && let Some(m) = marks.get_mut(i)
                {
                    *m = true;
                }
            });
        }
        f.array_params = marks;
    }
    // Propagate through calls until nothing changes.
    let mut changed = true;
    let mut rounds = 0;
    while changed && rounds < n + 2 {
        changed = false;
        rounds += 1;
        let snapshot: Vec<Vec<bool>> = prog.funcs.iter().map(|f| f.array_params.clone()).collect();
        for f in prog.funcs.iter_mut() {
            let mut marks = f.array_params.clone();
            for s in &f.body {
                walk_calls_stmt(s, &mut |callee, args| {
                    for (k, a) in args.iter().enumerate() {
                        if let Expr::Var(Var::Local(i)) = a
                            && snapshot.get(callee).and_then(|m| m.get(k)).copied() == Some(true)
                            && let Some(m) = marks.get_mut(*i)
                            && !*m
                        {
                            *m = true;
                        }
                    }
                });
            }
            if marks != f.array_params {
                changed = true;
                f.array_params = marks;
            }
        }
    }
}

fn walk_stmt(s: &Stmt, f: &mut dyn FnMut(Var)) {
    match s {
        Stmt::Expr(e) => walk_expr(e, f),
        Stmt::Print(a, r) | Stmt::Printf(a, r) => {
            a.iter().for_each(|e| walk_expr(e, f));
            if let Some(Redirect::Truncate(e) | Redirect::Append(e)) = r {
                walk_expr(e, f);
            }
        }
        Stmt::If(c, a, b) => {
            walk_expr(c, f);
            walk_stmt(a, f);
            if let Some(b) = b {
                walk_stmt(b, f);
            }
        }
        Stmt::While(c, b) | Stmt::Do(b, c) => {
            walk_expr(c, f);
            walk_stmt(b, f);
        }
        Stmt::For(i, c, s2, b) => {
            if let Some(i) = i {
                walk_stmt(i, f);
            }
            if let Some(c) = c {
                walk_expr(c, f);
            }
            if let Some(s2) = s2 {
                walk_stmt(s2, f);
            }
            walk_stmt(b, f);
        }
        Stmt::ForIn(_, a, b) => {
            f(*a);
            walk_stmt(b, f);
        }
        Stmt::Block(v) => v.iter().for_each(|s| walk_stmt(s, f)),
        Stmt::Exit(Some(e)) | Stmt::Return(Some(e)) => walk_expr(e, f),
        Stmt::Delete(a, subs) => {
            f(*a);
            if let Some(s) = subs {
                s.iter().for_each(|e| walk_expr(e, f));
            }
        }
        _ => {}
    }
}

/// Calls `f` with every variable used as an array inside `e`.
fn walk_expr(e: &Expr, f: &mut dyn FnMut(Var)) {
    match e {
        Expr::Index(v, s) => {
            f(*v);
            s.iter().for_each(|e| walk_expr(e, f));
        }
        Expr::In(s, v) => {
            f(*v);
            s.iter().for_each(|e| walk_expr(e, f));
        }
        Expr::Field(x) | Expr::Not(x) | Expr::Neg(x) | Expr::Plus(x) => walk_expr(x, f),
        Expr::Assign(lv, _, r) => {
            walk_lv(lv, f);
            walk_expr(r, f);
        }
        Expr::IncDec(lv, _, _) => walk_lv(lv, f),
        Expr::Cond(a, b, c) => {
            walk_expr(a, f);
            walk_expr(b, f);
            walk_expr(c, f);
        }
        Expr::And(a, b)
        | Expr::Or(a, b)
        | Expr::Binary(_, a, b)
        | Expr::Cmp(_, a, b)
        | Expr::Concat(a, b)
        | Expr::Match(_, a, b) => {
            walk_expr(a, f);
            walk_expr(b, f);
        }
        Expr::Call(_, a) | Expr::Group(a) => a.iter().for_each(|e| walk_expr(e, f)),
        Expr::Builtin(b, a) => {
            if *b == Builtin::Split
                && let Some(Expr::Var(v)) = a.get(1)
            {
                f(*v);
            }
            if *b == Builtin::Length
                && let Some(Expr::Var(_)) = a.first()
            {
                // length(x) works on both; do not force an array.
            }
            a.iter().for_each(|e| walk_expr(e, f));
        }
        Expr::Getline(lv, file) => {
            if let Some(lv) = lv {
                walk_lv(lv, f);
            }
            if let Some(x) = file {
                walk_expr(x, f);
            }
        }
        _ => {}
    }
}

fn walk_lv(lv: &LValue, f: &mut dyn FnMut(Var)) {
    match lv {
        LValue::Var(_) => {}
        LValue::Index(v, s) => {
            f(*v);
            s.iter().for_each(|e| walk_expr(e, f));
        }
        LValue::Field(e) => walk_expr(e, f),
    }
}

/// Calls `f(callee, args)` for every user call inside a statement.
fn walk_calls_stmt(s: &Stmt, f: &mut dyn FnMut(usize, &[Expr])) {
    let mut visit = |e: &Expr| walk_calls_expr(e, f);
    match s {
        Stmt::Expr(e) => visit(e),
        Stmt::Print(a, _) | Stmt::Printf(a, _) => a.iter().for_each(&mut visit),
        Stmt::If(c, a, b) => {
            visit(c);
            walk_calls_stmt(a, f);
            if let Some(b) = b {
                walk_calls_stmt(b, f);
            }
        }
        Stmt::While(c, b) | Stmt::Do(b, c) => {
            visit(c);
            walk_calls_stmt(b, f);
        }
        Stmt::For(i, c, s2, b) => {
            if let Some(c) = c {
                visit(c);
            }
            if let Some(i) = i {
                walk_calls_stmt(i, f);
            }
            if let Some(s2) = s2 {
                walk_calls_stmt(s2, f);
            }
            walk_calls_stmt(b, f);
        }
        Stmt::ForIn(_, _, b) => walk_calls_stmt(b, f),
        Stmt::Block(v) => v.iter().for_each(|s| walk_calls_stmt(s, f)),
        Stmt::Exit(Some(e)) | Stmt::Return(Some(e)) => visit(e),
        _ => {}
    }
}

fn walk_calls_expr(e: &Expr, f: &mut dyn FnMut(usize, &[Expr])) {
    match e {
        Expr::Call(c, a) => {
            f(*c, a);
            a.iter().for_each(|e| walk_calls_expr(e, f));
        }
        Expr::Field(x) | Expr::Not(x) | Expr::Neg(x) | Expr::Plus(x) => walk_calls_expr(x, f),
        Expr::Assign(_, _, r) => walk_calls_expr(r, f),
        Expr::Cond(a, b, c) => {
            walk_calls_expr(a, f);
            walk_calls_expr(b, f);
            walk_calls_expr(c, f);
        }
        Expr::And(a, b)
        | Expr::Or(a, b)
        | Expr::Binary(_, a, b)
        | Expr::Cmp(_, a, b)
        | Expr::Concat(a, b)
        | Expr::Match(_, a, b) => {
            walk_calls_expr(a, f);
            walk_calls_expr(b, f);
        }
        Expr::Builtin(_, a) | Expr::Group(a) | Expr::Index(_, a) | Expr::In(a, _) => {
            a.iter().for_each(|e| walk_calls_expr(e, f))
        }
        _ => {}
    }
}
