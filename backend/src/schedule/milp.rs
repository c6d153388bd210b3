//! The optimum of a small program, or how far a schedule can be from it: a time-indexed
//! mixed-integer program solved with HiGHS.
//!
//! The heuristics ([`super::exact`], [`super::lp`]) and the bounds ([`super::bounds`]) bracket
//! the best makespan; on a small program (tens of messages) the bracket can be closed. The
//! formulation is word by word, in the exact time model of SPEC §2:
//!
//! - `z[m][j][t] = 1` when a word of message `m` crosses step `j` of its route (the injection,
//!   a link, an ejection) in cycle `t`; every step carries the message's `size` words, at most
//!   `capacity` messages hold a resource in one cycle (a link: one; a port: `--ports`);
//! - the k-th word crosses a step no sooner than `latency` cycles after it crossed the step
//!   before (cumulative counts `C[m][j][t] ≤ C[m][parent][t − latency]`: words may wait in a
//!   switch, pairing the words in order as the verifier pairs fragments);
//! - the words waiting at a switch input in cycle `t` are `C[parent][t − latency] − C[child][t]`
//!   (the most over a multicast's children), summed over messages within `--buffer`
//!   ([`super::buffers`]; the trapezoid of a fragment is exactly this count);
//! - a message leaves no sooner than its sender's program reaches the write, and a reader goes on
//!   when its last word has been ejected at the reader's node: the task programs (compute, reads
//!   gating later writes, phase barriers) are difference constraints on op start times;
//! - minimize the makespan, the latest task finish or arrival, over a horizon of the heuristic's
//!   makespan (which is warm-started as the first incumbent).
//!
//! Every integer point is a valid schedule when the set-up cost is 0 (`--setup 0`: a message
//! may be sent in fragments, each word its own if need be), for every buffer size (0: nothing
//! waits, the clear path of Minsky §4.2.4; unbounded: no buffer rows), port count, switch
//! latency and multicast. With a set-up cost a message is one transfer, which the words do not
//! express: the program is then a relaxation, its bound still holds, and its plan is used only
//! when every message happens to be one fragment. Fixed windows (a tasks file, not programs)
//! and routes other than the plan's are not modelled: [`solve`] says "unknown" (`None`).
//!
//! The plan is rebuilt from the words (consecutive words consecutive on every step form one
//! fragment), timed by running the programs against its arrivals, and goes through the
//! verifier like every schedule.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::{feedback, program, verify, Hold, Method, Problem, Resource, Schedule, ScheduleError};
use crate::traffic::{MsgId, Op};

/// The most messages [`solve`] takes by default: past a few dozen the time-indexed program has
/// too many columns for a proof in seconds.
pub const MAX_MESSAGES: usize = 60;

/// The most word columns (`z`) [`solve`] builds before it gives up ("unknown").
pub const MAX_COLUMNS: usize = 120_000;

/// Branch-and-bound nodes per solve by default.
pub const NODE_LIMIT: u32 = 2_000;

/// How hard [`solve`] tries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Seconds HiGHS may search; it then returns its best plan and bound.
    pub time_limit: f64,
    /// Programs with more messages are not attempted.
    pub max_messages: usize,
    /// Programs needing more word columns are not attempted.
    pub max_columns: usize,
    /// Branch-and-bound nodes per solve: a limit of work rather than of time gives the same
    /// answer on every machine.
    pub node_limit: Option<u32>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            time_limit: 10.0,
            max_messages: MAX_MESSAGES,
            max_columns: MAX_COLUMNS,
            node_limit: Some(NODE_LIMIT),
        }
    }
}

/// What the mixed-integer program established about a program's best makespan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Proof {
    /// No valid schedule (on these routes) finishes before this cycle.
    pub bound: u64,
    /// The best makespan known: the MILP's plan or the schedule it was given.
    pub best: u64,
    /// The search finished: `best` is the optimum.
    pub proven: bool,
    /// The MILP's own plan when it beats the schedule it was given (verified).
    #[serde(skip)]
    pub plan: Option<Schedule>,
    /// Word columns, rows, and the solver's seconds.
    pub columns: usize,
    pub rows: usize,
    pub seconds: f64,
}

impl Proof {
    /// How far `makespan` may be above the optimum, as a fraction of the bound.
    pub fn gap_of(&self, makespan: u64) -> f64 {
        if self.bound == 0 {
            return if makespan == 0 { 0.0 } else { f64::INFINITY };
        }
        makespan.saturating_sub(self.bound) as f64 / self.bound as f64
    }
}

/// A linear expression: `Σ coefficient · column`.
type Terms = Vec<(usize, f64)>;

/// Per (switch input, cycle): the words waiting there, as terms plus a constant.
type Waiting = BTreeMap<(Resource, u64), (Terms, f64)>;

/// A column of the program: cost, bounds, integrality.
struct Col {
    cost: f64,
    lo: f64,
    hi: f64,
    integer: bool,
}

/// The program before it is handed to the solver, so its size is known first.
#[derive(Default)]
struct Model {
    cols: Vec<Col>,
    rows: Vec<(Terms, f64, f64)>,
    /// The given schedule's value of each column (the warm start).
    start: Vec<f64>,
}

impl Model {
    fn col(&mut self, cost: f64, lo: f64, hi: f64, integer: bool, start: f64) -> usize {
        self.cols.push(Col {
            cost,
            lo,
            hi,
            integer,
        });
        self.start.push(start);
        self.cols.len() - 1
    }
    /// `lo ≤ Σ terms ≤ hi`, a column named twice summed.
    fn row(&mut self, terms: Vec<(usize, f64)>, lo: f64, hi: f64) {
        let mut merged: BTreeMap<usize, f64> = BTreeMap::new();
        for (c, v) in terms {
            *merged.entry(c).or_default() += v;
        }
        let terms: Vec<(usize, f64)> = merged.into_iter().filter(|&(_, v)| v != 0.0).collect();
        self.rows.push((terms, lo, hi));
    }
}

