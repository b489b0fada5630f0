//! The tandem on real threads ends whatever its threads do: a thread that
//! does not return within the grace period after the last frame is
//! reported and left behind, and the run returns what it has.

use std::sync::Arc;
use std::time::Duration;

use tandem_models::{Layout, Model, StateRef, Variable};
use tandem_runtime::tandem::assemble::{assemble, Wiring};
use tandem_runtime::tandem::inputs::Profile;
use tandem_runtime::tandem::threads::run_realtime;
use tandem_runtime::tandem::{Placement, TandemSettings};

/// `x' = -x`, whose evaluation never returns on the implicit thread once
/// the run is 20 ms in.
struct StuckOnTheImplicitThread(Layout);

impl Model for StuckOnTheImplicitThread {
    fn layout(&self) -> &Layout {
        &self.0
    }
    fn fork(&self) -> Box<dyn Model> {
        Box::new(StuckOnTheImplicitThread(self.0.clone()))
    }
    fn initial_state(&mut self, x: &mut [f64], _: &mut [f64]) {
        x[0] = 1.0;
    }
    fn derivatives(&mut self, s: StateRef<'_>, dx: &mut [f64]) {
        if std::thread::current().name() == Some("tandem-implicit") && s.t > 0.02 {
            loop {
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        dx[0] = -s.x[0];
    }
    fn outputs(&mut self, s: StateRef<'_>, y: &mut [f64]) {
        y[0] = s.x[0];
    }
}

#[test]
fn a_stuck_implicit_thread_is_reported_and_the_run_returns_with_the_fast_side() {
    let model = StuckOnTheImplicitThread(Layout {
        states: vec!["x".into()],
        outputs: vec![Variable::new("x")],
        ..Layout::default()
    });
    let mut settings = TandemSettings::new(1e-3, 0.2);
    settings.fast.placement = Placement {
        core: None,
        priority: 80,
    };
    settings.implicit.placement = Placement {
        core: None,
        priority: 70,
    };
    let tandem = assemble(
        &settings,
        &model,
        Wiring::inputs(&model, Box::new(Profile::new(Vec::new()))),
    )
    .unwrap();
    let outcome = run_realtime(
        &settings,
        tandem.fast,
        tandem.implicit,
        Arc::default(),
        None,
        Duration::from_millis(20),
        &mut |_| {},
    );
    assert_eq!(outcome.stuck, ["implicit"]);
    assert!(outcome.implicit.is_none());
    assert!(outcome.failure.is_none());
    assert_eq!(tandem.metrics.frames.get(), 200, "the fast thread ran every frame");
    assert!(outcome.fast.is_some());
}
