//! The physical network of Yuan's optical TDM models: an `nx × ny` torus of time-multiplexed
//! switches with directed links, numbered as in Yuan §4.1.1.1 (row-major, the node in column `x`,
//! row `y` is `y·nx + x`, the same numbering as `topology::grid`).
//!
//! Paths are lists of directed-link indices `4·node + dir` (dir 0 = +x, 1 = −x, 2 = +y, 3 = −y), so
//! a per-link, per-slot occupancy table is a flat vector. Routing is XY (x first, Yuan §3.3), within a
//! dimension either the shorter way round or, for the two equally short ways of an antipodal pair,
//! the odd–even rule of Yuan §4.1.1.3 (clockwise from an even position, counter-clockwise from an odd
//! one): the planner's dimension-order route ([`grid::dor_legs`]), walked on these links.

// `is_multiple_of` is newer than the workspace's minimum Rust version (1.85).
#![allow(clippy::manual_is_multiple_of)]

use crate::sim::optical::OpticalError;
use crate::topology::{grid, Kind, NetworkSpec, NodeId};

/// Direction of travel inside one ring of the torus.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Way {
    /// Increasing coordinate (wrapping).
    Plus,
    /// Decreasing coordinate (wrapping).
    Minus,
}

/// An `nx × ny` torus (a ring when `ny = 1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Torus {
    pub nx: usize,
    pub ny: usize,
    /// Whether the rows and columns wrap around (a torus); without, the same switches form a
    /// mesh (Yuan's `Assign_array` case), and routes never leave it.
    pub wrap: bool,
}

impl Torus {
    pub fn new(nx: usize, ny: usize) -> Torus {
        Torus { nx, ny, wrap: true }
    }

    /// The same switches without the wrap-around links.
    pub fn mesh(nx: usize, ny: usize) -> Torus {
        Torus {
            nx,
            ny,
            wrap: false,
        }
    }

    /// The torus a `torus:AxB` (or `ring:N`) network spec describes.
    pub fn from_spec(spec: &NetworkSpec) -> Result<Torus, OpticalError> {
        match (spec.kind, spec.dims.as_slice()) {
            (Kind::Torus, [x, y]) if *x >= 2 && *y >= 2 => Ok(Torus::new(*x, *y)),
            (Kind::Ring, [x]) if *x >= 2 => Ok(Torus::new(*x, 1)),
            (Kind::Mesh, [x, y]) if *x * *y >= 2 => Ok(Torus::mesh(*x, *y)),
            (Kind::Mesh | Kind::Line, [x]) if *x >= 2 => Ok(Torus::mesh(*x, 1)),
            _ => Err(OpticalError::Network(format!(
                "optical TDM models need a 2-D torus or mesh such as `torus:16x16` or `mesh:4x4`, or a ring or line (got `{spec}`)"
            ))),
        }
    }

    pub fn nodes(&self) -> usize {
        self.nx * self.ny
    }

    /// Slots in a link table: four directed links per node (unused ones stay empty).
    pub fn link_slots(&self) -> usize {
        4 * self.nodes()
    }

    /// Number of real directed links (4·N² for an N×N torus, Yuan §2.1).
    pub fn link_count(&self) -> usize {
        if !self.wrap {
            // Two directed links per neighbouring pair along each row and column.
            return 2 * ((self.nx - 1) * self.ny + self.nx * (self.ny.max(1) - 1));
        }
        let per_dim = |n: usize| match n {
            0 | 1 => 0,
            2 => 1,
            _ => 2,
        };
        self.nodes() * (per_dim(self.nx) + per_dim(self.ny))
    }

    pub fn node(&self, x: usize, y: usize) -> NodeId {
        y * self.nx + x
    }

    pub fn xy(&self, n: NodeId) -> (usize, usize) {
        (n % self.nx, n / self.nx)
    }

