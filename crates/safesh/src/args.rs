//! The command line's grammar (clap derive): every option and subcommand, with the
//! text `--help` shows and the completions are generated from. Running them is
//! elsewhere (`cli.rs`, `tools.rs`, `serve.rs`, `task_cmd.rs`).

use clap::{Args, Parser, Subcommand, ValueEnum};

/// The usage lines `safesh --help` starts with (clap's own would list only
/// `[OPTIONS] [FILE]... [COMMAND]`, which hides the bash-like forms).
const USAGE: &str = "safesh [OPTIONS] -c SCRIPT [NAME [ARG]...]
       safesh [OPTIONS] FILE [ARG]...
       safesh [OPTIONS] < SCRIPT
       safesh [OPTIONS] COMMAND [ARGS]...";

/// A safe shell for AI agents: runs bash scripts under a policy, a sandbox and
/// information-flow labels.
#[derive(Debug, Parser)]
#[command(
    name = "safesh",
    version,
    override_usage = USAGE,
    disable_help_subcommand = true,
    args_override_self = true,
    after_help = "With neither -c, FILE nor COMMAND: the interactive shell (REPL) when stdin is a terminal, else the script on stdin.\nSee `safesh explain` for the refusal codes and `safesh COMMAND --help` for each command."
)]
pub struct Cli {
    /// Run SCRIPT; the words after it become $0 (NAME) and $1… (ARGs), as in bash.
    #[arg(
        short = 'c',
        value_name = "SCRIPT",
        num_args = 1..,
        allow_hyphen_values = true,
        conflicts_with = "file"
    )]
    pub script: Option<Vec<String>>,

    /// A script file to run, then its arguments ($1…).
    #[arg(value_name = "FILE", trailing_var_arg = true)]
    pub file: Vec<String>,

    /// Options for running a script.
    #[command(flatten)]
    pub exec: ExecOpts,

    /// Use this config file as the project config (trusted as given).
    #[arg(long, value_name = "FILE", global = true)]
    pub config: Option<String>,

    /// A command instead of a script.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// How a script runs and reports: shared by the top level and `safesh run`.
#[derive(Debug, Args, Clone, Default)]
pub struct ExecOpts {
    /// Print one JSON result object on stdout (output shaped and labelled as for MCP).
    #[arg(long)]
    pub json: bool,

    /// Go ahead where the policy only nudges (never past a refusal).
    #[arg(long)]
    pub force: bool,

    /// Give TEXT to the script as its stdin.
    #[arg(long, value_name = "TEXT")]
    pub input: Option<String>,

    /// Which output --json returns [default: separate].
    #[arg(long, value_name = "MODE", value_enum)]
    pub output_mode: Option<OutputModeArg>,

    /// Stop the script after N milliseconds (at most the config's max_timeout_ms).
    #[arg(long, value_name = "N")]
    pub timeout_ms: Option<u64>,
}

impl ExecOpts {
    /// These options with `later`'s (given after `run`) added: flags are or-ed,
    /// values given later win.
    pub fn merged_with(self, later: ExecOpts) -> ExecOpts {
        ExecOpts {
            json: self.json || later.json,
            force: self.force || later.force,
            input: later.input.or(self.input),
            output_mode: later.output_mode.or(self.output_mode),
            timeout_ms: later.timeout_ms.or(self.timeout_ms),
        }
    }
}

/// `--output-mode`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub enum OutputModeArg {
    /// stdout and stderr interleaved, in `output`.
    Merged,
    /// stdout only.
    Stdout,
    /// stderr only.
    Stderr,
    /// Both, in `stdout` and `stderr`.
    #[default]
    Separate,
}

