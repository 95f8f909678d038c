//! Integration tests of the safesh core: labels through the interpreter, limits,
//! whole-script parsing, and the exec result contract.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod core {
    pub mod flow;
    pub mod labels;
    pub mod limits;
    pub mod parse;
    pub mod support;
    pub mod verify;
}
