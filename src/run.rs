//! `tandem run CONFIG.toml` and `tandem ecu CONFIG.toml`: a session of the
//! configuration on the real or the virtual clock, with the preflight, live
//! statistics, the summary and its JSON printed here.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::out::say;
use anyhow::{bail, Context};
use clap::Args;
use tandem_config::{load_run_config, RunConfig};
use tandem_models::plants;
use tandem_session::report::live::LiveStats;
use tandem_session::xcp::XcpOptions;
use tandem_session::{bind, ClockMode, Observer, Options, Report, Session, SessionError};

/// Arguments of `tandem run`.
#[derive(Args)]
pub struct RunArgs {
    /// The run configuration (TOML), e.g. config/examples/ev.toml.
    pub config: PathBuf,
    /// Run length in seconds, instead of the configuration's.
    #[arg(long, allow_negative_numbers = true)]
    pub duration: Option<f64>,
    /// Run on the virtual clock: deterministic, as fast as possible, with
    /// the configuration's [virtual_clock] costs and injected faults.
    #[arg(long)]
    pub virtual_clock: bool,
    /// With --virtual-clock: run time per wall time (1: as fast as the
    /// real clock, 0.5: half as fast), instead of as fast as possible.
    #[arg(long)]
    pub pace: Option<f64>,
    /// Print live statistics at this interval (e.g. 1s, 500ms).
    #[arg(long, value_parser = parse_interval)]
    pub stats: Option<Duration>,
    /// Also write the summary as JSON to this file.
    #[arg(long)]
    pub stats_json: Option<PathBuf>,
    /// Refuse to start unless every real-time check passes.
    #[arg(long)]
    pub require_rt: bool,
    /// Log all bus traffic to this file (candump, or ASC, BLF or MF4 for
    /// `.asc`, `.blf`, `.mf4`),
    /// instead of the configuration's record.bus_log.
    #[arg(long)]
    pub bus_log: Option<PathBuf>,
    /// The folder for the run's outputs (the recording and the bus log
    /// when the configuration names them without a folder).
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Allow a recording of more than 1e9 values (rows × columns).
    #[arg(long)]
    pub large_output: bool,
    /// Also serve the web front end at this address (e.g. 127.0.0.1:8080),
    /// with this run on its dashboard while it runs.
    #[arg(long)]
    pub serve: Option<std::net::SocketAddr>,
    /// The token the front end's requests must carry (needed with --serve
    /// on an address other than loopback): at least 16 printable ASCII
    /// characters, or `generate` for a random one, printed.
    #[arg(long, env = "TANDEM_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// With a [dcp] table: write the run's DCP slave description (XML)
    /// here and exit.
    #[arg(long)]
    pub dcp_description: Option<PathBuf>,
    /// Evaluate a block diagram model with the interpreter instead of
    /// compiling it to machine code (as `compile = false` in the
    /// configuration; the results are the same bit for bit).
    #[arg(long)]
    pub interpret: bool,
    /// Serve the run's XCP slave at this address and port, over UDP and
    /// TCP (e.g. 127.0.0.1:5555), instead of the configuration's
    /// xcp.listen.
    #[arg(long)]
    pub xcp: Option<std::net::SocketAddr>,
    /// Write the A2L file describing the run's XCP slave here before the
    /// run starts (needs --xcp or an [xcp] table).
    #[arg(long)]
    pub a2l: Option<PathBuf>,
}

/// A time interval such as `1s` or `500ms`.
pub fn parse_interval(s: &str) -> Result<Duration, tandem_config::DurationError> {
    let d: tandem_config::Duration = s.parse()?;
    Ok(Duration::from_secs_f64(d.seconds()))
}

/// Loads a configuration, with the run length of `--duration` if given.
pub fn load(path: &Path, duration: Option<f64>) -> anyhow::Result<RunConfig> {
    let mut config = load_run_config(path, plants::PROFILES)?;
    if let Some(d) = duration {
        config.set_duration(d).map_err(|e| anyhow::anyhow!("--duration: {e}"))?;
    }
    Ok(config)
}

