//! Tandem's fuzz checks: one function per parser, one that compiles and
//! simulates a model, one that runs every model the checker accepts both
//! compiled to machine code and interpreted and requires the same bits of
//! both ([`model_jit`]), and two stateful ones that drive a DCP session
//! in-process: a slave's state machine fed sequences of datagrams
//! ([`dcp_slave`]), and a master's lock-step run over a faulty line to a
//! slave ([`dcp_master`]); an XCP slave fed sessions of command
//! packets ([`xcp_slave`]); and SSP packages imported whole ([`ssp`]). Each takes arbitrary bytes and must return
//! without panicking, aborting or hanging, whatever the bytes; errors are
//! the expected outcome of most inputs.
//!
//! It depends on every crate whose input it checks; no crate depends on it.
//!
//! The libFuzzer binaries in `fuzz_targets/` call them (`fuzz/run`
//! explains how to run a campaign), and `tests/corpus.rs` replays the
//! corpus and every input that once failed through them in `cargo test`.
//!
//! ```
//! tandem_fuzz::candump(b"(1.000000) can0 123#DEADBEEF\n(oops");
//! tandem_fuzz::blf(b"LOGG\x90\0\0\0");
//! tandem_fuzz::dbc(b"BO_ 1 M: 9 X\n");
//! ```

mod dcp_master;
pub mod dcp_slave;
mod xcp_slave;

pub use dcp_master::dcp_master;
pub use dcp_slave::dcp_slave;
pub use xcp_slave::xcp_slave;

use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;

use tandem_bus::slcan::codec::{parse_line, Decoder};
use tandem_config::{fixed_step, parse_run_config, Overrides};
use tandem_dbc::Dbc;
use tandem_jit::{CompileError, CompiledModel};
use tandem_log::{AscReader, BlfReader, CandumpReader, Mf4Reader};
use tandem_models::diagram::{compile_str, DiagramModel};
use tandem_models::{Model, StateRef};
use tandem_runtime::record::Recorder;
use tandem_runtime::{FixedStep, Simulation};

/// The most grid steps a fuzzed model is simulated for.
const MAX_STEPS: f64 = 200.0;

/// A model's JSON text: parsed and compiled, then, when it compiles,
/// simulated for at most [`MAX_STEPS`] steps with its own settings.
pub fn model(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(mut compiled) = compile_str(text) else {
        return;
    };
    let Ok(settings) = fixed_step(&compiled.simulation, &Overrides::default()) else {
        return;
    };
    let settings = FixedStep {
        stop: settings.stop.min(settings.step * MAX_STEPS),
        ..settings
    };
    if let Ok(mut sim) = Simulation::new(&mut compiled.model, settings) {
        let _ = sim.run(&mut Discard, &mut |_| {});
    }
}

/// The most values (signals, states, discrete states) of a model that
/// [`model_jit`] compiles: the code grows with the widths, and a model a
/// million elements wide would spend the fuzzer's time in the code
/// generator. The interpreter's side of wide models is the `model`
/// target's.
const MAX_JIT_VALUES: usize = 4096;

/// The states at which [`model_jit`] evaluates both models, after the
/// initial one.
const JIT_STATES: usize = 4;

/// The most grid steps [`model_jit`] simulates each way: few, since a
/// mutant's events can come by the hundred per step (a chattering
/// throttle took 1.5 s for 9 steps both ways, uninstrumented), and the
/// major steps, where events are handled, are interpreted in both.
const JIT_STEPS: f64 = 5.0;