    /// The directed link leaving `n` in dimension `dim` (0 = x, 1 = y) going `way`.
    pub fn link(&self, n: NodeId, dim: usize, way: Way) -> usize {
        4 * n + 2 * dim + usize::from(way == Way::Minus)
    }

    /// Shortest way from `a` to `b` on a ring of `k` nodes; antipodal pairs take `tie` (the
    /// multi-hop model's logical torus, whose ties all go [`Way::Plus`]; physical routes follow
    /// [`Torus::xy_route`]).
    pub fn shortest_way(k: usize, a: usize, b: usize, tie: Way) -> (Way, usize) {
        let plus = (b + k - a) % k;
        let minus = (a + k - b) % k;
        match plus.cmp(&minus) {
            std::cmp::Ordering::Less => (Way::Plus, plus),
            std::cmp::Ordering::Greater => (Way::Minus, minus),
            std::cmp::Ordering::Equal => (tie, plus),
        }
    }

    /// Yuan §4.1.1.3 odd–even rule for the two shortest paths of an antipodal pair.
    pub fn odd_even(pos: usize) -> Way {
        if pos % 2 == 0 {
            Way::Plus
        } else {
            Way::Minus
        }
    }

    /// Links of the walk from `src` going `way` for `hops` hops along `dim`, and where it ends.
    pub fn walk(
        &self,
        src: NodeId,
        dim: usize,
        way: Way,
        hops: usize,
        out: &mut Vec<usize>,
    ) -> NodeId {
        let (mut x, mut y) = self.xy(src);
        let k = if dim == 0 { self.nx } else { self.ny };
        for _ in 0..hops {
            out.push(self.link(self.node(x, y), dim, way));
            let c = if dim == 0 { &mut x } else { &mut y };
            *c = match way {
                Way::Plus => (*c + 1) % k,
                Way::Minus => (*c + k - 1) % k,
            };
        }
        self.node(x, y)
    }

    /// Coordinates `[x, y]` as the dimension-order router takes them.
    fn grid(&self, n: NodeId) -> [i64; 2] {
        let (x, y) = self.xy(n);
        [x as i64, y as i64]
    }

    /// XY route (x first, then y), shortest in each dimension, antipodal ties by the odd–even rule
    /// of the source's position in that dimension (Yuan §4.1.1.3, used in Ch.4–6): the legs of
    /// [`grid::dor_legs`] as links.
    pub fn xy_route(&self, src: NodeId, dst: NodeId) -> Vec<usize> {
        let dims = [self.nx, self.ny];
        let (a, b) = (self.grid(src), self.grid(dst));
        let mut links = Vec::new();
        let mut at = src;
        for (dim, off) in grid::dor_legs(&dims, self.wrap, &a, &b) {
            let way = if off > 0 { Way::Plus } else { Way::Minus };
            at = self.walk(at, dim, way, off.unsigned_abs() as usize, &mut links);
        }
        links
    }

    /// Number of hops of the XY route.
    pub fn distance(&self, src: NodeId, dst: NodeId) -> usize {
        grid::distance(
            &[self.nx, self.ny],
            self.wrap,
            &self.grid(src),
            &self.grid(dst),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xy_route_wraps_and_breaks_ties_odd_even() {
        let t = Torus::new(4, 4);
        // Yuan §4.1 example: 0 → 11 on a 4×4 torus goes 0→3 (wrap, −x) then 3→7→11 (+y twice, the
        // antipodal tie from even row 0 is broken clockwise).
        let r = t.xy_route(0, 11);
        assert_eq!(
            r,
            vec![
                t.link(0, 0, Way::Minus),
                t.link(3, 1, Way::Plus),
                t.link(7, 1, Way::Plus)
            ]
        );
        assert_eq!(t.distance(0, 11), 3);
        assert_eq!(t.link_count(), 64);
        // From an odd position the tie goes the other way.
        assert_eq!(
            t.xy_route(1, 3),
            vec![t.link(1, 0, Way::Minus), t.link(0, 0, Way::Minus)]
        );
    }
}
