//! n-dimensional meshes and tori (a line is a 1-D mesh, a ring a 1-D torus). Nodes are numbered in
//! row-major order with x varying fastest: node = x + nx·(y + ny·z).

use super::registry::Topology;
use super::{Link, Network, NetworkSpec, NodeId, Port, TopologyError};

/// A grid kind: `mesh` and `line` (no wrap-around), `torus` and `ring` (wrap-around); `line` and
/// `ring` are the one-dimensional ones.
pub struct Grid {
    name: &'static str,
    wrap: bool,
    one_dim: bool,
    help: &'static str,
    example: &'static str,
}

pub const MESH: Grid = Grid {
    name: "mesh",
    wrap: false,
    one_dim: false,
    help: "n-dimensional mesh, extents x first",
    example: "mesh:4x4",
};
pub const TORUS: Grid = Grid {
    name: "torus",
    wrap: true,
    one_dim: false,
    help: "n-dimensional torus (a mesh with wrap-around links)",
    example: "torus:8x8",
};
pub const LINE: Grid = Grid {
    name: "line",
    wrap: false,
    one_dim: true,
    help: "n nodes in a row (a 1-D mesh)",
    example: "line:8",
};
pub const RING: Grid = Grid {
    name: "ring",
    wrap: true,
    one_dim: true,
    help: "n nodes in a ring (a 1-D torus)",
    example: "ring:16",
};

impl Topology for Grid {
    fn name(&self) -> &'static str {
        self.name
    }
    fn help(&self) -> &'static str {
        self.help
    }
    fn example(&self) -> &'static str {
        self.example
    }
    fn arity(&self) -> Option<usize> {
        self.one_dim.then_some(1)
    }
    fn build(&self, spec: &NetworkSpec) -> Result<(Vec<Vec<i64>>, Vec<Link>), TopologyError> {
        Ok(build(&spec.dims, self.wrap))
    }
    fn index(&self, spec: &NetworkSpec, coords: &[i64]) -> Option<NodeId> {
        index(&spec.dims, coords)
    }
    fn grid_wrap(&self) -> Option<bool> {
        Some(self.wrap)
    }
    fn closed_form(&self) -> bool {
        true
    }
    fn distance(&self, net: &Network, a: NodeId, b: NodeId) -> usize {
        distance(&net.spec.dims, self.wrap, &net.coords[a], &net.coords[b])
    }
    fn dor_path(&self, net: &Network, a: NodeId, b: NodeId) -> Vec<NodeId> {
        dor_path(&net.spec.dims, self.wrap, &net.coords[a], &net.coords[b])
    }
    fn shortest_path_count(&self, net: &Network, a: NodeId, b: NodeId) -> u128 {
        shortest_path_count(&net.spec.dims, self.wrap, &net.coords[a], &net.coords[b])
    }
}

/// Coordinates of node `n`.
pub fn coords_of(dims: &[usize], mut n: usize) -> Vec<i64> {
    dims.iter()
        .map(|&d| {
            let c = n % d;
            n /= d;
            c as i64
        })
        .collect()
}

/// The node at `coords`, if inside the grid.
pub fn index(dims: &[usize], coords: &[i64]) -> Option<usize> {
    if coords.len() != dims.len() {
        return None;
    }
    let mut n = 0usize;
    for (&c, &d) in coords.iter().zip(dims).rev() {
        if c < 0 || c as usize >= d {
            return None;
        }
        n = n * d + c as usize;
    }
    Some(n)
}

pub fn build(dims: &[usize], wrap: bool) -> (Vec<Vec<i64>>, Vec<Link>) {
    let nodes: usize = dims.iter().product();
    let coords: Vec<Vec<i64>> = (0..nodes).map(|n| coords_of(dims, n)).collect();
    let mut links = Vec::new();
    for (n, c) in coords.iter().enumerate() {
        for (dim, &d) in dims.iter().enumerate() {
            if d < 2 {
                continue;
            }
            for positive in [true, false] {
                let mut nc = c.clone();
                nc[dim] += if positive { 1 } else { -1 };
                if wrap {
                    nc[dim] = nc[dim].rem_euclid(d as i64);
                }
                if let Some(to) = index(dims, &nc) {
                    if to != n {
                        links.push(Link {
                            from: n,
                            to,
                            port: Port::Dir {
                                dim: dim as u8,
                                positive,
                            },
                        });
                    }
                }
            }
        }
    }
    (coords, links)
}

/// Signed minimal offset from `a` to `b` along one dimension of extent `d`. On a torus the shorter
/// way round wins; a tie (exactly half way round a ring of even extent) goes the positive way
/// from an even coordinate and the negative way from an odd one, so routes are deterministic and
/// the half-way traffic of a ring loads both directions evenly (all ties the positive way put
/// twice the load on one direction: an all-to-all over an 8×8 torus then needs 640 cycles on one
/// link where 512 suffice).
pub fn offset(a: i64, b: i64, d: usize, wrap: bool) -> i64 {
    let diff = b - a;
    if !wrap {
        return diff;
    }
    let d = d as i64;
    let fwd = diff.rem_euclid(d);
    if fwd * 2 < d || (fwd * 2 == d && a.rem_euclid(2) == 0) {
        fwd
    } else {
        fwd - d
    }
}

