//! Evaluating and stepping a model must not allocate: a counting global
//! allocator watches whole runs of every shipped example and of a diagram
//! using every stateless block family.

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::allocations_in;
use tandem_models::diagram;
use tandem_models::plants::testset;
use tandem_models::Model;
use tandem_runtime::record::Recorder;
use tandem_runtime::tandem::{FastMethod, ImplicitSolver, Policy};
use tandem_runtime::{
    Bdf, BdfOptions, FixedImplicit, FixedStep, FixedStepper, ImplicitMethod, ImplicitSettings, Method, ModelOde,
    Simulation, Solver,
};

/// Keeps a running sum so the outputs are used; never allocates.
struct Checksum(f64);
impl Recorder for Checksum {
    fn record(&mut self, _: f64, y: &[f64]) -> std::io::Result<()> {
        self.0 += y.iter().sum::<f64>();
        Ok(())
    }
}

fn assert_run_does_not_allocate(name: &str, text: &str, solver: Solver, step: f64, stop: f64) {
    let mut compiled = diagram::compile_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let settings = FixedStep { solver, step, stop };
    let mut sim = Simulation::new(&mut compiled.model, settings).unwrap();
    let mut sink = Checksum(0.0);
    let mut progress_calls = 0;
    let n = allocations_in(|| {
        sim.run(&mut sink, &mut |_| progress_calls += 1).unwrap();
    });
    assert!(sink.0.is_finite() && progress_calls > 0);
    assert_eq!(n, 0, "{name}: {n} allocations during the run");
}

#[test]
fn a_run_driven_by_an_input_series_does_not_allocate() {
    use tandem_session::offline::{InputSeries, Inputs};
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/examples/cruise_control.json"
    ))
    .unwrap();
    let mut inputs = Inputs::new(1);
    inputs.set(
        0,
        Some(InputSeries::new(vec![0.0, 20.0, 40.0], vec![0.5, 0.7, 0.6], false).unwrap()),
    );
    for solver in [Method::Rk4.into(), Solver::BDF] {
        let mut compiled = diagram::compile_str(&text).unwrap();
        let settings = FixedStep {
            solver,
            step: 0.01,
            stop: 50.0,
        };
        let mut sim = Simulation::new(&mut compiled.model, settings).unwrap();
        let mut sink = Checksum(0.0);
        let n = allocations_in(|| {
            inputs.run(&mut sim, &mut sink, &mut |_| {}).unwrap();
        });
        assert!(sink.0.is_finite());
        assert_eq!(n, 0, "{solver}: {n} allocations during a driven run");
    }
}

#[test]
fn example_runs_do_not_allocate() {
    let root = env!("CARGO_MANIFEST_DIR");
    for (name, step, stop) in [
        ("abs_slip", 0.001, 1.0),
        ("bouncing_ball", 0.01, 20.0),
        ("cruise_control", 0.01, 50.0),
    ] {
        let text = std::fs::read_to_string(format!("{root}/models/examples/{name}.json")).unwrap();
        for method in Method::ALL {
            assert_run_does_not_allocate(name, &text, method.into(), step, stop);
        }
        assert_run_does_not_allocate(name, &text, Solver::BDF, step, stop);
    }
}

