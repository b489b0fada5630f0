//! Dynamic DAQ: the lists a master configures (FREE_DAQ, ALLOC_DAQ,
//! ALLOC_ODT, ALLOC_ODT_ENTRY, WRITE_DAQ, SET_DAQ_LIST_MODE), the plan the
//! running lists are resolved to, and the [`Sampler`] that turns a frame's
//! measurement values into DTOs on the real-time thread.
//!
//! Every ODT entry lies within one measurement (an `f64`): `size` bytes
//! (1 to 8) from `offset` within it, resolved to the measurement's index
//! when written. An entry elsewhere is refused with `ERR_OUT_OF_RANGE`.
//!
//! A DTO is `PID` (the absolute ODT number, DAQ_KEY_BYTE identification
//! field 0), then for a list's first ODT with timestamps on, a 4-byte
//! timestamp in µs, then the entries' bytes in order (ASAM XCP 1.x Part 2,
//! section 1.1.4.2, "DTO packet").

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ringbuf::traits::{Consumer, Observer, Producer, Split};
use ringbuf::{HeapCons, HeapProd, HeapRb};

use crate::map::{MEASUREMENT_BASE, VALUE_BYTES};
use crate::packet::{ErrorCode, MAX_DTO};

/// The most DAQ lists ALLOC_DAQ may allocate.
pub const MAX_DAQ_LISTS: usize = 16;
/// The most ODTs over all DAQ lists: absolute ODT numbers (PIDs) run from
/// 0 to 0x7B, the PID's top bit being the overload indication.
pub const MAX_ODTS: usize = 0x7C;
/// The most ODT entries over all ODTs.
pub const MAX_ENTRIES: usize = 4096;
/// The largest ODT entry, in bytes: one `f64`.
pub const MAX_ENTRY_BYTES: u8 = 8;
/// Bytes of a DTO timestamp (`TIMESTAMP_MODE` size 4, unit 1 µs).
pub const TIMESTAMP_BYTES: usize = 4;
/// Bytes of the DTO ring between the sampler and the sender: half of it
/// holds every ODT of every list at its largest (124 DTOs of 1400 bytes),
/// and it is small enough to stay in a core's cache as it is written.
pub const DTO_RING_BYTES: usize = 1 << 19;
/// The PID bit that signals DTOs lost to a full ring before this one
/// (`OVERLOAD_MSB`, DAQ_PROPERTIES bit 6).
pub const OVERLOAD_PID_BIT: u8 = 0x80;
/// DAQ configurations handed to the sampler and not yet given back: a
/// master changing lists faster than the sampler runs is answered busy.
const PLANS_IN_FLIGHT: usize = 8;

/// One ODT entry, resolved to the measurement it reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    /// The measurement's index.
    pub index: u32,
    /// The first byte within the measurement's `f64`.
    pub offset: u8,
    /// Bytes read; 0 for an entry not written yet (it adds nothing).
    pub size: u8,
}

/// One DAQ list as the master configured it.
#[derive(Clone, Debug, Default)]
pub struct DaqList {
    /// Its ODTs, each a list of entries.
    pub odts: Vec<Vec<Entry>>,
    /// The event channel it is sampled at.
    pub event: u16,
    /// Sample every `prescaler`-th event (at least 1).
    pub prescaler: u8,
    /// Whether its first ODT carries a timestamp.
    pub timestamp: bool,
    /// Selected for START_STOP_SYNCH.
    pub selected: bool,
    /// Running.
    pub running: bool,
}

/// Where dynamic configuration stands: each step may only follow the ones
/// before it until FREE_DAQ (Part 2, section 1.6.4.1, "sequence of
/// dynamic DAQ configuration").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    Free,
    Daq,
    Odt,
    Entry,
}

/// The DAQ lists a master configured, with the bounds checked.
#[derive(Debug)]
pub struct Config {
    lists: Vec<DaqList>,
    stage: Stage,
    odts: usize,
    entries: usize,
    pointer: Option<(usize, usize, usize)>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            lists: Vec::new(),
            stage: Stage::Free,
            odts: 0,
            entries: 0,
            pointer: None,
        }
    }
}

impl Config {
    /// The lists.
    pub fn lists(&self) -> &[DaqList] {
        &self.lists
    }

    /// Whether any list runs.
    pub fn running(&self) -> bool {
        self.lists.iter().any(|l| l.running)
    }

