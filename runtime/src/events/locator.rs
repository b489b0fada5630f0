//! The one event locator every driver calls: `tandem sim` (on a
//! re-integrated step or the BDF's polynomial), the real-time implicit side
//! (the BDF's polynomial) and the real-time fast side (the step's cubic
//! Hermite extension). It owns the switching distances and what is counted
//! against the limits; the driver owns the step and hands the locator the
//! step's continuous extension.
//!
//! Nothing here allocates after [`EventLocator::new`].

use tandem_models::{Layout, MajorStep, Model, NonFinite, StateRef};

use super::{regula_falsi, ChatterWatch, EventSettings};

/// An event the limits do not let through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// More events than the step allows.
    PerStep {
        /// The most allowed.
        max: u32,
    },
    /// Too many events in a row, each within the event window of the one
    /// before.
    Chattering {
        /// Consecutive events counted.
        count: u32,
    },
}

/// Why the event iteration at an instant stopped.
#[derive(Clone, Debug, PartialEq)]
pub enum SettleError {
    /// A value stopped being finite.
    NonFinite(NonFinite),
    /// The rounds ran out with a state still changing.
    Storm {
        /// Rounds taken.
        rounds: u32,
    },
}

/// A step's continuous extension: writes the state at a time inside the
/// step into its last argument (the model is lent for extensions that
/// integrate again).
pub type Extension<'a> = dyn FnMut(&mut dyn Model, f64, &mut [f64]) + 'a;

/// Locates zero crossings, runs the event iteration, and counts events
/// against the limits of a step (a grid step offline, a frame in real time).
pub struct EventLocator {
    settings: EventSettings,
    /// The most events one step may hold.
    max_per_step: u32,
    /// Switching distances of the zero crossings.
    distance: Vec<f64>,
    /// Zero crossings whose location was turned off (chattering offline).
    disabled: Vec<bool>,
    chatter: ChatterWatch,
    /// No rate hits: an event instant is a major step of no rate.
    no_hits: Vec<bool>,
    x_before: Vec<f64>,
    xd_before: Vec<f64>,
    /// Outputs of the event iteration's evaluations (not sent anywhere).
    y: Vec<f64>,
    /// Events admitted since the step began.
    in_step: u32,
}

impl EventLocator {
    /// A locator for a model of `layout` with `settings`, admitting at most
    /// `max_per_step` events per step.
    pub fn new(layout: &Layout, settings: EventSettings, max_per_step: u32) -> Self {
        let nz = layout.zero_crossings.len();
        EventLocator {
            settings,
            max_per_step,
            distance: vec![f64::INFINITY; nz],
            disabled: vec![false; nz],
            chatter: ChatterWatch::default(),
            no_hits: vec![false; layout.rates.len()],
            x_before: vec![0.0; layout.states.len()],
            xd_before: vec![0.0; layout.discrete],
            y: vec![0.0; layout.outputs.len()],
            in_step: 0,
        }
    }

    /// The settings it locates with.
    pub fn settings(&self) -> &EventSettings {
        &self.settings
    }

    /// Whether crossings are located at all: location is on and the model
    /// has zero crossings.
    pub fn active(&self) -> bool {
        self.settings.locate && !self.distance.is_empty()
    }

    /// Starts counting the events of a new step.
    pub fn begin_step(&mut self) {
        self.in_step = 0;
    }

    /// The smallest switching distance, at `s`, of the functions still
    /// located (infinite when there are none).
    pub fn distance(&mut self, model: &mut dyn Model, s: StateRef<'_>) -> f64 {
        model.zero_crossings(s, &mut self.distance);
        self.distance
            .iter()
            .zip(&self.disabled)
            .filter(|(_, off)| !**off)
            .map(|(d, _)| *d)
            .fold(f64::INFINITY, f64::min)
    }

