//! `safesh init`.