impl OutputModeArg {
    /// The server crate's mode of the same name.
    pub fn to_mode(self) -> safesh_server::shape::OutputMode {
        use safesh_server::shape::OutputMode;
        match self {
            OutputModeArg::Merged => OutputMode::Merged,
            OutputModeArg::Stdout => OutputMode::Stdout,
            OutputModeArg::Stderr => OutputMode::Stderr,
            OutputModeArg::Separate => OutputMode::Separate,
        }
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one command from an argv, with no shell parsing.
    Run(RunArgs),
    /// Say what a script would do under the policy, without running it.
    Check(CheckArgs),
    /// Show the merged config and where each value came from.
    Config(ConfigArgs),
    /// Explain a refusal code (no CODE: list the codes).
    Explain(ExplainArgs),
    /// Write a starter safesh.toml for this project and trust it.
    Init(InitArgs),
    /// Trust a project config (default: the nearest safesh.toml).
    Trust(TrustArgs),
    /// Stop trusting a project config (default: the nearest safesh.toml).
    Untrust(TrustArgs),
    /// Show what this host's sandbox can enforce.
    Doctor(JsonArgs),
    /// Show the commit-point decisions of the audit log.
    Audit(AuditArgs),
    /// List the pending approval requests of running safesh processes.
    Approvals(JsonArgs),
    /// Approve a pending request (a human's channel: scripts cannot).
    Approve(DecideArgs),
    /// Deny a pending request.
    Deny(DecideArgs),
    /// Serve MCP (stdio, or streamable HTTP with --http).
    Mcp(McpArgs),
    /// Serve JSON-RPC 2.0 (agent mode) on stdin/stdout.
    Rpc(RpcArgs),
    /// Run a task from [tasks] in the config (or an xrun list like '[a, [-s, b, c]]').
    Task(TaskArgs),
    /// List the tasks of the config, with their descriptions.
    Tasks(JsonArgs),
    /// Save, restore, list, diff or delete checkpoints of the write roots
    /// (`checkpoint save [NAME] | restore NAME | list | diff A [B] | delete NAME`).
    Checkpoint(WordsArgs),
    /// Show the persistent history of scripts and requests (`history [-n N] [--all]`).
    History(WordsArgs),
    /// List the commands a script may call (builtins, utilities, platform
    /// commands, allowed programs), or describe one (`commands NAME`).
    Commands(CommandsArgs),
    /// Run TypeScript/JavaScript with safesh's stdlib, under the same policy and labels (`code -e SOURCE | code FILE.ts`).
    Code(CodeArgs),
    /// Print a shell completion script (bash, zsh, fish, …).
    Completions(CompletionsArgs),
    /// Validate, plan or run a project spec (project.agsh.yaml).
    Spec(SpecArgs),
    /// Serve one request for the server that started this process (the
    /// isolation model's worker; not a user command).
    #[command(name = "__worker", hide = true)]
    Worker,
}

/// `safesh run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// How it runs and reports (may also come before `run`).
    #[command(flatten)]
    pub exec: ExecOpts,
    /// The program and its arguments, each one word (put `--` before them).
    #[arg(
        value_name = "PROGRAM",
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub argv: Vec<String>,
}

/// `safesh check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Check SCRIPT.
    #[arg(short = 'c', value_name = "SCRIPT", conflicts_with = "file")]
    pub script: Option<String>,
    /// Check the script in FILE (neither -c nor FILE: the script on stdin).
    #[arg(value_name = "FILE")]
    pub file: Option<String>,
    /// Print the verdicts as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `safesh config`.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// What to do (only `show`, the default).
    #[arg(value_enum, default_value_t = ConfigAction::Show)]
    pub action: ConfigAction,
}

/// `safesh config ACTION`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ConfigAction {
    /// Print the merged config with the file and line of each value.
    Show,
}

/// `safesh commands`.
#[derive(Debug, Args)]
pub struct CommandsArgs {
    /// Describe this command (its schemas, risk, credentials, example).
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// Only this namespace or kind (fs, http, github, builtin, utility, external).
    #[arg(long, value_name = "NS", conflicts_with = "name")]
    pub namespace: Option<String>,
    /// Print JSON (as commands.list / commands.describe return it).
    #[arg(long)]
    pub json: bool,
}

/// `safesh explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A refusal code, e.g. COMMAND_NOT_WHITELISTED.
    pub code: Option<String>,
}

/// `safesh init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Overwrite an existing safesh.toml.
    #[arg(long)]
    pub force: bool,
    /// The project directory (default: the working directory).
    #[arg(value_name = "DIR")]
    pub dir: Option<String>,
    /// Write only a project.agsh.yaml from template NAME (code-review,
    /// weekly-report, deploy-pipeline, research, or ~/.config/safesh/templates/NAME.yaml).
    #[arg(long, value_name = "NAME")]
    pub template: Option<String>,
}

/// `safesh spec`.
#[derive(Debug, Args)]
pub struct SpecArgs {
    /// What to do with the spec.
    #[command(subcommand)]
    pub action: SpecAction,
}

/// `safesh spec ACTION`.
#[derive(Debug, Subcommand)]
pub enum SpecAction {
    /// Check a spec for errors (file:line:column and the field) without running it.
    Validate(SpecFileArgs),
    /// Show the plan: each step's command, risk under the policy, checks and
    /// checkpoints, and the hash an approval binds to. Runs nothing.
    Plan(SpecPlanArgs),
    /// Run it: plan, a human's approval per `[spec] approval_mode` (bound to the
    /// plan's hash, single use), the steps through the pipeline (policy,
    /// sandbox, verify, checkpoints, rollback) with allowed_commands enforced at
    /// every dispatch, the output, the success criteria. Prints the report.
    Run(SpecPlanArgs),
    /// Approve a plan made anywhere on this state dir (`project.plan` over
    /// JSON-RPC or MCP, `safesh spec plan`) by its hash: the plan is made again
    /// (an edit since is PLAN_CHANGED), shown, and the human asked on this
    /// terminal; without one, the id for `safesh approve ID`.
    Approve(SpecHashArgs),
}

