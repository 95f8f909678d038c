//! The benign policy suite (issue 3): ordinary agent work inside the project is not
//! refused under the acceptance config, and gives the output bash would.
//!
//! Run: `cargo test -p safesh --test safesh policy_benign`.

use crate::policy_support::{Project, check_entries};

/// `script` runs without a refusal, exits 0 and prints exactly `want`.
fn ok(script: &str, want: &str) -> Project {
    let p = Project::new();
    p.run(script).assert_ok_with(want);
    p
}

/// `safesh check` decides every command of `script` "allow" (exit 0).
fn check_allows(p: &Project, script: &str) {
    let (r, v) = p.check_json(script);
    assert_eq!(v["allowed"], true, "check refused:\n{}", r.dump());
    let cmds = v["commands"].as_array().expect("commands");
    assert!(!cmds.is_empty(), "no commands listed:\n{}", r.dump());
    for c in cmds {
        assert_eq!(c["verdict"], "allow", "verdict of {c}:\n{}", r.dump());
        assert_eq!(c["refusal"], serde_json::Value::Null, "{}", r.dump());
    }
    let plain = p.check(script);
    assert_eq!(plain.status, 0, "plain check:\n{}", plain.dump());
}

#[test]
fn grep_sed_awk_pipeline_inside_the_project() {
    ok(
        "grep alpha notes.txt | sed 's/alpha/ALPHA/' | awk '{ print $2 }'",
        "one\nfour\n",
    );
}

#[test]
fn sort_uniq_wc_head_tail_cut_tr() {
    ok(
        "cut -d' ' -f1 notes.txt | sort | uniq -c | sort -rn | head -1 | tr -s ' ' | cut -d' ' -f2-",
        "2 alpha\n",
    );
    ok("wc -l < notes.txt; tail -1 notes.txt", "4\nalpha four\n");
}

#[test]
fn jq_on_a_file_inside_the_project() {
    let p = Project::new();
    p.write("data.json", "{\"items\":[{\"n\":1},{\"n\":2}]}\n");
    p.run("jq '.items | map(.n) | add' data.json")
        .assert_ok_with("3\n");
    p.run("echo '{\"a\":\"b\"}' | jq -r .a")
        .assert_ok_with("b\n");
}

#[test]
fn write_then_read_a_file() {
    let p = ok(
        "echo hello > out.txt\necho more >> out.txt\ncat out.txt",
        "hello\nmore\n",
    );
    assert!(p.path("out.txt").exists());
}

#[test]
fn mkdir_p_and_nested_files() {
    let p = ok(
        "mkdir -p a/b/c\ntouch a/b/c/f.txt\ntest -f a/b/c/f.txt && echo yes",
        "yes\n",
    );
    assert!(p.path("a/b/c/f.txt").exists());
}

#[test]
fn cp_mv_rm_inside_the_project() {
    let p = ok(
        "cp notes.txt copy.txt\nmv copy.txt moved.txt\nmkdir -p d/e\ncp moved.txt d/e/\nrm moved.txt\nls d/e",
        "moved.txt\n",
    );
    assert!(!p.path("moved.txt").exists());
    assert!(p.path("d/e/moved.txt").exists());
}

#[test]
fn rm_rf_of_a_build_dir_inside_the_project() {
    let p = Project::new();
    p.write("build/out/x.o", "obj\n");
    p.run("rm -rf build\ntest -e build || echo gone")
        .assert_ok_with("gone\n");
    p.write("build2/y", "y\n");
    p.run("rm --recursive --force build2 && echo gone2")
        .assert_ok_with("gone2\n");
}

#[test]
fn here_doc_to_a_file() {
    let p = ok(
        "cat > script.txt <<'EOF'\nline $1\nsecond\nEOF\ncat script.txt",
        "line $1\nsecond\n",
    );
    assert!(p.path("script.txt").exists());
}

#[test]
fn for_and_while_loops() {
    ok(
        "for i in 1 2 3; do echo \"n$i\"; done\nwhile read -r a b; do echo \"$b\"; done < notes.txt",
        "n1\nn2\nn3\none\ntwo\nthree\nfour\n",
    );
}

#[test]
fn functions_and_local_variables() {
    ok(
        "count() { local n; n=$(grep -c \"$1\" notes.txt); echo \"$1=$n\"; }\ncount alpha\ncount beta",
        "alpha=2\nbeta=1\n",
    );
}

#[test]
fn a_function_named_like_a_utility_that_stays_benign() {
    ok(
        "grep() { command grep -c \"$@\"; }\ngrep alpha notes.txt",
        "2\n",
    );
}

