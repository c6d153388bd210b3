//! The NuMesh diamond lattice (Minsky §4.2.2; Ward et al., the NuMesh project): every node has four
//! neighbours, as the atoms of a diamond crystal.
//!
//! Model. The infinite diamond lattice is the set of points of Z⁴ whose coordinate sum is 0 ("A"
//! nodes) or 1 ("B" nodes); an A node is joined to the four points `+e_i`, a B node to `−e_i`. This is
//! the reading that gives the thesis's shortest-path count
//! `(δx+δy)!(δz+δt)! / (δx! δy! δz! δt!)`: a path alternates `+` and `−` moves, so the positive and
//! the negative coordinate offsets are ordered independently.
//!
//! To number nodes in a box we embed it in the cubic grid with `x = a − b`, `y = c`, `z = d`: a node
//! (x, y, z) has both x links, and `+y, +z` when `x+y+z` is even (A) or `−y, −z` when odd (B).
//! `diamond:NXxNY` is one layer (`NZ = 1`: the brick-wall cross-section, three links per node);
//! `diamond:NXxNYxNZ` the full lattice. Nodes are numbered as in a mesh: x + nx·(y + ny·z).

use super::registry::Topology;
use super::{grid, Link, NetworkSpec, Port, TopologyError};

pub struct Diamond;

impl Topology for Diamond {
    fn name(&self) -> &'static str {
        "diamond"
    }
    fn help(&self) -> &'static str {
        "the NuMesh diamond lattice: NXxNY (one layer) or NXxNYxNZ"
    }
    fn example(&self) -> &'static str {
        "diamond:4x4"
    }
    fn check(&self, spec: &NetworkSpec) -> Result<(), String> {
        if spec.dims.len() > 3 {
            return Err("a diamond lattice takes NXxNY or NXxNYxNZ".into());
        }
        Ok(())
    }
    fn build(&self, spec: &NetworkSpec) -> Result<(Vec<Vec<i64>>, Vec<Link>), TopologyError> {
        Ok(build(&spec.dims))
    }
}

/// Box extents (nx, ny, nz) for the spec's dims.
pub fn extents(dims: &[usize]) -> [usize; 3] {
    [
        dims.first().copied().unwrap_or(1),
        dims.get(1).copied().unwrap_or(1),
        dims.get(2).copied().unwrap_or(1),
    ]
}

pub fn build(dims: &[usize]) -> (Vec<Vec<i64>>, Vec<Link>) {
    let ext = extents(dims);
    let nodes: usize = ext.iter().product();
    let coords: Vec<Vec<i64>> = (0..nodes).map(|n| grid::coords_of(&ext, n)).collect();
    let mut links = Vec::new();
    for (n, c) in coords.iter().enumerate() {
        let even = (c[0] + c[1] + c[2]).rem_euclid(2) == 0;
        let mut moves = vec![(0u8, true), (0u8, false)];
        moves.push((1, even));
        moves.push((2, even));
        for (dim, positive) in moves {
            let mut nc = c.clone();
            nc[dim as usize] += if positive { 1 } else { -1 };
            if let Some(to) = grid::index(&ext, &nc) {
                links.push(Link {
                    from: n,
                    to,
                    port: Port::Dir { dim, positive },
                });
            }
        }
    }
    let coords = coords
        .into_iter()
        .map(|mut c| {
            c.truncate(dims.len().max(2));
            c
        })
        .collect();
    (coords, links)
}

/// The node's point in Z⁴ (a, b, c, d) — see the module docs.
pub fn lattice_point(c: &[i64]) -> [i64; 4] {
    let (x, y, z) = (
        c.first().copied().unwrap_or(0),
        c.get(1).copied().unwrap_or(0),
        c.get(2).copied().unwrap_or(0),
    );
    let s = (x + y + z).rem_euclid(2);
    [(s - y - z + x) / 2, (s - y - z - x) / 2, y, z]
}

/// Minsky §4.2.2: the number of shortest paths between two nodes of the (unbounded) diamond
/// lattice, `(δx+δy)!(δz+δt)! / (δx! δy! δz! δt!)`, written for any sign pattern as
/// `P!/Π pos_i! · N!/Π neg_i!` with P (N) the sum of the positive (negative) offsets.
pub fn lattice_path_count(a: &[i64], b: &[i64]) -> u128 {
    let (pa, pb) = (lattice_point(a), lattice_point(b));
    let mut pos = Vec::new();
    let mut neg = Vec::new();
    for i in 0..4 {
        let d = pb[i] - pa[i];
        if d > 0 {
            pos.push(d as u64);
        } else if d < 0 {
            neg.push(d.unsigned_abs());
        }
    }
    grid::multinomial(&pos).saturating_mul(grid::multinomial(&neg))
}

/// Hop distance in the unbounded lattice: P + N.
pub fn lattice_distance(a: &[i64], b: &[i64]) -> usize {
    let (pa, pb) = (lattice_point(a), lattice_point(b));
    (0..4)
        .map(|i| (pb[i] - pa[i]).unsigned_abs() as usize)
        .sum()
}
