//! The LP scheduler, as Minsky §4.2.4 formulates it (after Shukla & Agrawal [SA91]):
//!
//! 1. **Intervals**: the distinct release and deadline times cut time into intervals; a message is
//!    active in the intervals inside its window.
//! 2. **Maximal subsets**: messages that share a link (or port) in an interval, directly or
//!    transitively, form one subset; each subset is solved on its own (this is also how the
//!    problem decomposes at scale).
//! 3. **Message interval allocation**: `x[m][k]` words of message m in interval k, with
//!    `Σ_k x[m][k] = size(m)` and, for every link and interval, `Σ_m x[m][k] ≤ δ_k`. The thesis's
//!    objective, excess capacity summed over links, is constant once every message is fully
//!    allocated, so we minimize the time-weighted allocation instead (words sent early leave room
//!    later); words that fit in no interval go to a costly "late" variable, which is what becomes a
//!    relaxed deadline.
//! 4. **Interval scheduling**: in each interval, the active messages are grouped into
//!    *link-feasible sets* (no shared link; a port shared only up to its count) and the LP gives
//!    each set a time `y_j` with `Σ_{j ∋ p} y_j = x[p][k]`, minimizing `Σ y_j`. Sets are sent one
//!    after another, every message of a set holding all its links at once. With a switch latency,
//!    each fragment's slot is padded with the drain time (route length × latency) so its tail
//!    leaves the network before the next set starts (§4.2.4 "Problems with Linear Programming
//!    Approach").
//!
//! The LP's reals are rounded to cycles; where rounding or spill-over makes two fragments meet,
//! the later one moves to the next cycles its whole route is free ("repaired", counted in
//! [`LpStats`]). The verifier then checks everything.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use super::feedback;
use super::occupancy::Occupancy;
use super::program;
use super::{Hold, LpStats, Method, Problem, Resource, Schedule, ScheduleError};
use crate::traffic::MsgId;
pub use ttdl_ir::config::LpSolverKind;

/// The most message-interval variables one level of the LP may have with `microlp` (see
/// [`solve_phase`] and [`LpSolver::variable_limit`]).
pub const LP_VARIABLE_LIMIT: usize = 50_000;

/// `lhs (≤ | = | ≥) rhs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Le,
    Eq,
    Ge,
}

/// A linear program: minimize `objective · x` subject to the rows and `0 ≤ x`.
#[derive(Clone, Debug, Default)]
pub struct LinearProgram {
    pub objective: Vec<f64>,
    pub rows: Vec<Row>,
}

/// `Σ coefficient·variable (cmp) rhs`.
pub type Row = (Vec<(usize, f64)>, Cmp, f64);

impl LinearProgram {
    pub fn var(&mut self, cost: f64) -> usize {
        self.objective.push(cost);
        self.objective.len() - 1
    }
    pub fn row(&mut self, terms: Vec<(usize, f64)>, cmp: Cmp, rhs: f64) {
        self.rows.push((terms, cmp, rhs));
    }
}

/// A linear-programming solver: `microlp` by default, HiGHS with the `highs` feature.
pub trait LpSolver {
    /// The values of the variables at an optimum.
    fn solve(&self, lp: &LinearProgram) -> Result<Vec<f64>, String>;
    /// The most message-interval variables one level may have: past it the LP is refused rather
    /// than left to run for hours.
    fn variable_limit(&self) -> usize {
        LP_VARIABLE_LIMIT
    }
}

/// The solver a [`LpSolverKind`] names, or why it is not in this build.
pub fn solver(kind: LpSolverKind) -> Result<&'static dyn LpSolver, String> {
    match kind {
        LpSolverKind::MicroLp => Ok(&MicroLp),
        #[cfg(feature = "highs")]
        LpSolverKind::Highs => Ok(&Highs),
        #[cfg(not(feature = "highs"))]
        LpSolverKind::Highs => Err("the HiGHS LP solver is not in this build of ttdl: \
             rebuild with `--features highs` (needs cmake), or use --lp-solver microlp"
            .into()),
    }
}

