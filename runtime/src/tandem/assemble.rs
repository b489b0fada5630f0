//! Building a tandem run's parts from its settings: two instances of the
//! model, the exchanges between the threads, the metrics and the recording.

use std::sync::Arc;

use tandem_models::{Model, StateRef};

use super::exchange::{
    frame_ring, inner_exchange, result_exchange, InnerExport, InnerPublisher, InnerReader, RecordShape,
};
use super::fast::{FastParts, FastSide};
use super::implicit_side::{ImplicitParts, ImplicitSide};
use super::inputs::InputSource;
use super::matrix::{matrix_exchange, MatrixError, MatrixPublisher};
use super::metrics::Metrics;
use super::outputs::{FrameTap, OutputSink};
use super::recording::{row_ring, RowReceiver};
use super::retune::{retune_queues, Retuner};
use super::settings::{Extrapolation, FastMethod, ImplicitWork, TandemSettings};
use super::stepper::FastStepper;
use crate::rates::FrameRates;

/// Which outputs to record, and how often.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordPlan {
    /// Output indices.
    pub signals: Vec<usize>,
    /// Every how many frames.
    pub decimation: u64,
}

/// Everything a run needs, built before the first frame.
pub struct Tandem {
    /// The fast side.
    pub fast: FastSide,
    /// The implicit side (none under `explicit`).
    pub implicit: Option<ImplicitSide>,
    /// The metrics both sides write.
    pub metrics: Arc<Metrics>,
    /// The recording's draining end.
    pub recording: Option<RowReceiver>,
    /// Where block parameter changes are submitted.
    pub retuner: Retuner,
    /// Helper threads differencing the implicit side's Jacobians (0: it
    /// differences them alone).
    pub jacobian_helpers: usize,
}

