//! The frames an out-of-process instance and its parent exchange over
//! their socket: a little-endian `u32` length, then the frame. A request is
//! an [`Op`] and its arguments; a reply is [`OK`] or [`FAILED`], the
//! child's warnings so far and the messages the FMU logged during the
//! call, then the results or the error; [`CRASH`] is what the child's
//! crash handler writes before it dies (the signal and the FMI function
//! that was running). A request marked [`DEFERRED`] (a setter) gets no
//! reply of its own: it goes with the next request, in the same write,
//! and its error, if any, is that request's reply (the calls after it not
//! made, as a failed call stops a sequence in process). Buffers are kept
//! and reused: after the first calls of an instance nothing is allocated
//! unless the FMU logs or fails.

use std::io::{self, Read, Write};

use crate::description::Numeric;
use crate::error::{FmuError, Status};
use crate::{ffi2, ffi3};

/// A reply: the call succeeded.
pub(crate) const OK: u8 = 0;
/// A reply: the call failed; an error follows.
pub(crate) const FAILED: u8 = 1;
/// Written by the child's crash handler: the signal and the FMI function.
pub(crate) const CRASH: u8 = 2;
/// Set in a request's [`Op`] byte: no reply of its own.
pub(crate) const DEFERRED: u8 = 0x80;

/// The largest frame read: a corrupted length is an error, not an
/// allocation of gigabytes.
pub(crate) const MAX_FRAME: usize = 256 << 20;

/// What a request asks the child to do: one method of the instance traits.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// Open the FMU and instantiate it: the interface, the FMU file and its
    /// unpacked folder.
    Hello,
    EnterInitialization,
    ExitInitialization,
    GetReal,
    SetReal,
    SetInteger,
    SetBoolean,
    GetState,
    SetState,
    FreeState,
    SetTime,
    SetContinuousStates,
    GetContinuousStates,
    GetDerivatives,
    GetEventIndicators,
    EnterEventMode,
    UpdateDiscreteStates,
    EnterContinuousTimeMode,
    CompletedIntegratorStep,
    DoStep,
    SerializedSize,
    SerializeState,
    DeserializeState,
    /// Free the instance and exit.
    Free,
    GetNumbers,
    SetNumbers,
    GetText,
    SetText,
}

impl Op {
    const ALL: [Op; 28] = [
        Op::Hello,
        Op::EnterInitialization,
        Op::ExitInitialization,
        Op::GetReal,
        Op::SetReal,
        Op::SetInteger,
        Op::SetBoolean,
        Op::GetState,
        Op::SetState,
        Op::FreeState,
        Op::SetTime,
        Op::SetContinuousStates,
        Op::GetContinuousStates,
        Op::GetDerivatives,
        Op::GetEventIndicators,
        Op::EnterEventMode,
        Op::UpdateDiscreteStates,
        Op::EnterContinuousTimeMode,
        Op::CompletedIntegratorStep,
        Op::DoStep,
        Op::SerializedSize,
        Op::SerializeState,
        Op::DeserializeState,
        Op::Free,
        Op::GetNumbers,
        Op::SetNumbers,
        Op::GetText,
        Op::SetText,
    ];

    /// The operation of the code `byte` (without [`DEFERRED`]).
    pub(crate) fn of(byte: u8) -> Option<Op> {
        Op::ALL.get((byte & !DEFERRED) as usize).copied()
    }

    /// What the request does, for a report that cannot name the FMI
    /// function (the child was killed without a word).
    pub(crate) fn doing(self) -> &'static str {
        match self {
            Op::Hello => "loading and instantiating the FMU",
            Op::EnterInitialization => "entering initialization mode",
            Op::ExitInitialization => "leaving initialization mode",
            Op::GetReal | Op::GetNumbers | Op::GetText => "reading variables",
            Op::SetReal | Op::SetInteger | Op::SetBoolean | Op::SetNumbers | Op::SetText => "setting variables",
            Op::GetState | Op::SetState | Op::FreeState => "saving or restoring its state",
            Op::SerializedSize | Op::SerializeState | Op::DeserializeState => "serializing or deserializing its state",
            Op::SetTime | Op::SetContinuousStates => "setting time and states",
            Op::GetContinuousStates => "reading the states",
            Op::GetDerivatives => "computing the derivatives",
            Op::GetEventIndicators => "computing the event indicators",
            Op::EnterEventMode | Op::UpdateDiscreteStates | Op::EnterContinuousTimeMode => "handling an event",
            Op::CompletedIntegratorStep => "completing an integrator step",
            Op::DoStep => "a step",
            Op::Free => "terminating and freeing the instance",
        }
    }
}

