//! `tandem record BUS --out FILE [--duration S]`: every frame on a bus,
//! written as a candump log (or Vector ASC, BLF or ASAM MDF4 for a `.asc`,
//! `.blf` or `.mf4` name) with the
//! time it was received. The file is flushed every 100 ms, so stopping
//! with Ctrl-C loses at most that much.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::out::{say, tell};
use anyhow::{bail, Context};
use clap::Args;
use tandem_config::bounds::check_duration;
use tandem_config::TransportConfig;
use tandem_log::{Direction, LogRecord};
use tandem_session::bus::open_transport;
use tandem_session::log::wall_ns;

/// Arguments of `tandem record`.
#[derive(Args)]
pub struct RecordArgs {
    /// The bus: `udp` or `udp:GROUP:PORT` (CAN over UDP multicast),
    /// `socketcan:IFACE` (e.g. socketcan:vcan0), `slcan:DEVICE[@BITRATE]`.
    pub bus: String,
    /// The log to write: candump format, or ASC, BLF or MF4 for a name
    /// ending in `.asc`, `.blf` or `.mf4`.
    #[arg(long)]
    pub out: PathBuf,
    /// Stop after this many seconds (default: until interrupted).
    #[arg(long)]
    pub duration: Option<f64>,
    /// The interface name written in the log (default: from the bus).
    #[arg(long)]
    pub name: Option<String>,
}

/// A bus given on the command line: its name in the log and how to reach it.
fn transport(spec: &str) -> anyhow::Result<(String, TransportConfig)> {
    let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
    let bad = || format!("bus {spec:?}: use udp, udp:GROUP:PORT, socketcan:IFACE or slcan:DEVICE[@BITRATE]");
    Ok(match kind {
        "udp" => {
            let mut options = tandem_bus::udp::UdpOptions::default();
            if !rest.is_empty() {
                let (group, port) = rest.rsplit_once(':').with_context(bad)?;
                options.group = group.parse().with_context(bad)?;
                options.port = port.parse().with_context(bad)?;
            }
            let (group, port) = (options.group, options.port);
            ("udp0".into(), TransportConfig::Udp { group, port })
        }
        "socketcan" if !rest.is_empty() => (
            rest.into(),
            TransportConfig::SocketCan {
                interface: rest.into(),
                fd: false,
            },
        ),
        "slcan" if !rest.is_empty() => {
            let (device, bitrate) = match rest.split_once('@') {
                Some((d, b)) => (d, b.parse().with_context(bad)?),
                None => (rest, 500_000),
            };
            (
                "slcan0".into(),
                TransportConfig::Slcan {
                    device: device.into(),
                    bitrate,
                },
            )
        }
        _ => bail!(bad()),
    })
}

/// `tandem record`.
pub fn run(args: &RecordArgs) -> anyhow::Result<()> {
    if let Some(d) = args.duration {
        check_duration(d).map_err(|e| anyhow::anyhow!("--duration: {e}"))?;
    }
    let (default_name, transport) = transport(&args.bus)?;
    let mut duplex = open_transport(&transport).with_context(|| format!("bus {}", args.bus))?;
    let interface = args.name.clone().unwrap_or(default_name);
    let start = wall_ns();
    let mut log =
        tandem_log::create(&args.out, start).with_context(|| format!("cannot create {}", args.out.display()))?;
    say!("recording {} into {}", args.bus, args.out.display());
    let began = Instant::now();
    let mut last_flush = Instant::now();
    let (mut frames, mut errors) = (0u64, 0u64);
    while args.duration.is_none_or(|d| began.elapsed().as_secs_f64() < d) {
        match duplex.rx.recv(Duration::from_millis(50)) {
            Ok(Some(received)) => {
                log.write(&LogRecord {
                    time_ns: wall_ns(),
                    interface: interface.clone(),
                    frame: received.frame,
                    direction: Direction::Rx,
                })?;
                frames += 1;
            }
            Ok(None) => {}
            Err(e) => {
                errors += 1;
                if errors <= 10 {
                    tell!("warning: {e}");
                }
            }
        }
        if last_flush.elapsed() >= Duration::from_millis(100) {
            log.flush()?;
            last_flush = Instant::now();
        }
    }
    log.finish()?;
    say!(
        "{frames} frames recorded in {:.1} s ({errors} receive errors)",
        began.elapsed().as_secs_f64()
    );
    Ok(())
}
