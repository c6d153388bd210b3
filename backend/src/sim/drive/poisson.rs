//! Poisson arrivals with uniform destinations: the open-loop traffic of Yuan's optical models
//! (§3.3, "messages arrive at each node following a Poisson process, destinations uniformly
//! distributed over the other nodes"), which the path-reservation and multi-hop models are
//! measured under.
//!
//! Every node keeps a real-valued clock of its next arrival, advanced by exponential gaps of mean
//! `1/rate`; an arrival happens in the slot its clock falls in (several may share one). The
//! arrivals sit in the [`EventQueue`] every model runs under, so a driver can jump over idle
//! slots, and they come out by slot, then by node, each node's arrivals of one slot together:
//! one random stream (one generator, gaps and destinations interleaved in that order) whatever
//! the model does between slots.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::sim::event::EventQueue;
use crate::sim::options::ModelError;
use crate::sim::Packet;
use crate::topology::NodeId;

/// The arrival process of `nodes` Poisson sources.
#[derive(Clone, Debug)]
pub struct PoissonArrivals {
    nodes: usize,
    rate: f64,
    rng: ChaCha8Rng,
    /// Per node: the real time of its next arrival.
    clock: Vec<f64>,
    /// `(slot of the next arrival, node)`.
    next: EventQueue<usize>,
    /// Arrivals so far (the next packet's id).
    count: u64,
}

impl PoissonArrivals {
    /// `rate` arrivals per node per slot on `nodes ≥ 2` nodes, drawn from `seed`.
    pub fn new(nodes: usize, rate: f64, seed: u64) -> Result<PoissonArrivals, ModelError> {
        if nodes < 2 || rate <= 0.0 || !rate.is_finite() {
            return Err(ModelError(
                "Poisson traffic needs at least two nodes and a positive rate".into(),
            ));
        }
        let mut a = PoissonArrivals {
            nodes,
            rate,
            rng: ChaCha8Rng::seed_from_u64(seed),
            clock: Vec::with_capacity(nodes),
            next: EventQueue::new(),
            count: 0,
        };
        for n in 0..nodes {
            let c = a.gap();
            a.clock.push(c);
            a.next.push(c as u64, n);
        }
        Ok(a)
    }

    /// An exponential gap of mean `1/rate` (inversion of `1 − u`, `u` uniform in [0, 1)).
    fn gap(&mut self) -> f64 {
        let u: f64 = self.rng.random();
        -(1.0 - u).ln() / self.rate
    }

    /// The slot of the next arrival.
    pub fn next_time(&self) -> Option<u64> {
        self.next.next_time()
    }

    /// Arrivals so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Hands every arrival due by slot `now` to `arrive` as a packet of `size` created at `now`
    /// (ids count up from 0), its destination uniform over the nodes other than its source.
    pub fn due(&mut self, now: u64, size: u64, mut arrive: impl FnMut(Packet)) {
        while let Some((_, src)) = self.next.pop_due(now) {
            let mut dst: NodeId = self.rng.random_range(0..self.nodes - 1);
            if dst >= src {
                dst += 1;
            }
            arrive(Packet {
                id: self.count,
                src,
                dst,
                size,
                created: now,
            });
            self.count += 1;
            self.clock[src] += self.gap();
            self.next.push(self.clock[src] as u64, src);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrivals_follow_the_rate_and_never_send_to_themselves() {
        let mut a = PoissonArrivals::new(4, 0.25, 7).unwrap();
        let mut got = Vec::new();
        for now in 0..4000 {
            a.due(now, 1, |p| got.push(p));
        }
        assert!(got.iter().all(|p| p.src != p.dst && p.dst < 4));
        // 4 nodes × 4000 slots × 0.25: about 4000 arrivals.
        assert!((3700..4300).contains(&got.len()), "{}", got.len());
        assert_eq!(a.count(), got.len() as u64);
        assert!(got.windows(2).all(|w| w[0].created <= w[1].created));
        assert!(PoissonArrivals::new(1, 0.5, 0).is_err());
        assert!(PoissonArrivals::new(4, 0.0, 0).is_err());
        assert!(PoissonArrivals::new(4, f64::NAN, 0).is_err());
    }

    /// Skipping idle slots (jumping to the next arrival) gives the same arrivals as visiting
    /// every slot: the stream does not depend on how the driver steps.
    #[test]
    fn jumping_to_the_next_arrival_changes_nothing() {
        let mut every = PoissonArrivals::new(5, 0.05, 3).unwrap();
        let mut jump = every.clone();
        let mut a = Vec::new();
        for now in 0..2000 {
            every.due(now, 2, |p| a.push(p));
        }
        let mut b = Vec::new();
        let mut now = 0;
        while now < 2000 {
            jump.due(now, 2, |p| b.push(p));
            now = jump.next_time().unwrap_or(2000).max(now + 1);
        }
        assert_eq!(a, b);
    }
}
