//! The native module of the `tandem` Python package (`tandem._tandem`):
//! models loaded, inspected and simulated offline ([`model`]), real-time
//! sessions started and watched ([`session`]), their buses joined
//! ([`bus`]) and spoken to in ISO-TP messages ([`isotp`]), every error a typed exception ([`errors`]), results handed
//! to numpy without a copy ([`doubles`]). The package's
//! Python half (`python/tandem/`) wraps it in the documented API.
//!
//! It depends on the session, the FMU importer, the configuration, the
//! I/O, the runtime and the models; no Tandem crate depends on it.

use pyo3::prelude::*;

mod bus;
mod doubles;
mod errors;
mod isotp;
mod model;
mod session;

/// The module.
#[pymodule]
fn _tandem(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<model::PyModel>()?;
    m.add_class::<session::PySession>()?;
    m.add_class::<bus::PyBus>()?;
    m.add_class::<isotp::PyIsoTp>()?;
    m.add_class::<doubles::Doubles>()?;
    m.add_function(wrap_pyfunction!(session::toml_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(errors::run_fault, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
