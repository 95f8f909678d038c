//! Project specs: `project.agsh.yaml`, the contract between a human's intent and
//! an agent's run (agsh §4).
//!
//! - [`load`] / [`parse`]: the seed's schema (apiVersion, kind, meta, goal,
//!   constraints, guidelines, success_criteria, allowed_commands, output, params)
//!   plus the `steps:` extension, from YAML; errors carry `file:line:column` and
//!   the field path.
//! - [`Params`]: typed params with defaults, `--param k=v` values, `{{param}}` and
//!   `{{date}}` interpolation. A value substituted into a script is always ONE
//!   single-quoted shell word; substituted into an argument it stays inside that
//!   one argument: a param can never become code.
//! - [`plan()`]: steps with their risk (decided by the caller's [`RiskOracle`] —
//!   the real policy), `checkpoint_before` for risky steps, `allowed_commands`
//!   narrowing (a step outside it is refused with `COMMAND_NOT_WHITELISTED`, rule
//!   `spec.allowed_commands`), a risk summary, and the plan's hash.
//! - [`templates`]: the built-in templates and the user's own.
//! - [`kept`]: plans kept in the state dir for approve / reject / run by hash.

mod allowed;
mod error;
mod interp;
pub mod kept;
mod load;
mod model;
mod params;
mod plan;
mod render;
pub mod templates;

pub use allowed::{ALLOWED_RULE, AllowedCommands, NOT_WHITELISTED};
pub use error::SpecError;
pub use interp::{shell_quote, today_utc};
pub use load::{load, parse};
pub use model::{OutputSpec, ParamDef, ProjectSpec, SpecMeta, StepArgs, StepSpec};
pub use params::{ParamType, Params, parse_assignment};
pub use plan::{Assessment, Plan, PlanStep, Risk, RiskOracle, plan};
pub use render::render;
