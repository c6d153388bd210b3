//! Latency summaries shared by the execution-driven and synthetic modes.

use serde::{Deserialize, Serialize};

/// Mean, percentiles (nearest rank) and maximum of a set of latencies, in cycles.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: usize,
    pub mean: f64,
    pub p50: u64,
    pub p95: u64,
    pub p99: u64,
    pub max: u64,
}

impl LatencySummary {
    pub fn of(latencies: &[u64]) -> LatencySummary {
        if latencies.is_empty() {
            return LatencySummary::default();
        }
        let mut v = latencies.to_vec();
        v.sort_unstable();
        let n = v.len();
        // Nearest rank: the smallest value with at least p% of the sample at or below it.
        let rank = |p: u64| {
            let r = (p as usize * n).div_ceil(100).max(1);
            v[(r - 1).min(n - 1)]
        };
        let sum: u128 = v.iter().map(|&x| x as u128).sum();
        LatencySummary {
            count: n,
            mean: sum as f64 / n as f64,
            p50: rank(50),
            p95: rank(95),
            p99: rank(99),
            max: v[n - 1],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let s = LatencySummary::of(&(1..=100).collect::<Vec<u64>>());
        assert_eq!((s.p50, s.p95, s.p99, s.max), (50, 95, 99, 100));
        assert_eq!(s.mean, 50.5);
        assert_eq!(LatencySummary::of(&[]).count, 0);
        assert_eq!(LatencySummary::of(&[7]).p99, 7);
    }
}
