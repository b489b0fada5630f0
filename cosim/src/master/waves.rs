//! What the repetitions of an iterated macro step exchange: each sub-model
//! with a grid of its own records its coupling outputs at its micro steps,
//! and each repetition after the first feeds an input the newest waveform
//! of the output driving it; how far those waveforms moved between two
//! repetitions is how far the iteration is from converged.

use std::sync::Mutex;

use super::plan::Plan;
use super::team::{lock, Seat};
use crate::recording::Recording;
use crate::waveform::Waveform;

/// The newest recordings of a run's sub-models.
pub(super) struct Waves {
    /// Each sub-model's newest recording of its coupling outputs (`None`:
    /// it has no grid of its own, or no coupling output).
    newest: Vec<Option<Recording>>,
    /// The largest change of a recorded sample in the current pass.
    change: f64,
}

impl Waves {
    /// The recordings of a run of `plan`, with room for a communication
    /// step's samples: each seat with a grid and a coupling output gets
    /// one to record into, each seat with a grid room in the waveforms of
    /// the inputs it can follow.
    pub(super) fn new(plan: &Plan, seats: &[Mutex<Seat>]) -> Waves {
        let recording = |m: usize| {
            let samples = plan.samples(m)?;
            let range = plan.offsets[m]..plan.offsets[m + 1];
            let outputs: Vec<usize> = plan
                .coupled
                .iter()
                .filter(|k| range.contains(k))
                .map(|k| k - range.start)
                .collect();
            (!outputs.is_empty()).then(|| Recording::new(outputs, samples))
        };
        for (m, seat) in seats.iter().enumerate() {
            let mut seat = lock(seat);
            seat.record = recording(m);
            if plan.grids[m].is_none() {
                continue;
            }
            for (course, driver) in seat.inputs.iter_mut().zip(&plan.drivers[m]) {
                if let Some(samples) = driver.and_then(|l| plan.samples(l.from.model)) {
                    course.waveform = Waveform::with_capacity(samples);
                }
            }
        }
        Waves {
            newest: (0..seats.len()).map(recording).collect(),
            change: 0.0,
        }
    }

    /// Starts a pass over a macro step: nothing has changed yet.
    pub(super) fn begin(&mut self) {
        self.change = 0.0;
    }

    /// The largest change of a recorded sample in the current pass from
    /// the pass before (NaN when one is not a number).
    pub(super) fn change(&self) -> f64 {
        self.change
    }

    /// Sets the waveforms of the inputs of sub-model `m`, due at macro
    /// step `n`, in `seat`. In a repetition of the macro step
    /// (`repeating`), an input of a sub-model with a grid of its own
    /// follows the newest waveform of the output driving it, scaled, when
    /// that output's sub-model has stepped in this macro step over at
    /// least as long; every other input follows its curve.
    pub(super) fn feed(&self, plan: &Plan, m: usize, n: u64, repeating: bool, seat: &mut Seat) {
        let follows = repeating && plan.grids[m].is_some();
        for (course, driver) in seat.inputs.iter_mut().zip(&plan.drivers[m]) {
            let newest = driver
                .filter(|l| follows && plan.due(l.from.model, n) && plan.every[l.from.model] >= plan.every[m])
                .and_then(|l| Some((l, self.newest[l.from.model].as_ref()?.waveform(l.from.port)?)));
            match newest {
                Some((l, waveform)) => course.waveform.scaled_from(waveform, l.scale, l.offset),
                None => course.waveform.clear(),
            }
        }
    }

    /// Takes the recording of the step sub-model `m` has just taken from
    /// its seat as its newest, counting how far it moved from the one
    /// before (of the previous pass, whose buffer the seat gets back).
    pub(super) fn collect(&mut self, m: usize, seat: &mut Seat) {
        let (Some(newest), Some(record)) = (&mut self.newest[m], &mut seat.record) else {
            return;
        };
        std::mem::swap(newest, record);
        for (now, before) in newest.waveforms().iter().zip(record.waveforms()) {
            let moved = now.samples().iter().zip(before.samples()).map(|(a, b)| (a - b).abs());
            self.change = moved.fold(self.change, worse);
        }
    }
}

/// The larger of two changes, a change that is not a number the largest.
pub(super) fn worse(worst: f64, change: f64) -> f64 {
    if change > worst || change.is_nan() {
        change
    } else {
        worst
    }
}
