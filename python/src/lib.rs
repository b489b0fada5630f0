//! The native module of the `tandem` Python package (`tandem._tandem`):
//! models loaded, inspected and simulated offline ([`model`]), real-time
//! sessions started and watched ([`session`]), their buses joined
//! ([`bus`]), every error a typed exception ([`errors`]). The package's
//! Python half (`python/tandem/`) wraps it in the documented API.

use pyo3::prelude::*;
use pyo3::types::PyByteArray;

mod bus;
mod errors;
mod model;
mod session;

/// `values` as a bytearray of little-endian doubles (numpy reads it
/// without a copy).
fn doubles(py: Python<'_>, values: &[f64]) -> Py<PyByteArray> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    PyByteArray::new(py, &bytes).unbind()
}

/// The module.
#[pymodule]
fn _tandem(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<model::PyModel>()?;
    m.add_class::<session::PySession>()?;
    m.add_class::<bus::PyBus>()?;
    m.add_function(wrap_pyfunction!(session::toml_from_json, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