/// The pure-Rust simplex of the `microlp` crate.
pub struct MicroLp;

impl LpSolver for MicroLp {
    fn solve(&self, lp: &LinearProgram) -> Result<Vec<f64>, String> {
        use microlp::{ComparisonOp, OptimizationDirection, Problem};
        let mut p = Problem::new(OptimizationDirection::Minimize);
        let vars: Vec<_> = lp
            .objective
            .iter()
            .map(|&c| p.add_var(c, (0.0, f64::INFINITY)))
            .collect();
        for (terms, cmp, rhs) in &lp.rows {
            let expr: Vec<_> = terms.iter().map(|&(v, c)| (vars[v], c)).collect();
            let op = match cmp {
                Cmp::Le => ComparisonOp::Le,
                Cmp::Eq => ComparisonOp::Eq,
                Cmp::Ge => ComparisonOp::Ge,
            };
            p.add_constraint(expr.as_slice(), op, *rhs);
        }
        let outcome = p.solve().map_err(|e| e.to_string())?;
        let sol = outcome
            .solution()
            .ok_or_else(|| "the solver stopped without a solution".to_string())?;
        Ok(vars.iter().map(|&v| sol.var_value(v)).collect())
    }
}

/// HiGHS (dual simplex and interior point, built from source by the `highs` crate).
#[cfg(feature = "highs")]
pub struct Highs;

#[cfg(feature = "highs")]
impl LpSolver for Highs {
    fn solve(&self, lp: &LinearProgram) -> Result<Vec<f64>, String> {
        use highs::{HighsModelStatus, RowProblem, Sense};
        let mut p = RowProblem::default();
        let cols: Vec<_> = lp
            .objective
            .iter()
            .map(|&c| p.add_column(c, 0.0..))
            .collect();
        for (terms, cmp, rhs) in &lp.rows {
            // HiGHS refuses a row naming a column twice (microlp too): sum the coefficients.
            let mut merged: BTreeMap<usize, f64> = BTreeMap::new();
            for &(v, c) in terms {
                *merged.entry(v).or_default() += c;
            }
            let row: Vec<_> = merged.into_iter().map(|(v, c)| (cols[v], c)).collect();
            let rhs = *rhs;
            match cmp {
                Cmp::Le => p.add_row(..=rhs, row),
                Cmp::Eq => p.add_row(rhs..=rhs, row),
                Cmp::Ge => p.add_row(rhs.., row),
            }
        }
        let mut model = p.optimise(Sense::Minimise);
        model.make_quiet();
        let solved = model.try_solve().map_err(|e| format!("HiGHS: {e:?}"))?;
        match solved.status() {
            HighsModelStatus::Optimal => Ok(solved.get_solution().columns().to_vec()),
            s => Err(format!("HiGHS stopped without an optimum: {s:?}")),
        }
    }

    /// A writer 1,000 messages ahead of its reader (502,555 variables) is scheduled in 6.8 s
    /// and 0.8 GB with HiGHS: the limit is memory, not the solver's time.
    fn variable_limit(&self) -> usize {
        HIGHS_VARIABLE_LIMIT
    }
}

/// The most message-interval variables one level of the LP may have with HiGHS (about 0.8 GB).
pub const HIGHS_VARIABLE_LIMIT: usize = 510_000;

