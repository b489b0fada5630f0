//! Compiled and interpreted diagrams give the same bits: derivatives,
//! outputs and zero-crossing functions at random states, on every example
//! model and on seeded random diagrams over all the block types the
//! compiler translates (and some it leaves to the interpreter).

use std::sync::Arc;

use serde_json::{json, Value};
use tandem_jit::{compile, CompiledModel};
use tandem_models::diagram::{self, DiagramModel};
use tandem_models::{MajorStep, Model, StateRef};

/// SplitMix64: a seeded source of test values.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [lo, hi).
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, p: f64) -> bool {
        self.uniform(0.0, 1.0) < p
    }
}

/// The same value, NaNs being equal to each other.
fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn assert_same(what: &str, interpreted: &[f64], compiled: &[f64], context: &str) {
    for (k, (a, b)) in interpreted.iter().zip(compiled).enumerate() {
        assert!(
            same(*a, *b),
            "{context}: {what}[{k}] interpreted {a:e} ({:#x}), compiled {b:e} ({:#x})",
            a.to_bits(),
            b.to_bits()
        );
    }
}

/// Evaluates both models at `states` random states and compares their
/// results bit for bit; returns the compiled model's report line.
fn compare(model: DiagramModel, rng: &mut Rng, states: usize, context: &str) -> String {
    let code = compile(model.program()).expect("compiles").expect("no algebraic loops");
    let report = code.report.to_string();
    let mut compiled = CompiledModel::new(DiagramModel::new(Arc::clone(model.program())), Arc::new(code));
    let mut interpreted = model;
    let layout = interpreted.layout().clone();
    let (n, nd) = (layout.states.len(), layout.discrete);
    let (mut x, mut xd) = (vec![0.0; n], vec![0.0; nd]);
    interpreted.initial_state(&mut x, &mut xd);
    let mut u: Vec<f64> = layout.inputs.iter().map(|v| v.default).collect();
    let buffers = |len: usize| (vec![0.0; len], vec![0.0; len]);
    let (mut dx_i, mut dx_c) = buffers(n);
    let (mut y_i, mut y_c) = buffers(layout.outputs.len());
    let (mut z_i, mut z_c) = buffers(layout.zero_crossings.len());
    for k in 0..states {
        let t = if k == 0 { 0.0 } else { rng.uniform(-0.5, 4.0) };
        if k > 0 {
            x.iter_mut().for_each(|v| *v = rng.uniform(-3.0, 3.0));
            xd.iter_mut().for_each(|v| *v = rng.uniform(-1.0, 2.0));
            u.iter_mut().for_each(|v| *v = rng.uniform(-3.0, 3.0));
        }
        let s = StateRef {
            t,
            x: &x,
            xd: &xd,
            u: &u,
        };
        let context = format!("{context}, state {k} at t = {t}");
        interpreted.derivatives(s, &mut dx_i);
        compiled.derivatives(s, &mut dx_c);
        assert_same("dx", &dx_i, &dx_c, &context);
        interpreted.outputs(s, &mut y_i);
        compiled.outputs(s, &mut y_c);
        assert_same("y", &y_i, &y_c, &context);
        interpreted.zero_crossings(s, &mut z_i);
        compiled.zero_crossings(s, &mut z_c);
        assert_same("z", &z_i, &z_c, &context);
        let hits: Vec<bool> = layout.rates.iter().map(|_| k == 0 || rng.chance(0.5)).collect();
        compare_major(&mut interpreted, &mut compiled, (t, &x, &xd, &u), &hits, &context);
    }
    report
}