/// `safesh spec approve`.
#[derive(Debug, Args)]
pub struct SpecHashArgs {
    /// The plan's hash (from `safesh spec plan` or `project.plan`).
    #[arg(value_name = "HASH")]
    pub hash: String,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `safesh spec validate`.
#[derive(Debug, Args)]
pub struct SpecFileArgs {
    /// The spec file (e.g. project.agsh.yaml).
    #[arg(value_name = "FILE")]
    pub file: String,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `safesh spec plan`.
#[derive(Debug, Args)]
pub struct SpecPlanArgs {
    /// The spec file (e.g. project.agsh.yaml).
    #[arg(value_name = "FILE")]
    pub file: String,
    /// A param's value, NAME=VALUE (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Print the plan as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `safesh trust` / `safesh untrust`.
#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The config file (default: --config, else the nearest safesh.toml).
    #[arg(value_name = "FILE")]
    pub file: Option<String>,
}

/// A subcommand that runs the builtin of the same name with these words, through
/// the same session as `-c` (policy, labels, audit).
#[derive(Debug, Args)]
pub struct WordsArgs {
    /// The builtin's arguments (`--json` among them prints JSON).
    #[arg(
        value_name = "ARG",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub words: Vec<String>,
}

/// `safesh code`.
#[derive(Debug, Args)]
pub struct CodeArgs {
    /// Run SOURCE (TypeScript unless --lang javascript).
    #[arg(short = 'e', value_name = "SOURCE", conflicts_with = "file")]
    pub eval: Option<String>,
    /// A .ts or .js file to run (.js, .mjs: JavaScript).
    #[arg(value_name = "FILE")]
    pub file: Option<String>,
    /// The language: typescript or javascript.
    #[arg(long, value_name = "LANG")]
    pub lang: Option<String>,
    /// How it runs and reports.
    #[command(flatten)]
    pub exec: ExecOpts,
}

/// A subcommand whose only option is `--json`.
#[derive(Debug, Args)]
pub struct JsonArgs {
    /// Print JSON (one object per line).
    #[arg(long)]
    pub json: bool,
}

/// `safesh approve` / `safesh deny`.
#[derive(Debug, Args)]
pub struct DecideArgs {
    /// The request's id, as `safesh approvals` lists it.
    #[arg(value_name = "ID")]
    pub id: String,
}

/// `safesh audit`.
#[derive(Debug, Args)]
#[command(
    after_help = "TIME: RFC 3339 (2026-11-22T08:00:00Z), a date (2026-11-22, UTC), or an age (30s, 10m, 2h, 7d)"
)]
pub struct AuditArgs {
    /// Only this session's decisions.
    #[arg(long, value_name = "S")]
    pub session: Option<String>,
    /// Only this verdict: allow, warn, block, request-approval or approved.
    #[arg(long, value_name = "V")]
    pub verdict: Option<String>,
    /// Only this commit point: network, exec, destructive, env or policy.
    #[arg(long, value_name = "P")]
    pub commit_point: Option<String>,
    /// Only decisions of this rule.
    #[arg(long, value_name = "R")]
    pub rule: Option<String>,
    /// Only decisions at or after TIME.
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Only the last N matching decisions.
    #[arg(long, value_name = "N")]
    pub last: Option<usize>,
    /// One JSON object per line.
    #[arg(long)]
    pub json: bool,
}

/// `safesh mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Serve streamable HTTP on ADDR (e.g. 127.0.0.1:8080) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// The bearer-token file HTTP clients must present (default: [mcp] http_token_file).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<String>,
    /// At most N sessions at once.
    #[arg(long, value_name = "N", value_parser = positive)]
    pub max_sessions: Option<usize>,
    /// At most N MCP-over-HTTP clients (transport sessions) at once; past it
    /// the least recently used one is closed.
    #[arg(long, value_name = "N", value_parser = positive)]
    pub max_transport_sessions: Option<usize>,
}

/// `safesh rpc`.
#[derive(Debug, Args)]
pub struct RpcArgs {
    /// At most N sessions at once.
    #[arg(long, value_name = "N", value_parser = positive)]
    pub max_sessions: Option<usize>,
}

