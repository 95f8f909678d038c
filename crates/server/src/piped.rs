//! The data one pipeline step hands to the next: its raw stdout (bounded by
//! `[limits] string_bytes`) with the join of its chunks' labels. It crosses to a
//! worker process and back, so it is serde-friendly (the bytes as base64); it
//! never comes from a client's JSON ([`crate::exec::ExecParams`] skips it).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use safesh_label::Label;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Where a worker's result carries the raw stdout back to the server (removed
/// before anything is returned to a client).
pub const RESULT_KEY: &str = "piped_stdout";

/// Raw bytes with their label.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Piped {
    /// The bytes (the first `limit` of them when `overflow`).
    #[serde(serialize_with = "ser_b64", deserialize_with = "de_b64")]
    pub bytes: Vec<u8>,
    /// What they were made of.
    pub label: Label,
    /// More bytes came than the bound allowed.
    #[serde(default)]
    pub overflow: bool,
}

fn ser_b64<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&STANDARD.encode(bytes))
}

fn de_b64<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    let text = String::deserialize(d)?;
    STANDARD.decode(text).map_err(serde::de::Error::custom)
}

/// Takes the raw stdout out of an exec result (a pipeline step's; `None` when
/// the request did not ask for it).
pub fn take_from(result: &mut serde_json::Value) -> Option<Piped> {
    let v = result.as_object_mut()?.remove(RESULT_KEY)?;
    serde_json::from_value(v).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_label_cross_json_intact() {
        let p = Piped {
            bytes: vec![0, 255, b'\n', 1],
            label: Label::user_input(),
            overflow: true,
        };
        let mut v = serde_json::json!({ RESULT_KEY: serde_json::to_value(&p).unwrap() });
        assert_eq!(take_from(&mut v), Some(p));
        assert!(v.as_object().is_some_and(serde_json::Map::is_empty));
    }
}
