//! `safesh explain CODE`.
