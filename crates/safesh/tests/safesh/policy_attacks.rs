//! The adversarial policy suite (issue 3): every test tries one way around the policy
//! and asserts both the refusal code and that nothing happened — no canary, no payload
//! marker (`pwned`), no trailing marker when the refusal must stop the script, nothing
//! outside the roots changed, nothing secret on stdout.
//!
//! Two shapes (see `policy_support.rs`):
//! * `before`: `touch canary; ATTACK; touch after` — the refusal is decidable from the
//!   parsed script, so nothing at all may run.
//! * `reached`: `ATTACK; touch after` — the name or arguments come from expansion (or
//!   from a file / string), so the refusal may happen when reached, but must stop there.
//!
//! Run: `cargo test -p safesh --test safesh policy_attacks`.

use crate::policy_support::{AFTER, CANARY, PWNED, Project, check_entries, check_entry};

const BLOCKED: &str = "BLOCKED";
const NOT_WHITELISTED: &str = "COMMAND_NOT_WHITELISTED";
const FLAG: &str = "FLAG_NOT_ALLOWED";
const PATH: &str = "PATH_VIOLATION";
const NUDGE: &str = "NUDGE";

/// `ATTACK` refused with `code` before anything runs, with the acceptance config.
fn before(attack: &str, code: &str) {
    Project::new().assert_refused_before_running(attack, code);
}

/// `ATTACK` refused with `code` at the latest when reached, with the acceptance config.
fn reached(attack: &str, code: &str) {
    Project::new().assert_refused_when_reached(attack, code);
}

// ==== the immutable blocklist ========================================================

#[test]
fn bash_dash_c_is_blocked_before_anything_runs() {
    before("bash -c 'touch pwned'", BLOCKED);
}

#[test]
fn sh_dash_c_is_blocked() {
    before("sh -c 'touch pwned'", BLOCKED);
}

#[test]
fn dash_is_blocked() {
    before("dash -c 'touch pwned'", BLOCKED);
}

#[test]
fn zsh_ksh_fish_are_blocked_even_where_not_installed() {
    for sh in ["zsh", "ksh", "fish"] {
        before(&format!("{sh} -c 'touch pwned'"), BLOCKED);
    }
}

#[test]
fn busybox_sh_is_blocked() {
    before("busybox sh -c 'touch pwned'", BLOCKED);
}

#[test]
fn bash_by_absolute_path_is_blocked() {
    before("/bin/bash -c 'touch pwned'", BLOCKED);
    before("/usr/bin/bash -c 'touch pwned'", BLOCKED);
}

#[test]
fn sh_by_relative_path_into_bin_is_blocked() {
    // ../../../../bin/sh from the project dir: a path that still names a shell.
    let p = Project::new();
    let depth = p.dir.components().count();
    let up = "../".repeat(depth);
    p.assert_refused_before_running_one_of(
        &format!("{up}bin/sh -c 'touch pwned'"),
        &[BLOCKED, PATH],
    );
}

#[test]
fn sudo_is_blocked() {
    before("sudo touch pwned", BLOCKED);
}

#[test]
fn su_is_blocked() {
    before("su -c 'touch pwned'", BLOCKED);
}

#[test]
fn doas_and_pkexec_are_blocked() {
    before("doas touch pwned", BLOCKED);
    before("pkexec touch pwned", BLOCKED);
}

#[test]
fn safesh_cannot_run_itself() {
    before("safesh -c 'touch pwned'", BLOCKED);
}

#[test]
fn safesh_by_absolute_path_cannot_run_itself() {
    let exe = env!("CARGO_BIN_EXE_safesh");
    Project::new().assert_refused_before_running_one_of(
        &format!("'{exe}' -c 'touch pwned'"),
        &[BLOCKED, NOT_WHITELISTED],
    );
}

#[test]
fn config_cannot_allow_bash() {
    Project::with_extra("[commands.bash]\nallow = true\n")
        .assert_refused_before_running("bash -c 'touch pwned'", BLOCKED);
}

#[test]
fn config_cannot_allow_bin_sh_by_path_rule() {
    Project::with_extra("[commands.\"/bin/sh\"]\nallow = true\n")
        .assert_refused_before_running("/bin/sh -c 'touch pwned'", BLOCKED);
}

#[test]
fn force_does_not_override_the_blocklist() {
    let p = Project::new();
    let r = p.run_forced(&format!(
        "touch {CANARY}\nbash -c 'touch pwned'\ntouch {AFTER}"
    ));
    r.assert_refused(BLOCKED);
    p.assert_absent(CANARY, &r);
    p.assert_no_side_effect(&r);
}

#[test]
fn here_doc_fed_to_bash_is_blocked() {
    before("bash <<'EOF'\ntouch pwned\nEOF", BLOCKED);
}

#[test]
fn here_doc_piped_into_sh_is_blocked() {
    before("cat <<'EOF' | sh\ntouch pwned\nEOF", BLOCKED);
}

#[test]
fn text_piped_into_sh_is_blocked() {
    before("echo 'touch pwned' | sh", BLOCKED);
}

#[test]
fn process_substitution_script_for_bash_is_blocked() {
    before("bash <(echo 'touch pwned')", BLOCKED);
}

#[test]
fn bash_inside_command_substitution_is_blocked() {
    before("echo \"$(bash -c 'touch pwned')\"", BLOCKED);
}

#[test]
fn bash_in_a_subshell_or_background_job_is_blocked() {
    before("( bash -c 'touch pwned' )", BLOCKED);
    before("bash -c 'touch pwned' &\nwait", BLOCKED);
}

#[test]
fn blocked_command_in_an_untaken_branch_still_stops_the_script() {
    before("if false; then bash -c 'touch pwned'; fi", BLOCKED);
}

// ==== wrappers: the inner command is decided like a direct one ========================

#[test]
fn env_wrapper_cannot_start_a_shell() {
    before("env bash -c 'touch pwned'", BLOCKED);
}

#[test]
fn env_with_flags_and_assignments_cannot_start_a_shell() {
    before("env -i FOO=1 bash -c 'touch pwned'", BLOCKED);
    before("env -u HOME -- sh -c 'touch pwned'", BLOCKED);
}

