//! The compiler: flat diagram → [`Program`].
//!
//! Passes, each with its own function: build the blocks (inferring signal
//! widths from their sources, retrying blocks whose inputs are not known
//! yet), check dimensions, resolve rates (inheriting sample times), order the
//! blocks by their direct-feedthrough dependencies per port (naming every
//! algebraic loop), and lay out buffers.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use super::algebraic::AlgebraicLoop;
use super::entry::{Entry, Exec, Resolved};
use super::error::{listed, listed_with, DiagramError, ErrorKind};
use super::flatten::{flatten, FlatBlock, PortRef};
use super::format::{Diagram, LoopPolicy};
use super::program::{BlockInfo, Program};
use super::tearing::{tear_and_order, InEdges, LoopPlan};
use crate::blocks::{Block, BlockError, Build, External, InPort, OutPort, Params, Rate, Slot, WidthMode};
use crate::model::{Layout, SampleTime, Variable};

/// What feeds an input port.
#[derive(Clone, Debug)]
enum Feed {
    /// A link from a block's output port, as written.
    Link { from: usize, port: PortRef, text: String },
    /// The constant 1 (activity of an unguarded Merge source).
    One,
}

/// What an input reads, once all blocks are built.
#[derive(Clone, Debug)]
enum Source {
    /// Output `out` of block `from`, through the link written as `text`.
    Port { from: usize, out: usize, text: String },
    /// The constant 1.
    One,
}

/// A block once built.
struct Node {
    block: Box<dyn Block>,
    inputs: Vec<InPort>,
    outputs: Vec<OutPort>,
    x0: Vec<f64>,
    xd0: Vec<f64>,
    rate: Rate,
    zero_crossings: usize,
    external: Option<External>,
}

/// The most values (signal elements, states, discrete states and zero
/// crossings together) one compiled model may hold.
pub const MAX_MODEL_VALUES: usize = 1 << 24;

/// The most continuous states one compiled model may have.
pub const MAX_STATES: usize = 4096;

/// Compiles a parsed diagram.
pub(crate) fn compile(diagram: &Diagram) -> Result<Program, DiagramError> {
    let flat = flatten(&diagram.blocks, &diagram.links)?;
    let blocks = &flat.blocks;
    let declared = declare_ports(blocks)?;
    let feeds = connect(&flat, &declared)?;
    let nodes = build_all(blocks, &feeds)?;
    check_event_options(blocks, &nodes)?;
    let sources = resolve_sources(blocks, &nodes, &feeds)?;
    check_dimensions(blocks, &nodes, &sources)?;
    let rates = resolve_rates(blocks, &nodes, &sources)?;
    let solve = diagram.algebraic_loops == Some(LoopPolicy::Solve);
    let (order, loops) = execution_order(blocks, &nodes, &sources, solve)?;
    let mut program = assemble(blocks, nodes, &sources, &rates, &order, &loops);
    program.source = Some(Box::new(diagram.clone()));
    Ok(program)
}

fn block_error(fb: &FlatBlock, e: BlockError) -> DiagramError {
    match e {
        BlockError::Invalid { kind, ref help, .. } => DiagramError {
            port: None,
            kind,
            block: Some(fb.path.clone()),
            position: None,
            message: e.located(fb.kind.name),
            help: help.clone(),
        },
        BlockError::Pending => DiagramError::at_block(
            ErrorKind::Dimension,
            &fb.path,
            "could not infer the widths of its inputs",
        ),
    }
}

/// Runs one build of a block with the widths known so far.
fn attempt<'a>(
    fb: &FlatBlock<'a>,
    widths: Vec<Option<usize>>,
    mode: WidthMode,
) -> (Result<Box<dyn Block>, BlockError>, Build<'a>) {
    let mut b = Build::new(&fb.path, Params::new(fb.params), fb.sample_time, mode);
    b.known_widths = widths;
    let result = (fb.kind.build)(&mut b);
    (result, b)
}

/// Input port names and Merge flags of every block, from a first build
/// attempt with no widths known (blocks declare inputs before widths).
fn declare_ports(blocks: &[FlatBlock]) -> Result<Vec<(Vec<InPort>, bool)>, DiagramError> {
    blocks
        .iter()
        .map(|fb| match attempt(fb, Vec::new(), WidthMode::Strict) {
            (Err(e @ BlockError::Invalid { .. }), _) => Err(block_error(fb, e)),
            (_, b) => Ok((b.inputs, b.merge_guards)),
        })
        .collect()
}

