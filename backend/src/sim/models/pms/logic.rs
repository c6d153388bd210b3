//! The scheduler logic of the predictive multiplexed switch (Ding et al. §4): the pre-scheduling
//! function (Table 1) and one cell of the scheduling-logic array (Table 2), plus the array pass
//! over one slot table. Pure functions, so the printed truth tables can be tested line by line.

/// Table 1: does connection (u, v) need a change in slot s? `r` = requested, `b_star` = realized
/// in some slot, `b_s` = realized in slot s. Release what is no longer requested; establish what
/// is requested and realized nowhere.
pub fn prescheduling(r: bool, b_star: bool, b_s: bool) -> bool {
    (!r && b_s) || (r && !b_star)
}

/// Output of one SL cell (Table 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellOut {
    /// Toggle B^(s)[u][v].
    pub toggle: bool,
    /// Output-busy passed to the next row.
    pub a: bool,
    /// Input-busy passed to the next column.
    pub d: bool,
}

/// Table 2, one cell: `l` from Table 1, `a` output v busy, `d` input u busy, `b_s` whether (u, v)
/// is realized in this slot. The printed table does not take `b_s`; without it an establish
/// request whose ports are both taken by *other* connections would read as a release, so the
/// cell branches on it (a release is only ever of a realized connection).
pub fn sl_cell(l: bool, a: bool, d: bool, b_s: bool) -> CellOut {
    let pass = CellOut {
        toggle: false,
        a,
        d,
    };
    if !l {
        return pass;
    }
    if b_s {
        // Release: the connection holds both ports, which become free for later cells.
        CellOut {
            toggle: true,
            a: false,
            d: false,
        }
    } else if !a && !d {
        CellOut {
            toggle: true,
            a: true,
            d: true,
        }
    } else {
        pass
    }
}

/// One slot table: `out_of[u]` is the output input u is connected to in this slot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SlotTable {
    pub out_of: Vec<Option<usize>>,
    pub in_of: Vec<Option<usize>>,
}

impl SlotTable {
    pub fn new(n: usize) -> SlotTable {
        SlotTable {
            out_of: vec![None; n],
            in_of: vec![None; n],
        }
    }

    pub fn is_empty(&self) -> bool {
        self.out_of.iter().all(|o| o.is_none())
    }

    pub fn has(&self, u: usize, v: usize) -> bool {
        self.out_of.get(u).copied().flatten() == Some(v)
    }

    pub fn set(&mut self, u: usize, v: usize) {
        self.out_of[u] = Some(v);
        self.in_of[v] = Some(u);
    }

    pub fn clear(&mut self, u: usize, v: usize) {
        if self.has(u, v) {
            self.out_of[u] = None;
            self.in_of[v] = None;
        }
    }
}

/// The cells of an `n`-port switch in the SL array's visiting order: row-major from row `a0` and
/// column `b0`, wrapping around (the rotating priority of §4); cells outside the switch and
/// repeats left out.
fn rotated_order(cells: &[(usize, usize)], n: usize, a0: usize, b0: usize) -> Vec<(usize, usize)> {
    if n == 0 {
        return Vec::new();
    }
    let mut order: Vec<(usize, usize)> = cells
        .iter()
        .copied()
        .filter(|&(u, v)| u < n && v < n)
        .collect();
    order.sort_by_key(|&(u, v)| ((u + n - a0 % n) % n, (v + n - b0 % n) % n));
    order.dedup();
    order
}

/// One pass of the SL array over slot table `bs`: `cells` are the (u, v) with L = 1 (Table 1),
/// visited in row-major order starting from row `a0` and column `b0` and wrapping around (the
/// rotating priority of §4). Returns the toggled cells as (u, v, established?).
pub fn sl_pass(
    bs: &mut SlotTable,
    cells: &[(usize, usize)],
    a0: usize,
    b0: usize,
) -> Vec<(usize, usize, bool)> {
    let n = bs.out_of.len();
    let order = rotated_order(cells, n, a0, b0);
    // A[v] and D[u] as they ripple: output / input busy in this slot so far.
    let mut a: Vec<bool> = bs.in_of.iter().map(|x| x.is_some()).collect();
    let mut d: Vec<bool> = bs.out_of.iter().map(|x| x.is_some()).collect();
    let mut toggled = Vec::new();
    for (u, v) in order {
        let realized = bs.has(u, v);
        let out = sl_cell(true, a[v], d[u], realized);
        a[v] = out.a;
        d[u] = out.d;
        if out.toggle {
            if realized {
                bs.clear(u, v);
            } else {
                bs.set(u, v);
            }
            toggled.push((u, v, !realized));
        }
    }
    toggled
}

/// The SL pass for a network of passive switches (the mesh variant of the model): a circuit
/// holds, in slot s, its input and output (the NICs' injection and ejection ports, as on the
/// crossbar) and every link of its route. The cells are visited in the same rotated row-major
/// order as [`sl_pass`]; the busy signals A and D become one busy bit per resource, read from the
/// slot table and `links` (`links[l]` = the circuit holding link l in this slot). A release frees
/// all of its resources for later cells; an establish takes them only if every one is free. With
/// empty routes this is [`sl_pass`]; a pair without a route (`None`) is never established. Returns the toggled cells as (u, v, established?).
pub fn sl_pass_routed(
    bs: &mut SlotTable,
    links: &mut [Option<(usize, usize)>],
    route: &dyn Fn(usize, usize) -> Option<Vec<usize>>,
    cells: &[(usize, usize)],
    a0: usize,
    b0: usize,
) -> Vec<(usize, usize, bool)> {
    let n = bs.out_of.len();
    let order = rotated_order(cells, n, a0, b0);
    let mut toggled = Vec::new();
    for (u, v) in order {
        let path = route(u, v);
        if bs.has(u, v) {
            let path = path.unwrap_or_default();
            bs.clear(u, v);
            for &l in &path {
                if links.get(l).copied().flatten() == Some((u, v)) {
                    links[l] = None;
                }
            }
            toggled.push((u, v, false));
        } else if let Some(path) = path.filter(|p| {
            bs.out_of[u].is_none()
                && bs.in_of[v].is_none()
                && p.iter().all(|&l| links.get(l).is_some_and(|o| o.is_none()))
        }) {
            bs.set(u, v);
            for &l in &path {
                links[l] = Some((u, v));
            }
            toggled.push((u, v, true));
        }
    }
    toggled
}
