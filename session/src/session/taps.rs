//! What the fast thread taps at each frame's end: the run's XCP slave
//! (prepared here; it serves once the run's controls exist) and the
//! buses' diagnostic servers (started here), joined into one tap.

use std::sync::Arc;

use tandem_config::XcpConfig;
use tandem_models::Model;
use tandem_runtime::tandem::outputs::FrameTap;

use super::error::SessionError;
use crate::device::{Device, DeviceKind, Traffic};
use crate::diag::{self, DiagPlan, DiagServers};
use crate::report::{TAP_DIAGNOSTICS, TAP_XCP};
use crate::xcp::{XcpOptions, XcpSetup};

/// The XCP slave of a run: the one `given` by the caller, else the one its
/// configuration asks for (`[xcp]`), if any.
pub(super) fn asked_xcp(given: Option<XcpOptions>, configured: Option<XcpConfig>) -> Option<XcpOptions> {
    given.or(configured.map(|x| XcpOptions {
        listen: x.listen,
        a2l: None,
        wait: x.wait,
    }))
}

/// An XCP slave prepared to serve, and the tap that samples its DAQ
/// lists at each frame's end.
type PreparedXcp = (XcpSetup, Box<dyn FrameTap>);

/// Prepares the XCP slave `asked` for on `model` (frames of `frame` s),
/// reading the counters of `buses`; none when none is asked for.
pub(super) fn prepare_xcp(
    asked: Option<XcpOptions>,
    model: &dyn Model,
    frame: f64,
    buses: &[Box<dyn Device>],
) -> Result<Option<PreparedXcp>, SessionError> {
    let Some(asked) = asked else {
        return Ok(None);
    };
    let buses: Vec<_> = buses
        .iter()
        .map(|d| (d.name().to_string(), Arc::clone(d.metrics())))
        .collect();
    Ok(Some(XcpSetup::prepare(
        asked,
        model.layout(),
        model.tunables(),
        frame,
        &buses,
    )?))
}

/// The diagnostic servers of `plans` whose bus carries frames in this run,
/// started, each counting in its bus's metrics. On the virtual clock only
/// in-process buses carry frames: their servers answer from the values of
/// the newest frame.
pub(super) fn start_diagnostics(
    plans: Vec<DiagPlan>,
    devices: &[Box<dyn Device>],
    traffic: Traffic,
) -> Result<Option<(DiagServers, diag::DiagTap)>, SessionError> {
    let live = traffic == Traffic::Live;
    let plans: Vec<_> = (plans.into_iter())
        .filter(|plan| live || traffic == Traffic::Offline && plan.in_process())
        .map(|plan| {
            let device = devices
                .iter()
                .find(|d| d.kind() == DeviceKind::Bus && d.name() == plan.bus());
            (plan, device.map_or_else(Arc::default, |d| Arc::clone(d.metrics())))
        })
        .collect();
    diag::start(plans).map_err(SessionError::from)
}

/// The fast thread's one tap (the XCP slave's first, then the diagnostic
/// servers'), and the names of the taps it joins, for the report.
pub(super) fn join_taps<D: FrameTap + 'static>(
    xcp: Option<Box<dyn FrameTap>>,
    diagnostics: Option<D>,
) -> (Option<Box<dyn FrameTap>>, Vec<&'static str>) {
    let names = [(xcp.is_some(), TAP_XCP), (diagnostics.is_some(), TAP_DIAGNOSTICS)]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
    let tap = match (xcp, diagnostics) {
        (Some(xcp), Some(diag)) => Some(Box::new((xcp, diag)) as Box<dyn FrameTap>),
        (tap, diag) => tap.or(diag.map(|d| Box::new(d) as Box<dyn FrameTap>)),
    };
    (tap, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tap that counts the frames it sees.
    struct Count(u64);

    impl FrameTap for Count {
        fn frame_end(&mut self, _k: u64, _u: &[f64], _y: &[f64], _rate_hits: &[bool]) {
            self.0 += 1;
        }
    }

    #[test]
    fn the_callers_xcp_slave_comes_before_the_configurations() {
        let configured = XcpConfig {
            listen: "127.0.0.1:5555".parse().unwrap(),
            wait: true,
        };
        let from_file = asked_xcp(None, Some(configured)).unwrap();
        assert_eq!(
            (from_file.listen, from_file.a2l.is_none(), from_file.wait),
            (configured.listen, true, true)
        );
        let given = XcpOptions {
            listen: "127.0.0.1:0".parse().unwrap(),
            ..from_file.clone()
        };
        assert_eq!(asked_xcp(Some(given.clone()), Some(configured)), Some(given));
        assert_eq!(asked_xcp(None, None), None);
    }

    #[test]
    fn taps_are_joined_and_named_in_order() {
        let (tap, names) = join_taps::<Count>(None, None);
        assert!(tap.is_none() && names.is_empty());
        let (tap, names) = join_taps(None, Some(Count(0)));
        assert!(tap.is_some());
        assert_eq!(names, [TAP_DIAGNOSTICS]);
        let (mut tap, names) = join_taps(Some(Box::new(Count(0)) as Box<dyn FrameTap>), Some(Count(0)));
        assert_eq!(names, [TAP_XCP, TAP_DIAGNOSTICS]);
        tap.as_mut().unwrap().frame_end(0, &[], &[], &[]);
    }

    #[test]
    fn no_slave_and_no_server_start_nothing() {
        let model = tandem_models::plants::builtin("ev").unwrap();
        assert!(prepare_xcp(None, model.as_ref(), 1e-3, &[]).unwrap().is_none());
        assert!(start_diagnostics(Vec::new(), &[], Traffic::Live).unwrap().is_none());
    }
}