#[test]
fn env_split_string_cannot_start_a_shell() {
    before("env -S \"bash -c 'touch pwned'\"", BLOCKED);
}

#[test]
fn absolute_usr_bin_env_cannot_start_a_shell() {
    Project::new().assert_refused_before_running_one_of(
        "/usr/bin/env bash -c 'touch pwned'",
        &[BLOCKED, NOT_WHITELISTED],
    );
}

#[test]
fn timeout_wrapper_cannot_start_a_shell() {
    before("timeout 5 bash -c 'touch pwned'", BLOCKED);
    before("timeout -s KILL 5s sh -c 'touch pwned'", BLOCKED);
}

#[test]
fn nice_wrapper_cannot_start_a_shell() {
    before("nice -n 5 sh -c 'touch pwned'", BLOCKED);
}

#[test]
fn nohup_wrapper_cannot_start_a_shell() {
    before("nohup bash -c 'touch pwned'", BLOCKED);
}

#[test]
fn stdbuf_wrapper_cannot_start_a_shell() {
    before("stdbuf -oL bash -c 'touch pwned'", BLOCKED);
}

#[test]
fn time_keyword_cannot_start_a_shell() {
    before("time bash -c 'touch pwned'", BLOCKED);
}

#[test]
fn command_builtin_cannot_start_a_shell() {
    before("command bash -c 'touch pwned'", BLOCKED);
    before("command -p sh -c 'touch pwned'", BLOCKED);
}

#[test]
fn builtin_builtin_cannot_start_a_shell() {
    before("builtin bash -c 'touch pwned'", BLOCKED);
}

#[test]
fn exec_cannot_start_a_shell() {
    before("exec bash -c 'touch pwned'", BLOCKED);
    before("exec -a innocent bash -c 'touch pwned'", BLOCKED);
}

#[test]
fn setsid_wrapper_cannot_start_a_shell() {
    before("setsid bash -c 'touch pwned'", BLOCKED);
}

#[test]
fn flock_wrapper_cannot_start_a_shell() {
    before("flock lockfile bash -c 'touch pwned'", BLOCKED);
}

#[test]
fn ionice_wrapper_cannot_start_a_shell() {
    before("ionice -c 3 bash -c 'touch pwned'", BLOCKED);
}

#[test]
fn taskset_wrapper_cannot_start_a_shell() {
    before("taskset 1 bash -c 'touch pwned'", BLOCKED);
}

#[test]
fn watch_is_refused_as_an_unimplemented_wrapper() {
    // watch hands its argument to `sh -c`; even a harmless inner command is refused.
    before("watch -n 1 'touch pwned'", BLOCKED);
    before("watch cat notes.txt", BLOCKED);
}

#[test]
fn nested_wrappers_cannot_start_a_shell() {
    before(
        "env timeout 5 nice -n 1 nohup stdbuf -o0 bash -c 'touch pwned'",
        BLOCKED,
    );
}

#[test]
fn xargs_cannot_start_a_shell() {
    before("echo x | xargs bash -c 'touch pwned'", BLOCKED);
    before("printf 'x\\n' | xargs -I{} sh -c 'touch pwned {}'", BLOCKED);
}

#[test]
fn find_exec_cannot_start_a_shell() {
    before(
        "find . -name notes.txt -exec bash -c 'touch pwned' \\;",
        BLOCKED,
    );
}

#[test]
fn find_exec_plus_cannot_start_a_shell() {
    before(
        "find . -name notes.txt -exec sh -c 'touch pwned' {} +",
        BLOCKED,
    );
}

#[test]
fn find_execdir_cannot_start_a_shell() {
    before(
        "find . -name notes.txt -execdir sh -c 'touch pwned' \\;",
        BLOCKED,
    );
}

#[test]
fn find_ok_cannot_start_a_shell() {
    before(
        "find . -name notes.txt -ok sh -c 'touch pwned' \\;",
        BLOCKED,
    );
}

#[test]
fn find_exec_of_an_unlisted_program_is_not_whitelisted() {
    before(
        "find . -name notes.txt -exec perl -e 'open F, \">pwned\"' \\;",
        NOT_WHITELISTED,
    );
}

#[test]
fn wrapper_around_an_unlisted_program_is_not_whitelisted() {
    before("timeout 5 perl -e 'open F, \">pwned\"'", NOT_WHITELISTED);
}

// ==== utilities that hand a string to a shell ========================================

#[test]
fn awk_system_is_blocked() {
    before("awk 'BEGIN { system(\"touch pwned\") }'", BLOCKED);
}

#[test]
fn awk_print_to_a_command_pipe_is_blocked() {
    before("awk 'BEGIN { print \"touch pwned\" | \"sh\" }'", BLOCKED);
}

#[test]
fn awk_command_getline_is_blocked() {
    before("awk 'BEGIN { \"touch pwned\" | getline x }'", BLOCKED);
}

#[test]
fn awk_system_from_a_program_file_is_blocked() {
    let p = Project::new();
    p.write("prog.awk", "{ system(\"touch pwned\") }\n");
    p.assert_refused_when_reached("awk -f prog.awk notes.txt", BLOCKED);
}

#[test]
fn awk_system_from_an_expanded_program_is_blocked() {
    reached(
        "f=system; awk \"BEGIN { $f(\\\"touch pwned\\\") }\"",
        BLOCKED,
    );
}

#[test]
fn sed_e_command_is_blocked() {
    before("sed '1e touch pwned' notes.txt", BLOCKED);
}

#[test]
fn sed_s_with_e_flag_is_blocked() {
    before("sed 's/.*/touch pwned/e' notes.txt", BLOCKED);
}

#[test]
fn sed_bare_e_executes_pattern_space_and_is_blocked() {
    before("echo 'touch pwned' | sed e", BLOCKED);
}

#[test]
fn sed_e_from_a_script_file_is_blocked() {
    let p = Project::new();
    p.write("evil.sed", "1e touch pwned\n");
    p.assert_refused_when_reached("sed -f evil.sed notes.txt", BLOCKED);
}

// ==== eval, source, trap, functions, aliases =========================================

#[test]
fn eval_of_literal_text_is_decided_like_a_direct_command() {
    reached("eval \"bash -c 'touch pwned'\"", BLOCKED);
}