/// Resolves every link's destination port and checks that each input has
/// exactly one source. Merge activity inputs are fed by the compiler.
fn connect(
    flat: &super::flatten::Flat,
    declared: &[(Vec<InPort>, bool)],
) -> Result<Vec<Vec<Option<Feed>>>, DiagramError> {
    let mut feeds: Vec<Vec<Option<Feed>>> = declared.iter().map(|(ins, _)| vec![None; ins.len()]).collect();
    for link in &flat.links {
        let (to, ref port) = link.to;
        let fb = &flat.blocks[to];
        let names: Vec<&str> = declared[to].0.iter().map(|p| p.name.as_str()).collect();
        let index = port_index(port, &names).map_err(|why| {
            DiagramError::at_block(ErrorKind::Link, &fb.path, format!("link \"{}\": {why}", link.text))
                .help(port_help(fb, "input", &names))
        })?;
        if let Some(Feed::Link { text, .. }) = &feeds[to][index] {
            return Err(DiagramError::at_block(
                ErrorKind::MultiplyConnected,
                &fb.path,
                format!(
                    "input {} ({}) is connected twice: by \"{text}\" and by \"{}\"",
                    index + 1,
                    names[index],
                    link.text
                ),
            )
            .port(names[index])
            .help("remove one of the links; to add signals use a Sum block"));
        }
        feeds[to][index] = Some(Feed::Link {
            from: link.from.0,
            port: link.from.1.clone(),
            text: link.text.clone(),
        });
    }
    for (b, (ins, merge)) in declared.iter().enumerate() {
        let data = if *merge { ins.len() / 2 } else { ins.len() };
        for k in 0..data {
            if feeds[b][k].is_none() {
                let fb = &flat.blocks[b];
                if let Some((subsystem, port)) = fb.path.rsplit_once('/').filter(|_| fb.subsystem_input) {
                    return Err(DiagramError::at_block(
                        ErrorKind::Unconnected,
                        subsystem,
                        format!("(Subsystem) input \"{port}\" is not connected"),
                    )
                    .port(port)
                    .help(format!(
                        "add a link {{\"from\": \"<block>.<port>\", \"to\": \"{}.{port}\"}}",
                        local_id(subsystem)
                    )));
                }
                return Err(DiagramError::at_block(
                    ErrorKind::Unconnected,
                    &fb.path,
                    format!(
                        "({}) input {} (\"{}\") is not connected",
                        fb.kind.name,
                        k + 1,
                        ins[k].name
                    ),
                )
                .port(ins[k].name.clone())
                .help(format!(
                    "add a link {{\"from\": \"<block>.<port>\", \"to\": \"{}.{}\"}}, or feed it a Constant",
                    local_id(&fb.path),
                    k + 1
                )));
            }
        }
        if *merge {
            for k in 0..data {
                let guard = match &feeds[b][k] {
                    Some(Feed::Link { from, .. }) => flat.blocks[*from].guard,
                    _ => None,
                };
                feeds[b][data + k] = Some(match guard {
                    Some(g) => Feed::Link {
                        from: g,
                        port: PortRef::Only,
                        text: "(activity)".into(),
                    },
                    None => Feed::One,
                });
            }
        }
    }
    Ok(feeds)
}

