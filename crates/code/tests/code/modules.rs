//! Timers (`setTimeout`/`setInterval`, promise-driven and bounded by the run's
//! deadline) and relative imports of the user's own files (read as `cat` reads
//! them, types stripped, errors in that file's lines, labels joined).

use crate::support::{Project, code, session_in, stderr, stdout};
use safesh_code::{CodeRequest, Language};
use safesh_core::OutputTarget;

#[test]
fn timers_fire_in_due_order_and_cleared_ones_never() {
    let p = Project::new();
    let r = p.run(
        // (Orders that hold under any load: due times far apart, or chained.)
        r#"setTimeout(() => console.log("b"), 200);
setTimeout((x: string) => console.log(x), 1, "a");
const never = setTimeout(() => console.log("never"), 10);
clearTimeout(never);
await new Promise((r) => setTimeout(r, 300));
console.log("awaited");
let n = 0;
const iv = setInterval(() => {
  n++;
  if (n === 3) { clearInterval(iv); console.log("interval", n); setTimeout(() => console.log("after the module"), 0); }
}, 1);"#,
    );
    assert_eq!(
        stdout(&r),
        "a\nb\nawaited\ninterval 3\nafter the module\n",
        "{}",
        stderr(&r)
    );
    assert_eq!(r.outcome.exit_code, 0);
}

#[test]
fn a_timer_past_the_deadline_is_a_timeout_and_text_is_not_a_callback() {
    let p = Project::new();
    let r = safesh_code::run(
        p.session(),
        CodeRequest {
            source: "await new Promise((r) => setTimeout(r, 60_000)); console.log('no');".into(),
            language: Language::TypeScript,
            name: "main.ts".into(),
            timeout_ms: Some(200),
            input: None,
            vars: None,
        },
        OutputTarget::Separate { cap: 1 << 20 },
    );
    assert_eq!(code(&r), Some("TIMEOUT"), "{}", stderr(&r));
    assert_eq!(stdout(&r), "");
    // A string is code, not a callback: refused (eval has its own commit point).
    let r = p.run("try { setTimeout('console.log(1)', 1); } catch (e) { console.log(e.name); }");
    assert_eq!(stdout(&r), "TypeError\n", "{}", stderr(&r));
}

#[test]
fn relative_imports_load_the_users_files_with_types_stripped() {
    let p = Project::new();
    std::fs::create_dir_all(p.dir.join("lib/deep")).unwrap();
    std::fs::write(
        p.dir.join("lib/deep/util.ts"),
        "export const base: number = 40;\nexport default function inc(n: number): number { return n + 1; }\n",
    )
    .unwrap();
    std::fs::write(
        p.dir.join("lib/mid.ts"),
        "import inc, { base } from './deep/util.ts';\nimport { count } from 'safesh:text';\nexport const answer = inc(inc(base)) + count('').lines;\n",
    )
    .unwrap();
    std::fs::write(p.dir.join("plain.js"), "export const js = 'js';\n").unwrap();
    let r = p.run(
        "import { answer } from './lib/mid.ts';\nimport { js } from './plain.js';\nconst again = await import('./lib/../lib/mid.ts');\nconsole.log(answer, js, again.answer === answer);",
    );
    assert_eq!(stdout(&r), "42 js true\n", "{}", stderr(&r));
}

#[test]
fn an_error_in_an_imported_file_names_that_file_and_its_line() {
    let p = Project::new();
    std::fs::write(p.dir.join("bad.ts"), "export const a = 1;\nconst b: = 2;\n").unwrap();
    std::fs::write(p.dir.join("bad.js"), "export const a = 1;\nconst b = ;\n").unwrap();
    std::fs::write(
        p.dir.join("thrower.ts"),
        "export function boom(): never {\n  throw new Error('deep');\n}\n",
    )
    .unwrap();
    for (file, col) in [("bad.ts", 10), ("bad.js", 11)] {
        let r = p.run(&format!("import {{ a }} from './{file}';\nconsole.log(a);"));
        assert_eq!(code(&r), Some("PARSE_ERROR"), "{file}: {}", stderr(&r));
        assert!(
            stderr(&r).contains(&format!("(in {file}, line 2, column {col})")),
            "{file}: {}",
            stderr(&r)
        );
        assert_eq!(stdout(&r), "", "nothing runs");
    }
    let r = p.run("import { boom } from './thrower.ts';\nboom();");
    assert_eq!(r.outcome.exit_code, 1);
    assert!(
        stderr(&r).contains("at boom (thrower.ts:2:13)"),
        "{}",
        stderr(&r)
    );
}

