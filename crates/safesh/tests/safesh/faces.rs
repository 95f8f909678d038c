//! The model-facing faces through the real binary: `safesh rpc`, `safesh mcp`.