/// A major step (its pass, then its updates) of both models from the same
/// state at the rate hits `hits`: the same outputs, the same failure and
/// the same states after, bit for bit.
fn compare_major(
    interpreted: &mut DiagramModel,
    compiled: &mut CompiledModel,
    (t, x, xd, u): (f64, &[f64], &[f64], &[f64]),
    hits: &[bool],
    context: &str,
) {
    let outputs = interpreted.layout().outputs.len();
    let mut results = Vec::new();
    for model in [interpreted as &mut dyn Model, compiled] {
        let (mut x, mut xd, mut y) = (x.to_vec(), xd.to_vec(), vec![0.0; outputs]);
        let mut step = MajorStep {
            t,
            x: &mut x,
            xd: &mut xd,
            u,
            hits,
            y: &mut y,
        };
        let failure = model.major_outputs(&mut step).err().map(|e| e.to_string());
        model.update(&mut step);
        results.push((failure, x, xd, y));
    }
    let context = format!("{context}, major step at hits {hits:?}");
    let (i, c) = (&results[0], &results[1]);
    assert_eq!(i.0, c.0, "{context}: failure");
    assert_same("major y", &i.3, &c.3, &context);
    assert_same("x after the update", &i.1, &c.1, &context);
    assert_same("xd after the update", &i.2, &c.2, &context);
}

#[test]
fn every_example_is_bit_identical() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/examples");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("examples")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "examples found: {files:?}");
    let mut rng = Rng(27);
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable");
        let model = diagram::compile_str(&text).expect("valid example").model;
        let report = compare(model, &mut rng, 200, &file.display().to_string());
        println!("{}: {report}", file.display());
    }
}

/// A random diagram without algebraic loops: integrators, then blocks fed
/// by earlier blocks and integrators, then the integrators' inputs.
struct Generator {
    rng: Rng,
    blocks: Vec<Value>,
    links: Vec<Value>,
    /// Signals so far: (source port, width).
    signals: Vec<(String, usize)>,
}

impl Generator {
    fn block(&mut self, kind: &str, params: Value) -> String {
        let id = format!("b{}", self.blocks.len());
        let switches = matches!(
            kind,
            "Abs" | "Sign" | "Saturation" | "DeadZone" | "Step" | "Ramp" | "HitCrossing"
        ) || (kind == "MinMax" && params.get("inputs").is_none())
            || (kind == "Integrator" && (params.get("upper").is_some() || params.get("lower").is_some()));
        let mut block = json!({"id": id, "type": kind, "params": params});
        if !switches {
        } else if self.rng.chance(0.1) {
            block["no_event"] = json!(true);
        } else if self.rng.chance(0.1) {
            block["hysteresis"] = json!(0.25);
        }
        self.blocks.push(block);
        id
    }

    fn link(&mut self, from: &str, to: &str, port: usize) {
        self.links.push(json!({"from": from, "to": format!("{to}.{port}")}));
    }

    /// A signal, of `width` when given.
    fn pick(&mut self, width: Option<usize>) -> (String, usize) {
        let fits: Vec<usize> = (0..self.signals.len())
            .filter(|&i| width.is_none_or(|w| self.signals[i].1 == w || self.signals[i].1 == 1))
            .collect();
        self.signals[fits[self.rng.below(fits.len())]].clone()
    }

    /// A block of `kind` on `n` inputs of compatible widths, giving one
    /// output of the common width.
    fn elementwise(&mut self, kind: &str, params: Value, n: usize, scalar: Option<usize>) {
        let mut inputs = Vec::new();
        let mut w = 1;
        for i in 0..n {
            let (s, sw) = if Some(i) == scalar {
                self.pick(Some(1))
            } else {
                self.pick(if w == 1 { None } else { Some(w) })
            };
            if Some(i) != scalar {
                w = w.max(sw);
            }
            inputs.push(s);
        }
        let id = self.block(kind, params);
        for (i, s) in inputs.iter().enumerate() {
            self.link(s, &id, i + 1);
        }
        self.signals.push((id, w));
    }