/// A model's JSON text: when the checker accepts it (and it has no
/// algebraic loops, which are interpreted as a whole), it must compile to
/// machine code, and the compiled and interpreted models must give the
/// same bits (NaN equal to NaN): derivatives, outputs and zero-crossing
/// functions at the initial state and at states drawn from the input's
/// hash, and every output of a run of at most [`JIT_STEPS`] steps with the
/// model's own settings, which must end alike; and what `tandem check`
/// reports as compiling ([`tandem_jit::plan`]) is what compiled.
/// `jit/tests/bitwise.rs`
/// asserts this on the examples; here it is asserted on every model a
/// fuzzer reaches.
pub fn model_jit(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(loaded) = compile_str(text) else {
        return;
    };
    let program = Arc::clone(loaded.model.program());
    let layout = program.layout().clone();
    if program.n_signals() + layout.states.len() + layout.discrete > MAX_JIT_VALUES {
        return;
    }
    let code = match tandem_jit::compile(&program) {
        Ok(Some(code)) => Arc::new(code),
        Ok(None) | Err(CompileError::Host(_)) => return,
        Err(e) => panic!("the model compiler accepts a model the code generator refuses: {e}"),
    };
    // What `tandem check` reports, proved without generating code, is what
    // was compiled.
    match tandem_jit::plan(&program) {
        Ok(plan) => assert_eq!(plan, code.report.plan, "the plan differs from what was compiled"),
        Err(e) => panic!("the plan refuses a model that compiled: {e}"),
    }
    let mut interpreted = DiagramModel::new(Arc::clone(&program));
    let mut compiled = CompiledModel::new(DiagramModel::new(Arc::clone(&program)), code);

    let (n, nd) = (layout.states.len(), layout.discrete);
    let (mut x, mut xd) = (vec![0.0; n], vec![0.0; nd]);
    interpreted.initial_state(&mut x, &mut xd);
    let mut u: Vec<f64> = layout.inputs.iter().map(|v| v.default).collect();
    let pair = |len: usize| (vec![0.0; len], vec![0.0; len]);
    let (mut dx_i, mut dx_c) = pair(n);
    let (mut y_i, mut y_c) = pair(layout.outputs.len());
    let (mut z_i, mut z_c) = pair(layout.zero_crossings.len());
    let mut rng = SplitMix(data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    }));
    for k in 0..=JIT_STATES {
        let t = if k == 0 { 0.0 } else { rng.uniform(-0.5, 4.0) };
        if k > 0 {
            x.iter_mut().for_each(|v| *v = rng.uniform(-3.0, 3.0));
            xd.iter_mut().for_each(|v| *v = rng.uniform(-1.0, 2.0));
            u.iter_mut().for_each(|v| *v = rng.uniform(-3.0, 3.0));
        }
        let s = StateRef {
            t,
            x: &x,
            xd: &xd,
            u: &u,
        };
        interpreted.derivatives(s, &mut dx_i);
        compiled.derivatives(s, &mut dx_c);
        assert_same("derivative", &dx_i, &dx_c, k);
        interpreted.outputs(s, &mut y_i);
        compiled.outputs(s, &mut y_c);
        assert_same("output", &y_i, &y_c, k);
        interpreted.zero_crossings(s, &mut z_i);
        compiled.zero_crossings(s, &mut z_c);
        assert_same("zero-crossing function", &z_i, &z_c, k);
    }

    let Ok(settings) = fixed_step(&loaded.simulation, &Overrides::default()) else {
        return;
    };
    let settings = FixedStep {
        stop: settings.stop.min(settings.step * JIT_STEPS),
        ..settings
    };
    let run = |model: &mut dyn Model| {
        let mut rows = Rows(Vec::new());
        let end = match Simulation::new(model, settings) {
            Ok(mut sim) => sim.run(&mut rows, &mut |_| {}).map(drop),
            Err(e) => Err(e),
        };
        (rows.0, end.map_err(|e| e.to_string()))
    };
    let (rows_i, end_i) = run(&mut interpreted);
    let (rows_c, end_c) = run(&mut compiled);
    assert_eq!(end_i, end_c, "the interpreted and the compiled run end differently");
    assert_eq!(rows_i.len(), rows_c.len(), "the runs record different numbers of rows");
    for (k, (a, b)) in rows_i.iter().zip(&rows_c).enumerate() {
        assert_same("recorded value", a, b, k);
    }
}

/// Asserts that `interpreted` and `compiled` hold the same bits, NaNs
/// being equal (at evaluation or row `at`).
fn assert_same(what: &str, interpreted: &[f64], compiled: &[f64], at: usize) {
    for (k, (a, b)) in interpreted.iter().zip(compiled).enumerate() {
        assert!(
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            "{what} {k} at {at}: interpreted {a:e} ({:#x}), compiled {b:e} ({:#x})",
            a.to_bits(),
            b.to_bits()
        );
    }
}

