use super::*;

#[test]
fn join_with_empty_is_identity() {
    let a = Label::from_file("a.txt");
    assert_eq!(a.join(&Label::empty()), a);
}
