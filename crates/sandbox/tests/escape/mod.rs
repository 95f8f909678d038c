//! The escape suite: every attack first prints a marker (it ran), then must fail and
//! leave no trace.
mod filesystem;
mod limits;
mod network;
mod processes;