    #[expect(
        clippy::too_many_lines,
        reason = "one short arm per block kind the generator draws, in one place so that a new kind is one arm"
    )]
    fn random_block(&mut self) {
        let r = &mut self.rng;
        let v = r.uniform(-2.0, 2.0);
        match r.below(39) {
            0 => {
                let w = 1 + r.below(3);
                let values: Vec<f64> = (0..w).map(|_| r.uniform(-2.0, 2.0)).collect();
                let id = self.block("Constant", json!({"value": values}));
                self.signals.push((id, w));
            }
            1 => {
                let (a, f, p) = (r.uniform(0.5, 2.0), r.uniform(0.5, 5.0), r.uniform(0.0, 3.0));
                let id = self.block("Sine", json!({"amplitude": a, "frequency": f, "phase": p, "bias": v}));
                self.signals.push((id, 1));
            }
            2 => {
                let id = self.block("Clock", json!({}));
                self.signals.push((id, 1));
            }
            3 => {
                let time = r.uniform(0.0, 3.0);
                let id = self.block("Step", json!({"time": time, "before": v, "after": -v}));
                self.signals.push((id, 1));
            }
            4 => {
                let start = r.uniform(0.0, 3.0);
                let id = self.block("Ramp", json!({"slope": v, "start": start, "initial": 0.5}));
                self.signals.push((id, 1));
            }
            5 => {
                let id = self.block(
                    "FromTable",
                    json!({"times": [0.0, 1.0, 2.5], "values": [[0.0, 1.0], [v, 2.0], [1.0, -1.0]]}),
                );
                self.signals.push((id, 2));
            }
            6 => {
                let (_, w) = self.pick(None);
                let gain: Vec<f64> = if w > 1 && self.rng.chance(0.5) {
                    (0..w).map(|_| self.rng.uniform(-2.0, 2.0)).collect()
                } else {
                    vec![v]
                };
                self.elementwise_on_width("Gain", json!({"gain": gain}), w);
            }
            7 => self.elementwise("Sum", json!({"signs": "+-"}), 2, None),
            8 => self.elementwise("Sum", json!({"signs": "-+-"}), 3, None),
            9 => self.elementwise("Product", json!({"ops": "**"}), 2, None),
            10 => self.elementwise("Divide", json!({}), 2, None),
            11 => self.elementwise("Abs", json!({}), 1, None),
            12 => self.elementwise("Sign", json!({}), 1, None),
            13 => {
                let f = ["min", "max"][self.rng.below(2)];
                self.elementwise("MinMax", json!({"function": f}), 2, None);
            }
            14 => {
                let f = [
                    "sqrt",
                    "exp",
                    "log",
                    "log10",
                    "square",
                    "reciprocal",
                    "sin",
                    "cos",
                    "tan",
                    "asin",
                    "acos",
                    "atan",
                    "sinh",
                    "cosh",
                    "tanh",
                ][self.rng.below(15)];
                self.elementwise("MathFunction", json!({"function": f}), 1, None);
            }
            15 => {
                let f = ["pow", "atan2", "hypot", "rem"][self.rng.below(4)];
                self.elementwise("MathFunction", json!({"function": f}), 2, None);
            }
            16 => {
                let lo = self.rng.uniform(-2.0, 0.0);
                let hi = self.rng.uniform(0.0, 2.0);
                self.elementwise("Saturation", json!({"lower": lo, "upper": hi}), 1, None);
            }
            17 => {
                let lo = self.rng.uniform(-1.0, 0.0);
                self.elementwise("DeadZone", json!({"start": lo, "end": -lo}), 1, None);
            }
            18 => {
                let criterion = ["u2 >= threshold", "u2 > threshold", "u2 != 0"][self.rng.below(3)];
                let (a, w) = self.pick(None);
                let (c, _) = self.pick(Some(1));
                let (b, _) = self.pick(Some(w));
                let id = self.block("Switch", json!({"criterion": criterion, "threshold": v}));
                for (i, s) in [a, c, b].iter().enumerate() {
                    self.link(s, &id, i + 1);
                }
                self.signals.push((id, w));
            }
            19 => {
                let (a, wa) = self.pick(None);
                let (b, wb) = self.pick(None);
                let id = self.block("Mux", json!({"inputs": 2}));
                self.link(&a, &id, 1);
                self.link(&b, &id, 2);
                self.signals.push((id, wa + wb));
            }
            20 => {
                let (a, w) = self.pick(None);
                if w < 2 {
                    return;
                }
                let id = self.block("Demux", json!({"outputs": 2, "widths": [1, w - 1]}));
                self.link(&a, &id, 1);
                self.signals.push((format!("{id}.1"), 1));
                self.signals.push((format!("{id}.2"), w - 1));
            }
            21 => {
                let ops = [("Sum", "signs", "+"), ("Product", "ops", "*"), ("MinMax", "inputs", "")][self.rng.below(3)];
                let params = if ops.0 == "MinMax" {
                    json!({"inputs": 1, "function": "max"})
                } else {
                    json!({ops.1: ops.2})
                };
                let (a, _) = self.pick(None);
                let id = self.block(ops.0, params);
                self.link(&a, &id, 1);
                self.signals.push((id, 1));
            }
            22 => {
                let extrapolation = ["clip", "linear"][self.rng.below(2)];
                let params =
                    json!({"breakpoints": [-1.0, 0.0, 2.0], "table": [v, 1.0, -0.5], "extrapolation": extrapolation});
                self.elementwise("Lookup1D", params, 1, None);
            }
            23 => {
                let (e, _) = self.pick(Some(1));
                let id = self.block("PID", json!({"kp": v, "ki": 0.7, "kd": 0.1, "n": 20.0}));
                self.link(&e, &id, 1);
                self.signals.push((id, 1));
            }
            24 => {
                let (e, _) = self.pick(Some(1));
                let id = self.block(
                    "TransferFunction",
                    json!({"numerator": [1.0, v], "denominator": [1.0, 0.5, 2.0]}),
                );
                self.link(&e, &id, 1);
                self.signals.push((id, 1));
            }
            25 => {
                let (e, _) = self.pick(Some(1));
                let period = [0.1, 0.25][self.rng.below(2)];
                let kind = [
                    "UnitDelay",
                    "ZeroOrderHold",
                    "Counter",
                    "DiscretePID",
                    "DiscreteTransferFunction",
                ][self.rng.below(5)];
                let params = match kind {
                    "Counter" => json!({"initial": v, "upper": v + 3.0}),
                    "DiscretePID" => json!({"kp": v, "ki": 0.7, "kd": 0.3, "per_sample": self.rng.chance(0.5)}),
                    "DiscreteTransferFunction" => [
                        json!({"numerator": [v, 0.3], "denominator": [2.0, -0.5, 0.1]}),
                        json!({"numerator": [0.4], "denominator": [1.0, -0.6]}),
                        json!({"numerator": [v], "denominator": [2.0]}),
                    ][self.rng.below(3)]
                    .clone(),
                    _ => json!({}),
                };
                let id = self.block(kind, params);
                self.blocks.last_mut().expect("just added")["sample_time"] = json!(period);
                if kind != "Counter" {
                    self.link(&e, &id, 1);
                }
                self.signals.push((id, 1));
            }
            26 => {
                let op = ["<", "<=", ">", ">=", "==", "!="][self.rng.below(6)];
                self.elementwise("RelationalOperator", json!({"operator": op}), 2, None);
            }
            27 => {
                let id = self.block("Pulse", json!({"period": 0.7, "width": 0.3, "amplitude": v}));
                self.signals.push((id, 1));
            }
            28 => self.elementwise("Identity", json!({}), 1, None),
            29 => {
                let op = ["AND", "OR", "NAND", "NOR", "XOR"][self.rng.below(5)];
                let n = 1 + self.rng.below(3);
                self.elementwise("LogicalOperator", json!({"operator": op, "inputs": n}), n, None);
            }
            30 => {
                let op = ["<", "<=", ">", ">=", "==", "!="][self.rng.below(6)];
                let constant = [0.0, 0.5, v][self.rng.below(3)];
                self.elementwise(
                    "CompareToConstant",
                    json!({"operator": op, "constant": constant}),
                    1,
                    None,
                );
            }
            31 => {
                let direction = ["rising", "falling", "either"][self.rng.below(3)];
                let (e, _) = self.pick(Some(1));
                let id = if self.rng.chance(0.5) {
                    self.block("Edge", json!({"direction": direction}))
                } else {
                    self.block("HitCrossing", json!({"direction": direction, "offset": v}))
                };
                self.link(&e, &id, 1);
                self.signals.push((id, 1));
            }
            32 => self.elementwise("Derivative", json!({}), 1, None),
            33 => self.subsystem(false, v),
            34 => self.subsystem(true, v),
            35 => {
                let id = self.block("Expression", json!({"expression": "u1 * u2 + sin(u1)", "inputs": 2}));
                let (a, _) = self.pick(Some(1));
                let (b, _) = self.pick(Some(1));
                self.link(&a, &id, 1);
                self.link(&b, &id, 2);
                self.signals.push((id, 1));
            }
            36 => {
                // A Merge of two subsystems' outputs (the compiler feeds
                // their activity): the first active, else held.
                self.subsystem(false, v);
                let first = self.signals.last().expect("just added").0.clone();
                let triggered = self.rng.chance(0.5);
                self.subsystem(triggered, -v);
                let second = self.signals.last().expect("just added").0.clone();
                let id = self.block("Merge", json!({"inputs": 2}));
                self.link(&first, &id, 1);
                self.link(&second, &id, 2);
                self.signals.push((id, 1));
            }
            _ => {
                let id = self.block(
                    "Lookup2D",
                    json!({"rows": [0.0, 1.0], "columns": [0.0, 1.0], "table": [[0.0, 1.0], [v, 2.0]]}),
                );
                let (a, _) = self.pick(Some(1));
                let (b, _) = self.pick(Some(1));
                self.link(&a, &id, 1);
                self.link(&b, &id, 2);
                self.signals.push((id, 1));
            }
        }
    }

    /// An enabled subsystem (a gain, a saturation and an integrator on its
    /// input), or a triggered one (a gain and a delay), on two signals.
    fn subsystem(&mut self, triggered: bool, v: f64) {
        let (control, _) = self.pick(Some(1));
        let (data, _) = self.pick(Some(1));
        let id = format!("b{}", self.blocks.len());
        let (port, params, inner) = if triggered {
            let edge = ["rising", "falling", "either"][self.rng.below(3)];
            let inner = json!([{"id": "k", "type": "Gain", "params": {"gain": v}}, {"id": "d", "type": "UnitDelay"}]);
            ("trigger", json!({"trigger": edge}), inner)
        } else {
            let inner = json!([
                {"id": "k", "type": "Gain", "params": {"gain": v}},
                {"id": "d", "type": "Saturation", "params": {"lower": -0.5, "upper": 0.5}},
                {"id": "x", "type": "Integrator", "params": {"upper": 1.0}}]);
            ("enable", json!({"enable": true}), inner)
        };
        let mut blocks = vec![json!({"id": "in", "type": "Inport"})];
        blocks.extend(inner.as_array().expect("a list").iter().cloned());
        blocks.push(json!({"id": "out", "type": "Outport"}));
        let ids: Vec<String> = blocks
            .iter()
            .map(|b| b["id"].as_str().unwrap_or_default().to_string())
            .collect();
        let links: Vec<Value> = ids.windows(2).map(|p| json!({"from": p[0], "to": p[1]})).collect();
        self.blocks
            .push(json!({"id": id, "type": "Subsystem", "params": params, "blocks": blocks, "links": links}));
        self.links.push(json!({"from": control, "to": format!("{id}.{port}")}));
        self.links.push(json!({"from": data, "to": format!("{id}.in")}));
        self.signals.push((format!("{id}.out"), 1));
    }

    /// A one-input block on a signal of width `w`.
    fn elementwise_on_width(&mut self, kind: &str, params: Value, w: usize) {
        let fits: Vec<usize> = (0..self.signals.len()).filter(|&i| self.signals[i].1 == w).collect();
        let (s, _) = self.signals[fits[self.rng.below(fits.len())]].clone();
        let id = self.block(kind, params);
        self.link(&s, &id, 1);
        self.signals.push((id, w));
    }

    fn diagram(seed: u64, size: usize) -> Value {
        let mut g = Generator {
            rng: Rng(seed),
            blocks: Vec::new(),
            links: Vec::new(),
            signals: Vec::new(),
        };
        let mut integrators = Vec::new();
        for _ in 0..1 + g.rng.below(4) {
            let w = 1 + usize::from(g.rng.chance(0.3));
            let mut params = json!({"initial": vec![0.5; w]});
            if g.rng.chance(0.4) {
                params["upper"] = json!(1.5);
            }
            if g.rng.chance(0.4) {
                params["lower"] = json!(-1.0);
            }
            let id = g.block("Integrator", params);
            integrators.push((id.clone(), w));
            g.signals.push((id, w));
        }
        let one = g.block("Constant", json!({"value": 1.25}));
        g.signals.push((one, 1));
        for _ in 0..size {
            g.random_block();
        }
        for (id, w) in integrators {
            let fits: Vec<usize> = (0..g.signals.len()).filter(|&i| g.signals[i].1 == w).collect();
            let (s, _) = g.signals[fits[g.rng.below(fits.len())]].clone();
            g.link(&s, &id, 1);
        }
        for k in 0..2 {
            let (s, _) = g.pick(Some(1));
            let id = format!("out{k}");
            g.blocks.push(json!({"id": id, "type": "Output"}));
            g.link(&s, &id, 1);
        }
        json!({"blocks": g.blocks, "links": g.links})
    }
}