/// The code of a numeric type on the wire.
pub(crate) fn numeric_code(ty: Numeric) -> u8 {
    Numeric::ALL.iter().position(|&n| n == ty).unwrap_or(0) as u8
}

/// The numeric type of the code `byte`.
pub(crate) fn numeric_of(byte: u8) -> io::Result<Numeric> {
    Numeric::ALL
        .get(byte as usize)
        .copied()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "unknown numeric type"))
}

/// The name of an FMI function as a static string (errors hold those),
/// from the functions this importer knows.
pub(crate) fn fmi_function(name: &str) -> &'static str {
    [
        ffi2::Common::NAMES,
        ffi2::ModelExchange::NAMES,
        ffi2::CoSimulation::NAMES,
        ffi2::States::NAMES,
        ffi2::Serialization::NAMES,
        ffi3::Common::NAMES,
        ffi3::ModelExchange::NAMES,
        ffi3::CoSimulation::NAMES,
        ffi3::States::NAMES,
        ffi3::Serialization::NAMES,
    ]
    .into_iter()
    .flatten()
    .find(|known| **known == name)
    .copied()
    .unwrap_or("an FMI function")
}

/// Frames being written, in a buffer kept between them: each
/// [`Writer::begin`] starts one, [`Writer::send`] writes all at once.
#[derive(Default)]
pub(crate) struct Writer {
    buf: Vec<u8>,
    /// Where the frame being written starts.
    open: Option<usize>,
}

impl Writer {
    /// Starts a frame with `tag` (an [`Op`] or a reply kind), after those
    /// not yet sent.
    pub(crate) fn begin(&mut self, tag: u8) -> &mut Self {
        self.close();
        self.open = Some(self.buf.len());
        self.buf.extend_from_slice(&[0; 4]);
        self.buf.push(tag);
        self
    }

    /// Ends the frame being written: its length goes in front.
    fn close(&mut self) {
        if let Some(start) = self.open.take() {
            let length = (self.buf.len() - start - 4) as u32;
            self.buf[start..start + 4].copy_from_slice(&length.to_le_bytes());
        }
    }

    /// The bytes of the frames not yet sent.
    pub(crate) fn pending(&self) -> usize {
        self.buf.len()
    }

    /// Appends a byte.
    pub(crate) fn u8(&mut self, value: u8) -> &mut Self {
        self.buf.push(value);
        self
    }

