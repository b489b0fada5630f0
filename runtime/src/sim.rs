//! The offline simulation driver, on a fixed grid of major steps.
//!
//! Time is kept as an integer tick count (`t = n * step`), never
//! accumulated, so sample hits land exactly. Each major step:
//! outputs (discrete blocks that hit recompute), record, update (discrete
//! states, resets), then the continuous states advance to the next grid
//! point: one explicit step, or as many BDF steps as its error control
//! wants (the grid point then read from its interpolating polynomial).

use std::time::{Duration, Instant};

use std::fmt;
use std::str::FromStr;

use tandem_models::{Definition, MajorStep, Model, NonFinite, StateRef};

use crate::bdf::{Bdf, BdfError, BdfOptions, BdfStats, Tolerance};
use crate::events::locator::{first_nonfinite, EventLocator, Limit, SettleError};
use crate::events::{ChatterPolicy, EventSettings};
use crate::explicit::{ExplicitRk, Method};
use crate::named::UnknownName;
use crate::ode::ModelOde;
use crate::rates::{set_hits, tick_rates, RateError, TickRate};
use crate::record::Recorder;
use crate::step::FixedStepper;

/// The integrator of a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Solver {
    /// A fixed-step explicit Runge–Kutta method: one step per grid point.
    Explicit(Method),
    /// The variable-step BDF with these tolerances; grid points come from
    /// its interpolating polynomial.
    Bdf {
        /// Relative tolerance.
        rtol: f64,
        /// Absolute tolerance.
        atol: f64,
    },
}

impl Solver {
    /// The BDF with its default tolerances (rtol 1e-6, atol 1e-8).
    pub const BDF: Solver = Solver::Bdf { rtol: 1e-6, atol: 1e-8 };
}

impl From<Method> for Solver {
    fn from(method: Method) -> Self {
        Solver::Explicit(method)
    }
}

impl fmt::Display for Solver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Solver::Explicit(m) => write!(f, "{m}"),
            Solver::Bdf { rtol, atol } => write!(f, "bdf (rtol {rtol:e}, atol {atol:e})"),
        }
    }
}

impl FromStr for Solver {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        if s == "bdf" {
            return Ok(Solver::BDF);
        }
        s.parse::<Method>().map(Solver::Explicit).map_err(|_| UnknownName {
            what: "solver",
            found: s.to_string(),
            valid: vec!["euler", "heun", "rk4", "bdf"],
        })
    }
}

/// Settings of a run on a fixed grid of output points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FixedStep {
    /// Integrator.
    pub solver: Solver,
    /// Grid step in seconds (> 0): the explicit methods' step, the BDF's
    /// output interval.
    pub step: f64,
    /// Stop time in seconds (> 0).
    pub stop: f64,
}

