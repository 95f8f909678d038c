//! Unit and property tests of the label algebra.
//!
//! The property tests generate arbitrary labels over a small atom universe (so that
//! clauses, integrity sets and origins overlap often) and check the lattice laws
//! the interpreter relies on when it joins labels along data flows.

use super::*;
use proptest::collection::{btree_set, vec};
use proptest::prelude::*;

/// A small universe of atoms: a few of each interesting kind, so generated labels
/// share atoms often enough for intersections to be non-trivial.
fn atom() -> impl Strategy<Value = Atom> {
    prop_oneof![
        Just(Atom::Agent),
        Just(Atom::User),
        Just(Atom::File("a.txt".into())),
        Just(Atom::File("b.txt".into())),
        Just(Atom::Network("example.com".into())),
        Just(Atom::Env("HOME".into())),
        Just(Atom::Secret("secret".into())),
        Just(Atom::Secret("github_token".into())),
        Just(Atom::Space("team".into())),
        Just(Atom::Sandboxed("python3".into())),
        Just(Atom::LlmGenerated("model".into())),
        Just(Atom::EndorsedBy("review".into())),
        Just(Atom::Custom("x".into())),
    ]
}

fn clause() -> impl Strategy<Value = Clause> {
    btree_set(atom(), 1..4).prop_map(Clause)
}

fn confidentiality() -> impl Strategy<Value = Confidentiality> {
    btree_set(clause(), 0..4).prop_map(Confidentiality)
}

fn integrity() -> impl Strategy<Value = Integrity> {
    prop_oneof![
        1 => Just(Integrity::Top),
        4 => btree_set(atom(), 0..5).prop_map(|s| Integrity::Atoms(s.into_iter().collect())),
    ]
}

