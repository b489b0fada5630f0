//! Errors of opening an FMU and of calling it, each naming the place (the
//! FMU file, the line of `modelDescription.xml`, the variable, the FMI
//! call) and what to do about it.

use std::fmt;
use std::path::PathBuf;

/// The status an FMI function returned (`fmi2Status` / `fmi3Status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// All well.
    Ok,
    /// Done, with something to report in the log.
    Warning,
    /// The FMU could not do it (a step too long, a value out of its domain);
    /// it is still usable.
    Discard,
    /// The instance is unusable; only freeing it is allowed.
    Error,
    /// Every instance of the FMU is unusable.
    Fatal,
    /// An asynchronous FMI 2 step is still running.
    Pending,
    /// A value outside the standard's statuses.
    Unknown(i32),
}

impl Status {
    /// The status of the C enum value `code` (the same numbering in FMI 2 and 3).
    pub fn from_code(code: i32) -> Status {
        match code {
            0 => Status::Ok,
            1 => Status::Warning,
            2 => Status::Discard,
            3 => Status::Error,
            4 => Status::Fatal,
            5 => Status::Pending,
            other => Status::Unknown(other),
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Ok => f.write_str("OK"),
            Status::Warning => f.write_str("Warning"),
            Status::Discard => f.write_str("Discard"),
            Status::Error => f.write_str("Error"),
            Status::Fatal => f.write_str("Fatal"),
            Status::Pending => f.write_str("Pending"),
            Status::Unknown(code) => write!(f, "the unknown status {code}"),
        }
    }
}

