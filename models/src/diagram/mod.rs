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
mod program;
mod sparsity;
mod tearing;

use std::path::Path;
use std::sync::Arc;

pub use error::{locate_block, DiagramError, ErrorKind};
pub use format::{Diagram, SimulationDef};
pub use program::{BlockInfo, DiagramModel, Program};

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
    let diagram: Diagram = serde_json::from_str(text).map_err(|e| DiagramError {
        kind: ErrorKind::Syntax,
        block: None,
        position: Some((e.line(), e.column())),
        message: format!("invalid model JSON: {e}"),
        help: Some("see models/FORMAT.md for the format (models/schema.json validates it in editors)".into()),
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

/// Reads and compiles a model file.
pub fn load(path: &Path) -> Result<Compiled, FileError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|cause| FileError::Io {
        path: shown.clone(),
        cause,
    })?;
    compile_str(&text).map_err(|error| FileError::Diagram {
        path: shown,
        error: Box::new(error),
    })
}