/// A setting or model the tandem cannot run with.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The model's rates are not on the frame grid.
    #[error(transparent)]
    Rates(#[from] crate::rates::RateError),
    /// The BDF refused its options.
    #[error(transparent)]
    Bdf(#[from] crate::BdfError),
    /// The fast side's iteration matrix cannot be made at the initial state.
    #[error(transparent)]
    Matrix(#[from] MatrixError),
    /// The Jacobian's helper threads could not start.
    #[error("cannot start the Jacobian's helper threads on cores {cores:?}: {source}\n  help: list fewer implicit.helper_cores")]
    Helpers {
        /// The cores asked for.
        cores: Vec<usize>,
        /// Why.
        source: std::io::Error,
    },
}

/// Frame records in flight from the fast to the implicit thread.
const FRAME_RING: usize = 1024;
/// The least room of each buffer of the inner-state exchange (bytes); it
/// is twice the model's first export when that is larger.
const INNER_ROOM: usize = 4096;
/// Recorded rows in flight to the draining thread.
const ROW_RING: usize = 1 << 16;

/// Where a run's frames meet the rest of the world.
pub struct Wiring {
    /// Where the fast thread reads its inputs.
    pub inputs: Box<dyn InputSource>,
    /// How the implicit thread predicts each input beyond its newest
    /// sample, one per model input.
    pub extrapolation: Vec<Extrapolation>,
    /// What to record, if anything.
    pub record: Option<RecordPlan>,
    /// Where each frame's outputs go (the transmitting I/O), if anywhere.
    pub outputs: Option<Box<dyn OutputSink>>,
    /// What watches each frame's end on the fast thread, if anything.
    pub tap: Option<Box<dyn FrameTap>>,
}

impl Wiring {
    /// Inputs from `inputs`, each extrapolated linearly; nothing recorded,
    /// sent or tapped.
    pub fn inputs(model: &dyn Model, inputs: Box<dyn InputSource>) -> Self {
        Wiring {
            inputs,
            extrapolation: vec![Extrapolation::Linear; model.layout().inputs.len()],
            record: None,
            outputs: None,
            tap: None,
        }
    }
}

/// The fast side's integrator and, for a linearly implicit method, the
/// publisher of its iteration matrices with a first matrix (at the
/// initial state) already published.
fn stepper(settings: &TandemSettings, model: &dyn Model) -> Result<(FastStepper, Option<MatrixPublisher>), SetupError> {
    let n = model.layout().states.len();
    match settings.fast.method {
        FastMethod::Explicit(m) => Ok((FastStepper::explicit(m, n), None)),
        FastMethod::LinearlyImplicit(m) => {
            let (mut publisher, reader) = matrix_exchange(model, m, settings.frame, settings.implicit.linear_solver);
            let mut first = model.fork();
            let layout = first.layout().clone();
            let (mut x, mut xd) = (vec![0.0; n], vec![0.0; layout.discrete]);
            first.initial_state(&mut x, &mut xd);
            let u: Vec<f64> = layout.inputs.iter().map(|v| v.default).collect();
            publisher.prepare(
                first.as_mut(),
                0,
                StateRef {
                    t: 0.0,
                    x: &x,
                    xd: &xd,
                    u: &u,
                },
            )?;
            publisher.publish();
            Ok((FastStepper::linearly_implicit(m, n, reader), Some(publisher)))
        }
    }
}

/// The exchange of the inner state of the fast side's instance `model`
/// (an FMU's internal discrete variables), when it exports one: it starts
/// with its export now, in buffers of twice that room (at least
/// [`INNER_ROOM`]), so that the fast thread's exports of a state that
/// does not grow beyond it allocate nothing.
fn inner_states(model: &mut dyn Model) -> Option<(InnerPublisher, InnerReader)> {
    let mut bytes = Vec::new();
    if !model.export_inner(&mut bytes) {
        return None;
    }
    let room = (2 * bytes.len()).max(INNER_ROOM);
    bytes.reserve_exact(room - bytes.len());
    let first = InnerExport {
        events: model.inner_events(),
        bytes,
    };
    Some(inner_exchange(&first))
}

/// Builds a run of `model` with `settings`, its frames wired by `wiring`.
pub fn assemble(settings: &TandemSettings, model: &dyn Model, wiring: Wiring) -> Result<Tandem, SetupError> {
    let Wiring {
        inputs,
        extrapolation,
        record,
        outputs,
        tap,
    } = wiring;
    let metrics = Arc::new(Metrics::default());
    let layout = model.layout();
    let shape = RecordShape {
        inputs: layout.inputs.len(),
        states: layout.states.len(),
        discrete: layout.discrete,
    };
    let (recorder, recording) = match record {
        Some(plan) => {
            let (tx, rx) = row_ring(plan.signals, plan.decimation, ROW_RING);
            (Some(tx), Some(rx))
        }
        None => (None, None),
    };
    let (stepper, matrices) = stepper(settings, model)?;
    let work = settings.implicit_work(shape.states);
    let integrates = matches!(work, ImplicitWork::Integrates(_));
    let matrices = matrices.filter(|_| settings.fast.refreshes_matrices(shape.states));
    let (retuner, fast_retunes, implicit_retunes) = retune_queues(work != ImplicitWork::Nothing);
    let mut fast_model = model.fork();
    let (inner_out, inner_in) = match integrates {
        true => inner_states(fast_model.as_mut()).unzip(),
        false => (None, None),
    };
    let mut jacobian_helpers = 0;
    let (implicit, sender, results) = if work != ImplicitWork::Nothing {
        let (sender, receiver) = frame_ring(shape, FRAME_RING);
        let (publisher, reader) = match integrates {
            true => {
                let (p, r) = result_exchange(shape.states, shape.discrete);
                (Some(p), Some(r))
            }
            false => (None, None),
        };
        let parts = ImplicitParts {
            model: model.fork(),
            rates: FrameRates::new(model, settings.frame)?,
            receiver,
            publisher,
            inner: inner_in,
            matrices,
            extrapolation,
            metrics: Arc::clone(&metrics),
            retunes: implicit_retunes,
        };
        let mut side = ImplicitSide::new(settings, parts)?;
        let cores = settings.implicit.helper_cores;
        jacobian_helpers = side
            .spread_jacobians(cores.as_slice(), settings.implicit.placement.priority)
            .map_err(|source| SetupError::Helpers {
                cores: cores.as_slice().to_vec(),
                source,
            })?;
        (Some(side), Some(sender), reader)
    } else {
        (None, None, None)
    };
    let parts = FastParts {
        model: fast_model,
        stepper,
        inputs,
        results,
        sender,
        inner: inner_out,
        recorder,
        outputs,
        tap,
        metrics: Arc::clone(&metrics),
        retunes: Some(fast_retunes),
    };
    Ok(Tandem {
        fast: FastSide::new(settings, parts)?,
        implicit,
        metrics,
        recording,
        retuner,
        jacobian_helpers,
    })
}
