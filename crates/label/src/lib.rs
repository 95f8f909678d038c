//! The label algebra of safesh (after the CFC seed, phase 1).
//!
//! A [`Label`] says how secret a value is and how far it can be trusted:
//!
//! * **confidentiality** is a conjunction (CNF) of [`Clause`]s; each clause is a
//!   disjunction of [`Atom`]s naming who may read. More clauses = more secret.
//!   The empty conjunction is *public*.
//! * **integrity** is a set of [`Atom`]s vouching for the value (who wrote it, what
//!   checked it). Fewer atoms = less trusted. [`Integrity::Top`] is the neutral
//!   element ("nothing has tainted this yet").
//! * **origins** is the set of places the bytes came from (files, the script, the
//!   network). It only grows on a join, so a summary can always say where data came from.
//!
//! Combining data (concatenation, pipes, substitutions) takes the [`Label::join`]:
//! confidentiality clauses are unioned, integrity is intersected, origins are unioned.

mod atoms;

pub use atoms::AtomSet;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Arc, LazyLock};

/// One fact about a value: a principal, a place, a provenance mark.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Atom {
    /// Text the agent wrote itself (the script, its literals).
    Agent,
    /// Input typed or approved by the human user.
    User,
    /// Bytes read from a file at this path.
    File(Arc<str>),
    /// Bytes received from this network host.
    Network(Arc<str>),
    /// A value taken from this environment variable.
    Env(Arc<str>),
    /// A named secret class (e.g. `secret`, `github_token`).
    Secret(Arc<str>),
    /// A space or tenant the value belongs to.
    Space(Arc<str>),
    /// Produced by an external program run inside the sandbox.
    Sandboxed(Arc<str>),
    /// Produced by an LLM (optionally naming the model).
    LlmGenerated(Arc<str>),
    /// Vouched for by this endorser (a check, a human approval).
    EndorsedBy(Arc<str>),
    /// Anything else, by name.
    Custom(Arc<str>),
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Atom::Agent => write!(f, "agent"),
            Atom::User => write!(f, "user"),
            Atom::File(p) => write!(f, "file:{p}"),
            Atom::Network(h) => write!(f, "net:{h}"),
            Atom::Env(n) => write!(f, "env:{n}"),
            Atom::Secret(n) => write!(f, "secret:{n}"),
            Atom::Space(s) => write!(f, "space:{s}"),
            Atom::Sandboxed(p) => write!(f, "sandboxed:{p}"),
            Atom::LlmGenerated(m) => write!(f, "llm:{m}"),
            Atom::EndorsedBy(e) => write!(f, "endorsed:{e}"),
            Atom::Custom(c) => write!(f, "{c}"),
        }
    }
}

/// A disjunction of atoms: a reader satisfying any one of them may read.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Clause(pub BTreeSet<Atom>);

impl Clause {
    /// A clause of exactly one atom.
    pub fn single(atom: Atom) -> Self {
        Clause(BTreeSet::from([atom]))
    }

    /// A clause allowing any of `atoms`.
    pub fn any_of(atoms: impl IntoIterator<Item = Atom>) -> Self {
        Clause(atoms.into_iter().collect())
    }
}

/// Confidentiality in conjunctive normal form: every clause must be satisfied.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Confidentiality(pub BTreeSet<Clause>);

impl Confidentiality {
    /// No restriction: anyone may read.
    pub fn public() -> Self {
        Confidentiality(BTreeSet::new())
    }

    /// True when no clause restricts readers.
    pub fn is_public(&self) -> bool {
        self.0.is_empty()
    }

    /// Least upper bound: both sets of requirements hold.
    pub fn join(&self, other: &Self) -> Self {
        Confidentiality(self.0.union(&other.0).cloned().collect())
    }

    /// Greatest lower bound: only the requirements both share.
    pub fn meet(&self, other: &Self) -> Self {
        Confidentiality(self.0.intersection(&other.0).cloned().collect())
    }

    /// `self` may flow to a place labeled `other` when `other` is at least as
    /// restrictive: every clause of `self` is implied by some clause of `other`
    /// (a clause implies another when its atoms are a subset of the other's).
    pub fn flows_to(&self, other: &Self) -> bool {
        self.0
            .iter()
            .all(|c| other.0.iter().any(|o| o.0.is_subset(&c.0)))
    }

