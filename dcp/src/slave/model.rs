//! A model as a slave's member (`tandem dcp-slave`): a JSON diagram, a
//! built-in plant or an FMU loaded as a co-simulation participant, stepped
//! by the slave itself, in lock-step or on its clock.

use std::time::Instant;

use tandem_config::ConfigError;
use tandem_cosim::{load_source, Course, SubModel, SystemError};
use tandem_runtime::tandem::placement::{lock_memory, place_current_thread};
use tandem_runtime::tandem::settings::Placement;

use super::config::SlaveConfig;
use super::error::SlaveError;
use super::member::{Member, MemberError};
use super::realtime::Samples;
use super::wiring::Slot;
use crate::ports::Ports;
use crate::types::OpMode;
use crate::values;

/// The SCHED_FIFO priority of a hard real-time slave's thread.
const HARD_PRIORITY: u8 = 80;

/// A model stepped by its slave.
pub struct ModelMember {
    config: SlaveConfig,
    ports: Ports,
    model: Option<Box<dyn SubModel>>,
    /// Input and output elements.
    u: Vec<f64>,
    y: Vec<f64>,
    courses: Vec<Course>,
    samples: Samples,
    /// Room for the widest input variable's values.
    scratch: Vec<f64>,
}

impl ModelMember {
    /// Loads the model of `config` to describe it.
    pub fn load(config: SlaveConfig) -> Result<ModelMember, SlaveError> {
        let model = load(&config)?;
        let feedthrough = model.feedthrough();
        let lists: Vec<Vec<usize>> = (0..feedthrough.output_count())
            .map(|o| feedthrough.inputs_of(o).to_vec())
            .collect();
        let ports =
            Ports::of(model.inputs(), model.outputs(), &config.types, Some(&lists)).map_err(|e| SlaveError::Model {
                file: config.file.display().to_string(),
                message: format!("types: {e}"),
            })?;
        let inputs = model.inputs().len();
        let widest = ports.inputs.iter().map(|v| v.width()).max().unwrap_or(0);
        Ok(ModelMember {
            u: model.inputs().iter().map(|v| v.default).collect(),
            y: vec![0.0; model.outputs().len()],
            courses: vec![Course::default(); inputs],
            samples: Samples::new(inputs),
            scratch: vec![0.0; widest],
            config,
            ports,
            model: None,
        })
    }

    /// Pins the calling (serving) thread and raises it to SCHED_FIFO.
    fn go_hard_real_time(&self) -> Result<(), MemberError> {
        let setup = place_current_thread(Placement {
            core: self.config.core,
            priority: HARD_PRIORITY,
        });
        let mut refusals: Vec<String> = setup.refusals().map(|r| r.to_string()).collect();
        if let Err(r) = lock_memory() {
            refusals.push(r.to_string());
        }
        if refusals.is_empty() {
            return Ok(());
        }
        Err(MemberError::HardRealTimeRefused(refusals.join("; ")))
    }
}

impl Member for ModelMember {
    fn ports(&self) -> &Ports {
        &self.ports
    }

    fn op_modes(&self) -> &[OpMode] {
        &[OpMode::HardRealTime, OpMode::SoftRealTime, OpMode::NonRealTime]
    }

    fn micro_step(&self) -> f64 {
        self.config.model.communication_step
    }

    fn configure(&mut self) -> Result<(), MemberError> {
        let model = load(&self.config)?;
        self.u = model.inputs().iter().map(|v| v.default).collect();
        self.model = Some(model);
        self.evaluate()
    }

    fn evaluate(&mut self) -> Result<(), MemberError> {
        let Some(model) = &mut self.model else {
            return Ok(());
        };
        model.evaluate(&self.u, &mut self.y).map_err(MemberError::Evaluate)
    }

    fn step(&mut self, t: f64, h: f64) -> Result<(), MemberError> {
        for (course, &u) in self.courses.iter_mut().zip(&self.u) {
            *course = Course::constant(u);
        }
        self.step_courses(t, h)
    }

    fn start(&mut self, _origin: Instant, _h: f64, hard: bool) -> Result<(), MemberError> {
        if hard {
            self.go_hard_real_time()?;
        }
        self.samples.clear();
        Ok(())
    }

    fn advance(&mut self, k: i64, h: f64) -> Result<(), MemberError> {
        let extrapolation = self.config.extrapolation;
        for (i, course) in self.courses.iter_mut().enumerate() {
            *course = self.samples.course(i, extrapolation, h, self.u[i]);
        }
        self.step_courses(k as f64 * h, h)
    }

    fn stop(&mut self) {}

    fn take(&mut self, slots: &[Slot], payload: &[u8], point: i64) -> bool {
        // Each value read into the scratch first, all of them before any
        // is taken: the slots are the master's, the scratch the model's.
        let mut at = 0;
        for slot in slots {
            let Some(v) = self.ports.inputs.get(slot.variable) else {
                return false;
            };
            let Some(into) = self.scratch.get_mut(..v.width()) else {
                return false;
            };
            match values::decode(slot.data_type, &payload[at..], into) {
                Ok(n) => at += n,
                Err(_) => return false,
            }
        }
        if at != payload.len() {
            return false;
        }
        let mut at = 0;
        for slot in slots {
            let v = &self.ports.inputs[slot.variable];
            let into = &mut self.scratch[..v.width()];
            at += values::decode(slot.data_type, &payload[at..], into).unwrap_or(0);
            for (element, &value) in v.elements.clone().zip(into.iter()) {
                self.u[element] = value;
                self.samples.push(element, point, value);
            }
        }
        true
    }

    fn give(&mut self, slots: &[Slot], out: &mut Vec<u8>) -> Result<(), MemberError> {
        for slot in slots {
            let v = &self.ports.outputs[slot.variable];
            values::encode(slot.data_type, &self.y[v.elements.clone()], out).map_err(|error| MemberError::Output {
                port: v.name.clone(),
                error,
            })?;
        }
        Ok(())
    }
}

impl ModelMember {
    /// One step from `t` over `h`, inputs following the courses; then the
    /// outputs at the new point.
    fn step_courses(&mut self, t: f64, h: f64) -> Result<(), MemberError> {
        let Some(model) = &mut self.model else {
            return Err(MemberError::NotConfigured);
        };
        model
            .step(t, h, &self.courses, None)
            .map_err(|error| MemberError::Step { t, error })?;
        for (u, c) in self.u.iter_mut().zip(&self.courses) {
            *u = c.at(t + h);
        }
        model
            .evaluate(&self.u, &mut self.y)
            .map_err(|error| MemberError::Model { t: t + h, error })
    }
}

/// The slave's model, loaded as a co-simulation participant.
fn load(config: &SlaveConfig) -> Result<Box<dyn SubModel>, ConfigError> {
    load_source(&config.model, &config.file).map_err(|e| match e {
        SystemError::Invalid(e) => e,
    })
}