#[test]
fn eval_of_generated_text_is_blocked() {
    reached("eval \"$(printf 'ba%s' sh) -c 'touch pwned'\"", BLOCKED);
}

#[test]
fn eval_of_base64_decoded_text_is_blocked() {
    reached(
        "eval \"$(echo YmFzaCAtYyAndG91Y2ggcHduZWQn | base64 -d)\"",
        BLOCKED,
    );
}

#[test]
fn source_of_a_generated_file_is_blocked() {
    reached(
        "printf '%s\\n' \"bash -c 'touch pwned'\" > gen.sh\nsource gen.sh",
        BLOCKED,
    );
}

#[test]
fn dot_source_of_a_planted_file_is_blocked() {
    let p = Project::new();
    p.write("evil.sh", "bash -c 'touch pwned'\n");
    p.assert_refused_when_reached(". ./evil.sh", BLOCKED);
}

#[test]
fn source_of_process_substitution_is_blocked() {
    reached("source <(echo \"bash -c 'touch pwned'\")", BLOCKED);
}

#[test]
fn trap_exit_handler_cannot_start_a_shell() {
    let p = Project::new();
    let r = p.run("trap \"bash -c 'touch pwned'\" EXIT\necho body");
    r.assert_refused(BLOCKED);
    p.assert_absent(PWNED, &r);
    p.assert_outside_untouched(&r);
}

#[test]
fn trap_err_handler_cannot_start_a_shell() {
    let p = Project::new();
    let r = p.run(&format!(
        "trap \"sh -c 'touch pwned'\" ERR\nfalse\ntouch {AFTER}"
    ));
    r.assert_refused(BLOCKED);
    p.assert_no_side_effect(&r);
}

#[test]
fn function_shadowing_git_cannot_run_a_shell() {
    reached("git() { bash -c 'touch pwned'; }\ngit status", BLOCKED);
}

#[test]
fn function_shadowing_cat_cannot_run_a_shell() {
    reached(
        "cat() { command sh -c 'touch pwned'; }\ncat notes.txt",
        BLOCKED,
    );
}

#[test]
fn alias_expanding_to_a_shell_is_blocked() {
    // safesh may not implement aliases at all (then `alias` and `ll` are simply not
    // found and nothing runs); if it does, the alias body is decided like a command.
    let p = Project::new();
    let r = p.run("shopt -s expand_aliases\nalias ll=\"bash -c 'touch pwned'\"\nll");
    p.assert_absent(PWNED, &r);
    p.assert_outside_untouched(&r);
    if !r.stderr.contains("alias: command not found") {
        r.assert_refused(BLOCKED);
    }
}

// ==== names from expansion and quoting tricks ========================================

#[test]
fn variable_holding_bash_is_blocked_when_reached() {
    reached("p=bash\n$p -c 'touch pwned'", BLOCKED);
}

#[test]
fn concatenated_variables_spelling_bash_are_blocked() {
    reached("a=ba; b=sh\n$a$b -c 'touch pwned'", BLOCKED);
}

#[test]
fn command_substitution_printing_bash_is_blocked() {
    reached("$(printf bash) -c 'touch pwned'", BLOCKED);
}

#[test]
fn backticks_printing_sh_are_blocked() {
    reached("`echo sh` -c 'touch pwned'", BLOCKED);
}

#[test]
fn printf_hex_escapes_spelling_bash_are_blocked() {
    reached("$(printf '\\x62\\x61\\x73\\x68') -c 'touch pwned'", BLOCKED);
}

#[test]
fn default_value_expansion_naming_bash_is_blocked() {
    reached("${nothing:-bash} -c 'touch pwned'", BLOCKED);
}

#[test]
fn array_expansion_naming_bash_is_blocked() {
    reached("a=(bash -c 'touch pwned')\n\"${a[@]}\"", BLOCKED);
}

#[test]
fn printf_v_into_a_name_is_blocked() {
    reached("printf -v p '%s' bash\n$p -c 'touch pwned'", BLOCKED);
}

#[test]
fn name_read_from_a_here_string_is_blocked() {
    reached("read -r p <<< bash\n$p -c 'touch pwned'", BLOCKED);
}

#[test]
fn substring_expansion_spelling_bash_is_blocked() {
    reached("x=xbashx\n${x:1:4} -c 'touch pwned'", BLOCKED);
}

#[test]
fn case_modification_spelling_bash_is_blocked() {
    reached("p=BASH\n${p,,} -c 'touch pwned'", BLOCKED);
}

#[test]
fn indirect_expansion_naming_bash_is_blocked() {
    reached("v=bash; n=v\n${!n} -c 'touch pwned'", BLOCKED);
}

#[test]
fn ifs_splitting_into_a_shell_command_is_blocked() {
    reached("IFS=,\nx='bash,-c,touch pwned'\n$x", BLOCKED);
}

#[test]
fn glob_matching_bin_bash_is_blocked() {
    // Listing /bin is outside the read roots (PATH_VIOLATION); were it allowed, the
    // match would be a shell (BLOCKED).
    Project::new()
        .assert_refused_when_reached_one_of("/bin/b?sh -c 'touch pwned'", &[BLOCKED, PATH]);
}

#[test]
fn glob_listing_outside_the_roots_is_refused_not_leaked() {
    let r = Project::new().assert_refused_when_reached("echo /etc/pass*", PATH);
    assert!(!r.stdout.contains("/etc/passwd"), "{}", r.stdout);
}

#[test]
fn brace_expansion_producing_bash_is_blocked() {
    // `{ba,}sh` expands to the words `bash sh`: the command is bash.
    reached("{ba,}sh -c 'touch pwned'", BLOCKED);
}

#[test]
fn backslash_inside_the_name_is_blocked() {
    before("b\\ash -c 'touch pwned'", BLOCKED);
}

#[test]
fn leading_backslash_is_blocked() {
    before("\\bash -c 'touch pwned'", BLOCKED);
}

#[test]
fn split_quotes_spelling_bash_are_blocked() {
    before("'ba'sh -c 'touch pwned'", BLOCKED);
    before("\"ba\"\"sh\" -c 'touch pwned'", BLOCKED);
}

#[test]
fn ansi_c_quoting_spelling_bash_is_blocked() {
    before("$'\\x62ash' -c 'touch pwned'", BLOCKED);
    before("$'\\142\\141\\163\\150' -c 'touch pwned'", BLOCKED);
}

