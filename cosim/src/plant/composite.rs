//! Models composed into one: the parts' states, discrete states, rates,
//! zero crossings and outputs side by side, each part's inputs driven by
//! other parts' outputs through the connections (scale and offset) or,
//! where nothing drives them, by the composite's own inputs.
//!
//! An evaluation computes the parts' outputs in an order where a part
//! comes after those driving an input its outputs depend on directly
//! (algebraic loops are refused before), then their derivatives, zero
//! crossings or updates with every input known.

use std::any::Any;
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;

use tandem_models::{Layout, MajorStep, Model, NonFinite, StateRef, Variable};

use crate::graph::Link;
use crate::submodel::Feedthrough;

/// How many snapshots of the parts' inner-event counts are kept (the
/// frames a correction can go back over with events in them).
const SNAPSHOTS: usize = 256;

/// Where a part's values lie in the composite's vectors.
#[derive(Clone, Debug)]
struct Span {
    x: Range<usize>,
    xd: Range<usize>,
    /// Its inputs among every part's inputs.
    u: Range<usize>,
    y: Range<usize>,
    rates: Range<usize>,
    z: Range<usize>,
}

/// What drives one input of a part.
#[derive(Clone, Copy, Debug)]
enum Driver {
    /// The composite's input of this index.
    Plant(usize),
    /// `scale * y[from] + offset`, `y` every part's outputs.
    Output { from: usize, scale: f64, offset: f64 },
}

/// What the instances of a composite share.
struct Wiring {
    layout: Layout,
    names: Vec<String>,
    spans: Vec<Span>,
    /// One per input of every part, in the parts' order.
    drivers: Vec<Driver>,
    /// The order the parts' outputs are computed in.
    order: Vec<usize>,
    /// For each output, the composite's inputs it depends on directly.
    feedthrough: Vec<Vec<usize>>,
    /// Kept alive while any instance runs (an SSP package's files).
    keep: Option<Arc<dyn Any + Send + Sync>>,
}

/// Several models run as one (see the module's documentation).
pub struct Composite {
    parts: Vec<Box<dyn Model>>,
    wiring: Arc<Wiring>,
    /// Every part's inputs.
    u: Vec<f64>,
    /// Every part's outputs, for the evaluations that do not return them.
    y: Vec<f64>,
    counts: InnerCounts,
    /// Each part's inner state while an export gathers them.
    exported: Vec<Vec<u8>>,
}

impl Composite {
    /// The models `parts` (with their names and feedthrough) joined by
    /// `links` (between the parts' ports, by index), their outputs
    /// computed in `order`, which puts a part after those driving an input
    /// its outputs depend on directly.
    pub(crate) fn new(
        parts: Vec<(String, Box<dyn Model>, Feedthrough)>,
        links: &[Link],
        order: Vec<usize>,
    ) -> Composite {
        let mut layout = Layout::default();
        let mut spans = Vec::with_capacity(parts.len());
        let mut starts = (0, 0);
        for (name, model, _) in &parts {
            let own = model.layout();
            let named = |n: &str| format!("{name}.{n}");
            let xd = layout.discrete;
            spans.push(Span {
                x: range(layout.states.len(), own.states.len()),
                xd: range(xd, own.discrete),
                u: range(starts.0, own.inputs.len()),
                y: range(starts.1, own.outputs.len()),
                rates: range(layout.rates.len(), own.rates.len()),
                z: range(layout.zero_crossings.len(), own.zero_crossings.len()),
            });
            starts = (starts.0 + own.inputs.len(), starts.1 + own.outputs.len());
            layout.states.extend(own.states.iter().map(|s| named(s)));
            layout.discrete += own.discrete;
            layout.outputs.extend(own.outputs.iter().map(|v| Variable {
                name: named(&v.name),
                ..v.clone()
            }));
            layout.rates.extend_from_slice(&own.rates);
            layout.rate_users.extend(own.rate_users.iter().map(|r| named(r)));
            layout
                .zero_crossings
                .extend(own.zero_crossings.iter().map(|z| named(z)));
            layout.modes.extend(own.modes.iter().map(|m| m + xd));
        }
        let mut driven: Vec<Option<Driver>> = vec![None; starts.0];
        for link in links {
            driven[spans[link.to.model].u.start + link.to.port] = Some(Driver::Output {
                from: spans[link.from.model].y.start + link.from.port,
                scale: link.scale,
                offset: link.offset,
            });
        }
        let mut drivers = Vec::with_capacity(starts.0);
        for ((name, model, _), span) in parts.iter().zip(&spans) {
            for (k, input) in model.layout().inputs.iter().enumerate() {
                drivers.push(driven[span.u.start + k].unwrap_or_else(|| {
                    layout.inputs.push(Variable {
                        name: format!("{name}.{}", input.name),
                        ..input.clone()
                    });
                    Driver::Plant(layout.inputs.len() - 1)
                }));
            }
        }
        let feedthrough = plant_feedthrough(&parts, &spans, &drivers, &order);
        let (inputs, outputs) = (starts.0, starts.1);
        let (names, parts): (Vec<String>, Vec<Box<dyn Model>>) =
            parts.into_iter().map(|(name, model, _)| (name, model)).unzip();
        let mut counts = InnerCounts::new(parts.len());
        counts.restart(&parts);
        Composite {
            exported: vec![Vec::new(); parts.len()],
            parts,
            wiring: Arc::new(Wiring {
                layout,
                names,
                spans,
                drivers,
                order,
                feedthrough,
                keep: None,
            }),
            u: vec![0.0; inputs],
            y: vec![0.0; outputs],
            counts,
        }
    }

