//! The command processor: a state machine with no I/O that answers each
//! command packet (CTO) with a response or error packet, following ASAM
//! XCP 1.x Part 2 ("Protocol Layer Specification"), section 1.6, whose
//! layouts are cited per command below as "§1.6.x".

use crate::a2l::event_cycle;
use crate::daq::{self, Config, Link, Sampler, MAX_DAQ_LISTS, MAX_ENTRY_BYTES};
use crate::map::{Kind, Map, CHARACTERISTIC_BASE, MEASUREMENT_BASE, REFERENCE_PAGE, VALUE_BYTES, WORKING_PAGE};
use crate::packet::{pid, ErrorCode, MAX_CTO, MAX_DTO};

/// Command codes (§1.6, "command codes" table).
mod cmd {
    pub const CONNECT: u8 = 0xFF;
    pub const DISCONNECT: u8 = 0xFE;
    pub const GET_STATUS: u8 = 0xFD;
    pub const SYNCH: u8 = 0xFC;
    pub const GET_COMM_MODE_INFO: u8 = 0xFB;
    pub const GET_ID: u8 = 0xFA;
    pub const SET_MTA: u8 = 0xF6;
    pub const UPLOAD: u8 = 0xF5;
    pub const SHORT_UPLOAD: u8 = 0xF4;
    pub const DOWNLOAD: u8 = 0xF0;
    pub const SET_CAL_PAGE: u8 = 0xEB;
    pub const GET_CAL_PAGE: u8 = 0xEA;
    pub const COPY_CAL_PAGE: u8 = 0xE4;
    pub const SET_DAQ_PTR: u8 = 0xE2;
    pub const WRITE_DAQ: u8 = 0xE1;
    pub const SET_DAQ_LIST_MODE: u8 = 0xE0;
    pub const GET_DAQ_LIST_MODE: u8 = 0xDF;
    pub const START_STOP_DAQ_LIST: u8 = 0xDE;
    pub const START_STOP_SYNCH: u8 = 0xDD;
    pub const GET_DAQ_CLOCK: u8 = 0xDC;
    pub const GET_DAQ_PROCESSOR_INFO: u8 = 0xDA;
    pub const GET_DAQ_RESOLUTION_INFO: u8 = 0xD9;
    pub const GET_DAQ_EVENT_INFO: u8 = 0xD7;
    pub const FREE_DAQ: u8 = 0xD6;
    pub const ALLOC_DAQ: u8 = 0xD5;
    pub const ALLOC_ODT: u8 = 0xD4;
    pub const ALLOC_ODT_ENTRY: u8 = 0xD3;
}

/// Why a target refused a calibration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The value is outside what the parameter allows (`ERR_OUT_OF_RANGE`).
    OutOfRange,
    /// The change is not allowed, e.g. it would change the model's shape
    /// (`ERR_ACCESS_DENIED`).
    Denied,
    /// The target cannot take a change now (`ERR_CMD_BUSY`).
    Busy,
}

impl Refusal {
    fn code(self) -> ErrorCode {
        match self {
            Refusal::OutOfRange => ErrorCode::OutOfRange,
            Refusal::Denied => ErrorCode::AccessDenied,
            Refusal::Busy => ErrorCode::CmdBusy,
        }
    }
}

/// What the slave measures and calibrates: the runtime implements it.
pub trait Target {
    /// The latest value of measurement `index`.
    fn measure(&self, index: usize) -> f64;
    /// Asks to set characteristic `index` to `value`; `Ok` once the target
    /// has accepted it (it applies it at its next frame boundary).
    fn calibrate(&mut self, index: usize, value: f64) -> Result<(), Refusal>;
    /// The DAQ clock: the time DTOs are stamped with, in nanoseconds.
    fn clock_ns(&self) -> u64;
}

/// How the slave names itself to GET_ID.
#[derive(Clone, Debug, Default)]
pub struct Identity {
    /// The A2L file's name without path and extension (GET_ID type 1).
    pub a2l_name: String,
    /// The A2L text (GET_ID type 4, uploaded from the MTA).
    pub a2l: Vec<u8>,
}

/// Why a slave cannot be made.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SlaveError {
    /// The reference values do not match the map's characteristics.
    #[error("the reference page has {got} values but the map has {expected} characteristics; give one value per characteristic, in address order")]
    ReferenceLength {
        /// Characteristics in the map.
        expected: usize,
        /// Values given.
        got: usize,
    },
    /// The map has more events than an event channel number can name.
    #[error("the map has {0} events; XCP numbers at most 65535 event channels")]
    TooManyEvents(usize),
}

/// The memory transfer address: in the address space, or within a text
/// that GET_ID or GET_DAQ_EVENT_INFO made uploadable.
#[derive(Clone, Copy, Debug)]
enum Mta {
    Memory(u32),
    Text(usize),
}

type Reply = Result<(), ErrorCode>;

/// An XCP slave's command processor.
pub struct Slave<T> {
    target: T,
    measurements: usize,
    pages: [Vec<f64>; 2],
    ecu_page: u8,
    xcp_page: u8,
    identity: Identity,
    event_names: Vec<String>,
    event_periods: Vec<Option<u64>>,
    connected: bool,
    mta: Mta,
    text: Vec<u8>,
    config: Config,
    link: Link,
}