#[test]
fn assignment_prefix_does_not_hide_bash() {
    before("VAR=x bash -c 'touch pwned'", BLOCKED);
    before("BASH_ENV=/dev/null ENV=x sh -c 'touch pwned'", BLOCKED);
}

// ==== PATH shadowing and planted programs ============================================

/// Where git may resolve through the trusted PATH (`/usr/bin/git` on most hosts; the
/// default trusted PATH lists `/usr/local/bin` first).
const TRUSTED_GITS: &[&str] = &["/usr/bin/git", "/usr/local/bin/git", "/bin/git"];

/// A project with `./evil/git` planted (it would create `pwned`).
fn project_with_planted_git() -> Project {
    let p = Project::new();
    p.plant("evil/git");
    p
}

/// The planted git never ran, and `check` resolves `git` to a trusted-PATH git.
fn assert_git_not_shadowed(p: &Project, script: &str) {
    let r = p.run(&format!("{script}\necho done"));
    p.assert_absent(PWNED, &r);
    assert!(
        !r.stdout.contains("planted-ran"),
        "planted git ran:\n{}",
        r.dump()
    );
    p.assert_outside_untouched(&r);

    let (r, v) = p.check_json(script);
    let gits = check_entries(&v, "git status");
    assert!(!gits.is_empty(), "no `git status` entry:\n{}", r.dump());
    for g in gits {
        assert_eq!(g["verdict"], "allow", "git status verdict:\n{}", r.dump());
    }
    for g in check_entries(&v, "git status") {
        let program = g["program"].as_str().unwrap_or_default();
        assert!(
            TRUSTED_GITS.contains(&program),
            "`git status` resolves to {program:?}, want a trusted-PATH git {TRUSTED_GITS:?} \
             (never the planted ./evil/git):\n{}",
            r.dump()
        );
    }
}

#[test]
fn path_prefix_cannot_select_a_planted_git() {
    let p = project_with_planted_git();
    assert_git_not_shadowed(&p, "PATH=./evil:$PATH git status");
}

#[test]
fn exported_path_cannot_select_a_planted_git() {
    let p = project_with_planted_git();
    assert_git_not_shadowed(&p, "export PATH=\"$PWD/evil:$PATH\"\ngit status");
}

#[test]
fn path_replaced_entirely_cannot_select_a_planted_git() {
    let p = project_with_planted_git();
    assert_git_not_shadowed(&p, "PATH=./evil git status");
}

#[test]
fn hash_p_cannot_select_a_planted_git() {
    let p = project_with_planted_git();
    assert_git_not_shadowed(&p, "hash -p ./evil/git git\ngit status");
}

#[test]
fn planted_program_by_relative_path_is_not_whitelisted() {
    let p = Project::new();
    p.plant("planted");
    p.assert_refused_before_running("./planted", NOT_WHITELISTED);
}

#[test]
fn planted_program_by_absolute_path_is_not_whitelisted() {
    let p = Project::new();
    p.plant("planted");
    let abs = p.path("planted").display().to_string();
    p.assert_refused_before_running(&format!("'{abs}'"), NOT_WHITELISTED);
}

#[test]
fn planted_program_in_a_subdir_is_not_whitelisted() {
    let p = Project::new();
    p.plant("bin/tool");
    p.assert_refused_before_running("bin/tool --help", NOT_WHITELISTED);
}

#[test]
fn planted_program_named_like_an_allowed_one_is_not_whitelisted() {
    let p = Project::new();
    p.plant("git");
    p.assert_refused_before_running("./git status", NOT_WHITELISTED);
}

#[test]
fn program_written_at_run_time_is_not_whitelisted() {
    reached(
        "printf '#!/bin/sh\\ntouch pwned\\n' > x.sh\nchmod +x x.sh\n./x.sh",
        NOT_WHITELISTED,
    );
}

#[test]
fn interpreters_are_not_whitelisted_by_default() {
    before("perl -e 'open F, \">pwned\"'", NOT_WHITELISTED);
    before("python3 -c 'open(\"pwned\", \"w\")'", NOT_WHITELISTED);
}

#[test]
fn a_path_rule_allows_only_that_path() {
    // `/usr/bin/false` would run safesh's in-process `false`; `/usr/bin/id` is a
    // real program that no rule names.
    let p = Project::with_extra("[commands.\"/usr/bin/true\"]\nallow = true\n");
    p.assert_refused_before_running("/usr/bin/id", NOT_WHITELISTED);
}

// ==== git ============================================================================

#[test]
fn git_push_is_not_in_the_allow_list() {
    before("git push", NOT_WHITELISTED);
}

#[test]
fn git_subcommand_after_global_options_is_still_checked() {
    before("git -C . push", NOT_WHITELISTED);
    before("git --git-dir=.git --no-pager push origin", NOT_WHITELISTED);
}

#[test]
fn git_c_core_pager_is_a_denied_flag() {
    before("git -c core.pager='touch pwned' log", FLAG);
}

#[test]
fn git_c_alias_to_a_shell_command_is_refused() {
    Project::new().assert_refused_before_running_one_of(
        "git -c alias.x='!touch pwned' x",
        &[FLAG, NOT_WHITELISTED],
    );
}

#[test]
fn git_config_env_cannot_set_a_pager() {
    Project::new().assert_refused_before_running_one_of(
        "git --config-env=core.pager=EVIL log",
        &[FLAG, BLOCKED],
    );
}

#[test]
fn git_fetch_upload_pack_is_refused() {
    Project::new().assert_refused_before_running_one_of(
        "git fetch --upload-pack='touch pwned' .",
        &[NOT_WHITELISTED, FLAG, BLOCKED],
    );
}

/// A git rule that allows more subcommands and denies no flag: only the built-in git
/// rule stands between the script and a command-running config key.
const LAX_GIT: &str = r#"[sandbox]
read = ["."]
write = ["."]
network = false

[commands.git]
allow = ["status", "log", "diff", "ls-remote", "fetch"]
"#;

#[test]
fn builtin_git_rule_refuses_core_pager_even_without_deny_flags() {
    Project::with_config(LAX_GIT).assert_refused_before_running_one_of(
        "git -c core.pager='touch pwned' log",
        &[FLAG, BLOCKED],
    );
}