/// Schedules with the LP; see the module documentation.
///
/// Fixed windows (a tasks file) are solved a phase at once, as in the thesis. When task programs
/// decide the windows, a message's release depends on when the messages its sender waits for
/// arrive, so the windows are only exact once those are placed: the LP is then solved level by
/// level of the message dependency graph (level 0: senders wait for nothing; level k: senders
/// wait for messages of levels below k), each level retimed from the arrivals already scheduled
/// (§4.2.4 "Propagation of results": a late message moves its readers' later sends).
pub fn schedule(problem: &Problem, solver: &dyn LpSolver) -> Result<Schedule, ScheduleError> {
    let traffic = problem.traffic;
    let n = traffic.messages.len();
    let mut stats = LpStats::default();
    if !program::is_driven(traffic) {
        let release: Vec<u64> = traffic.messages.iter().map(|m| m.release).collect();
        let deadline: Vec<u64> = traffic.messages.iter().map(|m| m.deadline).collect();
        let (holds, used_release) =
            solve_windows(problem, solver, &release, &deadline, &mut stats)?;
        let finish = super::exact::static_finish(problem, &holds, &used_release);
        let mut s = feedback::assemble(problem, Method::Lp, holds, used_release, finish);
        s.lp = Some(stats);
        return Ok(s);
    }
    // One run of the programs, stepped level by level: each round sends exactly the messages
    // whose senders waited only for messages already placed (the next level), and their
    // placed arrivals let the next round go on. No re-run of the whole program per level.
    let node_of = &problem.placement.node_of;
    let mut occ = Occupancy::new(problem.hardware);
    let mut holds: Vec<Hold> = Vec::new();
    let mut arrival_at: BTreeMap<(MsgId, usize), u64> = BTreeMap::new();
    let mut ex = program::Executor::new(traffic);
    loop {
        let mut sent = ex.run();
        if sent.is_empty() {
            break;
        }
        sent.sort_unstable();
        let mut win: Vec<(MsgId, u64, u64)> = Vec::with_capacity(sent.len());
        for &(m, at) in &sent {
            let Some(msg) = traffic.messages.get(m) else {
                return Err(ScheduleError::Input(format!(
                    "a task sends message {m}, which does not exist"
                )));
            };
            let r = at.max(msg.release);
            let d = (msg.deadline + (r - msg.release)).max(r + msg.size);
            win.push((m, r, d));
        }
        let placed = solve_phase(problem, solver, &win, &mut occ, &mut stats)?;
        for h in &placed {
            if let Resource::Eject(node) = h.resource() {
                let a = arrival_at.entry((h.msg(), node as usize)).or_default();
                *a = (*a).max(h.end());
            }
        }
        holds.extend(placed);
        // Placed messages arrive when placed; the rest (local, empty) after their words.
        for &(m, at) in &sent {
            let msg = &traffic.messages[m];
            for &d in &msg.dst {
                let a = arrival_at
                    .get(&(m, node_of[d]))
                    .copied()
                    .unwrap_or(at + msg.size);
                ex.deliver(m, d, a);
            }
        }
    }
    let timing = program::run_with(traffic, |m, d, at| {
        arrival_at.get(&(m, node_of[d])).copied().unwrap_or(at)
    })?;
    let released = (0..n)
        .map(|m| timing.release[m].max(traffic.messages[m].release))
        .collect();
    let mut s = feedback::assemble(problem, Method::Lp, holds, released, timing.task_finish);
    s.lp = Some(stats);
    Ok(s)
}

/// One pass over fixed windows: phases in order, each shifted past the previous one when the
/// programs do not already order them.
fn solve_windows(
    problem: &Problem,
    solver: &dyn LpSolver,
    release: &[u64],
    deadline: &[u64],
    stats: &mut LpStats,
) -> Result<(Vec<Hold>, Vec<u64>), ScheduleError> {
    let traffic = problem.traffic;
    let n = traffic.messages.len();
    let mut occ = Occupancy::new(problem.hardware);
    let mut holds = Vec::new();
    let mut used_release = release.to_vec();
    let mut shift = 0u64;
    let last_phase = traffic.messages.iter().map(|m| m.phase).max().unwrap_or(0);
    for p in 0..=last_phase {
        let msgs: Vec<MsgId> = (0..n).filter(|&m| traffic.messages[m].phase == p).collect();
        if msgs.is_empty() {
            continue;
        }
        let win: Vec<(MsgId, u64, u64)> = msgs
            .iter()
            .map(|&m| {
                let r = release[m] + shift;
                let d = (deadline[m] + shift).max(r + traffic.messages[m].size);
                used_release[m] = r;
                (m, r, d)
            })
            .collect();
        let placed = solve_phase(problem, solver, &win, &mut occ, stats)?;
        let end = placed.iter().map(|h| h.end()).max().unwrap_or(0);
        holds.extend(placed);
        let next = (0..n)
            .filter(|&m| traffic.messages[m].phase > p)
            .map(|m| release[m])
            .min();
        shift = next.map_or(shift, |f| end.saturating_sub(f));
    }
    Ok((holds, used_release))
}

