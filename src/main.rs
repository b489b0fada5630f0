//! The `tandem` command: simulate block diagrams offline, check them, list
//! the block library, run models in real time, record and replay buses.
//! It parses arguments and prints; the work is done by the libraries.

mod check;
mod cosim;
mod dcp;
mod ecu;
mod export;
mod out;
mod plot;
mod progress;
mod record;
mod replay;
mod run;
mod serve;
mod sim;
mod sim_fmu;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::out::tell;

/// Tandem: real-time hardware-in-the-loop runtime and block-diagram simulator.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a JSON block diagram (or a built-in model) with a fixed-step
    /// explicit solver or the variable-step BDF.
    Sim(sim::SimArgs),
    /// Validate a model and print its execution order, states, rates and
    /// loops, open an FMU and print its interfaces, states and ports, or
    /// read an SSP package and print its components and connections.
    Check {
        /// The model file (JSON block diagram, FMU or SSP package).
        model: PathBuf,
    },
    /// List the block types of the library.
    Blocks,
    /// Run a model in real time: the explicit/implicit tandem on two pinned
    /// cores (or on the virtual clock), from a TOML configuration.
    Run(run::RunArgs),
    /// Run a controller model (a JSON block diagram) as a virtual ECU that
    /// speaks CAN: `tandem run` on an ECU's configuration.
    Ecu(run::RunArgs),
    /// Record every frame on a bus into a log (candump, or ASC, BLF or MF4
    /// by the file's extension).
    Record(record::RecordArgs),
    /// Replay a recorded log (candump, ASC, BLF or MF4) against a model, in real time or as
    /// fast as possible.
    Replay(replay::ReplayArgs),
    /// Co-simulate a system of sub-models (JSON diagrams, built-in plants,
    /// FMUs), each with its own solver, coupled at macro steps; or the FMUs
    /// of an SSP package.
    Cosim(cosim::CosimArgs),
    /// Serve a model (JSON diagram, built-in plant, FMU) as a DCP slave over
    /// UDP, or write its DCP slave description.
    DcpSlave(dcp::SlaveArgs),
    /// Run a federation of DCP slaves as its master: lock-step or real time.
    Federate(dcp::FederateArgs),
    /// Pack a model (a JSON block diagram or a built-in model) as an FMI
    /// Co-Simulation FMU.
    Export(export::ExportArgs),
    /// Serve the web front end: a diagram editor, offline runs streamed
    /// live, and a dashboard of real-time runs.
    Serve(serve::ServeArgs),
    /// Serve one FMU instance to the tandem process that started this one
    /// (out-of-process loading, `--isolate`); not run by hand.
    #[command(name = "fmu-host", hide = true)]
    FmuHost,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Sim(args) => sim::run(&args),
        Command::Check { model } => check::run(&model),
        Command::Blocks => {
            check::list_blocks();
            Ok(())
        }
        Command::Run(args) | Command::Ecu(args) => run::run(&args),
        Command::Record(args) => record::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Cosim(args) => cosim::run(&args),
        Command::DcpSlave(args) => dcp::slave(&args),
        Command::Federate(args) => dcp::federate(&args),
        Command::Export(args) => export::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::FmuHost => return ExitCode::from(tandem_fmi::isolate::serve() as u8),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tell!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