    /// This composite keeping `value` alive while it or a fork of it runs.
    pub(crate) fn keeping(mut self, value: impl Any + Send + Sync) -> Composite {
        if let Some(wiring) = Arc::get_mut(&mut self.wiring) {
            wiring.keep = Some(Arc::new(value));
        }
        self
    }
}

/// `len` indices from `start`.
fn range(start: usize, len: usize) -> Range<usize> {
    start..start + len
}

/// For each output of the composite, its inputs it depends on directly:
/// through the part's own feedthrough, then back along connections to the
/// parts driving it (computed in `order`, so a driver's are known first).
fn plant_feedthrough(
    parts: &[(String, Box<dyn Model>, Feedthrough)],
    spans: &[Span],
    drivers: &[Driver],
    order: &[usize],
) -> Vec<Vec<usize>> {
    let outputs = spans.last().map_or(0, |s| s.y.end);
    let mut depends: Vec<Vec<usize>> = vec![Vec::new(); outputs];
    for &p in order {
        let span = &spans[p];
        for k in 0..span.y.len() {
            let mut list = Vec::new();
            for &i in parts[p].2.inputs_of(k) {
                match drivers[span.u.start + i] {
                    Driver::Plant(input) => list.push(input),
                    Driver::Output { from, .. } => list.extend_from_slice(&depends[from]),
                }
            }
            list.sort_unstable();
            list.dedup();
            depends[span.y.start + k] = list;
        }
    }
    depends
}

/// Writes the inputs of the parts in `range` of `drivers` into `u`, from
/// the composite's inputs `plant` and every part's outputs `y`.
fn drive(drivers: &[Driver], range: Range<usize>, plant: &[f64], y: &[f64], u: &mut [f64]) {
    for (driver, into) in drivers[range.clone()].iter().zip(&mut u[range]) {
        *into = match *driver {
            Driver::Plant(i) => plant[i],
            Driver::Output { from, scale, offset } => scale * y[from] + offset,
        };
    }
}

/// A part's view of the state `s`.
fn part_state<'a>(s: &StateRef<'a>, span: &Span, u: &'a [f64]) -> StateRef<'a> {
    StateRef {
        t: s.t,
        x: &s.x[span.x.clone()],
        xd: &s.xd[span.xd.clone()],
        u: &u[span.u.clone()],
    }
}

/// A part's view of the major step `s`, its inputs taken from every
/// part's inputs `u`.
fn part_step<'a>(s: &'a mut MajorStep<'_>, span: &Span, u: &'a [f64]) -> MajorStep<'a> {
    MajorStep {
        t: s.t,
        x: &mut s.x[span.x.clone()],
        xd: &mut s.xd[span.xd.clone()],
        u: &u[span.u.clone()],
        hits: &s.hits[span.rates.clone()],
        y: &mut s.y[span.y.clone()],
    }
}

/// Every part's outputs at `s` into `y`, in the wiring's order, then
/// every part's inputs into `u`.
fn outputs_pass(parts: &mut [Box<dyn Model>], wiring: &Wiring, s: StateRef<'_>, u: &mut [f64], y: &mut [f64]) {
    for &p in &wiring.order {
        let span = &wiring.spans[p];
        drive(&wiring.drivers, span.u.clone(), s.u, y, u);
        parts[p].outputs(part_state(&s, span, u), &mut y[span.y.clone()]);
    }
    let all = 0..u.len();
    drive(&wiring.drivers, all, s.u, y, u);
}

impl Model for Composite {
    fn layout(&self) -> &Layout {
        &self.wiring.layout
    }

