//! The slave's address space: where each object a master may measure or
//! calibrate lives, and the events DAQ lists are sampled at.
//!
//! Addresses are 32-bit with extension 0. Every value is an IEEE 754
//! `f64`, little-endian, 8 bytes. Measurements are packed from
//! [`MEASUREMENT_BASE`], characteristics (calibration parameters) from
//! [`CHARACTERISTIC_BASE`], each at `base + 8 × index`. The A2L gives the
//! same addresses, so a master reads what it asks for.

/// The first measurement's address.
pub const MEASUREMENT_BASE: u32 = 0x0001_0000;
/// The first characteristic's address.
pub const CHARACTERISTIC_BASE: u32 = 0x0002_0000;
/// Bytes per value (`f64`).
pub const VALUE_BYTES: u32 = 8;
/// The calibration page the runtime computes with, and the one a master
/// reads and writes, start as this page.
pub const WORKING_PAGE: u8 = 0;
/// The read-only page holding every characteristic as loaded.
pub const REFERENCE_PAGE: u8 = 1;

/// What an object is to a master.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A signal to measure (read, sampled by DAQ).
    Measurement,
    /// A parameter to calibrate (read and written, on two pages).
    Characteristic,
}

/// One object in the address space.
#[derive(Clone, Debug, PartialEq)]
pub struct Object {
    /// Its name in the A2L (block path or signal name, e.g.
    /// `vehicle_speed`, `speed_map/gain`).
    pub name: String,
    /// Measurement or characteristic.
    pub kind: Kind,
    /// Its address: `base + 8 × index` of its kind.
    pub address: u32,
    /// Physical unit, when known.
    pub unit: Option<String>,
    /// Physical limits `(lower, upper)`, when known.
    pub limits: Option<(f64, f64)>,
    /// A description for the A2L's long identifier.
    pub description: String,
}

/// An event DAQ lists can be sampled at.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Its name (`frame 1 ms`, `rate 10 ms`, `can0 rx`, …).
    pub name: String,
    /// Its period in nanoseconds, or `None` for a sporadic event (bus
    /// receive and transmit).
    pub period_ns: Option<u64>,
}

/// The address space of one slave: its objects, in address order per
/// kind, and its events, numbered by their index (event channel number).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Map {
    /// Measurements, then characteristics; each kind in address order.
    pub objects: Vec<Object>,
    /// The events; event channel `i` is `events[i]`.
    pub events: Vec<Event>,
}

impl Map {
    /// A map of `measurements` and `characteristics` (name, unit, limits,
    /// description), each placed at the next address of its kind, and
    /// `events`.
    pub fn new(
        measurements: impl IntoIterator<Item = (String, Option<String>, Option<(f64, f64)>, String)>,
        characteristics: impl IntoIterator<Item = (String, Option<String>, Option<(f64, f64)>, String)>,
        events: Vec<Event>,
    ) -> Map {
        let mut objects = Vec::new();
        for (kind, base, items) in [
            (
                Kind::Measurement,
                MEASUREMENT_BASE,
                measurements.into_iter().collect::<Vec<_>>(),
            ),
            (
                Kind::Characteristic,
                CHARACTERISTIC_BASE,
                characteristics.into_iter().collect(),
            ),
        ] {
            for (i, (name, unit, limits, description)) in items.into_iter().enumerate() {
                objects.push(Object {
                    name,
                    kind,
                    address: base + VALUE_BYTES * i as u32,
                    unit,
                    limits,
                    description,
                });
            }
        }
        Map { objects, events }
    }

    /// The object holding the `len` bytes at `address`, and the offset of
    /// `address` in it, when they lie within one object.
    pub fn object_at(&self, address: u32, len: u32) -> Option<(&Object, u32)> {
        let object = self
            .objects
            .iter()
            .find(|o| address >= o.address && address < o.address + VALUE_BYTES)?;
        let offset = address - object.address;
        (offset + len <= VALUE_BYTES).then_some((object, offset))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(clippy::type_complexity)]
    fn named(names: &[&str]) -> Vec<(String, Option<String>, Option<(f64, f64)>, String)> {
        names
            .iter()
            .map(|n| (n.to_string(), None, None, String::new()))
            .collect()
    }

    #[test]
    fn objects_are_packed_per_kind_and_found_by_any_byte_inside() {
        let map = Map::new(named(&["v", "soc"]), named(&["gain"]), Vec::new());
        let addresses: Vec<u32> = map.objects.iter().map(|o| o.address).collect();
        assert_eq!(addresses, [0x0001_0000, 0x0001_0008, 0x0002_0000]);
        assert_eq!(
            map.object_at(0x0001_0008, 8).map(|(o, at)| (o.name.as_str(), at)),
            Some(("soc", 0))
        );
        assert_eq!(
            map.object_at(0x0001_000c, 4).map(|(o, at)| (o.name.as_str(), at)),
            Some(("soc", 4))
        );
        assert!(map.object_at(0x0001_000c, 8).is_none(), "runs past the object's end");
        assert!(map.object_at(0x0001_0010, 1).is_none(), "between objects");
    }
}
