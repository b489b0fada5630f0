//! Two integrators on two threads evaluate the same compiled model at once:
//! each takes its own instance with `Model::fork`, which shares the program
//! and owns a workspace. Their results are bit-identical to a lone run.

use tandem_models::{diagram, Model};
use tandem_runtime::record::Trace;
use tandem_runtime::{FixedStep, Method, Simulation};

fn run(model: &mut dyn Model, method: Method) -> Trace {
    let mut trace = Trace::default();
    let settings = FixedStep {
        solver: method.into(),
        step: 0.01,
        stop: 200.0,
    };
    Simulation::new(model, settings)
        .unwrap()
        .run(&mut trace, &mut |_| {})
        .unwrap();
    trace
}

#[test]
fn forked_instances_run_concurrently_and_agree_bit_for_bit() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/examples/cruise_control.json"
    ))
    .unwrap();
    let mut original = diagram::compile_str(&text).unwrap().model;
    let alone = run(&mut original, Method::Rk4);
    let (mut a, mut b) = (original.fork(), original.fork());
    let (ta, tb) = std::thread::scope(|s| {
        let ha = s.spawn(|| run(a.as_mut(), Method::Rk4));
        let hb = s.spawn(|| run(b.as_mut(), Method::Heun));
        (ha.join().unwrap(), hb.join().unwrap())
    });
    let bits = |t: &Trace| t.rows.iter().flatten().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        bits(&ta),
        bits(&alone),
        "a forked instance on another thread differs from the lone run"
    );
    // The other thread ran a different method on the same program at the same time.
    assert_ne!(bits(&tb), bits(&alone));
    assert!((tb.rows.last().unwrap()[0] - alone.rows.last().unwrap()[0]).abs() < 1e-3);
}