    /// FREE_DAQ: drops every list.
    pub fn free(&mut self) {
        *self = Config::default();
    }

    /// ALLOC_DAQ.
    pub fn alloc_daq(&mut self, count: usize) -> Result<(), ErrorCode> {
        if self.stage != Stage::Free {
            return Err(ErrorCode::Sequence);
        }
        if count > MAX_DAQ_LISTS {
            return Err(ErrorCode::MemoryOverflow);
        }
        self.lists = vec![
            DaqList {
                prescaler: 1,
                ..DaqList::default()
            };
            count
        ];
        self.stage = Stage::Daq;
        Ok(())
    }

    /// ALLOC_ODT: `count` ODTs for list `daq`, once per list.
    pub fn alloc_odt(&mut self, daq: usize, count: usize) -> Result<(), ErrorCode> {
        if !matches!(self.stage, Stage::Daq | Stage::Odt) {
            return Err(ErrorCode::Sequence);
        }
        let list = self.lists.get_mut(daq).ok_or(ErrorCode::OutOfRange)?;
        if !list.odts.is_empty() {
            return Err(ErrorCode::Sequence);
        }
        if self.odts + count > MAX_ODTS {
            return Err(ErrorCode::MemoryOverflow);
        }
        list.odts = vec![Vec::new(); count];
        self.odts += count;
        self.stage = Stage::Odt;
        Ok(())
    }

    /// ALLOC_ODT_ENTRY: `count` entries for ODT `odt` of list `daq`.
    pub fn alloc_odt_entry(&mut self, daq: usize, odt: usize, count: usize) -> Result<(), ErrorCode> {
        if !matches!(self.stage, Stage::Odt | Stage::Entry) {
            return Err(ErrorCode::Sequence);
        }
        let odt = self
            .lists
            .get_mut(daq)
            .and_then(|l| l.odts.get_mut(odt))
            .ok_or(ErrorCode::OutOfRange)?;
        if !odt.is_empty() {
            return Err(ErrorCode::Sequence);
        }
        if self.entries + count > MAX_ENTRIES {
            return Err(ErrorCode::MemoryOverflow);
        }
        *odt = vec![Entry::default(); count];
        self.entries += count;
        self.stage = Stage::Entry;
        Ok(())
    }

    /// SET_DAQ_PTR.
    pub fn set_pointer(&mut self, daq: usize, odt: usize, entry: usize) -> Result<(), ErrorCode> {
        let list = self.lists.get(daq).ok_or(ErrorCode::OutOfRange)?;
        if list.running {
            return Err(ErrorCode::DaqActive);
        }
        let entries = list.odts.get(odt).ok_or(ErrorCode::OutOfRange)?;
        if entry >= entries.len() {
            return Err(ErrorCode::OutOfRange);
        }
        self.pointer = Some((daq, odt, entry));
        Ok(())
    }

    /// WRITE_DAQ: `size` bytes at `address`, which must lie within one of
    /// `measurements` measurements; the pointer moves to the next entry.
    pub fn write(&mut self, size: u8, address: u32, measurements: usize) -> Result<(), ErrorCode> {
        let (daq, odt, entry) = self.pointer.ok_or(ErrorCode::Sequence)?;
        if size == 0 || size > MAX_ENTRY_BYTES {
            return Err(ErrorCode::OutOfRange);
        }
        let from = address.checked_sub(MEASUREMENT_BASE).ok_or(ErrorCode::OutOfRange)?;
        let (index, offset) = (from / VALUE_BYTES, (from % VALUE_BYTES) as u8);
        if index as usize >= measurements || offset + size > VALUE_BYTES as u8 {
            return Err(ErrorCode::OutOfRange);
        }
        let entries = &mut self.lists[daq].odts[odt];
        let before: usize = entries.iter().map(|e| e.size as usize).sum();
        if before - entries[entry].size as usize + size as usize > MAX_DTO - 1 {
            return Err(ErrorCode::DaqConfig);
        }
        entries[entry] = Entry { index, offset, size };
        self.pointer = (entry + 1 < entries.len()).then_some((daq, odt, entry + 1));
        Ok(())
    }

