//! Redaction of secret values.

use safesh_store::Redactor;
use std::borrow::Cow;

#[test]
fn replaces_values_anywhere_even_inside_words() {
    let r = Redactor::new([("TOKEN", "hunter22")]).unwrap();
    assert_eq!(
        r.redact("curl -H 'auth: xhunter22y' hunter22"),
        "curl -H 'auth: x[secret:TOKEN]y' [secret:TOKEN]"
    );
}

#[test]
fn several_secrets_each_get_their_name() {
    let r = Redactor::new([("A", "alpha-secret"), ("B", "bravo-secret")]).unwrap();
    assert_eq!(
        r.redact("a=alpha-secret b=bravo-secret again=alpha-secret"),
        "a=[secret:A] b=[secret:B] again=[secret:A]"
    );
}

#[test]
fn overlapping_and_nested_occurrences_leave_no_byte_in_clear() {
    let r = Redactor::new([("A", "abcdef"), ("B", "defghi"), ("C", "bcd0")]).unwrap();
    // A and B overlap on "def": one span naming both.
    assert_eq!(r.redact("xabcdefghix"), "x[secret:A,B]x");
    // A nested inside a longer secret.
    let r = Redactor::new([("SHORT", "pass"), ("LONG", "mypassword")]).unwrap();
    assert_eq!(r.redact("=mypassword="), "=[secret:LONG,SHORT]=");
    assert_eq!(r.redact("pass"), "[secret:SHORT]");
}

#[test]
fn short_values_are_ignored_and_clean_text_is_borrowed() {
    let r = Redactor::new([("PIN", "123"), ("EMPTY", "")]).unwrap();
    assert!(r.is_empty());
    assert!(matches!(r.redact("123"), Cow::Borrowed("123")));
    let r = Redactor::new([("K", "1234")]).unwrap();
    assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
    assert_eq!(r.redact("x1234"), "x[secret:K]");
}

#[test]
fn same_value_under_two_names_and_unicode() {
    let r = Redactor::new([("A", "clé-secrète"), ("B", "clé-secrète")]).unwrap();
    assert_eq!(r.redact("«clé-secrète»"), "«[secret:A,B]»");
    // A non-UTF-8 value cutting a character never panics.
    let r = Redactor::new([("BIN", vec![0xa9, b'a', b'b', b'c'])]).unwrap();
    // "é" is c3 a9: the value starts in the middle of it.
    assert_eq!(r.redact("é"), "é");
    assert_eq!(r.redact("éabc"), "\u{fffd}[secret:BIN]");
}

#[test]
fn debug_never_shows_values() {
    let r = Redactor::new([("TOKEN", "hunter22")]).unwrap();
    let dbg = format!("{r:?}");
    assert!(dbg.contains("TOKEN"));
    assert!(!dbg.contains("hunter22"));
}
