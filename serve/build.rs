//! Rebuilds the crate when the built page (`web/dist/`, embedded by
//! `include_dir!`) changes.

fn main() {
    println!("cargo:rerun-if-changed=../web/dist");
}
