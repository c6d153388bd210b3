//! Yuan's analytic model of multi-hop TDM networks (Yuan §4.2–4.3): for a logical topology on an
//! N×N optical torus, the mean number of intermediate hops `h`, the multiplexing degree `d` and the
//! number of logical connections `P` (Table 4.1), the light-load delay, the M/D/1 delay under load and
//! the maximum throughput (Table 4.2, Figs 4.12, 4.17–4.24).
//!
//! A packet crosses `h + 1` lightpaths and `h + 2` routers. Every router is an M/D/1 queue with service
//! time γ (the packet routing time, in slots), every lightpath one with service time `d` (one slot per
//! frame of `d`):
//!
//! - routing delay `γ + λ_s γ² / (2(1 − λ_s γ))` with `λ_s = λ(h+2)`,
//! - transmission delay `(d+1)/2 + λ_p d² / (2(1 − λ_p d))` with `λ_p = λ N² (h+1) / P`,
//! - delay `= (h+2)·routing + (h+1)·transmission`; at λ → 0, `(h+2)γ + (h+1)(d+1)/2` (§4.2).
//!
//! **Conventions.** Two printed details of the thesis disagree with its own formulas (see the
//! reading notes): Table 4.1 prints `P = N² lg N` for the hypercube, but a hypercube on N² nodes has
//! `N²·lg(N²) = 2N² lg N` directed connections, and only that value reproduces Table 4.2's
//! λ_p^max — we always use `2N² lg N`. Table 4.2's router bound λ_s^max is twice the §4.3 formula
//! `1/(γ(h+2))`. [`Convention::Queueing`] (the default) uses the formula as derived, which is what the
//! M/D/1 queues imply; [`Convention::Table42`] doubles it, which reproduces Table 4.2 exactly (and the
//! §4.4 thresholds of 4, 2, 2, 1 slots per packet). Delays do not depend on the convention.

use crate::sim::optical::rca::Logical;
use crate::sim::optical::OpticalError;

/// Which router bound to print (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Convention {
    /// λ_s^max = 1/(γ(h+2)), as the M/D/1 router queue implies.
    #[default]
    Queueing,
    /// λ_s^max = 2/(γ(h+2)), as printed in Yuan's Table 4.2.
    Table42,
}

/// Table 4.1 quantities of one logical topology on an N×N torus.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TopologyParams {
    pub logical: Logical,
    /// Side of the torus.
    pub n: usize,
    /// Mean number of intermediate logical hops.
    pub h: f64,
    /// Multiplexing degree (channels) Yuan's RCA needs.
    pub d: f64,
    /// Number of logical (directed) connections.
    pub p: f64,
}

impl TopologyParams {
    /// Yuan Table 4.1 for side `n` (the hypercube needs `n` a power of two).
    pub fn yuan(logical: Logical, n: usize) -> Result<TopologyParams, OpticalError> {
        if n < 2 {
            return Err(OpticalError::Parameter(
                "the torus side must be at least 2".into(),
            ));
        }
        let nf = n as f64;
        let nodes = nf * nf;
        let (h, d, p) = match logical {
            Logical::AllToAll => (0.0, nf * nf * nf / 8.0, nodes * (nodes - 1.0)),
            Logical::AllXY => {
                let h = (nodes - 2.0 * nf + 1.0) / (nodes - 1.0);
                let d = if n > 8 { nf * nf / 8.0 } else { 2.0 * nf - 2.0 };
                (h, d, nodes * (2.0 * nf - 2.0))
            }
            Logical::Hypercube => {
                if !n.is_power_of_two() {
                    return Err(OpticalError::Parameter(format!(
                        "a logical hypercube needs a power-of-two side (got {n})"
                    )));
                }
                let r = n.trailing_zeros() as usize;
                let base = (4 * n + 3 * n) / 12; // ⌊N/3 + N/4⌋
                let d = base + if r & 1 == 0 { 1 } else { 2 };
                let lg = r as f64;
                (lg - 1.0, d as f64, 2.0 * nodes * lg)
            }
            Logical::Torus => (nf / 2.0 - 1.0, 4.0, 4.0 * nodes),
        };
        Ok(TopologyParams {
            logical,
            n,
            h,
            d,
            p,
        })
    }

    /// The same with `d` taken from an actual channel assignment (e.g. [`crate::sim::optical::rca::realize`]).
    pub fn with_degree(mut self, d: usize) -> TopologyParams {
        self.d = d as f64;
        self
    }