impl<T: Target> Slave<T> {
    /// A slave for `map`, measuring and calibrating `target`, with its
    /// characteristics' values as loaded in `reference`; and the sampler
    /// the real-time thread samples its DAQ lists with.
    pub fn new(
        map: &Map,
        target: T,
        identity: Identity,
        reference: Vec<f64>,
    ) -> Result<(Slave<T>, Sampler), SlaveError> {
        let (link, sampler) = daq::link();
        Ok((Slave::linked(map, target, identity, reference, link)?, sampler))
    }

    /// As [`Slave::new`], with the slave's end of rings made beforehand by
    /// [`daq::link`] (the sampler's end already given to the real-time
    /// thread).
    pub fn linked(
        map: &Map,
        target: T,
        identity: Identity,
        reference: Vec<f64>,
        link: Link,
    ) -> Result<Slave<T>, SlaveError> {
        let count = |kind| map.objects.iter().filter(|o| o.kind == kind).count();
        let characteristics = count(Kind::Characteristic);
        if reference.len() != characteristics {
            return Err(SlaveError::ReferenceLength {
                expected: characteristics,
                got: reference.len(),
            });
        }
        if map.events.len() > u16::MAX as usize {
            return Err(SlaveError::TooManyEvents(map.events.len()));
        }
        Ok(Slave {
            target,
            measurements: count(Kind::Measurement),
            pages: [reference.clone(), reference],
            ecu_page: WORKING_PAGE,
            xcp_page: WORKING_PAGE,
            identity,
            event_names: map.events.iter().map(|e| e.name.clone()).collect(),
            event_periods: map.events.iter().map(|e| e.period_ns).collect(),
            connected: false,
            mta: Mta::Memory(0),
            text: Vec::new(),
            config: Config::default(),
            link,
        })
    }

    /// Whether a master is connected.
    pub fn connected(&self) -> bool {
        self.connected
    }

    /// Whether any DAQ list runs.
    pub fn daq_running(&self) -> bool {
        self.config.running()
    }

    /// The target.
    pub fn target(&self) -> &T {
        &self.target
    }

    /// Characteristic `index` on `page` (0 working, 1 reference).
    pub fn characteristic(&self, page: u8, index: usize) -> Option<f64> {
        self.pages.get(page as usize)?.get(index).copied()
    }

    /// DAQ samples dropped because the DTO ring was full.
    pub fn overruns(&self) -> u64 {
        self.link.overruns()
    }

    /// Bytes of DTOs sampled and not yet taken by [`Slave::next_dto`].
    pub fn pending_bytes(&self) -> usize {
        self.link.pending_bytes()
    }

    /// Moves the next DTO packet into `out`; false when there is none.
    pub fn next_dto(&mut self, out: &mut Vec<u8>) -> bool {
        self.link.next_dto(out)
    }

    /// Answers one command packet: appends the response or error packet
    /// to `out`, or nothing (a command other than CONNECT while no master
    /// is connected gets no answer, §1.6.1.1). Any bytes are safe here.
    pub fn handle(&mut self, packet: &[u8], out: &mut Vec<u8>) {
        let Some(&code) = packet.first() else {
            return;
        };
        if !self.connected && code != cmd::CONNECT {
            return;
        }
        let start = out.len();
        out.push(pid::RES);
        let reply = if packet.len() > MAX_CTO {
            Err(ErrorCode::CmdSyntax)
        } else {
            self.command(code, packet, out)
        };
        if let Err(e) = reply {
            out.truncate(start);
            out.extend_from_slice(&[pid::ERR, e as u8]);
        }
    }

    /// The dispatcher: each command code to the function that answers it.
    fn command(&mut self, code: u8, p: &[u8], out: &mut Vec<u8>) -> Reply {
        match code {
            cmd::CONNECT => self.connect(p, out),
            cmd::DISCONNECT => self.disconnect(),
            cmd::GET_STATUS => self.get_status(out),
            cmd::SYNCH => Err(ErrorCode::CmdSynch),
            cmd::GET_COMM_MODE_INFO => get_comm_mode_info(out),
            cmd::GET_ID => self.get_id(p, out),
            cmd::SET_MTA => self.set_mta(p),
            cmd::UPLOAD => self.upload_command(p, out),
            cmd::SHORT_UPLOAD => self.short_upload(p, out),
            cmd::DOWNLOAD => self.download_command(p),
            cmd::SET_CAL_PAGE => self.set_cal_page(p),
            cmd::GET_CAL_PAGE => self.get_cal_page(p, out),
            cmd::COPY_CAL_PAGE => self.copy_cal_page(p),
            cmd::FREE_DAQ => self.free_daq(),
            cmd::ALLOC_DAQ => self.alloc_daq(p),
            cmd::ALLOC_ODT => self.alloc_odt(p),
            cmd::ALLOC_ODT_ENTRY => self.alloc_odt_entry(p),
            cmd::SET_DAQ_PTR => self.set_daq_ptr(p),
            cmd::WRITE_DAQ => self.write_daq(p),
            cmd::SET_DAQ_LIST_MODE => self.set_daq_list_mode(p),
            cmd::GET_DAQ_LIST_MODE => self.get_daq_list_mode(p, out),
            cmd::START_STOP_DAQ_LIST => self.start_stop_daq_list(p, out),
            cmd::START_STOP_SYNCH => self.start_stop_synch(p),
            cmd::GET_DAQ_CLOCK => self.get_daq_clock(out),
            cmd::GET_DAQ_PROCESSOR_INFO => self.get_daq_processor_info(out),
            cmd::GET_DAQ_RESOLUTION_INFO => get_daq_resolution_info(out),
            cmd::GET_DAQ_EVENT_INFO => self.get_daq_event_info(p, out),
            _ => Err(ErrorCode::CmdUnknown),
        }
    }