    /// True if any clause mentions `atom`.
    pub fn mentions(&self, atom: &Atom) -> bool {
        self.0.iter().any(|c| c.0.contains(atom))
    }
}

/// Integrity: the atoms vouching for a value. `Top` vouches for everything and is
/// the neutral element of a join.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Integrity {
    /// Untainted: the identity of join (intersection).
    #[default]
    Top,
    /// Exactly these atoms vouch for the value.
    Atoms(AtomSet),
}

impl Integrity {
    /// No atom vouches for the value.
    pub fn none() -> Self {
        Integrity::Atoms(AtomSet::new())
    }

    /// Exactly one atom vouches for the value.
    pub fn single(atom: Atom) -> Self {
        Integrity::Atoms(AtomSet::from([atom]))
    }

    /// Least upper bound (less trusted): intersection of atoms.
    pub fn join(&self, other: &Self) -> Self {
        match (self, other) {
            (Integrity::Top, x) | (x, Integrity::Top) => x.clone(),
            (Integrity::Atoms(a), Integrity::Atoms(b)) => {
                Integrity::Atoms(a.intersection(b).cloned().collect())
            }
        }
    }

    /// Greatest lower bound (more trusted): union of atoms.
    pub fn meet(&self, other: &Self) -> Self {
        match (self, other) {
            (Integrity::Top, _) | (_, Integrity::Top) => Integrity::Top,
            (Integrity::Atoms(a), Integrity::Atoms(b)) => {
                Integrity::Atoms(a.union(b).cloned().collect())
            }
        }
    }

    /// True if `atom` vouches for the value.
    pub fn has(&self, atom: &Atom) -> bool {
        match self {
            Integrity::Top => true,
            Integrity::Atoms(a) => a.contains(atom),
        }
    }

    /// `self` is at least as trusted as `other` requires (superset of atoms).
    pub fn at_least(&self, other: &Self) -> bool {
        match (self, other) {
            (Integrity::Top, _) => true,
            (Integrity::Atoms(_), Integrity::Top) => false,
            (Integrity::Atoms(a), Integrity::Atoms(b)) => b.is_subset(a),
        }
    }
}

/// The parts of a label. [`Label`] derefs to this, so `label.origins` reads directly.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
pub struct LabelData {
    /// Who may read it.
    pub confidentiality: Confidentiality,
    /// Who vouches for it.
    pub integrity: Integrity,
    /// Where its bytes came from (unioned on every join).
    pub origins: AtomSet,
}

impl LabelData {
    /// `self ⊔ other == other`: `other` is at least as secret, at most as trusted,
    /// and already names every origin of `self`.
    fn below(&self, other: &LabelData) -> bool {
        let integrity = match (&self.integrity, &other.integrity) {
            (Integrity::Top, _) => true,
            (Integrity::Atoms(_), Integrity::Top) => false,
            (Integrity::Atoms(a), Integrity::Atoms(b)) => b.is_subset(a),
        };
        integrity
            && self.origins.is_subset(&other.origins)
            && self.confidentiality.0.is_subset(&other.confidentiality.0)
    }

    /// `self ⊔ other`, into `self` (the same value as [`Label::join`]; only atoms
    /// `self` lacks are cloned).
    fn join_in_place(&mut self, other: &LabelData) {
        for c in &other.confidentiality.0 {
            if !self.confidentiality.0.contains(c) {
                self.confidentiality.0.insert(c.clone());
            }
        }
        match (&mut self.integrity, &other.integrity) {
            (_, Integrity::Top) => {}
            (Integrity::Top, o) => self.integrity = o.clone(),
            (Integrity::Atoms(a), Integrity::Atoms(b)) => a.retain(|x| b.contains(x)),
        }
        // (Files are mostly read in sorted order: new origins are appended.)
        self.origins.extend_from(&other.origins);
    }
}

/// The label of a value: confidentiality, integrity and where it came from.
///
/// A label is an immutable, shared value: cloning is a reference-count increment,
/// and joining two equal labels (the common case inside a loop) allocates nothing.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Label(Arc<LabelData>);