    fn fork(&self) -> Box<dyn Model> {
        let parts: Vec<Box<dyn Model>> = self.parts.iter().map(|p| p.fork()).collect();
        let mut counts = InnerCounts::new(parts.len());
        counts.restart(&parts);
        Box::new(Composite {
            exported: vec![Vec::new(); parts.len()],
            counts,
            parts,
            wiring: Arc::clone(&self.wiring),
            u: vec![0.0; self.u.len()],
            y: vec![0.0; self.y.len()],
        })
    }

    fn initial_state(&mut self, x: &mut [f64], xd: &mut [f64]) {
        for (part, span) in self.parts.iter_mut().zip(&self.wiring.spans) {
            part.initial_state(&mut x[span.x.clone()], &mut xd[span.xd.clone()]);
        }
        self.counts.restart(&self.parts);
    }

    fn derivatives(&mut self, s: StateRef<'_>, dx: &mut [f64]) {
        let mut y = std::mem::take(&mut self.y);
        outputs_pass(&mut self.parts, &self.wiring, s, &mut self.u, &mut y);
        self.y = y;
        for (part, span) in self.parts.iter_mut().zip(&self.wiring.spans) {
            part.derivatives(part_state(&s, span, &self.u), &mut dx[span.x.clone()]);
        }
    }

    fn outputs(&mut self, s: StateRef<'_>, y: &mut [f64]) {
        outputs_pass(&mut self.parts, &self.wiring, s, &mut self.u, y);
    }

    fn major_outputs(&mut self, s: &mut MajorStep<'_>) -> Result<(), NonFinite> {
        let wiring = &*self.wiring;
        for &p in &wiring.order {
            let span = &wiring.spans[p];
            drive(&wiring.drivers, span.u.clone(), s.u, s.y, &mut self.u);
            if let Err(e) = self.parts[p].major_outputs(&mut part_step(s, span, &self.u)) {
                return Err(NonFinite {
                    place: format!("{}: {}", wiring.names[p], e.place),
                    ..e
                });
            }
        }
        self.counts.note(&self.parts);
        Ok(())
    }

    fn update(&mut self, s: &mut MajorStep<'_>) {
        let wiring = &*self.wiring;
        let all = 0..self.u.len();
        drive(&wiring.drivers, all, s.u, s.y, &mut self.u);
        for (part, span) in self.parts.iter_mut().zip(&wiring.spans) {
            part.update(&mut part_step(s, span, &self.u));
        }
        self.counts.note(&self.parts);
    }

    fn zero_crossings(&mut self, s: StateRef<'_>, z: &mut [f64]) {
        if z.is_empty() {
            return;
        }
        let mut y = std::mem::take(&mut self.y);
        outputs_pass(&mut self.parts, &self.wiring, s, &mut self.u, &mut y);
        self.y = y;
        for (part, span) in self.parts.iter_mut().zip(&self.wiring.spans) {
            part.zero_crossings(part_state(&s, span, &self.u), &mut z[span.z.clone()]);
        }
    }

    fn evaluation(&self) -> Option<String> {
        let lines: Vec<String> = (self.wiring.names.iter().zip(&self.parts))
            .filter_map(|(name, part)| Some(format!("{name}: {}", part.evaluation()?)))
            .collect();
        (!lines.is_empty()).then(|| lines.join("; "))
    }

    fn direct_feedthrough(&self) -> Option<Vec<Vec<usize>>> {
        Some(self.wiring.feedthrough.clone())
    }

    fn finished(&self) -> Option<f64> {
        self.parts.iter().filter_map(|p| p.finished()).reduce(f64::min)
    }

    fn pure_derivatives(&self) -> bool {
        self.parts.iter().all(|p| p.pure_derivatives())
    }

    fn inner_events(&self) -> u64 {
        self.parts.iter().map(|p| p.inner_events()).sum()
    }

    fn restore_inner(&mut self, events: u64) -> bool {
        if events == self.inner_events() {
            return true;
        }
        let Some(target) = self.counts.find(events) else {
            return false;
        };
        for p in 0..self.parts.len() {
            if !self.parts[p].restore_inner(self.counts.count(target, p)) {
                for done in &mut self.parts[..p] {
                    done.revert_inner();
                }
                return false;
            }
        }
        self.counts.go_back_to(target);
        true
    }

    fn revert_inner(&mut self) -> bool {
        let mut reverted = true;
        for part in &mut self.parts {
            reverted &= part.revert_inner();
        }
        self.counts.undo_go_back();
        reverted
    }