#[test]
fn random_diagrams_are_bit_identical() {
    let mut rng = Rng(2027);
    let mut interpreted_kinds = std::collections::BTreeSet::new();
    for seed in 0..300 {
        let size = 5 + (seed as usize % 40);
        let text = Generator::diagram(seed, size).to_string();
        let model = match diagram::compile_str(&text) {
            Ok(c) => c.model,
            Err(e) => panic!("seed {seed}: the generator made an invalid diagram: {e}\n{text}"),
        };
        let code = compile(model.program()).expect("compiles").expect("no algebraic loops");
        interpreted_kinds.extend(code.report.plan.interpreted.keys().cloned());
        compare(model, &mut rng, 30, &format!("seed {seed}: {text}"));
    }
    // The fallback is exercised, and only where expected.
    let expected: std::collections::BTreeSet<String> = ["Expression"].iter().map(|s| s.to_string()).collect();
    assert_eq!(interpreted_kinds, expected);
}

#[test]
fn the_report_names_what_is_interpreted() {
    let text = json!({"blocks": [
        {"id": "c", "type": "Constant", "params": {"value": 0.5}},
        {"id": "t", "type": "Expression", "params": {"expression": "u1 * u2", "inputs": 2}},
        {"id": "x", "type": "Integrator"},
        {"id": "d", "type": "UnitDelay", "sample_time": 0.1},
        {"id": "r", "type": "Integrator", "params": {"reset": "rising"}}],
      "links": [{"from": "c", "to": "t.1"}, {"from": "c", "to": "t.2"}, {"from": "t", "to": "x"},
                {"from": "x", "to": "d"}, {"from": "d", "to": "r.1"}, {"from": "d", "to": "r.2"}]})
    .to_string();
    let model = diagram::compile_str(&text).expect("valid").model;
    let code = compile(model.program()).expect("compiles").expect("no loops");
    assert_eq!(code.report.plan.blocks, 5);
    assert_eq!(code.report.plan.compiled, 4);
    let line = code.report.to_string();
    assert!(line.starts_with("compiled 4 of 5 blocks in "), "{line}");
    // The delay runs at its hits, compiled; the reset is applied in the
    // integrator's update by the interpreter, called from the compiled
    // major step.
    assert!(
        line.ends_with("; interpreted: Expression (1); interpreted at major steps: Integrator (1)"),
        "{line}"
    );
    // The plan says the same without generating code.
    let plan = tandem_jit::plan(model.program()).expect("no loops");
    assert_eq!(plan, code.report.plan);
    assert_eq!(
        plan.to_string(),
        "4 of 5 blocks compile; interpreted: Expression (1); interpreted at major steps: Integrator (1)"
    );
}