/// A cumulative count `C[m][j][t]`: a column inside the step's window, a constant outside.
#[derive(Clone, Copy)]
enum Count {
    Const(f64),
    Var(usize),
}

/// One step of one message: its cycles `lo..=hi` and the columns for each.
struct StepVars {
    lo: u64,
    hi: u64,
    /// `z` per cycle `lo..=hi`.
    z: Vec<usize>,
    /// `C` per cycle `lo..=hi`.
    c: Vec<usize>,
}

impl StepVars {
    fn count(&self, t: i64, size: u64) -> Count {
        if t < self.lo as i64 {
            Count::Const(0.0)
        } else if t > self.hi as i64 {
            Count::Const(size as f64)
        } else {
            Count::Var(self.c[(t as u64 - self.lo) as usize])
        }
    }
}

/// Solves the time-indexed program for `problem` with `given` (a verified schedule on the same
/// routes) as the first incumbent and its makespan as the horizon. `None` when the program is
/// outside what the formulation expresses or larger than `options` allow.
pub fn solve(
    problem: &Problem,
    given: &Schedule,
    options: &Options,
) -> Result<Option<Proof>, ScheduleError> {
    let traffic = problem.traffic;
    if traffic.messages.len() > options.max_messages
        || !program::is_driven(traffic)
        || given.routes.is_some()
    {
        return Ok(None);
    }
    let t0 = Instant::now();
    let left = || options.time_limit - t0.elapsed().as_secs_f64();
    let lower = super::lower_bound(problem).0;
    let mut best = given.makespan;
    let mut bound = lower.min(best);
    let mut plan: Option<Schedule> = None;
    // First the makespan itself, from the given schedule; then, while a cycle less is not ruled
    // out, whether any schedule ends a cycle earlier: with the horizon one cycle shorter every
    // window shrinks, and an infeasible program is the proof the time-indexed objective alone
    // is slow to give (seed 19 of `bench_milp`: 12 s at the given horizon left the bound at
    // 25.9 of 28; one cycle shorter, HiGHS found and proved 26 in 9 s).
    let (model, vars, columns) = match build(problem, given, best, options)? {
        Built::Model(m, v, c) => (m, v, c),
        Built::Unknown | Built::Infeasible => return Ok(None),
    };
    let rows = model.rows.len();
    let start = warm_start(&model);
    // The given schedule's horizon only for the root (its cuts give a bound, the warm start a
    // first incumbent); the search itself is spent on the shorter horizons below, where
    // HiGHS's rounding finds better plans and presolve proves none exists far sooner.
    let first = run_highs(&model, start.as_deref(), left() * 0.15, Some(1))?;
    if first.infeasible {
        return Err(ScheduleError::Lp(
            "the time-indexed program has no solution, though the given schedule is one".into(),
        ));
    }
    bound = bound.max(first.bound);
    if let Some(values) = &first.values {
        if let Some(s) = rebuild(problem, &vars, values)? {
            if s.makespan < best {
                best = s.makespan;
                plan = Some(s);
            }
        }
    }
    if first.proven {
        bound = best;
    }
    while bound < best && left() > 0.2 {
        let shorter = best - 1;
        let (model, vars) = match build(problem, given, shorter, options)? {
            Built::Model(m, v, _) => (m, v),
            Built::Infeasible => {
                bound = best;
                break;
            }
            Built::Unknown => break,
        };
        let r = run_highs(&model, None, left(), options.node_limit)?;
        if r.infeasible {
            bound = best;
            break;
        }
        let found = match &r.values {
            Some(values) => rebuild(problem, &vars, values)?,
            None => None,
        };
        match found {
            Some(s) if s.makespan < best => {
                best = s.makespan;
                plan = Some(s);
                if r.proven {
                    bound = best;
                }
            }
            // No schedule ends before `shorter + 1` unless the search found one: its bound
            // holds for every schedule within the shorter horizon.
            _ => {
                bound = bound.max(r.bound.min(best));
                break;
            }
        }
    }
    let bound = bound.min(best);
    Ok(Some(Proof {
        bound,
        best,
        proven: bound >= best,
        plan,
        columns,
        rows,
        seconds: t0.elapsed().as_secs_f64(),
    }))
}

/// The mean cycle of a step's words as `Σ terms + constant`: `lo + Σ_{t=lo..=hi} (size − C[t])
/// / size`.
fn mean_cycle(v: &StepVars, size: u64) -> (Vec<(usize, f64)>, f64) {
    let l = size as f64;
    let terms = v.c.iter().map(|&c| (c, -1.0 / l)).collect();
    (terms, v.lo as f64 + v.c.len() as f64)
}

/// The program over `horizon` cycles, or why there is none.
enum Built {
    Model(Model, Vec<Vec<StepVars>>, usize),
    /// Outside what the formulation expresses or larger than allowed.
    Unknown,
    /// No schedule fits the horizon: some message cannot even get through alone.
    Infeasible,
}

fn build(
    problem: &Problem,
    given: &Schedule,
    horizon: u64,
    options: &Options,
) -> Result<Built, ScheduleError> {
    let Some(depth) = step_depths(problem) else {
        return Ok(Built::Unknown);
    };
    let release_lo = earliest_releases(problem, &depth)?;
    let tail = read_tails(problem);
    let incumbent = Incumbent::of(problem, given);
    let mut b = Builder::new(problem, horizon, depth, incumbent, &release_lo);
    let columns = match b.word_columns(&release_lo, &tail, options) {
        Ok(columns) => columns,
        Err(stop) => return Ok(stop),
    };
    b.causality_rows();
    b.capacity_rows();
    b.buffer_rows();
    b.release_rows();
    let arrival = b.arrival_rows()?;
    b.program_rows(&arrival)?;
    Ok(Built::Model(b.model, b.vars, columns))
}