    /// CONNECT (§1.6.1.1): mode 0 (normal) only.
    fn connect(&mut self, p: &[u8], out: &mut Vec<u8>) -> Reply {
        need(p, 2)?;
        if p[1] != 0 {
            return Err(ErrorCode::OutOfRange);
        }
        self.connected = true;
        // RESOURCE: CAL/PAG (bit 0) and DAQ (bit 2); COMM_MODE_BASIC:
        // Intel byte order, byte granularity, OPTIONAL (bit 7).
        out.extend_from_slice(&[0x05, 0x80, MAX_CTO as u8]);
        out.extend_from_slice(&(MAX_DTO as u16).to_le_bytes());
        out.extend_from_slice(&[1, 1]);
        Ok(())
    }

    /// DISCONNECT (§1.6.1.2): DAQ stops with the session.
    fn disconnect(&mut self) -> Reply {
        self.stop_all()?;
        self.config.free();
        self.connected = false;
        Ok(())
    }

    /// GET_STATUS (§1.6.1.3): SESSION_STATUS (bit 6 DAQ_RUNNING),
    /// protection mask (nothing locked), reserved, session configuration
    /// id.
    fn get_status(&self, out: &mut Vec<u8>) -> Reply {
        let status = if self.config.running() { 0x40 } else { 0 };
        out.extend_from_slice(&[status, 0, 0, 0, 0]);
        Ok(())
    }