impl Serialize for Label {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// A label reads back from the [`LabelData`] shape it serializes as.
impl<'de> Deserialize<'de> for Label {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        LabelData::deserialize(d).map(|data| Label(Arc::new(data)))
    }
}

impl std::ops::Deref for Label {
    type Target = LabelData;
    fn deref(&self) -> &LabelData {
        &self.0
    }
}

impl Default for Label {
    fn default() -> Self {
        Label::empty()
    }
}

static EMPTY: LazyLock<Label> = LazyLock::new(|| Label(Arc::new(LabelData::default())));
static AGENT: LazyLock<Label> = LazyLock::new(|| {
    Label::new(
        Confidentiality::public(),
        Integrity::single(Atom::Agent),
        AtomSet::from([Atom::Agent]),
    )
});

impl Label {
    /// A label from its parts.
    pub fn new(confidentiality: Confidentiality, integrity: Integrity, origins: AtomSet) -> Self {
        Label(Arc::new(LabelData {
            confidentiality,
            integrity,
            origins,
        }))
    }

    /// The neutral label: public, untainted, from nowhere. `x.join(&empty) == x`.
    pub fn empty() -> Self {
        EMPTY.clone()
    }

    /// True for the neutral label.
    pub fn is_empty(&self) -> bool {
        Arc::ptr_eq(&self.0, &EMPTY.0)
            || (self.confidentiality.0.is_empty()
                && self.integrity == Integrity::Top
                && self.origins.is_empty())
    }

    /// Public, with no integrity and no provenance (the seed's `bottom()`).
    pub fn bottom() -> Self {
        Label::new(Confidentiality::public(), Integrity::none(), AtomSet::new())
    }

    /// Text the agent wrote in its script: public, vouched for by the agent.
    pub fn agent() -> Self {
        AGENT.clone()
    }

    /// Input from the human user: public, vouched for by the user.
    pub fn user_input() -> Self {
        Label::new(
            Confidentiality::public(),
            Integrity::single(Atom::User),
            AtomSet::from([Atom::User]),
        )
    }

    fn single_origin(atom: Atom) -> Self {
        let integrity = AtomSet::from([atom.clone()]);
        let origins = AtomSet::from([atom]);
        Label::new(
            Confidentiality::public(),
            Integrity::Atoms(integrity),
            origins,
        )
    }

    /// Bytes read from the file at `path` (classification rules may add secrecy).
    pub fn from_file(path: impl Into<Arc<str>>) -> Self {
        Label::single_origin(Atom::File(path.into()))
    }

    /// Bytes received from `host`: untrusted, tagged with the host.
    pub fn from_network(host: impl Into<Arc<str>>) -> Self {
        Label::single_origin(Atom::Network(host.into()))
    }

    /// A value taken from environment variable `name`.
    pub fn from_env(name: impl Into<Arc<str>>) -> Self {
        Label::single_origin(Atom::Env(name.into()))
    }

    /// Output of an external program run in the sandbox: vouched for only by that
    /// sandboxed run (its integrity is never the agent's or the user's).
    pub fn sandboxed(program: impl Into<Arc<str>>) -> Self {
        Label::single_origin(Atom::Sandboxed(program.into()))
    }

    /// Output of an LLM: untrusted.
    pub fn llm_generated(model: impl Into<Arc<str>>) -> Self {
        Label::single_origin(Atom::LlmGenerated(model.into()))
    }

    /// A secret of class `name`: readable only by holders of `Secret(name)`.
    pub fn secret(name: impl Into<Arc<str>>) -> Self {
        let atom = Atom::Secret(name.into());
        Label::new(
            Confidentiality(BTreeSet::from([Clause::single(atom)])),
            Integrity::Top,
            AtomSet::new(),
        )
    }

