//! Every path a run configuration names, listed in one place, so that a
//! caller that must keep runs inside a folder (`tandem serve`) checks them
//! all and misses none.

use std::path::Path;

use tandem_models::ModelRef;

use crate::bus::TransportConfig;
use crate::error::Location;
use crate::run::RunConfig;

/// What a path a run configuration names is used for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathUse {
    /// A file read: the model, a DBC, the ECU's configuration (resolved
    /// against the configuration's folder).
    Read,
    /// A file written: the recording, the bus log (relative to the run's
    /// results folder, unless absolute).
    Write,
    /// A serial device: a serial port or an SLCAN adapter.
    Device,
}

/// A path a run configuration names, with its key and, when kept, its
/// place in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedPath<'a> {
    /// The dotted key, e.g. `bus[0].dbc`.
    pub key: String,
    /// Where in the file, when the configuration keeps it.
    pub location: Option<Location>,
    /// The path as the run will use it.
    pub path: &'a Path,
    /// What it is used for.
    pub usage: PathUse,
}

impl RunConfig {
    /// Every path this configuration names: files read, files written and
    /// devices. A new path in the configuration is added here.
    pub fn paths(&self) -> Vec<NamedPath<'_>> {
        let mut paths = Vec::new();
        if let ModelRef::File(file) = &self.model.value {
            paths.push(NamedPath {
                key: self.model.key.clone(),
                location: Some(self.model.location),
                path: file,
                usage: PathUse::Read,
            });
        }
        for (i, bus) in self.buses.iter().enumerate() {
            paths.push(NamedPath {
                key: bus.dbc.key.clone(),
                location: Some(bus.dbc.location),
                path: &bus.dbc.value,
                usage: PathUse::Read,
            });
            if let TransportConfig::Slcan { device, .. } = &bus.transport {
                paths.push(NamedPath {
                    key: format!("bus[{i}].device"),
                    location: None,
                    path: Path::new(device),
                    usage: PathUse::Device,
                });
            }
        }
        for (i, serial) in self.serial.iter().enumerate() {
            paths.push(NamedPath {
                key: format!("serial[{i}].device"),
                location: None,
                path: Path::new(&serial.device),
                usage: PathUse::Device,
            });
        }
        if let Some(ecu) = &self.ecu {
            paths.push(NamedPath {
                key: ecu.config.key.clone(),
                location: Some(ecu.config.location),
                path: &ecu.config.value,
                usage: PathUse::Read,
            });
        }
        if let Some(record) = &self.record {
            paths.push(NamedPath {
                key: "record.file".into(),
                location: None,
                path: &record.file,
                usage: PathUse::Write,
            });
        }
        if let Some(log) = &self.bus_log {
            paths.push(NamedPath {
                key: "record.bus_log".into(),
                location: None,
                path: log,
                usage: PathUse::Write,
            });
        }
        paths
    }
}
