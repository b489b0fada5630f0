//! The real-time threads must not allocate after start-up: a process-wide
//! counting allocator is armed from the first poll of the watching thread
//! (every thread is then past its start-up) to the end of the frames, over
//! thousands of frames of a whole session: the fast and the implicit
//! thread, and a CAN bus's receive thread, its decoding into model inputs
//! and its transmit path, with a second node on the same in-process bus
//! playing the ECU, also while the bus log is written as MF4 or BLF (the
//! log's writer thread counted). The same holds while a script polls a watched session
//! as the Python package does (the script's thread and the watcher's are
//! not counted: they are normal threads), while a plant with events has
//! them located and handled on both threads, while large plants step on
//! sparse factors, while a run served as a DCP slave carries its bus over
//! DCP (the slave's serving thread counted), and while an XCP master
//! samples every measurement by DAQ and calibrates the plant.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tandem_can::CanFrame;
use tandem_config::{parse_run_config, TransportConfig};
use tandem_dbc::Dbc;
use tandem_e2e as e2e;
use tandem_log::{Direction, LogReader};
use tandem_models::plants::PROFILES;
use tandem_runtime::tandem::metrics::FrameSource;
use tandem_session::bus::open_transport;
use tandem_session::{bind, ClockMode, Observer, Options, Session};
use tandem_xcp::master::Master;

struct Counting;

static ARMED: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

/// Held by each test: they share the counter.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The normal threads that may allocate: a script polling a session, the
/// thread that watches a session for it, an XCP master and the XCP slave's
/// servers (which prepare DAQ lists and calibrations for the real-time
/// threads).
const NOT_COUNTED: [&str; 5] = ["script", "session watcher", "xcp master", "xcp-udp", "xcp-tcp"];

thread_local! {
    /// Whether this thread is one of them, once known.
    static EXEMPT: Cell<Option<bool>> = const { Cell::new(None) };
}