#[test]
fn wide_blocks_and_many_inputs_are_left_to_the_interpreter_in_their_place() {
    // Unrolled, a Gain 65536 wide took minutes of Cranelift's time; blocks
    // of more than 1024 values are interpreted, and 2048 inputs are copied
    // by one call.
    let text = json!({"blocks": [
        {"id": "u", "type": "Inport", "params": {"width": 2048}},
        {"id": "k", "type": "Gain", "params": {"gain": -0.5}},
        {"id": "x", "type": "Integrator", "params": {"initial": 1.0}},
        {"id": "s", "type": "Sum", "params": {"signs": "+"}},
        {"id": "a", "type": "Abs"},
        {"id": "y", "type": "Output"}],
      "links": [{"from": "u", "to": "k"}, {"from": "k", "to": "x"}, {"from": "x", "to": "s"},
                {"from": "s", "to": "a"}, {"from": "a", "to": "y"}]})
    .to_string();
    let model = diagram::compile_str(&text).expect("valid").model;
    let report = compare(model, &mut Rng(42), 20, "wide");
    assert!(
        report.starts_with("compiled 2 of 6 blocks in ")
            && report.ends_with("; interpreted: Gain (1), Inport (1), Integrator (1), Sum (1)"),
        "{report}"
    );
}

