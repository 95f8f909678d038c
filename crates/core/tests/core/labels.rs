//! Labels travel with the data: file reads carry their origin, script text carries
//! the agent's integrity, and every combination joins.

use super::support::{out, run};
use safesh_label::{Atom, Integrity};

fn file_atom(dir: &std::path::Path, name: &str) -> Atom {
    Atom::File(dir.join(name).display().to_string().into())
}

#[test]
fn literal_output_carries_agent_integrity_only() {
    let d = tempfile::tempdir().unwrap();
    let o = run(d.path(), "echo hello");
    assert_eq!(out(&o), "hello\n");
    assert_eq!(o.label.origins, safesh_label::AtomSet::from([Atom::Agent]));
    assert_eq!(o.label.integrity, Integrity::single(Atom::Agent));
    assert!(!o.label.is_secret());
}

#[test]
fn file_read_by_a_utility_carries_the_file_origin() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("data.txt"), "x\n").unwrap();
    let o = run(d.path(), "cat data.txt");
    assert_eq!(out(&o), "x\n");
    assert!(
        o.label.origins.contains(&file_atom(d.path(), "data.txt")),
        "{:?}",
        o.label
    );
    // Joined with the agent's argv: neither integrity atom survives the join.
    assert_eq!(o.label.integrity, Integrity::none());
}

#[test]
fn redirected_input_carries_the_file_origin_through_a_pipe() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("in.txt"), "abc\n").unwrap();
    let o = run(d.path(), "cat < in.txt | cat | cat");
    assert_eq!(out(&o), "abc\n");
    assert!(o.label.origins.contains(&file_atom(d.path(), "in.txt")));
}

#[test]
fn command_substitution_and_variables_keep_the_label() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("secret.txt"), "s3cr3t\n").unwrap();
    let o = run(d.path(), "x=$(cat secret.txt); y=\"pre-$x\"; echo \"$y\"");
    assert_eq!(out(&o), "pre-s3cr3t\n");
    assert!(o.label.origins.contains(&file_atom(d.path(), "secret.txt")));
    assert!(o.label.origins.contains(&Atom::Agent));
}

#[test]
fn unrelated_output_does_not_pick_up_a_file_label_in_its_own_chunk() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f.txt"), "1\n").unwrap();
    // The result label is the join of all output: both the file and the agent text.
    let o = run(d.path(), "echo a; cat f.txt");
    assert!(o.label.origins.contains(&file_atom(d.path(), "f.txt")));
    let o2 = run(d.path(), "x=$(cat f.txt); echo unrelated");
    assert!(
        !o2.label.origins.contains(&file_atom(d.path(), "f.txt")),
        "{:?}",
        o2.label
    );
}

#[test]
fn here_document_with_expansion_joins_the_variable_label() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("v.txt"), "val\n").unwrap();
    let o = run(d.path(), "v=$(cat v.txt)\ncat <<EOF\nhave $v\nEOF");
    assert_eq!(out(&o), "have val\n");
    assert!(o.label.origins.contains(&file_atom(d.path(), "v.txt")));
}

#[test]
fn environment_values_carry_an_env_origin() {
    let d = tempfile::tempdir().unwrap();
    let o = run(d.path(), "echo \"$HOME\"");
    assert!(
        o.label.origins.contains(&Atom::Env("HOME".into())),
        "{:?}",
        o.label
    );
}
