//! Slot tables found by satisfiability, under the network's mirror symmetries.
//!
//! The repair search of [`super::modulo`] stops a few cycles above the period bound on a mesh,
//! whose middle links the bound fills to the last cycle (POSEIDON.md: 140 where the bound of
//! the 8×8 all-to-all is 128). Here the table of one period `P` is a Boolean formula, solved by
//! CaDiCaL: a variable per message and start offset, at least one offset per message, and at
//! most `cap` holders in each cell (a port or link in one cycle modulo `P`). Every message keeps
//! the router's path, held whole from its start (no word waits in a switch).
//!
//! The formula is cut by the symmetry of the problem. A mirror of a grid (`x → n − 1 − x` in
//! one dimension) that maps the network, the messages and their routes onto themselves is
//! asked of the table too: a message's image under the mirror starts `P/2` after it (for an
//! even `P`; at the same time for an odd one). Dimension-order routes map onto dimension-order
//! routes under every mirror, so on a 2-D mesh the four mirrors and half-turns leave a quarter
//! of the variables, and CaDiCaL finds the all-to-all of an 8×8 mesh within 5 % of its bound
//! where the unsymmetric formula takes minutes. A table so found is only one of the tables of
//! that period; when the symmetric formula has none, the search reports none (not that the
//! period is impossible).
//!
//! CaDiCaL runs in its configuration for satisfiable formulas with every literal negated, so
//! that its first guess for a variable is false: it tries to leave a message out of an offset
//! before putting it in. On the 8×8 mesh's all-to-all at 134 cycles that takes 24 s where the
//! default configuration and phase take 166–243 s of CPU (POSEIDON.md).
//!
//! The solver's effort is counted in learned clauses (one per conflict), so the answer is the
//! same on every machine.

use std::collections::BTreeMap;
use std::time::Instant;

use super::ScheduleError;
use crate::progress::Progress;
use crate::topology::{Network, NodeId};

/// One message of an iteration: its ends, its length and its route (nodes, in order).
pub(super) struct Message {
    pub src: NodeId,
    pub dst: NodeId,
    pub words: u64,
    pub path: Vec<NodeId>,
}

/// The problem of one slot table: resources numbered as the modulo search numbers them
/// (inject `n`, eject `nodes + n`, link `2·nodes + id`).
pub(super) struct Input<'a> {
    pub net: &'a Network,
    pub latency: u64,
    /// Lanes per resource.
    pub cap: &'a [u32],
    pub messages: Vec<Message>,
}

/// The symmetry group found: per element its maps of resources and messages, and whether it
/// is an odd product of mirrors (shifted by half a period).
struct Group {
    resource: Vec<Vec<usize>>,
    message: Vec<Vec<usize>>,
    odd: Vec<bool>,
}

impl Group {
    fn order(&self) -> usize {
        self.odd.len()
    }

    fn shift(&self, e: usize, period: u64) -> u64 {
        if self.odd[e] && period.is_multiple_of(2) {
            period / 2
        } else {
            0
        }
    }
}

/// The resources of a message along its route, in hop order.
fn resources(net: &Network, m: &Message) -> Option<Vec<usize>> {
    let nodes = net.nodes();
    let mut rs = vec![m.src];
    for w in m.path.windows(2) {
        rs.push(2 * nodes + net.link_between(w[0], w[1])?);
    }
    rs.push(nodes + m.dst);
    Some(rs)
}

/// A mirror: its maps of resources and of messages.
type Mirror = (Vec<usize>, Vec<usize>);

