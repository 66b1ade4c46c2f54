//! Test support shared by the test files that declare `mod common;`.

pub mod backends;