    /// Locates the first crossing in `[a, b]` on the step's continuous
    /// extension `state_at`, given the distance `at_b < 0` at `b`: returns
    /// the right end of a bracket narrower than the event tolerance, where
    /// the crossing has happened, and leaves `x` at the state there.
    #[expect(
        clippy::too_many_arguments,
        reason = "the bracket (a, b, at_b) and the state it moves are the regula falsi's own; bundling them would hide which end is which"
    )]
    pub fn locate(
        &mut self,
        model: &mut dyn Model,
        state_at: &mut Extension<'_>,
        a: f64,
        b: f64,
        at_b: f64,
        x: &mut [f64],
        xd: &[f64],
        u: &[f64],
    ) -> f64 {
        state_at(model, a, x);
        let at_a = self.distance(model, StateRef { t: a, x, xd, u }).max(0.0);
        let tolerance = self.settings.tolerance_at(b);
        let mut distance_at = |t: f64| {
            state_at(model, t, x);
            if x.iter().any(|v| !v.is_finite()) {
                return f64::NAN;
            }
            self.distance(model, StateRef { t, x, xd, u })
        };
        let t = regula_falsi(&mut distance_at, a, at_a, b, at_b, tolerance);
        distance_at(t);
        t
    }

    /// Counts an event at `t`: `Err` names the limit it passes (too many in
    /// this step, or chattering); what to do then is the driver's policy.
    pub fn admit(&mut self, t: f64) -> Result<(), Limit> {
        self.in_step += 1;
        if self.in_step > self.max_per_step {
            return Err(Limit::PerStep { max: self.max_per_step });
        }
        let count = self.chatter.observe(t, self.settings.window * t.abs().max(1.0));
        if count >= self.settings.max_consecutive {
            return Err(Limit::Chattering { count });
        }
        Ok(())
    }

    /// The event iteration at `t`: major outputs (modes switch) and update
    /// (resets), with no rate hit and outputs written into a scratch of its
    /// own, repeated until neither changes a state,
    /// as Modelica's event iteration repeats until no discrete variable
    /// changes. Returns whether a state changed.
    pub fn settle(
        &mut self,
        model: &mut dyn Model,
        t: f64,
        x: &mut [f64],
        xd: &mut [f64],
        u: &[f64],
    ) -> Result<bool, SettleError> {
        let mut changed = false;
        for _ in 0..self.settings.max_iterations {
            self.x_before.copy_from_slice(x);
            self.xd_before.copy_from_slice(xd);
            let mut round = MajorStep {
                t,
                x: &mut *x,
                xd: &mut *xd,
                u,
                hits: &self.no_hits,
                y: &mut self.y,
            };
            model.major_outputs(&mut round).map_err(SettleError::NonFinite)?;
            if let Some(e) = first_nonfinite(model.layout(), round.t, round.x, round.y) {
                return Err(SettleError::NonFinite(e));
            }
            model.update(&mut round);
            if x == self.x_before.as_slice() && xd == self.xd_before.as_slice() {
                return Ok(changed);
            }
            changed = true;
        }
        Err(SettleError::Storm {
            rounds: self.settings.max_iterations,
        })
    }

    /// The block owning the most negative switching distance (empty when
    /// the model has no zero crossings).
    pub fn crossing_block<'m>(&self, model: &'m dyn Model) -> &'m str {
        let names = &model.layout().zero_crossings;
        let worst = (0..self.distance.len())
            .filter(|&i| !self.disabled[i])
            .min_by(|&i, &j| self.distance[i].total_cmp(&self.distance[j]));
        worst.map_or("", |i| block_of(&names[i]))
    }

    /// Stops locating the zero crossings of `block`.
    pub fn disable(&mut self, model: &dyn Model, block: &str) {
        for (off, name) in self.disabled.iter_mut().zip(&model.layout().zero_crossings) {
            if block_of(name) == block {
                *off = true;
            }
        }
        self.chatter = ChatterWatch::default();
    }

    /// Blocks whose zero crossings are no longer located.
    pub fn disabled_blocks(&self, model: &dyn Model) -> Vec<String> {
        let names = &model.layout().zero_crossings;
        let mut blocks: Vec<String> = names
            .iter()
            .zip(&self.disabled)
            .filter(|(_, off)| **off)
            .map(|(n, _)| block_of(n).to_string())
            .collect();
        blocks.dedup();
        blocks
    }
}

/// The block a zero crossing belongs to (`path` or `path#k`).
fn block_of(zero_crossing: &str) -> &str {
    zero_crossing.split('#').next().unwrap_or(zero_crossing)
}

/// The first state, then the first output, that is not finite, named for a
/// message (for models that do not check their own values: models written
/// in Rust).
pub fn first_nonfinite(layout: &Layout, t: f64, x: &[f64], y: &[f64]) -> Option<NonFinite> {
    let state = x
        .iter()
        .position(|v| !v.is_finite())
        .map(|i| (format!("state \"{}\"", layout.states[i]), x[i]));
    let output = || {
        y.iter()
            .position(|v| !v.is_finite())
            .map(|i| (format!("output \"{}\"", layout.outputs[i].name), y[i]))
    };
    state
        .or_else(output)
        .map(|(place, value)| NonFinite { time: t, place, value })
}