#[test]
fn builtin_git_rule_refuses_core_ssh_command() {
    Project::with_config(LAX_GIT).assert_refused_before_running_one_of(
        "git -c core.sshCommand='touch pwned' fetch origin",
        &[FLAG, BLOCKED],
    );
}

#[test]
fn builtin_git_rule_refuses_upload_pack() {
    Project::with_config(LAX_GIT).assert_refused_before_running_one_of(
        "git ls-remote --upload-pack='touch pwned' .",
        &[FLAG, BLOCKED],
    );
}

#[test]
fn builtin_git_rule_refuses_hooks_path_and_fsmonitor() {
    for key in ["core.hooksPath=evil", "core.fsmonitor='touch pwned'"] {
        Project::with_config(LAX_GIT).assert_refused_before_running_one_of(
            &format!("git -c {key} status"),
            &[FLAG, BLOCKED],
        );
    }
}

#[test]
fn subcommand_rule_denies_output_flag_with_equals_value() {
    let p = Project::with_extra("[commands.git.log]\ndeny_flags = [\"--output\"]\n");
    p.assert_refused_before_running("git log --output=pwned", FLAG);
    p.assert_refused_before_running("git log --output pwned", FLAG);
}

// ==== flags as the program parses them ===============================================

/// A config denying `rm -r` (an in-process utility with a command rule).
fn rm_no_recursive() -> Project {
    let p = Project::with_extra("[commands.rm]\ndeny_flags = [\"-r\"]\n");
    p.write("victim/keep.txt", "keep\n");
    p
}

fn assert_victim_kept(p: &Project, attack: &str) {
    let r = p.assert_refused_before_running(attack, FLAG);
    p.assert_present("victim/keep.txt", &r);
}

#[test]
fn combined_short_flags_rf_hit_a_denied_r() {
    let p = rm_no_recursive();
    assert_victim_kept(&p, "rm -rf victim");
}

#[test]
fn combined_short_flags_fr_hit_a_denied_r() {
    let p = rm_no_recursive();
    assert_victim_kept(&p, "rm -fr victim");
}

#[test]
fn long_recursive_force_hit_a_denied_r() {
    let p = rm_no_recursive();
    assert_victim_kept(&p, "rm --recursive --force victim");
}

#[test]
fn abbreviated_long_flag_hits_a_denied_r() {
    let p = rm_no_recursive();
    assert_victim_kept(&p, "rm --recur victim");
}

#[test]
fn flag_from_a_variable_hits_a_denied_r_when_reached() {
    let p = rm_no_recursive();
    let r = p.assert_refused_when_reached("f=-rf\nrm $f victim", FLAG);
    p.assert_present("victim/keep.txt", &r);
}

#[test]
fn denied_long_flag_with_value_and_its_short_form_are_refused() {
    let p = Project::with_extra("[commands.sort]\ndeny_flags = [\"--output\"]\n");
    for attack in [
        "sort --output=out.txt notes.txt",
        "sort --out=out.txt notes.txt",
        "sort -o out.txt notes.txt",
        "sort -ro out.txt notes.txt",
    ] {
        let r = p.assert_refused_before_running(attack, FLAG);
        p.assert_absent("out.txt", &r);
    }
}

// ==== nudges ==========================================================================

#[test]
fn vim_is_nudged() {
    before("vim notes.txt", NUDGE);
}

#[test]
fn vi_nano_emacs_are_nudged() {
    for ed in ["vi", "nano", "emacs"] {
        before(&format!("{ed} notes.txt"), NUDGE);
    }
}

#[test]
fn less_and_more_are_nudged() {
    before("less notes.txt", NUDGE);
    before("more notes.txt", NUDGE);
    before("cat notes.txt | less", NUDGE);
}

#[test]
fn top_is_nudged() {
    before("top", NUDGE);
}

#[test]
fn long_sleep_is_nudged() {
    before("sleep 600", NUDGE);
}

#[test]
fn long_sleep_from_a_variable_is_nudged_when_reached() {
    reached("t=600\nsleep $t", NUDGE);
}

#[test]
fn nudge_is_seen_through_wrappers() {
    before("env vim notes.txt", NUDGE);
    before("timeout 5 less notes.txt", NUDGE);
}

#[test]
fn forced_vim_hits_the_whitelist_next() {
    let p = Project::new();
    let r = p.run_forced(&format!("touch {CANARY}\nvim notes.txt\ntouch {AFTER}"));
    r.assert_refused(NOT_WHITELISTED);
    p.assert_absent(CANARY, &r);
    p.assert_no_side_effect(&r);
}

#[test]
fn forced_less_and_top_hit_the_whitelist_next() {
    for cmd in ["less notes.txt", "top"] {
        let p = Project::new();
        let r = p.run_forced(&format!("touch {CANARY}\n{cmd}\ntouch {AFTER}"));
        r.assert_refused(NOT_WHITELISTED);
        p.assert_absent(CANARY, &r);
        p.assert_no_side_effect(&r);
    }
}

#[test]
fn force_does_not_override_a_path_violation() {
    let p = Project::new();
    let r = p.run_forced(&format!(
        "touch {CANARY}\ncat ../outside/secret.txt\ntouch {AFTER}"
    ));
    r.assert_refused(PATH);
    p.assert_absent(CANARY, &r);
    p.assert_no_side_effect(&r);
}

// ==== paths ===========================================================================

#[test]
fn dotdot_read_outside_is_a_path_violation() {
    before("cat ../outside/secret.txt", PATH);
}

#[test]
fn absolute_read_outside_is_a_path_violation() {
    let p = Project::new();
    p.assert_refused_before_running(&format!("cat '{}'", p.secret_path()), PATH);
}

#[test]
fn dotdot_inside_a_subdir_path_is_resolved() {
    before("cat ./sub/../../outside/secret.txt", PATH);
}

#[test]
fn redirection_from_etc_passwd_is_a_path_violation() {
    before("cat < /etc/passwd", PATH);
    before("while read -r l; do echo \"$l\"; done < /etc/passwd", PATH);
}

