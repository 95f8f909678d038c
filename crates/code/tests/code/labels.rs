//! Labels in code: what the script read labels what it prints and writes; its
//! literals are the agent's.

use crate::support::{Project, stderr, stdout};

#[test]
fn printing_a_secret_labels_the_output_secret() {
    let p = Project::new();
    let r = p.run("console.log((await fs.read('.env')).length)");
    assert_eq!(stdout(&r), "27\n", "{}", stderr(&r));
    assert!(r.outcome.label.is_secret(), "{:?}", r.outcome.label);
    // The benign neighbour: public data stays public.
    let r = p.run("console.log((await fs.read('public.txt')).length)");
    assert!(!r.outcome.label.is_secret(), "{:?}", r.outcome.label);
}

#[test]
fn output_printed_before_the_secret_was_read_is_not_secret() {
    let p = Project::new();
    let r =
        p.run("console.log('before'); const s = await fs.read('.env'); console.error(s.length);");
    assert_eq!(stdout(&r), "before\n");
    assert_eq!(stderr(&r), "27\n");
}

#[test]
fn a_file_written_from_a_secret_is_labeled_secret() {
    let p = Project::new();
    let r = p.run("await fs.write('copy.txt', (await fs.read('.env')).toUpperCase());");
    assert_eq!(r.outcome.exit_code, 0, "{}", stderr(&r));
    // Reading the copy in a new session: secret, as bash would see it.
    let r = p.run("console.log((await fs.read('copy.txt')).length)");
    assert!(r.outcome.label.is_secret(), "{:?}", r.outcome.label);
    let r = p.run("await fs.write('pub2.txt', 'literal'); console.log(await fs.read('pub2.txt'))");
    assert!(!r.outcome.label.is_secret(), "{:?}", r.outcome.label);
}