#[test]
fn importing_outside_the_read_roots_is_refused_like_cat_and_labels_join() {
    let p = Project::new();
    let outside = p.dir.parent().unwrap().join("outside.js");
    std::fs::write(&outside, "export default 'outside';\n").unwrap();
    std::os::unix::fs::symlink(&outside, p.dir.join("link.js")).unwrap();
    for spec in ["../outside.js", "./link.js"] {
        let r = p.run(&format!(
            "try {{ await import('{spec}'); console.log('loaded'); }} catch (e) {{ console.log('refused', e.code); }}"
        ));
        assert_eq!(
            stdout(&r),
            "refused PATH_VIOLATION\n",
            "{spec}: {}",
            stderr(&r)
        );
    }
    let r = p.run("import x from '/etc/hostname.js';");
    assert_eq!(r.outcome.exit_code, 1, "{}", stderr(&r));
    assert!(stderr(&r).contains("NOT_SUPPORTED"), "{}", stderr(&r));
    // A module made from a secret is the secret's: what the script prints is.
    let r =
        p.run("await fs.write('s.js', 'export default ' + JSON.stringify(await fs.read('.env')));");
    assert_eq!(r.outcome.exit_code, 0, "{}", stderr(&r));
    let r = crate::support::run_in(
        session_in(&p.dir),
        "import s from './s.js';\nconsole.log(s.length);",
        None,
    );
    assert_eq!(stdout(&r), "27\n", "{}", stderr(&r));
    assert!(r.outcome.label.is_secret(), "{:?}", r.outcome.label);
    // The benign neighbour: the agent's own module is not.
    std::fs::write(p.dir.join("mine.js"), "export default 'mine';\n").unwrap();
    let r = p.run("import m from './mine.js';\nconsole.log(m);");
    assert_eq!(stdout(&r), "mine\n", "{}", stderr(&r));
    assert!(!r.outcome.label.is_secret(), "{:?}", r.outcome.label);
}

#[test]
fn lazy_globals_are_the_instances_a_static_import_gets_in_any_order() {
    let p = Project::new();
    // `early.ts` runs before `main.ts`'s own import of safesh:fs is evaluated
    // and touches the global `fs` then; the global comes first in one, the
    // import in the other.
    std::fs::write(p.dir.join("early.ts"), "export const exists = fs.exists;\n").unwrap();
    let r = p.run(
        r#"import { exists } from "./early.ts";
import * as f from "safesh:fs";
import shell from "safesh:shell";
import * as t from "safesh:text";
console.log(exists === f.exists, fs === f, $ === shell, text === t, await fs.exists("early.ts"));"#,
    );
    assert_eq!(stdout(&r), "true true true true true\n", "{}", stderr(&r));
    let r = p.run(
        r#"const before = text;
const t = await import("safesh:text");
console.log(before === t, text.count("a b\n").words);"#,
    );
    assert_eq!(stdout(&r), "true 2\n", "{}", stderr(&r));
}

#[test]
fn lazy_globals_stay_read_only_and_the_setup_modules_cannot_be_imported() {
    let p = Project::new();
    let r = p.run(
        r#"for (const attempt of [() => { fs = {}; }, () => Object.defineProperty(globalThis, "$", { value: 1 }), () => { delete globalThis.text; }]) {
  try { attempt(); console.log("changed"); } catch (e) { console.log(e.name); }
}
console.log(typeof fs.read, typeof $.cmd, typeof text.grep, typeof globalThis.__safesh_load);"#,
    );
    assert_eq!(
        stdout(&r),
        "TypeError\nTypeError\nTypeError\nfunction function function undefined\n",
        "{}",
        stderr(&r)
    );
    for name in ["safesh:prelude", "safesh:globals"] {
        let r = p.run(&format!("import * as m from {name:?};"));
        assert_ne!(r.outcome.exit_code, 0, "{name}");
        assert!(
            stderr(&r).contains("NOT_SUPPORTED"),
            "{name}: {}",
            stderr(&r)
        );
    }
}