    fn nodes(&self) -> f64 {
        (self.n * self.n) as f64
    }

    /// Light-load delay `(h+2)γ + (h+1)(d+1)/2` (Yuan §4.2).
    pub fn light_load_delay(&self, gamma: f64) -> f64 {
        (self.h + 2.0) * gamma + (self.h + 1.0) * (self.d + 1.0) / 2.0
    }

    /// Router-bound maximum throughput λ_s^max (packets/node/slot).
    pub fn router_bound(&self, gamma: f64, conv: Convention) -> f64 {
        let k = match conv {
            Convention::Queueing => 1.0,
            Convention::Table42 => 2.0,
        };
        k / (gamma * (self.h + 2.0))
    }

    /// Path-bound maximum throughput λ_p^max = P / ((h+1) N² d).
    pub fn path_bound(&self) -> f64 {
        self.p / ((self.h + 1.0) * self.nodes() * self.d)
    }

    /// λ^max = min(λ_s^max, λ_p^max) (Yuan §4.3).
    pub fn max_throughput(&self, gamma: f64, conv: Convention) -> f64 {
        self.router_bound(gamma, conv).min(self.path_bound())
    }

    /// M/D/1 mean delay at offered load λ (packets/node/slot), or `None` beyond saturation.
    pub fn delay(&self, gamma: f64, lambda: f64) -> Option<f64> {
        let ls = lambda * (self.h + 2.0);
        let lp = lambda * self.nodes() * (self.h + 1.0) / self.p;
        let rs = ls * gamma;
        let rp = lp * self.d;
        if rs >= 1.0 || rp >= 1.0 {
            return None;
        }
        let routing = gamma + ls * gamma * gamma / (2.0 * (1.0 - rs));
        let transmission = (self.d + 1.0) / 2.0 + lp * self.d * self.d / (2.0 * (1.0 - rp));
        Some((self.h + 2.0) * routing + (self.h + 1.0) * transmission)
    }
}

/// Yuan Table 4.1 for every logical topology that exists on side `n` (the hypercube only for powers
/// of two), in the order all-to-all, allXY, hypercube, torus.
pub fn table_4_1(n: usize) -> Vec<TopologyParams> {
    Logical::ALL
        .iter()
        .filter_map(|&l| TopologyParams::yuan(l, n).ok())
        .collect()
}

/// The γ ranges in which each topology has the lowest light-load delay (Yuan Fig 4.12): pairs
/// `(from γ, topology)`, starting at γ = 0. The delays are linear in γ, so this is their lower
/// envelope.
pub fn best_by_gamma(params: &[TopologyParams]) -> Vec<(f64, Logical)> {
    let line = |p: &TopologyParams| (p.h + 2.0, (p.h + 1.0) * (p.d + 1.0) / 2.0); // (slope, intercept)
    let mut out = Vec::new();
    let Some(mut cur) = params.iter().min_by(|a, b| {
        let (sa, ia) = line(a);
        let (sb, ib) = line(b);
        ia.total_cmp(&ib).then(sa.total_cmp(&sb))
    }) else {
        return out;
    };
    let mut from = 0.0;
    out.push((from, cur.logical));
    loop {
        let (sc, ic) = line(cur);
        // The first line with a smaller slope to cross below the current one.
        let next = params
            .iter()
            .filter_map(|p| {
                let (s, i) = line(p);
                (s < sc).then(|| ((i - ic) / (sc - s), p))
            })
            .filter(|(g, _)| *g >= from)
            .min_by(|a, b| {
                a.0.total_cmp(&b.0)
                    .then(line(a.1).0.total_cmp(&line(b.1).0))
            });
        match next {
            Some((g, p)) => {
                from = g;
                cur = p;
                out.push((g, p.logical));
            }
            None => return out,
        }
    }
}

/// The best topology (lowest M/D/1 delay) at load λ and routing time γ, if any is below saturation.
pub fn best_at(params: &[TopologyParams], gamma: f64, lambda: f64) -> Option<(Logical, f64)> {
    params
        .iter()
        .filter_map(|p| p.delay(gamma, lambda).map(|d| (p.logical, d)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_tends_to_light_load_delay() {
        let p = TopologyParams::yuan(Logical::Hypercube, 16).unwrap();
        let light = p.light_load_delay(1.0);
        let near = p.delay(1.0, 1e-9).unwrap();
        assert!((light - near).abs() < 1e-6);
        assert!(p.delay(1.0, 1.0).is_none());
    }
}