fn local_id(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn port_help(fb: &FlatBlock, kind: &str, names: &[&str]) -> String {
    match names.len() {
        0 => format!("block \"{}\" ({}) has no {kind} ports", fb.path, fb.kind.name),
        n => format!("its {kind} ports are {} (or numbers 1..{n})", listed(names)),
    }
}

/// Why a link's port reference names no port.
#[derive(Debug, thiserror::Error)]
enum NoSuchPort {
    /// No port named, but the block has several.
    #[error("the block has {0} ports here; name one with \".<port>\"")]
    Ambiguous(usize),
    /// A number beyond the ports.
    #[error("there is no port {0}")]
    Number(usize),
    /// A name the block does not have.
    #[error("there is no port \"{0}\"")]
    Name(String),
}

fn port_index(port: &PortRef, names: &[&str]) -> Result<usize, NoSuchPort> {
    match port {
        PortRef::Only if names.len() == 1 => Ok(0),
        PortRef::Only => Err(NoSuchPort::Ambiguous(names.len())),
        PortRef::Index(i) if *i < names.len() => Ok(*i),
        PortRef::Index(i) => Err(NoSuchPort::Number(i + 1)),
        PortRef::Name(n) => names
            .iter()
            .position(|p| p == n)
            .ok_or_else(|| NoSuchPort::Name(n.clone())),
    }
}

/// The index of output `port` of block `from` (built, with `outputs`),
/// for the link written as `text`.
fn output_index(
    blocks: &[FlatBlock],
    outputs: &[OutPort],
    from: usize,
    port: &PortRef,
    text: &str,
) -> Result<usize, DiagramError> {
    let names: Vec<&str> = outputs.iter().map(|p| p.name.as_str()).collect();
    port_index(port, &names).map_err(|why| {
        DiagramError::at_block(ErrorKind::Link, &blocks[from].path, format!("link \"{text}\": {why}")).help(port_help(
            &blocks[from],
            "output",
            &names,
        ))
    })
}

/// Builds every block, feeding each the widths of its sources as they
/// become known. When no block can progress, loop-breaking blocks may use
/// their width hints, and as a last resort unknown widths are taken as 1.
fn build_all(blocks: &[FlatBlock], feeds: &[Vec<Option<Feed>>]) -> Result<Vec<Node>, DiagramError> {
    let mut nodes: Vec<Option<Node>> = blocks.iter().map(|_| None).collect();
    let mut values = 0usize;
    let mut states = 0usize;
    let mut mode = WidthMode::Strict;
    while nodes.iter().any(Option::is_none) {
        let mut progress = false;
        for (b, fb) in blocks.iter().enumerate() {
            if nodes[b].is_some() {
                continue;
            }
            let mut widths = Vec::with_capacity(feeds[b].len());
            for feed in &feeds[b] {
                widths.push(match feed {
                    Some(Feed::Link { from, port, text }) => match &nodes[*from] {
                        Some(source) => {
                            Some(source.outputs[output_index(blocks, &source.outputs, *from, port, text)?].width)
                        }
                        None => None,
                    },
                    _ => Some(1),
                });
            }
            match attempt(fb, widths, mode) {
                (Ok(block), b_ctx) => {
                    if let Some(key) = b_ctx.params.unread().next() {
                        let known = b_ctx.params.known();
                        return Err(DiagramError::at_block(
                            ErrorKind::Parameter,
                            &fb.path,
                            format!("({}) unknown parameter \"{key}\"", fb.kind.name),
                        )
                        .help(if known.is_empty() {
                            format!("{} takes no parameters", fb.kind.name)
                        } else {
                            format!("{} takes: {}", fb.kind.name, listed(known))
                        }));
                    }
                    if let Some(j) = b_ctx.outputs.iter().position(|p| p.width == 0) {
                        // Every parameter that sets a width is checked to
                        // give at least one element (`params::Shape`).
                        return Err(DiagramError::at_block(
                            ErrorKind::Dimension,
                            &fb.path,
                            format!(
                                "({}) output {} would have width 0 (internal error: its parameters passed their \
                                 checks)",
                                fb.kind.name,
                                j + 1
                            ),
                        )
                        .help("give every vector parameter of the block at least one value, and report the model"));
                    }
                    values += b_ctx.outputs.iter().map(|p| p.width).sum::<usize>()
                        + b_ctx.x0.len()
                        + b_ctx.xd0.len()
                        + b_ctx.zero_crossings;
                    states += b_ctx.x0.len();
                    if states > MAX_STATES {
                        return Err(DiagramError::at_block(
                            ErrorKind::Dimension,
                            &fb.path,
                            format!(
                                "the model's continuous states would pass {MAX_STATES} at this block, the bound of one \
                                 model (the implicit solvers' matrices are dense)"
                            ),
                        )
                        .help("make the state vectors narrower, or split the model"));
                    }
                    if values > MAX_MODEL_VALUES {
                        return Err(DiagramError::at_block(
                            ErrorKind::Dimension,
                            &fb.path,
                            format!(
                                "the model's signals and states would pass {MAX_MODEL_VALUES} values at this block, \
                                 the bound of one model"
                            ),
                        )
                        .help("make the signals narrower, or split the model"));
                    }
                    nodes[b] = Some(Node {
                        block,
                        inputs: b_ctx.inputs,
                        outputs: b_ctx.outputs,
                        x0: b_ctx.x0,
                        xd0: b_ctx.xd0,
                        rate: b_ctx.rate,
                        zero_crossings: b_ctx.zero_crossings,
                        external: b_ctx.external,
                    });
                    progress = true;
                }
                (Err(BlockError::Pending), _) => {}
                (Err(e), _) => return Err(block_error(fb, e)),
            }
        }
        mode = match (progress, mode) {
            (true, _) => WidthMode::Strict,
            (false, WidthMode::Strict) => WidthMode::Hinted,
            (false, _) => WidthMode::Fallback,
        };
    }
    Ok(nodes
        .into_iter()
        .map(|n| n.expect("every block is built when the loop ends"))
        .collect())
}

/// `no_event` and `hysteresis` only on blocks that have zero crossings.
fn check_event_options(blocks: &[FlatBlock], nodes: &[Node]) -> Result<(), DiagramError> {
    for (fb, node) in blocks.iter().zip(nodes) {
        if node.zero_crossings == 0 && (fb.no_event || fb.hysteresis > 0.0) {
            let option = if fb.no_event { "no_event" } else { "hysteresis" };
            return Err(DiagramError::at_block(ErrorKind::Parameter, &fb.path, format!("({}) has no zero crossings, so \"{option}\" does nothing", fb.kind.name))
                .help("set it on the block that switches (a RelationalOperator, Switch, Saturation, Integrator with reset or limits, ...), or remove it"));
        }
    }
    Ok(())
}

/// Resolves the source port of every input.
fn resolve_sources(
    blocks: &[FlatBlock],
    nodes: &[Node],
    feeds: &[Vec<Option<Feed>>],
) -> Result<Vec<Vec<Source>>, DiagramError> {
    feeds
        .iter()
        .map(|inputs| {
            inputs
                .iter()
                .map(|feed| match feed {
                    Some(Feed::Link { from, port, text }) => {
                        let out = output_index(blocks, &nodes[*from].outputs, *from, port, text)?;
                        Ok(Source::Port {
                            from: *from,
                            out,
                            text: text.clone(),
                        })
                    }
                    _ => Ok(Source::One),
                })
                .collect()
        })
        .collect()
}

/// Every input has the width its block was built for.
fn check_dimensions(blocks: &[FlatBlock], nodes: &[Node], sources: &[Vec<Source>]) -> Result<(), DiagramError> {
    for (b, node) in nodes.iter().enumerate() {
        for (i, source) in sources[b].iter().enumerate() {
            let Source::Port { from, out, text } = source else {
                continue;
            };
            let have = nodes[*from].outputs[*out].width;
            let want = node.inputs[i].width.unwrap_or(have);
            if have != want {
                return Err(DiagramError::at_block(
                    ErrorKind::Dimension,
                    &blocks[b].path,
                    format!(
                        "dimension mismatch on link \"{text}\": input {} (\"{}\") has width {want} but \"{}\" output {} has width {have}",
                        i + 1,
                        node.inputs[i].name,
                        blocks[*from].path,
                        out + 1
                    ),
                )
                .help("make both ends the same width (check initial values and vector parameters, or use Mux/Demux)"));
            }
        }
    }
    Ok(())
}

/// Rates: blocks with a sample time keep it; inherited rates come from the
/// sources by a fixed point (constant < discrete < several discrete <
/// continuous).
fn resolve_rates(blocks: &[FlatBlock], nodes: &[Node], sources: &[Vec<Source>]) -> Result<Vec<Resolved>, DiagramError> {
    let mut rates = Vec::with_capacity(nodes.len());
    for (fb, node) in blocks.iter().zip(nodes) {
        let fixed = match (fb.sample_time, node.rate) {
            (Some(st), _) if st.period == 0.0 => Resolved::Continuous,
            (Some(_), _) if !node.x0.is_empty() => {
                return Err(DiagramError::at_block(
                    ErrorKind::SampleTime,
                    &fb.path,
                    format!(
                        "({}) has continuous states and cannot take a discrete sample_time",
                        fb.kind.name
                    ),
                )
                .help("remove \"sample_time\", or use the block's discrete counterpart (e.g. DiscreteIntegrator)"));
            }
            (Some(st), _) => Resolved::Discrete(st),
            (None, Rate::Continuous) => Resolved::Continuous,
            _ => Resolved::Constant,
        };
        rates.push(fixed);
    }
    let inherits: Vec<bool> = blocks
        .iter()
        .zip(nodes)
        .map(|(fb, n)| fb.sample_time.is_none() && matches!(n.rate, Rate::Inherited | Rate::Discrete))
        .collect();
    loop {
        let mut changed = false;
        for b in 0..nodes.len() {
            if !inherits[b] {
                continue;
            }
            let mut discrete: Vec<SampleTime> = Vec::new();
            let mut r = Resolved::Constant;
            for source in &sources[b] {
                let Source::Port { from, .. } = source else {
                    continue;
                };
                match rates[*from] {
                    Resolved::Continuous => r = Resolved::Continuous,
                    Resolved::Major if r != Resolved::Continuous => r = Resolved::Major,
                    Resolved::Discrete(st) if !discrete.contains(&st) => discrete.push(st),
                    _ => {}
                }
            }
            if r == Resolved::Constant {
                r = match discrete.as_slice() {
                    [] => Resolved::Constant,
                    [one] => Resolved::Discrete(*one),
                    _ => Resolved::Major,
                };
            }
            if r != rates[b] {
                rates[b] = r;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    for (b, node) in nodes.iter().enumerate() {
        if blocks[b].triggered {
            if !node.x0.is_empty() {
                return Err(DiagramError::at_block(
                    ErrorKind::SampleTime,
                    &blocks[b].path,
                    format!(
                        "({}) has continuous states, which a triggered subsystem cannot hold",
                        blocks[b].kind.name
                    ),
                )
                .help("use a discrete block (DiscreteIntegrator, UnitDelay) inside the triggered subsystem"));
            }
            // Runs at its trigger: a discrete block needs no sample time.
            if !matches!(rates[b], Resolved::Discrete(_)) {
                rates[b] = Resolved::Major;
            }
            continue;
        }
        if node.rate == Rate::Discrete && !matches!(rates[b], Resolved::Discrete(_)) {
            return Err(DiagramError::at_block(
                ErrorKind::SampleTime,
                &blocks[b].path,
                format!("({}) needs a discrete sample time", blocks[b].kind.name),
            )
            .help("set \"sample_time\": <period in seconds> on the block (or feed it from a block that has one)"));
        }
    }
    Ok(rates)
}

/// Orders blocks so that each runs after the sources of its
/// direct-feedthrough inputs (and its guard); ties keep file order. Reports
/// every algebraic loop with its blocks and ports, unless `solve` asks for
/// them to be torn and solved by Newton.
fn execution_order(
    blocks: &[FlatBlock],
    nodes: &[Node],
    sources: &[Vec<Source>],
    solve: bool,
) -> Result<(Vec<usize>, Vec<LoopPlan>), DiagramError> {
    let n = nodes.len();
    let mut deps: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    for b in 0..n {
        for (i, source) in sources[b].iter().enumerate() {
            if let Source::Port { from, .. } = source {
                if nodes[b].inputs[i].feedthrough {
                    deps[b].insert(*from);
                }
            }
        }
        if let Some(g) = blocks[b].guard {
            deps[b].insert(g);
        }
    }
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut missing: Vec<usize> = deps.iter().map(BTreeSet::len).collect();
    for (b, d) in deps.iter().enumerate() {
        for &s in d {
            users[s].push(b);
        }
    }
    let mut ready: BinaryHeap<Reverse<usize>> = (0..n).filter(|&b| missing[b] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(b)) = ready.pop() {
        order.push(b);
        for &u in &users[b] {
            missing[u] -= 1;
            if missing[u] == 0 {
                ready.push(Reverse(u));
            }
        }
    }
    if order.len() == n {
        return Ok((order, Vec::new()));
    }
    if !solve {
        return Err(loop_error(blocks, nodes, sources, &deps));
    }
    let edges: Vec<InEdges> = (0..n)
        .map(|b| {
            let ports = sources[b].iter().enumerate().filter_map(|(i, source)| match source {
                Source::Port { from, .. } if nodes[b].inputs[i].feedthrough => Some((Some(i), *from)),
                _ => None,
            });
            ports.chain(blocks[b].guard.map(|g| (None, g))).collect()
        })
        .collect();
    tear_and_order(&edges, &strongly_connected(&deps), strongly_connected).map_err(|cycle| {
        let names: Vec<&str> = cycle.iter().map(|&b| blocks[b].path.as_str()).collect();
        DiagramError {
            port: None,
            kind: ErrorKind::AlgebraicLoop,
            block: names.first().map(|s| s.to_string()),
            position: None,
            message: format!(
                "the algebraic loop through {} closes only through enable or trigger signals, which cannot be torn",
                listed(&names)
            ),
            help: Some(
                "break the loop with a UnitDelay or Memory block on the signal that enables the subsystem".into(),
            ),
        }
    })
}

/// Names the algebraic loops (strongly connected components of the
/// feedthrough graph).
fn loop_error(blocks: &[FlatBlock], nodes: &[Node], sources: &[Vec<Source>], deps: &[BTreeSet<usize>]) -> DiagramError {
    let loops = strongly_connected(deps);
    let mut lines = Vec::new();
    for component in &loops {
        let mut ports = Vec::new();
        for &b in component {
            for (i, source) in sources[b].iter().enumerate() {
                if let Source::Port { from, .. } = source {
                    if component.contains(from) && nodes[b].inputs[i].feedthrough {
                        ports.push(format!(
                            "{}.{} <- {}",
                            blocks[b].path, nodes[b].inputs[i].name, blocks[*from].path
                        ));
                    }
                }
            }
        }
        let names: Vec<&str> = component.iter().map(|&b| blocks[b].path.as_str()).collect();
        lines.push(format!(
            "  loop through {} (ports {})",
            listed(&names),
            listed_with(&ports, "; ")
        ));
    }
    DiagramError {
        port: None,
        kind: ErrorKind::AlgebraicLoop,
        block: loops.first().and_then(|c| c.first()).map(|&b| blocks[b].path.clone()),
        position: None,
        message: format!(
            "{} algebraic loop(s): every block on them needs its own output to compute it\n{}",
            loops.len(),
            lines.join("\n")
        ),
        help: Some("break each loop with a UnitDelay, Memory or Integrator block on one of its links".into()),
    }
}

/// Tarjan's algorithm; returns the components that are cycles (more than
/// one block, or a block feeding itself), each sorted.
fn strongly_connected(deps: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct Tarjan<'a> {
        deps: &'a [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in self.deps[v].iter() {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    _ => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut comp = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 || self.deps[v].contains(&v) {
                    comp.sort_unstable();
                    self.out.push(comp);
                }
            }
        }
    }
    let n = deps.len();
    let mut t = Tarjan {
        deps,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    t.out.sort();
    t.out
}

/// A torn loop input `(block, input)`, the slot of its guess and the slot
/// of the output it is torn from.
type Guess = ((usize, usize), Slot, Slot);

/// Every block's output slots, laid out in execution order after offset 0
/// (which always holds 1.0), and the signal count so far.
fn output_slots_in_order(nodes: &[Node], order: &[usize]) -> (Vec<Vec<Slot>>, u32) {
    let mut n_signals = 1u32;
    let mut out_slots: Vec<Vec<Slot>> = vec![Vec::new(); nodes.len()];
    for &b in order {
        for p in &nodes[b].outputs {
            out_slots[b].push(Slot {
                offset: n_signals,
                width: p.width as u32,
            });
            n_signals += p.width as u32;
        }
    }
    (out_slots, n_signals)
}

/// A guess slot of its own for each torn input, after all outputs.
fn torn_guesses(
    loops: &[LoopPlan],
    sources: &[Vec<Source>],
    out_slots: &[Vec<Slot>],
    n_signals: &mut u32,
) -> Vec<Guess> {
    let mut guesses = Vec::new();
    for plan in loops {
        for &(b, i) in &plan.torn {
            if let Source::Port { from, out, .. } = sources[b][i] {
                let source = out_slots[from][out];
                let guess = Slot {
                    offset: *n_signals,
                    width: source.width,
                };
                *n_signals += source.width;
                guesses.push(((b, i), guess, source));
            }
        }
    }
    guesses
}

/// The model variable `v` once per element of `slot`, named `v[k]` when
/// the slot is wider than one, with each element's signal offset.
fn elements(v: &Variable, slot: Slot) -> impl Iterator<Item = (Variable, u32)> + '_ {
    (0..slot.width).map(move |k| {
        let mut var = v.clone();
        if slot.width > 1 {
            var.name = format!("{}[{k}]", v.name);
        }
        (var, slot.offset + k)
    })
}