/// Per message, the depth of each step below the injection; `None` when a route uses a
/// resource twice (not expressed by the formulation).
fn step_depths(problem: &Problem) -> Option<Vec<Vec<u64>>> {
    let mut depth: Vec<Vec<u64>> = Vec::with_capacity(problem.steps.len());
    for steps in &problem.steps {
        let mut d = vec![0u64; steps.len()];
        let mut seen = std::collections::BTreeSet::new();
        for (j, s) in steps.iter().enumerate() {
            if !seen.insert(s.resource()) {
                return None;
            }
            if let Some(p) = s.parent() {
                d[j] = d[p] + 1;
            }
        }
        depth.push(d);
    }
    Some(depth)
}

/// Earliest releases: the programs run with every message as fast as its route allows.
fn earliest_releases(problem: &Problem, depth: &[Vec<u64>]) -> Result<Vec<u64>, ScheduleError> {
    let traffic = problem.traffic;
    let lat = problem.hardware.hop_latency;
    let node_of = &problem.placement.node_of;
    let fastest = |m: MsgId, node: usize| -> u64 {
        let msg = &traffic.messages[m];
        if msg.size == 0 {
            return 0;
        }
        let e = problem.steps[m]
            .iter()
            .position(|s| s.resource() == Resource::eject(node));
        e.map_or(0, |e| depth[m][e] * lat + msg.size)
    };
    let early = program::run_with(traffic, |m, d, at| {
        let r = at.max(traffic.messages[m].release);
        r + fastest(m, node_of[d])
    })?;
    Ok((0..traffic.messages.len())
        .map(|m| early.release[m].max(traffic.messages[m].release))
        .collect())
}

/// Tails: per (message, reader node), the compute a reader does after the read, which the
/// horizon must leave room for.
fn read_tails(problem: &Problem) -> BTreeMap<(MsgId, usize), u64> {
    let node_of = &problem.placement.node_of;
    let mut tail: BTreeMap<(MsgId, usize), u64> = BTreeMap::new();
    for task in &problem.traffic.tasks {
        for (k, op) in task.ops.iter().enumerate() {
            if let Op::Recv(m) = *op {
                let after: u64 = task.ops[k + 1..]
                    .iter()
                    .map(|o| match o {
                        Op::Compute(c) => *c,
                        _ => 0,
                    })
                    .sum();
                let node = node_of[task.id];
                let e = tail.entry((m, node)).or_default();
                *e = (*e).max(after);
            }
        }
    }
    tail
}

/// The given schedule as the first incumbent: its words per step, its arrivals, the op times
/// its programs reach.
struct Incumbent {
    released: Vec<u64>,
    /// `words[m][j]`: the cycles of message `m`'s words on step `j`, sorted.
    words: Vec<Vec<Vec<u64>>>,
    arrival: BTreeMap<(MsgId, usize), u64>,
    ops: Vec<Vec<u64>>,
    barrier: BTreeMap<(usize, usize), u64>,
}

impl Incumbent {
    fn of(problem: &Problem, given: &Schedule) -> Incumbent {
        let traffic = problem.traffic;
        let node_of = &problem.placement.node_of;
        let n = traffic.messages.len();
        let words: Vec<Vec<Vec<u64>>> = (0..n)
            .map(|m| {
                problem.steps[m]
                    .iter()
                    .map(|st| {
                        let mut w: Vec<u64> = given
                            .holds_of(m)
                            .filter(|hd| hd.resource() == st.resource())
                            .flat_map(|hd| hd.start()..hd.end())
                            .collect();
                        w.sort_unstable();
                        w
                    })
                    .collect()
            })
            .collect();
        let mut arrival: BTreeMap<(MsgId, usize), u64> = BTreeMap::new();
        for m in 0..n {
            for &d in &traffic.messages[m].dst {
                let node = node_of[d];
                let a = given
                    .holds_of(m)
                    .filter(|hd| hd.resource() == Resource::eject(node))
                    .map(|hd| hd.end())
                    .max()
                    .unwrap_or(given.released[m]);
                arrival.insert((m, node), a);
            }
        }
        let (ops, barrier) = op_times(traffic, node_of, &arrival);
        Incumbent {
            released: given.released.clone(),
            words,
            arrival,
            ops,
            barrier,
        }
    }

    /// Words of message `m` across step `j` by the end of cycle `t`.
    fn count(&self, m: usize, j: usize, t: i64) -> f64 {
        if t < 0 {
            return 0.0;
        }
        self.words[m][j].partition_point(|&x| x <= t as u64) as f64
    }
}

/// The program of one horizon as it is built: its columns so far and the rows that tie them.
struct Builder<'p, 'a> {
    problem: &'p Problem<'a>,
    lat: u64,
    horizon: u64,
    /// The horizon as a bound.
    h: f64,
    depth: Vec<Vec<u64>>,
    given: Incumbent,
    model: Model,
    makespan: usize,
    /// Per message: its release column.
    release: Vec<usize>,
    /// Per message and step: its word columns.
    vars: Vec<Vec<StepVars>>,
}

impl<'p, 'a> Builder<'p, 'a> {
    /// The makespan and release columns.
    fn new(
        problem: &'p Problem<'a>,
        horizon: u64,
        depth: Vec<Vec<u64>>,
        given: Incumbent,
        release_lo: &[u64],
    ) -> Self {
        let mut model = Model::default();
        let h = horizon as f64;
        let makespan = model.col(1.0, 0.0, h, false, h);
        let release: Vec<usize> = (0..problem.traffic.messages.len())
            .map(|m| {
                model.col(
                    0.0,
                    release_lo[m] as f64,
                    h,
                    false,
                    given.released[m] as f64,
                )
            })
            .collect();
        Builder {
            problem,
            lat: problem.hardware.hop_latency,
            horizon,
            h,
            depth,
            given,
            model,
            makespan,
            release,
            vars: Vec::new(),
        }
    }