/// A session that cannot be built, as the command line shows it: a
/// recording too large is the `[record]` table of `config`.
pub fn session_error(config: &Path, error: SessionError) -> anyhow::Error {
    match error {
        e @ SessionError::OutputTooLarge(_) => anyhow::anyhow!("{}: record: {e}", config.display()),
        e => e.into(),
    }
}

/// Prints a line of live statistics each interval.
pub struct PrintLive;

impl Observer for PrintLive {
    fn live(&mut self, t: f64, stats: &mut LiveStats) {
        say!("{}", stats.line(t));
    }
}

/// Prints the session's first line and, on the real clock, its preflight.
fn announce(session: &Session, clock: ClockMode) {
    let s = session.settings();
    say!(
        "{}: {} frames of {} s ({} s), policy {}, {} + {} ({}{}), {}",
        session.name(),
        s.frames(),
        s.frame,
        s.duration,
        s.policy,
        s.fast.method,
        session.implicit_work(),
        session.linear_algebra(),
        match session.jacobian_helpers() {
            0 => String::new(),
            helpers => format!(", Jacobian differenced on {} threads", helpers + 1),
        },
        match clock {
            ClockMode::Real => "real clock",
            ClockMode::Virtual => "virtual clock",
        }
    );
    if let Some(report) = session.preflight() {
        say!("preflight:\n{report}");
        if !report.hard_real_time() {
            say!("warning: soft real time (desktop mode): deadlines are not guaranteed");
        }
    }
}

