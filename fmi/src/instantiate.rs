//! New instances of a loaded FMU, of the FMI version it implements, in
//! this process or, for an FMU opened for out-of-process loading, in a
//! process of their own.

use std::sync::Arc;

use crate::description::InterfaceKind;
use crate::error::FmuError;
use crate::fmu::{Api, Loaded};
use crate::instance::{CoSimulation, ModelExchange};
use crate::instance2::Instance2;
use crate::instance3::Instance3;
use crate::isolate::Remote;

/// A new Model Exchange instance of the loaded FMU.
pub(crate) fn model_exchange(loaded: &Arc<Loaded>) -> Result<Box<dyn ModelExchange>, FmuError> {
    if let Some(host) = &loaded.isolation {
        loaded.interface(InterfaceKind::ModelExchange)?;
        return Ok(Box::new(Remote::start(loaded, host, InterfaceKind::ModelExchange)?));
    }
    match loaded.model_exchange()? {
        Api::V2(api) => Ok(Box::new(Instance2::model_exchange(loaded, api)?)),
        Api::V3(api) => Ok(Box::new(Instance3::model_exchange(loaded, api)?)),
    }
}

/// A new Co-Simulation instance of the loaded FMU.
pub(crate) fn co_simulation(loaded: &Arc<Loaded>) -> Result<Box<dyn CoSimulation>, FmuError> {
    if let Some(host) = &loaded.isolation {
        loaded.interface(InterfaceKind::CoSimulation)?;
        return Ok(Box::new(Remote::start(loaded, host, InterfaceKind::CoSimulation)?));
    }
    match loaded.co_simulation()? {
        Api::V2(api) => Ok(Box::new(Instance2::co_simulation(loaded, api)?)),
        Api::V3(api) => Ok(Box::new(Instance3::co_simulation(loaded, api)?)),
    }
}
