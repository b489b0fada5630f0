//! The frames: on the virtual clock, both sides interleaved on the
//! calling thread; on the real clock, the devices activated, the replay
//! player and the transmitter started, and the tandem's threads watched
//! from the calling thread until they stop.

use std::ops::ControlFlow;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tandem_runtime::tandem::clock::nanos;
use tandem_runtime::tandem::control::RunControl;
use tandem_runtime::tandem::fast::FastSide;
use tandem_runtime::tandem::implicit_side::ImplicitSide;
use tandem_runtime::tandem::threads::{run_realtime, STOP_GRACE};
use tandem_runtime::tandem::virtual_clock::run_virtual;

use super::error::SessionError;
use super::options::Observer;
use super::Parts;
use crate::device::IoPlacement;
use crate::replay::{LogFeed, ReplayError};
use crate::report::live::LiveStats;

/// How far (s of wall time) a paced run on the virtual clock may get ahead
/// of its pace before it sleeps: sleeping per frame would cost more than
/// the frames.
const PACE_SLACK: f64 = 0.002;

/// How the frames ended: the fast side after its last frame (if its
/// thread returned it), why the run stopped early (if it did), and what the
/// real-time threads could not obtain.
pub(super) struct Ended {
    /// The fast side after its last frame.
    pub(super) fast: Option<FastSide>,
    /// Why the run stopped early.
    pub(super) failure: Option<String>,
    /// What the real-time threads could not obtain.
    pub(super) warnings: Vec<String>,
}