struct UnionFind(Vec<usize>);
impl UnionFind {
    fn find(&mut self, a: usize) -> usize {
        let mut r = a;
        while self.0[r] != r {
            r = self.0[r];
        }
        let mut x = a;
        while self.0[x] != r {
            let next = self.0[x];
            self.0[x] = r;
            x = next;
        }
        r
    }
    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.0[ra.max(rb)] = ra.min(rb);
        }
    }
}

/// Windows `(msg, release, deadline)` of one phase → holds.
fn solve_phase(
    problem: &Problem,
    solver: &dyn LpSolver,
    win: &[(MsgId, u64, u64)],
    occ: &mut Occupancy,
    stats: &mut LpStats,
) -> Result<Vec<Hold>, ScheduleError> {
    let traffic = problem.traffic;
    let bounds: Vec<u64> = win
        .iter()
        .flat_map(|&(_, r, d)| [r, d])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let intervals = bounds.len().saturating_sub(1);
    stats.intervals += intervals;
    // Active intervals of each message (by index into `win`).
    let active: Vec<std::ops::Range<usize>> = win
        .iter()
        .map(|&(_, r, d)| {
            let a = bounds.partition_point(|&b| b < r);
            let b = bounds.partition_point(|&b| b < d);
            a..b
        })
        .collect();
    let resources = |i: usize| problem.steps[win[i].0].iter().map(|s| s.resource());
    // The formulation has a variable per message per interval of its window. A message whose
    // window spans the whole run (a writer far ahead of its reader) makes that quadratic in the
    // messages, and the solver's time grows faster still: past the limit the LP is refused
    // rather than left to run for hours (`best` then keeps the exact schedule).
    let spans: usize = active.iter().map(|a| a.len()).sum();
    let limit = solver.variable_limit();
    if spans > limit {
        return Err(ScheduleError::TooLarge(format!(
            "the LP scheduler cannot take this program: {} messages active over {intervals} \
             intervals would need {spans} interval variables, more than the {limit} this \
             solver takes in reasonable time (a task far ahead of its readers spans the whole \
             run); use --schedule exact or best",
            win.len()
        )));
    }

    // Maximal subsets: union messages that share a resource in an interval.
    let mut uf = UnionFind((0..win.len()).collect());
    let mut first_user: BTreeMap<(Resource, usize), usize> = BTreeMap::new();
    for (i, span) in active.iter().enumerate() {
        for k in span.clone() {
            for r in resources(i) {
                match first_user.get(&(r, k)) {
                    Some(&j) => uf.union(i, j),
                    None => {
                        first_user.insert((r, k), i);
                    }
                }
            }
        }
    }
    let mut subsets: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..win.len() {
        let root = uf.find(i);
        subsets.entry(root).or_default().push(i);
    }
    stats.subsets += subsets.len();

    // Message interval allocation, per subset: x[i] = words per active interval, plus late words.
    let mut alloc: Vec<Vec<u64>> = vec![Vec::new(); win.len()];
    let mut late: Vec<u64> = vec![0; win.len()];
    for members in subsets.values() {
        let mut lp = LinearProgram::default();
        let mut xv: Vec<Vec<usize>> = Vec::with_capacity(members.len());
        let mut late_v = Vec::with_capacity(members.len());
        let big = (intervals as f64 + 2.0) * 100.0;
        let mut by_rk: BTreeMap<(Resource, usize), Vec<(usize, f64)>> = BTreeMap::new();
        for &i in members {
            let vars: Vec<usize> = active[i].clone().map(|k| lp.var((k + 1) as f64)).collect();
            let lv = lp.var(big);
            let mut row: Vec<(usize, f64)> = vars.iter().map(|&v| (v, 1.0)).collect();
            row.push((lv, 1.0));
            lp.row(row, Cmp::Eq, traffic.messages[win[i].0].size as f64);
            for (v, k) in vars.iter().zip(active[i].clone()) {
                for r in resources(i) {
                    by_rk.entry((r, k)).or_default().push((*v, 1.0));
                }
            }
            xv.push(vars);
            late_v.push(lv);
        }
        for ((r, k), terms) in by_rk {
            let cap = problem.hardware.capacity(r) as f64;
            // A message's words in one interval cannot exceed the interval either.
            lp.row(terms, Cmp::Le, cap * (bounds[k + 1] - bounds[k]) as f64);
        }
        for (idx, &i) in members.iter().enumerate() {
            for (&v, k) in xv[idx].iter().zip(active[i].clone()) {
                lp.row(vec![(v, 1.0)], Cmp::Le, (bounds[k + 1] - bounds[k]) as f64);
            }
        }
        let values = run(solver, &lp, stats)?;
        for (idx, &i) in members.iter().enumerate() {
            let mut reals: Vec<f64> = xv[idx].iter().map(|&v| values[v]).collect();
            reals.push(values[late_v[idx]]);
            let ints = round_keeping_sum(&reals, traffic.messages[win[i].0].size);
            late[i] = ints.last().copied().unwrap_or(0);
            stats.late_words += late[i];
            alloc[i] = ints[..ints.len() - 1].to_vec();
        }
    }

    // Interval scheduling: per subset and interval, link-feasible sets and their times.
    let mut holds = Vec::new();
    let mut remaining: Vec<u64> = (0..win.len())
        .map(|i| traffic.messages[win[i].0].size)
        .collect();
    // Where each message's last fragment left its source: fragments of one message go one
    // after another, so every resource sees them in the same order.
    let mut last_end: Vec<u64> = win.iter().map(|&(_, r, _)| r).collect();
    for members in subsets.values() {
        for k in 0..intervals {
            let here: Vec<(usize, u64)> = members
                .iter()
                .filter(|&&i| active[i].contains(&k))
                .map(|&i| (i, alloc[i][k - active[i].start]))
                .filter(|&(_, x)| x > 0)
                .collect();
            if here.is_empty() {
                continue;
            }
            let sets = link_feasible_sets(problem, win, &here);
            let mut lp = LinearProgram::default();
            let yv: Vec<usize> = sets.iter().map(|_| lp.var(1.0)).collect();
            for &(i, x) in &here {
                let terms: Vec<(usize, f64)> = sets
                    .iter()
                    .zip(&yv)
                    .filter(|(s, _)| s.contains(&i))
                    .map(|(_, &v)| (v, 1.0))
                    .collect();
                lp.row(terms, Cmp::Eq, x as f64);
            }
            let y = run(solver, &lp, stats)?;
            let mut want: BTreeMap<usize, u64> = here.iter().copied().collect();
            let mut cursor = bounds[k];
            let mut order: Vec<usize> = (0..sets.len()).filter(|&j| y[j] > 1e-6).collect();
            order.sort_by(|&a, &b| y[b].total_cmp(&y[a]).then(a.cmp(&b)));
            for j in order {
                let slot = y[j].round().max(1.0) as u64;
                let mut drain = 0;
                for &i in &sets[j] {
                    let w = slot.min(want[&i]).min(remaining[i]);
                    if w == 0 {
                        continue;
                    }
                    let (hs, d, repaired) =
                        put(problem, occ, win[i].0, cursor.max(last_end[i]), w)?;
                    drain = drain.max(d);
                    stats.repaired += repaired as usize;
                    last_end[i] = last_end[i].max(hs.first().map_or(0, |h| h.end()));
                    holds.extend(hs);
                    *want.entry(i).or_default() -= w;
                    remaining[i] -= w;
                }
                cursor += slot + drain;
            }
            // Words the rounding left over in this interval.
            for (&i, &w) in &want {
                let w = w.min(remaining[i]);
                if w > 0 {
                    let (hs, d, repaired) =
                        put(problem, occ, win[i].0, cursor.max(last_end[i]), w)?;
                    stats.repaired += repaired as usize;
                    cursor += w + d;
                    last_end[i] = last_end[i].max(hs.first().map_or(0, |h| h.end()));
                    holds.extend(hs);
                    remaining[i] -= w;
                }
            }
        }
    }
    // Late words (and anything still unplaced): after the window, at the first free cycles.
    for i in 0..win.len() {
        let w = remaining[i];
        if w > 0 {
            let (hs, _, _) = put(problem, occ, win[i].0, last_end[i], w)?;
            holds.extend(hs);
            remaining[i] = 0;
        }
    }
    Ok(holds)
}

