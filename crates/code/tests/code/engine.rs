//! The engine: modern syntax, modules, async, errors and limits.

use crate::support::{Project, code, stderr, stdout};

#[test]
fn modern_syntax_json_and_named_regex_groups_run() {
    let p = Project::new();
    let r = p.run(
        r#"const m = /(?<y>\d{4})-(?<mo>\d{2})/.exec("on 2026-11 ok")!;
const o = { ...{ a: 1 }, b: m.groups?.y ?? "none" };
class A { #x = 2; get x() { return this.#x; } }
const big = 2n ** 64n;
console.log(JSON.stringify(o), new A().x, big.toString(), [1, [2, [3]]].flat(2).at(-1));"#,
    );
    assert_eq!(
        stdout(&r),
        "{\"a\":1,\"b\":\"2026\"} 2 18446744073709551616 3\n",
        "{}",
        stderr(&r)
    );
    assert_eq!(r.outcome.exit_code, 0);
}

#[test]
fn async_await_and_module_imports_work() {
    let p = Project::new();
    let r = p.run(
        r#"import * as text from "safesh:text";
import { head } from "safesh:stdlib";
const wait = (v: number) => new Promise<number>((ok) => ok(v));
const [a, b] = await Promise.all([wait(1), wait(2)]);
console.log(a + b, text.count("a b\nc\n").words, JSON.stringify(await head("public.txt", 1)));"#,
    );
    assert_eq!(stdout(&r), "3 3 \"hello\\n\"\n", "{}", stderr(&r));
}

#[test]
fn there_is_no_ambient_authority() {
    let p = Project::new();
    let r = p.run(
        r#"const g = globalThis as any;
console.log(typeof g.require, typeof g.process, typeof g.Deno, typeof g.std, typeof g.os, typeof g.__safesh_host);"#,
    );
    assert_eq!(
        stdout(&r),
        "undefined undefined undefined undefined undefined undefined\n",
        "{}",
        stderr(&r)
    );
}

#[test]
fn a_bare_import_outside_the_stdlib_is_refused() {
    let p = Project::new();
    let r = p.run("import x from 'lodash';\nconsole.log(x);");
    assert_eq!(r.outcome.exit_code, 1, "{}", stderr(&r));
    assert!(stderr(&r).contains("NOT_SUPPORTED"), "{}", stderr(&r));
}

#[test]
fn a_promise_that_never_settles_ends_the_run() {
    let p = Project::new();
    let r = p.run("await new Promise(() => {}); console.log('never');");
    assert_eq!(r.outcome.exit_code, 1);
    assert!(stderr(&r).contains("never settle"), "{}", stderr(&r));
    assert_eq!(stdout(&r), "");
}

#[test]
fn a_rejected_promise_is_an_uncaught_exception() {
    let p = Project::new();
    let r = p.run("async function f() { throw new TypeError('nope'); }\nawait f();");
    assert_eq!(r.outcome.exit_code, 1);
    assert!(
        stderr(&r).contains("Uncaught TypeError: nope"),
        "{}",
        stderr(&r)
    );
    assert!(stderr(&r).contains("main.ts:1"), "{}", stderr(&r));
}

#[test]
fn a_thrown_refusal_keeps_its_code() {
    let p = Project::new();
    let r = p.run("await fs.read('/etc/shadow');");
    assert_eq!(code(&r), Some("PATH_VIOLATION"), "{}", stderr(&r));
    assert_eq!(r.outcome.exit_code, 126);
}

#[test]
fn session_vars_persist_across_runs() {
    let p = Project::new();
    let r = p.run(
        "$session.vars.count = ($session.vars.count ?? 0) + 1; console.log($session.vars.count);",
    );
    assert_eq!(stdout(&r), "1\n", "{}", stderr(&r));
    let r2 = crate::support::run_in(
        r.session,
        "$session.vars.count += 1; console.log($session.vars.count, $session.cwd.length > 0);",
        Some(r.vars),
    );
    assert_eq!(stdout(&r2), "2 true\n", "{}", stderr(&r2));
}

#[test]
fn streams_copy_a_file_line_by_line() {
    let p = Project::new();
    let big: String = (0..5000)
        .map(|i| format!("line {i} {}\n", if i % 7 == 0 { "ERROR" } else { "ok" }))
        .collect();
    std::fs::write(p.dir.join("big.log"), &big).unwrap();
    let r = p.run(
        r#"import { src, dest, filter, transform } from "safesh/streams";
const n = await src("big.log").pipe(filter((l: string) => l.includes("ERROR"))).pipe(transform((l: string) => `[E] ${l}`)).pipe(dest("errors.txt"));
console.log(n);"#,
    );
    let want: String = big
        .lines()
        .filter(|l| l.contains("ERROR"))
        .map(|l| format!("[E] {l}\n"))
        .collect();
    assert_eq!(
        stdout(&r),
        format!("{}\n", want.lines().count()),
        "{}",
        stderr(&r)
    );
    assert_eq!(
        std::fs::read_to_string(p.dir.join("errors.txt")).unwrap(),
        want
    );
}
