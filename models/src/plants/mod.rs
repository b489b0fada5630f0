//! Plant models written in Rust, selectable by name.

pub mod testset;

use crate::model::Model;

/// The built-in models by name (lower case), for listing.
pub fn names() -> Vec<String> {
    testset::NAMES.iter().map(|n| n.to_lowercase()).collect()
}

/// The built-in model called `name` (any case), if there is one.
pub fn builtin(name: &str) -> Option<Box<dyn Model>> {
    testset::problem(name).map(|p| Box::new(p) as Box<dyn Model>)
}
