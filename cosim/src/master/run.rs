//! One run of the master loop: the start at t = 0, then each base macro
//! step (passes of Jacobi or Gauss–Seidel, repeated when iterating), the
//! courses of the inputs and the outputs at the new points, and the rows
//! of the results.

use std::sync::Mutex;

use tandem_runtime::record::Recorder;

use super::plan::Plan;
use super::team::{lock, Seat, Team};
use super::waves::{worse, Waves};
use super::CosimError;
use crate::curve::Curve;
use crate::history::{History, DEPTH};
use crate::submodel::SubModelError;
use crate::system::{Ordering, PointInputs};

/// Counters for the summary.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Counts {
    pub(super) iterations: u64,
    pub(super) unconverged: u64,
    pub(super) largest_change: f64,
}

/// A run in progress: every buffer allocated at its start.
pub(super) struct Run<'a> {
    plan: &'a Plan,
    seats: &'a [Mutex<Seat>],
    team: &'a Team<'a>,
    /// The coupling values: every output of every sub-model at its newest
    /// communication point (pending or accepted).
    y: Vec<f64>,
    /// `y` at the previous iteration.
    previous: Vec<f64>,
    /// The waveforms the repetitions of a macro step exchange, when
    /// iterating.
    waves: Option<Waves>,
    /// The accepted communication points of each sub-model.
    histories: Vec<History>,
    /// The tick of the point each sub-model has reached in the current
    /// macro step, its outputs in `y`, not yet accepted.
    pending: Vec<Option<u64>>,
    /// The recorded row.
    row: Vec<f64>,
    counts: Counts,
}