/// Counts an allocation when armed, on a counted thread.
fn count() {
    if !ARMED.load(Relaxed) {
        return;
    }
    let exempt = EXEMPT
        .try_with(|e| match e.get() {
            Some(exempt) => exempt,
            None => {
                // Exempt while looking at the name, which may allocate.
                e.set(Some(true));
                let exempt = std::thread::current().name().is_some_and(|n| NOT_COUNTED.contains(&n));
                e.set(Some(exempt));
                exempt
            }
        })
        .unwrap_or(false);
    if !exempt {
        ALLOCATIONS.fetch_add(1, Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Arms the counter while the frames run, and sums the recorded rows
/// (without allocating) so that they are used.
struct Armed(f64);

impl Observer for Armed {
    fn record(&mut self, t: f64, y: &[f64]) {
        self.0 += t + y.iter().sum::<f64>();
    }
    fn tick(&mut self, running: bool) {
        ARMED.store(running, Relaxed);
    }
}

/// The plant of `config/examples/ev-can.toml` on the in-process bus
/// `channel`, under `policy`, for 3 s: its commands checked and its
/// battery status protected by E2E profile 1A, with a fault of each kind
/// the transmit path applies scheduled.
fn config(channel: &str, policy: &str) -> String {
    let dbc = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/examples/ev.dbc");
    format!(
        r#"model = "ev"
frame = "1ms"
duration = "3s"
policy = "{policy}"
[inputs]
profile = "ev-drive-cycle"
[record]
file = "rt-no-alloc.csv"
[[bus]]
transport = "virtual"
channel = "{channel}"
dbc = "{}"
[[bus.receive]]
message = "ECU_Command"
timeout = "100ms"
on_timeout = "default"
signals = {{ TorqueRequest = "torque_request", BrakePressure = "brake_pressure" }}
e2e = {{ profile = "1A", data_id = 0x100, crc = "CmdCrc", counter = "CmdCounter" }}
[[bus.transmit]]
message = "VCU_Speeds"
signals = {{ VehicleSpeed = "vehicle_speed", MotorSpeed = "motor_speed" }}
[[bus.transmit]]
message = "VCU_Powertrain"
signals = {{ MotorTorque = "motor_torque", DcVoltage = "dc_voltage" }}
[[bus.transmit]]
message = "BMS_Status"
signals = {{ Soc = "soc" }}
e2e = {{ profile = "1A", data_id = 0x1F1, crc = "BmsCrc", counter = "BmsCounter" }}
[[bus.fault]]
message = "BMS_Status"
kind = "bad_crc"
start = "1s"
count = 2
[[bus.fault]]
message = "BMS_Status"
kind = "stuck_counter"
start = "1.3s"
count = 2
[[bus.fault]]
message = "VCU_Speeds"
kind = "delay"
delay = "5ms"
start = "1.5s"
duration = "100ms"
[[bus.fault]]
message = "VCU_Speeds"
kind = "repeat"
start = "1.7s"
count = 3
[[bus.fault]]
message = "VCU_Powertrain"
kind = "wrong_length"
bytes = 5
start = "1.8s"
count = 3
[[bus.fault]]
message = "VCU_Speeds"
kind = "override"
signal = "VehicleSpeed"
value = 99
start = "1.9s"
count = 3
[[bus.fault]]
kind = "burst"
start = "2s"
duration = "10ms"
[[bus.fault]]
message = "VCU_Powertrain"
kind = "drop"
start = "2.1s"
duration = "100ms"
[[bus.fault]]
kind = "stop"
start = "2.5s"
duration = "50ms"
"#,
        dbc.display()
    )
}

/// The plan of [`config`], unpinned where SCHED_FIFO is refused: the
/// property does not depend on the placement.
fn unpinned_plan(channel: &str, policy: &str) -> tandem_session::Plan {
    let config = parse_run_config(&config(channel, policy), Path::new("rt-no-alloc.toml"), PROFILES).unwrap();
    let mut plan = bind(config).unwrap();
    plan.settings.fast.placement.core = None;
    plan.settings.implicit.placement.core = None;
    plan
}

#[test]
fn a_session_with_a_can_bus_runs_thousands_of_real_frames_without_allocating() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    for policy in ["correct", "select"] {
        run_with_an_ecu(policy, None);
    }
}

#[test]
fn a_bus_log_in_mf4_or_blf_is_written_without_allocating_on_any_thread() {
    // The log's writer thread is counted too: it must not allocate per frame.
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    for log in ["bus.mf4", "bus.blf"] {
        run_with_an_ecu("correct", Some(log));
    }
}

/// Runs the plant of [`config`] under `policy` for 3000 real frames with
/// an ECU on its bus, asserting that no counted thread allocated while
/// they ran, and (with `bus_log`, a file name) that the log holds every
/// frame the plant received and sent.
fn run_with_an_ecu(policy: &str, bus_log: Option<&str>) {
    let dbc = Dbc::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("config/examples/ev.dbc")).unwrap();
    let command = dbc.message("ECU_Command").unwrap();
    let mut payload = vec![0u8; command.len];
    command.signal("TorqueRequest").unwrap().encode(50.0, &mut payload);
    let protection = e2e::Config {
        profile: e2e::Profile::P01 {
            data_id: 0x100,
            mode: e2e::DataIdMode::Both,
            layout: e2e::NibbleLayout::at_byte(6),
        },
        data_length: 8,
        max_delta_counter: 1,
    };
    let channel = format!("rt-no-alloc-{policy}-{}", bus_log.unwrap_or("unlogged"));
    let plan = unpinned_plan(&channel, policy);
    let results = std::env::temp_dir().join(format!("tandem-rt-no-alloc-{}", std::process::id()));
    let options = Options {
        bus_log: bus_log.map(Into::into),
        ..Options::new(ClockMode::Real, &results)
    };
    let session = Session::new(plan, options).unwrap();

    // The ECU: another node on the bus, sending a command every 10 ms
    // and taking what the plant sends, without allocating.
    let mut ecu = open_transport(&TransportConfig::Virtual { channel }).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = Arc::clone(&stop);
    let mut protector = e2e::Protector::new(protection).unwrap();
    let id = command.id;
    let ecu = std::thread::spawn(move || {
        let mut received = 0u64;
        while !stopping.load(Relaxed) {
            protector.protect(&mut payload).unwrap();
            let _ = ecu.tx.send(&CanFrame::data(id, &payload).unwrap());
            while let Ok(Some(_)) = ecu.rx.recv(Duration::ZERO) {
                received += 1;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        received
    });

    ALLOCATIONS.store(0, Relaxed);
    let mut observer = Armed(0.0);
    let report = session.run(&mut observer).unwrap();
    ARMED.store(false, Relaxed);
    stop.store(true, Relaxed);
    let received = ecu.join().unwrap();
    let logged = bus_log.map(|name| {
        let path = results.join(name);
        let reader = LogReader::new(std::fs::File::open(&path).unwrap(), &path).unwrap();
        let (mut rx, mut tx) = (0u64, 0u64);
        for record in reader {
            match record.unwrap().direction {
                Direction::Rx => rx += 1,
                Direction::Tx => tx += 1,
            }
        }
        (rx, tx)
    });
    let _ = std::fs::remove_dir_all(&results);

    assert!(report.failure.is_none(), "{:?}", report.failure);
    let m = &report.metrics;
    assert_eq!(m.frames.get(), 3000);
    assert!(m.implicit_steps.get() > 1000, "the implicit thread worked");
    let bus = &report.devices[0].metrics;
    assert!(
        bus.rx_frames.get() > 200,
        "the plant heard the ECU: {}",
        bus.rx_frames.get()
    );
    assert!(
        bus.tx_frames.get() > 500 && received > 500,
        "the ECU heard the plant: {received}"
    );
    if let Some((rx, tx)) = logged {
        assert_eq!(
            (rx, tx),
            (bus.rx_frames.get(), bus.tx_frames.get()),
            "{bus_log:?}: frames logged as received and sent, against the bus's counts"
        );
    }
    let checked = bus.e2e[0].counts.get();
    assert!(checked.ok > 200 && checked.rejected() == 0, "{checked:?}");
    let faults = bus.faults.as_ref().unwrap().described();
    assert_eq!(faults.len(), 9);
    for (what, slot) in faults {
        assert!(slot.ended().is_some() && slot.affected.get() > 0, "{what}");
    }
    assert!(observer.0.is_finite() && observer.0 != 0.0);
    assert_eq!(
        ALLOCATIONS.load(Relaxed),
        0,
        "{policy}, bus log {bus_log:?}: allocations on the real-time, I/O and log threads"
    );
}

#[test]
fn a_watched_sessions_real_time_threads_do_not_allocate_while_a_script_polls_it() {
    use tandem_session::watch::Watched;
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);

    let channel = "rt-no-alloc-watched".to_string();
    let plan = unpinned_plan(&channel, "correct");
    let results = std::env::temp_dir().join(format!("tandem-rt-no-alloc-watched-{}", std::process::id()));
    let session = Session::new(plan, Watched::options(ClockMode::Real, &results)).unwrap();
    let mut ecu = open_transport(&TransportConfig::Virtual { channel }).unwrap();
    let mut watched = Watched::start(session).unwrap();

    // What the Python package's Session does, as fast as it can: read the
    // newest values, the recording and the counters, write an input.
    let script = std::thread::Builder::new()
        .name("script".into())
        .spawn(move || {
            while watched.time() < 0.2 {
                std::thread::sleep(Duration::from_millis(1));
            }
            ALLOCATIONS.store(0, Relaxed);
            ARMED.store(true, Relaxed);
            let (mut polls, mut rows, mut newest) = (0u64, 0usize, 0.0);
            while watched.time() < 2.5 {
                if let Some((t, _)) = watched.latest() {
                    newest = t;
                }
                rows = watched.rows(0).len();
                let counters = watched.counters();
                let grade = if polls % 2 == 0 { 0.01 } else { 0.02 };
                watched.controls().set_input("road_grade", grade).unwrap();
                if polls == 100 {
                    let burst = serde_json::json!({"kind": "burst", "id": 0x7F0, "duration": 0.05});
                    watched.controls().inject_fault("can0", &burst).unwrap();
                    let drop = serde_json::json!({"kind": "drop", "message": "VCU_Speeds", "count": 3});
                    watched.controls().inject_fault("can0", &drop).unwrap();
                }
                while let Ok(Some(_)) = ecu.rx.recv(Duration::ZERO) {}
                assert!(counters["frames"].as_u64().unwrap() > 0);
                polls += 1;
            }
            ARMED.store(false, Relaxed);
            let report = watched.stop().unwrap().unwrap();
            (polls, rows, newest, report)
        })
        .unwrap();
    let (polls, rows, newest, report) = script.join().unwrap();
    let _ = std::fs::remove_dir_all(&results);

    assert!(report.failure.is_none(), "{:?}", report.failure);
    assert!(polls > 1000, "the script polled {polls} times");
    assert!(
        rows > 0 && newest > 2.0,
        "the script saw rows ({rows} values, the newest at {newest} s)"
    );
    let injected = report.devices[0].metrics.faults.as_ref().unwrap().described();
    let affected: Vec<(String, u64)> = injected[9..]
        .iter()
        .map(|(w, s)| (w.clone(), s.affected.get()))
        .collect();
    // A burst goes out in every slot of its 50 but those a host stall
    // skipped (nothing is sent in them).
    let skipped = report.metrics.from_source(FrameSource::Skipped);
    let burst = affected[0].1;
    assert!(
        burst <= 50 && burst + skipped >= 50,
        "{affected:?}, {skipped} slots skipped"
    );
    assert_eq!(
        affected.iter().map(|(w, _)| w.as_str()).collect::<Vec<_>>(),
        [
            "burst of id 0x7f0 ×1 per frame for 0.05 s",
            "drop VCU_Speeds for 3 frames"
        ]
    );
    assert_eq!(affected[1].1, 3);
    assert_eq!(
        ALLOCATIONS.load(Relaxed),
        0,
        "allocations on the real-time and I/O paths while a script polled"
    );
}

#[test]
fn a_plant_with_events_locates_them_on_both_threads_without_allocating() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dbc_path = root.join("config/examples/throttle.dbc");
    let dbc = Dbc::load(&dbc_path).unwrap();
    let command = dbc.message("ETB_Command").unwrap();
    // Torque that opens the throttle onto its open stop, and none, which
    // lets the spring close it onto the closed one.
    let frames: Vec<CanFrame> = [0.25, 0.0]
        .iter()
        .map(|&torque| {
            let mut payload = vec![0u8; command.len];
            command.signal("MotorTorque").unwrap().encode(torque, &mut payload);
            CanFrame::data(command.id, &payload).unwrap()
        })
        .collect();
    // The throttle diagram alone, and as a part of a plant system whose
    // second part reads its angle.
    let scratch = std::env::temp_dir().join(format!("tandem-rt-no-alloc-plant-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    std::fs::write(
        scratch.join("sensor.json"),
        r#"{"name": "sensor", "blocks": [{"id": "u", "type": "Inport"},
            {"id": "k", "type": "Gain", "params": {"gain": 2}}, {"id": "y", "type": "Output"}],
            "links": [{"from": "u", "to": "k"}, {"from": "k", "to": "y"}]}"#,
    )
    .unwrap();
    let system = scratch.join("plant.toml");
    std::fs::write(
        &system,
        format!(
            "[master]\nstep = 0.001\nstop = 3.0\n[[model]]\nname = \"throttle\"\nsource = \"{}\"\n\
             [[model]]\nname = \"sensor\"\nsource = \"sensor.json\"\n\
             [[connection]]\nfrom = \"throttle.throttle_angle\"\nto = \"sensor.u\"\n",
            root.join("models/examples/throttle.json").display()
        ),
    )
    .unwrap();
    let plants = [(root.join("models/examples/throttle.json"), ""), (system, "throttle.")];
    for ((plant, part), policy) in plants
        .iter()
        .flat_map(|p| ["correct", "select"].map(move |policy| (p, policy)))
    {
        let channel = format!("rt-no-alloc-events-{policy}-{}", part.len());
        let text = format!(
            r#"model = "{}"
frame = "1ms"
duration = "3s"
policy = "{policy}"
[fast]
method = "rk4"
[implicit]
rtol = 1e-8
atol = 1e-10
[record]
file = "rt-no-alloc-events.csv"
[[bus]]
transport = "virtual"
channel = "{channel}"
dbc = "{}"
[[bus.receive]]
message = "ETB_Command"
timeout = "100ms"
on_timeout = "hold"
signals = {{ MotorTorque = "{part}torque" }}
[[bus.transmit]]
message = "ETB_Feedback"
signals = {{ ThrottleAngle = "{part}throttle_angle" }}
"#,
            plant.display(),
            dbc_path.display()
        );
        let config = parse_run_config(&text, Path::new("rt-no-alloc-events.toml"), PROFILES).unwrap();
        let mut plan = bind(config).unwrap();
        plan.settings.fast.placement.core = None;
        plan.settings.implicit.placement.core = None;
        let results = std::env::temp_dir().join(format!("tandem-rt-no-alloc-events-{}", std::process::id()));
        let session = Session::new(plan, Options::new(ClockMode::Real, &results)).unwrap();

        // The ECU opens and closes the throttle every 150 ms: each time
        // the plate meets a stop, an event on both threads.
        let mut ecu = open_transport(&TransportConfig::Virtual { channel }).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let frames = frames.clone();
        let ecu = std::thread::spawn(move || {
            let mut sent = 0usize;
            while !stopping.load(Relaxed) {
                let _ = ecu.tx.send(&frames[(sent / 15) % 2]);
                while let Ok(Some(_)) = ecu.rx.recv(Duration::ZERO) {}
                sent += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
        });

        ALLOCATIONS.store(0, Relaxed);
        let mut observer = Armed(0.0);
        let report = session.run(&mut observer).unwrap();
        ARMED.store(false, Relaxed);
        stop.store(true, Relaxed);
        ecu.join().unwrap();
        let _ = std::fs::remove_dir_all(&results);

        assert!(report.failure.is_none(), "{:?}", report.failure);
        let m = &report.metrics;
        assert_eq!(m.frames.get(), 3000);
        let (fast, implicit) = (m.fast_events.located.get(), m.implicit_events.located.get());
        assert!(
            fast >= 10 && implicit >= 10,
            "{policy}: events located {fast} and {implicit}"
        );
        assert_eq!(
            ALLOCATIONS.load(Relaxed),
            0,
            "{policy}, {}: allocations while events were located and handled",
            plant.display()
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

/// A recorder that keeps the rows' sum.
struct Summed(f64);

impl tandem_runtime::record::Recorder for Summed {
    fn record(&mut self, t: f64, y: &[f64]) -> std::io::Result<()> {
        self.0 += t + y.iter().sum::<f64>();
        Ok(())
    }
}

#[test]
fn large_plants_step_on_sparse_factors_without_allocating() {
    // 300 states each, stored sparse by default: a tridiagonal ladder, and
    // a battery pack whose factorisation pivots across cells. The implicit
    // thread differences and factors the fast side's matrices and its own,
    // the fast thread solves with them.
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    // The pack again with a helper thread differencing the Jacobians.
    for (model, input, implicit) in [
        ("ladder-300", "heating = [[0, 0], [1, 50]]", ""),
        ("pack-60", "current = [[0, 0], [0.5, 300], [1, -100], [1.5, 0]]", ""),
        (
            "pack-60",
            "current = [[0, 0], [0.5, 300], [1, -100], [1.5, 0]]",
            "helper_cores = [0]",
        ),
    ] {
        let text = format!(
            r#"model = "{model}"
frame = "1ms"
duration = "2s"
policy = "correct"
[fast]
method = "ros34pw2"
[implicit]
{implicit}
[inputs.points]
{input}
"#
        );
        let config = parse_run_config(&text, Path::new("rt-no-alloc-sparse.toml"), PROFILES).unwrap();
        let mut plan = bind(config).unwrap();
        plan.settings.fast.placement.core = None;
        plan.settings.implicit.placement.core = None;
        let results = std::env::temp_dir().join(format!("tandem-rt-no-alloc-sparse-{}", std::process::id()));
        let session = Session::new(plan, Options::new(ClockMode::Real, &results)).unwrap();
        assert!(session.linear_algebra().sparse, "{model}: {}", session.linear_algebra());
        assert_eq!(
            session.jacobian_helpers(),
            usize::from(!implicit.is_empty()),
            "{model} {implicit}"
        );
        ALLOCATIONS.store(0, Relaxed);
        let report = session.run(&mut Armed(0.0)).unwrap();
        ARMED.store(false, Relaxed);
        let _ = std::fs::remove_dir_all(&results);
        assert!(report.failure.is_none(), "{model}: {:?}", report.failure);
        let m = &report.metrics;
        assert_eq!(m.frames.get(), 2000, "{model}");
        assert!(
            m.matrix_updates.get() > 100,
            "{model}: {} matrices",
            m.matrix_updates.get()
        );
        assert_eq!(
            ALLOCATIONS.load(Relaxed),
            0,
            "{model}: allocations while stepping on sparse factors"
        );
    }
}

#[test]
fn a_run_served_as_a_dcp_slave_carries_its_bus_without_allocating() {
    use tandem_dcp::federation::{run_real_time, Federation};
    use tandem_dcp::slave::session::SessionMember;
    use tandem_dcp::slave::{Identity, Slave};

    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let dir = std::env::temp_dir().join(format!("tandem-rt-no-alloc-dcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The plant of `config` with its bus carried over DCP, its frames
    // looped back to itself by the federation: every frame crosses the
    // slave's output and input paths.
    let text = config("unused", "correct")
        .replace("transport = \"virtual\"\nchannel = \"unused\"", "transport = \"dcp\"")
        .replace("duration = \"3s\"", "duration = \"60s\"")
        + "[dcp]\ncontrol = \"127.0.0.1:0\"\nname = \"plant\"\n";
    let mut config = parse_run_config(&text, Path::new("rt-no-alloc-dcp.toml"), PROFILES).unwrap();
    config.settings.fast.placement.core = None;
    config.settings.implicit.placement.core = None;
    let dcp = config.dcp.clone().unwrap();
    let identity = Identity {
        name: dcp.name,
        uuid: [7; 16],
        endpoint: dcp.endpoint,
    };
    let member = SessionMember::new(config, dir.clone()).unwrap();
    let mut slave = Slave::new(identity, Box::new(member)).unwrap();
    std::fs::write(dir.join("plant.dcpx"), slave.description().write()).unwrap();
    std::fs::write(
        dir.join("fed.toml"),
        "[federation]\nstep = 0.001\nstop = 5.0\nmode = \"soft-real-time\"\nstart_delay = 0.2\n\n[[slave]]\nname = \
         \"plant\"\ndescription = \"plant.dcpx\"\n\n[[connection]]\nfrom = \"plant.can0.tx\"\nto = \"plant.can0.rx\"\n",
    )
    .unwrap();
    let federation = Federation::load(&dir.join("fed.toml")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = Arc::clone(&stop);
    let serving = std::thread::Builder::new()
        .name("dcp slave".into())
        .spawn(move || {
            let mut report = String::new();
            slave
                .serve(&stopping, &mut |s| report = s.run_report().unwrap_or_default())
                .unwrap();
            (report, slave.counters())
        })
        .unwrap();
    let master = std::thread::Builder::new()
        .name("script".into())
        .spawn(move || run_real_time(&federation, &mut Summed(0.0)).map_err(|e| e.to_string()))
        .unwrap();
    // Counted from well after the start (every thread past its start-up)
    // to before the end: the fast, implicit, bus and run threads, and the
    // slave's serving thread.
    std::thread::sleep(Duration::from_millis(3500));
    ALLOCATIONS.store(0, Relaxed);
    ARMED.store(true, Relaxed);
    std::thread::sleep(Duration::from_millis(1000));
    ARMED.store(false, Relaxed);
    let reception = master.join().unwrap().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Relaxed);
    let (report, counters) = serving.join().unwrap();
    let _ = std::fs::remove_dir_all(&dir);

    assert_eq!(reception.members[0].missing, 0, "{report}");
    assert!(counters.data_in > 2000 && counters.data_out > 4000, "{counters}");
    let received: u64 = report
        .lines()
        .find_map(|l| l.strip_prefix("frames over DCP: "))
        .and_then(|l| l.split(", ").nth(1)?.split(' ').next()?.parse().ok())
        .unwrap_or(0);
    assert!(received > 400, "frames came back over DCP: {report}");
    assert_eq!(
        ALLOCATIONS.load(Relaxed),
        0,
        "allocations on the real-time, I/O and slave threads:\n{report}"
    );
}

#[test]
fn an_xcp_master_measures_and_calibrates_a_real_time_run_without_allocation_on_its_threads() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let text = "model = \"ev\"\nframe = \"1ms\"\nduration = \"3s\"\n[inputs]\nprofile = \"ev-drive-cycle\"\n\
                [xcp]\nlisten = \"127.0.0.1:0\"\nwait = true\n";
    let config = parse_run_config(text, Path::new("xcp.toml"), PROFILES).unwrap();
    let mut plan = bind(config).unwrap();
    plan.settings.fast.placement.core = None;
    plan.settings.implicit.placement.core = None;
    let results = std::env::temp_dir().join(format!("tandem-rt-no-alloc-xcp-{}", std::process::id()));
    let session = Session::new(plan, Options::new(ClockMode::Real, &results)).unwrap();
    let (udp, _) = session.xcp_addresses().unwrap();

    // Every measurement (13 outputs, 3 inputs) sampled each frame, the
    // mass changed every 100 ms.
    let master = std::thread::Builder::new()
        .name("xcp master".into())
        .spawn(move || {
            let mut master = Master::connect(udp).unwrap();
            let every: Vec<u32> = (0..16).collect();
            master.start_daq(&[(0, &every)]).unwrap();
            let mut acknowledged = 0;
            let mut quiet = 0;
            let mut next = std::time::Instant::now();
            while quiet < 5 {
                if std::time::Instant::now() >= next {
                    let mass = if acknowledged % 2 == 0 { 2000.0 } else { 1800.0 };
                    if master.calibrate(0, mass).unwrap() == [0xFF] {
                        acknowledged += 1;
                    }
                    next += Duration::from_millis(100);
                }
                let before = master.dtos;
                master.receive().unwrap();
                quiet = if master.dtos > before { 0 } else { quiet + 1 };
            }
            let dtos = master.dtos;
            master.disconnect().unwrap();
            (dtos, acknowledged)
        })
        .unwrap();

    ALLOCATIONS.store(0, Relaxed);
    let report = session.run(&mut Armed(0.0)).unwrap();
    ARMED.store(false, Relaxed);
    let (dtos, acknowledged) = master.join().unwrap();
    let _ = std::fs::remove_dir_all(&results);

    assert!(report.failure.is_none(), "{:?}", report.failure);
    assert_eq!(report.metrics.frames.get(), 3000);
    let xcp = report.xcp.unwrap();
    assert_eq!(
        (dtos, xcp.dtos_sent, xcp.overruns),
        (3000, 3000, 0),
        "one DTO per frame"
    );
    let applied = xcp.calibrations.iter().filter(|c| c.applied_at.is_some()).count();
    assert!(
        acknowledged >= 20 && applied + 1 >= acknowledged,
        "{acknowledged} calibrations acknowledged, {applied} applied"
    );
    assert_eq!(
        ALLOCATIONS.load(Relaxed),
        0,
        "allocations on the real-time and I/O paths while an XCP master measured and calibrated"
    );
}