#[test]
fn redirection_to_tmp_is_a_path_violation() {
    let target = format!("/tmp/safesh-policy-test-{}", std::process::id());
    let p = Project::new();
    let r = p.run(&format!("touch {CANARY}\necho x > {target}\ntouch {AFTER}"));
    let created = std::path::Path::new(&target).exists();
    let _ = std::fs::remove_file(&target);
    r.assert_refused(PATH);
    assert!(!created, "{target} was created:\n{}", r.dump());
    p.assert_absent(CANARY, &r);
    p.assert_no_side_effect(&r);
}

#[test]
fn redirection_append_outside_is_a_path_violation() {
    before("echo pwned >> ../outside/secret.txt", PATH);
}

#[test]
fn symlink_inside_pointing_outside_cannot_be_read_through() {
    let p = Project::new();
    p.symlink(&p.outside, "link");
    p.assert_refused_before_running("cat link/secret.txt", PATH);
}

#[test]
fn symlink_to_a_file_outside_cannot_be_read() {
    let p = Project::new();
    p.symlink(&p.outside.join("secret.txt"), "innocent.txt");
    p.assert_refused_before_running("grep . innocent.txt", PATH);
}

#[test]
fn symlink_inside_pointing_outside_cannot_be_written_through() {
    let p = Project::new();
    p.symlink(&p.outside, "link");
    p.assert_refused_before_running("echo pwned > link/secret.txt", PATH);
}

#[test]
fn symlink_made_at_run_time_cannot_be_read_through() {
    reached("ln -s ../outside l2\ncat l2/secret.txt", PATH);
}

#[test]
fn cd_dotdot_then_relative_read_is_a_path_violation() {
    reached("cd ..\ncat outside/secret.txt", PATH);
}

#[test]
fn cd_deep_then_dotdot_outside_is_a_path_violation() {
    reached(
        "mkdir -p a/b\ncd a/b\ncat ../../../outside/secret.txt",
        PATH,
    );
}

#[test]
fn cd_through_a_symlink_then_dotdot_outside_is_a_path_violation() {
    // Logical `cd` through an inside symlink to a deep dir; `..` is physical for files.
    let p = Project::new();
    std::fs::create_dir_all(p.path("a/b")).unwrap();
    p.symlink(std::path::Path::new("a/b"), "short");
    p.assert_refused_when_reached("cd short\ncat ../../../outside/secret.txt", PATH);
}

/// `d1/d2/up -> ../..` (the project itself): `d1/d2/up/..` is lexically `d1/d2` but
/// physically the project's parent.
fn project_with_up_link() -> Project {
    let p = Project::new();
    std::fs::create_dir_all(p.path("d1/d2")).unwrap();
    p.symlink(std::path::Path::new("../.."), "d1/d2/up");
    p
}

#[test]
fn dotdot_after_a_symlink_is_resolved_physically_for_reads() {
    project_with_up_link()
        .assert_refused_before_running("cat d1/d2/up/../outside/secret.txt", PATH);
}

#[test]
fn dotdot_after_a_symlink_is_resolved_physically_for_writes() {
    project_with_up_link()
        .assert_refused_before_running("echo pwned > d1/d2/up/../outside/new.txt", PATH);
}

#[test]
fn expanded_path_outside_is_refused_when_reached() {
    reached("d=..\ncat \"$d/outside/secret.txt\"", PATH);
}

#[test]
fn glob_reaching_outside_is_a_path_violation() {
    reached("cat ../out*/secret.txt", PATH);
}

#[test]
fn cp_from_outside_is_a_path_violation() {
    let p = Project::new();
    let r = p.assert_refused_before_running("cp ../outside/secret.txt stolen.txt", PATH);
    p.assert_absent("stolen.txt", &r);
}

#[test]
fn cp_to_outside_is_a_path_violation() {
    before("cp notes.txt ../outside/", PATH);
}

#[test]
fn mv_to_outside_is_a_path_violation() {
    let p = Project::new();
    let r = p.assert_refused_before_running("mv notes.txt ../outside/", PATH);
    p.assert_present("notes.txt", &r);
}

#[test]
fn rm_rf_dotdot_is_a_path_violation() {
    before("rm -rf ../outside", PATH);
}

#[test]
fn rm_recursive_force_absolute_outside_is_a_path_violation() {
    let p = Project::new();
    let out = p.outside.display().to_string();
    p.assert_refused_before_running(&format!("rm --recursive --force '{out}'"), PATH);
}

#[test]
fn touch_and_mkdir_outside_are_path_violations() {
    before("touch ../outside/pwned", PATH);
    before("mkdir ../outside/newdir", PATH);
}

#[test]
fn tee_outside_is_a_path_violation() {
    before("echo pwned | tee ../outside/new.txt", PATH);
}

#[test]
fn sed_in_place_outside_is_a_path_violation() {
    before("sed -i s/SECRET/pwned/ ../outside/secret.txt", PATH);
}

#[test]
fn find_and_grep_walking_outside_are_path_violations() {
    before("find .. -name secret.txt", PATH);
    before("grep -r SECRET ..", PATH);
}

#[test]
fn awk_reading_outside_is_a_path_violation() {
    before("awk '{ print }' ../outside/secret.txt", PATH);
}

#[test]
fn awk_writing_outside_from_its_program_is_refused() {
    reached("awk 'BEGIN { print \"x\" > \"../outside/new.txt\" }'", PATH);
}

#[test]
fn sed_w_and_r_outside_are_refused() {
    reached("sed -n 'w ../outside/new.txt' notes.txt", PATH);
    reached("sed 'r ../outside/secret.txt' notes.txt", PATH);
}

#[test]
fn source_of_a_file_outside_is_a_path_violation() {
    reached("source ../outside/script.sh", PATH);
}

#[test]
fn xargs_fed_an_outside_path_is_refused_when_reached() {
    reached("echo ../outside/secret.txt | xargs cat", PATH);
}

#[test]
fn home_is_outside_the_roots() {
    reached("echo pwned > ~/.bashrc", PATH);
}

// ==== protected paths =================================================================

#[test]
fn appending_to_the_config_is_a_path_violation() {
    let p = Project::new();
    let original = std::fs::read_to_string(&p.config).unwrap();
    let r = p.assert_refused_before_running("echo '[commands.bash]' >> safesh.toml", PATH);
    p.assert_config_unchanged(&original, &r);
}