    /// Least upper bound: the label of data derived from both.
    pub fn join(&self, other: &Label) -> Label {
        // The `untracked` build (benchmarks only: what label tracking costs).
        if cfg!(feature = "untracked") || Arc::ptr_eq(&self.0, &other.0) || other.is_empty() {
            return self.clone();
        }
        // When one side adds nothing to the other, the join is that other side,
        // shared as is (a pipeline stage joining its input's label, which already
        // carries the stage's own argument label, allocates nothing).
        if self.is_empty() || self.0.below(&other.0) {
            return other.clone();
        }
        if other.0.below(&self.0) {
            return self.clone();
        }
        Label::new(
            self.confidentiality.join(&other.confidentiality),
            self.integrity.join(&other.integrity),
            self.origins.union_set(&other.origins),
        )
    }

    /// Join `other` into `self` in place. When `self` is the only holder of its
    /// data (a command's accumulated label), the sets grow in place: a command that
    /// reads n files pays O(n log n), not O(n²) copies of every origin so far.
    pub fn join_assign(&mut self, other: &Label) {
        if cfg!(feature = "untracked") || Arc::ptr_eq(&self.0, &other.0) || other.is_empty() {
            return;
        }
        if self.is_empty() {
            *self = other.clone();
            return;
        }
        match Arc::get_mut(&mut self.0) {
            Some(data) => data.join_in_place(other),
            None => *self = self.join(other),
        }
    }

    /// Greatest lower bound.
    pub fn meet(&self, other: &Label) -> Label {
        Label::new(
            self.confidentiality.meet(&other.confidentiality),
            self.integrity.meet(&other.integrity),
            self.origins.intersection(&other.origins).cloned().collect(),
        )
    }

    /// Join of many labels (`empty()` for none).
    pub fn join_all<'a>(labels: impl IntoIterator<Item = &'a Label>) -> Label {
        labels
            .into_iter()
            .fold(Label::empty(), |acc, l| acc.join(l))
    }

    /// Add integrity atoms (an endorsement by a check or a human).
    pub fn endorse(&self, atoms: impl IntoIterator<Item = Atom>) -> Label {
        let mut data = (*self.0).clone();
        if let Integrity::Atoms(set) = &mut data.integrity {
            set.extend(atoms);
        }
        Label(Arc::new(data))
    }

    /// Data labeled `self` may flow to a sink labeled `other`: confidentiality may
    /// only grow and integrity may only shrink along a flow.
    pub fn flows_to(&self, other: &Label) -> bool {
        self.confidentiality.flows_to(&other.confidentiality)
            && self.integrity.at_least(&other.integrity)
    }

    /// True if `atom` vouches for this value.
    pub fn has_integrity(&self, atom: &Atom) -> bool {
        self.integrity.has(atom)
    }

    /// True when the value carries any confidentiality requirement.
    pub fn is_secret(&self) -> bool {
        !self.confidentiality.is_public()
    }
}

/// A value paired with its label.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize)]
pub struct Labeled<T> {
    /// The value.
    pub value: T,
    /// Its label.
    pub label: Label,
}

impl<T> Labeled<T> {
    /// Pair `value` with `label`.
    pub fn new(value: T, label: Label) -> Self {
        Labeled { value, label }
    }

    /// Transform the value, keeping the label.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Labeled<U> {
        Labeled {
            value: f(self.value),
            label: self.label,
        }
    }
}

/// A short, model-facing summary of a label (used in results).
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize)]
pub struct LabelSummary {
    /// `public` or `secret`.
    pub confidentiality: String,
    /// The secrecy atoms, if any.
    pub secrets: Vec<String>,
    /// Integrity atoms (`["*"]` when untainted).
    pub integrity: Vec<String>,
    /// Where the bytes came from.
    pub origins: Vec<String>,
}

impl From<&Label> for LabelSummary {
    fn from(l: &Label) -> Self {
        let secrets: BTreeSet<String> = l
            .confidentiality
            .0
            .iter()
            .map(|c| {
                c.0.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("|")
            })
            .collect();
        LabelSummary {
            confidentiality: if l.is_secret() { "secret" } else { "public" }.to_string(),
            secrets: secrets.into_iter().collect(),
            integrity: match &l.integrity {
                Integrity::Top => vec!["*".to_string()],
                Integrity::Atoms(a) => a.iter().map(ToString::to_string).collect(),
            },
            origins: l.origins.iter().map(ToString::to_string).collect(),
        }
    }
}

#[cfg(test)]
mod tests;
