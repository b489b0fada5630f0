//! Replays the fuzz corpus (`fuzz/corpus/TARGET/`) and every input that
//! once made a target fail (`fuzz/regressions/TARGET/`) through the
//! targets' checks: none may panic (or hang).

use std::path::{Path, PathBuf};

/// A target's check of one input.
type Check = fn(&[u8]);

/// The targets, by name, with their check.
const TARGETS: [(&str, Check); 18] = [
    ("model", tandem_fuzz::model),
    ("model_jit", tandem_fuzz::model_jit),
    ("run_toml", tandem_fuzz::run_toml),
    ("dbc", tandem_fuzz::dbc),
    ("candump", tandem_fuzz::candump),
    ("asc", tandem_fuzz::asc),
    ("blf", tandem_fuzz::blf),
    ("mf4", tandem_fuzz::mf4),
    ("slcan", tandem_fuzz::slcan),
    ("udp", tandem_fuzz::udp),
    ("isotp", tandem_fuzz::isotp),
    ("dcp", tandem_fuzz::dcp),
    ("dcp_slave", tandem_fuzz::dcp_slave),
    ("dcp_master", tandem_fuzz::dcp_master),
    ("serial_line", tandem_fuzz::serial_line),
    ("model_description", tandem_fuzz::model_description),
    ("xcp_slave", tandem_fuzz::xcp_slave),
    ("ssp", tandem_fuzz::ssp),
];

fn inputs(folder: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn every_kept_input_runs_through_its_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (name, check) in TARGETS {
        let files: Vec<PathBuf> = ["corpus", "regressions"]
            .iter()
            .flat_map(|kind| inputs(&root.join(kind).join(name)))
            .collect();
        assert!(!files.is_empty(), "target {name} has no seed in fuzz/corpus/{name}");
        for file in &files {
            let data = std::fs::read(file).expect("the input can be read");
            check(&data);
        }
        println!("{name}: {} inputs", files.len());
    }
}
