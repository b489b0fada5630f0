//! Builds Tandem's test FMUs from their C sources in `fmi/tests/fmus/`.
//!
//! Each FMU is a folder `fmi/tests/fmus/<name>/` holding its
//! `modelDescription.xml` (written by hand) and its `*.c` files, which may
//! include the headers of `fmi/tests/fmus/common/` (the FMI types, declared
//! there from the standard, model code shared between FMI versions,
//! `fmi2_instance.h` / `fmi3_instance.h` with what every FMU of a version
//! does alike, and `fmi2_stubs.h` / `fmi3_stubs.h`, which complete each FMU's binary with
//! the functions of the standard it does not implement itself, so that it
//! exports the full function set importers such as FMPy require).
//! [`build`] compiles the C files with the system C compiler (`cc -shared
//! -fPIC -O2`) into `binaries/<platform>/<modelIdentifier>.<ext>` and zips
//! that with the XML into `<out_dir>/<name>.fmu`.
//!
//! The FMUs: `bouncing_ball` (FMI 2 ME), `bouncing_ball3` (FMI 3 ME),
//! `first_order` (FMI 2 ME, refuses a negative input), `step_response`
//! (FMI 3 ME with a time event), `oscillator` (FMI 2 CS) and `oscillator3`
//! (FMI 3 CS with a force step), `counter` (FMI 2 ME with an internal
//! counter of its time events that saves and serializes its state), each
//! described at the top of its C file; and `crash` (FMI 2 ME), whose
//! derivatives crash the process from a given time on, for the tests of
//! out-of-process loading.
//!
//! Other crates' tests use it with
//! `#[path = "../../fmi/tests/support/fmus.rs"] mod fmus;` and need `zip`
//! (with its `deflate` feature) as a dev-dependency, and `cc` on the PATH.
//! It uses nothing else beyond std.

// Each test file uses only part of it.
#![allow(dead_code)]

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A changed build of a test FMU, to make broken FMUs for error tests.
#[derive(Clone, Copy, Debug, Default)]
pub struct Variant<'a> {
    /// Replaces `modelDescription.xml` with this text.
    pub description: Option<&'a str>,
    /// Preprocessor symbols defined when compiling (e.g. to leave a
    /// function out).
    pub defines: &'a [&'a str],
    /// Leaves the binary out of the archive.
    pub no_binary: bool,
}

/// The folder holding the test FMUs' sources: `fmi/tests/fmus`, found
/// from the including crate's manifest directory upwards.
pub fn sources() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .flat_map(|dir| [dir.join("tests/fmus"), dir.join("fmi/tests/fmus")])
        .find(|dir| dir.join("common").is_dir())
        .unwrap_or_else(|| panic!("no fmi/tests/fmus above {}", manifest.display()))
}

/// The text of the test FMU `name`'s `modelDescription.xml`.
pub fn description(name: &str) -> String {
    let path = sources().join(name).join("modelDescription.xml");
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Builds the test FMU `name` into `<out_dir>/<name>.fmu` and returns its
/// path.
pub fn build(name: &str, out_dir: &Path) -> PathBuf {
    build_variant(name, &out_dir.join(format!("{name}.fmu")), Variant::default())
}

/// Builds a variant of the test FMU `name` into the file `fmu` and returns
/// its path.
pub fn build_variant(name: &str, fmu: &Path, variant: Variant) -> PathBuf {
    let source = sources().join(name);
    let xml = variant.description.map_or_else(|| description(name), str::to_string);
    let mut entries: Vec<(String, Vec<u8>)> = vec![("modelDescription.xml".to_string(), xml.clone().into_bytes())];
    if !variant.no_binary {
        let folder = platform_folder(
            attribute(&xml, "fmiVersion")
                .first()
                .is_some_and(|v| v.starts_with('3')),
        );
        let mut identifiers = attribute(&xml, "modelIdentifier");
        identifiers.dedup();
        let staging = fmu.with_extension("build");
        fs::create_dir_all(&staging).unwrap_or_else(|e| panic!("cannot create {}: {e}", staging.display()));
        for id in identifiers {
            let library = staging.join(format!("{id}.{}", std::env::consts::DLL_EXTENSION));
            compile(&source, &library, variant.defines);
            let bytes = fs::read(&library).unwrap_or_else(|e| panic!("cannot read {}: {e}", library.display()));
            entries.push((format!("binaries/{folder}/{}", file_name(&library)), bytes));
        }
    }
    let borrowed: Vec<(&str, &[u8])> = entries.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect();
    zip_entries(fmu, &borrowed);
    fmu.to_path_buf()
}

/// Writes a ZIP archive at `path` holding `entries` (name, content),
/// deflated.
pub fn zip_entries(path: &Path, entries: &[(&str, &[u8])]) {
    let file = fs::File::create(path).unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in entries {
        zip.start_file(*name, options)
            .unwrap_or_else(|e| panic!("cannot add {name} to {}: {e}", path.display()));
        zip.write_all(bytes)
            .unwrap_or_else(|e| panic!("cannot write {name} to {}: {e}", path.display()));
    }
    zip.finish()
        .unwrap_or_else(|e| panic!("cannot finish {}: {e}", path.display()));
}

/// Compiles the C files of `source` into the shared library `library`.
fn compile(source: &Path, library: &Path, defines: &[&str]) {
    let mut files: Vec<PathBuf> = fs::read_dir(source)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", source.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    files.sort();
    let mut cc = Command::new("cc");
    cc.args(["-shared", "-fPIC", "-O2", "-std=c99", "-Wall"])
        .arg("-I")
        .arg(sources().join("common"))
        .arg("-o")
        .arg(library)
        .args(defines.iter().map(|d| format!("-D{d}")))
        .args(&files)
        .arg("-lm");
    let output = cc
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `cc` (is one installed?): {e}"));
    assert!(
        output.status.success(),
        "cc failed on {}:\n{}",
        source.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The values of every `name="..."` attribute in `xml`, in order.
fn attribute(xml: &str, name: &str) -> Vec<String> {
    let key = format!("{name}=\"");
    xml.match_indices(&key)
        .filter_map(|(at, _)| {
            let rest = &xml[at + key.len()..];
            rest.find('"').map(|end| rest[..end].to_string())
        })
        .collect()
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The FMI platform folder of this machine.
fn platform_folder(fmi3: bool) -> &'static str {
    use std::env::consts::{ARCH, OS};
    match (ARCH, OS, fmi3) {
        ("x86_64", "linux", false) => "linux64",
        ("x86_64", "linux", true) => "x86_64-linux",
        ("aarch64", "linux", true) => "aarch64-linux",
        ("x86_64" | "aarch64", "macos", false) => "darwin64",
        ("x86_64", "macos", true) => "x86_64-darwin",
        ("aarch64", "macos", true) => "aarch64-darwin",
        other => panic!("the test FMUs have no FMI platform folder for {other:?}"),
    }
}