    /// Word columns, step by step, in the windows the horizon allows, with their cumulative
    /// counts; the number of word columns, or why the program stops here.
    fn word_columns(
        &mut self,
        release_lo: &[u64],
        tail: &BTreeMap<(MsgId, usize), u64>,
        options: &Options,
    ) -> Result<usize, Built> {
        let traffic = self.problem.traffic;
        let (lat, horizon) = (self.lat, self.horizon);
        let mut columns = 0usize;
        for (m, &release) in release_lo.iter().enumerate() {
            let size = traffic.messages[m].size;
            let steps = &self.problem.steps[m];
            if size == 0 {
                self.vars.push(Vec::new());
                continue;
            }
            // Latest cycle per step: an ejection leaves room for the reader's tail; a step
            // before it for the hops after it.
            let mut hi = vec![i64::MAX; steps.len()];
            for j in (0..steps.len()).rev() {
                if let Resource::Eject(node) = steps[j].resource() {
                    let t = tail.get(&(m, node as usize)).copied().unwrap_or(0);
                    hi[j] = horizon as i64 - 1 - t as i64;
                }
                if let Some(p) = steps[j].parent() {
                    hi[p] = hi[p].min(hi[j] - lat as i64);
                }
            }
            let mut sv = Vec::with_capacity(steps.len());
            for j in 0..steps.len() {
                let lo = release + self.depth[m][j] * lat;
                if hi[j] < (lo + size - 1) as i64 {
                    // Even alone the message cannot get through within the horizon.
                    return Err(Built::Infeasible);
                }
                let hi = hi[j] as u64;
                let width = (hi - lo + 1) as usize;
                columns += width;
                if columns > options.max_columns {
                    return Err(Built::Unknown);
                }
                sv.push(self.step_columns(m, j, lo, hi, size));
            }
            self.vars.push(sv);
        }
        Ok(columns)
    }

    /// The columns of message `m`'s step `j` over cycles `lo..=hi`: `z` per cycle, then `C`
    /// per cycle, with `C[t] = C[t−1] + z[t]` and all `size` words across by `hi`.
    fn step_columns(&mut self, m: usize, j: usize, lo: u64, hi: u64, size: u64) -> StepVars {
        let width = (hi - lo + 1) as usize;
        let given = &self.given;
        let model = &mut self.model;
        let z: Vec<usize> = (0..width)
            .map(|k| {
                let t = (lo + k as u64) as i64;
                let x = given.count(m, j, t) - given.count(m, j, t - 1);
                model.col(0.0, 0.0, 1.0, true, x)
            })
            .collect();
        let c: Vec<usize> = (0..width)
            .map(|k| {
                let x = given.count(m, j, (lo + k as u64) as i64);
                model.col(0.0, 0.0, size as f64, false, x)
            })
            .collect();
        for k in 0..width {
            // C[t] = C[t−1] + z[t].
            let mut terms = vec![(c[k], 1.0), (z[k], -1.0)];
            if k > 0 {
                terms.push((c[k - 1], -1.0));
            }
            model.row(terms, 0.0, 0.0);
        }
        model.row(vec![(c[width - 1], 1.0)], size as f64, size as f64);
        StepVars { lo, hi, z, c }
    }

    /// Causality: the k-th word crosses a step `latency` cycles or more after the step before.
    fn causality_rows(&mut self) {
        let lat = self.lat;
        for (m, msg) in self.problem.traffic.messages.iter().enumerate() {
            let size = msg.size;
            for (j, s) in self.problem.steps[m].iter().enumerate() {
                let (Some(p), Some(v)) = (s.parent(), self.vars[m].get(j)) else {
                    continue;
                };
                for t in v.lo..=v.hi {
                    let mut terms = vec![(v.c[(t - v.lo) as usize], 1.0)];
                    let rhs = match self.vars[m][p].count(t as i64 - lat as i64, size) {
                        Count::Const(k) => k,
                        Count::Var(c) => {
                            terms.push((c, -1.0));
                            0.0
                        }
                    };
                    if rhs < size as f64 {
                        self.model.row(terms, f64::NEG_INFINITY, rhs);
                    }
                }
            }
        }
    }

    /// Capacity per resource per cycle.
    fn capacity_rows(&mut self) {
        let mut users: BTreeMap<(Resource, u64), Vec<usize>> = BTreeMap::new();
        for (m, vs) in self.vars.iter().enumerate() {
            for (j, v) in vs.iter().enumerate() {
                let r = self.problem.steps[m][j].resource();
                for (k, &z) in v.z.iter().enumerate() {
                    users.entry((r, v.lo + k as u64)).or_default().push(z);
                }
            }
        }
        for ((r, _), zs) in &users {
            let cap = self.problem.hardware.capacity(*r) as usize;
            if zs.len() > cap {
                self.model.row(
                    zs.iter().map(|&z| (z, 1.0)).collect(),
                    f64::NEG_INFINITY,
                    cap as f64,
                );
            }
        }
    }

    /// Buffers: the words waiting at each switch input in each cycle within its budget.
    fn buffer_rows(&mut self) {
        let hw = &self.problem.hardware;
        if hw.buffer.is_none() {
            return;
        }
        // (input, cycle) → (terms, constant); per message and input, a waiting column when it
        // has several children (the most waiting over them), else the difference itself.
        let mut waiting: Waiting = BTreeMap::new();
        let mut words_through: BTreeMap<Resource, u64> = BTreeMap::new();
        for (m, msg) in self.problem.traffic.messages.iter().enumerate() {
            let size = msg.size;
            if size == 0 {
                continue;
            }
            let steps = &self.problem.steps[m];
            for (p, sp) in steps.iter().enumerate() {
                let children: Vec<usize> = (0..steps.len())
                    .filter(|&j| steps[j].parent() == Some(p))
                    .collect();
                if children.is_empty() {
                    continue;
                }
                *words_through.entry(sp.resource()).or_default() += size;
                self.waiting_at(m, p, &children, &mut waiting);
            }
        }
        for ((r, _), (terms, k)) in waiting {
            let Some(budget) = super::buffers::budget(hw, r) else {
                continue;
            };
            if words_through.get(&r).copied().unwrap_or(0) <= budget {
                continue;
            }
            self.model.row(terms, f64::NEG_INFINITY, budget as f64 - k);
        }
    }

