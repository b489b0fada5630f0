//! The run's devices: its buses and serial devices built and configured
//! (transports opened, unless replaying or on the virtual clock), and
//! their halves wired to the fast thread's inputs and outputs.

use std::collections::BTreeMap;
use std::sync::Arc;

use tandem_can::Duplex;
use tandem_models::Layout;
use tandem_runtime::tandem::inputs::{InputSource, Profile, Signals};
use tandem_runtime::tandem::metrics::Counter;
use tandem_runtime::tandem::outputs::OutputSink;

use super::error::SessionError;
use crate::bind::{BoundBus, BoundSerial};
use crate::bus::{BusDevice, BusFeed, InlineBus};
use crate::controls::{InputOverrides, Overridden};
use crate::device::{Device, Halves, LogClock, LogSetup, Setup, Traffic};
use crate::fault::FaultQueue;
use crate::inputs::{DeviceInputs, Fault};
use crate::log::LogHub;
use crate::mapping::BusMap;
use crate::serial::SerialDevice;
use crate::transmit::{transmit_paths, SendAtFrameEnd, Transmitter};

/// What describes a receive-timeout fault: per device, per message, its
/// name and timeout.
pub(super) type FaultNames = Vec<(String, Vec<(String, f64)>)>;

/// The devices of a run, configured.
pub(super) struct Configured {
    /// The devices, buses first.
    pub(super) devices: Vec<Box<dyn Device>>,
    /// Each device's read and write halves.
    pub(super) halves: Vec<Halves>,
    /// Each bus's receive side, when replaying.
    pub(super) feeds: Vec<Option<BusFeed>>,
    /// The buses on in-process transports, on the virtual clock.
    pub(super) inline: Vec<InlineBus>,
    /// What names each receive-timeout fault.
    pub(super) fault_names: FaultNames,
    /// Each bus's name, fault queue and mapping, for faults at run time.
    pub(super) fault_queues: Vec<(String, Arc<FaultQueue>, Arc<BusMap>)>,
}

/// Builds and configures the buses and serial devices; each bus logs to
/// `hub` when there is one, stamping sent frames by `log_clock`.
#[expect(
    clippy::too_many_arguments,
    reason = "the devices, the clocks and the hubs a run wires them to, each from another stage of Session::new"
)]
pub(super) fn configure_devices(
    buses: Vec<BoundBus>,
    serial: Vec<BoundSerial>,
    traffic: Traffic,
    frame: f64,
    mut hub: Option<&mut LogHub>,
    log_clock: LogClock,
    handed: &mut BTreeMap<String, Duplex>,
) -> Result<Configured, SessionError> {
    let mut c = Configured {
        devices: Vec::new(),
        halves: Vec::new(),
        feeds: Vec::new(),
        inline: Vec::new(),
        fault_names: Vec::new(),
        fault_queues: Vec::new(),
    };
    for (i, bus) in buses.into_iter().enumerate() {
        let log = hub.as_mut().map(|hub| LogSetup {
            rx: hub.producer(),
            tx: hub.producer(),
            clock: log_clock,
        });
        let messages = bus
            .map
            .rx
            .iter()
            .map(|m| (m.message.name.clone(), m.timeout.map_or(0.0, |t| t.after)))
            .collect();
        c.fault_names.push((format!("bus {}", bus.name), messages));
        let mut device = BusDevice::new(&bus.name, i as u16, bus.transport, bus.map, bus.faults);
        c.fault_queues
            .push((bus.name.clone(), device.fault_queue(), Arc::clone(device.map())));
        let transport = handed.remove(&bus.name);
        c.halves.push(device.configure(Setup {
            traffic,
            frame,
            log,
            transport,
        })?);
        match traffic {
            Traffic::Replay => c.feeds.push(device.take_feed()),
            Traffic::Offline => c.inline.extend(device.take_inline()),
            Traffic::Live => {}
        }
        c.devices.push(Box::new(device));
    }
    for device in serial {
        let timeout = device.map.timeout.map_or(0.0, |t| t.after);
        c.fault_names
            .push((format!("serial {}", device.name), vec![("no line".into(), timeout)]));
        let mut device = SerialDevice::new(&device.name, &device.device, device.baud, device.map);
        c.halves.push(device.configure(Setup {
            traffic,
            frame,
            log: None,
            transport: None,
        })?);
        c.devices.push(Box::new(device));
    }
    Ok(c)
}

/// What the fast thread reads and writes, wired to the devices.
pub(super) struct Wired {
    /// The profile, overridden by the devices' read halves and then by
    /// the controls' overrides.
    pub(super) inputs: Box<dyn InputSource>,
    /// The queue to the devices' writers, when a device writes (sent at
    /// the frame's end when a bus is in-process).
    pub(super) outputs: Option<Box<dyn OutputSink>>,
    /// What serves the writers, when a device writes.
    pub(super) transmitter: Option<Transmitter>,
    /// The inputs the controls set.
    pub(super) overrides: Arc<InputOverrides>,
    /// The receive-timeout fault a device raises.
    pub(super) fault: Arc<Fault>,
    /// The frames' outputs the writers' queue had no room for.
    pub(super) dropped_outputs: Arc<Counter>,
}

