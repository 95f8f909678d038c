//! Property tests of the label algebra through its public API: the lattice laws
//! the information-flow rules rely on (safesh-flow decides with `join`,
//! `flows_to` and `mentions`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use proptest::collection::btree_set;
use proptest::prelude::*;
use safesh_label::{Atom, Clause, Confidentiality, Integrity, Label};

/// A small atom universe, so generated labels overlap often.
fn atom() -> impl Strategy<Value = Atom> {
    prop_oneof![
        Just(Atom::Agent),
        Just(Atom::User),
        Just(Atom::File("/p/.env".into())),
        Just(Atom::File("/p/src/main.rs".into())),
        Just(Atom::Network("evil.com".into())),
        Just(Atom::Env("GITHUB_TOKEN".into())),
        Just(Atom::Secret("secret".into())),
        Just(Atom::Secret("github_token".into())),
        Just(Atom::Sandboxed("curl".into())),
        Just(Atom::EndorsedBy("user".into())),
    ]
}

fn confidentiality() -> impl Strategy<Value = Confidentiality> {
    btree_set(btree_set(atom(), 1..3).prop_map(Clause), 0..4).prop_map(Confidentiality)
}

fn integrity() -> impl Strategy<Value = Integrity> {
    prop_oneof![
        1 => Just(Integrity::Top),
        4 => btree_set(atom(), 0..4).prop_map(|s| Integrity::Atoms(s.into_iter().collect())),
    ]
}

/// Arbitrary labels, plus the constructors' labels and joins of them.
fn label() -> impl Strategy<Value = Label> {
    let raw = (confidentiality(), integrity(), btree_set(atom(), 0..3))
        .prop_map(|(c, i, o)| Label::new(c, i, o.into_iter().collect()));
    let made = prop_oneof![
        Just(Label::empty()),
        Just(Label::bottom()),
        Just(Label::agent()),
        Just(Label::user_input()),
        Just(Label::from_file("/p/.env")),
        Just(Label::from_network("evil.com")),
        Just(Label::from_env("HOME")),
        Just(Label::sandboxed("curl")),
        Just(Label::secret("secret")),
        Just(Label::secret("github_token")),
    ];
    prop_oneof![
        2 => raw,
        1 => made.clone(),
        1 => (made.clone(), made).prop_map(|(a, b)| a.join(&b)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn join_is_commutative(a in label(), b in label()) {
        prop_assert_eq!(a.join(&b), b.join(&a));
    }

    #[test]
    fn join_is_associative(a in label(), b in label(), c in label()) {
        prop_assert_eq!(a.join(&b).join(&c), a.join(&b.join(&c)));
    }

    #[test]
    fn join_is_idempotent(a in label()) {
        prop_assert_eq!(a.join(&a), a);
    }

    #[test]
    fn join_all_is_a_fold_of_join(a in label(), b in label(), c in label()) {
        prop_assert_eq!(Label::join_all([&a, &b, &c]), a.join(&b).join(&c));
    }

    #[test]
    fn flows_to_is_reflexive(a in label()) {
        prop_assert!(a.flows_to(&a));
    }

    #[test]
    fn flows_to_is_transitive(a in label(), b in label(), c in label()) {
        if a.flows_to(&b) && b.flows_to(&c) {
            prop_assert!(a.flows_to(&c));
        }
        // Chains built by joins always exist: a ≤ a⊔b ≤ a⊔b⊔c.
        let ab = a.join(&b);
        let abc = ab.join(&c);
        prop_assert!(a.flows_to(&ab) && ab.flows_to(&abc) && a.flows_to(&abc));
    }

    /// Antisymmetric up to equivalence: CNF has several spellings of the same
    /// readers (`{A}` and `{A} ∧ {A ∨ B}`), so labels that flow both ways need not
    /// be equal, but no sink can tell them apart.
    #[test]
    fn flows_to_is_antisymmetric_up_to_equivalence(a in label(), b in label(), c in label()) {
        if a.flows_to(&b) && b.flows_to(&a) {
            prop_assert_eq!(a.flows_to(&c), b.flows_to(&c));
            prop_assert_eq!(c.flows_to(&a), c.flows_to(&b));
            prop_assert_eq!(&a.integrity, &b.integrity);
        }
        // Integrity has one spelling: there it is plain antisymmetry.
        if a.integrity.at_least(&b.integrity) && b.integrity.at_least(&a.integrity) {
            prop_assert_eq!(&a.integrity, &b.integrity);
        }
    }

    #[test]
    fn join_is_an_upper_bound(a in label(), b in label()) {
        let j = a.join(&b);
        prop_assert!(a.flows_to(&j));
        prop_assert!(b.flows_to(&j));
        // Origins only grow: provenance survives every join.
        prop_assert!(a.origins.is_subset(&j.origins) && b.origins.is_subset(&j.origins));
    }

    #[test]
    fn join_is_the_least_upper_bound(a in label(), b in label(), c in label()) {
        let ac = a.join(&c);
        let bc = b.join(&c);
        // Any common upper bound (here a⊔b⊔c, and whatever random c is) is above a⊔b.
        if a.flows_to(&c) && b.flows_to(&c) {
            prop_assert!(a.join(&b).flows_to(&c));
        }
        prop_assert!(a.join(&b).flows_to(&ac.join(&bc)));
    }

    #[test]
    fn meet_is_a_lower_bound(a in label(), b in label()) {
        let m = a.meet(&b);
        prop_assert!(m.flows_to(&a));
        prop_assert!(m.flows_to(&b));
    }

    #[test]
    fn secrecy_survives_joins(a in label(), b in label()) {
        let j = a.join(&b);
        prop_assert_eq!(j.is_secret(), a.is_secret() || b.is_secret());
        for clause in &a.confidentiality.0 {
            for atom in &clause.0 {
                prop_assert!(j.confidentiality.mentions(atom));
            }
        }
    }

    #[test]
    fn empty_is_the_identity(a in label()) {
        prop_assert_eq!(a.join(&Label::empty()), a.clone());
        // Public and untainted: it flows everywhere.
        prop_assert!(Label::empty().flows_to(&a));
    }
}