/// Why a run stopped early.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A discrete rate does not land on the step grid.
    #[error(transparent)]
    SampleTime(#[from] RateError),
    /// A value stopped being finite.
    #[error(transparent)]
    NonFinite(#[from] NonFinite),
    /// More events than [`MAX_EVENTS_PER_STEP`] in one grid step.
    #[error("more than {MAX_EVENTS_PER_STEP} events within one step of {step} s at t = {time} s, the last of block \"{block}\": it switches faster than the step\n  help: give it a period (or a switching time) longer than the step, shorten the step, or run with --events off")]
    EventFlood {
        /// The block of the last event.
        block: String,
        /// When the limit was reached.
        time: f64,
        /// The grid step (s).
        step: f64,
    },
    /// A block switched back and forth without time passing.
    #[error("chattering: {count} consecutive events of block \"{block}\" at t = {time} s, each within the event window of the one before\n  help: give the block \"hysteresis\": <band>, mark it \"no_event\": true if its switching is smooth, or run with --chatter disable to locate its events no more")]
    Chattering {
        /// The block that keeps switching.
        block: String,
        /// When the limit was reached.
        time: f64,
        /// Consecutive events counted.
        count: u32,
    },
    /// The event iteration at one instant did not settle.
    #[error("event storm at t = {time} s: block \"{block}\" still switches after {iterations} rounds of the event iteration at that instant\n  help: check the block's reset logic and the signals that feed it (a reset that re-triggers itself)")]
    EventStorm {
        /// The block still switching.
        block: String,
        /// The instant.
        time: f64,
        /// Rounds taken.
        iterations: u32,
    },
    /// The BDF gave up.
    #[error(transparent)]
    Bdf(#[from] BdfError),
    /// The recorder failed (disk full, closed pipe).
    #[error("cannot write the results: {0}")]
    Record(#[from] std::io::Error),
    /// The Jacobian's helper threads could not start.
    #[error("cannot start the Jacobian's helper threads: {0}\n  help: run with fewer helpers (--helpers)")]
    Helpers(std::io::Error),
}

/// What a finished run reports.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Major steps taken.
    pub steps: u64,
    /// Derivative evaluations.
    pub evaluations: u64,
    /// State events located and handled.
    pub events: u64,
    /// Steps shortened because the full step gave non-finite values.
    pub shortened: u64,
    /// Blocks whose events stopped being located (chattering policy).
    pub disabled: Vec<String>,
    /// The BDF's counters, when it ran.
    pub bdf: Option<BdfStats>,
    /// Restarts of the BDF at events and discontinuities.
    pub restarts: u64,
    /// Wall-clock time of the run.
    pub wall: Duration,
    /// When the model ended the run before its stop time
    /// ([`Model::finished`]).
    pub finished: Option<f64>,
}

/// A stop time this close after a grid point (relative to max(1, stop))
/// ends the run there instead of taking a last step to it.
pub const STOP_TOLERANCE: f64 = 1e-12;

/// The model a simulation drives: borrowed from the caller, or owned when
/// the simulation is kept and stepped by something longer-lived (a
/// co-simulation master, an exported FMU).
enum Held<'m> {
    Borrowed(&'m mut dyn Model),
    Owned(Box<dyn Model>),
}

impl<'m> std::ops::Deref for Held<'m> {
    type Target = dyn Model + 'm;
    fn deref(&self) -> &Self::Target {
        match self {
            Held::Borrowed(m) => &**m,
            Held::Owned(m) => &**m,
        }
    }
}

impl std::ops::DerefMut for Held<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            Held::Borrowed(m) => &mut **m,
            Held::Owned(m) => &mut **m,
        }
    }
}

/// Where a stepped simulation is, to go back to it ([`Simulation::save`],
/// [`Simulation::restore`]): the grid index and the time past it, states
/// and inputs.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    n: u64,
    part: f64,
    x: Vec<f64>,
    xd: Vec<f64>,
    u: Vec<f64>,
}

/// Fills a run's inputs for a time: see [`Simulation::run_driven`].
type InputFn<'a> = dyn FnMut(f64, &mut [f64]) + 'a;

/// A fixed-step simulation of one model.
///
/// [`Simulation::run`] runs it to the stop time; a co-simulation master
/// instead steps it one grid step at a time ([`Simulation::step`]),
/// setting the inputs between steps ([`Simulation::set_inputs`]), and an
/// importer of an exported FMU may also stop between two grid points
/// ([`Simulation::advance_to`]).
pub struct Simulation<'m> {
    model: Held<'m>,
    /// The grid point the simulation is at or last passed: it is at
    /// `n * step + part`.
    n: u64,
    /// How far past grid point `n` partial steps took it (0 on the grid:
    /// always, unless [`Simulation::advance_to`] was called).
    part: f64,
    settings: FixedStep,
    events: EventLocator,
    rates: Vec<TickRate>,
    integrator: ExplicitRk,
    /// The BDF and whether it must restart before its next step, when it
    /// is the solver (explicit methods leave it `None`).
    bdf: Option<Box<Bdf>>,
    restart: bool,
    /// The BDF must land on the next grid point (the last one changed a
    /// discrete state) rather than run ahead of it.
    land: bool,
    /// Zero crossings have been checked up to this time.
    checked: f64,
    x: Vec<f64>,
    xd: Vec<f64>,
    u: Vec<f64>,
    /// The inputs a driven run fills at each grid point.
    u_driven: Vec<f64>,
    y: Vec<f64>,
    hits: Vec<bool>,
    /// The state at the start of the step being tried.
    x_start: Vec<f64>,
    /// Derivatives for the forward-Euler fallback.
    dx: Vec<f64>,
    /// The states before a grid point's major step (a BDF run restarts
    /// where they change).
    x_before: Vec<f64>,
    xd_before: Vec<f64>,
    counts: Counts,
    /// Length of the last step shortened to stay finite (infinite when the
    /// last step was not shortened).
    shortened_to: f64,
}