    /// Appends a `u32`.
    pub(crate) fn u32(&mut self, value: u32) -> &mut Self {
        self.buf.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// Appends a `u64`.
    pub(crate) fn u64(&mut self, value: u64) -> &mut Self {
        self.buf.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// Appends an `i32`.
    pub(crate) fn i32(&mut self, value: i32) -> &mut Self {
        self.buf.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// Appends an `f64`.
    pub(crate) fn f64(&mut self, value: f64) -> &mut Self {
        self.buf.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// Appends an optional `f64`.
    pub(crate) fn opt_f64(&mut self, value: Option<f64>) -> &mut Self {
        self.u8(value.is_some() as u8).f64(value.unwrap_or(0.0))
    }

    /// Appends a count and the values.
    pub(crate) fn f64s(&mut self, values: &[f64]) -> &mut Self {
        self.u32(values.len() as u32);
        for v in values {
            self.f64(*v);
        }
        self
    }

    /// Appends a count and the values.
    pub(crate) fn u32s(&mut self, values: &[u32]) -> &mut Self {
        self.u32(values.len() as u32);
        for v in values {
            self.u32(*v);
        }
        self
    }

    /// Appends a length and the bytes.
    pub(crate) fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        self.u32(bytes.len() as u32);
        self.buf.extend_from_slice(bytes);
        self
    }

    /// Appends an optional string.
    pub(crate) fn opt_text(&mut self, text: Option<&str>) -> &mut Self {
        self.u8(text.is_some() as u8).bytes(text.unwrap_or("").as_bytes())
    }

    /// Writes the frames to `out`, in one write.
    pub(crate) fn send(&mut self, out: &mut impl Write) -> io::Result<()> {
        self.close();
        let written = out.write_all(&self.buf);
        self.buf.clear();
        written
    }
}

/// Frames read from a stream, through a buffer kept between frames.
#[derive(Default)]
pub(crate) struct Inbox {
    buf: Vec<u8>,
    /// The unread bytes are `buf[start..end]`.
    start: usize,
    end: usize,
}

impl Inbox {
    /// The next frame from `input`; `None` at the end of the stream
    /// between frames.
    pub(crate) fn receive(&mut self, input: &mut impl Read) -> io::Result<Option<Frame<'_>>> {
        loop {
            let unread = &self.buf[self.start..self.end];
            if unread.len() >= 4 {
                let length = u32::from_le_bytes([unread[0], unread[1], unread[2], unread[3]]) as usize;
                if length > MAX_FRAME {
                    return Err(invalid(format!(
                        "a frame of {length} bytes, more than the {MAX_FRAME} allowed"
                    )));
                }
                if unread.len() >= 4 + length {
                    let frame = self.start + 4..self.start + 4 + length;
                    self.start = frame.end;
                    return Ok(Some(Frame {
                        bytes: &self.buf[frame],
                        at: 0,
                    }));
                }
                if self.buf.len() < 4 + length {
                    self.buf.resize(4 + length, 0);
                }
            }
            // Room for more: the unread bytes first, then what comes.
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.buf.len() < self.end + 4096 {
                self.buf.resize(self.end + 4096, 0);
            }
            let read = input.read(&mut self.buf[self.end..])?;
            if read == 0 {
                return if self.end == 0 {
                    Ok(None)
                } else {
                    Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the stream ended inside a frame",
                    ))
                };
            }
            self.end += read;
        }
    }
}

