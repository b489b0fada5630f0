//! The ports a single block has with given parameters, for editors that
//! draw a block before it is linked into a model.

use super::error::{DiagramError, ErrorKind};
use super::flatten::subsystem_ports;
use super::format::BlockDef;
use crate::blocks::{self, BlockError, Build, Params, WidthMode};

/// A block's port names, in port order (links may also use the 1-based
/// numbers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ports {
    /// Input ports.
    pub inputs: Vec<String>,
    /// Output ports.
    pub outputs: Vec<String>,
}

/// The ports of `def` alone: its inputs of unknown width taken as scalars.
/// A subsystem's ports are its inner `Inport` and `Outport` blocks and its
/// control port (`action`, `enable`, `trigger`).
pub fn ports(def: &BlockDef) -> Result<Ports, DiagramError> {
    match def.kind.as_str() {
        "Subsystem" => {
            let (inputs, outputs) = subsystem_ports(def)?;
            Ok(Ports { inputs, outputs })
        }
        "Outport" => Ok(Ports {
            inputs: vec!["1".into()],
            outputs: Vec::new(),
        }),
        name => {
            let kind = blocks::find(name).ok_or_else(|| {
                DiagramError::at_block(
                    ErrorKind::UnknownBlockType,
                    &def.id,
                    format!("unknown block type \"{name}\""),
                )
                .help("`tandem blocks` lists the library")
            })?;
            let mut b = Build::new(&def.id, Params::new(&def.params), None, WidthMode::Fallback);
            if let Err(e) = (kind.build)(&mut b) {
                let (kind, message, help) = match e {
                    BlockError::Invalid { kind, ref help, .. } => (kind, e.located(name), help.clone()),
                    BlockError::Pending => (ErrorKind::Dimension, format!("({name}) input widths unknown"), None),
                };
                return Err(DiagramError {
                    help,
                    ..DiagramError::at_block(kind, &def.id, message)
                });
            }
            Ok(Ports {
                inputs: b.inputs.into_iter().map(|p| p.name).collect(),
                outputs: b.outputs.into_iter().map(|p| p.name).collect(),
            })
        }
    }
}