fn run(
    solver: &dyn LpSolver,
    lp: &LinearProgram,
    stats: &mut LpStats,
) -> Result<Vec<f64>, ScheduleError> {
    stats.programs += 1;
    stats.variables += lp.objective.len();
    stats.constraints += lp.rows.len();
    stats.largest_variables = stats.largest_variables.max(lp.objective.len());
    let t = Instant::now();
    let v = solver.solve(lp).map_err(ScheduleError::Lp)?;
    stats.solve_ms += t.elapsed().as_secs_f64() * 1e3;
    Ok(v)
}

/// Rounds non-negative reals to integers summing to `total` (largest remainder).
fn round_keeping_sum(reals: &[f64], total: u64) -> Vec<u64> {
    let mut ints: Vec<u64> = reals.iter().map(|&r| r.max(0.0).floor() as u64).collect();
    let mut sum: u64 = ints.iter().sum();
    while sum > total {
        // Cannot happen with a feasible LP, but never trust it.
        if let Some(i) = (0..ints.len()).rev().find(|&i| ints[i] > 0) {
            ints[i] -= 1;
            sum -= 1;
        } else {
            break;
        }
    }
    let mut order: Vec<usize> = (0..reals.len()).collect();
    order.sort_by(|&a, &b| {
        let fa = reals[a] - reals[a].floor();
        let fb = reals[b] - reals[b].floor();
        fb.total_cmp(&fa).then(a.cmp(&b))
    });
    let mut it = order.iter().cycle();
    while sum < total {
        if let Some(&i) = it.next() {
            ints[i] += 1;
            sum += 1;
        }
    }
    ints
}

