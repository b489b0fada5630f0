//! `IsoTp`: an ISO-TP node on a session's bus, sending and receiving whole
//! messages (what `tandem.uds` carries udsoncan's requests on).

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;
use tandem_uds::isotp::Link;

use crate::errors::{chain, raise, Place, TandemIOError};

/// An ISO-TP node.
#[pyclass(name = "IsoTp", module = "tandem._tandem", frozen)]
pub struct PyIsoTp {
    link: Mutex<Link>,
}

impl PyIsoTp {
    /// The node `link`.
    pub fn new(link: Link) -> Self {
        PyIsoTp { link: Mutex::new(link) }
    }
}

fn seconds(timeout: f64) -> Duration {
    Duration::try_from_secs_f64(timeout.max(0.0)).unwrap_or(Duration::ZERO)
}

fn io_error(e: &dyn std::error::Error) -> PyErr {
    raise::<TandemIOError>(chain(e), Place::default())
}

#[pymethods]
impl PyIsoTp {
    /// Sends `data` as one message, returning once its last frame is out
    /// (at most `timeout` seconds of wall time).
    #[pyo3(signature = (data, timeout=5.0))]
    fn send(&self, py: Python<'_>, data: Vec<u8>, timeout: f64) -> PyResult<()> {
        py.detach(|| {
            let mut link = self.link.lock().unwrap_or_else(PoisonError::into_inner);
            link.send(&data, seconds(timeout)).map_err(|e| io_error(&e))
        })
    }

    /// The next message received within `timeout` seconds of wall time, or None.
    #[pyo3(signature = (timeout=1.0))]
    fn recv(&self, py: Python<'_>, timeout: f64) -> PyResult<Option<Vec<u8>>> {
        py.detach(|| {
            let mut link = self.link.lock().unwrap_or_else(PoisonError::into_inner);
            let got = link.recv(seconds(timeout)).map_err(|e| io_error(&e))?;
            Ok(got.map(<[u8]>::to_vec))
        })
    }
}