    /// SET_DAQ_LIST_MODE for list `daq`: its event, prescaler and whether
    /// it is timestamped.
    pub fn set_mode(&mut self, daq: usize, event: u16, prescaler: u8, timestamp: bool) -> Result<(), ErrorCode> {
        let list = self.lists.get_mut(daq).ok_or(ErrorCode::OutOfRange)?;
        if list.running {
            return Err(ErrorCode::DaqActive);
        }
        if prescaler == 0 {
            return Err(ErrorCode::OutOfRange);
        }
        list.event = event;
        list.prescaler = prescaler;
        list.timestamp = timestamp;
        Ok(())
    }

    /// The first PID (absolute ODT number) of list `daq`.
    pub fn first_pid(&self, daq: usize) -> u8 {
        self.lists[..daq].iter().map(|l| l.odts.len()).sum::<usize>() as u8
    }

    /// Checks that list `daq` can run: it has ODTs, and each ODT with its
    /// PID and timestamp fits a DTO.
    pub fn check_runnable(&self, daq: usize) -> Result<(), ErrorCode> {
        let list = self.lists.get(daq).ok_or(ErrorCode::OutOfRange)?;
        if list.odts.is_empty() {
            return Err(ErrorCode::DaqConfig);
        }
        let first = 1 + if list.timestamp { TIMESTAMP_BYTES } else { 0 };
        for (i, odt) in list.odts.iter().enumerate() {
            let bytes: usize = odt.iter().map(|e| e.size as usize).sum();
            if bytes + if i == 0 { first } else { 1 } > MAX_DTO {
                return Err(ErrorCode::DaqConfig);
            }
        }
        Ok(())
    }

    /// Mutable access to list `daq`.
    pub fn list_mut(&mut self, daq: usize) -> Option<&mut DaqList> {
        self.lists.get_mut(daq)
    }

    /// The running lists, resolved for the sampler.
    fn plan(&self) -> Plan {
        let lists = self
            .lists
            .iter()
            .enumerate()
            .filter(|(_, l)| l.running)
            .map(|(i, l)| {
                let odts: Vec<Vec<Entry>> = l
                    .odts
                    .iter()
                    .map(|o| o.iter().copied().filter(|e| e.size > 0).collect())
                    .collect();
                let bytes = odts
                    .iter()
                    .map(|o| 2 + 1 + o.iter().map(|e| e.size as usize).sum::<usize>())
                    .sum::<usize>()
                    + if l.timestamp { TIMESTAMP_BYTES } else { 0 };
                PlanList {
                    event: l.event,
                    prescaler: l.prescaler,
                    count: 0,
                    first_pid: self.first_pid(i),
                    timestamp: l.timestamp,
                    odts,
                    bytes,
                }
            })
            .collect();
        Plan { lists }
    }
}

/// A running list as the sampler reads it.
#[derive(Debug)]
struct PlanList {
    event: u16,
    prescaler: u8,
    count: u8,
    first_pid: u8,
    timestamp: bool,
    odts: Vec<Vec<Entry>>,
    /// Ring bytes of one sample of every ODT, with their length prefixes.
    bytes: usize,
}

/// The running lists.
#[derive(Debug, Default)]
struct Plan {
    lists: Vec<PlanList>,
}

/// The slave's side of the DAQ rings: hands plans to the sampler, takes
/// spent ones back to free them, and takes the DTOs.
pub struct Link {
    plans: HeapProd<Box<Plan>>,
    retired: HeapCons<Box<Plan>>,
    in_flight: usize,
    dtos: HeapCons<u8>,
    overruns: Arc<AtomicU64>,
}

/// Samples the running DAQ lists on the real-time thread: no allocation,
/// no lock, cost bounded by the lists' entries.
pub struct Sampler {
    plan: Box<Plan>,
    plans: HeapCons<Box<Plan>>,
    retired: HeapProd<Box<Plan>>,
    dtos: HeapProd<u8>,
    overruns: Arc<AtomicU64>,
    overloaded: bool,
    /// One DTO being put together, with its length prefix.
    dto: Box<[u8; 2 + MAX_DTO]>,
}

/// The rings between a slave and its sampler.
pub fn link() -> (Link, Sampler) {
    let (plans_tx, plans_rx) = HeapRb::new(PLANS_IN_FLIGHT).split();
    let (retired_tx, retired_rx) = HeapRb::new(PLANS_IN_FLIGHT + 1).split();
    let (dtos_tx, dtos_rx) = HeapRb::new(DTO_RING_BYTES).split();
    let overruns = Arc::new(AtomicU64::new(0));
    (
        Link {
            plans: plans_tx,
            retired: retired_rx,
            in_flight: 0,
            dtos: dtos_rx,
            overruns: overruns.clone(),
        },
        Sampler {
            plan: Box::default(),
            plans: plans_rx,
            retired: retired_tx,
            dtos: dtos_tx,
            overruns,
            overloaded: false,
            dto: Box::new([0; 2 + MAX_DTO]),
        },
    )
}