#[test]
fn every_stateless_family_evaluates_without_allocating() {
    let text = serde_json::json!({
        "blocks": [
            {"id": "t", "type": "Clock"},
            {"id": "s", "type": "Sine"}, {"id": "p", "type": "Pulse"}, {"id": "r", "type": "Ramp"}, {"id": "st", "type": "Step"},
            {"id": "tab", "type": "FromTable", "params": {"times": [0, 1, 2], "values": [[0, 1], [1, 0], [0, 1]]}},
            {"id": "mux", "type": "Mux", "params": {"inputs": 3}},
            {"id": "expr", "type": "Expression", "params": {"expression": "k * sin(u1) + (u2 > 0.5) * u3 ^ 2", "inputs": 3, "constants": {"k": 2}}},
            {"id": "prod", "type": "Product", "params": {"ops": "*/"}},
            {"id": "one", "type": "Constant", "params": {"value": 1.5}},
            {"id": "mm", "type": "MinMax", "params": {"function": "max"}},
            {"id": "sat", "type": "Saturation"}, {"id": "dz", "type": "DeadZone"},
            {"id": "lut", "type": "Lookup1D", "params": {"breakpoints": [-1, 0, 1], "table": [1, 0, 1]}},
            {"id": "lut2", "type": "Lookup2D", "params": {"rows": [0, 1], "columns": [0, 1], "table": [[0, 1], [1, 2]]}},
            {"id": "cmp", "type": "CompareToConstant", "params": {"operator": ">", "constant": 0}},
            {"id": "sw", "type": "Switch"},
            {"id": "if", "type": "If", "params": {"conditions": ["u1 > 0.5"]}},
            {"id": "fun", "type": "MathFunction", "params": {"function": "atan2"}},
            {"id": "x", "type": "Integrator"},
            {"id": "pid", "type": "PID", "params": {"kp": 1, "ki": 1, "kd": 0.1}},
            {"id": "y", "type": "Output"}, {"id": "y2", "type": "Output"}, {"id": "y3", "type": "Output"}, {"id": "y4", "type": "Output"}
        ],
        "links": [
            {"from": "s", "to": ["mux.1", "expr.1", "prod.1", "sat", "lut", "lut2.1", "fun.1"]},
            {"from": "p", "to": ["mux.2", "expr.2", "sw.2", "if"]},
            {"from": "tab", "to": "mux.3"},
            {"from": "r", "to": ["expr.3", "lut2.2", "fun.2"]},
            {"from": "one", "to": "prod.2"},
            {"from": "st", "to": ["mm.1", "dz", "cmp"]},
            {"from": "t", "to": ["mm.2", "sw.1", "sw.3"]},
            {"from": "expr", "to": "x"},
            {"from": "x", "to": "pid"},
            {"from": "pid", "to": "y"}, {"from": "mux", "to": "y2"}, {"from": "prod", "to": "y3"}, {"from": "if.if", "to": "y4"}
        ]
    })
    .to_string();
    assert_run_does_not_allocate("stateless families", &text, Method::Rk4.into(), 0.01, 3.0);
}

#[test]
fn the_counter_sees_allocations() {
    let n = allocations_in(|| drop(std::hint::black_box(Vec::<u64>::with_capacity(8))));
    assert_eq!(n, 1);
}

#[test]
fn bdf_steps_do_not_allocate() {
    // Analytic (ROBER) and difference Jacobians, 3 to 20 states.
    for name in ["ROBER", "HIRES", "POLLU"] {
        let mut problem = testset::problem(name).unwrap();
        let n = problem.layout().states.len();
        let mut y0 = vec![0.0; n];
        problem.initial_state(&mut y0, &mut []);
        let mut y = vec![0.0; n];
        let mut bdf = Bdf::new(n, BdfOptions::default(), None).unwrap();
        let t_end = problem.t_end;
        let mut system = ModelOde {
            model: &mut problem,
            xd: &[],
            u: &[],
        };
        let count = allocations_in(|| {
            bdf.init(&mut system, 0.0, &y0, t_end);
            bdf.solve_to(&mut system, t_end, f64::INFINITY, &mut y).unwrap();
        });
        assert!(
            bdf.stats().steps > 50 && bdf.stats().jacobian_evals > 1,
            "{name}: {}",
            bdf.stats()
        );
        assert_eq!(count, 0, "{name}: {count} allocations over {} steps", bdf.stats().steps);
    }
}

#[test]
fn fixed_step_implicit_steps_do_not_allocate() {
    for method in ImplicitMethod::ALL {
        let mut problem = testset::problem("HIRES").unwrap();
        let mut y = vec![0.0; 8];
        problem.initial_state(&mut y, &mut []);
        let settings = ImplicitSettings {
            method,
            ..ImplicitSettings::default()
        };
        let mut integrator = FixedImplicit::new(8, settings, None);
        let mut system = ModelOde {
            model: &mut problem,
            xd: &[],
            u: &[],
        };
        let count = allocations_in(|| {
            for i in 0..2000 {
                integrator.step(&mut system, i as f64 * 1e-3, 1e-3, &mut y);
            }
        });
        assert!(integrator.stats().jacobian_evals >= 1 && y.iter().all(|v| v.is_finite()));
        assert_eq!(count, 0, "{method}: {count} allocations over 2000 steps");
    }
}

#[test]
fn solving_an_algebraic_loop_does_not_allocate() {
    // x' = y with y = sin t - y^3: a nonlinear loop at every evaluation.
    let text = r#"{"algebraic_loops": "solve", "blocks": [
        {"id": "u", "type": "Sine"},
        {"id": "f", "type": "Expression", "params": {"expression": "u1 - u2^3", "inputs": 2}},
        {"id": "x", "type": "Integrator"}, {"id": "out", "type": "Output"}],
      "links": [{"from": "u", "to": "f.1"}, {"from": "f", "to": ["f.2", "x"]}, {"from": "x", "to": "out"}]}"#;
    for solver in [Method::Rk4.into(), Solver::BDF] {
        assert_run_does_not_allocate("algebraic loop", text, solver, 0.01, 5.0);
    }
}

