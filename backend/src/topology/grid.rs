//! n-dimensional meshes and tori (a line is a 1-D mesh, a ring a 1-D torus). Nodes are numbered in
//! row-major order with x varying fastest: node = x + nx·(y + ny·z).

use super::{Link, Port};

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
/// way round wins; a tie (exactly half way) goes the positive way, so routes are deterministic.
pub fn offset(a: i64, b: i64, d: usize, wrap: bool) -> i64 {
    let diff = b - a;
    if !wrap {
        return diff;
    }
    let d = d as i64;
    let fwd = diff.rem_euclid(d);
    if fwd * 2 <= d {
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

/// Dimension-order route: correct x fully, then y, then z… (Chittor's "rows first"; the fixed
/// oblivious routing both seeds compare against).
pub fn dor_path(dims: &[usize], wrap: bool, a: &[i64], b: &[i64]) -> Vec<usize> {
    let mut cur = a.to_vec();
    let mut path = Vec::new();
    if let Some(n) = index(dims, &cur) {
        path.push(n);
    }
    for (dim, &d) in dims.iter().enumerate() {
        let off = offset(cur[dim], b[dim], d, wrap);
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