    fn export_inner(&mut self, out: &mut Vec<u8>) -> bool {
        out.clear();
        for (part, scratch) in self.parts.iter_mut().zip(&mut self.exported) {
            let events = part.inner_events();
            let kept = part.export_inner(scratch);
            if !kept && events > 0 {
                return false;
            }
            let bytes: &[u8] = if kept { scratch } else { &[] };
            out.extend_from_slice(&events.to_le_bytes());
            out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            out.push(u8::from(kept));
            out.extend_from_slice(bytes);
        }
        true
    }

    fn import_inner(&mut self, bytes: &[u8], events: u64) -> bool {
        // The whole export is read before any part takes its state.
        let (mut rest, mut total) = (bytes, 0u64);
        for _ in 0..self.parts.len() {
            let Some(((count, _), after)) = split_state(rest) else {
                return false;
            };
            (rest, total) = (after, total.saturating_add(count));
        }
        if !rest.is_empty() || total != events {
            return false;
        }
        let mut rest = bytes;
        for part in &mut self.parts {
            let Some(((count, state), after)) = split_state(rest) else {
                return false;
            };
            rest = after;
            let taken = match state {
                Some(state) => part.import_inner(state, count),
                None => count == 0 && part.inner_events() == 0,
            };
            if !taken {
                return false;
            }
        }
        self.counts.restart(&self.parts);
        true
    }
}

/// A part's state in an export: its count of handled events and its
/// bytes, `None` for a part that keeps nothing inside.
type PartState<'a> = (u64, Option<&'a [u8]>);

/// The part's state at the head of `bytes` (as [`Composite`]'s
/// `export_inner` writes it), and what follows it.
fn split_state(bytes: &[u8]) -> Option<(PartState<'_>, &[u8])> {
    let (count, rest) = bytes.split_first_chunk::<8>()?;
    let (len, rest) = rest.split_first_chunk::<8>()?;
    let (&kept, rest) = rest.split_first()?;
    let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
    if len > rest.len() {
        return None;
    }
    let (state, rest) = rest.split_at(len);
    Some(((u64::from_le_bytes(*count), (kept == 1).then_some(state)), rest))
}

/// The parts' inner-event counts at each change of their sum, newest
/// last, so that a total the tandem goes back to names each part's count.
struct InnerCounts {
    parts: usize,
    /// Snapshots of `parts` counts each, oldest first.
    rows: VecDeque<u64>,
    /// The snapshots the last go-back dropped, for its undoing.
    dropped: Vec<u64>,
}

impl InnerCounts {
    /// Room for [`SNAPSHOTS`] snapshots of `parts` counts.
    fn new(parts: usize) -> InnerCounts {
        InnerCounts {
            parts,
            rows: VecDeque::with_capacity(SNAPSHOTS * parts.max(1)),
            dropped: Vec::with_capacity(SNAPSHOTS * parts.max(1)),
        }
    }

    /// Starts again from the parts' counts now.
    fn restart(&mut self, parts: &[Box<dyn Model>]) {
        self.rows.clear();
        self.dropped.clear();
        self.rows.extend(parts.iter().map(|p| p.inner_events()));
    }

    /// Takes a snapshot when the parts' total differs from the newest.
    fn note(&mut self, parts: &[Box<dyn Model>]) {
        let total: u64 = parts.iter().map(|p| p.inner_events()).sum();
        let snapshots = self.rows.len() / self.parts.max(1);
        if self.parts == 0 || (snapshots > 0 && self.total(snapshots - 1) == total) {
            return;
        }
        if snapshots == SNAPSHOTS {
            self.rows.drain(..self.parts);
        }
        self.dropped.clear();
        self.rows.extend(parts.iter().map(|p| p.inner_events()));
    }

    /// The sum of snapshot `at`'s counts.
    fn total(&self, at: usize) -> u64 {
        self.rows.range(at * self.parts..(at + 1) * self.parts).sum()
    }

    /// The newest snapshot whose counts sum to `events`.
    fn find(&self, events: u64) -> Option<usize> {
        let snapshots = self.rows.len() / self.parts.max(1);
        (0..snapshots).rev().find(|&at| self.total(at) == events)
    }

    /// Part `part`'s count in snapshot `at`.
    fn count(&self, at: usize, part: usize) -> u64 {
        self.rows[at * self.parts + part]
    }

    /// Drops the snapshots after `at`, keeping them for
    /// [`InnerCounts::undo_go_back`].
    fn go_back_to(&mut self, at: usize) {
        self.dropped.clear();
        self.dropped.extend(self.rows.range((at + 1) * self.parts..));
        self.rows.truncate((at + 1) * self.parts);
    }

    /// Puts back the snapshots the last go-back dropped.
    fn undo_go_back(&mut self) {
        self.rows.extend(self.dropped.drain(..));
    }
}