#[test]
fn a_retuned_model_is_compiled_again_and_equals_the_model_loaded_with_the_value() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/examples/cruise_control.json");
    let text = std::fs::read_to_string(path).expect("example");
    let model = diagram::compile_str(&text).expect("valid").model;
    let code = compile(model.program()).expect("compiles").expect("no algebraic loops");
    let mut compiled = CompiledModel::new(model, Arc::new(code));
    let before = Arc::clone(compiled.code());
    let mut definition = compiled.retune("drag", "gain", &json!(30.0)).expect("a tunable gain");
    assert!(compiled.swap_definition(&mut definition));
    assert!(!Arc::ptr_eq(&before, compiled.code()), "the code was not replaced");
    let evaluation = compiled.evaluation().unwrap_or_default();
    assert!(evaluation.starts_with("compiled 11 of 11 blocks"), "{evaluation}");
    // The code of the new value, bit for bit the interpreter's: 30 × v of
    // drag where it was 20 × v.
    let loaded = text.replace(r#""gain": 20.0"#, r#""gain": 30.0"#);
    assert_ne!(loaded, text);
    let fresh = diagram::compile_str(&loaded).expect("valid").model;
    let mut xd = vec![0.0; fresh.layout().discrete];
    let mut interpreted = fresh;
    interpreted.initial_state(&mut [0.0], &mut xd);
    let (t, x, u) = (1.5, [12.0], [0.6]);
    let s = StateRef {
        t,
        x: &x,
        xd: &xd,
        u: &u,
    };
    let (mut dx_i, mut dx_c) = ([0.0], [0.0]);
    interpreted.derivatives(s, &mut dx_i);
    compiled.derivatives(s, &mut dx_c);
    assert_same("dx", &dx_i, &dx_c, "retuned against loaded with the value");
    compare_major(&mut interpreted, &mut compiled, (t, &x, &xd, &u), &[true], "retuned");
}

