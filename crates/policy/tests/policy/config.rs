//! Config loading, merging, errors and trust.
