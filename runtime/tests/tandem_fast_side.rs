//! The fast side on the virtual clock: a linearly implicit step with the
//! iteration matrix the implicit thread published (which frame's state it
//! was taken at, exactly), stability where explicit methods blow up, the
//! guard that keeps every frame physical, and an implicit side that can no
//! longer step forever.

use std::sync::mpsc;
use std::time::Duration;

use tandem_models::{Layout, Model, StateRef, Variable};
use tandem_runtime::rosenbrock::WMethod;
use tandem_runtime::tandem::assemble::{assemble, RecordPlan, Wiring};
use tandem_runtime::tandem::clock::Nanos;
use tandem_runtime::tandem::inputs::Profile;
use tandem_runtime::tandem::virtual_clock::{run_virtual, VirtualCosts};
use tandem_runtime::tandem::{FastMethod, ImplicitSolver, Policy, TandemSettings};
use tandem_runtime::{record::Trace, ImplicitMethod, Method};

mod support;
use support::{costs, settings, FRAME, MS};

/// `x' = rhs(t, x, u)` with one state, one input and the state as output
/// (with a range when given), and `∂rhs/∂x` when given.
struct Scalar {
    rhs: fn(f64, f64, f64) -> f64,
    jacobian: Option<fn(f64) -> f64>,
    x0: f64,
    layout: Layout,
}

impl Scalar {
    fn new(rhs: fn(f64, f64, f64) -> f64, x0: f64, range: Option<(f64, f64)>) -> Self {
        let mut output = Variable::new("x");
        output.range = range;
        Scalar {
            rhs,
            jacobian: None,
            x0,
            layout: Layout {
                states: vec!["x".into()],
                inputs: vec![Variable::new("u")],
                outputs: vec![output],
                ..Layout::default()
            },
        }
    }
}

impl Model for Scalar {
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn fork(&self) -> Box<dyn Model> {
        Box::new(Scalar {
            rhs: self.rhs,
            jacobian: self.jacobian,
            x0: self.x0,
            layout: self.layout.clone(),
        })
    }
    fn initial_state(&mut self, x: &mut [f64], _: &mut [f64]) {
        x[0] = self.x0;
    }
    fn derivatives(&mut self, s: StateRef<'_>, dx: &mut [f64]) {
        dx[0] = (self.rhs)(s.t, s.x[0], s.u[0]);
    }
    fn outputs(&mut self, s: StateRef<'_>, y: &mut [f64]) {
        y[0] = s.x[0];
    }
    fn jacobian(&mut self, s: StateRef<'_>, jac: &mut [f64]) -> bool {
        match self.jacobian {
            Some(j) => {
                jac[0] = j(s.x[0]);
                true
            }
            None => false,
        }
    }
}

/// A run's recorded outputs and metrics.
struct Run {
    outputs: Vec<f64>,
    metrics: std::sync::Arc<tandem_runtime::tandem::metrics::Metrics>,
    failure: Option<String>,
}

/// Runs `model` for `frames` frames under `settings` on the virtual clock
/// with `costs`, its input held at 1.
fn run(model: &dyn Model, settings: &TandemSettings, costs: &VirtualCosts) -> Run {
    let wiring = Wiring {
        record: Some(RecordPlan {
            signals: vec![0],
            decimation: 1,
        }),
        ..Wiring::inputs(model, Box::new(Profile::new(vec![(0, vec![(0.0, 1.0)])])))
    };
    let mut tandem = assemble(settings, model, wiring).unwrap();
    let fast = &mut tandem.fast;
    let result = run_virtual(
        fast,
        tandem.implicit.as_mut(),
        settings.frames(),
        (FRAME * 1e9) as Nanos,
        costs,
        &mut |_| std::ops::ControlFlow::Continue(()),
    );
    let mut trace = Trace::default();
    tandem.recording.as_mut().unwrap().drain(&mut trace).unwrap();
    Run {
        outputs: trace.rows.iter().map(|r| r[0]).collect(),
        metrics: tandem.metrics,
        failure: result.err().map(|e| e.to_string()),
    }
}

/// `x' = -a x²`: `J = -2 a x` depends on the state, so the matrix a step
/// used tells which frame's state it was prepared at.
fn quadratic(_: f64, x: f64, _: f64) -> f64 {
    -50.0 * x * x
}