/// An error of a frame that does not read as it should.
fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// A frame being read.
pub(crate) struct Frame<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Frame<'_> {
    /// The next `n` bytes.
    fn take(&mut self, n: usize) -> io::Result<&[u8]> {
        let end = self.at.checked_add(n).filter(|&end| end <= self.bytes.len());
        let end = end.ok_or_else(|| invalid(format!("a frame of {} bytes ends early", self.bytes.len())))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    /// Reads a byte.
    pub(crate) fn u8(&mut self) -> io::Result<u8> {
        Ok(self.take(1)?[0])
    }

    /// Reads a `u32`.
    pub(crate) fn u32(&mut self) -> io::Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    /// Reads a `u64`.
    pub(crate) fn u64(&mut self) -> io::Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    /// Reads an `i32`.
    pub(crate) fn i32(&mut self) -> io::Result<i32> {
        Ok(i32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    /// Reads an `f64`.
    pub(crate) fn f64(&mut self) -> io::Result<f64> {
        Ok(f64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    /// Reads an optional `f64`.
    pub(crate) fn opt_f64(&mut self) -> io::Result<Option<f64>> {
        let some = self.u8()? != 0;
        let value = self.f64()?;
        Ok(some.then_some(value))
    }

    /// Reads a count of values (checked against what the frame holds).
    fn count(&mut self, size: usize) -> io::Result<usize> {
        let n = self.u32()? as usize;
        if n * size > self.bytes.len() - self.at {
            return Err(invalid(format!(
                "{n} values announced in a frame of {} bytes",
                self.bytes.len()
            )));
        }
        Ok(n)
    }

    /// Reads values into `values`, whose length must be the count sent.
    pub(crate) fn f64s_into(&mut self, values: &mut [f64]) -> io::Result<()> {
        let n = self.count(8)?;
        if n != values.len() {
            return Err(invalid(format!("{n} values, {} expected", values.len())));
        }
        for v in values {
            *v = self.f64()?;
        }
        Ok(())
    }

    /// Reads values into `values`, replacing what it held.
    pub(crate) fn f64s_to(&mut self, values: &mut Vec<f64>) -> io::Result<()> {
        let n = self.count(8)?;
        values.clear();
        for _ in 0..n {
            values.push(self.f64()?);
        }
        Ok(())
    }

    /// Reads values into `values`, replacing what it held.
    pub(crate) fn u32s_to(&mut self, values: &mut Vec<u32>) -> io::Result<()> {
        let n = self.count(4)?;
        values.clear();
        for _ in 0..n {
            values.push(self.u32()?);
        }
        Ok(())
    }

    /// Reads a length and the bytes.
    pub(crate) fn bytes(&mut self) -> io::Result<&[u8]> {
        let n = self.count(1)?;
        self.take(n)
    }

    /// Reads a string.
    pub(crate) fn text(&mut self) -> io::Result<String> {
        Ok(String::from_utf8_lossy(self.bytes()?).into_owned())
    }

    /// Reads an optional string.
    pub(crate) fn opt_text(&mut self) -> io::Result<Option<String>> {
        let some = self.u8()? != 0;
        let text = self.text()?;
        Ok(some.then_some(text))
    }
}

/// Error codes: the variants of [`FmuError`] an instance's calls give,
/// sent with their fields; any other is sent as its text.
const TEXT: u8 = 0;
const CALL: u8 = 1;
const INSTANTIATE: u8 = 2;
const UNUSABLE: u8 = 3;
const CANNOT_ROLL_BACK: u8 = 4;
const CANNOT_SERIALIZE: u8 = 5;

/// Writes `error`.
pub(crate) fn write_error(w: &mut Writer, error: &FmuError) {
    match error {
        FmuError::Call {
            call,
            status,
            variables,
            log,
            ..
        } => {
            w.u8(CALL).bytes(call.as_bytes()).i32(status_code(*status));
            w.u32(variables.len() as u32);
            for v in variables {
                w.bytes(v.as_bytes());
            }
            w.opt_text(log.as_deref());
        }
        FmuError::Instantiate { call, log, .. } => {
            w.u8(INSTANTIATE).bytes(call.as_bytes()).opt_text(log.as_deref());
        }
        FmuError::Unusable {
            call, after, status, ..
        } => {
            w.u8(UNUSABLE)
                .bytes(call.as_bytes())
                .bytes(after.as_bytes())
                .i32(status_code(*status));
        }
        FmuError::CannotRollBack { .. } => {
            w.u8(CANNOT_ROLL_BACK);
        }
        FmuError::CannotSerialize { .. } => {
            w.u8(CANNOT_SERIALIZE);
        }
        other => {
            w.u8(TEXT).bytes(other.to_string().as_bytes());
        }
    }
}

/// Reads an error [`write_error`] wrote, of the FMU named `fmu`.
pub(crate) fn read_error(frame: &mut Frame<'_>, fmu: &str) -> io::Result<FmuError> {
    let fmu = fmu.to_string();
    let name = |frame: &mut Frame<'_>| -> io::Result<&'static str> {
        Ok(fmi_function(&String::from_utf8_lossy(frame.bytes()?)))
    };
    Ok(match frame.u8()? {
        CALL => {
            let call = name(frame)?;
            let status = Status::from_code(frame.i32()?);
            let n = frame.count(4)?;
            let variables = (0..n).map(|_| frame.text()).collect::<io::Result<Vec<_>>>()?;
            FmuError::Call {
                fmu,
                call,
                status,
                variables,
                log: frame.opt_text()?,
            }
        }
        INSTANTIATE => FmuError::Instantiate {
            fmu,
            call: name(frame)?,
            log: frame.opt_text()?,
        },
        UNUSABLE => FmuError::Unusable {
            fmu,
            call: name(frame)?,
            after: name(frame)?,
            status: Status::from_code(frame.i32()?),
        },
        CANNOT_ROLL_BACK => FmuError::CannotRollBack { fmu },
        CANNOT_SERIALIZE => FmuError::CannotSerialize { fmu },
        _ => FmuError::Isolated { message: frame.text()? },
    })
}

/// The C code of a status.
fn status_code(status: Status) -> i32 {
    match status {
        Status::Ok => 0,
        Status::Warning => 1,
        Status::Discard => 2,
        Status::Error => 3,
        Status::Fatal => 4,
        Status::Pending => 5,
        Status::Unknown(code) => code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_read_back_as_written_in_any_pieces() {
        let mut w = Writer::default();
        let mut stream = Vec::new();
        // Two frames in one write.
        w.begin(Op::GetReal as u8 | DEFERRED)
            .u32s(&[1, 2])
            .f64s(&[0.5, -1.0])
            .opt_f64(None);
        w.begin(OK).opt_text(Some("é")).i32(-3).u64(7);
        w.send(&mut stream).unwrap();
        assert_eq!(w.pending(), 0);
        // A reader that hands out 3 bytes at a time.
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = buf.len().min(3).min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut input = Trickle(&stream);
        let mut inbox = Inbox::default();
        let mut frame = inbox.receive(&mut input).unwrap().unwrap();
        assert_eq!(Op::of(frame.u8().unwrap()), Some(Op::GetReal));
        let (mut vrs, mut values) = (Vec::new(), Vec::new());
        frame.u32s_to(&mut vrs).unwrap();
        frame.f64s_to(&mut values).unwrap();
        assert_eq!((vrs, values), (vec![1, 2], vec![0.5, -1.0]));
        assert_eq!(frame.opt_f64().unwrap(), None);
        let mut frame = inbox.receive(&mut input).unwrap().unwrap();
        assert_eq!(frame.u8().unwrap(), OK);
        assert_eq!(frame.opt_text().unwrap().as_deref(), Some("é"));
        assert_eq!((frame.i32().unwrap(), frame.u64().unwrap()), (-3, 7));
        assert!(frame.u8().is_err(), "past the end");
        assert!(inbox.receive(&mut input).unwrap().is_none());
    }

    #[test]
    fn bad_frames_are_errors() {
        let mut inbox = Inbox::default();
        let huge = (MAX_FRAME as u32 + 1).to_le_bytes();
        assert!(inbox.receive(&mut &huge[..]).is_err());
        let mut inbox = Inbox::default();
        let cut = [5, 0, 0, 0, 1, 2];
        assert!(inbox.receive(&mut &cut[..]).is_err());
        let mut w = Writer::default();
        let mut stream = Vec::new();
        // A count of a billion values in a frame of a few bytes.
        w.begin(OK).u32(1 << 30);
        w.send(&mut stream).unwrap();
        let mut inbox = Inbox::default();
        let mut frame = inbox.receive(&mut &stream[..]).unwrap().unwrap();
        frame.u8().unwrap();
        assert!(frame.f64s_to(&mut Vec::new()).is_err());
    }

    #[test]
    fn errors_read_back_as_written() {
        let errors = [
            FmuError::Call {
                fmu: "m".into(),
                call: "fmi2GetReal",
                status: Status::Discard,
                variables: vec!["x".into(), "y".into()],
                log: Some("logStatusDiscard: out of range".into()),
            },
            FmuError::Instantiate {
                fmu: "m".into(),
                call: "fmi3InstantiateModelExchange",
                log: None,
            },
            FmuError::Unusable {
                fmu: "m".into(),
                call: "fmi2DoStep",
                after: "fmi2SetReal",
                status: Status::Error,
            },
            FmuError::CannotRollBack { fmu: "m".into() },
            FmuError::CannotSerialize { fmu: "m".into() },
            FmuError::OncePerProcess { fmu: "m".into() },
        ];
        for error in errors {
            let mut w = Writer::default();
            let mut stream = Vec::new();
            write_error(w.begin(FAILED), &error);
            w.send(&mut stream).unwrap();
            let mut inbox = Inbox::default();
            let mut frame = inbox.receive(&mut &stream[..]).unwrap().unwrap();
            frame.u8().unwrap();
            let read = read_error(&mut frame, "m").unwrap();
            assert_eq!(read.to_string(), error.to_string());
        }
    }
}