/// Each planned loop as the program runs it: its entries in execution
/// order, its (guess, source) signal pairs, its blocks and torn inputs.
fn algebraic_loops(
    blocks: &[FlatBlock],
    order: &[usize],
    loops: &[LoopPlan],
    torn_names: Vec<Vec<String>>,
    guesses: &[Guess],
) -> Vec<AlgebraicLoop> {
    let position = |b: usize| order.iter().position(|&o| o == b).expect("every block is ordered");
    loops
        .iter()
        .zip(torn_names)
        .map(|(plan, torn)| {
            let first = position(plan.members[0]);
            let mut pairs = Vec::new();
            for ((b, _), guess, source) in guesses {
                if plan.members.contains(b) {
                    pairs.extend((0..guess.width).map(|k| (guess.offset + k, source.offset + k)));
                }
            }
            AlgebraicLoop {
                entries: first..first + plan.members.len(),
                pairs,
                blocks: plan.members.iter().map(|&b| blocks[b].path.clone()).collect(),
                torn,
            }
        })
        .collect()
}

/// The names of each loop's torn inputs, `<block>.<input>`.
fn torn_input_names(blocks: &[FlatBlock], nodes: &[Node], loops: &[LoopPlan]) -> Vec<Vec<String>> {
    loops
        .iter()
        .map(|plan| {
            plan.torn
                .iter()
                .map(|&(b, i)| format!("{}.{}", blocks[b].path, nodes[b].inputs[i].name))
                .collect()
        })
        .collect()
}