/// Link-feasible sets covering the messages of one interval: for each message (most words
/// first), the greedy maximal set of messages it can share the interval with, plus singletons so
/// the allocation is always reachable.
fn link_feasible_sets(
    problem: &Problem,
    win: &[(MsgId, u64, u64)],
    here: &[(usize, u64)],
) -> Vec<Vec<usize>> {
    let mut order: Vec<(usize, u64)> = here.to_vec();
    order.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut sets: BTreeSet<Vec<usize>> = BTreeSet::new();
    for (a, _) in &order {
        let mut used: BTreeMap<Resource, u32> = BTreeMap::new();
        let mut set = Vec::new();
        let fits = |used: &BTreeMap<Resource, u32>, i: usize| {
            problem.steps[win[i].0].iter().all(|s| {
                used.get(&s.resource()).copied().unwrap_or(0)
                    < problem.hardware.capacity(s.resource())
            })
        };
        for &i in std::iter::once(a).chain(order.iter().map(|(i, _)| i)) {
            if set.contains(&i) || !fits(&used, i) {
                continue;
            }
            for s in &problem.steps[win[i].0] {
                *used.entry(s.resource()).or_default() += 1;
            }
            set.push(i);
        }
        set.sort_unstable();
        sets.insert(set);
        sets.insert(vec![*a]);
    }
    sets.into_iter().collect()
}

