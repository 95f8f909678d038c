//! `safesh init` templates and `safesh explain` texts.