impl<'a> Run<'a> {
    /// A run of `plan` over `seats` (allocates every buffer it needs).
    pub(super) fn new(plan: &'a Plan, seats: &'a [Mutex<Seat>], team: &'a Team<'a>) -> Run<'a> {
        let width = plan.offsets[plan.offsets.len() - 1];
        Run {
            plan,
            seats,
            team,
            y: vec![0.0; width],
            previous: vec![0.0; width],
            waves: plan.iterates().then(|| Waves::new(plan, seats)),
            histories: plan.offsets.windows(2).map(|w| History::new(w[1] - w[0])).collect(),
            pending: vec![None; seats.len()],
            row: vec![0.0; width],
            counts: Counts::default(),
        }
    }

    /// What the run counted.
    pub(super) fn counts(&self) -> Counts {
        self.counts
    }

    /// The whole run.
    pub(super) fn drive(
        &mut self,
        recorder: &mut dyn Recorder,
        progress: &mut dyn FnMut(f64),
    ) -> Result<(), CosimError> {
        self.start()?;
        self.record(0, recorder)?;
        let total = self.plan.master.steps;
        let every = (total / 100).max(1);
        for n in 0..total {
            if n.is_multiple_of(every) {
                progress(n as f64 / total as f64);
            }
            self.macro_step(n)?;
            self.record(n + 1, recorder)?;
        }
        progress(1.0);
        recorder.finish()?;
        Ok(())
    }

    /// The outputs at t = 0: computed in order until they stop changing
    /// (exactly, or within the tolerance of the iteration around an
    /// algebraic loop), each input driven by an output not yet computed
    /// starting at its default.
    fn start(&mut self) -> Result<(), CosimError> {
        let models = self.seats.len() as u32;
        let (limit, tolerance) = match self.plan.master.iterate {
            Some(it) => (it.max_iterations.max(models) + 1, it.tolerance),
            None => (models + 1, 0.0),
        };
        let plan = self.plan;
        for pass in 0..limit {
            self.previous.copy_from_slice(&self.y);
            for &m in &plan.order {
                self.evaluate(m, 0)?;
            }
            let change = self.change();
            if pass > 0 && change <= tolerance {
                break;
            }
            if pass + 1 == limit {
                self.unconverged(change);
            }
        }
        for m in 0..self.seats.len() {
            self.accept(m);
        }
        Ok(())
    }

    /// Base macro step `n`: from `n` to `n + 1` for the fastest sub-models.
    fn macro_step(&mut self, n: u64) -> Result<(), CosimError> {
        let plan = self.plan;
        let iterate = plan.master.iterate.filter(|_| plan.iterates());
        let start_up = plan.master.extrapolation == 2 && plan.rollback && self.histories.iter().any(|h| h.len() < 2);
        let saved = iterate.is_some() || start_up;
        if saved {
            self.for_due(n, |seat| seat.model.save())?;
        }
        let low = self.pass(n, false)?;
        if let Some(it) = iterate {
            let mut change = f64::INFINITY;
            let mut converged = false;
            for _ in 0..it.max_iterations {
                self.previous.copy_from_slice(&self.y);
                self.repeat(n)?;
                change = self.change();
                converged = change <= it.tolerance;
                if converged {
                    break;
                }
            }
            if !converged {
                self.unconverged(change);
            }
        } else if low && saved {
            // The first step of second-order extrapolation: its inputs
            // were held constant; once more, interpolated through the new
            // points.
            self.repeat(n)?;
        }
        for m in 0..self.seats.len() {
            if plan.due(m, n) {
                self.accept(m);
            }
        }
        Ok(())
    }

    /// Goes back to the start of macro step `n` and takes it again.
    fn repeat(&mut self, n: u64) -> Result<(), CosimError> {
        self.for_due(n, |seat| seat.model.restore())?;
        self.pass(n, true)?;
        self.counts.iterations += 1;
        Ok(())
    }

    /// One pass over macro step `n`, a repetition of it when `repeating`:
    /// the due sub-models step and their outputs are computed at their new
    /// points. Returns whether an input was extrapolated with a lower
    /// order than the run's accuracy needs (too few points yet).
    fn pass(&mut self, n: u64, repeating: bool) -> Result<bool, CosimError> {
        let plan = self.plan;
        let mut low = false;
        if let Some(waves) = &mut self.waves {
            waves.begin();
        }
        match plan.master.ordering {
            Ordering::Jacobi => {
                for m in 0..self.seats.len() {
                    if plan.due(m, n) {
                        low |= self.prepare(m, n, repeating);
                    } else {
                        lock(&self.seats[m]).due = false;
                    }
                }
                self.team.step();
                for m in 0..self.seats.len() {
                    if plan.due(m, n) {
                        self.stepped(m)?;
                    }
                }
                for &m in &plan.order {
                    if plan.due(m, n) {
                        self.evaluate(m, n + plan.every[m])?;
                    }
                }
            }
            Ordering::GaussSeidel => {
                for &m in &plan.order {
                    if plan.due(m, n) {
                        low |= self.prepare(m, n, repeating);
                        lock(&self.seats[m]).take_step();
                        self.stepped(m)?;
                        self.evaluate(m, n + plan.every[m])?;
                    }
                }
            }
        }
        Ok(low)
    }

    /// Sets up the step of sub-model `m` at macro step `n`: each driven
    /// input's curve is the polynomial through the newest points of its
    /// output (one reached in this macro step included), of the run's
    /// order when it extrapolates, of at least order 1 when it
    /// interpolates; in a repetition (`repeating`) it may follow its
    /// output's recorded waveform instead ([`Waves::feed`]). Returns
    /// whether an extrapolation had too few points for the run's accuracy.
    fn prepare(&mut self, m: usize, n: u64, repeating: bool) -> bool {
        let plan = self.plan;
        let end = n + plan.every[m];
        let wanted = plan.master.extrapolation;
        let mut low = false;
        let mut seat = lock(&self.seats[m]);
        seat.t = plan.time(n);
        seat.h = plan.time(end) - seat.t;
        seat.due = true;
        for (i, driver) in plan.drivers[m].iter().enumerate() {
            let Some(l) = driver else { continue };
            let s = l.from.model;
            let value = |y: f64| l.scale * y + l.offset;
            let mut points = [(0.0, 0.0); DEPTH];
            let mut count = 0;
            if let Some(tick) = self.pending[s] {
                points[0] = (plan.time(tick), value(self.y[plan.offsets[s] + l.from.port]));
                count = 1;
            }
            let history = &self.histories[s];
            for k in 0..history.len().min(DEPTH - count) {
                let (tick, y) = history.point(k);
                points[count] = (plan.time(tick), value(y[l.from.port]));
                count += 1;
            }
            let newest = self.pending[s].unwrap_or_else(|| history.point(0).0);
            let interpolates = newest >= end;
            let order = if interpolates { wanted.max(1) } else { wanted }.min(count - 1);
            low |= !interpolates && order + 1 < wanted;
            seat.inputs[i].curve = Curve::through(&points[..=order]);
        }
        if let Some(waves) = &self.waves {
            waves.feed(plan, m, n, repeating, &mut seat);
        }
        low
    }

    /// Computes the outputs of sub-model `m` at its point `tick`: each
    /// driven input takes the value its output has reached at that point
    /// (at t = 0, or always with the newest point inputs), or else its
    /// course's value there.
    fn evaluate(&mut self, m: usize, tick: u64) -> Result<(), CosimError> {
        let plan = self.plan;
        let t = plan.time(tick);
        let newest = tick == 0 || plan.master.point_inputs == PointInputs::Newest;
        let mut guard = lock(&self.seats[m]);
        let seat = &mut *guard;
        for (i, driver) in plan.drivers[m].iter().enumerate() {
            seat.u[i] = match driver {
                Some(l) if newest && self.pending[l.from.model] == Some(tick) => {
                    l.scale * self.y[plan.offsets[l.from.model] + l.from.port] + l.offset
                }
                _ => seat.inputs[i].at(t),
            };
        }
        let y = &mut self.y[plan.offsets[m]..plan.offsets[m + 1]];
        seat.model.evaluate(&seat.u, y).map_err(|e| self.failed(m, t, e))?;
        self.pending[m] = Some(tick);
        Ok(())
    }

    /// After sub-model `m`'s step: its error, if any, else its recording
    /// of the step becomes its newest.
    fn stepped(&mut self, m: usize) -> Result<(), CosimError> {
        let mut seat = lock(&self.seats[m]);
        if let Some(e) = seat.failed.take() {
            return Err(self.failed(m, seat.t, e));
        }
        if let Some(waves) = &mut self.waves {
            waves.collect(m, &mut seat);
        }
        Ok(())
    }

    /// Calls `f` on every sub-model due at macro step `n`.
    fn for_due(&self, n: u64, mut f: impl FnMut(&mut Seat) -> Result<(), SubModelError>) -> Result<(), CosimError> {
        for (m, seat) in self.seats.iter().enumerate() {
            if self.plan.due(m, n) {
                f(&mut lock(seat)).map_err(|e| self.failed(m, self.plan.time(n), e))?;
            }
        }
        Ok(())
    }

    /// Makes sub-model `m`'s pending point its newest accepted one.
    fn accept(&mut self, m: usize) {
        if let Some(tick) = self.pending[m].take() {
            let range = self.plan.offsets[m]..self.plan.offsets[m + 1];
            self.histories[m].push(tick, &self.y[range]);
        }
    }

    /// The largest change of a coupling value since `previous`, or of a
    /// recorded sample since the pass before (NaN when one is not a
    /// number).
    fn change(&self) -> f64 {
        let recorded = self.waves.as_ref().map_or(0.0, Waves::change);
        let values = self.plan.coupled.iter().map(|&k| (self.y[k] - self.previous[k]).abs());
        values.fold(recorded, worse)
    }

    /// Counts a step whose iteration stopped with `change` left.
    fn unconverged(&mut self, change: f64) {
        self.counts.unconverged += 1;
        self.counts.largest_change = worse(self.counts.largest_change, change);
    }

    /// Records every sub-model's outputs at `tick`: those of its newest
    /// point at or before it (held between the points of a sub-model that
    /// communicates less often).
    fn record(&mut self, tick: u64, recorder: &mut dyn Recorder) -> Result<(), CosimError> {
        for (m, history) in self.histories.iter().enumerate() {
            if let Some(y) = history.held(tick) {
                self.row[self.plan.offsets[m]..self.plan.offsets[m + 1]].copy_from_slice(y);
            }
        }
        recorder.record(self.plan.time(tick), &self.row)?;
        Ok(())
    }

    /// The error of sub-model `m` at `t`.
    fn failed(&self, m: usize, t: f64, error: SubModelError) -> CosimError {
        CosimError::SubModel {
            model: self.plan.names[m].clone(),
            time: t,
            error,
        }
    }
}
