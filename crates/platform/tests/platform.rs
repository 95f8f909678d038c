//! The registry's contract: every command is named `namespace:noun[:verb]`,
//! described, and declares input and output schemas that are valid JSON
//! Schemas (checked with the `jsonschema` crate's meta-schema validation);
//! every example parses against its own input schema.

use safesh_platform::{Risk, get, list, namespaces, parse_words};

#[test]
fn every_schema_is_a_valid_json_schema() {
    let all = list(None);
    assert!(all.len() >= 14, "{} commands", all.len());
    for c in all {
        for (what, schema) in [("input", c.input_schema()), ("output", c.output_schema())] {
            assert!(
                jsonschema::meta::is_valid(&schema),
                "{} {what} schema is not a valid JSON Schema: {:?}",
                c.name(),
                jsonschema::meta::validate(&schema).err()
            );
            assert!(
                jsonschema::validator_for(&schema).is_ok(),
                "{} {what} schema does not compile",
                c.name()
            );
        }
        let input = c.input_schema();
        assert_eq!(input["type"], "object", "{}", c.name());
        for f in c.fields() {
            assert!(
                input["properties"][f.name]["description"].is_string(),
                "{}: field {} has no description",
                c.name(),
                f.name
            );
        }
    }
}

#[test]
fn names_descriptions_and_examples() {
    assert_eq!(namespaces(), vec!["fs", "github", "http"]);
    for c in list(None) {
        let n = c.name();
        let parts: Vec<&str> = n.split(':').collect();
        assert!((2..=3).contains(&parts.len()), "{n}");
        assert!(
            parts
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase())),
            "{n}"
        );
        assert_eq!(c.namespace(), parts[0]);
        assert!(c.description().len() > 40, "{n}: describe it for a model");
        assert!(get(n).is_some());
        // The example's words (up to a pipe; quotes are simple here) parse.
        let ex = c.example().split(" | ").next().unwrap_or("");
        assert!(ex.starts_with(n), "{n}: example {ex:?}");
        let words = split_simple(ex);
        if let Err(e) = parse_words(c, &words) {
            panic!("{n}: example {ex:?} does not parse: {e}");
        }
    }
    assert!(get("cat").is_none() && get("fs:nope").is_none() && get("a/b:c").is_none());
}

#[test]
fn risks_match_the_issue() {
    let risk = |n: &str| get(n).map(|c| c.risk());
    assert_eq!(risk("fs:read"), Some(Risk::ReadOnly));
    assert_eq!(risk("fs:write"), Some(Risk::Destructive));
    assert_eq!(risk("http:get"), Some(Risk::ReadOnly));
    assert_eq!(risk("github:pr:list"), Some(Risk::ReadOnly));
    for w in [
        "http:post",
        "http:put",
        "http:delete",
        "github:issue:create",
    ] {
        assert_eq!(risk(w), Some(Risk::Write), "{w}");
    }
    assert_eq!(
        get("github:pr:list").map(|c| c.credentials().len()),
        Some(1)
    );
    assert_eq!(get("fs:read").map(|c| c.credentials().len()), Some(0));
}

/// Words of a simple command line: blanks split, '…' quotes a word.
fn split_simple(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in s.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        words.push(cur);
    }
    words
}
