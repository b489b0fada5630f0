//! Broken FMUs, made by zipping broken variants of the test FMUs: each
//! error names its place (the FMU file, the line of the XML, the
//! variable, the function) and the fix.

#[path = "support/fmus.rs"]
mod fmus;

use std::path::{Path, PathBuf};

use tandem_fmi::{Fmu, FmuError, FmuModel, Parameters, Unpack};
use tandem_models::Model;

/// Opens the FMU at `path`, which must fail, and returns the error.
fn open_error(path: &Path) -> FmuError {
    match Fmu::open(path) {
        Ok(_) => panic!("{} opened", path.display()),
        Err(e) => e,
    }
}

/// The bouncing ball with `from` replaced by `to` in its description.
fn ball_with(dir: &tempfile::TempDir, name: &str, from: &str, to: &str) -> PathBuf {
    let xml = fmus::description(name);
    assert!(xml.contains(from), "{name}'s description has no {from}");
    let xml = xml.replacen(from, to, 1);
    let variant = fmus::Variant {
        description: Some(&xml),
        ..fmus::Variant::default()
    };
    fmus::build_variant(name, &dir.path().join("broken.fmu"), variant)
}

#[test]
fn a_missing_binary_lists_the_platform_folders_the_fmu_has() {
    let dir = tempfile::tempdir().unwrap();
    let xml = fmus::description("bouncing_ball");
    let path = dir.path().join("no_binary.fmu");
    fmus::zip_entries(
        &path,
        &[
            ("modelDescription.xml", xml.as_bytes()),
            ("binaries/win64/bouncing_ball.dll", b"MZ"),
            ("binaries/darwin64/bouncing_ball.dylib", b"\xcf\xfa"),
        ],
    );
    let e = open_error(&path);
    assert!(matches!(e, FmuError::MissingBinary { .. }), "{e}");
    let text = e.to_string();
    let expected = format!(
        "binaries/{}/bouncing_ball.{}",
        tandem_fmi::platform_folder(tandem_fmi::FmiVersion::V2).unwrap(),
        std::env::consts::DLL_EXTENSION
    );
    assert!(text.contains(&format!("FMU \"{}\"", path.display())), "{text}");
    assert!(
        text.contains(&format!("no binary \"{expected}\" for this platform")),
        "{text}"
    );
    assert!(text.contains("the FMU has binaries for: darwin64, win64"), "{text}");
    assert!(text.contains("help: export the FMU for this platform"), "{text}");

    let variant = fmus::Variant {
        no_binary: true,
        ..fmus::Variant::default()
    };
    let path = fmus::build_variant("bouncing_ball3", &dir.path().join("none.fmu"), variant);
    let text = open_error(&path).to_string();
    assert!(text.contains("the FMU has binaries for: no platform at all"), "{text}");
}

#[test]
fn an_unsupported_fmi_version_says_what_was_found_and_what_is_supported() {
    let dir = tempfile::tempdir().unwrap();
    let path = ball_with(&dir, "bouncing_ball", "fmiVersion=\"2.0\"", "fmiVersion=\"1.0\"");
    let text = open_error(&path).to_string();
    assert!(
        text.contains("modelDescription.xml:2:1: unsupported FMI version \"1.0\"; supported: \"2.0\" and \"3.0\""),
        "{text}"
    );
    assert!(text.contains("help: export the FMU as FMI 2.0 or 3.0"), "{text}");
}

#[test]
fn malformed_xml_is_reported_at_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = ball_with(&dir, "bouncing_ball3", "</ModelVariables>", "</ModelVariable>");
    let e = open_error(&path);
    let FmuError::Description { line, .. } = &e else {
        panic!("not a description error: {e}");
    };
    let expected = fmus::description("bouncing_ball3")
        .lines()
        .position(|l| l.contains("</ModelVariables>"))
        .unwrap() as u32
        + 1;
    assert_eq!(*line, expected, "{e}");
    let text = e.to_string();
    assert!(
        text.contains(&format!("modelDescription.xml:{expected}:")) && text.contains("malformed XML"),
        "{text}"
    );
    assert!(text.contains("help: fix the XML"), "{text}");
}

#[test]
fn a_reference_to_an_unknown_variable_names_the_reference_and_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = ball_with(
        &dir,
        "bouncing_ball",
        "<Unknown index=\"2\" dependencies=\"3\"/>",
        "<Unknown index=\"9\" dependencies=\"3\"/>",
    );
    let text = open_error(&path).to_string();
    let line = fmus::description("bouncing_ball")
        .lines()
        .position(|l| l.contains("<Unknown index=\"2\" dependencies=\"3\"/>"))
        .unwrap()
        + 1;
    assert!(
        text.contains(&format!(
            "modelDescription.xml:{line}:7: <Unknown> refers to 1-based variable index 9, which is not a variable (6 variables are declared)"
        )),
        "{text}"
    );
    assert!(
        text.contains("help: refer only to variables declared in <ModelVariables>"),
        "{text}"
    );

    let path = ball_with(&dir, "bouncing_ball3", "derivative=\"3\"", "derivative=\"99\"");
    let text = open_error(&path).to_string();
    assert!(
        text.contains("derivative refers to value reference 99, which is not a variable"),
        "{text}"
    );
}

