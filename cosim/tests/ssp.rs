//! SSP packages as hostile input: every truncation of a system structure
//! description, and each of its bytes replaced by one of XML's special
//! characters or an invalid UTF-8 byte, is refused with an error that
//! names the package, never a panic.

use std::io::Write as _;
use std::path::Path;

use tandem_cosim::ssp::{self, SspError};
use tandem_cosim::Loading;

/// A description whose component names an FMU the package does not hold,
/// so that no mutation of it reaches an FMU's code.
const SSD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<ssd:SystemStructureDescription xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription" xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon" xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues" version="1.0" name="s">
<ssd:System name="plant"><ssd:Elements>
<ssd:Component name="a" type="application/x-fmu-sharedlibrary" source="resources/a.fmu">
<ssd:Connectors><ssd:Connector name="y" kind="output"><ssc:Real unit="m"/></ssd:Connector></ssd:Connectors>
<ssd:ParameterBindings><ssd:ParameterBinding><ssd:ParameterValues>
<ssv:ParameterSet version="1.0" name="p"><ssv:Parameters><ssv:Parameter name="k"><ssv:Real value="2"/></ssv:Parameter></ssv:Parameters></ssv:ParameterSet>
</ssd:ParameterValues></ssd:ParameterBinding></ssd:ParameterBindings>
</ssd:Component></ssd:Elements>
<ssd:Connections><ssd:Connection startElement="a" startConnector="y" endElement="a" endConnector="u"><ssc:LinearTransformation factor="2"/></ssd:Connection></ssd:Connections>
</ssd:System>
<ssd:Units><ssc:Unit name="m"><ssc:BaseUnit m="1"/></ssc:Unit></ssd:Units>
<ssd:DefaultExperiment startTime="0" stopTime="1"/>
</ssd:SystemStructureDescription>
"#;

/// Writes a package holding `ssd` as its SystemStructure.ssd and loads it.
fn load(path: &Path, ssd: &[u8]) -> Result<(), SspError> {
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    zip.start_file("SystemStructure.ssd", zip::write::SimpleFileOptions::default())
        .unwrap();
    zip.write_all(ssd).unwrap();
    zip.finish().unwrap();
    ssp::load(path, Loading::default()).map(|_| ())
}

#[test]
fn every_truncated_or_mutated_ssd_is_refused_without_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hostile.ssp");
    let bytes = SSD.as_bytes();
    // The description as written reaches the missing FMU.
    let error = load(&path, bytes).unwrap_err().to_string();
    assert!(
        error.contains("SystemStructure.ssd:4:1: component \"a\": the package has no file \"resources/a.fmu\""),
        "{error}"
    );
    let mut tried = 0;
    for end in 0..bytes.len() {
        let error = load(&path, &bytes[..end]).unwrap_err().to_string();
        assert!(error.starts_with(&path.display().to_string()), "{end}: {error}");
        tried += 1;
    }
    // Each byte replaced by one of the special ones, in turn.
    let special = [b'<', b'"', b'>', b'&', b'/', b'.', 0xff];
    for at in 0..bytes.len() {
        let mut mutated = bytes.to_vec();
        mutated[at] = special[at % special.len()];
        if let Err(error) = load(&path, &mutated) {
            assert!(
                error.to_string().starts_with(&path.display().to_string()),
                "{at}: {error}"
            );
        }
        tried += 1;
    }
    assert_eq!(tried, bytes.len() * 2);
}