    /// Adds to `waiting` the words of message `m` waiting at the input of step `p`'s
    /// `children` in each cycle: `C[p][t − latency] − C[c][t]`, the most over the children.
    fn waiting_at(&mut self, m: usize, p: usize, children: &[usize], waiting: &mut Waiting) {
        let lat = self.lat;
        let size = self.problem.traffic.messages[m].size;
        let resource = self.problem.steps[m][p].resource();
        let vars = &self.vars;
        let from = vars[m][p].lo + lat;
        let to = children
            .iter()
            .map(|&c| vars[m][c].hi)
            .max()
            .unwrap_or(from);
        for t in from..to {
            // diff_c = C[p][t − latency] − C[c][t].
            let diff = |c: usize| -> (Vec<(usize, f64)>, f64) {
                let mut terms = Vec::new();
                let mut k = 0.0;
                match vars[m][p].count(t as i64 - lat as i64, size) {
                    Count::Const(v) => k += v,
                    Count::Var(col) => terms.push((col, 1.0)),
                }
                match vars[m][c].count(t as i64, size) {
                    Count::Const(v) => k -= v,
                    Count::Var(col) => terms.push((col, -1.0)),
                }
                (terms, k)
            };
            let entry = waiting.entry((resource, t)).or_default();
            if children.len() == 1 {
                let (terms, k) = diff(children[0]);
                entry.0.extend(terms);
                entry.1 += k;
            } else {
                let start = children
                    .iter()
                    .map(|&c| {
                        self.given.count(m, p, t as i64 - lat as i64)
                            - self.given.count(m, c, t as i64)
                    })
                    .fold(0.0, f64::max);
                let w = self.model.col(0.0, 0.0, size as f64, false, start);
                for &c in children {
                    let (terms, k) = diff(c);
                    // w ≥ diff_c.
                    let mut row: Vec<(usize, f64)> =
                        terms.into_iter().map(|(col, v)| (col, -v)).collect();
                    row.push((w, 1.0));
                    self.model.row(row, k, f64::INFINITY);
                }
                entry.0.push((w, 1.0));
            }
        }
    }

    /// Releases: no word leaves before its sender reaches the write.
    fn release_rows(&mut self) {
        let h = self.h;
        for (m, msg) in self.problem.traffic.messages.iter().enumerate() {
            let Some(inject) = self.vars[m].first() else {
                continue;
            };
            for (k, &z) in inject.z.iter().enumerate() {
                let t = (inject.lo + k as u64) as f64;
                // R ≤ t when z: R + (H − t)·z ≤ H.
                self.model.row(
                    vec![(self.release[m], 1.0), (z, h - t)],
                    f64::NEG_INFINITY,
                    h,
                );
            }
            // The first word is at least (size − 1)/2 before the words' mean cycle.
            let size = msg.size;
            let (terms, k) = mean_cycle(inject, size);
            let mut row: Vec<(usize, f64)> = terms.into_iter().map(|(c, x)| (c, -x)).collect();
            row.push((self.release[m], 1.0));
            self.model
                .row(row, f64::NEG_INFINITY, k - (size as f64 - 1.0) / 2.0);
        }
    }

    /// Arrivals per (message, reader node): a column each, after the last word's ejection and
    /// before the makespan.
    fn arrival_rows(&mut self) -> Result<BTreeMap<(MsgId, usize), usize>, ScheduleError> {
        let (lat, h) = (self.lat, self.h);
        let node_of = &self.problem.placement.node_of;
        let mut arrival: BTreeMap<(MsgId, usize), usize> = BTreeMap::new();
        for (m, msg) in self.problem.traffic.messages.iter().enumerate() {
            let size = msg.size;
            let mut nodes: Vec<usize> = msg.dst.iter().map(|&d| node_of[d]).collect();
            nodes.sort_unstable();
            nodes.dedup();
            for node in nodes {
                let start = self.given.arrival.get(&(m, node)).copied().unwrap_or(0) as f64;
                let a = self.model.col(0.0, 0.0, h, false, start);
                arrival.insert((m, node), a);
                self.model.row(
                    vec![(a, 1.0), (self.makespan, -1.0)],
                    f64::NEG_INFINITY,
                    0.0,
                );
                if size == 0 {
                    self.model
                        .row(vec![(a, 1.0), (self.release[m], -1.0)], 0.0, f64::INFINITY);
                    continue;
                }
                let e = self.problem.steps[m]
                    .iter()
                    .position(|s| s.resource() == Resource::eject(node))
                    .ok_or_else(|| {
                        ScheduleError::Input(format!("message {m} is not ejected at node {node}"))
                    })?;
                let v = &self.vars[m][e];
                for (k, &z) in v.z.iter().enumerate() {
                    let t = (v.lo + k as u64 + 1) as f64;
                    self.model.row(vec![(a, 1.0), (z, -t)], 0.0, f64::INFINITY);
                }
                // The words' mean cycle: Σ_t (size − C[t]) over the window, plus the cycles
                // before it, is Σ over words of their cycles; the last of `size` distinct cycles
                // is at least (size − 1)/2 past their mean. Much tighter than the rows above
                // while the words are still fractional.
                let (terms, k) = mean_cycle(v, size);
                let mut row: Vec<(usize, f64)> = terms.into_iter().map(|(c, x)| (c, -x)).collect();
                row.push((a, 1.0));
                self.model
                    .row(row, k + (size as f64 - 1.0) / 2.0 + 1.0, f64::INFINITY);
                // The last word no sooner than the route and the size allow after the release.
                self.model.row(
                    vec![(a, 1.0), (self.release[m], -1.0)],
                    (self.depth[m][e] * lat + size) as f64,
                    f64::INFINITY,
                );
            }
        }
        Ok(arrival)
    }