/// Everything that can go wrong opening, instantiating or calling an FMU.
#[derive(Debug, thiserror::Error)]
pub enum FmuError {
    /// The FMU file (or the directory it unpacks into) could not be read or written.
    #[error("FMU \"{}\": cannot {action}: {source}\n  help: check that the file exists and is readable, and that the temporary directory has room", file.display())]
    Io {
        /// The FMU file.
        file: PathBuf,
        /// What was being done.
        action: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The FMU is not a usable ZIP archive, or breaks a bound on its contents.
    #[error("FMU \"{}\": {message}\n  help: {help}", file.display())]
    Archive {
        /// The FMU file.
        file: PathBuf,
        /// What is wrong.
        message: String,
        /// What to do about it.
        help: String,
    },
    /// `modelDescription.xml` is malformed or breaks the standard.
    #[error("FMU \"{}\": modelDescription.xml:{line}:{column}: {message}\n  help: {help}", file.display())]
    Description {
        /// The FMU file.
        file: PathBuf,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What is wrong.
        message: String,
        /// What to do about it.
        help: String,
    },
    /// The FMU has no binary for this platform.
    #[error("FMU \"{}\": no binary \"{expected}\" for this platform; the FMU has binaries for: {}\n  help: export the FMU for this platform ({platform}), or build its sources for it", file.display(), if found.is_empty() { "no platform at all".to_string() } else { found.join(", ") })]
    MissingBinary {
        /// The FMU file.
        file: PathBuf,
        /// The path inside the FMU that was looked for.
        expected: String,
        /// The FMI platform folder of this machine.
        platform: String,
        /// The platform folders under `binaries/` the FMU does have.
        found: Vec<String>,
    },
    /// The FMU's binary could not be loaded; the message gives the
    /// loader's reason (`dlerror()`: an undefined symbol, a file that is
    /// not a shared library) and the fix for it.
    #[error("FMU \"{}\": cannot load \"{library}\": {}\n  help: {}", file.display(), load_reason(source), load_help(source))]
    Load {
        /// The FMU file.
        file: PathBuf,
        /// The binary's path inside the FMU.
        library: String,
        /// The loader's error.
        source: libloading::Error,
    },
    /// The FMU's binary lacks a function of the FMI interface it declares.
    #[error("FMU \"{}\": the binary \"{library}\" does not export {symbol}, which the {interface} interface needs\n  help: the binary does not implement the interface its modelDescription.xml declares; re-export the FMU", file.display())]
    MissingSymbol {
        /// The FMU file.
        file: PathBuf,
        /// The binary's path inside the FMU.
        library: String,
        /// The missing function.
        symbol: String,
        /// `Model Exchange` or `Co-Simulation`.
        interface: &'static str,
    },
    /// The FMU does not offer the interface asked for.
    #[error("FMU \"{fmu}\" has no {wanted} interface (it has {})\n  help: {help}", if available.is_empty() { "none".to_string() } else { available.join(" and ") })]
    NoInterface {
        /// The model's name.
        fmu: String,
        /// The interface asked for.
        wanted: &'static str,
        /// The interfaces it has.
        available: Vec<&'static str>,
        /// What to do about it.
        help: &'static str,
    },
    /// An FMI function returned a status other than OK or Warning.
    #[error("FMU \"{fmu}\": {call}{} returned {status}: {}\n  help: {}", variables_of(variables), log_or_nothing(log), help_for(*status))]
    Call {
        /// The model's name.
        fmu: String,
        /// The FMI function, e.g. `fmi2DoStep`.
        call: &'static str,
        /// What it returned.
        status: Status,
        /// The variables the call was about, when it was about some.
        variables: Vec<String>,
        /// The FMU's last log message, when it logged one.
        log: Option<String>,
    },
    /// Instantiation returned no instance.
    #[error("FMU \"{fmu}\": {call} returned no instance: {}\n  help: check that the FMU's resources are intact and that its instantiationToken/guid matches its binary", log_or_nothing(log))]
    Instantiate {
        /// The model's name.
        fmu: String,
        /// `fmi2Instantiate`, `fmi3InstantiateModelExchange` or `fmi3InstantiateCoSimulation`.
        call: &'static str,
        /// The FMU's last log message, when it logged one.
        log: Option<String>,
    },
    /// An earlier call left the instance unusable, so this one was not made.
    #[error("FMU \"{fmu}\": {call} not called: the instance is unusable since {after} returned {status}\n  help: the first error says why; fix that and run again")]
    Unusable {
        /// The model's name.
        fmu: String,
        /// The call refused.
        call: &'static str,
        /// The earlier call.
        after: &'static str,
        /// What it returned.
        status: Status,
    },
    /// The FMU may be instantiated only once per process and already is.
    #[error("FMU \"{fmu}\" can be instantiated only once per process (canBeInstantiatedOnlyOncePerProcess) and already is\n  help: run it with a single instance (one integrator thread, no forked models), or in another process")]
    OncePerProcess {
        /// The model's name.
        fmu: String,
    },
    /// A name given to set a value is not a variable of the FMU.
    #[error("FMU \"{fmu}\" has no variable \"{name}\"{}\n  help: give the variable's name exactly as modelDescription.xml declares it, case included", near_names(near))]
    UnknownVariable {
        /// The model's name.
        fmu: String,
        /// The name given.
        name: String,
        /// Variables with similar names.
        near: Vec<String>,
    },
    /// A value of the wrong type was given for a variable.
    #[error("FMU \"{fmu}\": variable \"{name}\" is of type {expected}, not {given}\n  help: give it a value of type {expected}")]
    WrongType {
        /// The model's name.
        fmu: String,
        /// The variable.
        name: String,
        /// Its type in modelDescription.xml.
        expected: String,
        /// The type of the value given.
        given: &'static str,
    },
    /// A variable that cannot be set before initialisation was given a value.
    #[error("FMU \"{fmu}\": variable \"{name}\" cannot be set: {why}\n  help: set only parameters (causality \"parameter\", variability \"fixed\" or \"tunable\"), inputs, and states or outputs with initial=\"exact\" or \"approx\"")]
    NotSettable {
        /// The model's name.
        fmu: String,
        /// The variable.
        name: String,
        /// Why not.
        why: String,
    },
    /// A variable chosen to be recorded holds no number.
    #[error("FMU \"{fmu}\": variable \"{name}\" (modelDescription.xml line {line}) is a {kind}, which cannot be recorded or connected: runs carry numbers\n  help: record numeric variables (Real/Float64 ... UInt64, Boolean, Enumeration); a String or Binary can be set before the run")]
    NotRecordable {
        /// The model's name.
        fmu: String,
        /// The variable.
        name: String,
        /// Its type.
        kind: String,
        /// The line declaring it.
        line: u32,
    },
    /// A name or pattern chosen to be recorded matches no variable.
    #[error("FMU \"{fmu}\": no numeric variable is called or matches \"{pattern}\"{}\n  help: give names exactly as modelDescription.xml declares them, globs with * and ?, or outputs, states, derivatives, inputs, parameters, locals", near_names(near))]
    NoSuchSignals {
        /// The model's name.
        fmu: String,
        /// The name or pattern.
        pattern: String,
        /// Variables with similar names.
        near: Vec<String>,
    },
    /// A step the FMU discarded without asking to end the simulation.
    #[error("FMU \"{fmu}\" discarded the communication step from t = {t} s over {h} s (it reached t = {reached} s) and did not ask to terminate: {}\n  help: run with a shorter step (--step){}", log_or_nothing(log), if *variable { "" } else { "; the FMU cannot change its step (canHandleVariableCommunicationStepSize is false), so the step cannot be retried shorter" })]
    Discarded {
        /// The model's name.
        fmu: String,
        /// The step's start.
        t: f64,
        /// Its length.
        h: f64,
        /// How far the FMU got.
        reached: f64,
        /// Whether the FMU can take steps of other lengths.
        variable: bool,
        /// The FMU's last log message, when it logged one.
        log: Option<String>,
    },
    /// The FMU uses a feature this importer does not handle.
    #[error("FMU \"{fmu}\": {what}\n  help: {help}")]
    Unsupported {
        /// The model's name.
        fmu: String,
        /// What is not supported.
        what: String,
        /// What to do about it.
        help: &'static str,
    },
    /// The FMU asked to end the simulation.
    #[error("FMU \"{fmu}\" asked to terminate the simulation at t = {time} s: {}\n  help: the model reached the end of its validity (read its log message); stop the run before that time", log_or_nothing(log))]
    Terminated {
        /// The model's name.
        fmu: String,
        /// When it asked.
        time: f64,
        /// The FMU's last log message, when it logged one.
        log: Option<String>,
    },
    /// The event iteration at one instant did not settle.
    #[error("FMU \"{fmu}\": the event iteration at t = {time} s still asks for new discrete states after {rounds} rounds\n  help: the FMU's discrete equations re-trigger themselves; check its parameters")]
    EventIteration {
        /// The model's name.
        fmu: String,
        /// The instant.
        time: f64,
        /// Rounds taken.
        rounds: u32,
    },
    /// A state was asked of an FMU that cannot save and restore its state.
    #[error("FMU \"{fmu}\" cannot roll back: it does not declare canGetAndSetFMUstate\n  help: step it only forwards (no repeated macro steps), or export it with state saving")]
    CannotRollBack {
        /// The model's name.
        fmu: String,
    },
    /// A saved state was to be written as bytes, or read back, by an FMU
    /// that cannot serialize its state.
    #[error("FMU \"{fmu}\" cannot serialize its state: it does not declare canSerializeFMUstate (with canGetAndSetFMUstate)\n  help: export it with state serialization")]
    CannotSerialize {
        /// The model's name.
        fmu: String,
    },
    /// A saved state was given to an instance that did not save it, or
    /// after it was freed.
    #[error("FMU \"{fmu}\": the state given was saved by another instance, or freed\n  help: restore a state only into the instance that saved it, before freeing it")]
    ForeignState {
        /// The model's name.
        fmu: String,
    },
    /// A slice of the wrong length was given.
    #[error("FMU \"{fmu}\": {what}: {given} values given, {expected} expected\n  help: pass one value per variable of the list, in its order")]
    Length {
        /// The model's name.
        fmu: String,
        /// What the slice was for.
        what: &'static str,
        /// Its length.
        given: usize,
        /// The length wanted.
        expected: usize,
    },
    /// A Co-Simulation FMU with a fixed communication step was given another one.
    #[error("FMU \"{fmu}\" cannot change its communication step (canHandleVariableCommunicationStepSize is false): the first step was {first} s, this one {given} s\n  help: step it always by the same length")]
    StepSize {
        /// The model's name.
        fmu: String,
        /// The first step's length.
        first: f64,
        /// This step's length.
        given: f64,
    },
    /// The process an out-of-process instance ran in died (see
    /// [`crate::isolate`]).
    #[error("FMU \"{fmu}\": its process died during {call}: {how}\n  help: the FMU's own code crashed there; this process runs it out of process and goes on (the rows before are kept). Check the inputs and parameters it had, and report the crash to the FMU's author")]
    Died {
        /// The model's name.
        fmu: String,
        /// The FMI function that was running, or what was being done.
        call: String,
        /// How the process ended: the signal, or the exit status.
        how: String,
    },
    /// The process for an out-of-process instance could not be started.
    #[error("FMU \"{fmu}\": cannot run it in a process of its own: {message}\n  help: out-of-process loading starts {program} as a helper (`fmu-host`); check that it is there and runnable, or load the FMU in process (without isolation) if it is trusted")]
    Host {
        /// The model's name.
        fmu: String,
        /// What failed.
        message: String,
        /// The helper program.
        program: String,
    },
    /// An error an out-of-process instance reported that has no other form
    /// here (e.g. its binary does not load): its message as the child gave
    /// it.
    #[error("{message}")]
    Isolated {
        /// The child's message, which names the FMU and gives the fix.
        message: String,
    },
    /// A step from a time that is not finite, or of a length that is not
    /// positive and finite.
    #[error("FMU \"{fmu}\" cannot step from t = {t} s by {h} s\n  help: step from a finite time by a positive, finite length")]
    BadStep {
        /// The model's name.
        fmu: String,
        /// The step's start.
        t: f64,
        /// The step's length.
        h: f64,
    },
}

impl FmuError {
    /// The variable name given as a start value that this refuses (it is
    /// unknown, of another type, or takes no start value), if any.
    pub fn start_value_name(&self) -> Option<&str> {
        match self {
            FmuError::UnknownVariable { name, .. }
            | FmuError::WrongType { name, .. }
            | FmuError::NotSettable { name, .. } => Some(name),
            _ => None,
        }
    }

