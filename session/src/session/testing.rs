//! What the unit tests of the session's stages share: plans bound from a
//! configuration's text, scratch folders, and a bus on a virtual channel.

use std::path::{Path, PathBuf};

use tandem_config::parse_run_config;
use tandem_models::plants::PROFILES;

use crate::bind::{bind, Plan};

/// An empty folder of its own for the test `name`.
pub(super) fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tandem-session-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The run configuration `text`, as if read from `dir/run.toml`, bound.
pub(super) fn plan(text: &str, dir: &Path) -> Plan {
    let config = parse_run_config(text, &dir.join("run.toml"), PROFILES).unwrap();
    bind(config).unwrap()
}

/// A scratch folder for the test `name`, and the plan of a run of the EV
/// plant there, `extra` appended to its configuration.
pub(super) fn ev(name: &str, extra: &str) -> (PathBuf, Plan) {
    let dir = scratch(name);
    let plan = plan(&format!("model = \"ev\"\n{extra}"), &dir);
    (dir, plan)
}

/// A run of the EV plant with a bus `can0` on the in-process channel
/// `channel`: it receives the ECU's torque request and sends the speeds.
pub(super) fn ev_on_virtual_bus(channel: &str) -> String {
    let dbc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/examples/ev.dbc");
    format!(
        "model = \"ev\"\nduration = \"10ms\"\n\
         [[bus]]\nname = \"can0\"\ntransport = \"virtual\"\nchannel = \"{channel}\"\ndbc = \"{}\"\n\
         [[bus.receive]]\nmessage = \"ECU_Command\"\ntimeout = \"100ms\"\nsignals = {{ TorqueRequest = \"torque_request\" }}\n\
         [[bus.transmit]]\nmessage = \"VCU_Speeds\"\nsignals = {{ VehicleSpeed = \"vehicle_speed\" }}\n",
        dbc.display()
    )
}
