//! Config trust: a project config applies only once the human trusted its exact
//! content (`safesh trust`), recorded by hash in safesh's state.
