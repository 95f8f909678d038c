//! `safesh config show`: the merged config with where each setting came from.