#[test]
fn a_continuous_diagram_is_bit_identical_in_major_steps_run_by_its_minor_code() {
    // A thermal ladder of 30 nodes: no zero crossings, no discrete blocks,
    // so the major pass runs the minor pass's code.
    let n: usize = 30;
    let mut blocks = vec![json!({"id": "heat", "type": "Inport"})];
    let mut links = Vec::new();
    for i in 0..n {
        let mut signs = String::from("--");
        links.push(json!({"from": format!("T{i}"), "to": format!("s{i}.1")}));
        links.push(json!({"from": format!("T{i}"), "to": format!("s{i}.2")}));
        for j in [i.wrapping_sub(1), i + 1].into_iter().filter(|&j| j < n) {
            signs.push('+');
            links.push(json!({"from": format!("T{j}"), "to": format!("s{i}.{}", signs.len())}));
        }
        if i == 0 {
            signs.push('+');
            links.push(json!({"from": "heat", "to": format!("s{i}.{}", signs.len())}));
        }
        blocks.push(json!({"id": format!("s{i}"), "type": "Sum", "params": {"signs": signs}}));
        blocks.push(json!({"id": format!("g{i}"), "type": "Gain", "params": {"gain": 92.3}}));
        blocks.push(json!({"id": format!("T{i}"), "type": "Integrator", "params": {"initial": (i as f64).sin()}}));
        links.push(json!({"from": format!("s{i}"), "to": format!("g{i}")}));
        links.push(json!({"from": format!("g{i}"), "to": format!("T{i}")}));
    }
    blocks.push(json!({"id": "last", "type": "Output"}));
    links.push(json!({"from": format!("T{}", n - 1), "to": "last"}));
    let text = json!({"blocks": blocks, "links": links}).to_string();
    let model = diagram::compile_str(&text).expect("valid").model;
    let report = compare(model, &mut Rng(11), 100, "ladder");
    assert!(report.starts_with("compiled 92 of 92 blocks"), "{report}");
}
