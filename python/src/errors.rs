//! The exceptions the package raises, one per kind of Tandem error, each
//! with the command line's message and, where known, the place as
//! attributes (`file`, `line`, `column`, `block`, `port`, `key`).

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    tandem,
    TandemError,
    PyException,
    "Every error Tandem raises; its message is the command line's, with the place."
);
create_exception!(
    tandem,
    ModelError,
    TandemError,
    "A model that cannot be read, compiled, changed or driven: the file, line and column, block, port, parameter \
     or input."
);
create_exception!(
    tandem,
    ConfigError,
    TandemError,
    "A run configuration or an option that is not valid: the file, line and column, or the keyword."
);
create_exception!(
    tandem,
    TandemIOError,
    TandemError,
    "A device, bus or file that cannot be opened, read or written."
);
create_exception!(
    tandem,
    RunFault,
    TandemError,
    "A run that failed while it ran (a non-finite value, an event flood, a receive timeout under the `fault` \
     policy). Offline, `partial` holds the rows computed before it."
);

/// Adds the exceptions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("TandemError", py.get_type::<TandemError>())?;
    m.add("ModelError", py.get_type::<ModelError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("TandemIOError", py.get_type::<TandemIOError>())?;
    m.add("RunFault", py.get_type::<RunFault>())?;
    // Defaults for errors raised without a place (and by the Python half).
    let base = py.get_type::<TandemError>();
    for name in ["file", "line", "column", "block", "port", "key"] {
        base.setattr(name, py.None())?;
    }
    py.get_type::<RunFault>().setattr("partial", py.None())?;
    Ok(())
}

/// `error` and its causes, joined as the command line prints them.
pub fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        text += &format!(": {e}");
        cause = e.source();
    }
    text
}

/// Where an error is, as far as known; every exception gets all six
/// attributes, `None` where unknown.
#[derive(Default)]
pub struct Place {
    /// The file (or `<dict>`, `<text>`).
    pub file: Option<String>,
    /// Line, from 1.
    pub line: Option<usize>,
    /// Column, from 1.
    pub column: Option<usize>,
    /// The block.
    pub block: Option<String>,
    /// The port.
    pub port: Option<String>,
    /// The configuration key or keyword argument.
    pub key: Option<String>,
}

impl Place {
    /// The place of a configuration error.
    pub fn of_config(e: &tandem_config::ConfigError) -> Place {
        Place {
            file: Some(e.file.display().to_string()),
            line: e.location.map(|l| l.line),
            column: e.location.map(|l| l.column),
            key: (!e.key.is_empty()).then(|| e.key.clone()),
            ..Place::default()
        }
    }

    /// The place of a diagram error in `file`.
    pub fn of_diagram(file: &str, e: &tandem_models::diagram::DiagramError) -> Place {
        Place {
            file: Some(file.to_string()),
            line: e.position.map(|p| p.0),
            column: e.position.map(|p| p.1),
            block: e.block.clone(),
            port: e.port.as_deref().map(str::to_string),
            ..Place::default()
        }
    }

    /// A keyword argument.
    pub fn key(key: &str) -> Place {
        Place {
            key: Some(key.to_string()),
            ..Place::default()
        }
    }
}

/// An exception of type `E` with `message`, its place as attributes.
pub fn raise<E: pyo3::PyTypeInfo>(message: String, place: Place) -> PyErr {
    Python::attach(|py| {
        let error = PyErr::new::<E, _>(message);
        let value = error.value(py);
        // Attributes of a fresh exception object can always be set.
        let _ = value.setattr("file", place.file);
        let _ = value.setattr("line", place.line);
        let _ = value.setattr("column", place.column);
        let _ = value.setattr("block", place.block);
        let _ = value.setattr("port", place.port);
        let _ = value.setattr("key", place.key);
        error
    })
}

/// The block a message names (its first `block "NAME"`), if any.
fn block_named(message: &str) -> Option<String> {
    let (_, rest) = message.split_once("block \"")?;
    let (name, _) = rest.split_once('"')?;
    Some(name.to_string())
}

/// A [`RunFault`] with `message`, its `block` the one the message names.
pub fn fault(message: String) -> PyErr {
    let place = Place {
        block: block_named(&message),
        ..Place::default()
    };
    raise::<RunFault>(message, place)
}

/// A `RunFault` with `message` (its `block` the one the message names),
/// for the Python half to raise.
#[pyfunction]
pub fn run_fault(py: Python<'_>, message: &str) -> Py<pyo3::exceptions::PyBaseException> {
    fault(message.to_string()).into_value(py)
}
