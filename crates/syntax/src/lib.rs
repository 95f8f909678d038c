//! Parsing.