    /// The name or pattern given to record that this refuses (it matches
    /// nothing, or a variable that cannot be recorded), if any.
    pub fn signal_name(&self) -> Option<&str> {
        match self {
            FmuError::NoSuchSignals { pattern: name, .. } | FmuError::NotRecordable { name, .. } => Some(name),
            _ => None,
        }
    }

    /// The message without its help line, e.g. to name the place of a
    /// non-finite value.
    pub fn summary(&self) -> String {
        let text = self.to_string();
        match text.split_once("\n  help:") {
            Some((summary, _)) => summary.to_string(),
            None => text,
        }
    }
}

/// The loader's error with its cause: libloading's own text is only
/// "dlopen failed", the reason (`dlerror()`) is its source.
fn load_reason(error: &libloading::Error) -> String {
    let mut text = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(e) = cause {
        text.push_str(": ");
        text.push_str(&e.to_string());
        cause = e.source();
    }
    text
}

/// The symbol a loader's message says is undefined, if it says one is
/// (glibc: `undefined symbol: NAME`; macOS: `symbol not found ... '_NAME'`).
fn undefined_symbol(reason: &str) -> Option<&str> {
    let (_, rest) = reason
        .split_once("undefined symbol: ")
        .or_else(|| reason.split_once("symbol not found in flat namespace '"))?;
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// What to do about a binary that does not load, by the loader's reason.
fn load_help(error: &libloading::Error) -> String {
    let reason = load_reason(error);
    match undefined_symbol(&reason) {
        Some(symbol) if symbol.trim_start_matches('_').starts_with("Py") => format!(
            "the binary needs the Python library ({symbol} is one of its symbols): the FMU embeds Python, as FMUs \
             built by pythonfmu do, and expects the process to have libpython loaded. Preload the libpython of \
             the Python the FMU was built with (LD_PRELOAD=/path/to/libpython3.X.so.1.0 tandem ...; \
             `python3 -c \"import sysconfig as s; print(s.get_config_var('LIBDIR'), \
             s.get_config_var('LDLIBRARY'))\"` prints where it is) with the FMU's Python packages (pythonfmu) \
             installed there, or use an FMU compiled to native code"
        ),
        Some(symbol) => format!(
            "the binary needs {symbol}, which no library loaded provides: it was built against a library this \
             machine lacks or has in another version (ldd on the binary shows which); install that library or \
             re-export the FMU for this machine"
        ),
        None if reason.contains("ELF") || reason.contains("file too short") => {
            "the file is not a shared library of this platform (a binary for another platform put in this \
             platform's folder, or a damaged file): re-export the FMU for this platform"
                .to_string()
        }
        None => "the binary may be built for another platform or need libraries this machine lacks (ldd shows \
                 which)"
            .to_string(),
    }
}

/// `" (variables "a", "b")"`, or nothing when the call was about none.
fn variables_of(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => format!(" (variable \"{one}\")"),
        many => format!(" (variables {})", listed(&quoted(many))),
    }
}

/// The log message, or a note that there is none.
fn log_or_nothing(log: &Option<String>) -> &str {
    log.as_deref().unwrap_or("the FMU logged no message")
}

/// `"; did you mean "a" or "b"?"`, or nothing.
fn near_names(near: &[String]) -> String {
    match near {
        [] => String::new(),
        [one] => format!("; did you mean \"{one}\"?"),
        many => format!("; did you mean one of {}?", listed(&quoted(many))),
    }
}

/// The most names a message lists before it says how many more there are.
const LISTED: usize = 12;

/// `items` joined with `", "`, the first [`LISTED`] only.
pub(crate) fn listed(items: &[String]) -> String {
    let mut text = items.iter().take(LISTED).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > LISTED {
        text.push_str(&format!(" and {} more", items.len() - LISTED));
    }
    text
}

fn quoted(names: &[String]) -> Vec<String> {
    names.iter().map(|n| format!("\"{n}\"")).collect()
}

/// Advice for a failed call, by its status.
fn help_for(status: Status) -> &'static str {
    match status {
        Status::Discard => "the FMU could not do it with these values (a step too long, a value out of its domain): shorten the step or check the inputs",
        Status::Error => "the instance is unusable from here: check the inputs and parameters against the log message and run again",
        Status::Fatal => "the FMU is unusable in this process: check the inputs and parameters against the log message and run again",
        _ => "the FMU broke the FMI standard with this status; report it to the FMU's author",
    }
}