/// SplitMix64: the states [`model_jit`] evaluates at, from the input.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [lo, hi).
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A run's time and outputs, row by row.
struct Rows(Vec<Vec<f64>>);

impl Recorder for Rows {
    fn record(&mut self, t: f64, y: &[f64]) -> std::io::Result<()> {
        let mut row = Vec::with_capacity(y.len() + 1);
        row.push(t);
        row.extend_from_slice(y);
        self.0.push(row);
        Ok(())
    }
}

/// Outputs dropped as they come.
struct Discard;

impl Recorder for Discard {
    fn record(&mut self, _: f64, _: &[f64]) -> std::io::Result<()> {
        Ok(())
    }
}

/// A run configuration's TOML text.
pub fn run_toml(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = parse_run_config(text, Path::new("fuzz.toml"), &["ev-drive-cycle"]);
    }
}

/// An FMU's `modelDescription.xml` (FMI 2.0 or 3.0).
pub fn model_description(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = tandem_fmi::ModelDescription::parse(text, Path::new("fuzz.fmu"));
    }
}

/// An SSP package's bytes (a zip archive), written to a file and imported:
/// the archive's entries and bounds, the system structure description,
/// parameter sets and mappings. A package that loads is not run.
pub fn ssp(data: &[u8]) {
    let path = std::env::temp_dir().join(format!("tandem-fuzz-{}.ssp", std::process::id()));
    if std::fs::write(&path, data).is_ok() {
        let _ = tandem_cosim::ssp::load(&path, tandem_cosim::Loading::default());
    }
    let _ = std::fs::remove_file(&path);
}

/// A DBC file's text; when it loads, every signal of every message is
/// decoded from and encoded into a payload made of the same bytes.
pub fn dbc(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(dbc) = Dbc::parse(text, "fuzz.dbc") else {
        return;
    };
    let mut payload = [0u8; 64];
    for (p, b) in payload.iter_mut().zip(data.iter().rev()) {
        *p = *b;
    }
    for message in dbc.messages() {
        let payload = &mut payload[..message.len.min(64)];
        for signal in &message.signals {
            let value = signal.decode(payload);
            message.carries(signal, payload);
            signal.encode(value, payload);
            signal.encode(f64::NAN, payload);
            signal.encode(f64::MAX, payload);
        }
    }
}

/// A candump log, read to its end or its first bad line.
pub fn candump(data: &[u8]) {
    let mut reader = CandumpReader::new(Cursor::new(data), "fuzz.log");
    while let Some(Ok(_)) = reader.next_entry() {}
}

/// A Vector ASC log, read to its end or its first bad line.
pub fn asc(data: &[u8]) {
    let mut reader = AscReader::new(Cursor::new(data), "fuzz.asc");
    while let Some(Ok(_)) = reader.next_entry() {}
}

/// A Vector BLF log, read to its end or its first damaged object.
pub fn blf(data: &[u8]) {
    if let Ok(mut reader) = BlfReader::new(Cursor::new(data), "fuzz.blf") {
        while let Some(Ok(_)) = reader.next_entry() {}
    }
}

/// An MDF4 bus log, read to its end or its first damaged block.
pub fn mf4(data: &[u8]) {
    if let Ok(mut reader) = Mf4Reader::new(data, "fuzz.mf4") {
        while let Some(Ok(_)) = reader.next_entry() {}
    }
}

/// Bytes from an SLCAN adapter, fed to the line decoder one by one, and
/// the whole input as one line.
pub fn slcan(data: &[u8]) {
    let mut decoder = Decoder::new();
    for &byte in data {
        let _ = decoder.push(byte);
    }
    let _ = parse_line(data);
}

/// A CAN-over-UDP datagram (python-can's msgpack layout).
pub fn udp(data: &[u8]) {
    let _ = tandem_bus::udp::decode(data);
}