/// The grid mirrors that map the network, and the messages with their routes, onto
/// themselves.
fn mirrors(input: &Input) -> Vec<Mirror> {
    let net = input.net;
    let nodes = net.nodes();
    let mut generators: Vec<Mirror> = Vec::new();
    if net.spec.kind.grid_wrap().is_some() {
        let key = |m: &Message| (m.src, m.dst, m.words, m.path.clone());
        let mut by_key: BTreeMap<(NodeId, NodeId, u64, Vec<NodeId>), Vec<usize>> = BTreeMap::new();
        for (j, m) in input.messages.iter().enumerate() {
            by_key.entry(key(m)).or_default().push(j);
        }
        for (d, &side) in net.spec.dims.iter().enumerate() {
            if side < 2 {
                continue;
            }
            let node: Option<Vec<NodeId>> = (0..nodes)
                .map(|n| {
                    let mut c = net.coords[n].clone();
                    c[d] = side as i64 - 1 - c[d];
                    net.node_at(&c)
                })
                .collect();
            let Some(node) = node else { continue };
            // Links onto links.
            let links: Option<Vec<usize>> = net
                .links
                .iter()
                .map(|l| net.link_between(node[l.from], node[l.to]))
                .collect();
            let Some(links) = links else { continue };
            let mut resource: Vec<usize> = (0..2 * nodes)
                .map(|r| (r / nodes) * nodes + node[r % nodes])
                .collect();
            resource.extend(links.iter().map(|&l| 2 * nodes + l));
            // Messages onto messages with the same length and the mirrored route; several
            // alike pair in order.
            let mut message = vec![usize::MAX; input.messages.len()];
            let mut ok = true;
            for (k, js) in &by_key {
                let image = (
                    node[k.0],
                    node[k.1],
                    k.2,
                    k.3.iter().map(|&n| node[n]).collect(),
                );
                match by_key.get(&image) {
                    Some(is) if is.len() == js.len() => {
                        for (&j, &i) in js.iter().zip(is) {
                            message[j] = i;
                        }
                    }
                    _ => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok {
                generators.push((resource, message));
            }
        }
    }
    generators
}

/// The group of every product of `generators`.
fn group_of(input: &Input, generators: &[Mirror]) -> Group {
    let resources = 2 * input.net.nodes() + input.net.links.len();
    let mut g = Group {
        resource: vec![(0..resources).collect()],
        message: vec![(0..input.messages.len()).collect()],
        odd: vec![false],
    };
    for (res, msg) in generators {
        for e in 0..g.order() {
            let r = g.resource[e].iter().map(|&x| res[x]).collect();
            let m = g.message[e].iter().map(|&x| msg[x]).collect();
            g.resource.push(r);
            g.message.push(m);
            g.odd.push(!g.odd[e]);
        }
    }
    g
}

/// Clauses for "at most `k` of `lits`" (a literal listed twice counts twice): pairs for a few
/// literals, Chen's product encoding for one lane (`2√n` new variables), Sinz's sequential
/// counter for more.
fn at_most(solver: &mut Formula, lits: &[i32], k: usize, next: &mut i32) {
    let n = lits.len();
    if n <= k {
        return;
    }
    if k == 0 {
        for &x in lits {
            solver.add([-x]);
        }
        return;
    }
    if k == 1 {
        at_most_one(solver, lits, next);
        return;
    }
    // s[i][j]: at least j + 1 of the first i + 1 literals are true.
    let s: Vec<Vec<i32>> = (0..n - 1)
        .map(|_| {
            (0..k)
                .map(|_| {
                    *next += 1;
                    *next
                })
                .collect()
        })
        .collect();
    solver.add([-lits[0], s[0][0]]);
    for &x in &s[0][1..] {
        solver.add([-x]);
    }
    for i in 1..n - 1 {
        let x = lits[i];
        solver.add([-x, s[i][0]]);
        solver.add([-s[i - 1][0], s[i][0]]);
        for j in 1..k {
            solver.add([-x, -s[i - 1][j - 1], s[i][j]]);
            solver.add([-s[i - 1][j], s[i][j]]);
        }
        solver.add([-x, -s[i - 1][k - 1]]);
    }
    solver.add([-lits[n - 1], -s[n - 2][k - 1]]);
}

/// At most one of `lits`: pairwise up to six, else the literals on a grid of `rows × cols`,
/// each implying its row and its column, and at most one row and one column.
fn at_most_one(solver: &mut Formula, lits: &[i32], next: &mut i32) {
    let n = lits.len();
    if n <= 6 {
        for a in 0..n {
            for b in a + 1..n {
                solver.add([-lits[a], -lits[b]]);
            }
        }
        return;
    }
    let cols = (n as f64).sqrt().ceil() as usize;
    let rows = n.div_ceil(cols);
    let mut fresh = |count: usize| -> Vec<i32> {
        (0..count)
            .map(|_| {
                *next += 1;
                *next
            })
            .collect()
    };
    let (r, c) = (fresh(rows), fresh(cols));
    for (i, &x) in lits.iter().enumerate() {
        solver.add([-x, r[i / cols]]);
        solver.add([-x, c[i % cols]]);
    }
    at_most_one(solver, &r, next);
    at_most_one(solver, &c, next);
}

/// Counts the clauses the solver learns, and stops it when they reach the limit, the user
/// interrupts or the time given runs out.
struct Watch {
    progress: Progress,
    until: Option<Instant>,
    learned: u64,
    limit: u64,
}

impl cadical::Callbacks for Watch {
    fn terminate(&mut self) -> bool {
        self.learned >= self.limit
            || self.progress.is_cancelled()
            || self.until.is_some_and(|end| Instant::now() >= end)
    }

    fn max_length(&self) -> i32 {
        i32::MAX
    }

    fn learn(&mut self, _clause: &[i32]) {
        self.learned += 1;
    }
}

/// What the solver may spend: conflicts left for every period still to be tried, and at
/// most so many on one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Conflicts left in all (the same answer on every machine).
    pub conflicts: u64,
    /// Conflicts one formula may take.
    pub per_formula: u64,
    /// A wall-clock end as well (`--effort SECONDS`: not reproducible across machines).
    pub until: Option<Instant>,
}

/// The solver, its first guess false (see the module's note): every literal is negated on
/// the way in and out.
struct Formula {
    solver: cadical::Solver<Watch>,
}

impl Formula {
    fn new(watch: Watch) -> Formula {
        let mut solver = cadical::Solver::with_config("sat").unwrap_or_default();
        solver.set_callbacks(Some(watch));
        Formula { solver }
    }

    fn add<I: IntoIterator<Item = i32>>(&mut self, clause: I) {
        self.solver.add_clause(clause.into_iter().map(|l| -l));
    }

    /// Whether `var` is true in the model found.
    fn holds(&self, var: i32) -> bool {
        self.solver.value(-var) == Some(true)
    }
}

/// What one period's formula gave.
pub(super) enum Outcome {
    /// Every message's start offset.
    Table(Vec<u64>),
    /// No table exists at this period (none at all when no symmetry was asked).
    Impossible,
    /// The conflicts allowed ran out.
    Undecided,
}

/// Cells past which the formula is not built (about a gigabyte of clauses).
pub(super) const MAX_CELL_HITS: usize = 40_000_000;

/// The size of the formula of `period`: cells a message fills at one offset, summed over the
/// messages and the offsets (`usize::MAX` when a route leaves the network).
pub(super) fn cell_hits(input: &Input, period: u64) -> usize {
    input
        .messages
        .iter()
        .map(|m| (m.path.len() + 1).saturating_mul(m.words as usize))
        .fold(0usize, usize::saturating_add)
        .saturating_mul(period as usize)
}

/// What the formulas of every period share: each message's resources and the mirrors.
pub(super) struct Shared {
    routes: Vec<Vec<usize>>,
    mirrors: Vec<Mirror>,
}

/// [`Shared`] for `input`, or `None` when a route leaves the network.
pub(super) fn prepare(input: &Input) -> Option<Shared> {
    let routes = input
        .messages
        .iter()
        .map(|m| resources(input.net, m))
        .collect::<Option<Vec<_>>>()?;
    Some(Shared {
        routes,
        mirrors: mirrors(input),
    })
}

/// The slot table of `period`, found within the solver's `budget` (what it spends is taken
/// off). The groups are asked in turn, most symmetric first (see [`groups`]); when no table
/// has one's symmetry, the next.
pub(super) fn table(
    input: &Input,
    shared: &Shared,
    period: u64,
    budget: &mut Budget,
    progress: &Progress,
) -> Result<Outcome, ScheduleError> {
    for g in groups(input, &shared.mirrors, period) {
        // The formula without symmetry, where the network has some, is a last resort: it
        // is two to four times larger and may take what is left from an easier period.
        let outcome = if g.order() == 1 && !shared.mirrors.is_empty() {
            let mut share = Budget {
                conflicts: budget.conflicts / 4,
                ..*budget
            };
            let outcome = solve(input, &shared.routes, &g, period, &mut share, progress)?;
            budget.conflicts -= budget.conflicts / 4 - share.conflicts;
            outcome
        } else {
            solve(input, &shared.routes, &g, period, budget, progress)?
        };
        match outcome {
            Outcome::Impossible => continue,
            found => return Ok(found),
        }
    }
    Ok(Outcome::Impossible)
}

/// The groups a table of `period` is asked to keep: every mirror; their product alone (the
/// point reflection); each mirror alone; none. A group in which a message is its own image
/// half a period later is left out, since the message would have to start twice: on a mesh
/// with an odd side the mirror of that side fixes the messages along its middle line, while
/// the point reflection fixes no message and still halves the formula.
fn groups(input: &Input, mirrors: &[Mirror], period: u64) -> Vec<Group> {
    let mut tried: Vec<Vec<Mirror>> = vec![mirrors.to_vec()];
    if mirrors.len() > 1 {
        let product = mirrors[1..]
            .iter()
            .fold(mirrors[0].clone(), |(r, m), (r2, m2)| {
                (
                    r.iter().map(|&x| r2[x]).collect(),
                    m.iter().map(|&x| m2[x]).collect(),
                )
            });
        tried.push(vec![product]);
        tried.extend(mirrors.iter().map(|m| vec![m.clone()]));
    }
    if !mirrors.is_empty() {
        tried.push(Vec::new());
    }
    tried
        .iter()
        .map(|generators| group_of(input, generators))
        .filter(|g| {
            (0..g.order()).all(|e| {
                g.shift(e, period) == 0 || g.message[e].iter().enumerate().all(|(j, &i)| i != j)
            })
        })
        .collect()
}

/// The slot table of `period` that `g` maps onto itself.
fn solve(
    input: &Input,
    routes: &[Vec<usize>],
    g: &Group,
    period: u64,
    budget: &mut Budget,
    progress: &Progress,
) -> Result<Outcome, ScheduleError> {
    let p = period as usize;
    if p == 0 || cell_hits(input, period) > MAX_CELL_HITS {
        return Ok(Outcome::Undecided);
    }
    // One representative per orbit of messages: the first.
    let reps: Vec<usize> = (0..input.messages.len())
        .filter(|&j| (0..g.order()).all(|e| g.message[e][j] >= j))
        .collect();
    // Cell (r, t) stands for its orbit when it is the least of it.
    let canonical = |r: usize, t: u64| -> bool {
        (0..g.order()).all(|e| {
            let (r2, t2) = (g.resource[e][r], (t + g.shift(e, period)) % period);
            (r2, t2) >= (r, t)
        })
    };
    let cells = input.cap.len() * p;
    let mut holders: Vec<Vec<i32>> = vec![Vec::new(); cells];
    let mut var = vec![vec![0i32; p]; reps.len()];
    let mut next = 0i32;
    let mut mine: Vec<usize> = Vec::new();
    for (k, &j) in reps.iter().enumerate() {
        if progress.is_cancelled() {
            return Err(ScheduleError::Interrupted);
        }
        for t in 0..period {
            mine.clear();
            // The orbit of the placement: a message its own image at another offset is
            // placed at both (the set stays symmetric, so its canonical cells judge it).
            let mut seen = std::collections::BTreeSet::new();
            for e in 0..g.order() {
                let image = g.message[e][j];
                let start = t + g.shift(e, period);
                if !seen.insert((image, start % period)) {
                    continue;
                }
                let words = input.messages[image].words;
                for (i, &r) in routes[image].iter().enumerate() {
                    let t0 = start + i as u64 * input.latency;
                    for c in 0..words {
                        let tt = (t0 + c) % period;
                        if canonical(r, tt) {
                            mine.push(r * p + tt as usize);
                        }
                    }
                }
            }
            mine.sort_unstable();
            // A cell this placement fills past its lanes alone rules the offset out.
            let over = mine
                .chunk_by(|a, b| a == b)
                .any(|run| run.len() > input.cap[run[0] / p] as usize);
            if over {
                continue;
            }
            next += 1;
            var[k][t as usize] = next;
            for &c in &mine {
                holders[c].push(next);
            }
        }
    }
    let limit = budget.conflicts.min(budget.per_formula);
    if limit == 0 {
        return Ok(Outcome::Undecided);
    }
    let mut solver = Formula::new(Watch {
        progress: progress.clone(),
        until: budget.until,
        learned: 0,
        limit,
    });
    for vs in &var {
        let clause: Vec<i32> = vs.iter().copied().filter(|&v| v != 0).collect();
        if clause.is_empty() {
            return Ok(Outcome::Impossible);
        }
        solver.add(clause);
    }
    // A table shifted in time is a table: the first message may start at 0 (an offset is
    // ruled out for a message alone at every offset or none).
    if let Some(&v) = var.first().and_then(|vs| vs.first()) {
        if v != 0 {
            solver.add([v]);
        }
    }
    for (c, lits) in holders.iter().enumerate() {
        at_most(&mut solver, lits, input.cap[c / p] as usize, &mut next);
    }
    drop(holders);
    let outcome = solver.solver.solve();
    let learned = solver.solver.get_callbacks().map_or(limit, |w| w.learned);
    budget.conflicts = budget.conflicts.saturating_sub(learned);
    match outcome {
        Some(true) => {}
        Some(false) => return Ok(Outcome::Impossible),
        None if progress.is_cancelled() => return Err(ScheduleError::Interrupted),
        None => return Ok(Outcome::Undecided),
    }
    let mut offset = vec![u64::MAX; input.messages.len()];
    for (k, &j) in reps.iter().enumerate() {
        let Some(t) = (0..p).find(|&t| var[k][t] != 0 && solver.holds(var[k][t])) else {
            return Ok(Outcome::Undecided);
        };
        for e in 0..g.order() {
            let image = g.message[e][j];
            if offset[image] == u64::MAX {
                offset[image] = (t as u64 + g.shift(e, period)) % period;
            }
        }
    }
    Ok(Outcome::Table(offset))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every ordered pair of nodes, `words` long, on its dimension-order route.
    fn all_to_all(spec: &str, words: u64) -> (Network, Vec<Message>) {
        let net = Network::build(&spec.parse().expect("spec")).expect("network");
        let mut messages = Vec::new();
        for src in 0..net.nodes() {
            for dst in 0..net.nodes() {
                if src != dst {
                    let path = net.dor_path(src, dst);
                    messages.push(Message {
                        src,
                        dst,
                        words,
                        path,
                    });
                }
            }
        }
        (net, messages)
    }

    /// No cell holds more messages than it has lanes, counted afresh from the offsets.
    fn check(input: &Input, period: u64, offset: &[u64]) {
        let mut count = vec![0u32; input.cap.len() * period as usize];
        for (m, &s) in input.messages.iter().zip(offset) {
            assert!(s < period);
            let rs = resources(input.net, m).expect("route");
            for (i, &r) in rs.iter().enumerate() {
                for c in 0..m.words {
                    let t = (s + i as u64 * input.latency + c) % period;
                    count[r * period as usize + t as usize] += 1;
                }
            }
        }
        for (cell, &n) in count.iter().enumerate() {
            assert!(
                n <= input.cap[cell / period as usize],
                "cell {cell} holds {n}"
            );
        }
    }

    fn input<'a>(
        net: &'a Network,
        messages: Vec<Message>,
        latency: u64,
        cap: &'a [u32],
    ) -> Input<'a> {
        Input {
            net,
            latency,
            cap,
            messages,
        }
    }

    fn caps(net: &Network, ports: u32) -> Vec<u32> {
        let mut cap = vec![ports; 2 * net.nodes()];
        cap.extend(vec![1; net.links.len()]);
        cap
    }

    /// The mirrors of a mesh keep its dimension-order routes (a group of four on a 2-D mesh,
    /// two on a line); a hypercube has no grid mirrors.
    #[test]
    fn the_group_is_the_mirrors_that_keep_the_routes() {
        for (spec, order) in [
            ("mesh:4x4", 4),
            ("mesh:3x3", 4),
            ("mesh:4x2", 4),
            ("line:5", 2),
        ] {
            let (net, messages) = all_to_all(spec, 1);
            let cap = caps(&net, 1);
            let input = input(&net, messages, 1, &cap);
            assert_eq!(group_of(&input, &mirrors(&input)).order(), order, "{spec}");
        }
        let (net, messages) = all_to_all("hypercube:3", 1);
        let cap = caps(&net, 1);
        assert!(mirrors(&input(&net, messages, 1, &cap)).is_empty());
    }

    /// Tables found hold no cell twice, on grids with and without a middle (a mirror that
    /// fixes a column), with several words per message, two ports and no latency; the 4×4
    /// mesh's all-to-all reaches its bound, 16 cycles.
    #[test]
    fn tables_found_are_tables() {
        let budget = Budget {
            conflicts: u64::MAX,
            per_formula: 200_000,
            until: None,
        };
        let cases = [
            ("mesh:4x4", 1, 1, 1, 16),
            ("mesh:3x3", 1, 1, 1, 9),
            ("mesh:3x3", 2, 1, 1, 18),
            ("mesh:4x2", 1, 0, 1, 9),
            ("mesh:4x4", 1, 1, 2, 16),
            ("torus:4x4", 1, 1, 1, 17),
        ];
        for (spec, words, latency, ports, period) in cases {
            let (net, messages) = all_to_all(spec, words);
            let cap = caps(&net, ports);
            let input = input(&net, messages, latency, &cap);
            let shared = prepare(&input).expect("routes");
            let mut budget = budget;
            match table(&input, &shared, period, &mut budget, &Progress::none()).expect("no error")
            {
                Outcome::Table(offset) => check(&input, period, &offset),
                _ => panic!("{spec}: no table of {period} cycles"),
            }
        }
    }

    /// A period below the ports' load has no table, and the solver says so.
    #[test]
    fn a_period_below_the_ports_load_is_impossible() {
        let (net, messages) = all_to_all("mesh:3x3", 1);
        let cap = caps(&net, 1);
        let input = input(&net, messages, 1, &cap);
        let mut budget = Budget {
            conflicts: 1_000_000,
            per_formula: 1_000_000,
            until: None,
        };
        assert!(matches!(
            table(
                &input,
                &prepare(&input).expect("routes"),
                7,
                &mut budget,
                &Progress::none()
            )
            .expect("no error"),
            Outcome::Impossible
        ));
    }
}