impl Parts {
    /// The run on the virtual clock, on this thread; returns why it stopped
    /// early, if it did.
    pub(super) fn run_virtual(
        &mut self,
        fast: &mut FastSide,
        implicit: Option<&mut ImplicitSide>,
        observer: &mut dyn Observer,
        live: &mut LiveStats,
    ) -> Result<Option<String>, SessionError> {
        let frame = self.settings.frame;
        let every = self
            .options
            .live_interval
            .map(|d| (d.as_secs_f64() / frame).round().max(1.0) as u64);
        if let Some(feed) = self.replay.as_mut() {
            feed.until(0.0, &mut self.feeds).map_err(ReplayError::from)?;
        }
        let mut replay_error = None;
        if let Some(x) = &self.xcp {
            x.wait_for_master(&self.stop);
        }
        let costs = &self.costs;
        let xcp = &self.xcp;
        let (pace, started) = (self.options.pace, Instant::now());
        let (replay, feeds, inline, transmitter, recording, fault, stop) = (
            &mut self.replay,
            &mut self.feeds,
            &mut self.inline,
            &mut self.transmitter,
            &mut self.recording,
            &self.fault,
            &self.stop,
        );
        let drain = self.options.virtual_drain.max(1);
        let (origin_ns, frame_ns) = (replay.as_ref().map_or(0, LogFeed::start_ns), nanos(frame));
        let result = run_virtual(fast, implicit, self.settings.frames(), nanos(frame), costs, &mut |k| {
            if let Some(t) = transmitter.as_mut() {
                t.pump();
            }
            if let Some(feed) = replay.as_mut() {
                if let Err(e) = feed.until((k + 1) as f64 * frame, feeds) {
                    replay_error = Some(e);
                    return ControlFlow::Break(());
                }
            }
            if k % drain == drain - 1 {
                if let Some(r) = recording.as_mut() {
                    r.drain(observer);
                }
            }
            observer.tick(true);
            if let Some(x) = xcp {
                x.relieve();
            }
            if let Some(pace) = pace {
                let ahead = (k + 1) as f64 * frame / pace - started.elapsed().as_secs_f64();
                if ahead > PACE_SLACK {
                    std::thread::sleep(Duration::from_secs_f64(ahead));
                }
            }
            // What the other nodes sent up to this boundary (runs in
            // lock-step are all past their sends once `tick` returns).
            let boundary = k + 1;
            for bus in inline.iter_mut() {
                bus.poll(boundary as f64 * frame, origin_ns + boundary as i64 * frame_ns);
            }
            observer.received();
            if every.is_some_and(|e| (k + 1) % e == 0) {
                observer.live((k + 1) as f64 * frame, live);
            }
            if fault.get().is_some() || stop.load(Ordering::Acquire) {
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
        if let Some(e) = replay_error {
            return Err(ReplayError::from(e).into());
        }
        Ok(result.err().map(|e| e.to_string()))
    }

    /// The run on real threads.
    pub(super) fn run_real(
        &mut self,
        fast: FastSide,
        implicit: Option<ImplicitSide>,
        observer: &mut dyn Observer,
        live: &mut LiveStats,
    ) -> Result<Ended, SessionError> {
        let control = Arc::new(RunControl::new());
        // Below the fast thread, above the implicit one, off the fast core.
        let io = IoPlacement {
            priority: self.settings.fast.placement.priority.saturating_sub(1).max(1),
            fast_core: self.settings.fast.placement.core,
        };
        for device in &mut self.devices {
            device.activate(&control, io)?;
        }
        let player = match self.replay.take() {
            Some(feed) => Some(
                feed.spawn_player(std::mem::take(&mut self.feeds), Arc::clone(&control), io)
                    .map_err(|cause| SessionError::Thread { what: "replay", cause })?,
            ),
            None => None,
        };
        let transmit: Option<JoinHandle<()>> = match self.transmitter.take() {
            Some(t) => Some(
                t.spawn(nanos(self.settings.frame), Arc::clone(&control), io)
                    .map_err(|cause| SessionError::Thread {
                        what: "transmit",
                        cause,
                    })?,
            ),
            None => None,
        };
        if let Some(x) = &self.xcp {
            x.wait_for_master(&self.stop);
        }
        let interval = self.options.live_interval;
        let poll = interval
            .unwrap_or(Duration::from_secs(1))
            .min(Duration::from_millis(100));
        let started = Instant::now();
        let mut last_print = Instant::now();
        let (recording, fault, stop) = (&mut self.recording, &self.fault, &self.stop);
        let outcome = run_realtime(
            &self.settings,
            fast,
            implicit,
            Arc::clone(&control),
            self.options.start_at,
            poll,
            &mut |finished| {
                observer.tick(!finished);
                if let Some(r) = recording.as_mut() {
                    r.drain(observer);
                }
                if fault.get().is_some() || stop.load(Ordering::Acquire) {
                    control.request_stop();
                }
                if let Some(interval) = interval {
                    if !finished && last_print.elapsed() >= interval {
                        last_print = Instant::now();
                        observer.live(started.elapsed().as_secs_f64(), live);
                    }
                }
            },
        );
        control.request_stop();
        if let Some(t) = transmit {
            let _ = t.join();
        }
        if let Some(player) = player {
            match player.join() {
                Ok(Ok((feed, late))) => {
                    self.replay = Some(feed);
                    self.replay_late_us = Some(late);
                }
                Ok(Err(e)) => return Err(ReplayError::from(e).into()),
                Err(_) => {}
            }
        }
        let mut warnings = Vec::new();
        if let Some(late) = outcome.late_start {
            warnings.push(format!(
                "the frames began {:.1} ms after the agreed start (the run's threads were not ready in time): \
                 every frame is that much late",
                late as f64 / 1e6
            ));
        }
        let mut failure = outcome.failure.map(|e| e.to_string());
        if !outcome.stuck.is_empty() {
            let stuck = format!(
                "the {} thread(s) did not stop within {} s of the end; the run ended without them (what they \
                 recorded before is kept)",
                outcome.stuck.join(" and "),
                STOP_GRACE.as_secs_f64()
            );
            failure = Some(failure.map_or(stuck.clone(), |f| format!("{f}; {stuck}")));
        }
        for (thread, setup) in [
            ("fast", Some(&outcome.fast_setup)),
            ("implicit", outcome.implicit_setup.as_ref()),
        ] {
            for refused in setup.into_iter().flat_map(|s| s.refusals()) {
                warnings.push(format!("{thread} thread: {refused}"));
            }
        }
        Ok(Ended {
            fast: outcome.fast,
            failure,
            warnings,
        })
    }
}
