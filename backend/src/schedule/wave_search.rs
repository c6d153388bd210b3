//! Exact-cover search for a slot table of rigid waves: every wave (a set of messages that move
//! together) takes one of its placements (a route and an offset), and a placement holds cells
//! `(resource, cycle mod P)`. No cell may hold more than its resource's capacity, and no link
//! resource more than `load_cap` cells per period (the busiest link of the router's paths, so
//! the bound printed for the plan's routes stays the one the search aimed at).
//!
//! Depth-first search as exact-cover solvers do it (Knuth's dancing links): the branch is the
//! first undecided cell of the tightest resource — a wave covering it, or leaving it empty — so
//! a resource fills from its first cell on and a gap is decided when it appears; a wave left
//! with one placement takes it first. A placement that can no longer be taken is counted dead
//! incrementally (the placements on a cell die when it fills), and a branch ends when a wave
//! has no placement left or a group of resources has fewer free cells than its open waves
//! need. Short runs, each with its own order of values, restart until a table is found or the
//! budget of nodes is spent (a run that errs early rarely recovers by backtracking; a new
//! order does: randomised restarts, as in constraint solvers). Deterministic for a seed.

/// A resource is tight (branched on cell by cell) when, in one of its groups, the free cells
/// beyond what the open waves need are at most `1 / TIGHT` of its cells.
const TIGHT: u64 = 2;

/// A wave's routes: per route, its cells relative to the start as (resource, cycle).
pub(super) struct WaveRoutes {
    pub routes: Vec<Vec<(usize, u64)>>,
}

/// The problem: waves, resources with capacities, and groups of resources for the counting
/// bound (a resource may be in several groups).
pub(super) struct Problem<'a> {
    pub waves: &'a [WaveRoutes],
    /// Capacity of a cell of each resource.
    pub cap: &'a [u32],
    /// Whether each resource is a link (the load cap applies).
    pub link: &'a [bool],
    pub load_cap: u64,
    /// Per resource: the groups it counts in.
    pub groups: &'a [Vec<usize>],
    pub group_count: usize,
}

/// Per wave: (route, offset).
pub(super) type Placed = Vec<(usize, u64)>;

/// Searches a table of `period`; `None` when none was found within `budget` nodes.
pub(super) fn solve(problem: &Problem, period: u64, seed: u64, budget: usize) -> Option<Placed> {
    let mut s = Search::new(problem, period)?;
    s.run(seed, budget)
}

struct Search<'a> {
    problem: &'a Problem<'a>,
    period: usize,
    /// Per placement: its wave, route, offset and cells `resource·P + cycle` in
    /// `cells[start[q]..start[q + 1]]`.
    wave: Vec<u32>,
    route: Vec<u32>,
    offset: Vec<u32>,
    start: Vec<u32>,
    cells: Vec<u32>,
    /// Per wave: its placements; per cell: the placements holding it.
    of_wave: Vec<Vec<u32>>,
    cover: Vec<Vec<u32>>,
    /// Per wave and group: the fewest cells of the group any of its routes holds.
    need_of: Vec<Vec<(usize, u64)>>,
    /// State: holders per cell, cells held per resource, causes of death per placement,
    /// placements alive per wave, open waves' need and free cells per group.
    occ: Vec<u32>,
    held: Vec<u64>,
    dead: Vec<u32>,
    alive: Vec<u32>,
    open: Vec<bool>,
    need: Vec<u64>,
    free: Vec<u64>,
    /// Cells per group.
    total: Vec<u64>,
    /// Cells closed by hand (left empty, or a link at its load cap), to reopen on the way back.
    closed: Vec<(usize, u32)>,
    chosen: Vec<u32>,
    nodes: usize,
    limit: usize,
    rng: u64,
}