/// Hop distance: the Manhattan distance of Minsky §4.2.1 (`Md = Σ |x_iB − x_iA|`), taken the short
/// way round on a torus.
pub fn distance(dims: &[usize], wrap: bool, a: &[i64], b: &[i64]) -> usize {
    dims.iter()
        .zip(a.iter().zip(b))
        .map(|(&d, (&x, &y))| offset(x, y, d, wrap).unsigned_abs() as usize)
        .sum()
}

/// The legs of the dimension-order route from `a` to `b`: each dimension in order (x first, then
/// y, then z…) with its signed [`offset`], dimensions already aligned left out. The one
/// dimension-order router: node paths here, and the simulators' link paths and next ports, all
/// follow these legs.
pub fn dor_legs<'a>(
    dims: &'a [usize],
    wrap: bool,
    a: &'a [i64],
    b: &'a [i64],
) -> impl Iterator<Item = (usize, i64)> + 'a {
    dims.iter()
        .zip(a.iter().zip(b))
        .enumerate()
        .map(move |(dim, (&d, (&x, &y)))| (dim, offset(x, y, d, wrap)))
        .filter(|&(_, off)| off != 0)
}

/// Dimension-order route: correct x fully, then y, then z… (Chittor's "rows first"; the fixed
/// oblivious routing both seeds compare against).
pub fn dor_path(dims: &[usize], wrap: bool, a: &[i64], b: &[i64]) -> Vec<usize> {
    let mut cur = a.to_vec();
    let mut path = Vec::new();
    if let Some(n) = index(dims, &cur) {
        path.push(n);
    }
    for (dim, off) in dor_legs(dims, wrap, a, b) {
        let d = dims[dim];
        let step = off.signum();
        for _ in 0..off.unsigned_abs() {
            cur[dim] += step;
            if wrap {
                cur[dim] = cur[dim].rem_euclid(d as i64);
            }
            if let Some(n) = index(dims, &cur) {
                path.push(n);
            }
        }
    }
    path
}

/// Number of shortest paths: the multinomial `(Σδ)! / Π δ!` of Minsky §4.2.2 (mesh). On a torus a
/// dimension whose offset is exactly half the ring can be travelled either way, doubling the count.
pub fn shortest_path_count(dims: &[usize], wrap: bool, a: &[i64], b: &[i64]) -> u128 {
    let mut deltas = Vec::with_capacity(dims.len());
    let mut factor: u128 = 1;
    for (&d, (&x, &y)) in dims.iter().zip(a.iter().zip(b)) {
        let off = offset(x, y, d, wrap).unsigned_abs();
        if wrap && off > 0 && 2 * off == d as u64 {
            factor = factor.saturating_mul(2);
        }
        deltas.push(off);
    }
    multinomial(&deltas).saturating_mul(factor)
}

/// `(Σ k_i)! / Π k_i!`, saturating at `u128::MAX` (only the order matters to the router).
pub fn multinomial(ks: &[u64]) -> u128 {
    let mut result: u128 = 1;
    let mut total: u64 = 0;
    for &k in ks {
        // Multiply by C(total + k, k) incrementally: each partial product is itself a binomial.
        for i in 1..=k {
            total += 1;
            result = match result.checked_mul(total as u128) {
                Some(v) => v / i as u128,
                None => return u128::MAX,
            };
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Half way round a ring of 4: from even coordinates the positive way, from odd ones the
    /// negative way, so each of the 8 directed links carries exactly one of the 4 messages' 2 hops.
    #[test]
    fn half_way_ties_load_both_directions() {
        assert_eq!(offset(0, 2, 4, true), 2);
        assert_eq!(offset(1, 3, 4, true), -2);
        assert_eq!(offset(2, 0, 4, true), 2);
        assert_eq!(offset(3, 1, 4, true), -2);
        let mut load = std::collections::BTreeMap::new();
        for a in 0..4i64 {
            let path = dor_path(&[4], true, &[a], &[(a + 2) % 4]);
            for w in path.windows(2) {
                *load.entry((w[0], w[1])).or_insert(0) += 1;
            }
        }
        assert_eq!(load.len(), 8);
        assert!(load.values().all(|&n| n == 1), "{load:?}");
        // Not a tie: the shorter way, whatever the parity.
        assert_eq!(offset(1, 2, 4, true), 1);
        assert_eq!(offset(0, 3, 4, true), -1);
        assert_eq!(distance(&[4, 4], true, &[1, 0], &[3, 2]), 4);
    }
}
