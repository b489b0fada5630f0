//! `Bus`: a node of its own on a session's bus, sending and receiving
//! frames and DBC messages.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;
use tandem_can::{CanFrame, CanId};
use tandem_session::peer::Peer;
use tandem_uds::isotp;

use crate::errors::{chain, raise, Place, TandemIOError};
use crate::isotp::PyIsoTp;

/// A received frame: identifier, whether it is extended, payload, and the
/// DBC message it is with its signals, when the DBC knows it.
type Frame = (u32, bool, Vec<u8>, Option<(String, Vec<(String, f64)>)>);

/// A node on a session's bus.
#[pyclass(name = "Bus", module = "tandem._tandem", frozen)]
pub struct PyBus {
    /// The node; none once closed.
    peer: Mutex<Option<Peer>>,
}

impl PyBus {
    /// The node `peer`.
    pub fn new(peer: Peer) -> Self {
        PyBus {
            peer: Mutex::new(Some(peer)),
        }
    }

    /// Runs `f` on the node, or fails once it is closed.
    fn with<T>(&self, f: impl FnOnce(&mut Peer) -> PyResult<T>) -> PyResult<T> {
        let mut peer = self.peer.lock().unwrap_or_else(PoisonError::into_inner);
        match peer.as_mut() {
            Some(p) => f(p),
            None => Err(raise::<TandemIOError>(
                "this bus node is closed; join the bus again with session.bus(name)".into(),
                Place::default(),
            )),
        }
    }
}

fn io_error(e: &dyn std::error::Error) -> PyErr {
    raise::<TandemIOError>(chain(e), Place::default())
}

#[pymethods]
impl PyBus {
    /// The DBC's message names.
    #[getter]
    fn messages(&self) -> PyResult<Vec<String>> {
        self.with(|p| Ok(p.dbc().messages().iter().map(|m| m.name.clone()).collect()))
    }

    /// Leaves the bus (the others no longer keep frames for it).
    fn close(&self) {
        *self.peer.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Sends a frame: identifier `id` (extended when `extended`), payload
    /// `data` (a CAN FD frame when `fd` or longer than 8 bytes).
    #[pyo3(signature = (id, data, extended=false, fd=false))]
    fn send_frame(&self, id: u32, data: Vec<u8>, extended: bool, fd: bool) -> PyResult<()> {
        let id = match (extended, u16::try_from(id)) {
            (true, _) => CanId::extended(id),
            (false, Ok(id)) => CanId::standard(id),
            (false, Err(_)) => Err(tandem_can::FrameError::IdRange(id, 11)),
        }
        .map_err(|e| io_error(&e))?;
        let frame = if fd || data.len() > 8 {
            CanFrame::fd(id, &data, true, false)
        } else {
            CanFrame::data(id, &data)
        }
        .map_err(|e| io_error(&e))?;
        self.with(|p| p.send_frame(&frame).map_err(|e| io_error(&e)))
    }

    /// Sends DBC message `message` with `signals` (name, physical value);
    /// returns its identifier and payload.
    fn send_message(&self, message: &str, signals: Vec<(String, f64)>) -> PyResult<(u32, Vec<u8>)> {
        let frame = self.with(|p| p.send_message(message, &signals).map_err(|e| io_error(&e)))?;
        Ok((frame.id().raw(), frame.payload().to_vec()))
    }

    /// A node of its own on this bus speaking ISO-TP: frames to `tx_id`,
    /// from `rx_id` (29-bit when `extended_id`), CAN FD frames of 64 bytes
    /// when `fd`, extended addressing when `extended_address` is (the byte
    /// sent, the byte received), padding with `padding`, and the block size
    /// and STmin asked of the other side.
    #[pyo3(signature = (tx_id, rx_id, fd=false, extended_address=None, padding=None, block_size=0, stmin=0, extended_id=false))]
    #[expect(clippy::too_many_arguments, reason = "the keyword arguments of Bus.isotp in Python")]
    fn isotp(
        &self,
        tx_id: u32,
        rx_id: u32,
        fd: bool,
        extended_address: Option<(u8, u8)>,
        padding: Option<u8>,
        block_size: u8,
        stmin: u8,
        extended_id: bool,
    ) -> PyResult<PyIsoTp> {
        let id = |id: u32| CanId::new(id, extended_id).map_err(|e| io_error(&e));
        let config = isotp::Config {
            addressing: extended_address.map_or(isotp::Addressing::Normal, |(tx, rx)| isotp::Addressing::Extended {
                tx,
                rx,
            }),
            fd,
            brs: fd,
            tx_dl: if fd { 64 } else { 8 },
            padding,
            block_size,
            st_min: stmin,
            ..isotp::Config::classic(id(tx_id)?, id(rx_id)?)
        };
        self.with(|p| p.isotp(config).map(PyIsoTp::new).map_err(|e| io_error(&e)))
    }

    /// The next frame the other nodes sent, waiting up to `timeout` seconds
    /// of wall time (0: only what has arrived), or None.
    #[pyo3(signature = (timeout=0.0))]
    fn receive(&self, py: Python<'_>, timeout: f64) -> PyResult<Option<Frame>> {
        let wait = Duration::try_from_secs_f64(timeout.max(0.0)).unwrap_or(Duration::ZERO);
        py.detach(|| {
            self.with(|p| {
                let Some(r) = p.receive(wait).map_err(|e| io_error(&e))? else {
                    return Ok(None);
                };
                let decoded = p.decode(&r.frame).map(|(name, signals)| (name.to_string(), signals));
                let f = r.frame;
                Ok(Some((
                    f.id().raw(),
                    f.id().is_extended(),
                    f.payload().to_vec(),
                    decoded,
                )))
            })
        })
    }
}