    /// The programs: op start times, one column per op boundary, as difference constraints
    /// (compute, writes releasing their messages, reads after arrivals, phase barriers).
    fn program_rows(
        &mut self,
        arrival: &BTreeMap<(MsgId, usize), usize>,
    ) -> Result<(), ScheduleError> {
        let h = self.h;
        let node_of = &self.problem.placement.node_of;
        let model = &mut self.model;
        let mut barrier: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        for task in &self.problem.traffic.tasks {
            let mut syncs: BTreeMap<usize, usize> = BTreeMap::new();
            let times = &self.given.ops[task.id];
            let mut at = model.col(0.0, 0.0, h, false, times[0] as f64);
            for (i, op) in task.ops.iter().enumerate() {
                let next = model.col(0.0, 0.0, h, false, times[i + 1] as f64);
                let mut gap = 0.0;
                match *op {
                    Op::Compute(c) => gap = c as f64,
                    Op::Send(m) => {
                        model.row(vec![(self.release[m], 1.0), (at, -1.0)], 0.0, f64::INFINITY);
                    }
                    Op::Recv(m) => {
                        let a = arrival
                            .get(&(m, node_of[task.id]))
                            .copied()
                            .ok_or_else(|| {
                                ScheduleError::Input(format!(
                                    "task {} reads message {m}, which is not sent to it",
                                    task.id
                                ))
                            })?;
                        model.row(vec![(next, 1.0), (a, -1.0)], 0.0, f64::INFINITY);
                    }
                    Op::Sync(p) => {
                        let k = syncs.entry(p).or_default();
                        let start = self.given.barrier.get(&(p, *k)).copied().unwrap_or(0) as f64;
                        let b = *barrier
                            .entry((p, *k))
                            .or_insert_with(|| model.col(0.0, 0.0, h, false, start));
                        *k += 1;
                        model.row(vec![(b, 1.0), (at, -1.0)], 0.0, f64::INFINITY);
                        model.row(vec![(next, 1.0), (b, -1.0)], 0.0, f64::INFINITY);
                    }
                }
                model.row(vec![(next, 1.0), (at, -1.0)], gap, f64::INFINITY);
                at = next;
            }
            model.row(vec![(self.makespan, 1.0), (at, -1.0)], 0.0, f64::INFINITY);
        }
        Ok(())
    }
}

/// The given schedule as a point of the program, for HiGHS to start from; `None` when it
/// misses a bound or a row (a word outside the windows: then HiGHS searches from scratch).
fn warm_start(model: &Model) -> Option<Vec<f64>> {
    const EPS: f64 = 1e-6;
    let x = &model.start;
    let cols_ok = model
        .cols
        .iter()
        .zip(x)
        .all(|(c, &v)| v >= c.lo - EPS && v <= c.hi + EPS);
    let rows_ok = model.rows.iter().all(|(terms, lo, hi)| {
        let v: f64 = terms.iter().map(|&(c, k)| k * x[c]).sum();
        v >= lo - EPS && v <= hi + EPS
    });
    (cols_ok && rows_ok).then(|| x.clone())
}

/// Per task, the start of each op (and its end) when messages reach each reader node when
/// `arrival` says, and when each (phase, occurrence) barrier opens: the least solution of the
/// program rows, found by relaxing them until nothing moves.
#[allow(clippy::type_complexity)]
fn op_times(
    traffic: &crate::traffic::Traffic,
    node_of: &[usize],
    arrival: &BTreeMap<(MsgId, usize), u64>,
) -> (Vec<Vec<u64>>, BTreeMap<(usize, usize), u64>) {
    let mut times: Vec<Vec<u64>> = traffic
        .tasks
        .iter()
        .map(|t| vec![0; t.ops.len() + 1])
        .collect();
    let mut barrier: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    let rounds = 2 + traffic
        .tasks
        .iter()
        .flat_map(|t| &t.ops)
        .filter(|o| matches!(o, Op::Sync(_)))
        .count();
    for _ in 0..rounds {
        let mut moved = false;
        for task in &traffic.tasks {
            let mut syncs: BTreeMap<usize, usize> = BTreeMap::new();
            for (i, op) in task.ops.iter().enumerate() {
                let at = times[task.id][i];
                let next = match *op {
                    Op::Compute(c) => at.saturating_add(c),
                    Op::Send(_) => at,
                    Op::Recv(m) => {
                        at.max(arrival.get(&(m, node_of[task.id])).copied().unwrap_or(0))
                    }
                    Op::Sync(p) => {
                        let k = syncs.entry(p).or_default();
                        let b = barrier.entry((p, *k)).or_default();
                        *k += 1;
                        if at > *b {
                            *b = at;
                            moved = true;
                        }
                        *b
                    }
                };
                if next > times[task.id][i + 1] {
                    times[task.id][i + 1] = next;
                    moved = true;
                }
            }
        }
        if !moved {
            break;
        }
    }
    (times, barrier)
}

/// What HiGHS found: its best point, the proven lower bound on the makespan (rounded up: the
/// makespan is an integer), whether the search finished, or that there is no point at all.
struct Solved {
    values: Option<Vec<f64>>,
    bound: u64,
    proven: bool,
    infeasible: bool,
}