/// Places `w` words of message `m` as one fragment starting at `at` (each step `depth × latency`
/// later than the source), or at the first cycles after `at` where its whole route is free.
/// Returns the holds, the drain time, and whether it had to move.
fn put(
    problem: &Problem,
    occ: &mut Occupancy,
    m: MsgId,
    at: u64,
    w: u64,
) -> Result<(Vec<Hold>, u64, bool), ScheduleError> {
    let steps = &problem.steps[m];
    let h = problem.hardware.hop_latency;
    let mut depth = vec![0u64; steps.len()];
    for (j, s) in steps.iter().enumerate() {
        if let Some(p) = s.parent() {
            depth[j] = depth[p] + 1;
        }
    }
    let drain = depth.iter().copied().max().unwrap_or(0) * h;
    let mut s = at;
    let mut lanes = vec![0usize; steps.len()];
    loop {
        let mut moved = None;
        for (j, st) in steps.iter().enumerate() {
            let t = s + depth[j] * h;
            match occ.free_lane(st.resource(), t, w) {
                Some(l) => lanes[j] = l,
                None => {
                    let (e, _) = occ.earliest(st.resource(), t, w);
                    moved = Some(e - depth[j] * h);
                    break;
                }
            }
        }
        match moved {
            Some(next) => s = next.max(s + 1),
            None => break,
        }
    }
    let mut out = Vec::with_capacity(steps.len());
    for (j, st) in steps.iter().enumerate() {
        let t = s + depth[j] * h;
        occ.take(st.resource(), lanes[j], t, w, m);
        out.push(Hold::new(m, st.resource(), t, t + w)?);
    }
    Ok((out, drain, s != at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highs_is_refused_by_name_when_not_built_in() {
        assert!(solver(LpSolverKind::MicroLp).is_ok());
        let highs = solver(LpSolverKind::Highs);
        assert_eq!(highs.is_ok(), cfg!(feature = "highs"));
        if let Err(e) = highs {
            assert!(e.contains("--features highs"), "{e}");
        }
    }

    /// Σ cost·value.
    #[cfg(feature = "highs")]
    fn objective(lp: &LinearProgram, x: &[f64]) -> f64 {
        lp.objective.iter().zip(x).map(|(c, v)| c * v).sum()
    }

    /// Both solvers reach the same optimum, and HiGHS's point is feasible.
    #[cfg(feature = "highs")]
    fn same_optimum(lp: &LinearProgram) -> f64 {
        let a = MicroLp.solve(lp).unwrap();
        let b = Highs.solve(lp).unwrap();
        let (oa, ob) = (objective(lp, &a), objective(lp, &b));
        let tol = 1e-6 * oa.abs().max(1.0);
        assert!((oa - ob).abs() <= tol, "microlp {oa}, HiGHS {ob}");
        for (terms, cmp, rhs) in &lp.rows {
            let lhs: f64 = terms.iter().map(|&(v, c)| c * b[v]).sum();
            let ok = match cmp {
                Cmp::Le => lhs <= rhs + 1e-6,
                Cmp::Eq => (lhs - rhs).abs() <= 1e-6,
                Cmp::Ge => lhs >= rhs - 1e-6,
            };
            assert!(ok, "{lhs} {cmp:?} {rhs}");
        }
        assert!(b.iter().all(|&v| v >= -1e-9));
        ob
    }

    #[cfg(feature = "highs")]
    #[test]
    fn highs_and_microlp_agree_on_small_programs() {
        // min x + y, x + y ≥ 2, x ≤ 1.
        let mut lp = LinearProgram::default();
        let (x, y) = (lp.var(1.0), lp.var(1.0));
        lp.row(vec![(x, 1.0), (y, 1.0)], Cmp::Ge, 2.0);
        lp.row(vec![(x, 1.0)], Cmp::Le, 1.0);
        assert!((same_optimum(&lp) - 2.0).abs() < 1e-9);
        // max x + 2y + z as min of the negation: 3x + y ≤ 6, y + 2z ≤ 7 → -12.5.
        let mut lp = LinearProgram::default();
        let (x, y, z) = (lp.var(-1.0), lp.var(-2.0), lp.var(-1.0));
        lp.row(vec![(x, 3.0), (y, 1.0)], Cmp::Le, 6.0);
        lp.row(vec![(y, 1.0), (z, 2.0)], Cmp::Le, 7.0);
        assert!((same_optimum(&lp) + 12.5).abs() < 1e-9);
        // An allocation: 5 words over two intervals of 3, the later one dearer, plus a late
        // variable.
        let mut lp = LinearProgram::default();
        let (a, b, late) = (lp.var(1.0), lp.var(2.0), lp.var(100.0));
        lp.row(vec![(a, 1.0), (b, 1.0), (late, 1.0)], Cmp::Eq, 5.0);
        lp.row(vec![(a, 1.0)], Cmp::Le, 3.0);
        lp.row(vec![(b, 1.0)], Cmp::Le, 3.0);
        assert!((same_optimum(&lp) - 7.0).abs() < 1e-9);
        // Infeasible: both refuse.
        let mut lp = LinearProgram::default();
        let x = lp.var(1.0);
        lp.row(vec![(x, 1.0)], Cmp::Ge, 2.0);
        lp.row(vec![(x, 1.0)], Cmp::Le, 1.0);
        assert!(MicroLp.solve(&lp).is_err());
        assert!(Highs.solve(&lp).is_err());
    }

    /// Every LP the scheduler solves for Jacobi 2D on a 4×4 mesh (Minsky §5.1: each task writes
    /// 8 words to its four torus neighbours), solved by both.
    #[cfg(feature = "highs")]
    #[test]
    fn highs_and_microlp_agree_on_every_lp_of_jacobi_4x4() {
        use crate::route::{self, RouteMethod};
        use crate::schedule::{program, Hardware};
        use crate::topology::Network;
        use crate::traffic::{Message, Op, Phase, Placement, Task, Traffic};
        use std::cell::RefCell;

        struct Recording(RefCell<Vec<LinearProgram>>);
        impl LpSolver for Recording {
            fn solve(&self, lp: &LinearProgram) -> Result<Vec<f64>, String> {
                self.0.borrow_mut().push(lp.clone());
                MicroLp.solve(lp)
            }
        }

        let n = 4;
        let nb = |t: usize, dx: isize, dy: isize| {
            let (x, y) = ((t % n) as isize, (t / n) as isize);
            let (x, y) = (
                (x + dx).rem_euclid(4) as usize,
                (y + dy).rem_euclid(4) as usize,
            );
            y * n + x
        };
        let dirs = [(0, 1), (1, 0), (-1, 0), (0, -1)];
        let mut traffic = Traffic::default();
        for t in 0..n * n {
            traffic.tasks.push(Task {
                id: t,
                name: format!("j{t}"),
                ..Task::default()
            });
        }
        for (s, &(dx, dy)) in dirs.iter().enumerate() {
            for t in 0..n * n {
                traffic.messages.push(Message {
                    id: s * n * n + t,
                    src: t,
                    dst: vec![nb(t, dx, dy)].into(),
                    size: 8,
                    ..Message::default()
                });
                traffic.tasks[t].ops.push(Op::Send(s * n * n + t));
                traffic.tasks[t]
                    .ops
                    .push(Op::Recv(s * n * n + nb(t, -dx, -dy)));
            }
        }
        traffic.phases.push(Phase {
            id: 0,
            name: "0".into(),
            start: 0,
        });
        program::apply_ideal_timing(&mut traffic).unwrap();
        let network = Network::build(&"mesh:4x4".parse().unwrap()).unwrap();
        let placement = Placement {
            node_of: (0..n * n).collect(),
        };
        let routing = route::route(&traffic, &network, &placement, RouteMethod::Dor, 1).unwrap();
        let problem = Problem::new(
            &traffic,
            &network,
            &placement,
            &routing,
            Hardware::default(),
        )
        .unwrap();
        let rec = Recording(RefCell::new(Vec::new()));
        let by_microlp = schedule(&problem, &rec).unwrap();
        let lps = rec.0.into_inner();
        assert!(lps.len() > 10, "{} LPs", lps.len());
        for lp in &lps {
            same_optimum(lp);
        }
        // The whole schedule with HiGHS is valid too.
        let by_highs = schedule(&problem, &Highs).unwrap();
        crate::schedule::verify::verify(&problem, &by_highs).unwrap();
        crate::schedule::verify::verify(&problem, &by_microlp).unwrap();
    }
}