#[test]
fn git_status_log_diff_are_allowed_by_check() {
    let p = Project::new();
    check_allows(&p, "git status");
    check_allows(&p, "git log --oneline -3");
    check_allows(&p, "git diff --stat");
}

#[test]
fn git_flag_like_text_inside_an_option_value_is_not_a_flag() {
    // `--grep=-c` has no `-c` flag; `--` ends the options.
    let p = Project::new();
    check_allows(&p, "git log --grep=-c");
    check_allows(&p, "git log --oneline -- -c");
}

#[test]
fn a_path_rule_allows_that_program_in_check() {
    let p = Project::with_extra("[commands.\"/usr/bin/true\"]\nallow = true\n");
    check_allows(&p, "/usr/bin/true");
}

#[test]
fn check_lists_in_process_work_as_allowed() {
    let p = Project::new();
    let (r, v) = p.check_json("mkdir -p out\ngrep alpha notes.txt > out/a.txt\ngit status");
    assert_eq!(v["allowed"], true, "{}", r.dump());
    let git = check_entries(&v, "git status");
    assert_eq!(git.len(), 1, "{}", r.dump());
    assert_eq!(git[0]["line"], 3, "{}", r.dump());
    assert!(!p.path("out").exists(), "check ran mkdir:\n{}", r.dump());
}

#[test]
fn short_sleep_is_not_nudged() {
    ok("sleep 0.1; echo woke", "woke\n");
}

#[test]
fn dev_null_can_be_read_and_written() {
    ok(
        "cat /dev/null; echo x > /dev/null; echo done 2>/dev/null",
        "done\n",
    );
}

#[test]
fn mktemp_gives_a_private_writable_file() {
    ok(
        "f=$(mktemp)\necho hi > \"$f\"\ncat \"$f\"\nrm \"$f\"\ntest -e \"$f\" || echo removed",
        "hi\nremoved\n",
    );
}

#[test]
fn mktemp_d_gives_a_private_writable_dir() {
    ok(
        "d=$(mktemp -d)\necho x > \"$d/a\"\ncat \"$d/a\"\nrm -r \"$d\"",
        "x\n",
    );
}

#[test]
fn symlink_that_stays_inside_can_be_read() {
    let p = Project::new();
    p.symlink(std::path::Path::new("notes.txt"), "link.txt");
    std::fs::create_dir(p.path("sub")).unwrap();
    p.symlink(std::path::Path::new("../notes.txt"), "sub/up.txt");
    p.run("head -1 link.txt; tail -1 sub/up.txt")
        .assert_ok_with("alpha one\nalpha four\n");
}

#[test]
fn dotdot_that_stays_inside_is_fine() {
    let p = Project::new();
    std::fs::create_dir(p.path("sub")).unwrap();
    p.run("cd sub\nhead -1 ../notes.txt\necho x > ../back.txt\ncat ../back.txt")
        .assert_ok_with("alpha one\nx\n");
}

#[test]
fn absolute_path_inside_the_project_is_fine() {
    ok("head -1 \"$PWD/notes.txt\"", "alpha one\n");
}

#[test]
fn reading_the_config_is_allowed() {
    ok("grep -c deny_flags safesh.toml", "1\n");
}

#[test]
fn sed_in_place_inside_the_project() {
    let p = ok(
        "cp notes.txt n2.txt\nsed -i 's/beta/BETA/' n2.txt\ngrep BETA n2.txt",
        "BETA two\n",
    );
    assert!(p.path("n2.txt").exists());
}

#[test]
fn awk_writing_a_file_inside_the_project() {
    ok(
        "awk '{ print $1 > \"firsts.txt\" }' notes.txt\nsort -u firsts.txt",
        "alpha\nbeta\ngamma\n",
    );
}

#[test]
fn find_with_exec_of_an_in_process_utility() {
    let p = Project::new();
    p.write("docs/a.md", "A\n");
    p.write("docs/b.md", "B\n");
    p.run("find docs -name '*.md' | sort\nfind docs -name '*.md' -exec cat {} + | sort")
        .assert_ok_with("docs/a.md\ndocs/b.md\nA\nB\n");
}

#[test]
fn xargs_with_an_in_process_utility() {
    ok("printf 'notes.txt\\n' | xargs grep -c gamma", "1\n");
}

#[test]
fn wrappers_around_allowed_utilities() {
    ok(
        "timeout 5 grep -c alpha notes.txt\nenv LC_ALL=C sort notes.txt | head -1\nnice -n 1 wc -l < notes.txt",
        "2\nalpha four\n4\n",
    );
}

