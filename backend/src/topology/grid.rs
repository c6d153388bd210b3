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