#[test]
fn a_missing_attribute_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = ball_with(&dir, "bouncing_ball3", "instantiationToken=", "token=");
    let text = open_error(&path).to_string();
    assert!(
        text.contains("modelDescription.xml:2:1: <fmiModelDescription> has no instantiationToken attribute"),
        "{text}"
    );
    assert!(text.contains("help: the FMI standard requires it"), "{text}");
}

#[test]
fn a_missing_function_is_named_with_its_interface() {
    let dir = tempfile::tempdir().unwrap();
    let variant = fmus::Variant {
        defines: &["OMIT_GET_DERIVATIVES"],
        ..fmus::Variant::default()
    };
    let path = fmus::build_variant("bouncing_ball", &dir.path().join("partial.fmu"), variant);
    let e = open_error(&path);
    assert!(matches!(e, FmuError::MissingSymbol { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("does not export fmi2GetDerivatives, which the Model Exchange interface needs"),
        "{text}"
    );
    assert!(
        text.contains("help: the binary does not implement the interface"),
        "{text}"
    );
}

/// The bouncing ball whose binary refers to the variable `symbol`, which
/// no library defines.
fn ball_needing(dir: &tempfile::TempDir, symbol: &str) -> PathBuf {
    let define = format!("NEEDS_SYMBOL={symbol}");
    let variant = fmus::Variant {
        defines: &[&define],
        ..fmus::Variant::default()
    };
    fmus::build_variant("bouncing_ball", &dir.path().join(format!("{symbol}.fmu")), variant)
}

#[test]
fn a_binary_that_does_not_load_says_the_loaders_reason() {
    let dir = tempfile::tempdir().unwrap();
    let library = format!(
        "binaries/{}/bouncing_ball.{}",
        tandem_fmi::platform_folder(tandem_fmi::FmiVersion::V2).unwrap(),
        std::env::consts::DLL_EXTENSION
    );
    let path = ball_needing(&dir, "tandem_test_absent_symbol");
    let e = open_error(&path);
    assert!(matches!(e, FmuError::Load { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.starts_with(&format!(
            "FMU \"{}\": cannot load \"{library}\": dlopen failed: ",
            path.display()
        )),
        "{text}"
    );
    assert!(text.contains("undefined symbol: tandem_test_absent_symbol\n"), "{text}");
    assert!(
        text.contains("help: the binary needs tandem_test_absent_symbol, which no library loaded provides"),
        "{text}"
    );

    // A file that is no shared library where the binary should be.
    let xml = fmus::description("bouncing_ball");
    let text_file = dir.path().join("text.fmu");
    let words = "This is not a shared library, only text long enough to fill an ELF header and more.";
    fmus::zip_entries(
        &text_file,
        &[("modelDescription.xml", xml.as_bytes()), (&library, words.as_bytes())],
    );
    let text = open_error(&text_file).to_string();
    assert!(text.contains(": dlopen failed: "), "{text}");
    assert!(text.contains("invalid ELF header"), "{text}");
    assert!(
        text.contains("help: the file is not a shared library of this platform"),
        "{text}"
    );
}

#[test]
fn a_binary_needing_libpython_says_how_to_provide_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = open_error(&ball_needing(&dir, "_Py_NoneStruct")).to_string();
    assert!(text.contains("undefined symbol: _Py_NoneStruct\n"), "{text}");
    assert!(
        text.contains("help: the binary needs the Python library (_Py_NoneStruct is one of its symbols): the FMU embeds Python, as FMUs built by pythonfmu do"),
        "{text}"
    );
    assert!(text.contains("LD_PRELOAD=/path/to/libpython3.X.so.1.0"), "{text}");
}

#[test]
fn a_wrong_guid_is_refused_by_the_binary_and_its_log_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let path = ball_with(&dir, "bouncing_ball", "guid=\"{8c4e", "guid=\"{0000");
    let fmu = Fmu::open(path).unwrap();
    let text = FmuModel::new(&fmu, &Parameters::new()).err().unwrap().to_string();
    assert!(
        text.contains(
            "FMU \"bouncing_ball\": fmi2Instantiate returned no instance: logStatusError: wrong fmuType or GUID"
        ),
        "{text}"
    );
}

#[test]
fn an_entry_climbing_out_of_the_archive_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let xml = fmus::description("bouncing_ball");
    for bad in ["../evil.txt", "resources/../../evil.txt", "/etc/evil"] {
        let path = dir.path().join("slip.fmu");
        fmus::zip_entries(&path, &[("modelDescription.xml", xml.as_bytes()), (bad, b"x")]);
        let text = open_error(&path).to_string();
        assert!(
            text.contains(&format!(
                "entry \"{bad}\" is an absolute path or climbs out with \"..\""
            )),
            "{text}"
        );
        assert!(!dir.path().parent().unwrap().join("evil.txt").exists());
    }
}

#[test]
fn a_file_that_is_no_zip_or_has_no_description_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("text.fmu");
    std::fs::write(&path, "not a zip").unwrap();
    let text = open_error(&path).to_string();
    assert!(
        text.contains("not a ZIP archive") && text.contains("help: an FMU is a ZIP file"),
        "{text}"
    );

    let xml = fmus::description("bouncing_ball");
    fmus::zip_entries(&path, &[("bouncing_ball/modelDescription.xml", xml.as_bytes())]);
    let text = open_error(&path).to_string();
    assert!(
        text.contains("no modelDescription.xml at the top of the archive")
            && text.contains("re-zip it from inside its folder"),
        "{text}"
    );

    let missing = dir.path().join("missing.fmu");
    let e = open_error(&missing);
    assert!(matches!(e, FmuError::Io { .. }), "{e}");
    assert!(e.to_string().contains("cannot open the file"), "{e}");
}