/// Arms the thread's counter after the first frame of a session on the
/// virtual clock, until the frames end; sums the recorded rows.
struct ArmedAfterFirstFrame(f64);

impl tandem_session::Observer for ArmedAfterFirstFrame {
    fn record(&mut self, _: f64, y: &[f64]) {
        self.0 += y.iter().sum::<f64>();
    }
    fn tick(&mut self, running: bool) {
        counting_alloc::watch(running);
    }
}

#[test]
fn a_session_on_the_virtual_clock_with_a_replayed_bus_does_not_allocate() {
    use tandem_runtime::tandem::metrics::FrameSource;
    use tandem_runtime::tandem::virtual_clock::VirtualCosts;
    use tandem_session::replay::LogFeed;
    use tandem_session::{bind, ClockMode, Options, Session};

    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("tandem-no-alloc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The ECU's torque command every 10 ms for 1.5 s, with a silence from
    // 0.6 to 0.8 s that trips the receive timeout.
    let dbc = tandem_dbc::Dbc::load(&root.join("config/examples/ev.dbc")).unwrap();
    let command = dbc.message("ECU_Command").unwrap();
    let mut log = String::new();
    for i in (0..150).filter(|i| !(60..80).contains(i)) {
        let mut payload = vec![0u8; command.len];
        command
            .signal("TorqueRequest")
            .unwrap()
            .encode(f64::from(i % 50) * 2.0, &mut payload);
        let hex: String = payload.iter().map(|b| format!("{b:02X}")).collect();
        log += &format!("({}.{:06}) can0 100#{hex}\n", 1000 + i / 100, (i % 100) * 10_000);
    }
    let log_file = dir.join("commands.log");
    std::fs::write(&log_file, log).unwrap();
    let text = format!(
        "model = \"ev\"\nframe = \"1ms\"\nduration = \"1.5s\"\n[inputs]\nprofile = \"ev-drive-cycle\"\n\
         [record]\nfile = \"no-alloc.csv\"\nsignals = [\"vehicle_speed\", \"dc_voltage\"]\nbus_log = \"no-alloc.log\"\n\
         [[bus]]\ntransport = \"udp\"\ndbc = \"{}\"\n\
         [[bus.receive]]\nmessage = \"ECU_Command\"\ntimeout = \"100ms\"\non_timeout = \"default\"\n\
         signals = {{ TorqueRequest = \"torque_request\" }}\n\
         [[bus.transmit]]\nmessage = \"VCU_Speeds\"\nsignals = {{ VehicleSpeed = \"vehicle_speed\" }}\n\
         [[bus.transmit]]\nmessage = \"VCU_Diagnostics\"\nsignals = {{ SlipFront = \"slip_front\", Distance = \"distance\" }}\n",
        root.join("config/examples/ev.dbc").display()
    );
    // Delays, overruns and a stall drive every path: catch-up, stale
    // results, resyncs, extrapolated outputs, skipped slots, owed frames
    // caught up, held outputs.
    let costs = VirtualCosts {
        fast_step: 20_000,
        implicit_step: 300_000,
        wake_latency: 5_000,
        implicit_delays: vec![
            (200_000_000, 2_500_000),
            // Late with the overrun below: the frame's outputs are
            // extrapolated.
            (299_000_000, 2_000_000),
            (500_000_000, 8_000_000),
            (900_000_000, 30_000_000),
        ],
        fast_overruns: vec![(300_000_000, 900_000)],
        stalls: vec![(1_200_300_000, 60_000_000)],
    };
    let fast_methods = [
        FastMethod::LinearlyImplicit(tandem_runtime::WMethod::Ros34pw2),
        FastMethod::Explicit(Method::Rk4),
    ];
    let solvers = [ImplicitSolver::Bdf, ImplicitSolver::Fixed(ImplicitMethod::Bdf2)];
    for policy in [Policy::Correct, Policy::Select] {
        for (solver, fast) in solvers.into_iter().flat_map(|s| fast_methods.map(|f| (s, f))) {
            // RK4 alone is unstable on this plant at 1 ms; under `correct`
            // it lives on corrections, which a fixed-step implicit side (a
            // step a frame, 300 µs each here) cannot give while 60 owed
            // frames are caught up at 20 µs each: the run ends named
            // ("diverged … too stiff for rk4"), as tests/run.rs checks.
            let rk4 = matches!(fast, FastMethod::Explicit(_));
            if policy == Policy::Correct && rk4 && solver != ImplicitSolver::Bdf {
                continue;
            }
            let config =
                tandem_config::parse_run_config(&text, &dir.join("run.toml"), tandem_models::plants::PROFILES).unwrap();
            let mut plan = bind(config).unwrap();
            plan.settings.policy = policy;
            plan.settings.implicit.solver = solver;
            plan.settings.fast.method = fast;
            plan.virtual_costs = costs.clone();
            let options = Options {
                replay: Some(LogFeed::open(&log_file).unwrap()),
                ..Options::new(ClockMode::Virtual, &dir)
            };
            let session = Session::new(plan, options).unwrap();
            let mut observer = ArmedAfterFirstFrame(0.0);
            let before = counting_alloc::count();
            let report = session.run(&mut observer).unwrap();
            let n = counting_alloc::count() - before;
            assert!(report.failure.is_none(), "{:?}", report.failure);
            let m = &report.metrics;
            assert!(m.from_source(FrameSource::Extrapolated) >= 1);
            assert!(m.from_source(FrameSource::Skipped) >= 59 && m.caught_up.get() >= 59);
            assert_eq!(m.stalls.snapshot().count, 1);
            // At least one after the 30 ms delay and one after the stall.
            assert!(
                m.resyncs.get() >= 2 && m.implicit_steps.get() > 1000,
                "{} resyncs",
                m.resyncs.get()
            );
            let bus = &report.devices[0].metrics;
            assert_eq!((bus.rx_frames.get(), bus.timeouts.get()), (130, 1));
            assert!(
                bus.tx_frames.get() > 200 && bus.log_dropped.get() == 0,
                "{} frames sent, {} log records dropped",
                bus.tx_frames.get(),
                bus.log_dropped.get()
            );
            assert!(observer.0.is_finite() && observer.0 != 0.0);
            assert_eq!(n, 0, "{policy} with {fast} and {solver}: {n} allocations");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Changes a parameter and an input at its 200th poll, with the counter
/// off while it does (preparing a change allocates, off the frames).
struct Changer {
    controls: tandem_session::Controls,
    polls: u64,
    applied: Vec<tandem_session::Applied>,
    last_v_ref: f64,
}

impl tandem_session::Observer for Changer {
    fn record(&mut self, _: f64, y: &[f64]) {
        self.last_v_ref = y[1];
    }
    fn tick(&mut self, running: bool) {
        counting_alloc::watch(false);
        self.polls += 1;
        if self.polls == 200 {
            self.controls
                .set_parameter("speed_map", "gain", &serde_json::json!(30.0))
                .unwrap();
            self.controls.set_input("pedal", 0.6).unwrap();
        }
        self.applied.extend(self.controls.applied());
        counting_alloc::watch(running);
    }
}

#[test]
fn changing_a_running_sessions_parameter_and_input_does_not_allocate_in_its_frames() {
    use tandem_session::{bind, ClockMode, Options, Session};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("tandem-no-alloc-retune-{}", std::process::id()));
    let config = tandem_config::load_run_config(
        &root.join("config/examples/cruise.toml"),
        tandem_models::plants::PROFILES,
    )
    .unwrap();
    let mut plan = bind(config).unwrap();
    plan.settings.duration = 5.0;
    let mut session = Session::new(plan, Options::new(ClockMode::Virtual, &dir)).unwrap();
    let mut changer = Changer {
        controls: session.controls().unwrap(),
        polls: 0,
        applied: Vec::new(),
        last_v_ref: f64::NAN,
    };
    let before = counting_alloc::count();
    let report = session.run(&mut changer).unwrap();
    let n = counting_alloc::count() - before;
    assert!(report.failure.is_none());
    // Asked after 200 frames (the 200th poll): frame 200 may have begun on
    // the real clock, so the change is due at frame 201, on both sides.
    assert_eq!(changer.applied, [tandem_session::Applied { seq: 1, frame: 201 }]);
    assert_eq!(changer.last_v_ref, 30.0 * 0.6);
    assert_eq!(n, 0, "{n} allocations in the frames of a retuned session");
    let _ = std::fs::remove_dir_all(&dir);
}