/// Wires the devices' halves to the fast thread: inputs no device drives
/// follow `profile`; with `in_process` buses (polled at the frame
/// boundaries of the virtual clock) the outputs are sent at the frame's
/// end.
pub(super) fn wire(
    halves: Vec<Halves>,
    devices: &[Box<dyn Device>],
    profile: Signals,
    layout: &Layout,
    in_process: bool,
) -> Wired {
    let fault = Arc::new(Fault::default());
    let dropped_outputs = Arc::new(Counter::default());
    let mut inputs = DeviceInputs::new(
        Box::new(Profile::new(profile)),
        layout.inputs.iter().map(|v| v.default).collect(),
        Arc::clone(&fault),
    );
    let mut writers = Vec::new();
    for (i, Halves { read, write }) in halves.into_iter().enumerate() {
        if let Some(read) = read {
            inputs.add(i, read);
        }
        if let Some(write) = write {
            writers.push((write, Arc::clone(devices[i].metrics())));
        }
    }
    let (outputs, transmitter) = transmit_paths(layout.outputs.len(), writers, Arc::clone(&dropped_outputs));
    let outputs = outputs.map(|o| match in_process {
        true => Box::new(SendAtFrameEnd(Box::new(o) as Box<dyn OutputSink>)) as Box<dyn OutputSink>,
        false => Box::new(o) as Box<dyn OutputSink>,
    });
    let overrides = Arc::new(InputOverrides::new(layout.inputs.len()));
    let inputs = Box::new(Overridden::new(Box::new(inputs), Arc::clone(&overrides)));
    Wired {
        inputs,
        outputs,
        transmitter,
        overrides,
        fault,
        dropped_outputs,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{ev, ev_on_virtual_bus, plan, scratch};
    use super::*;
    use crate::device::DeviceKind;

    /// The devices of a run of the EV plant on the in-process channel
    /// `channel`, configured on the virtual clock, and its plan's rest.
    fn configured(channel: &str) -> (Configured, crate::Plan) {
        let dir = scratch(channel);
        let mut plan = plan(&ev_on_virtual_bus(channel), &dir);
        let buses = std::mem::take(&mut plan.buses);
        let serial = std::mem::take(&mut plan.serial);
        let frame = plan.settings.frame;
        let configured = configure_devices(
            buses,
            serial,
            Traffic::Offline,
            frame,
            None,
            LogClock::Wall,
            &mut BTreeMap::new(),
        )
        .unwrap();
        (configured, plan)
    }

    #[test]
    fn a_bus_on_the_virtual_clock_is_configured_in_process() {
        let (c, _) = configured("session-configure");
        assert_eq!(c.devices.len(), 1);
        assert_eq!((c.devices[0].name(), c.devices[0].kind()), ("can0", DeviceKind::Bus));
        assert_eq!(c.halves.len(), 1);
        assert!(c.halves[0].read.is_some() && c.halves[0].write.is_some());
        assert_eq!(c.inline.len(), 1, "polled at the frame boundaries");
        assert!(c.feeds.is_empty(), "not replaying");
        assert_eq!(
            c.fault_names,
            [("bus can0".to_string(), vec![("ECU_Command".to_string(), 0.1)])]
        );
        assert_eq!(c.fault_queues.len(), 1);
        assert_eq!(c.fault_queues[0].0, "can0");
    }

    #[test]
    fn an_in_process_bus_sends_from_the_fast_thread() {
        let (c, plan) = configured("session-wire");
        let wired = wire(c.halves, &c.devices, plan.inputs, plan.model.layout(), true);
        assert!(wired.outputs.is_some(), "the bus writes outputs");
        assert!(wired.transmitter.is_none(), "no thread of its own");
        assert!(wired.fault.get().is_none());
        assert_eq!(wired.dropped_outputs.get(), 0);
    }

    #[test]
    fn without_devices_the_inputs_follow_the_profile() {
        let (_, plan) = ev("wire-alone", "[inputs]\nprofile = \"ev-drive-cycle\"\n");
        let layout = plan.model.layout();
        let defaults: Vec<f64> = layout.inputs.iter().map(|v| v.default).collect();
        let mut expected = defaults.clone();
        Profile::new(plan.inputs.clone()).read(5.0, &mut expected);
        let mut wired = wire(Vec::new(), &[], plan.inputs, layout, false);
        assert!(wired.outputs.is_none() && wired.transmitter.is_none());
        let mut u = defaults;
        wired.inputs.read(5.0, &mut u);
        assert_eq!(u, expected);
    }
}