/// The names of a block's `n` states or zero crossings: its path alone
/// when it has one, else its path with each one's `suffix`.
fn element_names<'p>(
    path: &'p str,
    n: usize,
    suffix: impl Fn(usize) -> String + 'p,
) -> impl Iterator<Item = String> + 'p {
    (0..n).map(move |k| {
        if n == 1 {
            path.to_string()
        } else {
            format!("{path}{}", suffix(k))
        }
    })
}

/// When a block of resolved rate `rate` runs, and its period (0 unless
/// discrete); a discrete rate not seen before is added to `layout` with
/// `path` as its first user.
fn execution(rate: Resolved, layout: &mut Layout, path: &str) -> (Exec, f64) {
    match rate {
        Resolved::Constant | Resolved::Continuous => (Exec::Always, 0.0),
        Resolved::Major => (Exec::Major, 0.0),
        Resolved::Discrete(st) => {
            let r = layout.rates.iter().position(|s| *s == st).unwrap_or_else(|| {
                layout.rates.push(st);
                layout.rate_users.push(path.to_string());
                layout.rates.len() - 1
            });
            (Exec::Discrete(r as u16), st.period)
        }
    }
}

/// Lays out the signal buffer, states and holds, and builds the program.
fn assemble(
    blocks: &[FlatBlock],
    nodes: Vec<Node>,
    sources: &[Vec<Source>],
    rates: &[Resolved],
    order: &[usize],
    loops: &[LoopPlan],
) -> Program {
    let mut layout = Layout::default();
    let (out_slots, mut n_signals) = output_slots_in_order(&nodes, order);
    let guesses = torn_guesses(loops, sources, &out_slots, &mut n_signals);
    let mut slots = Vec::new();
    let mut entries = Vec::with_capacity(order.len());
    let mut info = Vec::with_capacity(order.len());
    let (mut x0, mut xd0) = (Vec::new(), Vec::new());
    let mut holds = Vec::new();
    let mut input_copies = Vec::new();
    let mut output_slots = Vec::new();
    let torn_names = torn_input_names(blocks, &nodes, loops);
    let mut nodes: Vec<Option<Node>> = nodes.into_iter().map(Some).collect();
    let mut blocks_in_order = Vec::with_capacity(order.len());
    for &b in order {
        let node = nodes[b].take().expect("each block is placed once");
        let feedthrough = node
            .inputs
            .iter()
            .enumerate()
            .filter(|(i, p)| p.feedthrough && *i < 64)
            .fold(0u64, |mask, (i, _)| mask | 1 << i);
        let fb = &blocks[b];
        let ins_start = slots.len() as u32;
        for (i, source) in sources[b].iter().enumerate() {
            let guess = guesses.iter().find(|(port, ..)| *port == (b, i)).map(|(_, g, _)| *g);
            slots.push(match (guess, source) {
                (Some(guess), _) => guess,
                (None, Source::Port { from, out, .. }) => out_slots[*from][*out],
                (None, Source::One) => Slot { offset: 0, width: 1 },
            });
        }
        let in_slots: Vec<Slot> = slots[ins_start as usize..].to_vec();
        let outs_start = slots.len() as u32;
        slots.extend_from_slice(&out_slots[b]);
        let x = (x0.len() as u32, (x0.len() + node.x0.len()) as u32);
        layout
            .states
            .extend(element_names(&fb.path, node.x0.len(), |k| format!("[{k}]")));
        x0.extend_from_slice(&node.x0);
        let xd = (xd0.len() as u32, (xd0.len() + node.xd0.len()) as u32);
        xd0.extend_from_slice(&node.xd0);
        // Modes of the zero crossings follow the block's discrete states,
        // starting on the positive side (the first major pass settles them).
        layout.modes.extend(xd0.len()..xd0.len() + node.zero_crossings);
        xd0.extend(std::iter::repeat_n(1.0, node.zero_crossings));
        let zc = (
            layout.zero_crossings.len() as u32,
            (layout.zero_crossings.len() + node.zero_crossings) as u32,
        );
        layout
            .zero_crossings
            .extend(element_names(&fb.path, node.zero_crossings, |k| format!("#{}", k + 1)));
        let (exec, period) = execution(rates[b], &mut layout, &fb.path);
        let needs_hold = exec != Exec::Always || fb.guard.is_some();
        holds.push(needs_hold.then(|| out_slots[b].iter().map(|s| s.width).sum::<u32>()));
        let guard = fb.guard.map(|g| out_slots[g].first().map_or(0, |s| s.offset));
        match &node.external {
            Some(External::Input(v)) => {
                for (var, offset) in elements(v, out_slots[b][0]) {
                    input_copies.push((layout.inputs.len(), offset));
                    layout.inputs.push(var);
                }
            }
            Some(External::Output(v)) => {
                for (var, offset) in elements(v, in_slots[0]) {
                    output_slots.push(offset);
                    layout.outputs.push(var);
                }
            }
            None => {}
        }
        entries.push(Entry {
            ins: ins_start,
            n_in: sources[b].len() as u16,
            outs: outs_start,
            n_out: out_slots[b].len() as u16,
            x,
            xd,
            zc,
            events: !fb.no_event,
            hysteresis: fb.hysteresis,
            hold: 0,
            exec,
            guard,
            period,
            feedthrough,
        });
        info.push(BlockInfo {
            path: fb.path.clone(),
            kind: fb.kind.name,
            rate: rates[b],
        });
        blocks_in_order.push(node.block);
    }
    // Holds go after all block discrete states.
    for (e, h) in entries.iter_mut().zip(holds) {
        if let Some(width) = h {
            e.hold = xd0.len() as u32;
            xd0.extend(std::iter::repeat_n(0.0, width as usize));
        } else {
            e.hold = u32::MAX;
        }
    }
    layout.discrete = xd0.len();
    let algebraic = algebraic_loops(blocks, order, loops, torn_names, &guesses);
    Program::new(
        blocks_in_order,
        entries,
        slots,
        n_signals as usize,
        x0,
        xd0,
        input_copies,
        output_slots,
        layout,
        info,
        algebraic,
    )
}