/// `safesh task`.
#[derive(Debug, Args)]
pub struct TaskArgs {
    /// Run again after every burst of changes under the write roots (not target/
    /// or .git/, nor the task's own writes); Ctrl-C stops.
    #[arg(long)]
    pub watch: bool,
    /// The task's name, or an xrun list: '[lint, [-s, test, build]]'.
    #[arg(value_name = "TASK")]
    pub task: String,
    /// Arguments for the task's script ($1…).
    #[arg(
        value_name = "ARG",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub args: Vec<String>,
}

/// `safesh completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// A count that must be at least 1.
fn positive(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err("give a positive number".into()),
    }
}

/// The subcommands' names, without building the grammar (checked against it by
/// `tests::the_subcommand_list_is_complete`).
pub const SUBCOMMANDS: &[&str] = &[
    "run",
    "check",
    "config",
    "explain",
    "init",
    "trust",
    "untrust",
    "doctor",
    "audit",
    "approvals",
    "approve",
    "deny",
    "mcp",
    "rpc",
    "task",
    "tasks",
    "completions",
    "checkpoint",
    "history",
    "commands",
    "spec",
    "code",
    "__worker",
];

/// The bash-like forms run most (`safesh -c SCRIPT …`, `safesh FILE …` with
/// nothing before them), read without building clap's grammar: building it costs
/// about 0.23 M instructions, a fifth of `safesh -c true`'s start-up
/// (docs/BENCHMARKS.md). Every word after `-c` or FILE belongs to the script, so
/// these forms mean exactly what clap makes of them (`tests::the_fast_path_agrees
/// _with_clap`); anything else (an option first, a subcommand, `-c` alone) goes to
/// clap.
pub fn fast_path(args: &[String]) -> Option<Cli> {
    let first = args.first()?;
    let (script, file) = if first == "-c" && args.len() >= 2 {
        (Some(args[1..].to_vec()), Vec::new())
    } else if !first.starts_with('-') && !SUBCOMMANDS.contains(&first.as_str()) {
        (None, args.to_vec())
    } else {
        return None;
    };
    Some(Cli {
        script,
        file,
        exec: ExecOpts::default(),
        config: None,
        command: None,
    })
}

/// The names of the subcommands (a FILE that is not found but is close to one of
/// these gets a "did you mean" hint).
pub fn subcommand_names() -> Vec<String> {
    use clap::CommandFactory;
    Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    #[test]
    fn the_subcommand_list_is_complete() {
        let mut from_clap = super::subcommand_names();
        let mut listed: Vec<String> = super::SUBCOMMANDS.iter().map(|s| s.to_string()).collect();
        from_clap.sort();
        listed.sort();
        assert_eq!(from_clap, listed);
    }

    #[test]
    fn the_fast_path_agrees_with_clap() {
        use clap::Parser;
        let cases: &[&[&str]] = &[
            &["-c", "true"],
            &["-c", ""],
            &[
                "-c", "echo $0", "name", "--json", "-c", "--", "check", "--help",
            ],
            &["-c", "x", "--"],
            &["script.sh"],
            &["script.sh", "--json", "-c", "task", "--", "-x"],
            &["", "a"],
            &["./check", "x"],
        ];
        for case in cases {
            let args: Vec<String> = case.iter().map(|s| s.to_string()).collect();
            let fast = super::fast_path(&args).map(|c| format!("{c:?}"));
            let clap = Cli::try_parse_from(std::iter::once("safesh".to_string()).chain(args))
                .map(|c| format!("{c:?}"))
                .ok();
            assert!(fast.is_some(), "{case:?} should take the fast path");
            assert_eq!(fast, clap, "{case:?}");
        }
        // Not on the fast path: clap decides.
        for case in [
            &["-c"][..],
            &["--json", "-c", "x"],
            &["check", "-c", "x"],
            &["task", "x"],
            &["-x"],
            &["--help"],
        ] {
            let args: Vec<String> = case.iter().map(|s| s.to_string()).collect();
            assert!(super::fast_path(&args).is_none(), "{case:?}");
        }
    }

    #[test]
    fn the_grammar_is_consistent() {
        Cli::command().debug_assert();
    }

    /// `--help` describes every option, argument and subcommand (a new one without
    /// a doc comment fails here).
    #[test]
    fn every_option_and_subcommand_has_help() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if id == "help" || id == "version" {
                    continue;
                }
                if arg.get_help().is_none() {
                    missing.push(format!("{path} {id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                let p = format!("{path} {}", sub.get_name());
                if sub.get_about().is_none() {
                    missing.push(p.clone());
                }
                walk(sub, &p, missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "safesh", &mut missing);
        assert!(missing.is_empty(), "no help text: {missing:?}");
    }
}