    /// GET_ID (§1.6.1.6): mode (bit 0: the id follows in this response),
    /// reserved u16, length u32, id bytes. Type 1 (the A2L's name) comes
    /// in the response; type 4 (the A2L file) is uploaded from the MTA;
    /// others are not available.
    fn get_id(&mut self, p: &[u8], out: &mut Vec<u8>) -> Reply {
        need(p, 2)?;
        let id: &[u8] = match p[1] {
            1 => self.identity.a2l_name.as_bytes(),
            4 => &self.identity.a2l,
            _ => &[],
        };
        let inline = p[1] == 1 && id.len() <= MAX_CTO - 8;
        out.push(u8::from(inline));
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&(id.len() as u32).to_le_bytes());
        if inline {
            out.extend_from_slice(id);
        } else {
            self.text = id.to_vec();
            self.mta = Mta::Text(0);
        }
        Ok(())
    }

    /// SET_MTA (§1.6.2.1): reserved u16, address extension, address u32.
    fn set_mta(&mut self, p: &[u8]) -> Reply {
        need(p, 8)?;
        if p[3] != 0 {
            return Err(ErrorCode::OutOfRange);
        }
        self.mta = Mta::Memory(u32_at(p, 4));
        Ok(())
    }

    /// UPLOAD (§1.6.2.3): the count of bytes, read from the MTA, which
    /// moves past them.
    fn upload_command(&mut self, p: &[u8], out: &mut Vec<u8>) -> Reply {
        need(p, 2)?;
        self.upload(p[1] as usize, out)
    }

    /// SHORT_UPLOAD (§1.6.2.4): count, reserved, extension, address u32:
    /// SET_MTA's fields where SET_MTA has them, then an UPLOAD.
    fn short_upload(&mut self, p: &[u8], out: &mut Vec<u8>) -> Reply {
        self.set_mta(p)?;
        self.upload(p[1] as usize, out)
    }

    /// DOWNLOAD (§1.6.3.1): count, then the bytes to write at the MTA.
    fn download_command(&mut self, p: &[u8]) -> Reply {
        need(p, 2)?;
        let n = p[1] as usize;
        if n == 0 || n > MAX_CTO - 2 {
            return Err(ErrorCode::OutOfRange);
        }
        need(p, 2 + n)?;
        self.download(&p[2..2 + n])
    }

    /// SET_CAL_PAGE (§1.6.4.1): mode (bit 0 ECU, bit 1 XCP, bit 7 all
    /// segments), segment, page.
    fn set_cal_page(&mut self, p: &[u8]) -> Reply {
        need(p, 4)?;
        let (mode, segment, page) = (p[1], p[2], p[3]);
        if mode & 0x03 == 0 || mode & 0x7C != 0 {
            return Err(ErrorCode::ModeNotValid);
        }
        if segment != 0 && mode & 0x80 == 0 {
            return Err(ErrorCode::SegmentNotValid);
        }
        if page > REFERENCE_PAGE {
            return Err(ErrorCode::PageNotValid);
        }
        if mode & 0x01 != 0 {
            self.apply_page(page)?;
        }
        if mode & 0x02 != 0 {
            self.xcp_page = page;
        }
        Ok(())
    }

    /// GET_CAL_PAGE (§1.6.4.2): mode (1 ECU or 2 XCP), segment; answer
    /// reserved, reserved, page.
    fn get_cal_page(&self, p: &[u8], out: &mut Vec<u8>) -> Reply {
        need(p, 3)?;
        if p[2] != 0 {
            return Err(ErrorCode::SegmentNotValid);
        }
        let page = match p[1] {
            0x01 => self.ecu_page,
            0x02 => self.xcp_page,
            _ => return Err(ErrorCode::ModeNotValid),
        };
        out.extend_from_slice(&[0, 0, page]);
        Ok(())
    }

    /// COPY_CAL_PAGE (§1.6.4.5): source segment and page, destination
    /// segment and page. The reference page cannot be written.
    fn copy_cal_page(&mut self, p: &[u8]) -> Reply {
        need(p, 5)?;
        if p[1] != 0 || p[3] != 0 {
            return Err(ErrorCode::SegmentNotValid);
        }
        if p[2] > REFERENCE_PAGE || p[4] > REFERENCE_PAGE {
            return Err(ErrorCode::PageNotValid);
        }
        if p[4] == REFERENCE_PAGE {
            return Err(ErrorCode::WriteProtected);
        }
        if p[2] != p[4] {
            if self.ecu_page == WORKING_PAGE {
                self.apply(&self.pages[REFERENCE_PAGE as usize].clone())?;
            }
            self.pages[WORKING_PAGE as usize] = self.pages[REFERENCE_PAGE as usize].clone();
        }
        Ok(())
    }

    /// FREE_DAQ (§1.6.5.2.1).
    fn free_daq(&mut self) -> Reply {
        self.stop_all()?;
        self.config.free();
        Ok(())
    }

    /// ALLOC_DAQ (§1.6.5.2.2): reserved, count u16.
    fn alloc_daq(&mut self, p: &[u8]) -> Reply {
        need(p, 4)?;
        self.idle()?;
        self.config.alloc_daq(u16_at(p, 2) as usize)
    }

    /// ALLOC_ODT (§1.6.5.2.3): reserved, list u16, count u8.
    fn alloc_odt(&mut self, p: &[u8]) -> Reply {
        need(p, 5)?;
        self.idle()?;
        self.config.alloc_odt(u16_at(p, 2) as usize, p[4] as usize)
    }

    /// ALLOC_ODT_ENTRY (§1.6.5.2.4): reserved, list u16, ODT u8, count u8.
    fn alloc_odt_entry(&mut self, p: &[u8]) -> Reply {
        need(p, 6)?;
        self.idle()?;
        self.config
            .alloc_odt_entry(u16_at(p, 2) as usize, p[4] as usize, p[5] as usize)
    }

    /// SET_DAQ_PTR (§1.6.5.1.2): reserved, list u16, ODT u8, entry u8.
    fn set_daq_ptr(&mut self, p: &[u8]) -> Reply {
        need(p, 6)?;
        self.config
            .set_pointer(u16_at(p, 2) as usize, p[4] as usize, p[5] as usize)
    }

    /// WRITE_DAQ (§1.6.5.1.3): bit offset (0xFF: whole bytes), size,
    /// extension, address u32.
    fn write_daq(&mut self, p: &[u8]) -> Reply {
        need(p, 8)?;
        if p[1] != 0xFF || p[3] != 0 {
            return Err(ErrorCode::OutOfRange);
        }
        self.config.write(p[2], u32_at(p, 4), self.measurements)
    }

    /// SET_DAQ_LIST_MODE (§1.6.5.1.4): mode (bit 1 STIM, bit 4 TIMESTAMP,
    /// bit 5 PID_OFF), list u16, event u16, prescaler, priority.
    fn set_daq_list_mode(&mut self, p: &[u8]) -> Reply {
        need(p, 8)?;
        let mode = p[1];
        if mode & !0x10 != 0 {
            return Err(ErrorCode::ModeNotValid);
        }
        let event = u16_at(p, 4);
        if event as usize >= self.event_names.len() {
            return Err(ErrorCode::OutOfRange);
        }
        self.config
            .set_mode(u16_at(p, 2) as usize, event, p[6], mode & 0x10 != 0)
    }

    /// GET_DAQ_LIST_MODE (§1.6.5.3.3): answer mode (bit 2 SELECTED, bit 4
    /// TIMESTAMP, bit 6 RUNNING), reserved u16, event u16, prescaler,
    /// priority.
    fn get_daq_list_mode(&self, p: &[u8], out: &mut Vec<u8>) -> Reply {
        need(p, 4)?;
        let list = self
            .config
            .lists()
            .get(u16_at(p, 2) as usize)
            .ok_or(ErrorCode::OutOfRange)?;
        let mode = u8::from(list.selected) << 2 | u8::from(list.timestamp) << 4 | u8::from(list.running) << 6;
        out.extend_from_slice(&[mode, 0, 0]);
        out.extend_from_slice(&list.event.to_le_bytes());
        out.extend_from_slice(&[list.prescaler, 0]);
        Ok(())
    }

    /// START_STOP_DAQ_LIST (§1.6.5.1.5): mode (0 stop, 1 start, 2
    /// select), list u16; answer FIRST_PID.
    fn start_stop_daq_list(&mut self, p: &[u8], out: &mut Vec<u8>) -> Reply {
        need(p, 4)?;
        let daq = u16_at(p, 2) as usize;
        if daq >= self.config.lists().len() {
            return Err(ErrorCode::OutOfRange);
        }
        match p[1] {
            0 => self.set_running(|i| i == daq, false)?,
            1 => {
                self.config.check_runnable(daq)?;
                self.set_running(|i| i == daq, true)?;
            }
            2 => {
                self.config.check_runnable(daq)?;
                if let Some(l) = self.config.list_mut(daq) {
                    l.selected = true;
                }
            }
            _ => return Err(ErrorCode::ModeNotValid),
        }
        out.push(self.config.first_pid(daq));
        Ok(())
    }

    /// START_STOP_SYNCH (§1.6.5.1.6): mode 0 stop all, 1 start selected, 2
    /// stop selected; selections are cleared.
    fn start_stop_synch(&mut self, p: &[u8]) -> Reply {
        need(p, 2)?;
        let selected: Vec<bool> = self.config.lists().iter().map(|l| l.selected).collect();
        match p[1] {
            0 => self.set_running(|_| true, false)?,
            1 => self.set_running(|i| selected[i], true)?,
            2 => self.set_running(|i| selected[i], false)?,
            _ => return Err(ErrorCode::ModeNotValid),
        }
        for i in 0..selected.len() {
            if let Some(l) = self.config.list_mut(i) {
                l.selected = false;
            }
        }
        Ok(())
    }

    /// GET_DAQ_CLOCK (§1.6.5.1.7): reserved ×3, timestamp u32 (1 µs
    /// ticks).
    fn get_daq_clock(&self, out: &mut Vec<u8>) -> Reply {
        out.extend_from_slice(&[0, 0, 0]);
        let now = (self.target.clock_ns() / 1000) as u32;
        out.extend_from_slice(&now.to_le_bytes());
        Ok(())
    }

    /// GET_DAQ_PROCESSOR_INFO (§1.6.5.3.2): DAQ_PROPERTIES (dynamic,
    /// prescaler, timestamps, overload in the PID's MSB), MAX_DAQ u16,
    /// MAX_EVENT_CHANNEL u16, MIN_DAQ, DAQ_KEY_BYTE (absolute ODT
    /// numbers, extension free per entry, default optimisation).
    fn get_daq_processor_info(&self, out: &mut Vec<u8>) -> Reply {
        out.push(0x01 | 0x02 | 0x10 | 0x40);
        out.extend_from_slice(&(MAX_DAQ_LISTS as u16).to_le_bytes());
        out.extend_from_slice(&(self.event_names.len() as u16).to_le_bytes());
        out.extend_from_slice(&[0, 0]);
        Ok(())
    }

    /// GET_DAQ_EVENT_INFO (§1.6.5.3.5): reserved, event u16; answer
    /// properties (DAQ bit 2), MAX_DAQ_LIST (0xFF: any), name length, time
    /// cycle, time unit, priority. The name is uploaded from the MTA.
    fn get_daq_event_info(&mut self, p: &[u8], out: &mut Vec<u8>) -> Reply {
        need(p, 4)?;
        let event = u16_at(p, 2) as usize;
        let name = self.event_names.get(event).ok_or(ErrorCode::OutOfRange)?;
        let name = &name.as_bytes()[..name.len().min(255)];
        let (cycle, unit) = event_cycle(self.event_periods[event]);
        out.extend_from_slice(&[0x04, 0xFF, name.len() as u8, cycle, unit.code(), 0]);
        self.text = name.to_vec();
        self.mta = Mta::Text(0);
        Ok(())
    }

    /// Refuses DAQ allocation while lists run.
    fn idle(&self) -> Reply {
        if self.config.running() {
            Err(ErrorCode::DaqActive)
        } else {
            Ok(())
        }
    }

    fn stop_all(&mut self) -> Reply {
        if self.config.running() {
            self.set_running(|_| true, false)?;
        }
        Ok(())
    }

    /// Sets the running flag of the lists `which` picks and hands the
    /// result to the sampler; on refusal nothing changes.
    fn set_running(&mut self, which: impl Fn(usize) -> bool, running: bool) -> Reply {
        let before: Vec<bool> = self.config.lists().iter().map(|l| l.running).collect();
        for i in 0..before.len() {
            if which(i) {
                if running {
                    self.config.check_runnable(i)?;
                }
                if let Some(l) = self.config.list_mut(i) {
                    l.running = running;
                }
            }
        }
        let published = self.link.publish(&self.config);
        if published.is_err() {
            for (i, was) in before.into_iter().enumerate() {
                if let Some(l) = self.config.list_mut(i) {
                    l.running = was;
                }
            }
        }
        published
    }

    /// Reads `n` bytes at the MTA into `out`, moving the MTA past them.
    fn upload(&mut self, n: usize, out: &mut Vec<u8>) -> Reply {
        if n == 0 || n > MAX_CTO - 1 {
            return Err(ErrorCode::OutOfRange);
        }
        match self.mta {
            Mta::Text(at) => {
                let bytes = self.text.get(at..at + n).ok_or(ErrorCode::OutOfRange)?;
                out.extend_from_slice(bytes);
                self.mta = Mta::Text(at + n);
            }
            Mta::Memory(address) => {
                let start = out.len();
                for i in 0..n as u32 {
                    let (kind, index, offset) = self.locate(address.wrapping_add(i)).ok_or(ErrorCode::OutOfRange)?;
                    let value = match kind {
                        Kind::Measurement => self.target.measure(index),
                        Kind::Characteristic => self.pages[self.xcp_page as usize][index],
                    };
                    out.push(value.to_le_bytes()[offset]);
                }
                debug_assert_eq!(out.len() - start, n);
                self.mta = Mta::Memory(address.wrapping_add(n as u32));
            }
        }
        Ok(())
    }

    /// Writes `bytes` at the MTA: only into characteristics on the working
    /// page. Each characteristic touched is offered to the target (when
    /// the runtime computes with the working page) and kept only if it
    /// accepts; characteristics before a refused one stay written.
    fn download(&mut self, bytes: &[u8]) -> Reply {
        let Mta::Memory(address) = self.mta else {
            return Err(ErrorCode::WriteProtected);
        };
        if self.xcp_page == REFERENCE_PAGE {
            return Err(ErrorCode::WriteProtected);
        }
        let mut changes: Vec<(usize, [u8; 8])> = Vec::new();
        for (i, &b) in bytes.iter().enumerate() {
            let (kind, index, offset) = self
                .locate(address.wrapping_add(i as u32))
                .ok_or(ErrorCode::OutOfRange)?;
            if kind == Kind::Measurement {
                return Err(ErrorCode::WriteProtected);
            }
            if changes.last().is_none_or(|c| c.0 != index) {
                changes.push((index, self.pages[WORKING_PAGE as usize][index].to_le_bytes()));
            }
            if let Some(c) = changes.last_mut() {
                c.1[offset] = b;
            }
        }
        for (index, value) in changes {
            let value = f64::from_le_bytes(value);
            if self.ecu_page == WORKING_PAGE {
                self.target.calibrate(index, value).map_err(Refusal::code)?;
            }
            self.pages[WORKING_PAGE as usize][index] = value;
        }
        self.mta = Mta::Memory(address.wrapping_add(bytes.len() as u32));
        Ok(())
    }

    /// Switches the page the runtime computes with, offering it every
    /// characteristic that differs between the pages.
    fn apply_page(&mut self, page: u8) -> Reply {
        if page != self.ecu_page {
            self.apply(&self.pages[page as usize].clone())?;
            self.ecu_page = page;
        }
        Ok(())
    }

    /// Offers the target each value of `values` that differs from what it
    /// computes with now.
    fn apply(&mut self, values: &[f64]) -> Reply {
        let now = self.ecu_page as usize;
        for (k, &v) in values.iter().enumerate() {
            if v.to_bits() != self.pages[now][k].to_bits() {
                self.target.calibrate(k, v).map_err(Refusal::code)?;
            }
        }
        Ok(())
    }

    /// The object and byte within it at `address`.
    fn locate(&self, address: u32) -> Option<(Kind, usize, usize)> {
        let characteristics = self.pages[0].len();
        for (kind, base, count) in [
            (Kind::Measurement, MEASUREMENT_BASE, self.measurements),
            (Kind::Characteristic, CHARACTERISTIC_BASE, characteristics),
        ] {
            if let Some(from) = address.checked_sub(base) {
                let index = (from / VALUE_BYTES) as usize;
                if index < count {
                    return Some((kind, index, (from % VALUE_BYTES) as usize));
                }
            }
        }
        None
    }
}

