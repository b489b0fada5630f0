//! Building a tandem run's parts from its settings: two instances of the
//! model, the exchanges between the threads, the metrics and the recording.

use std::sync::Arc;

use tandem_models::Model;

use super::exchange::{frame_ring, result_exchange, RecordShape};
use super::fast::{FastParts, FastSide};
use super::implicit_side::ImplicitSide;
use super::inputs::InputSource;
use super::metrics::Metrics;
use super::outputs::OutputSink;
use super::recording::{row_ring, RowReceiver};
use super::settings::{Policy, TandemSettings};

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
}

/// Frame records in flight from the fast to the implicit thread.
const FRAME_RING: usize = 1024;
/// Recorded rows in flight to the draining thread.
const ROW_RING: usize = 1 << 16;

/// Builds a run of `model` fed by `inputs`, recording by `record`, and
/// writing its outputs each frame to `outputs` (the transmitting I/O).
pub fn assemble(
    settings: &TandemSettings,
    model: &dyn Model,
    inputs: Box<dyn InputSource>,
    record: Option<RecordPlan>,
    outputs: Option<Box<dyn OutputSink>>,
) -> Result<Tandem, SetupError> {
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
    let (fast, implicit) = if settings.policy == Policy::Explicit {
        let parts = FastParts {
            model: model.fork(),
            inputs,
            results: None,
            sender: None,
            recorder,
            outputs,
            metrics: Arc::clone(&metrics),
        };
        (FastSide::new(settings, parts)?, None)
    } else {
        let (sender, receiver) = frame_ring(shape, FRAME_RING);
        let (publisher, reader) = result_exchange(shape.states);
        let implicit = ImplicitSide::new(settings, model.fork(), receiver, publisher, Arc::clone(&metrics))?;
        let parts = FastParts {
            model: model.fork(),
            inputs,
            results: Some(reader),
            sender: Some(sender),
            recorder,
            outputs,
            metrics: Arc::clone(&metrics),
        };
        (FastSide::new(settings, parts)?, Some(implicit))
    };
    Ok(Tandem {
        fast,
        implicit,
        metrics,
        recording,
    })
}
