//! `tandem-bench scale`: how large a stiff plant runs in real time. The
//! thermal ladder (`ladder-N`: N states, a tridiagonal Jacobian, its
//! fastest mode at `λh ≈ −1.6·10³` for N = 2000 at 1 ms) on the real clock
//! under `correct` with `ros34pw2` on the fast side and the BDF on the
//! implicit side, at 1 kHz and 10 kHz, growing N, beside the EV plant run
//! the same way: a size holds when the run had no unusable state, the fast
//! side's compute p99 stayed within 30 % of the frame (300 µs at 1 kHz),
//! the iteration matrices were at most 10 frames old at p99, and it missed
//! no more deadlines than the EV plant plus one in a thousand frames. A
//! size or two is also run with dense factors, for comparison.

use std::time::Duration;

use tandem_models::plants;
use tandem_runtime::linalg::LinearSolver;
use tandem_runtime::tandem::metrics::{FrameSource, Metrics};
use tandem_runtime::tandem::TandemSettings;
use tandem_session::{ClockMode, Options, Plan, Session};

/// The sizes tried, in order, until two in a row do not hold.
const SIZES: [usize; 10] = [100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000];

/// Sizes also run with dense factors (larger ones take seconds a frame).
const DENSE_SIZES: [usize; 2] = [200, 500];

/// The fast side's compute p99 allowed, as a share of the frame.
const COMPUTE_SHARE: f64 = 0.3;

/// The iteration matrices' age allowed at p99 (frames).
const MATRIX_AGE: f64 = 10.0;

/// What one run measured.
struct Measured {
    frames: u64,
    missed: u64,
    fast_p99_us: f64,
    implicit_p99_us: f64,
    matrix_age_p99: f64,
    unusable: u64,
    implicit_share: f64,
    failure: Option<String>,
}

impl Measured {
    fn of(metrics: &Metrics, failure: Option<String>) -> Self {
        let frames = metrics.frames.get();
        Measured {
            frames,
            missed: metrics.missed(),
            fast_p99_us: metrics.compute.snapshot().percentile(0.99) / 1e3,
            implicit_p99_us: metrics.implicit_compute.snapshot().percentile(0.99) / 1e3,
            matrix_age_p99: metrics.matrix_age.snapshot().percentile(0.99),
            unusable: metrics.unusable_nonfinite.get() + metrics.unusable_out_of_bound.get(),
            implicit_share: metrics.from_source(FrameSource::Implicit) as f64 / frames.max(1) as f64,
            failure,
        }
    }

    /// Whether it meets the goals, beside a baseline that missed
    /// `baseline_missed` deadlines.
    fn holds(&self, frame: f64, baseline_missed: u64) -> bool {
        self.failure.is_none()
            && self.unusable == 0
            && self.fast_p99_us <= COMPUTE_SHARE * frame * 1e6
            && self.matrix_age_p99 <= MATRIX_AGE
            && self.missed <= baseline_missed + self.frames / 1000
    }
}

/// Runs built-in model `name` at `frame` for `seconds` on the real clock
/// with `solver`.
fn run_plant(name: &str, frame: f64, seconds: f64, solver: LinearSolver) -> anyhow::Result<Measured> {
    let model = plants::builtin(name).ok_or_else(|| anyhow::anyhow!("no built-in model {name}"))?;
    let mut settings = TandemSettings::new(frame, seconds);
    settings.implicit.linear_solver = solver;
    let plan = Plan::new(model, name, settings, Vec::new());
    let session = Session::new(plan, Options::new(ClockMode::Real, std::env::temp_dir()))?;
    let report = session.run(&mut ())?;
    Ok(Measured::of(&report.metrics, report.failure))
}

/// Prints one row.
fn row(label: &str, m: &Measured, holds: Option<bool>) {
    println!(
        "  {label:>16} {:>8} {:>7} {:>10.0} {:>10.0} {:>8.1} {:>9} {:>9.2} %  {}{}",
        m.frames,
        m.missed,
        m.fast_p99_us,
        m.implicit_p99_us,
        m.matrix_age_p99,
        m.unusable,
        100.0 * m.implicit_share,
        match holds {
            Some(true) => "holds",
            Some(false) => "does not hold",
            None => "baseline",
        },
        m.failure.as_ref().map(|f| format!(" ({f})")).unwrap_or_default()
    );
}

/// `tandem-bench scale`.
pub fn run(seconds: f64) -> anyhow::Result<()> {
    println!(
        "scale: the thermal ladder ladder-N under correct (ros34pw2 + bdf, sparse factors unless said) on the real \
         clock, {seconds} s per size"
    );
    println!(
        "  goal: 2000 states at 1 kHz with fast compute p99 <= 300 µs, matrix age p99 <= 10 frames, no unusable \
         state, missing no more than the EV plant; a size holds when it meets these (at 10 kHz: 30 µs)"
    );
    for frame in [1e-3f64, 1e-4] {
        println!("  at {} kHz", (1e-3 / frame).round());
        println!(
            "  {:>16} {:>8} {:>7} {:>10} {:>10} {:>8} {:>9} {:>11}",
            "plant", "frames", "missed", "fast p99", "impl. p99", "mat. age", "unusable", "implicit"
        );
        println!(
            "  {:>16} {:>8} {:>7} {:>10} {:>10} {:>8}",
            "", "", "", "µs", "µs", "p99"
        );
        let ev = run_plant("ev", frame, seconds, LinearSolver::Auto)?;
        row("ev", &ev, None);
        for n in DENSE_SIZES {
            let m = run_plant(&format!("ladder-{n}"), frame, seconds, LinearSolver::Dense)?;
            row(&format!("ladder-{n} dense"), &m, Some(m.holds(frame, ev.missed)));
        }
        let (mut largest, mut misses_in_a_row) = (None, 0);
        for n in SIZES {
            let m = run_plant(&format!("ladder-{n}"), frame, seconds, LinearSolver::Auto)?;
            let holds = m.holds(frame, ev.missed);
            row(&format!("ladder-{n}"), &m, Some(holds));
            if holds {
                largest = Some(n);
                misses_in_a_row = 0;
            } else {
                misses_in_a_row += 1;
                if misses_in_a_row == 2 {
                    break;
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        match largest {
            Some(n) => println!("  largest that holds at {} kHz: {n} states", (1e-3 / frame).round()),
            None => println!("  none holds at {} kHz", (1e-3 / frame).round()),
        }
    }
    Ok(())
}
