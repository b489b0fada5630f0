//! The end of a run: the devices stopped, the recording and the bus log
//! closed (a file that could not be written cut back to its whole lines
//! and named in the failure), and everything put in the [`Report`].

use std::sync::Arc;
use std::time::Duration;

use tandem_runtime::record::Recorder;
use tandem_runtime::tandem::fast::FastSide;

use super::error::SessionError;
use super::files::kept_whole;
use super::options::{ClockMode, Observer};
use super::run::Ended;
use super::Parts;
use crate::report::devices::DeviceView;
use crate::report::{RecordingReport, ReplayReport, Report};
use crate::xcp::XcpRun;

impl Parts {
    /// The devices as the reports see them.
    pub(super) fn device_views(&self) -> Vec<DeviceView> {
        self.devices
            .iter()
            .map(|d| DeviceView {
                name: d.name().to_string(),
                kind: d.kind(),
                metrics: Arc::clone(d.metrics()),
            })
            .collect()
    }

    /// The receive-timeout fault raised, as a message naming the device,
    /// the message and the fix.
    fn fault_message(&self) -> Option<String> {
        let (device, message) = self.fault.get()?;
        let (device_name, messages) = &self.fault_names[device];
        let (message_name, timeout) = &messages[message];
        Some(format!(
            "{device_name}: message {message_name} not received for {timeout} s (timeout policy `fault`); check the \
             sender, or use on_timeout = \"hold\" or \"default\""
        ))
    }

    /// Stops the devices, closes the files and reports; `fast` is the fast
    /// side after its last frame. A file that could not be written is a
    /// failure of the run, in the report with everything else.
    pub(super) fn finish(
        mut self,
        ended: Ended,
        wall: Duration,
        observer: &mut dyn Observer,
    ) -> Result<Report, SessionError> {
        let Ended {
            fast,
            failure,
            warnings,
        } = ended;
        let fast = fast.as_ref();
        for device in &mut self.devices {
            device.deactivate();
        }
        let mut failures: Vec<String> = self.fault_message().into_iter().chain(failure).collect();
        if let Some(r) = self.recording.as_mut() {
            r.drain(observer);
            if let Some((csv, _)) = r.csv.as_mut().filter(|_| r.error.is_none()) {
                if let Err(e) = csv.finish() {
                    r.error = Some(e);
                }
            }
            if let (Some(e), Some((csv, file))) = (&r.error, r.csv.take()) {
                // Closed first: its buffer may still try to write.
                drop(csv);
                failures.push(format!(
                    "writing the recording {}: {e} ({})",
                    file.display(),
                    kept_whole(&file)
                ));
            }
        }
        let bus_log = match self.log.take() {
            Some((writer, file)) => match writer.finish() {
                Ok(records) => Some((file, records)),
                Err(e) => {
                    failures.push(format!(
                        "writing the bus log {}: {e} ({})",
                        file.display(),
                        kept_whole(&file)
                    ));
                    None
                }
            },
            None => None,
        };
        Ok(Report {
            name: self.name.clone(),
            settings: self.settings,
            implicit_work: self.implicit_work,
            virtual_clock: self.options.clock == ClockMode::Virtual,
            wall,
            preflight: self.preflight.take(),
            recording: self.recording.as_ref().map(|r| RecordingReport {
                file: r.file.clone(),
                rows: r.written,
                dropped: fast.and_then(FastSide::recorder).map_or(0, |s| s.dropped()),
            }),
            dropped_records: fast.map_or(0, FastSide::dropped_records),
            dropped_outputs: self.dropped_outputs.get(),
            devices: self.device_views(),
            bus_log,
            replay: self.replay.as_ref().map(|feed| ReplayReport {
                duration: feed.duration(),
                unrouted: feed.unrouted(),
                last_late_us: self.replay_late_us,
            }),
            failure: (!failures.is_empty()).then(|| failures.join("; ")),
            warnings,
            metrics: Arc::clone(&self.metrics),
            xcp: self.xcp.take().map(XcpRun::finish),
            taps: self.taps.clone(),
        })
    }
}