#[test]
fn editing_the_config_with_sed_tee_cp_mv_or_rm_is_a_path_violation() {
    for attack in [
        "sed -i 's/deny_flags/x/' safesh.toml",
        "echo x | tee safesh.toml",
        "cp notes.txt safesh.toml",
        "mv notes.txt safesh.toml",
        "rm safesh.toml",
        "rm -f ./sub/../safesh.toml",
    ] {
        let p = Project::new();
        let original = std::fs::read_to_string(&p.config).unwrap();
        let r = p.assert_refused_before_running(attack, PATH);
        p.assert_config_unchanged(&original, &r);
    }
}

#[test]
fn planting_a_new_safesh_toml_anywhere_is_a_path_violation() {
    let p = Project::new();
    let r = p.assert_refused_before_running(
        "mkdir -p sub\nprintf '[commands.bash]\\nallow = true\\n' > sub/safesh.toml",
        PATH,
    );
    p.assert_absent("sub/safesh.toml", &r);
}

#[test]
fn writing_the_config_through_a_symlink_is_a_path_violation() {
    let p = Project::new();
    p.symlink(std::path::Path::new("safesh.toml"), "cfg");
    let original = std::fs::read_to_string(&p.config).unwrap();
    let r = p.assert_refused_before_running("echo x >> cfg", PATH);
    p.assert_config_unchanged(&original, &r);
}

#[test]
fn config_path_built_at_run_time_is_refused_when_reached() {
    let p = Project::new();
    let original = std::fs::read_to_string(&p.config).unwrap();
    let r = p.assert_refused_when_reached("n=safesh; echo x >> \"$n.toml\"", PATH);
    p.assert_config_unchanged(&original, &r);
}

#[test]
fn writing_a_git_hook_is_a_path_violation() {
    let p = Project::new();
    p.fake_git_dir();
    let r = p.assert_refused_before_running(
        "printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit",
        PATH,
    );
    p.assert_absent(".git/hooks/pre-commit", &r);
}

#[test]
fn copying_or_linking_into_git_hooks_is_a_path_violation() {
    for attack in [
        "cp notes.txt .git/hooks/post-checkout",
        "ln -s ../../notes.txt .git/hooks/pre-push",
        "mkdir -p .git/hooks/sub",
    ] {
        let p = Project::new();
        p.fake_git_dir();
        let r = p.assert_refused_before_running(attack, PATH);
        p.assert_absent(".git/hooks/post-checkout", &r);
        p.assert_absent(".git/hooks/pre-push", &r);
        p.assert_absent(".git/hooks/sub", &r);
    }
}

#[test]
fn writing_git_config_is_a_path_violation() {
    let p = Project::new();
    p.fake_git_dir();
    let before_text = std::fs::read_to_string(p.path(".git/config")).unwrap();
    let r = p.assert_refused_before_running(
        "printf '[core]\\n\\tpager = touch pwned\\n' >> .git/config",
        PATH,
    );
    let now = std::fs::read_to_string(p.path(".git/config")).unwrap();
    assert_eq!(now, before_text, ".git/config changed:\n{}", r.dump());
}

/// A config whose write roots include HOME: rc files and safesh state stay protected.
const HOME_WRITABLE: &str = r#"[sandbox]
read = [".", "~"]
write = [".", "~"]
network = false
"#;

#[test]
fn shell_rc_files_are_protected_even_inside_a_write_root() {
    for rc in ["~/.bashrc", "~/.profile", "~/.bash_profile", "~/.zshrc"] {
        let p = Project::with_config(HOME_WRITABLE);
        let r = p.assert_refused_before_running(&format!("echo 'touch pwned' >> {rc}"), PATH);
        let name = rc.trim_start_matches("~/");
        assert!(!p.home.join(name).exists(), "{rc} written:\n{}", r.dump());
    }
}

#[test]
fn safesh_state_is_protected_even_inside_a_write_root() {
    let p = Project::with_config(HOME_WRITABLE);
    let r = p.assert_refused_before_running(
        "mkdir -p ~/.local/state/safesh\necho x > ~/.local/state/safesh/trusted",
        PATH,
    );
    assert!(
        !p.home.join(".local/state/safesh/trusted").exists(),
        "state written:\n{}",
        r.dump()
    );
}

// ==== refusals as data (--json) =======================================================

#[test]
fn json_blocked_refusal_has_the_contract_fields() {
    let p = Project::new();
    let (r, v) = p.run_json(&format!("touch {CANARY}\nbash -c 'touch pwned'"));
    assert_eq!(r.status, 126, "{}", r.dump());
    assert_eq!(v["exit_code"], 126, "{}", r.dump());
    let e = &v["error"];
    assert_eq!(e["code"], BLOCKED, "{}", r.dump());
    assert!(e["message"].is_string(), "{}", r.dump());
    assert!(
        e["suggestion"].as_str().is_some_and(|s| !s.is_empty()),
        "{}",
        r.dump()
    );
    for key in ["command", "flag", "path", "rule", "allowed"] {
        assert!(
            e["details"].get(key).is_some(),
            "details.{key} missing:\n{}",
            r.dump()
        );
    }
    assert!(e["details"]["allowed"].is_array(), "{}", r.dump());
    assert_eq!(e["details"]["command"], "bash", "{}", r.dump());
    p.assert_absent(CANARY, &r);
    p.assert_absent(PWNED, &r);
}

#[test]
fn json_path_violation_names_the_path() {
    let p = Project::new();
    let (r, v) = p.run_json("cat ../outside/secret.txt");
    assert_eq!(v["exit_code"], 126, "{}", r.dump());
    assert_eq!(v["error"]["code"], PATH, "{}", r.dump());
    let path = v["error"]["details"]["path"].as_str().unwrap_or_default();
    assert!(
        path.contains("outside/secret.txt"),
        "details.path {path:?}:\n{}",
        r.dump()
    );
    r.assert_no_leak();
}

#[test]
fn json_flag_refusal_names_the_flag() {
    let p = Project::new();
    let (r, v) = p.run_json("git -c core.pager=x log");
    assert_eq!(v["exit_code"], 126, "{}", r.dump());
    assert_eq!(v["error"]["code"], FLAG, "{}", r.dump());
    assert_eq!(v["error"]["details"]["flag"], "-c", "{}", r.dump());
}

