//! JSON block diagrams: the file format, the compiler and the compiled
//! program.
//!
//! ```
//! use tandem_models::diagram;
//! let text = r#"{"blocks": [
//!     {"id": "one", "type": "Constant", "params": {"value": 1.0}},
//!     {"id": "x", "type": "Integrator"},
//!     {"id": "out", "type": "Output"}],
//!   "links": [{"from": "one", "to": "x"}, {"from": "x", "to": "out"}]}"#;
//! let compiled = diagram::compile_str(text).unwrap();
//! assert_eq!(compiled.model.program().layout().states, vec!["x"]);
//! ```

mod algebraic;
mod compile;
mod entry;
mod error;
mod flatten;
pub mod format;
mod instance;
mod plan;
mod ports;
mod program;
mod retune;
mod sparsity;
mod tearing;

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

pub use error::{invalid_utf8_at, locate_block, DiagramError, ErrorKind};
pub use format::{Diagram, SimulationDef};
pub use instance::DiagramModel;
pub use plan::{Buffers, Minor, Step};
pub use ports::{ports, Ports};
pub use program::{BlockInfo, Program};

/// A compiled diagram and the simulation settings stored with it.
pub struct Compiled {
    /// The model, ready to simulate.
    pub model: DiagramModel,
    /// The file's `simulation` section.
    pub simulation: SimulationDef,
    /// The file's `name`.
    pub name: Option<String>,
}

/// Parses and compiles a model from JSON text. Errors carry the line and
/// column of the syntax error, or of the block concerned.
pub fn compile_str(text: &str) -> Result<Compiled, DiagramError> {
    // Editors on Windows may begin a UTF-8 file with a byte-order mark.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let syntax = |e: serde_json::Error| DiagramError {
        port: None,
        kind: ErrorKind::Syntax,
        block: None,
        position: Some((e.line(), e.column())),
        message: format!("invalid model JSON: {e}"),
        help: Some("see models/FORMAT.md for the format (models/schema.json validates it in editors)".into()),
    };
    let diagram: Diagram = serde_json::from_str(text).map_err(syntax)?;
    serde_json::from_str::<UniqueKeys>(text).map_err(|e| DiagramError {
        help: Some("remove one of the two: JSON would silently keep the last".into()),
        ..syntax(e)
    })?;
    let program = compile::compile(&diagram).map_err(|mut e| {
        if e.position.is_none() {
            e.position = e.block.as_deref().and_then(|b| locate_block(text, b));
        }
        e
    })?;
    Ok(Compiled {
        model: DiagramModel::new(Arc::new(program)),
        simulation: diagram.simulation.unwrap_or_default(),
        name: diagram.name,
    })
}

/// A failure to load a model file.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file could not be read.
    #[error("{path}: cannot read the model: {cause}; check the path")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        cause: std::io::Error,
    },
    /// The file is not a valid model.
    #[error("{path}{}{error}", if error.position.is_some() { ":" } else { ": " })]
    Diagram {
        /// The file.
        path: String,
        /// The mistake.
        error: Box<DiagramError>,
    },
}

/// The largest model file read (bytes).
pub const MAX_MODEL_FILE: u64 = 64 << 20;

/// Reads and compiles a model file.
pub fn load(path: &Path) -> Result<Compiled, FileError> {
    let shown = path.display().to_string();
    let io = |cause| FileError::Io {
        path: shown.clone(),
        cause,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(MAX_MODEL_FILE + 1).read_to_end(&mut bytes).map_err(io)?;
    let invalid = |message: String, position, help: &str| FileError::Diagram {
        path: shown.clone(),
        error: Box::new(DiagramError {
            port: None,
            kind: ErrorKind::Syntax,
            block: None,
            position,
            message,
            help: Some(help.into()),
        }),
    };
    if bytes.len() as u64 > MAX_MODEL_FILE {
        return Err(invalid(
            format!(
                "the file is larger than {} MiB, the bound of a model file",
                MAX_MODEL_FILE >> 20
            ),
            None,
            "split the model, or check that this is the model file",
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        invalid(
            "the file is not UTF-8 text".into(),
            Some(invalid_utf8_at(e.as_bytes(), e.utf8_error().valid_up_to())),
            "save it as UTF-8",
        )
    })?;
    compile_str(&text).map_err(|error| FileError::Diagram {
        path: shown,
        error: Box::new(error),
    })
}

/// Any JSON value, refused when an object has a key twice.
struct UniqueKeys;

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueKeysVisitor)
    }
}

struct UniqueKeysVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueKeysVisitor {
    type Value = UniqueKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_i64<E>(self, _: i64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_u64<E>(self, _: u64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_f64<E>(self, _: f64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_str<E>(self, _: &str) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_unit<E>(self) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<UniqueKeys, A::Error> {
        while seq.next_element::<UniqueKeys>()?.is_some() {}
        Ok(UniqueKeys)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<UniqueKeys, A::Error> {
        let mut keys = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key.clone()) {
                return Err(serde::de::Error::custom(format_args!(
                    "the key \"{key}\" appears twice in one object"
                )));
            }
            map.next_value::<UniqueKeys>()?;
        }
        Ok(UniqueKeys)
    }
}