/// Solves `model` within `time_limit` seconds.
fn run_highs(
    model: &Model,
    start: Option<&[f64]>,
    time_limit: f64,
    node_limit: Option<u32>,
) -> Result<Solved, ScheduleError> {
    use highs::{HighsModelStatus, RowProblem, Sense};
    let mut p = RowProblem::default();
    let cols: Vec<highs::Col> = model
        .cols
        .iter()
        .map(|c| {
            if c.integer {
                p.add_integer_column(c.cost, c.lo..=c.hi)
            } else {
                p.add_column(c.cost, c.lo..=c.hi)
            }
        })
        .collect();
    for (terms, lo, hi) in &model.rows {
        let row: Vec<(highs::Col, f64)> = terms.iter().map(|&(c, v)| (cols[c], v)).collect();
        match (lo.is_finite(), hi.is_finite()) {
            (true, true) => p.add_row(*lo..=*hi, row),
            (true, false) => p.add_row(*lo.., row),
            (false, true) => p.add_row(..=*hi, row),
            (false, false) => {}
        }
    }
    let mut m = p.optimise(Sense::Minimise);
    if std::env::var_os("TTDL_MILP_LOG").is_none() {
        m.make_quiet();
    } else {
        m.set_option("output_flag", true);
        m.set_option("log_to_console", true);
    }
    m.set_option("time_limit", time_limit.max(0.1));
    // The makespan is an integer: a gap below one cycle is a proof.
    m.set_option("mip_abs_gap", 0.999);
    m.set_option("mip_rel_gap", 0.0);
    if let Some(nodes) = node_limit {
        m.set_option("mip_max_nodes", nodes as i32);
    }
    if let Some(x) = start {
        // A rejected start only costs the search its first incumbent.
        let _ = m.try_set_solution(Some(x), None, None, None);
    }
    let solved = m
        .try_solve()
        .map_err(|e| ScheduleError::Lp(format!("HiGHS: {e:?}")))?;
    let status = solved.status();
    let has_point = matches!(
        solved.primal_solution_status(),
        highs::HighsSolutionStatus::Feasible
    );
    let dual = solved
        .double_info_value(c"mip_dual_bound")
        .unwrap_or(f64::NEG_INFINITY);
    let proven = status == HighsModelStatus::Optimal;
    let values = has_point.then(|| solved.get_solution().columns().to_vec());
    let bound = if dual.is_finite() {
        (dual - 1e-6).ceil().max(0.0) as u64
    } else {
        0
    };
    match status {
        HighsModelStatus::Infeasible => Ok(Solved {
            values: None,
            bound: 0,
            proven: true,
            infeasible: true,
        }),
        HighsModelStatus::Optimal
        | HighsModelStatus::ReachedTimeLimit
        | HighsModelStatus::ReachedIterationLimit
        | HighsModelStatus::ReachedSolutionLimit
        | HighsModelStatus::ReachedInterrupt
        | HighsModelStatus::ReachedMemoryLimit
        | HighsModelStatus::Unknown => Ok(Solved {
            values,
            bound,
            proven,
            infeasible: false,
        }),
        s => Err(ScheduleError::Lp(format!(
            "HiGHS could not solve the time-indexed program: {s:?}"
        ))),
    }
}

/// The plan the words describe, timed by the programs and verified; `None` when it cannot be
/// one plan (a message in several fragments with a set-up cost).
fn rebuild(
    problem: &Problem,
    vars: &[Vec<StepVars>],
    values: &[f64],
) -> Result<Option<Schedule>, ScheduleError> {
    let traffic = problem.traffic;
    let n = traffic.messages.len();
    let mut holds: Vec<Hold> = Vec::new();
    for (m, vs) in vars.iter().enumerate().take(n) {
        if vs.is_empty() {
            continue;
        }
        let size = traffic.messages[m].size as usize;
        let words: Vec<Vec<u64>> = vs
            .iter()
            .map(|v| {
                v.z.iter()
                    .enumerate()
                    .filter(|&(_, &z)| values[z] > 0.5)
                    .map(|(k, _)| v.lo + k as u64)
                    .collect()
            })
            .collect();
        if words.iter().any(|w| w.len() != size) {
            return Err(ScheduleError::Lp(format!(
                "the time-indexed program sent message {m} with the wrong number of words"
            )));
        }
        let mut k = 0;
        let mut fragments = 0;
        while k < size {
            let mut e = k + 1;
            while e < size && words.iter().all(|w| w[e] == w[e - 1] + 1) {
                e += 1;
            }
            for (j, st) in problem.steps[m].iter().enumerate() {
                holds.push(Hold::new(
                    m,
                    st.resource(),
                    words[j][k],
                    words[j][e - 1] + 1,
                )?);
            }
            fragments += 1;
            k = e;
        }
        if fragments > 1 && problem.hardware.setup > 0 {
            return Ok(None);
        }
    }
    let node_of = &problem.placement.node_of;
    let mut arrive: BTreeMap<(MsgId, usize), u64> = BTreeMap::new();
    for h in &holds {
        if let Resource::Eject(node) = h.resource() {
            let a = arrive.entry((h.msg(), node as usize)).or_default();
            *a = (*a).max(h.end());
        }
    }
    let timing = program::run_with(traffic, |m, d, at| {
        arrive.get(&(m, node_of[d])).copied().unwrap_or(at)
    })?;
    let released = (0..n)
        .map(|m| timing.release[m].max(traffic.messages[m].release))
        .collect();
    let s = feedback::assemble(problem, Method::Exact, holds, released, timing.task_finish);
    verify::verify(problem, &s).map_err(|why| ScheduleError::Invalid {
        method: "milp",
        why: why.to_string(),
    })?;
    Ok(Some(s))
}

