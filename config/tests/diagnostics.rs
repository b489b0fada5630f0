//! The `[bus.diagnostics]` table: what it reads, and each wrong value
//! reported at its line and column with its key and the fix.

use std::path::Path;

use tandem_config::{parse_run_config, ConfigError, Location};

const HEAD: &str = "model = \"ev\"\n[[bus]]\ntransport = \"udp\"\ndbc = \"ev.dbc\"\n[bus.diagnostics]\n";

fn parse(table: &str) -> Result<tandem_config::RunConfig, ConfigError> {
    parse_run_config(&format!("{HEAD}{table}"), Path::new("run.toml"), &[])
}

#[track_caller]
fn fails(table: &str, line: usize, column: usize, key: &str, fragment: &str) {
    let e = parse(table).err().unwrap_or_else(|| panic!("accepted:\n{table}"));
    assert_eq!(
        (e.location, e.key.as_str()),
        (Some(Location { line, column }), key),
        "{e}"
    );
    assert!(e.message.contains(fragment), "{e}\nshould contain: {fragment}");
}

#[test]
fn every_key_is_read() {
    let run = parse(
        "request_id = 0x18DA10F1\nresponse_id = 0x18DAF110\nextended_id = true\nfd = true\naddressing = \"extended\"\n\
         ecu_address = 0x10\ntester_address = 0xF1\npadding = 0xAA\nblock_size = 8\nstmin = 0xF5\n\
         [[bus.diagnostics.did]]\nid = 0xF40D\nsignal = \"speed\"\nbytes = 4\nscale = 0.01\noffset = -40\nsigned = true\n\
         [[bus.diagnostics.did]]\nid = 0x0100\nsignal = \"torque\"\n\
         [[bus.diagnostics.dtc]]\ncode = 0xC07300\noutput = \"timeout\"\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let d = run.buses[0].diagnostics.as_ref().unwrap();
    assert_eq!(
        (d.request_id, d.response_id, d.extended_id, d.fd),
        (0x18DA10F1, 0x18DAF110, true, true)
    );
    assert_eq!(
        (d.addresses, d.padding, d.block_size, d.st_min),
        (Some((0x10, 0xF1)), Some(0xAA), 8, 0xF5)
    );
    let did = &d.dids[0];
    assert_eq!(
        (
            did.id,
            did.signal.value.as_str(),
            did.bytes,
            did.scale,
            did.offset,
            did.signed
        ),
        (0xF40D, "speed", 4, 0.01, -40.0, true)
    );
    assert_eq!(did.signal.location, Location { line: 18, column: 10 });
    assert_eq!((d.dids[1].bytes, d.dids[1].scale, d.dids[1].signed), (2, 1.0, false));
    assert_eq!((d.dtcs[0].code, d.dtcs[0].output.value.as_str()), (0xC07300, "timeout"));
    assert_eq!(d.dtcs[0].output.key, "bus[0].diagnostics.dtc[0].output");
}

#[test]
fn wrong_values_are_reported_at_their_place() {
    let ids = "request_id = 0x7E0\nresponse_id = 0x7E8\n";
    fails(
        "request_id = 0x800\nresponse_id = 0x7E8\n",
        6,
        14,
        "bus[0].diagnostics.request_id",
        "extended_id = true",
    );
    fails(
        "request_id = 0x7E0\nresponse_id = 0x7E0\n",
        7,
        15,
        "bus[0].diagnostics.response_id",
        "other than request_id",
    );
    fails(
        &format!("{ids}addressing = \"mixed\"\n"),
        8,
        14,
        "bus[0].diagnostics.addressing",
        "normal, extended",
    );
    fails(
        &format!("{ids}addressing = \"extended\"\necu_address = 1\n"),
        8,
        14,
        "bus[0].diagnostics.tester_address",
        "add e.g.",
    );
    fails(
        &format!("{ids}stmin = 0x80\n"),
        8,
        9,
        "bus[0].diagnostics.stmin",
        "reserved",
    );
    fails(
        &format!("{ids}padding = 256\n"),
        8,
        11,
        "bus[0].diagnostics.padding",
        "0 to 255",
    );
    fails(
        &format!("{ids}[[bus.diagnostics.did]]\nid = 1\nsignal = \"a\"\nbytes = 9\n"),
        11,
        9,
        "bus[0].diagnostics.did[0].bytes",
        "1 to 8",
    );
    fails(
        &format!("{ids}[[bus.diagnostics.did]]\nid = 1\nsignal = \"a\"\nscale = 0.0\n"),
        11,
        9,
        "bus[0].diagnostics.did[0].scale",
        "other than 0",
    );
    fails(
        &format!(
            "{ids}[[bus.diagnostics.did]]\nid = 1\nsignal = \"a\"\n[[bus.diagnostics.did]]\nid = 1\nsignal = \"b\"\n"
        ),
        12,
        6,
        "bus[0].diagnostics.did[1].id",
        "twice",
    );
    fails(
        &format!("{ids}[[bus.diagnostics.dtc]]\ncode = 0x1000000\noutput = \"a\"\n"),
        9,
        8,
        "bus[0].diagnostics.dtc[0].code",
        "1 to 16777215",
    );
    fails(
        &format!("{ids}[[bus.diagnostics.dtc]]\ncode = 1\n"),
        8,
        1,
        "bus[0].diagnostics.dtc[0].output",
        "missing key",
    );
}