#[test]
fn each_frame_steps_with_the_matrix_of_the_newest_frame_the_implicit_thread_has_seen() {
    let mut model = Scalar::new(quadratic, 2.0, None);
    model.jacobian = Some(|x| -100.0 * x);
    let method = FastMethod::LinearlyImplicit(WMethod::RosenbrockEuler);
    let s = settings(Policy::Explicit, method, 12);
    let mut c = costs();
    // The matrix for frame 5's state takes 2.5 ms longer (published at
    // 7.81 ms): frames 6 and 7 still step with frame 4's, frame 8 with
    // frame 5's; then the implicit thread takes the newest frame it has
    // (7, published at 8.11 ms, too late for frame 8; then 8), skipping 6.
    c.implicit_delays = vec![(5 * MS, 2_500_000)];
    let r = run(&model, &s, &c);
    assert!(r.failure.is_none());
    // Linearly implicit Euler with the matrix taken at frame j's state:
    // x+ = x + h f(x) / (1 - h J(x_j)), J(x) = -100 x.
    let taken_at = |k: usize| match k {
        0 => 0,
        6 | 7 => 4,
        8 => 5,
        _ => k - 1,
    };
    let mut exact = vec![2.0];
    for k in 0..11 {
        let (x, xj) = (exact[k], exact[taken_at(k)]);
        exact.push(x + FRAME * quadratic(0.0, x, 0.0) / (1.0 + FRAME * 100.0 * xj));
    }
    assert_eq!(r.outputs.len(), exact.len());
    for (k, (output, exact)) in r.outputs.iter().zip(&exact).enumerate() {
        assert!(
            (output - exact).abs() <= 1e-15 * exact,
            "frame {k}: {output} vs {exact}"
        );
    }
    let age = r.metrics.matrix_age.snapshot();
    assert_eq!((age.count, age.max), (12, 3.0), "frame 7 steps with frame 4's matrix");
    assert_eq!(r.metrics.matrix_updates.get(), 11, "one per frame sent but frame 6's");
}

#[test]
fn a_linearly_implicit_fast_side_alone_is_stable_where_explicit_methods_blow_up() {
    // x' = a (u - x) at a h = 1e4 (λh = -1e4), u = 1: x → 1.
    let model = Scalar::new(|_, x, u| 1e7 * (u - x), 0.0, None);
    let rk4 = run(
        &model,
        &settings(Policy::Explicit, FastMethod::Explicit(Method::Rk4), 50),
        &costs(),
    );
    assert!(rk4.failure.is_some_and(|f| f.contains("diverged")));
    for method in WMethod::ALL {
        let r = run(
            &model,
            &settings(Policy::Explicit, FastMethod::LinearlyImplicit(method), 50),
            &costs(),
        );
        assert!(r.failure.is_none(), "{method}");
        // One step from 0 lands within |R(λh)| of 1, the rest on it.
        for (k, x) in r.outputs.iter().enumerate().skip(2) {
            assert!((x - 1.0).abs() < 1e-3, "{method}, frame {k}: {x}");
        }
    }
}

#[test]
fn an_explicit_state_far_from_the_implicit_prediction_takes_the_prediction_and_outputs_keep_their_range() {
    // A stiff lag (λh = -20) under `select`: when the implicit result for
    // 5 ms comes late, RK4's own steps amplify the error by |R(-20)| ≈ 5500
    // a frame. The guard replaces those states with the implicit prediction
    // and the output range caps what could be sent meanwhile.
    let model = Scalar::new(|_, x, u| 2e4 * (u - x), 0.0, Some((-2.0, 2.0)));
    let mut s = settings(Policy::Select, FastMethod::Explicit(Method::Rk4), 30);
    s.implicit.solver = ImplicitSolver::Fixed(ImplicitMethod::Bdf1);
    let mut c = costs();
    c.implicit_delays = vec![(5 * MS, 4 * MS)];
    let r = run(&model, &s, &c);
    assert!(r.failure.is_none(), "{:?}", r.failure);
    let m = &r.metrics;
    assert!(m.unusable_out_of_bound.get() + m.unusable_nonfinite.get() >= 1);
    assert!(m.substituted_implicit.get() >= 1);
    for (k, x) in r.outputs.iter().enumerate() {
        assert!(x.is_finite() && (-2.0..=2.0).contains(x), "frame {k}: {x}");
    }
}

/// `x' = ω cos(ω t)` with ω = 1e9: smooth, but a BDF must take steps of
/// about 1e-10 s to follow it, ten million per frame.
fn buzz(t: f64, _: f64, _: f64) -> f64 {
    1e9 * (1e9 * t).cos()
}

#[test]
fn an_implicit_side_that_cannot_reach_the_frame_gives_up_and_the_run_ends() {
    let model = Scalar::new(buzz, 0.0, None);
    let mut s = settings(Policy::Correct, FastMethod::LinearlyImplicit(WMethod::Ros2), 5);
    s.implicit.solver = ImplicitSolver::Bdf;
    s.implicit.rtol = 1e-6;
    s.implicit.atol = 1e-8;
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let r = run(&model, &s, &costs());
        let _ = done.send((r.failure, r.metrics.implicit_failures.get(), r.metrics.frames.get()));
    });
    // Before the step budget, one frame took about ten million BDF steps.
    let (failure, failures, frames) = finished.recv_timeout(Duration::from_secs(60)).expect("the run ended");
    assert_eq!((failure, frames), (None, 5));
    assert!(failures >= 1, "the implicit side gave up and restarted");
}