/// A random program for measuring schedules against the optimum: `tasks` tasks, each round
/// every task writes some messages (unicast or, now and then, to two readers) after a little
/// compute, then reads what was sent to it in that round. Writes come before reads in a round,
/// so no set of tasks waits on each other forever. About `messages` messages in all (seeded).
pub fn random_program(seed: u64, tasks: usize, messages: usize) -> crate::traffic::Traffic {
    use crate::traffic::{Message, Phase, Task, Traffic};
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let tasks = tasks.max(2);
    let mut t = Traffic::default();
    for i in 0..tasks {
        t.tasks.push(Task {
            id: i,
            name: format!("t{i}"),
            ..Task::default()
        });
    }
    t.phases.push(Phase {
        id: 0,
        name: "0".into(),
        start: 0,
    });
    let rounds = rng.random_range(1..=3usize);
    for round in 0..rounds {
        let left = messages.saturating_sub(t.messages.len());
        let here = if round + 1 == rounds {
            left
        } else {
            rng.random_range(1..=left.max(1))
        };
        let mut reads: Vec<Vec<usize>> = vec![Vec::new(); tasks];
        for _ in 0..here {
            let src = rng.random_range(0..tasks);
            let mut dst = vec![(src + rng.random_range(1..tasks)) % tasks];
            if rng.random_bool(0.15) {
                let other = (src + rng.random_range(1..tasks)) % tasks;
                if !dst.contains(&other) {
                    dst.push(other);
                }
            }
            let id = t.messages.len();
            t.messages.push(Message {
                id,
                src,
                dst: dst.clone().into(),
                size: rng.random_range(1..=8),
                ..Message::default()
            });
            let compute = rng.random_range(0..4);
            if compute > 0 {
                t.tasks[src].ops.push(Op::Compute(compute));
            }
            t.tasks[src].ops.push(Op::Send(id));
            for d in dst {
                reads[d].push(id);
            }
        }
        for (task, ids) in reads.into_iter().enumerate() {
            for id in ids {
                t.tasks[task].ops.push(Op::Recv(id));
            }
        }
    }
    // Ideal timing cannot fail on these programs (no task waits on a later write).
    let _ = program::apply_ideal_timing(&mut t);
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::{self, RouteMethod};
    use crate::schedule::{self, Hardware};
    use crate::topology::Network;
    use crate::traffic::Placement;
    use rand::{Rng, SeedableRng};

    /// One random case: the heuristic's schedule, the lower bound and the MILP's proof.
    fn case(seed: u64, messages: usize) -> (u64, u64, Proof) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
        let spec = ["mesh:3x2", "mesh:3x3", "torus:4x2", "mesh:4x1"][rng.random_range(0..4)];
        let network = Network::build(&spec.parse().unwrap()).unwrap();
        let tasks = rng.random_range(3..=network.nodes());
        let traffic = random_program(seed, tasks, messages);
        let placement = Placement {
            node_of: (0..tasks)
                .map(|t| (t * 5 + seed as usize) % network.nodes())
                .collect(),
        };
        let routing = route::route(&traffic, &network, &placement, RouteMethod::Dor, 1).unwrap();
        let hw = Hardware {
            ports: rng.random_range(1..=2),
            hop_latency: rng.random_range(0..=1),
            buffer: [None, Some(0), Some(1), Some(2)][rng.random_range(0..4)],
            ..Hardware::default()
        };
        let problem = Problem::new(&traffic, &network, &placement, &routing, hw).unwrap();
        let heuristic =
            schedule::schedule(&traffic, &network, &placement, &routing, Method::Exact, hw)
                .unwrap();
        let lower = schedule::lower_bound(&problem).0;
        if std::env::var("MILP_DEBUG").is_ok() {
            eprintln!(
                "seed {seed}: {spec} {hw:?} lower {:?} heuristic {}\n{:#?}",
                schedule::lower_bound(&problem),
                heuristic.makespan,
                traffic.tasks
            );
        }
        let options = Options {
            time_limit: 5.0,
            ..Options::default()
        };
        let proof = solve(&problem, &heuristic, &options)
            .unwrap()
            .unwrap_or_else(|| panic!("seed {seed}: the MILP declined"));
        if let Some(plan) = &proof.plan {
            verify::verify(&problem, plan).unwrap();
            assert_eq!(plan.makespan, proof.best);
        }
        (heuristic.makespan, lower, proof)
    }

    /// `--schedule milp` records the bound it proved beside the plan it keeps (the MILP's when
    /// shorter, verified), and the report's words follow: `optimal` at the bound, else the gap
    /// rounded up.
    #[test]
    fn the_milp_method_records_its_bound() {
        let traffic = random_program(19, 5, 12);
        let network = Network::build(&"mesh:3x2".parse().unwrap()).unwrap();
        let placement = Placement {
            node_of: (0..5).collect(),
        };
        let routing = route::route(&traffic, &network, &placement, RouteMethod::Dor, 1).unwrap();
        let hw = Hardware {
            buffer: Some(0),
            ..Hardware::default()
        };
        let s = schedule::schedule_with_effort(
            &traffic,
            &network,
            &placement,
            &routing,
            Method::Milp,
            hw,
            schedule::lp::LpSolverKind::default(),
            &schedule::improve::Improve::default(),
            &crate::progress::Progress::none(),
        )
        .unwrap();
        let bound = s.optimum_bound.expect("the MILP ran");
        assert!(bound <= s.makespan);
        let o = schedule::Optimality::of(&s, 0).unwrap();
        assert_eq!(o.optimal(), bound == s.makespan);
        let words = |bound, makespan| schedule::Optimality { bound, makespan }.describe();
        assert_eq!(words(40, 40), "optimal");
        assert_eq!(words(40, 42), "within 5.0% of optimal");
        assert_eq!(words(30, 31), "within 3.4% of optimal");
    }

    /// Over random small programs (multicast, 1–2 ports, latency 0–1, every buffer size) the
    /// MILP never does worse than the heuristic, its bound never falls below the analytic lower
    /// bound nor rises above a plan achieved, and the heuristic's mean gap to the bound is
    /// within 5%.
    #[test]
    fn the_heuristic_is_near_the_proven_optimum_on_random_programs() {
        let mut gaps = Vec::new();
        let mut proven = 0;
        for seed in 0..12u64 {
            let (heuristic, lower, proof) = case(seed, 6 + (seed as usize * 7) % 14);
            assert!(proof.best <= heuristic, "seed {seed}: {proof:?}");
            assert!(
                proof.bound >= lower,
                "seed {seed}: bound {} below {lower}, heuristic {heuristic}, best {}",
                proof.bound,
                proof.best
            );
            assert!(proof.bound <= proof.best, "seed {seed}: {proof:?}");
            proven += proof.proven as usize;
            gaps.push(proof.gap_of(heuristic));
        }
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        assert!(
            proven >= gaps.len() / 2,
            "{proven} of {} proven",
            gaps.len()
        );
        assert!(mean <= 0.05, "mean gap {mean:.3}: {gaps:?}");
    }
}
