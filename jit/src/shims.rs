//! What compiled code calls back into: the interpreter for the blocks it
//! leaves to it, and the same Rust functions the interpreter calls for
//! transcendental functions, interpolation, `min` and `max`, so that they
//! round alike.

use tandem_models::blocks::kernel::{Binary, Unary};
use tandem_models::blocks::{Curve, Surface};
use tandem_models::diagram::{Buffers, Program};

/// What one evaluation works on, read by compiled code at the offsets of
/// its fields.
#[repr(C)]
pub(crate) struct Env {
    pub signals: *mut f64,
    pub distance: *mut f64,
    pub x: *mut f64,
    pub xd: *mut f64,
    /// The model's derivatives (null in a pass without them).
    pub dx: *mut f64,
    pub u: *const f64,
    pub t: f64,
    pub program: *const Program,
    /// For each rate, whether it hits now (null in a minor pass).
    pub hits: *const bool,
    /// Lengths of `signals`, `distance`, `x`, `xd`, `dx` and `hits`.
    pub lens: [usize; 6],
}

impl Env {
    /// An evaluation of `program` over the workspace `b` at time `t` with
    /// the model's inputs `u`, the derivatives `dx` (a pass with them) and
    /// the rate hits `hits` (a major pass, else empty).
    pub(crate) fn new(
        program: &Program,
        b: Buffers<'_>,
        u: &[f64],
        t: f64,
        dx: Option<&mut [f64]>,
        hits: &[bool],
    ) -> Self {
        let (dx, dx_len) = match dx {
            Some(dx) => (dx.as_mut_ptr(), dx.len()),
            None => (std::ptr::null_mut(), 0),
        };
        Env {
            lens: [
                b.signals.len(),
                b.distance.len(),
                b.x.len(),
                b.xd.len(),
                dx_len,
                hits.len(),
            ],
            signals: b.signals.as_mut_ptr(),
            distance: b.distance.as_mut_ptr(),
            x: b.x.as_mut_ptr(),
            xd: b.xd.as_mut_ptr(),
            dx,
            u: u.as_ptr(),
            t,
            program,
            hits: hits.as_ptr(),
        }
    }

    /// The buffers as slices.
    ///
    /// # Safety
    /// The pointers and lengths describe live buffers that nothing else
    /// uses while the returned slices do.
    unsafe fn buffers(&self) -> Buffers<'_> {
        unsafe {
            Buffers {
                signals: std::slice::from_raw_parts_mut(self.signals, self.lens[0]),
                distance: std::slice::from_raw_parts_mut(self.distance, self.lens[1]),
                x: std::slice::from_raw_parts_mut(self.x, self.lens[2]),
                xd: std::slice::from_raw_parts_mut(self.xd, self.lens[3]),
            }
        }
    }
}

/// The interpreter's minor evaluation of block `i`.
///
/// # Safety
/// `env` is the live environment of the evaluation that calls it.
pub(crate) unsafe extern "C" fn block_outputs(env: *const Env, i: u64) {
    unsafe {
        let env = &*env;
        let mut b = env.buffers();
        (*env.program).minor_outputs(i as usize, env.t, &mut b);
    }
}

/// The interpreter's derivatives of block `i`.
///
/// # Safety
/// As [`block_outputs`], in a pass with derivatives.
pub(crate) unsafe extern "C" fn block_derivatives(env: *const Env, i: u64) {
    unsafe {
        let env = &*env;
        let mut b = env.buffers();
        let dx = std::slice::from_raw_parts_mut(env.dx, env.lens[4]);
        (*env.program).minor_derivatives(i as usize, env.t, &mut b, dx);
    }
}

/// Calls `f` with the program, the buffers, the time and the rate hits of
/// a major step's environment.
///
/// # Safety
/// As [`block_outputs`], in a major step (`env.hits` set).
unsafe fn in_major_step(env: *const Env, f: impl FnOnce(&Program, &mut Buffers<'_>, f64, &[bool])) {
    unsafe {
        let env = &*env;
        let mut b = env.buffers();
        let hits = std::slice::from_raw_parts(env.hits, env.lens[5]);
        f(&*env.program, &mut b, env.t, hits);
    }
}

/// The interpreter's major evaluation of block `i`.
///
/// # Safety
/// As [`in_major_step`].
pub(crate) unsafe extern "C" fn block_major(env: *const Env, i: u64) {
    unsafe { in_major_step(env, |p, b, t, hits| p.major_outputs(i as usize, t, b, hits)) }
}

/// The interpreter's update of block `i`.
///
/// # Safety
/// As [`in_major_step`], after the major pass.
pub(crate) unsafe extern "C" fn block_update(env: *const Env, i: u64) {
    unsafe { in_major_step(env, |p, b, t, hits| p.update_block(i as usize, t, b, hits)) }
}

/// Copies the model's inputs into the signal buffer, as the interpreter
/// does before a pass (compiled code copies a few inputs itself).
///
/// # Safety
/// As [`block_outputs`]; `env.u` holds at least the model's inputs.
pub(crate) unsafe extern "C" fn copy_inputs(env: *const Env, _: u64) {
    unsafe {
        let env = &*env;
        let program = &*env.program;
        let u = std::slice::from_raw_parts(env.u, program.layout().inputs.len());
        let signals = std::slice::from_raw_parts_mut(env.signals, env.lens[0]);
        for &(i, offset) in program.input_copies() {
            if let (Some(s), Some(&v)) = (signals.get_mut(offset as usize), u.get(i)) {
                *s = v;
            }
        }
    }
}

/// `Unary::ALL[f]` at `u`.
pub(crate) extern "C" fn unary(f: u64, u: f64) -> f64 {
    Unary::ALL[f as usize].0.apply(u)
}

/// `Binary::ALL[f]` at `(a, b)`.
pub(crate) extern "C" fn binary(f: u64, a: f64, b: f64) -> f64 {
    Binary::ALL[f as usize].0.apply(a, b)
}

/// `a.min(b)`.
pub(crate) extern "C" fn min(a: f64, b: f64) -> f64 {
    a.min(b)
}

/// `a.max(b)`.
pub(crate) extern "C" fn max(a: f64, b: f64) -> f64 {
    a.max(b)
}

/// The surface at `(row, column)`.
///
/// # Safety
/// `surface` points to a live surface.
pub(crate) unsafe extern "C" fn surface(surface: *const Surface, row: f64, column: f64) -> f64 {
    unsafe { (*surface).value(row, column) }
}

/// The curve at `x`.
///
/// # Safety
/// `curve` points to a live curve.
pub(crate) unsafe extern "C" fn curve(curve: *const Curve, x: f64) -> f64 {
    unsafe { (*curve).value(x) }
}