#[test]
fn the_unpacked_files_are_removed_with_the_last_user() {
    let dir = tempfile::tempdir().unwrap();
    let path = fmus::build("bouncing_ball", dir.path());
    let fmu = Fmu::open_with(&path, &Unpack::Temporary).unwrap();
    let unpacked = fmu.directory().to_path_buf();
    assert!(unpacked.join("modelDescription.xml").is_file());
    let model = FmuModel::new(&fmu, &Parameters::new()).unwrap();
    drop(fmu);
    assert!(unpacked.is_dir(), "the model still needs them");
    drop(model);
    assert!(!unpacked.exists());
}

/// Opening an FMU unpacks only what a run needs (not, say, the 157 files
/// of a Dymola FMU with its Windows DLLs), once per content, and reuses it.
#[test]
fn an_fmu_is_unpacked_once_per_content_and_only_what_a_run_needs() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let built = fmus::build("bouncing_ball", dir.path());
    // The same FMU with documentation and another platform's binary.
    let mut entries: Vec<(String, Vec<u8>)> = Vec::new();
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&built).unwrap()).unwrap();
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).unwrap();
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut bytes).unwrap();
        entries.push((entry.name().unwrap().into_owned(), bytes));
    }
    entries.push(("documentation/index.html".into(), b"<p>doc</p>".to_vec()));
    entries.push(("binaries/win64/bouncing_ball.dll".into(), vec![0u8; 1000]));
    entries.push(("resources/table.txt".into(), b"1 2 3".to_vec()));
    let path = dir.path().join("wide.fmu");
    let borrowed: Vec<(&str, &[u8])> = entries.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect();
    fmus::zip_entries(&path, &borrowed);
    let place = Unpack::Cache(cache.clone());
    let first = Fmu::open_with(&path, &place).unwrap();
    let folder = first.directory().to_path_buf();
    assert!(folder.starts_with(&cache), "{}", folder.display());
    assert!(folder.join("resources/table.txt").is_file());
    assert!(!folder.join("documentation").exists());
    assert!(!folder.join("binaries/win64/bouncing_ball.dll").exists());
    // The other platform's folder is there, empty, for the message naming
    // the platforms an FMU has.
    assert!(folder.join("binaries/win64").is_dir());
    let model = FmuModel::new(&first, &Parameters::new()).unwrap();
    assert_eq!(model.layout().states, ["h", "v"]);
    // A copy under another name is the same content: the same folder, not
    // unpacked again (the marker's time is unchanged).
    let marker = folder.join(".tandem-complete");
    let stamp = std::fs::metadata(&marker).unwrap().modified().unwrap();
    let copy = dir.path().join("copy.fmu");
    std::fs::copy(&path, &copy).unwrap();
    let second = Fmu::open_with(&copy, &place).unwrap();
    assert_eq!(second.directory(), folder);
    assert_eq!(std::fs::metadata(&marker).unwrap().modified().unwrap(), stamp);
    // Dropping every user keeps the cache.
    drop((model, first, second));
    assert!(folder.join("modelDescription.xml").is_file());
    assert_eq!(
        std::fs::read_dir(&cache).unwrap().count(),
        1,
        "no staging folder left behind"
    );
}
