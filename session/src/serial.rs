//! A serial device speaking the `name=value` line protocol as a device of
//! a run: each received line's mapped fields become samples of model
//! inputs (stamped on the run's clock, as CAN frames are); every `period`
//! frames a line of mapped outputs is sent, stamped `t=` with the frame's
//! time.

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use tandem_bus::serial_lines::{format_line, open_lines, parse_line, LineReceiver, LineSender};
use tandem_can::BusError;
use tandem_config::Timeout;
use tandem_runtime::tandem::clock::MonotonicClock;
use tandem_runtime::tandem::control::RunControl;

use crate::device::{
    Device, DeviceError, DeviceKind, DeviceWriter, Halves, IoPlacement, IoThread, Schedule, Setup, Traffic,
};
use crate::inputs::{sample_queue, MessageInputs, ReadHalf, SampleSender};
use crate::mapping::{due, Sample};
use crate::metrics::DeviceMetrics;

/// How long the receive thread waits for a line before checking whether
/// the run has stopped.
const RX_POLL: Duration = Duration::from_millis(20);
/// Samples in flight to the fast thread.
const SAMPLE_QUEUE: usize = 1 << 12;

/// A serial device's fields, bound to the model.
#[derive(Clone, Debug, PartialEq)]
pub struct SerialMap {
    /// (line field, model input) of received fields.
    pub receive: Vec<(String, usize)>,
    /// The receive timeout, if any.
    pub timeout: Option<Timeout>,
    /// (line field, model output) of sent fields.
    pub transmit: Vec<(String, usize)>,
    /// A line is sent after every `period`-th frame.
    pub period: u64,
}

/// Writes a line of the mapped outputs every `period` frames.
struct SerialWriter {
    map: Arc<SerialMap>,
    frame: f64,
    sender: Option<LineSender>,
    line: String,
    metrics: Arc<DeviceMetrics>,
    /// The frame written last, if any.
    written: Option<u64>,
}

impl DeviceWriter for SerialWriter {
    fn schedule(&self) -> Schedule {
        Schedule::Every(self.map.period)
    }

    fn write(&mut self, k: u64, y: &[f64]) {
        if !due(self.map.period, self.written.replace(k), k) {
            return;
        }
        self.line.clear();
        let fields = self
            .map
            .transmit
            .iter()
            .map(|(name, output)| (name.as_str(), y[*output]));
        // The names were checked when the device was bound.
        if format_line(&mut self.line, Some(k as f64 * self.frame), fields).is_err() {
            self.metrics.tx_errors.increment();
            return;
        }
        let sent = match &mut self.sender {
            Some(sender) => sender.send_line(&self.line),
            None => Ok(()),
        };
        match sent {
            Ok(()) => self.metrics.tx_frames.increment(),
            Err(BusError::TxQueueFull) => self.metrics.tx_queue_full.increment(),
            Err(_) => self.metrics.tx_errors.increment(),
        }
    }
}

/// A serial device of a run.
pub struct SerialDevice {
    name: String,
    path: String,
    baud: u32,
    map: Arc<SerialMap>,
    metrics: Arc<DeviceMetrics>,
    receiver: Option<LineReceiver>,
    samples: Option<SampleSender>,
    thread: IoThread,
}

impl SerialDevice {
    /// The device `name` on the serial port `path` at `baud`, carrying `map`.
    pub fn new(name: &str, path: &str, baud: u32, map: SerialMap) -> Self {
        SerialDevice {
            name: name.to_string(),
            path: path.to_string(),
            baud,
            map: Arc::new(map),
            metrics: Arc::default(),
            receiver: None,
            samples: None,
            thread: IoThread::default(),
        }
    }
}

/// Queues the mapped fields of one received line as samples at `time`,
/// and counts the line.
fn receive_line(line: &str, time: f64, map: &SerialMap, samples: &mut SampleSender, metrics: &DeviceMetrics) {
    let record = match parse_line(line) {
        Ok(record) => record,
        Err(_) => {
            metrics.rx_malformed.increment();
            return;
        }
    };
    if record.is_empty() {
        return;
    }
    let mut mapped = false;
    for (name, value) in record.fields() {
        if let Some(&(_, input)) = map.receive.iter().find(|(field, _)| field == name) {
            mapped = true;
            let sample = Sample {
                message: 0,
                input: input as u32,
                value,
                time,
                fresh: true,
            };
            if !samples.push(sample) {
                metrics.rx_merged.increment();
            }
        }
    }
    if mapped {
        metrics.rx_frames.increment();
    } else {
        metrics.rx_unmapped.increment();
    }
}

impl Device for SerialDevice {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> DeviceKind {
        DeviceKind::Serial
    }

    fn metrics(&self) -> &Arc<DeviceMetrics> {
        &self.metrics
    }

    fn configure(&mut self, setup: Setup) -> Result<Halves, DeviceError> {
        let sender = if setup.traffic == Traffic::Live {
            let (rx, tx) = open_lines(&self.path, self.baud).map_err(|e| DeviceError {
                device: format!("serial {}", self.name),
                message: e.to_string(),
            })?;
            self.receiver = Some(rx);
            Some(tx)
        } else {
            None
        };
        let (samples, queue) = sample_queue(SAMPLE_QUEUE, self.map.receive.len());
        self.samples = Some(samples);
        let read = (!self.map.receive.is_empty()).then(|| ReadHalf {
            queue,
            messages: vec![MessageInputs {
                timeout: self.map.timeout,
                inputs: self.map.receive.iter().map(|&(_, i)| i).collect(),
                status: None,
                e2e: None,
            }],
            metrics: Arc::clone(&self.metrics),
        });
        let write = (!self.map.transmit.is_empty()).then(|| {
            let capacity = 32 + self.map.transmit.iter().map(|(n, _)| n.len() + 32).sum::<usize>();
            Box::new(SerialWriter {
                map: Arc::clone(&self.map),
                frame: setup.frame,
                sender,
                line: String::with_capacity(capacity),
                metrics: Arc::clone(&self.metrics),
                written: None,
            }) as Box<dyn DeviceWriter>
        });
        Ok(Halves { read, write })
    }

    fn activate(&mut self, control: &Arc<RunControl>, io: IoPlacement) -> Result<(), DeviceError> {
        let (Some(mut rx), Some(mut samples)) = (self.receiver.take(), self.samples.take()) else {
            return Ok(());
        };
        let (map, metrics) = (Arc::clone(&self.map), Arc::clone(&self.metrics));
        let name = format!("tandem-serial-{}", self.name);
        self.thread.start(
            name,
            &format!("serial {}", self.name),
            control,
            io,
            move |origin, run| {
                while !run.stop_requested() {
                    samples.flush();
                    match rx.recv(RX_POLL) {
                        Ok(Some(line)) => {
                            let got = MonotonicClock::raw_now();
                            let time = (got - origin) as f64 * 1e-9;
                            receive_line(line, time, &map, &mut samples, &metrics);
                            metrics.rx_path.record((MonotonicClock::raw_now() - got) as f64);
                        }
                        Ok(None) => {}
                        Err(BusError::Malformed(_)) => metrics.rx_malformed.increment(),
                        Err(BusError::Disconnected(_)) => {
                            metrics.disconnects.increment();
                            // The port reopens itself with back-off; do not spin.
                            thread::sleep(RX_POLL);
                        }
                        Err(_) => metrics.rx_errors.increment(),
                    }
                }
            },
        )
    }

    fn deactivate(&mut self) {
        self.thread.stop();
        self.receiver = None;
    }
}