/// Prints the report, writes its JSON if asked, and fails when the run
/// failed.
pub fn conclude(report: &Report, stats_json: Option<&Path>) -> anyhow::Result<()> {
    for w in &report.warnings {
        say!("warning: {w}");
    }
    crate::out::write_raw(&report.table());
    if let Some(path) = stats_json {
        std::fs::write(path, serde_json::to_string_pretty(&report.json())? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
        say!("statistics written to {}", path.display());
    }
    match &report.failure {
        Some(f) => bail!("the run failed: {f}"),
        None => Ok(()),
    }
}

/// `tandem run` (and `tandem ecu`).
pub fn run(args: &RunArgs) -> anyhow::Result<()> {
    let mut config = load(&args.config, args.duration)?;
    config.compile &= !args.interpret;
    if config.dcp.is_some() {
        if config.xcp.is_some() || args.xcp.is_some() {
            bail!(
                "{}: a DCP slave ([dcp]) serves no XCP slave; measure it through its federation, or drop [xcp] and --xcp",
                args.config.display()
            );
        }
        if args.virtual_clock {
            bail!(
                "{}: a DCP slave ([dcp]) runs on the real clock; drop --virtual-clock",
                args.config.display()
            );
        }
        // A DCP slave: it runs when a federation master says so.
        return crate::dcp::run_slave(config, &args.results, args.dcp_description.as_deref());
    }
    let ecu = config.ecu.as_ref().map(|e| e.config.value.clone());
    let xcp = xcp_options(args, &config)?;
    let xcp_waits = config.xcp.is_some_and(|x| x.wait);
    let plan = bind(config)?;
    if let Some(evaluation) = &plan.evaluation {
        say!("{}: {evaluation}", plan.name);
    }
    let clock = if args.virtual_clock {
        ClockMode::Virtual
    } else {
        ClockMode::Real
    };
    if let Some(pace) = args.pace {
        if !args.virtual_clock {
            bail!("--pace sets the virtual clock's speed: add --virtual-clock (the real clock keeps its own)");
        }
        if !(pace.is_finite() && pace > 0.0 && pace <= 1e6) {
            bail!("--pace {pace}: give a run-time-to-wall-time ratio above 0 and at most 1e6, e.g. 1");
        }
    }
    let options = Options {
        pace: args.pace,
        require_rt: args.require_rt,
        // A file named on the command line is where the user is.
        bus_log: args.bus_log.as_deref().map(std::path::absolute).transpose()?,
        live_interval: args.stats,
        large_output: args.large_output,
        xcp,
        ..Options::new(clock, &args.results)
    };
    let mut session = match Session::new(plan, options) {
        Ok(session) => session,
        Err(SessionError::NotRealTime { missing, preflight }) => {
            say!("preflight:\n{preflight}");
            bail!(SessionError::NotRealTime { missing, preflight });
        }
        Err(e) => return Err(session_error(&args.config, e)),
    };
    let dashboard = match args.serve {
        Some(listen) => Some(serve_dashboard(&mut session, args, listen)?),
        None => None,
    };
    announce(&session, clock);
    if let Some((udp, tcp)) = session.xcp_addresses() {
        say!("xcp: listening on UDP {udp} and TCP {tcp}");
        if xcp_waits {
            say!("xcp: the first frame waits for a master to start DAQ (xcp.wait)");
        }
    }
    // The virtual ECU talks over the buses; on the virtual clock there are none.
    let mut ecu = match ecu.filter(|_| clock == ClockMode::Real) {
        Some(config) => Some(crate::ecu::spawn(&config, session.settings().duration)?),
        None => None,
    };
    let report = match dashboard {
        Some((run, observer)) => {
            let report = session.run(&mut (PrintLive, observer));
            run.finish(report.as_ref());
            report
        }
        None => session.run(&mut PrintLive),
    };
    if let Some(ecu) = ecu.as_mut() {
        ecu.finish();
    }
    conclude(&report?, args.stats_json.as_deref())
}

/// The run's XCP slave as `--xcp` and `--a2l` ask, over the `[xcp]`
/// table; none when they ask nothing (the session serves the table's).
fn xcp_options(args: &RunArgs, config: &RunConfig) -> anyhow::Result<Option<XcpOptions>> {
    if args.xcp.is_none() && args.a2l.is_none() {
        return Ok(None);
    }
    let Some(listen) = args.xcp.or(config.xcp.map(|x| x.listen)) else {
        if args.a2l.is_some() {
            bail!("--a2l describes the run's XCP slave: give --xcp ADDRESS:PORT too, or an [xcp] table in the configuration");
        }
        return Ok(None);
    };
    Ok(Some(XcpOptions {
        listen,
        // A file named on the command line is where the user is.
        a2l: args.a2l.as_deref().map(std::path::absolute).transpose()?,
        wait: config.xcp.is_some_and(|x| x.wait),
    }))
}

/// Starts `tandem serve` on `listen` on a thread of its own, with this
/// session on its dashboard; returns once it listens.
fn serve_dashboard(
    session: &mut Session,
    args: &RunArgs,
    listen: std::net::SocketAddr,
) -> anyhow::Result<(std::sync::Arc<tandem_serve::LiveRun>, tandem_serve::RunObserver)> {
    let limits = tandem_serve::Limits::default();
    let config = args.config.display().to_string();
    let (run, observer) = tandem_serve::attach(session, "r0".into(), config, limits.run_values)
        .context("the session's controls are taken")?;
    let options = tandem_serve::Options {
        token: crate::serve::token(args.token.as_deref())?,
        limits,
        ..tandem_serve::Options::new(listen, ".".into())
    };
    let (ready, listening) = std::sync::mpsc::channel();
    let served = std::sync::Arc::clone(&run);
    let failed = ready.clone();
    std::thread::Builder::new()
        .name("serve".into())
        .spawn(move || {
            let result = tandem_serve::serve_with(options, vec![served], |address| {
                let _ = ready.send(Ok(address));
            });
            if let Err(e) = result {
                let _ = failed.send(Err(e));
            }
        })
        .context("cannot start the server's thread")?;
    let address = listening.recv().context("the server's thread ended")??;
    say!("dashboard: http://{address}/ (this run is r0)");
    Ok((run, observer))
}