/// Checks that packet `p` holds its `n` bytes; bytes after them are
/// tolerated (CAN-style padding).
fn need(p: &[u8], n: usize) -> Reply {
    if p.len() < n {
        Err(ErrorCode::CmdSyntax)
    } else {
        Ok(())
    }
}

/// The little-endian `u16` at byte `i` of a packet checked long enough.
fn u16_at(p: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([p[i], p[i + 1]])
}

/// The little-endian `u32` at byte `i` of a packet checked long enough.
fn u32_at(p: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([p[i], p[i + 1], p[i + 2], p[i + 3]])
}

/// GET_COMM_MODE_INFO (§1.6.1.5): reserved, COMM_MODE_OPTIONAL (none),
/// reserved, MAX_BS, MIN_ST, QUEUE_SIZE, driver version 1.0.
fn get_comm_mode_info(out: &mut Vec<u8>) -> Reply {
    out.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0x10]);
    Ok(())
}

/// GET_DAQ_RESOLUTION_INFO (§1.6.5.3.3): granularity and largest entry
/// for DAQ and STIM, TIMESTAMP_MODE (size 4, unit 1 µs = 3 in bits 4-7,
/// not fixed), TIMESTAMP_TICKS u16.
fn get_daq_resolution_info(out: &mut Vec<u8>) -> Reply {
    out.extend_from_slice(&[1, MAX_ENTRY_BYTES, 1, 0, 0x34]);
    out.extend_from_slice(&1u16.to_le_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::map::Event;

    struct Fake(Vec<f64>);

    impl Target for Fake {
        fn measure(&self, index: usize) -> f64 {
            [1.5, -2.0][index]
        }
        fn calibrate(&mut self, index: usize, value: f64) -> Result<(), Refusal> {
            if value < 0.0 {
                return Err(Refusal::OutOfRange);
            }
            self.0[index] = value;
            Ok(())
        }
        fn clock_ns(&self) -> u64 {
            5_000_000
        }
    }

    fn slave() -> (Slave<Fake>, Sampler) {
        let n = |s: &str| (s.to_string(), None, None, String::new());
        let map = Map::new(
            [n("a"), n("b")],
            [n("gain")],
            vec![Event {
                name: "frame".into(),
                period_ns: Some(1_000_000),
            }],
        );
        let identity = Identity {
            a2l_name: "plant".into(),
            a2l: b"A2L".to_vec(),
        };
        let (mut s, sampler) = Slave::new(&map, Fake(vec![1.0]), identity, vec![1.0]).unwrap();
        ask(&mut s, &[0xFF, 0]);
        (s, sampler)
    }

    fn ask(s: &mut Slave<Fake>, p: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        s.handle(p, &mut out);
        out
    }

    #[test]
    fn connect_and_info_answers_have_the_standard_layouts() {
        let (mut s, _) = slave();
        // §1.6.1.1: RES, RESOURCE, COMM_MODE_BASIC, MAX_CTO, MAX_DTO (LE), versions.
        assert_eq!(ask(&mut s, &[0xFF, 0]), [0xFF, 0x05, 0x80, 0xFF, 0x78, 0x05, 1, 1]);
        assert_eq!(ask(&mut s, &[0xFD]), [0xFF, 0, 0, 0, 0, 0]);
        assert_eq!(ask(&mut s, &[0xFC]), [0xFE, 0x00]);
        assert_eq!(
            ask(&mut s, &[0xFA, 1]),
            [0xFF, 1, 0, 0, 5, 0, 0, 0, b'p', b'l', b'a', b'n', b't']
        );
        assert_eq!(ask(&mut s, &[0xFA, 4]), [0xFF, 0, 0, 0, 3, 0, 0, 0]);
        assert_eq!(ask(&mut s, &[0xF5, 3]), [0xFF, b'A', b'2', b'L']);
        assert_eq!(ask(&mut s, &[0xDA]), [0xFF, 0x53, 16, 0, 1, 0, 0, 0]);
        assert_eq!(ask(&mut s, &[0xD9]), [0xFF, 1, 8, 1, 0, 0x34, 1, 0]);
        // 1 ms: as the A2L writes it, 1 × 1 ms (unit 6).
        assert_eq!(ask(&mut s, &[0xD7, 0, 0, 0]), [0xFF, 0x04, 0xFF, 5, 1, 6, 0]);
        assert_eq!(ask(&mut s, &[0xDC]), [0xFF, 0, 0, 0, 0x88, 0x13, 0, 0]);
    }

    #[test]
    fn upload_download_and_pages() {
        let (mut s, _) = slave();
        let mut want = vec![0xFF];
        want.extend_from_slice(&(-2.0f64).to_le_bytes());
        assert_eq!(ask(&mut s, &[0xF4, 8, 0, 0, 0x08, 0, 1, 0]), want);
        let mut dl = vec![0xF0, 8];
        dl.extend_from_slice(&4.0f64.to_le_bytes());
        assert_eq!(ask(&mut s, &[0xF6, 0, 0, 0, 0, 0, 2, 0]), [0xFF]);
        assert_eq!(ask(&mut s, &dl), [0xFF]);
        assert_eq!(s.target().0, [4.0]);
        assert_eq!(ask(&mut s, &[0xEB, 0x03, 0, 1]), [0xFF]);
        assert_eq!(s.target().0, [1.0], "the reference page is applied");
        assert_eq!(ask(&mut s, &[0xF6, 0, 0, 0, 0, 0, 2, 0]), [0xFF]);
        assert_eq!(ask(&mut s, &dl), [0xFE, 0x23], "reference page is read-only");
        assert_eq!(ask(&mut s, &[0xEA, 0x01, 0]), [0xFF, 0, 0, 1]);
        assert_eq!(ask(&mut s, &[0xEB, 0x03, 0, 0]), [0xFF]);
        assert_eq!(s.target().0, [4.0]);
        assert_eq!(ask(&mut s, &[0xE4, 0, 0, 0, 1]), [0xFE, 0x23]);
        assert_eq!(ask(&mut s, &[0xE4, 0, 1, 0, 0]), [0xFF]);
        assert_eq!(s.target().0, [1.0]);
        let mut refused = vec![0xF0, 8];
        refused.extend_from_slice(&(-1.0f64).to_le_bytes());
        assert_eq!(ask(&mut s, &[0xF6, 0, 0, 0, 0, 0, 2, 0]), [0xFF]);
        assert_eq!(ask(&mut s, &refused), [0xFE, 0x22], "the target's refusal");
        assert_eq!(s.characteristic(0, 0), Some(1.0));
    }

    #[test]
    fn hostile_packets_get_error_answers() {
        let (mut s, _) = slave();
        assert_eq!(ask(&mut s, &[0x01]), [0xFE, 0x20], "unknown command");
        assert_eq!(ask(&mut s, &[0xF6, 0, 0]), [0xFE, 0x21], "short SET_MTA");
        assert_eq!(ask(&mut s, &[0xF4, 8, 0, 0, 0, 0, 3, 0]), [0xFE, 0x22], "no object");
        assert_eq!(
            ask(&mut s, &[0xF4, 8, 0, 0, 0x0C, 0, 1, 0]),
            [0xFE, 0x22],
            "past the last"
        );
        assert_eq!(ask(&mut s, &[0xF5, 255]), [0xFE, 0x22], "beyond MAX_CTO");
        assert_eq!(
            ask(&mut s, &[0xF0, 8, 1, 2]),
            [0xFE, 0x21],
            "DOWNLOAD shorter than its count"
        );
        assert_eq!(ask(&mut s, &[0xF6, 0, 0, 0, 0, 0, 1, 0]), [0xFF]);
        assert_eq!(ask(&mut s, &[0xF0, 1, 9]), [0xFE, 0x23], "measurements are read-only");
        assert_eq!(ask(&mut s, &[0xEB, 0x03, 0, 2]), [0xFE, 0x26]);
        assert_eq!(ask(&mut s, &[0xEB, 0x03, 1, 0]), [0xFE, 0x28]);
        assert_eq!(ask(&mut s, &[0xD5, 0, 17, 0]), [0xFE, 0x30], "beyond MAX_DAQ_LISTS");
        assert_eq!(
            ask(&mut s, &[0xD4, 0, 0, 0, 1]),
            [0xFE, 0x29],
            "ALLOC_ODT before ALLOC_DAQ"
        );
        assert_eq!(ask(&mut s, &[0xD5, 0, 1, 0]), [0xFF]);
        assert_eq!(ask(&mut s, &[0xD4, 0, 1, 0, 1]), [0xFE, 0x22], "no list 1");
        assert_eq!(ask(&mut s, &[0xD4, 0, 0, 0, 200]), [0xFE, 0x30], "beyond MAX_ODTS");
        assert_eq!(ask(&mut s, &[0xDE, 1, 0, 0]), [0xFE, 0x2A], "a list without ODTs");
        assert_eq!(ask(&mut s, &[0xE0, 0, 0, 0, 9, 0, 1, 0]), [0xFE, 0x22], "no event 9");
        assert_eq!(ask(&mut s, &vec![0xFD; 300]), [0xFE, 0x21], "beyond MAX_CTO");
        for code in 0..=255u8 {
            for len in 0..10 {
                let mut p = vec![0xA5; len];
                if let Some(first) = p.first_mut() {
                    *first = code;
                }
                ask(&mut s, &p);
            }
        }
    }

    #[test]
    fn daq_samples_timestamped_dtos_and_signals_overload() {
        let (mut s, mut sampler) = slave();
        for p in [
            &[0xD6][..],
            &[0xD5, 0, 1, 0],
            &[0xD4, 0, 0, 0, 1],
            &[0xD3, 0, 0, 0, 0, 2],
            &[0xE2, 0, 0, 0, 0, 0],
            &[0xE1, 0xFF, 8, 0, 0x08, 0, 1, 0],
            &[0xE1, 0xFF, 4, 0, 0x00, 0, 1, 0],
            &[0xE0, 0x10, 0, 0, 0, 0, 1, 0],
        ] {
            assert_eq!(ask(&mut s, p), [0xFF], "{p:x?}");
        }
        assert_eq!(
            ask(&mut s, &[0xE1, 0xFF, 8, 0, 4, 0, 1, 0]),
            [0xFE, 0x29],
            "pointer past the ODT"
        );
        assert_eq!(ask(&mut s, &[0xDE, 1, 0, 0]), [0xFF, 0]);
        assert_eq!(ask(&mut s, &[0xDF, 0, 0, 0]), [0xFF, 0x50, 0, 0, 0, 0, 1, 0]);
        sampler.sample(0, 3_000_000, &[1.5, -2.0]);
        let mut dto = Vec::new();
        assert!(s.next_dto(&mut dto));
        let mut want = vec![0x00, 0xB8, 0x0B, 0, 0];
        want.extend_from_slice(&(-2.0f64).to_le_bytes());
        want.extend_from_slice(&1.5f64.to_le_bytes()[..4]);
        assert_eq!(dto, want, "PID, timestamp 3000 µs, b, the first half of a");
        assert!(!s.next_dto(&mut dto));
        let per = 2 + dto.len();
        for k in 0..daq::DTO_RING_BYTES / per + 1 {
            sampler.sample(0, k as u64, &[0.0, 0.0]);
        }
        assert_eq!(s.overruns(), 1);
        while s.next_dto(&mut dto) {}
        sampler.sample(0, 0, &[0.0, 0.0]);
        assert!(s.next_dto(&mut dto));
        assert_eq!(dto[0], daq::OVERLOAD_PID_BIT, "the next DTO carries the overload bit");
        assert_eq!(ask(&mut s, &[0xD5, 0, 1, 0]), [0xFE, 0x11], "DAQ running");
        assert_eq!(ask(&mut s, &[0xDD, 0]), [0xFF]);
        assert_eq!(ask(&mut s, &[0xFD]), [0xFF, 0, 0, 0, 0, 0]);
    }
}