/// An ISO-TP node fed a session: the first byte picks the configuration
/// (CAN FD, extended addressing, padding, TX_DL), the next two the block
/// size and STmin it asks; then records of an operation byte and a length
/// byte: a frame of that many bytes from the peer (the bytes that follow),
/// a message to send, time passing (then timeouts), or the frames due. No
/// frame sent may exceed TX_DL or a message `max_len`.
pub fn isotp(data: &[u8]) {
    use tandem_can::{CanFrame, CanId};
    use tandem_uds::isotp::{Addressing, Config, Event, Machine};
    let [select, block_size, st_min, rest @ ..] = data else {
        return;
    };
    let mut rest: &[u8] = rest;
    let fd = select & 1 != 0;
    let (tx, rx) = (CanId::Standard(0x7E0), CanId::Standard(0x7E8));
    let config = Config {
        addressing: if select & 2 != 0 {
            Addressing::Extended { tx: 1, rx: 2 }
        } else {
            Addressing::Normal
        },
        padding: (select & 4 != 0).then_some(0xAA),
        fd,
        tx_dl: if fd {
            [8, 12, 32, 64][usize::from(select >> 3 & 3)]
        } else {
            8
        },
        block_size: *block_size,
        st_min: if *st_min <= 0x7F { *st_min } else { 0xF1 },
        max_len: 300,
        ..Config::classic(tx, rx)
    };
    let Ok(mut machine) = Machine::new(config) else {
        return;
    };
    let mut now = 0u64;
    let payload = [0x5Au8; 300];
    while let [op, len, tail @ ..] = rest {
        let len = usize::from(*len);
        rest = tail;
        match op & 3 {
            0 => {
                let take = len.min(64).min(rest.len());
                let (bytes, tail) = rest.split_at(take);
                rest = tail;
                let frame = if take <= 8 {
                    CanFrame::data(rx, bytes)
                } else {
                    let fd_len = tandem_can::frame::FD_LENGTHS
                        .into_iter()
                        .filter(|&l| l <= take)
                        .max()
                        .unwrap_or(0);
                    CanFrame::fd(rx, &bytes[..fd_len], false, false)
                };
                if let Ok(frame) = frame {
                    if let Some(Event::Received(n)) = machine.on_frame(&frame, now) {
                        assert!(n <= 300 && machine.message().len() == n);
                    }
                }
            }
            1 => {
                let _ = machine.send(&payload[..(len * 3).min(300)]);
            }
            2 => {
                now += len as u64 * 10_000_000;
                while machine.expire(now).is_some() {}
            }
            _ => {
                while let Some(frame) = machine.transmit(now) {
                    assert!(frame.len() <= config.tx_dl.max(8), "frame beyond TX_DL");
                }
            }
        }
    }
}

/// A DCP datagram: decoded; a PDU that decodes encodes back to the same
/// bytes; a data PDU's payload read as every data type and as CAN frames
/// (frames that read encode back to the same bytes); and the same bytes
/// read as a DCP slave description.
pub fn dcp(data: &[u8]) {
    use tandem_dcp::pdu::Pdu;
    use tandem_dcp::types::DataType;
    if let Ok(pdu) = Pdu::read(data) {
        let mut out = Vec::new();
        pdu.write(&mut out);
        assert_eq!(out, data, "a decoded PDU encodes back to other bytes");
        if let Pdu::Data { payload, .. } = pdu {
            let mut values = [0.0; 8];
            for &t in DataType::ALL {
                let _ = tandem_dcp::values::decode(t, payload, &mut values);
            }
            if let Ok((frames, _)) = tandem_dcp::frames::value(payload) {
                let mut again = Vec::new();
                if tandem_dcp::frames::decode(frames, &mut |f| tandem_dcp::frames::encode(&f, &mut again)).is_ok() {
                    assert_eq!(again, frames, "frames that read encode back to other bytes");
                }
            }
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = tandem_dcp::description::Description::read(text);
    }
}

/// A line of the serial `name=value` protocol, with every field read.
pub fn serial_line(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(record) = tandem_bus::serial_lines::parse_line(text) {
        let _ = record.time();
        for field in record.fields() {
            let _ = field;
        }
    }
}