#[test]
fn eval_and_source_of_benign_text() {
    let p = Project::new();
    p.write("lib.sh", "greet() { echo \"hi $1\"; }\n");
    p.run("eval 'echo from-eval'\n. ./lib.sh\ngreet you")
        .assert_ok_with("from-eval\nhi you\n");
}

#[test]
fn trap_with_a_benign_handler() {
    ok("trap 'echo bye' EXIT\necho body", "body\nbye\n");
}

#[test]
fn command_substitution_and_variables() {
    ok(
        "n=$(wc -l < notes.txt)\nfirst=$(head -1 notes.txt)\necho \"$n lines, first: $first\"",
        "4 lines, first: alpha one\n",
    );
}

#[test]
fn tee_and_redirections_inside() {
    let p = ok(
        "echo a | tee t1.txt > t2.txt\ncat t1.txt t2.txt 2> err.txt",
        "a\na\n",
    );
    assert!(p.path("err.txt").exists());
}

#[test]
fn the_word_bash_as_data_is_not_a_command() {
    // Mentioning a blocked name as an argument, in a string or a file is fine.
    ok(
        "echo bash sh sudo\ngrep -c bash notes.txt || true\nprintf '%s\\n' 'bash -c x' > cmd.txt\ncat cmd.txt",
        "bash sh sudo\n0\nbash -c x\n",
    );
}

#[test]
fn flag_after_double_dash_is_an_operand() {
    // `rm -r` is denied, but `--` ends the options: `-r` here is a file name.
    let p = Project::with_extra("[commands.rm]\ndeny_flags = [\"-r\"]\n");
    p.write("-r", "x\n");
    p.run("rm -- -r\ntest -e ./-r || echo removed")
        .assert_ok_with("removed\n");
}

#[test]
fn check_of_a_benign_script_exits_zero() {
    let p = Project::new();
    let r = p.check("grep alpha notes.txt | wc -l\nmkdir -p x && cp notes.txt x/");
    assert_eq!(r.status, 0, "{}", r.dump());
    assert!(!p.path("x").exists(), "check ran the script:\n{}", r.dump());
}

#[test]
fn xargs_appending_an_allowed_subcommand_is_decided_when_it_runs() {
    // The static pass sees only `git` (xargs appends `status`): not refused up front.
    let p = Project::new();
    check_allows(&p, "printf '%s\\n' status | xargs git");
    // At run time xargs runs `git status` (allowed) — and `git push` is still refused.
    git_init(&p);
    let r = p.run("printf '%s\\n' status | xargs git >/dev/null; echo \"st=$?\"");
    r.assert_ok_with("st=0\n");
    let r = p.run("printf '%s\\n' push | xargs git");
    r.assert_refused("COMMAND_NOT_WHITELISTED");
}

#[test]
fn git_works_when_the_home_has_a_gitconfig_it_may_not_read() {
    // git treats an unreadable ~/.gitconfig as fatal; the sandbox gives it none.
    let p = Project::new();
    std::fs::write(p.home.join(".gitconfig"), "[core]\n\tpager = less\n").unwrap();
    git_init(&p);
    let r = p.run("git status --short >/dev/null; echo \"st=$?\"");
    r.assert_ok_with("st=0\n");
}

/// A real repository in the project (made by the test, outside safesh).
fn git_init(p: &Project) {
    let ok = std::process::Command::new("git")
        .args(["init", "-q", "."])
        .current_dir(&p.dir)
        .env("HOME", &p.root)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "git init");
}

/// `mkdir -p` of an absolute path in the project: its top ancestors (`/tmp`,
/// …) are outside the read roots but exist, so nothing is written there —
/// GNU mkdir creates only what is missing, and so does safesh.
#[test]
fn mkdir_p_of_an_absolute_path_inside_the_project() {
    let p = ok(
        "mkdir -p \"$PWD/gen/a\" && mkdir -p \"$PWD/gen/a/b\" \"$PWD\" && echo made",
        "made\n",
    );
    assert!(p.dir.join("gen/a/b").is_dir());
    // Only what exists is skipped: a missing directory outside the roots is
    // still a write there, refused.
    let outside = p
        .dir
        .parent()
        .map(|d| d.join("not-a-root/x"))
        .unwrap_or_default();
    p.run(&format!("mkdir -p {}", outside.display()))
        .assert_refused("PATH_VIOLATION");
    assert!(!outside.exists());
}