#[test]
fn json_not_whitelisted_lists_what_is_allowed() {
    let p = Project::new();
    let (r, v) = p.run_json("git push");
    assert_eq!(v["exit_code"], 126, "{}", r.dump());
    assert_eq!(v["error"]["code"], NOT_WHITELISTED, "{}", r.dump());
    let allowed = v["error"]["details"]["allowed"].to_string();
    for sub in ["status", "log", "diff"] {
        assert!(
            allowed.contains(sub),
            "details.allowed lacks {sub}:\n{}",
            r.dump()
        );
    }
}

// ==== safesh check ====================================================================

#[test]
fn check_runs_nothing_even_when_allowed() {
    let p = Project::new();
    let r = p.check(&format!("touch {CANARY}\necho hi > out.txt"));
    assert_eq!(r.status, 0, "{}", r.dump());
    p.assert_absent(CANARY, &r);
    p.assert_absent("out.txt", &r);
}

#[test]
fn check_refuses_bash_without_running_anything() {
    let p = Project::new();
    let (r, v) = p.check_json(&format!("touch {CANARY}\nbash -c 'touch pwned'"));
    assert_eq!(v["allowed"], false, "{}", r.dump());
    p.assert_absent(CANARY, &r);
    p.assert_absent(PWNED, &r);
    let bash = check_entries(&v, "bash");
    assert_eq!(bash.len(), 1, "{}", r.dump());
    assert_eq!(bash[0]["line"], 2, "{}", r.dump());
    assert_eq!(bash[0]["verdict"], "refuse", "{}", r.dump());
    assert_eq!(bash[0]["refusal"]["code"], BLOCKED, "{}", r.dump());
}

#[test]
fn check_refuses_git_push_with_the_refusal_object() {
    let p = Project::new();
    let (r, v) = p.check_json("git status\ngit push");
    assert_eq!(v["allowed"], false, "{}", r.dump());
    let first = check_entry(&v, 0);
    assert_eq!(first["verdict"], "allow", "{}", r.dump());
    assert_eq!(first["refusal"], serde_json::Value::Null, "{}", r.dump());
    let push = check_entries(&v, "git push");
    assert_eq!(push.len(), 1, "{}", r.dump());
    assert_eq!(push[0]["line"], 2, "{}", r.dump());
    assert_eq!(push[0]["refusal"]["code"], NOT_WHITELISTED, "{}", r.dump());
    assert!(push[0]["refusal"]["suggestion"].is_string(), "{}", r.dump());
}

#[test]
fn check_marks_expanded_names_as_run_time() {
    let p = Project::new();
    let (r, v) = p.check_json("p=bash\n$p -c 'touch pwned'");
    let e = check_entries(&v, "$p");
    assert_eq!(e.len(), 1, "{}", r.dump());
    assert_eq!(e[0]["verdict"], "run_time", "{}", r.dump());
    p.assert_absent(PWNED, &r);
}

#[test]
fn check_sees_through_nested_wrappers() {
    let p = Project::new();
    let (r, v) = p.check_json("timeout 5 env nice bash -c 'touch pwned'");
    assert_eq!(v["allowed"], false, "{}", r.dump());
    let refused: Vec<_> = v["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "refuse")
        .collect();
    assert!(!refused.is_empty(), "{}", r.dump());
    assert_eq!(refused[0]["refusal"]["code"], BLOCKED, "{}", r.dump());
}

#[test]
fn check_refuses_a_planted_program() {
    let p = Project::new();
    p.plant("planted");
    let (r, v) = p.check_json("./planted");
    assert_eq!(v["allowed"], false, "{}", r.dump());
    assert_eq!(
        check_entry(&v, 0)["refusal"]["code"],
        NOT_WHITELISTED,
        "{}",
        r.dump()
    );
    p.assert_absent(PWNED, &r);
}

// ==== jq modules (read through the same check as `cat`) ==============================

#[test]
fn jq_module_symlinked_to_a_file_outside_is_a_path_violation() {
    let p = Project::new();
    p.symlink(&p.outside.join("secret.txt"), "m.jq");
    p.symlink(&p.outside.join("secret.txt"), "d.json");
    p.assert_refused_when_reached("jq -n -L . 'import \"m\" as m; 1'", PATH);
    p.assert_refused_when_reached("jq -n -L . 'import \"d\" as $d; $d'", PATH);
}

#[test]
fn jq_module_inside_the_project_is_imported() {
    let p = Project::new();
    p.write("lib/ok.jq", "def x: 42;");
    p.write("lib/data.json", "[1]");
    let r = p.run("jq -nc -L lib 'import \"ok\" as o; import \"data\" as $d; [o::x, $d]'");
    assert_eq!(r.stdout, "[42,[[1]]]\n", "{}", r.dump());
}

/// A redirection to `/` or to a directory on the way to a root fails as bash's
/// does ("Is a directory", status 1, the script goes on): those are
/// directories by the config alone, and nothing is opened. Every other road
/// to a place outside the roots is still refused: another directory, a file
/// beside the project, `..` back out of one, a symlink to one.
#[test]
fn writing_to_a_directory_above_the_project_fails_without_opening_it() {
    let p = Project::new();
    let above = p.root.display().to_string();
    let r = p.run(&format!(
        "echo x > {above}; echo \"st=$?\"\n: 2> /; echo \"st=$?\"\necho done"
    ));
    assert_eq!(r.stdout, "st=1\nst=1\ndone\n", "{}", r.dump());
    assert!(r.stderr.contains("Is a directory"), "{}", r.dump());
    p.assert_outside_untouched(&r);

    let outside = p.outside.display().to_string();
    for attack in [
        format!("echo x > {outside}"),
        format!("echo x > {above}/{PWNED}"),
        format!("echo x > {outside}/../{PWNED}"),
        format!("echo x > /{PWNED}"),
    ] {
        let r = p.run(&attack);
        r.assert_refused(PATH);
        p.assert_outside_untouched(&r);
        assert!(!p.root.join(PWNED).exists(), "{}", r.dump());
    }
    let r = p.run(&format!("ln -s {outside} out; echo x > out/{PWNED}"));
    r.assert_refused(PATH);
    p.assert_outside_untouched(&r);
}