/// The most events located within one grid step: past it a block switches
/// so much faster than the step that the run would never end.
pub const MAX_EVENTS_PER_STEP: u32 = 1000;

/// A step taken between grid points.
#[derive(Clone, Copy, Debug)]
struct SubStep {
    /// Its length.
    length: f64,
    /// Taken with the run's method, so that events in it can be located by
    /// re-integration (false for the short forward-Euler fallback).
    located: bool,
}

/// Event statistics of a run.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    events: u64,
    /// Steps shortened because a full one gave non-finite values.
    shortened: u64,
    /// BDF restarts.
    restarts: u64,
}

impl<'m> Simulation<'m> {
    /// Prepares a run (allocates every buffer) with the default event
    /// settings. Inputs start at their defaults.
    pub fn new(model: &'m mut dyn Model, settings: FixedStep) -> Result<Self, SimError> {
        Simulation::holding(Held::Borrowed(model), settings)
    }

    /// [`Simulation::new`] for a model the simulation keeps.
    pub fn owning(model: Box<dyn Model>, settings: FixedStep) -> Result<Simulation<'static>, SimError> {
        Simulation::holding(Held::Owned(model), settings)
    }

    fn holding(mut model: Held<'m>, settings: FixedStep) -> Result<Self, SimError> {
        let rates = tick_rates(&*model, settings.step)?;
        let layout = model.layout();
        let (n, nd) = (layout.states.len(), layout.discrete);
        let events = EventLocator::new(layout, EventSettings::default(), MAX_EVENTS_PER_STEP);
        let u: Vec<f64> = layout.inputs.iter().map(|v| v.default).collect();
        let y = vec![0.0; layout.outputs.len()];
        let hits = vec![false; rates.len()];
        let mut x = vec![0.0; n];
        let mut xd = vec![0.0; nd];
        model.initial_state(&mut x, &mut xd);
        let (method, bdf) = match settings.solver {
            Solver::Explicit(method) => (method, None),
            // Without continuous states there is nothing for the BDF to do:
            // the explicit driver handles time events alone.
            Solver::Bdf { .. } if n == 0 => (Method::Euler, None),
            Solver::Bdf { rtol, atol } => {
                let options = BdfOptions {
                    rtol,
                    atol: Tolerance::Scalar(atol),
                    ..BdfOptions::default()
                };
                (Method::Euler, Some(Box::new(Bdf::new(n, options, model.sparsity())?)))
            }
        };
        Ok(Simulation {
            model,
            n: 0,
            part: 0.0,
            settings,
            events,
            rates,
            integrator: ExplicitRk::new(method, n),
            bdf,
            restart: true,
            land: false,
            checked: 0.0,
            x_start: x.clone(),
            dx: vec![0.0; n],
            x_before: x.clone(),
            xd_before: xd.clone(),
            x,
            xd,
            u_driven: u.clone(),
            u,
            y,
            hits,
            counts: Counts::default(),
            shortened_to: f64::INFINITY,
        })
    }

    /// Replaces the event settings.
    pub fn with_events(mut self, events: EventSettings) -> Self {
        self.events = EventLocator::new(self.model.layout(), events, MAX_EVENTS_PER_STEP);
        self
    }

    /// Spreads the BDF's difference Jacobians over `helpers` more threads
    /// (see [`crate::bdf::jacobian::Jacobian::spread`]); returns how many started: none for
    /// an explicit solver or a model whose derivatives depend on its
    /// workspace ([`Model::pure_derivatives`]).
    pub fn spread_jacobian(&mut self, helpers: usize) -> Result<usize, SimError> {
        let Some(bdf) = self.bdf.as_mut() else {
            return Ok(0);
        };
        bdf.jacobian_mut()
            .spread(&*self.model, &vec![None; helpers], &crate::bdf::helpers::pin_to_core())
            .map_err(SimError::Helpers)
    }

    /// Number of whole grid steps the run takes (the last lands on the stop
    /// time, or just before it when the stop time is not on the grid: a
    /// shorter step then ends the run at the stop time).
    pub fn total_steps(&self) -> u64 {
        (self.settings.stop / self.settings.step * (1.0 + 1e-12)).floor() as u64
    }

    /// Runs to the stop time, recording the outputs at every grid step
    /// (including t = 0), and calling `progress` with the fraction done
    /// about a hundred times.
    pub fn run(&mut self, recorder: &mut dyn Recorder, progress: &mut dyn FnMut(f64)) -> Result<Summary, SimError> {
        self.run_inner(recorder, progress, None)
    }

    /// As [`Simulation::run`], with the inputs given by `inputs` at each
    /// grid point (it fills them for time `t`) and held until the next.
    pub fn run_driven(
        &mut self,
        recorder: &mut dyn Recorder,
        progress: &mut dyn FnMut(f64),
        inputs: &mut dyn FnMut(f64, &mut [f64]),
    ) -> Result<Summary, SimError> {
        self.run_inner(recorder, progress, Some(inputs))
    }

    fn run_inner(
        &mut self,
        recorder: &mut dyn Recorder,
        progress: &mut dyn FnMut(f64),
        mut inputs: Option<&mut InputFn<'_>>,
    ) -> Result<Summary, SimError> {
        let start = Instant::now();
        let total = self.total_steps();
        let every = (total / 100).max(1);
        let mut drive = |sim: &mut Self| {
            if let Some(f) = inputs.as_mut() {
                let mut u = std::mem::take(&mut sim.u_driven);
                u.copy_from_slice(&sim.u);
                f(sim.time(), &mut u);
                sim.set_inputs(&u);
                sim.u_driven = u;
            }
        };
        while self.n < total {
            if self.n.is_multiple_of(every) {
                progress(self.n as f64 / total as f64);
            }
            drive(self);
            self.step(recorder)?;
            if let Some(at) = self.model.finished() {
                // The model ended the run (an FMU's terminateSimulation):
                // its row at that time is the last.
                recorder.finish()?;
                let mut summary = self.summary(start.elapsed());
                summary.finished = Some(at);
                return Ok(summary);
            }
        }
        // A stop time between two grid points: a last, shorter step to it.
        let stop = self.settings.stop;
        if stop - self.time() > STOP_TOLERANCE * stop.abs().max(1.0) {
            drive(self);
            self.advance_to(stop, recorder)?;
        }
        drive(self);
        self.major_step()?;
        recorder.record(self.time(), &self.y)?;
        recorder.finish()?;
        let mut summary = self.summary(start.elapsed());
        summary.finished = self.model.finished();
        Ok(summary)
    }

    /// The time the simulation is at: a grid point's, unless
    /// [`Simulation::advance_to`] stopped it between two.
    pub fn time(&self) -> f64 {
        self.n as f64 * self.settings.step + self.part
    }

    /// The index of the grid point the simulation is at, or last passed
    /// when it is between two.
    pub fn grid_point(&self) -> u64 {
        self.n
    }

    /// Replaces the inputs, held until the next call. A change is a
    /// discontinuity the BDF does not straddle.
    pub fn set_inputs(&mut self, u: &[f64]) {
        if self.u != u {
            self.u.copy_from_slice(u);
            self.land = true;
            self.restart = true;
        }
    }

    /// The outputs at the current time with the current inputs (between
    /// grid points, discrete blocks hold their outputs).
    pub fn outputs(&mut self) -> Result<&[f64], SimError> {
        if self.bdf.is_none() {
            self.major_step()?;
            return Ok(&self.y);
        }
        self.x_before.copy_from_slice(&self.x);
        self.xd_before.copy_from_slice(&self.xd);
        self.major_step()?;
        // Discrete outputs latched here are a discontinuity the next step
        // would no longer see.
        if self.x != self.x_before || self.xd != self.xd_before {
            self.land = true;
            self.restart = true;
        }
        Ok(&self.y)
    }

    /// Records the outputs at the current grid point, then advances to the
    /// next one (located events on the way are handled and, when asked,
    /// recorded). Between two grid points (after
    /// [`Simulation::advance_to`]) it only completes the step to the next.
    pub fn step(&mut self, recorder: &mut dyn Recorder) -> Result<(), SimError> {
        let next = (self.n + 1) as f64 * self.settings.step;
        self.advance_within(next, recorder)?;
        self.n += 1;
        self.part = 0.0;
        self.land = false;
        Ok(())
    }

    /// Advances to `to`, after the current time and before the next grid
    /// point, where the next step or call goes on from: what an importer's
    /// communication step that ends between two grid points needs. From a
    /// grid point it first records and updates it as [`Simulation::step`]
    /// does; then the continuous states alone advance, the discrete ones
    /// held, in a step shorter than the grid's. Discrete rates still hit at
    /// grid points only, which stay where they were: a run that never stops
    /// between them is the one [`Simulation::run`] makes.
    ///
    /// # Panics
    /// When `to` is not after the current time and before the next grid
    /// point.
    pub fn advance_to(&mut self, to: f64, recorder: &mut dyn Recorder) -> Result<(), SimError> {
        let base = self.n as f64 * self.settings.step;
        let next = (self.n + 1) as f64 * self.settings.step;
        assert!(
            self.time() < to && to < next,
            "advance_to({to}) from t = {} s: the end must come before the next grid point at {next} s",
            self.time()
        );
        self.advance_within(to, recorder)?;
        self.part = to - base;
        Ok(())
    }

    /// Advances from the current time to `to`, not past the next grid
    /// point: on a grid point its major step, record and update first.
    fn advance_within(&mut self, to: f64, recorder: &mut dyn Recorder) -> Result<(), SimError> {
        let t = self.time();
        if self.part == 0.0 {
            if self.bdf.is_some() {
                self.x_before.copy_from_slice(&self.x);
                self.xd_before.copy_from_slice(&self.xd);
            }
            self.major_step()?;
            recorder.record(t, &self.y)?;
            self.model.update(&mut MajorStep {
                t,
                x: &mut self.x,
                xd: &mut self.xd,
                u: &self.u,
                hits: &self.hits,
                y: &mut self.y,
            });
            if self.events.active() {
                self.settle(t)?;
            }
            if self.bdf.is_some() {
                // A grid point that changed a discrete state or reset a
                // continuous one is a discontinuity the BDF's history must
                // not straddle.
                self.land |= self.x != self.x_before || self.xd != self.xd_before;
                self.restart |= self.land;
            }
        }
        if self.bdf.is_some() {
            self.advance_bdf(t, to, recorder)?;
        } else {
            self.advance(t, to, recorder)?;
        }
        Ok(())
    }

    /// Puts `definition` (from [`Model::retune`]) in place of the model's,
    /// from the current time on (the BDF restarts there); the replaced one
    /// comes back in `definition`. Returns `false` when it is not a
    /// definition of this model.
    pub fn swap_definition(&mut self, definition: &mut Definition) -> bool {
        if let Some(bdf) = self.bdf.as_mut() {
            bdf.jacobian_mut().swap_definition(definition);
        }
        let swapped = self.model.swap_definition(definition);
        if swapped {
            self.land = true;
            self.restart = true;
        }
        swapped
    }

    /// Where the simulation is now, to come back to with
    /// [`Simulation::restore`] (e.g. to repeat a macro step).
    pub fn save(&self, into: &mut Snapshot) {
        into.n = self.n;
        into.part = self.part;
        for (to, from) in [(&mut into.x, &self.x), (&mut into.xd, &self.xd), (&mut into.u, &self.u)] {
            to.clear();
            to.extend_from_slice(from);
        }
    }

    /// Goes back to a saved point of this simulation.
    pub fn restore(&mut self, from: &Snapshot) {
        self.n = from.n;
        self.part = from.part;
        self.x.copy_from_slice(&from.x);
        self.xd.copy_from_slice(&from.xd);
        self.u.copy_from_slice(&from.u);
        self.restart = true;
        self.land = true;
    }

    /// The rate hits and major outputs at the current time (no hits
    /// between grid points).
    fn major_step(&mut self) -> Result<(), SimError> {
        let t = self.time();
        if self.part == 0.0 {
            set_hits(&self.rates, self.n, &mut self.hits);
        } else {
            self.hits.fill(false);
        }
        self.model.major_outputs(&mut MajorStep {
            t,
            x: &mut self.x,
            xd: &mut self.xd,
            u: &self.u,
            hits: &self.hits,
            y: &mut self.y,
        })?;
        if let Some(e) = first_nonfinite(self.model.layout(), t, &self.x, &self.y) {
            return Err(e.into());
        }
        Ok(())
    }

    /// What the run did, for its report.
    fn summary(&self, wall: Duration) -> Summary {
        let bdf = self.bdf.as_ref().map(|b| *b.stats());
        let evaluations = bdf.map_or(self.integrator.evaluations(), |s| s.rhs_evals + s.rhs_evals_jacobian);
        Summary {
            steps: self.n,
            evaluations,
            bdf,
            restarts: self.counts.restarts,
            events: self.counts.events,
            shortened: self.counts.shortened,
            wall,
            disabled: self.events.disabled_blocks(&*self.model),
            finished: None,
        }
    }

    /// Integrates the continuous states from `t0` to the grid time `t1`,
    /// stopping at every located event on the way.
    fn advance(&mut self, t0: f64, t1: f64, recorder: &mut dyn Recorder) -> Result<(), SimError> {
        self.events.begin_step();
        if self.x.is_empty() && !self.events.active() {
            return Ok(());
        }
        let tolerance = self.events.settings().tolerance_at(t1);
        let mut t = t0;
        while t1 - t > tolerance {
            self.x_start.copy_from_slice(&self.x);
            let Some(SubStep { length: h, located }) = self.finite_step(t, t1 - t) else {
                // Non-finite even on tiny steps: take the full step and let
                // the next major step name the block that produced it.
                self.x.copy_from_slice(&self.x_start);
                let mut system = ModelOde {
                    model: &mut *self.model,
                    xd: &self.xd,
                    u: &self.u,
                };
                self.integrator.step(&mut system, t, t1 - t, &mut self.x);
                return Ok(());
            };
            let end = if h == t1 - t { t1 } else { t + h };
            if !self.events.active() {
                t = end;
                continue;
            }
            let at_end = self.distance_at(end);
            if at_end >= 0.0 {
                t = end;
                continue;
            }
            // A forward-Euler sub-step is as short as the event tolerance:
            // the event is at its end.
            t = if located { self.locate(t, end, at_end) } else { end };
            self.on_event(t, recorder)?;
        }
        Ok(())
    }

    /// Integrates from `t0` to the grid time `t1` with the BDF, landing on
    /// `t1`, locating events on its interpolating polynomial and restarting
    /// it after each.
    fn advance_bdf(&mut self, t0: f64, t1: f64, recorder: &mut dyn Recorder) -> Result<(), SimError> {
        // Taken out for the step so that `self` stays usable; put back
        // below whatever happens (a move, not an allocation).
        let mut bdf = self.bdf.take().expect("the BDF is the solver");
        let result = self.advance_with(&mut bdf, t0, t1, recorder);
        self.bdf = Some(bdf);
        result
    }

    /// The body of [`Simulation::advance_bdf`]. The BDF runs ahead of the
    /// grid and `x(t1)` comes from its interpolating polynomial; after a
    /// grid point that changed a discrete state it lands on the next one
    /// instead, as such points tend to recur. Zero crossings are checked
    /// on every step and located on the polynomial.
    fn advance_with(&mut self, bdf: &mut Bdf, t0: f64, t1: f64, recorder: &mut dyn Recorder) -> Result<(), SimError> {
        self.events.begin_step();
        if self.restart {
            self.restart_bdf(bdf, t0, t1);
        }
        let t_stop = if self.land { t1 } else { self.settings.stop };
        let tol = self.events.settings().tolerance_at(t1);
        loop {
            if bdf.t() > self.checked {
                match self.first_crossing(bdf) {
                    Some(te) if te <= t1 => {
                        self.on_event(te, recorder)?;
                        self.restart_bdf(bdf, te, t1);
                        continue;
                    }
                    // A crossing past t1 is handled by the next interval.
                    Some(_) => break,
                    None => self.checked = bdf.t(),
                }
            }
            if bdf.t() >= t1 - tol {
                break;
            }
            bdf.step(&mut self.system(), t_stop)?;
        }
        if bdf.t() <= t1 {
            // Landed on t1, or stopped within the event tolerance of it.
            self.x.copy_from_slice(bdf.y());
        } else {
            bdf.interpolate(t1, &mut self.x);
        }
        Ok(())
    }

    /// The model's continuous part, with its discrete states and inputs
    /// held, as the BDF sees it.
    fn system(&mut self) -> ModelOde<'_> {
        ModelOde {
            model: &mut *self.model,
            xd: &self.xd,
            u: &self.u,
        }
    }

    /// Restarts the BDF from `x` at `t`, aiming at `t_out`.
    fn restart_bdf(&mut self, bdf: &mut Bdf, t: f64, t_out: f64) {
        let x = std::mem::take(&mut self.x);
        bdf.init(&mut self.system(), t, &x, t_out);
        self.x = x;
        self.restart = false;
        self.checked = t;
        self.counts.restarts += 1;
    }

    /// The first zero crossing between the last checked time and the
    /// BDF's time, located on its interpolating polynomial, if any; `x` is
    /// then the state there.
    fn first_crossing(&mut self, bdf: &Bdf) -> Option<f64> {
        if !self.events.active() {
            return None;
        }
        let end = bdf.t();
        self.x.copy_from_slice(bdf.y());
        let at_end = self.distance_at(end);
        if at_end >= 0.0 {
            return None;
        }
        let mut on_polynomial = |_: &mut dyn Model, t: f64, x: &mut [f64]| bdf.interpolate(t, x);
        Some(self.events.locate(
            &mut *self.model,
            &mut on_polynomial,
            self.checked,
            end,
            at_end,
            &mut self.x,
            &self.xd,
            &self.u,
        ))
    }

    /// Steps `x` from `x_start` by `h`, or by the longest of `h / 2^k` that
    /// keeps it finite (a mode's continuous extension can leave its domain,
    /// like sqrt of a slightly negative value, before the event is reached).
    /// Below the event time tolerance it takes one forward-Euler step of
    /// that length instead, which needs only the derivative at the start;
    /// an overshoot past the domain's edge then shows as an event there.
    fn finite_step(&mut self, t: f64, h: f64) -> Option<SubStep> {
        // Start from twice the last shortened length: near a domain
        // boundary the usable length shrinks a little each time.
        let shortest = self.events.settings().tolerance_at(t);
        let mut length = h.min(2.0 * self.shortened_to);
        while length >= shortest {
            self.x.copy_from_slice(&self.x_start);
            let mut system = ModelOde {
                model: &mut *self.model,
                xd: &self.xd,
                u: &self.u,
            };
            self.integrator.step(&mut system, t, length, &mut self.x);
            if self.x.iter().all(|v| v.is_finite()) {
                self.shortened_to = if length < h { length } else { f64::INFINITY };
                return Some(SubStep { length, located: true });
            }
            self.counts.shortened += 1;
            length *= 0.5;
        }
        let length = shortest.min(h);
        self.model.derivatives(
            StateRef {
                t,
                x: &self.x_start,
                xd: &self.xd,
                u: &self.u,
            },
            &mut self.dx,
        );
        for ((x, x0), d) in self.x.iter_mut().zip(&self.x_start).zip(&self.dx) {
            *x = x0 + length * d;
        }
        self.x
            .iter()
            .all(|v| v.is_finite())
            .then_some(SubStep { length, located: false })
    }

    /// The smallest switching distance (of the functions still located) at
    /// time `t` with the current state `x`.
    fn distance_at(&mut self, t: f64) -> f64 {
        let s = StateRef {
            t,
            x: &self.x,
            xd: &self.xd,
            u: &self.u,
        };
        self.events.distance(&mut *self.model, s)
    }

    /// Locates the first crossing in the step from `t` (state `x_start`)
    /// to `end` (whose distance `at_end` is negative) by integrating again
    /// from `t` with shorter lengths, and leaves `x` just past it. Returns
    /// its time.
    fn locate(&mut self, t: f64, end: f64, at_end: f64) -> f64 {
        let Simulation {
            model,
            events,
            integrator,
            x_start,
            x,
            xd,
            u,
            ..
        } = self;
        let mut integrate = |model: &mut dyn Model, tau: f64, x: &mut [f64]| {
            x.copy_from_slice(x_start);
            integrator.step(&mut ModelOde { model, xd, u }, t, tau - t, x);
        };
        events.locate(&mut **model, &mut integrate, t, end, at_end, x, xd, u)
    }

    /// Handles an event at `t`: counts it against the limits, records the
    /// outputs before and after when asked, and runs the event iteration.
    fn on_event(&mut self, t: f64, recorder: &mut dyn Recorder) -> Result<(), SimError> {
        self.counts.events += 1;
        match self.events.admit(t) {
            Ok(()) => {}
            Err(Limit::PerStep { .. }) => {
                return Err(SimError::EventFlood {
                    block: self.events.crossing_block(&*self.model).to_string(),
                    time: t,
                    step: self.settings.step,
                })
            }
            Err(Limit::Chattering { count }) => {
                let block = self.events.crossing_block(&*self.model).to_string();
                match self.events.settings().chatter {
                    ChatterPolicy::Stop => {
                        return Err(SimError::Chattering { block, time: t, count });
                    }
                    ChatterPolicy::Disable => self.events.disable(&*self.model, &block),
                }
            }
        }
        self.record_event_row(t, recorder)?;
        self.settle(t)?;
        self.record_event_row(t, recorder)?;
        Ok(())
    }

    /// With `--record-events`, records the outputs at the event instant
    /// `t` as they are now (called just before and just after the event).
    fn record_event_row(&mut self, t: f64, recorder: &mut dyn Recorder) -> Result<(), SimError> {
        if self.events.settings().record {
            self.model.outputs(
                StateRef {
                    t,
                    x: &self.x,
                    xd: &self.xd,
                    u: &self.u,
                },
                &mut self.y,
            );
            recorder.record(t, &self.y)?;
        }
        Ok(())
    }

    /// The event iteration at `t` (see [`EventLocator::settle`]).
    fn settle(&mut self, t: f64) -> Result<(), SimError> {
        match self
            .events
            .settle(&mut *self.model, t, &mut self.x, &mut self.xd, &self.u)
        {
            Ok(_) => Ok(()),
            Err(SettleError::NonFinite(e)) => Err(e.into()),
            Err(SettleError::Storm { rounds }) => Err(SimError::EventStorm {
                block: self.events.crossing_block(&*self.model).to_string(),
                time: t,
                iterations: rounds,
            }),
        }
    }
}
