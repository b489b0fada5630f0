//! `Doubles`: values computed in Rust (a run's rows), handed to numpy
//! without a copy. numpy reads them through the array interface protocol
//! (`__array_interface__`, which the stable ABI allows where the buffer
//! protocol needs Python 3.11) and keeps the object as the array's base:
//! the memory is freed when the last array viewing it is.

use std::mem::ManuallyDrop;

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Doubles owned here and lent to numpy.
#[pyclass(name = "Doubles", module = "tandem._tandem", frozen)]
pub struct Doubles {
    /// The values' memory, taken from a `Vec<f64>` and given back to one
    /// when dropped; numpy reads and writes it through the pointer the
    /// array interface gives, Rust never again.
    ptr: *mut f64,
    len: usize,
    capacity: usize,
}

// SAFETY: the memory is owned by the object alone; it is touched only by
// numpy, under the interpreter's lock, and freed once, on drop.
unsafe impl Send for Doubles {}
// SAFETY: as above; Rust reads only the pointer and the lengths.
unsafe impl Sync for Doubles {}

impl Doubles {
    /// The doubles `values`, moved (not copied).
    pub fn new(values: Vec<f64>) -> Doubles {
        let mut values = ManuallyDrop::new(values);
        Doubles {
            ptr: values.as_mut_ptr(),
            len: values.len(),
            capacity: values.capacity(),
        }
    }
}

impl Drop for Doubles {
    fn drop(&mut self) {
        // SAFETY: the parts of a Vec<f64> taken apart in `new`, put back
        // together once.
        drop(unsafe { Vec::from_raw_parts(self.ptr, self.len, self.capacity) });
    }
}

#[pymethods]
impl Doubles {
    /// numpy's array interface (version 3): one dimension of native-endian
    /// doubles, writable.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let interface = PyDict::new(py);
        interface.set_item("version", 3)?;
        interface.set_item("shape", (self.len,))?;
        interface.set_item("typestr", if cfg!(target_endian = "little") { "<f8" } else { ">f8" })?;
        interface.set_item("data", (self.ptr as usize, false))?;
        Ok(interface)
    }

    /// How many values.
    fn __len__(&self) -> usize {
        self.len
    }
}
