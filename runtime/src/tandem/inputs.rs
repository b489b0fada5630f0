//! Where the fast thread reads its inputs each frame: a profile of
//! breakpoints here; the session's devices (CAN, serial) implement the
//! same trait over it.

use tandem_models::plants::profile_value;
use tandem_models::Layout;

/// Inputs read by the fast thread at the start of each frame. Must not
/// allocate, lock or block.
pub trait InputSource: Send {
    /// Writes the newest inputs at frame time `t` into `u` (inputs it does
    /// not drive are left as they are) and returns when they were sampled
    /// (s, at most `t`), from which the implicit thread extrapolates them.
    fn read(&mut self, t: f64, u: &mut [f64]) -> f64;

    /// The same for a frame computed after its slot passed (catching up
    /// after a stall): only what was sampled by `t` may reach it. By
    /// default as [`InputSource::read`], for sources that are functions of
    /// time.
    fn read_late(&mut self, t: f64, u: &mut [f64]) -> f64 {
        self.read(t, u)
    }
}

/// For each driven input: its index and piecewise-linear breakpoints
/// `(t, value)`.
pub type Signals = Vec<(usize, Vec<(f64, f64)>)>;

/// Breakpoints given by input name, as the indices of `layout`'s inputs;
/// the first name the model does not have is the error.
pub fn signals_by_name<'a>(
    layout: &Layout,
    named: impl IntoIterator<Item = (&'a str, &'a [(f64, f64)])>,
) -> Result<Signals, &'a str> {
    named
        .into_iter()
        .map(|(name, points)| {
            let index = layout.inputs.iter().position(|v| v.name == name).ok_or(name)?;
            Ok((index, points.to_vec()))
        })
        .collect()
}

/// Piecewise-linear signals through breakpoints, held beyond their ends.
pub struct Profile {
    signals: Signals,
}

impl Profile {
    /// A profile driving input `index` through `points` for each entry;
    /// the times of each signal must not decrease.
    pub fn new(signals: Signals) -> Self {
        Profile { signals }
    }
}

impl InputSource for Profile {
    fn read(&mut self, t: f64, u: &mut [f64]) -> f64 {
        for (index, points) in &self.signals {
            u[*index] = profile_value(points, t);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_interpolates_holds_and_steps() {
        let mut p = Profile::new(vec![(1, vec![(0.0, 0.0), (1.0, 10.0), (1.0, 20.0), (3.0, 0.0)])]);
        let mut u = [7.0, 0.0];
        let mut at = |t| {
            p.read(t, &mut u);
            u
        };
        assert_eq!(at(-1.0), [7.0, 0.0]);
        assert_eq!(at(0.5), [7.0, 5.0]);
        assert_eq!(at(1.0), [7.0, 20.0], "at a step: the value after it");
        assert_eq!(at(2.0), [7.0, 10.0]);
        assert_eq!(at(0.25), [7.0, 2.5]);
        assert_eq!(at(9.0), [7.0, 0.0]);
    }
}