impl Link {
    /// Hands the running lists of `config` to the sampler; busy while the
    /// sampler has not taken earlier ones.
    pub fn publish(&mut self, config: &Config) -> Result<(), ErrorCode> {
        while self.retired.try_pop().is_some() {
            self.in_flight -= 1;
        }
        if self.in_flight >= PLANS_IN_FLIGHT {
            return Err(ErrorCode::CmdBusy);
        }
        self.plans
            .try_push(Box::new(config.plan()))
            .map_err(|_| ErrorCode::CmdBusy)?;
        self.in_flight += 1;
        Ok(())
    }

    /// Moves the next DTO packet (without Ethernet header) into `out`,
    /// replacing its contents; false when there is none.
    pub fn next_dto(&mut self, out: &mut Vec<u8>) -> bool {
        let mut len = [0u8; 2];
        if self.dtos.occupied_len() < 2 || self.dtos.pop_slice(&mut len) < 2 {
            return false;
        }
        out.clear();
        out.resize(u16::from_le_bytes(len) as usize, 0);
        let got = self.dtos.pop_slice(out);
        out.truncate(got);
        true
    }

    /// DAQ samples dropped because the DTO ring was full.
    pub fn overruns(&self) -> u64 {
        self.overruns.load(Ordering::Relaxed)
    }

    /// Bytes in the DTO ring (DTOs with their length prefixes).
    pub fn pending_bytes(&self) -> usize {
        self.dtos.occupied_len()
    }
}

impl Sampler {
    /// Samples every running list of `event` whose prescaler is due:
    /// writes its DTOs, each ODT's entries from `values` (measurement
    /// `i` is `values[i]`; a missing one reads as NaN), timestamped
    /// `time_ns / 1000` µs (wrapping at 32 bits). A list whose DTOs do not
    /// fit the ring is dropped whole, counted, and the next DTO written
    /// carries [`OVERLOAD_PID_BIT`].
    pub fn sample(&mut self, event: u16, time_ns: u64, values: &[f64]) {
        while let Some(plan) = self.plans.try_pop() {
            let spent = std::mem::replace(&mut self.plan, plan);
            // The slave keeps fewer plans in flight than the ring holds,
            // so this push succeeds; were it to fail, leaking the plan
            // keeps freeing memory off the real-time thread.
            if let Err(spent) = self.retired.try_push(spent) {
                std::mem::forget(spent);
            }
        }
        let stamp = ((time_ns / 1000) as u32).to_le_bytes();
        for list in self.plan.lists.iter_mut().filter(|l| l.event == event) {
            list.count += 1;
            if list.count < list.prescaler {
                continue;
            }
            list.count = 0;
            if self.dtos.vacant_len() < list.bytes {
                self.overruns.fetch_add(1, Ordering::Relaxed);
                self.overloaded = true;
                continue;
            }
            let dto = &mut *self.dto;
            for (i, odt) in list.odts.iter().enumerate() {
                let mut n = 2;
                dto[n] = list.first_pid + i as u8;
                if self.overloaded {
                    dto[n] |= OVERLOAD_PID_BIT;
                    self.overloaded = false;
                }
                n += 1;
                if i == 0 && list.timestamp {
                    dto[n..n + TIMESTAMP_BYTES].copy_from_slice(&stamp);
                    n += TIMESTAMP_BYTES;
                }
                for e in odt {
                    let value = values.get(e.index as usize).copied().unwrap_or(f64::NAN).to_le_bytes();
                    let (from, size) = (e.offset as usize, e.size as usize);
                    if size == value.len() {
                        // Whole values, the common case: a fixed-size copy.
                        dto[n..n + 8].copy_from_slice(&value);
                    } else {
                        dto[n..n + size].copy_from_slice(&value[from..from + size]);
                    }
                    n += size;
                }
                dto[..2].copy_from_slice(&((n - 2) as u16).to_le_bytes());
                self.dtos.push_slice(&dto[..n]);
            }
        }
    }
}