impl<'a> Search<'a> {
    fn new(problem: &'a Problem<'a>, period: u64) -> Option<Search<'a>> {
        let p = usize::try_from(period).ok()?;
        let resources = problem.cap.len();
        if p == 0 || resources.checked_mul(p)? >= u32::MAX as usize {
            return None;
        }
        let mut s = Search {
            problem,
            period: p,
            wave: Vec::new(),
            route: Vec::new(),
            offset: Vec::new(),
            start: vec![0],
            cells: Vec::new(),
            of_wave: vec![Vec::new(); problem.waves.len()],
            cover: vec![Vec::new(); resources * p],
            need_of: Vec::with_capacity(problem.waves.len()),
            occ: vec![0; resources * p],
            held: vec![0; resources],
            dead: Vec::new(),
            alive: vec![0; problem.waves.len()],
            open: vec![true; problem.waves.len()],
            need: vec![0; problem.group_count],
            free: vec![0; problem.group_count],
            total: Vec::new(),
            closed: Vec::new(),
            chosen: Vec::new(),
            nodes: 0,
            limit: 0,
            rng: 0,
        };
        let mut buf: Vec<u32> = Vec::new();
        for (t, w) in problem.waves.iter().enumerate() {
            let mut least: Option<Vec<u64>> = None;
            for (v, cells) in w.routes.iter().enumerate() {
                // Cells per resource: a route over a link's load cap, or holding one cell
                // twice, fits no table of this period.
                let mut per: std::collections::BTreeMap<usize, u64> = Default::default();
                for &(r, _) in cells {
                    *per.entry(r).or_default() += 1;
                }
                if per
                    .iter()
                    .any(|(&r, &c)| problem.link[r] && c > problem.load_cap)
                {
                    continue;
                }
                buf.clear();
                buf.extend(
                    cells
                        .iter()
                        .map(|&(r, rel)| (r * p + (rel % period) as usize) as u32),
                );
                let mut sorted = buf.clone();
                sorted.sort_unstable();
                if sorted.windows(2).any(|x| x[0] == x[1]) {
                    continue;
                }
                let mut g = vec![0u64; problem.group_count];
                for (&r, &c) in &per {
                    for &k in &problem.groups[r] {
                        g[k] += c;
                    }
                }
                least = Some(match least {
                    None => g,
                    Some(l) => l.iter().zip(&g).map(|(a, b)| *a.min(b)).collect(),
                });
                for off in 0..p {
                    let q = s.wave.len() as u32;
                    for &c in &buf {
                        let (r, t0) = (c as usize / p, c as usize % p);
                        let cell = r * p + (t0 + off) % p;
                        s.cells.push(cell as u32);
                        s.cover[cell].push(q);
                    }
                    s.start.push(s.cells.len() as u32);
                    s.of_wave[t].push(q);
                    s.wave.push(t as u32);
                    s.route.push(v as u32);
                    s.offset.push(off as u32);
                }
            }
            let least = least?;
            s.need_of.push(
                least
                    .into_iter()
                    .enumerate()
                    .filter(|&(_, c)| c > 0)
                    .collect(),
            );
        }
        s.dead = vec![0; s.wave.len()];
        Some(s)
    }

    fn next_rand(&mut self) -> u64 {
        super::modulo::splitmix64(&mut self.rng)
    }

    fn cap_of(&self, cell: usize) -> u32 {
        self.problem.cap[cell / self.period]
    }

    fn reset(&mut self) {
        let p = self.period;
        self.occ.iter_mut().for_each(|o| *o = 0);
        self.held.iter_mut().for_each(|h| *h = 0);
        self.dead.iter_mut().for_each(|d| *d = 0);
        self.open.iter_mut().for_each(|o| *o = true);
        for (t, a) in self.alive.iter_mut().enumerate() {
            *a = self.of_wave[t].len() as u32;
        }
        self.need.iter_mut().for_each(|n| *n = 0);
        for need in &self.need_of {
            for &(k, c) in need {
                self.need[k] += c;
            }
        }
        self.free.iter_mut().for_each(|f| *f = 0);
        for (r, groups) in self.problem.groups.iter().enumerate() {
            for &k in groups {
                self.free[k] += u64::from(self.problem.cap[r]) * p as u64;
            }
        }
        self.total = self.free.clone();
        self.closed.clear();
        self.chosen.clear();
    }

    /// One more (or one fewer) holder on `cell`; the placements on it die when it fills (come
    /// back when it empties).
    fn hold(&mut self, cell: usize, add: bool) {
        let cap = self.cap_of(cell);
        let r = cell / self.period;
        if add {
            self.occ[cell] += 1;
            for &k in &self.problem.groups[r] {
                self.free[k] -= 1;
            }
            if self.occ[cell] == cap {
                for i in 0..self.cover[cell].len() {
                    let q = self.cover[cell][i] as usize;
                    self.dead[q] += 1;
                    if self.dead[q] == 1 {
                        self.alive[self.wave[q] as usize] -= 1;
                    }
                }
            }
        } else {
            if self.occ[cell] == cap {
                for i in 0..self.cover[cell].len() {
                    let q = self.cover[cell][i] as usize;
                    self.dead[q] -= 1;
                    if self.dead[q] == 0 {
                        self.alive[self.wave[q] as usize] += 1;
                    }
                }
            }
            self.occ[cell] -= 1;
            for &k in &self.problem.groups[r] {
                self.free[k] += 1;
            }
        }
    }

    /// Fills every free lane of `cell` (left empty); returns how many.
    fn close(&mut self, cell: usize) -> u32 {
        let n = self.cap_of(cell) - self.occ[cell];
        for _ in 0..n {
            self.hold(cell, true);
        }
        n
    }

    fn reopen(&mut self, cell: usize, n: u32) {
        for _ in 0..n {
            self.hold(cell, false);
        }
    }

    /// Takes placement `q`; a link at its load cap closes its other cells. Returns the trail
    /// length to come back to.
    fn place(&mut self, q: usize) -> usize {
        let mark = self.closed.len();
        let t = self.wave[q] as usize;
        self.open[t] = false;
        for i in 0..self.need_of[t].len() {
            let (k, c) = self.need_of[t][i];
            self.need[k] -= c;
        }
        // The wave's other placements are no longer options.
        for i in 0..self.of_wave[t].len() {
            self.dead[self.of_wave[t][i] as usize] += 1;
        }
        let (a, b) = (self.start[q] as usize, self.start[q + 1] as usize);
        for i in a..b {
            let cell = self.cells[i] as usize;
            self.hold(cell, true);
            self.held[cell / self.period] += 1;
        }
        for i in a..b {
            let r = self.cells[i] as usize / self.period;
            if self.problem.link[r] && self.held[r] >= self.problem.load_cap {
                for c in r * self.period..(r + 1) * self.period {
                    if self.occ[c] < self.cap_of(c) {
                        let n = self.close(c);
                        self.closed.push((c, n));
                    }
                }
            }
        }
        self.chosen.push(q as u32);
        mark
    }

    fn unplace(&mut self, q: usize, mark: usize) {
        while self.closed.len() > mark {
            if let Some((c, n)) = self.closed.pop() {
                self.reopen(c, n);
            }
        }
        let (a, b) = (self.start[q] as usize, self.start[q + 1] as usize);
        for i in (a..b).rev() {
            let cell = self.cells[i] as usize;
            self.held[cell / self.period] -= 1;
            self.hold(cell, false);
        }
        let t = self.wave[q] as usize;
        for i in 0..self.need_of[t].len() {
            let (k, c) = self.need_of[t][i];
            self.need[k] += c;
        }
        for i in 0..self.of_wave[t].len() {
            self.dead[self.of_wave[t][i] as usize] -= 1;
        }
        self.open[t] = true;
        self.chosen.pop();
    }

    fn run(&mut self, seed: u64, budget: usize) -> Option<Placed> {
        let n = self.of_wave.len();
        let run_nodes = 2 * n + 256;
        let mut spent = 0usize;
        let mut attempt = 0u64;
        while spent < budget {
            self.rng = seed ^ (self.period as u64).wrapping_mul(0x2545_F491_4F6C_DD1D) ^ attempt;
            self.nodes = 0;
            self.limit = run_nodes.min(budget - spent);
            self.reset();
            let done = self.dfs(n);
            spent += self.nodes;
            match done {
                // The whole tree is exhausted: no table of this period.
                Some(false) => return None,
                Some(true) => {
                    let mut placed = vec![(0usize, 0u64); n];
                    for &q in &self.chosen {
                        let q = q as usize;
                        placed[self.wave[q] as usize] =
                            (self.route[q] as usize, u64::from(self.offset[q]));
                    }
                    return Some(placed);
                }
                None => attempt += 1,
            }
        }
        None
    }

    /// `Some(true)` when every wave is placed, `Some(false)` when the subtree holds no table,
    /// `None` when the run's nodes are spent.
    fn dfs(&mut self, left: usize) -> Option<bool> {
        if left == 0 {
            return Some(true);
        }
        self.nodes += 1;
        if self.nodes > self.limit {
            return None;
        }
        if self.need.iter().zip(&self.free).any(|(n, f)| n > f) {
            return Some(false);
        }
        let mut forced = None;
        for t in 0..self.open.len() {
            if self.open[t] {
                match self.alive[t] {
                    0 => return Some(false),
                    1 if forced.is_none() => forced = Some(t),
                    _ => {}
                }
            }
        }
        let mut options: Vec<Option<usize>> = Vec::new();
        let mut cell = usize::MAX;
        if let Some(t) = forced {
            let q = self.of_wave[t]
                .iter()
                .map(|&q| q as usize)
                .find(|&q| self.dead[q] == 0)?;
            options.push(Some(q));
        } else {
            // The first undecided cell of each tight resource (few free cells beyond what
            // its open waves need); the one with the fewest ways wins.
            let p = self.period;
            let mut best = usize::MAX;
            for r in 0..self.problem.cap.len() {
                let tight = self.problem.groups[r].iter().any(|&k| {
                    self.need[k] > 0 && (self.free[k] - self.need[k]) * TIGHT <= self.total[k]
                });
                if !tight {
                    continue;
                }
                let Some(t) = (0..p).find(|&t| self.occ[r * p + t] < self.problem.cap[r]) else {
                    continue;
                };
                let at = r * p + t;
                let ways = self.cover[at]
                    .iter()
                    .filter(|&&q| self.dead[q as usize] == 0)
                    .count();
                if ways < best {
                    best = ways;
                    cell = at;
                    if ways == 0 {
                        break;
                    }
                }
            }
            if cell == usize::MAX {
                // No resource is tight: the wave with the fewest placements goes next.
                let t = (0..self.open.len())
                    .filter(|&t| self.open[t])
                    .min_by_key(|&t| (self.alive[t], t))?;
                let mut opts: Vec<Option<usize>> = self.of_wave[t]
                    .iter()
                    .map(|&q| q as usize)
                    .filter(|&q| self.dead[q] == 0)
                    .map(Some)
                    .collect();
                for i in (1..opts.len()).rev() {
                    let j = (self.next_rand() % (i as u64 + 1)) as usize;
                    opts.swap(i, j);
                }
                return self.branch(opts, cell, left);
            }
            if cell == usize::MAX {
                return Some(false);
            }
            options.extend(
                self.cover[cell]
                    .iter()
                    .filter(|&&q| self.dead[q as usize] == 0)
                    .map(|&q| Some(q as usize)),
            );
            // Placements in an order of the run's own; leaving the cell empty last.
            for i in (1..options.len()).rev() {
                let j = (self.next_rand() % (i as u64 + 1)) as usize;
                options.swap(i, j);
            }
            options.push(None);
        }
        self.branch(options, cell, left)
    }

    /// Tries each option in turn: a placement, or (`None`) leaving `cell` empty.
    fn branch(&mut self, options: Vec<Option<usize>>, cell: usize, left: usize) -> Option<bool> {
        for o in options {
            let r = match o {
                Some(q) => {
                    let mark = self.place(q);
                    // A placement that takes a link past its load cap is no way on.
                    let over = (self.start[q] as usize..self.start[q + 1] as usize).any(|i| {
                        let r = self.cells[i] as usize / self.period;
                        self.problem.link[r] && self.held[r] > self.problem.load_cap
                    });
                    let r = if over {
                        Some(false)
                    } else {
                        self.dfs(left - 1)
                    };
                    if r == Some(true) {
                        return r;
                    }
                    self.unplace(q, mark);
                    r
                }
                None => {
                    let n = self.close(cell);
                    let r = self.dfs(left);
                    if r == Some(true) {
                        return r;
                    }
                    self.reopen(cell, n);
                    r
                }
            };
            r?;
        }
        Some(false)
    }
}