fn label() -> impl Strategy<Value = Label> {
    (confidentiality(), integrity(), btree_set(atom(), 0..4)).prop_map(
        |(confidentiality, integrity, origins)| {
            Label::new(confidentiality, integrity, origins.into_iter().collect())
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn join_is_commutative(a in label(), b in label()) {
        prop_assert_eq!(a.join(&b), b.join(&a));
    }

    #[test]
    fn meet_is_commutative(a in label(), b in label()) {
        prop_assert_eq!(a.meet(&b), b.meet(&a));
    }

    #[test]
    fn join_is_associative(a in label(), b in label(), c in label()) {
        prop_assert_eq!(a.join(&b).join(&c), a.join(&b.join(&c)));
    }

    #[test]
    fn meet_is_associative(a in label(), b in label(), c in label()) {
        prop_assert_eq!(a.meet(&b).meet(&c), a.meet(&b.meet(&c)));
    }

    #[test]
    fn join_and_meet_are_idempotent(a in label()) {
        prop_assert_eq!(a.join(&a), a.clone());
        prop_assert_eq!(a.meet(&a), a);
    }

    #[test]
    fn absorption_join_over_meet(a in label(), b in label()) {
        prop_assert_eq!(a.join(&a.meet(&b)), a);
    }

    #[test]
    fn absorption_meet_over_join(a in label(), b in label()) {
        prop_assert_eq!(a.meet(&a.join(&b)), a);
    }

    #[test]
    fn empty_is_identity_of_join(a in label()) {
        prop_assert_eq!(a.join(&Label::empty()), a.clone());
        prop_assert_eq!(Label::empty().join(&a), a);
    }

    #[test]
    fn join_assign_in_place_equals_join(a in label(), b in label()) {
        // A uniquely held label grows in place; the value must be the join's.
        let mut c = Label::new(a.confidentiality.clone(), a.integrity.clone(), a.origins.clone());
        c.join_assign(&b);
        prop_assert_eq!(&c, &a.join(&b));
        c.join_assign(&b);
        prop_assert_eq!(c, a.join(&b));
    }

    #[test]
    fn joining_what_is_below_gives_the_upper_label_unchanged(a in label(), b in label()) {
        let up = a.join(&b);
        // `a ⊑ a⊔b`: joining either way gives `a⊔b` itself.
        prop_assert_eq!(&a.join(&up), &up);
        prop_assert_eq!(&up.join(&a), &up);
        prop_assert_eq!(&b.join(&up), &up);
        prop_assert_eq!(up.join(&b), up);
    }

    #[test]
    fn join_assign_equals_join(a in label(), b in label()) {
        let mut c = a.clone();
        c.join_assign(&b);
        prop_assert_eq!(c, a.join(&b));
    }

    #[test]
    fn flows_to_is_reflexive(a in label()) {
        prop_assert!(a.flows_to(&a));
        prop_assert!(a.confidentiality.flows_to(&a.confidentiality));
    }

    #[test]
    fn flows_to_is_transitive(a in label(), b in label(), c in label()) {
        // Random triples rarely chain, so also build a chain by joining: a ≤ a⊔b ≤ a⊔b⊔c.
        if a.flows_to(&b) && b.flows_to(&c) {
            prop_assert!(a.flows_to(&c));
        }
        let ab = a.join(&b);
        let abc = ab.join(&c);
        prop_assert!(a.flows_to(&ab));
        prop_assert!(ab.flows_to(&abc));
        prop_assert!(a.flows_to(&abc));
    }

    #[test]
    fn confidentiality_flows_to_is_transitive(
        a in confidentiality(),
        b in confidentiality(),
        c in confidentiality(),
    ) {
        if a.flows_to(&b) && b.flows_to(&c) {
            prop_assert!(a.flows_to(&c));
        }
    }

    #[test]
    fn joining_only_raises_confidentiality(a in label(), b in label()) {
        let j = a.join(&b);
        prop_assert!(a.confidentiality.flows_to(&j.confidentiality));
        prop_assert!(b.confidentiality.flows_to(&j.confidentiality));
        prop_assert!(a.flows_to(&j));
        prop_assert!(b.flows_to(&j));
        // A secret input keeps the result secret.
        if a.is_secret() || b.is_secret() {
            prop_assert!(j.is_secret());
        }
    }

    #[test]
    fn meet_flows_to_both(a in label(), b in label()) {
        let m = a.meet(&b);
        prop_assert!(m.flows_to(&a));
        prop_assert!(m.flows_to(&b));
    }

    #[test]
    fn join_intersects_integrity_and_unions_origins(a in label(), b in label()) {
        let j = a.join(&b);
        for x in [&a, &b] {
            for o in &x.origins {
                prop_assert!(j.origins.contains(o));
            }
        }
        if let Integrity::Atoms(set) = &j.integrity {
            for atom in set {
                prop_assert!(a.has_integrity(atom) && b.has_integrity(atom));
            }
        }
    }

    #[test]
    fn endorse_grants_integrity(a in label(), atoms in vec(atom(), 0..4)) {
        let e = a.endorse(atoms.clone());
        for x in &atoms {
            prop_assert!(e.has_integrity(x));
        }
        // Endorsement only touches integrity, and never lowers it.
        prop_assert_eq!(&e.confidentiality, &a.confidentiality);
        prop_assert_eq!(&e.origins, &a.origins);
        prop_assert!(e.integrity.at_least(&a.integrity));
    }

    #[test]
    fn join_all_equals_folding_join(labels in vec(label(), 0..6)) {
        let folded = labels.iter().fold(Label::empty(), |acc, l| acc.join(l));
        prop_assert_eq!(Label::join_all(&labels), folded);
    }

    #[test]
    fn summary_reports_secrecy(a in label()) {
        let s = LabelSummary::from(&a);
        let expected = if a.is_secret() { "secret" } else { "public" };
        prop_assert_eq!(s.confidentiality.as_str(), expected);
        prop_assert_eq!(s.origins.len(), a.origins.len());
    }
}

#[test]
fn join_with_empty_is_identity() {
    let a = Label::from_file("a.txt");
    assert_eq!(a.join(&Label::empty()), a);
}

#[test]
fn join_all_of_nothing_is_empty() {
    assert_eq!(Label::join_all([]), Label::empty());
}

#[test]
fn file_joined_with_agent_loses_integrity_keeps_origins() {
    let file = Label::from_file("data.csv");
    let j = file.join(&Label::agent());
    assert!(!j.has_integrity(&Atom::Agent));
    assert!(!j.has_integrity(&Atom::File("data.csv".into())));
    assert_eq!(j.integrity, Integrity::none());
    assert!(j.origins.contains(&Atom::Agent));
    assert!(j.origins.contains(&Atom::File("data.csv".into())));
    assert!(!j.is_secret());
}

#[test]
fn secret_joined_with_public_is_secret() {
    let s = Label::secret("github_token");
    let j = s.join(&Label::agent());
    assert!(j.is_secret());
    assert!(
        j.confidentiality
            .mentions(&Atom::Secret("github_token".into()))
    );
    // The public side cannot receive it...
    assert!(!j.flows_to(&Label::agent()));
    // ...but the secret flows into the join.
    assert!(s.confidentiality.flows_to(&j.confidentiality));
    // Integrity: Top of the secret is neutral, so the agent's integrity survives.
    assert!(j.has_integrity(&Atom::Agent));
}

#[test]
fn public_does_not_receive_secret() {
    let s = Label::secret("secret");
    assert!(Label::agent().confidentiality.flows_to(&s.confidentiality));
    assert!(!s.confidentiality.flows_to(&Label::agent().confidentiality));
}

#[test]
fn endorse_on_bottom_adds_atoms() {
    let b = Label::bottom();
    assert!(!b.has_integrity(&Atom::User));
    let e = b.endorse([Atom::User, Atom::EndorsedBy("review".into())]);
    assert!(e.has_integrity(&Atom::User));
    assert!(e.has_integrity(&Atom::EndorsedBy("review".into())));
    assert!(!e.has_integrity(&Atom::Agent));
}

#[test]
fn network_and_llm_data_are_untrusted_for_agent() {
    let n = Label::from_network("example.com").join(&Label::llm_generated("m"));
    assert!(!n.has_integrity(&Atom::Agent));
    assert_eq!(n.integrity, Integrity::none());
    assert_eq!(n.origins.len(), 2);
}

#[test]
fn clause_with_more_readers_flows_to_narrower_clause() {
    // {secret ∨ user} is less restrictive than {secret}: data may flow to the narrower.
    let wide = Confidentiality(BTreeSet::from([Clause::any_of([
        Atom::Secret("secret".into()),
        Atom::User,
    ])]));
    let narrow = Confidentiality(BTreeSet::from([Clause::single(Atom::Secret(
        "secret".into(),
    ))]));
    assert!(wide.flows_to(&narrow));
    assert!(!narrow.flows_to(&wide));
}

#[test]
fn summary_of_untainted_is_star() {
    let s = LabelSummary::from(&Label::secret("secret"));
    assert_eq!(s.integrity, vec!["*".to_string()]);
    assert_eq!(s.secrets, vec!["secret:secret".to_string()]);
    assert_eq!(s.confidentiality, "secret");
}

/// What [`AtomSet`] must agree with: the `BTreeSet` of the same atoms.
fn oracle(s: &AtomSet) -> BTreeSet<Atom> {
    s.iter().cloned().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn atom_set_agrees_with_btree_set(
        a in vec(atom(), 0..8),
        b in vec(atom(), 0..8),
        probe in atom(),
    ) {
        let (sa, sb): (AtomSet, AtomSet) = (a.iter().cloned().collect(), b.iter().cloned().collect());
        let (ba, bb): (BTreeSet<Atom>, BTreeSet<Atom>) = (a.iter().cloned().collect(), b.iter().cloned().collect());
        // Sorted and deduplicated, whatever the input order.
        prop_assert_eq!(sa.iter().cloned().collect::<Vec<_>>(), ba.iter().cloned().collect::<Vec<_>>());
        prop_assert_eq!(sa.len(), ba.len());
        prop_assert_eq!(sa.contains(&probe), ba.contains(&probe));
        prop_assert_eq!(sa.is_subset(&sb), ba.is_subset(&bb));
        prop_assert_eq!(sa.first(), ba.first());
        prop_assert_eq!(sa.last(), ba.last());
        prop_assert_eq!(oracle(&sa.union_set(&sb)), ba.union(&bb).cloned().collect::<BTreeSet<_>>());
        prop_assert_eq!(
            sa.union(&sb).cloned().collect::<Vec<_>>(),
            ba.union(&bb).cloned().collect::<Vec<_>>()
        );
        prop_assert_eq!(
            sa.intersection(&sb).cloned().collect::<Vec<_>>(),
            ba.intersection(&bb).cloned().collect::<Vec<_>>()
        );
        // Ordering of sets is the BTreeSet's (lexicographic over ascending atoms).
        prop_assert_eq!(sa.cmp(&sb), ba.cmp(&bb));
        // Growing one atom at a time (in the given order) and by whole sets.
        let mut grown = AtomSet::new();
        let mut grown_oracle = BTreeSet::new();
        for x in a.iter().chain(&b) {
            prop_assert_eq!(grown.insert(x.clone()), grown_oracle.insert(x.clone()));
        }
        prop_assert_eq!(oracle(&grown), grown_oracle);
        let mut extended = sa.clone();
        extended.extend_from(&sb);
        prop_assert_eq!(&extended, &sa.union_set(&sb));
        let mut removed = sa.clone();
        let mut removed_oracle = ba.clone();
        prop_assert_eq!(removed.remove(&probe), removed_oracle.remove(&probe));
        prop_assert_eq!(oracle(&removed), removed_oracle);
        // Serialized as the ascending sequence; read back from any order.
        let json = serde_json::to_string(&sa).unwrap();
        prop_assert_eq!(&json, &serde_json::to_string(&ba).unwrap());
        let shuffled: Vec<&Atom> = a.iter().rev().chain(a.iter()).collect();
        let back: AtomSet = serde_json::from_str(&serde_json::to_string(&shuffled).unwrap()).unwrap();
        prop_assert_eq!(back, sa);
    }
}
