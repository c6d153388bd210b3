//! Synthetic-traffic mode: every node injects packets at a rate (packets per node per cycle,
//! Bernoulli or Poisson) to destinations drawn from a pattern, through a warm-up, a measurement
//! window and a drain; reports latency (mean, percentiles) of the packets created in the window
//! and the accepted throughput over it — the latency-against-load curves of Chittor ch.5 and
//! Dally & Towles.
//!
//! The warm-up lasts until the network reaches its steady state, not a fixed time: it runs in
//! periods of `warmup` cycles and ends after the first period whose mean latency (of the packets
//! delivered in it) is within [`SETTLED`] of the period before — the test BookSim2 applies
//! between its warm-up sample periods (Jiang et al. 2013). Near saturation queues fill for
//! thousands of cycles, and a fixed 1,000-cycle warm-up measures the filling: the router model at
//! 0.04 packets/node/cycle on an 8×8 mesh read 79.6 cycles after 1,000 cycles and 72.4 after
//! 10,000 (BookSim2: 70.8). A network that never settles (past saturation) stops warming after
//! [`WARMUP_PERIODS`] periods and is measured as it is; its window packets then do not all
//! arrive, which the result reports.
//!
//! Patterns (N nodes, b = log2 N bits when N is a power of two): `uniform` (any other node),
//! `transpose` ((x,y)→(y,x) on a square 2-D grid, else swap the halves of the bits; Chittor
//! §4.2.3), `bit-reversal`, `shuffle` (rotate bits left), `tornado` (each coordinate + ⌈k/2⌉−1
//! mod k), `neighbour` (each coordinate + 1 mod k), `hotspot` (a fraction `hot` of packets to one
//! node, the rest uniform). A node whose pattern destination is itself stays idle, as the diagonal
//! does in Chittor's transpose.

use std::fmt;
use std::str::FromStr;
use ttdl_ir::limits::Limits;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::topology::{Kind, Network, NodeId};

use crate::sim::event::{next_cycle, EventQueue};
use crate::sim::options::ModelError;
use crate::sim::stats::LatencySummary;
use crate::sim::{Delivery, NetworkModel, Packet};

/// The relative change of the mean latency from one warm-up period to the next below which the
/// network counts as settled (BookSim2's `warmup_threshold` default).
pub const SETTLED: f64 = 0.05;

/// The most warm-up periods a run takes before it is measured anyway.
pub const WARMUP_PERIODS: u64 = 50;

/// Where packets go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    Uniform,
    Transpose,
    BitReversal,
    Shuffle,
    Tornado,
    Neighbour,
    Hotspot,
}

impl Pattern {
    pub const ALL: [Pattern; 7] = [
        Pattern::Uniform,
        Pattern::Transpose,
        Pattern::BitReversal,
        Pattern::Shuffle,
        Pattern::Tornado,
        Pattern::Neighbour,
        Pattern::Hotspot,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Pattern::Uniform => "uniform",
            Pattern::Transpose => "transpose",
            Pattern::BitReversal => "bit-reversal",
            Pattern::Shuffle => "shuffle",
            Pattern::Tornado => "tornado",
            Pattern::Neighbour => "neighbour",
            Pattern::Hotspot => "hotspot",
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Pattern {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = match s {
            "neighbor" => "neighbour",
            "bitrev" | "bit-reverse" => "bit-reversal",
            other => other,
        };
        Pattern::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                let names = Pattern::ALL.map(|p| p.name());
                let hint = ttdl_ir::settings::did_you_mean(s, names.into_iter())
                    .map(|n| format!(": did you mean `{n}`?"))
                    .unwrap_or_default();
                ModelError(format!(
                    "unknown traffic pattern `{s}`{hint} (the patterns are {})",
                    names.join(", ")
                ))
            })
    }
}

/// How packets are injected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Injection {
    /// Each cycle, each node injects one packet with probability `rate`.
    Bernoulli,
    /// Packets arrive as a Poisson process of `rate` per cycle (several may share a cycle).
    Poisson,
    /// Chittor's closed loop (§5.2 shell): each node computes for U[0, 2t] cycles, sends one
    /// packet, waits until it is delivered, and repeats; `t = 1/rate − size`, so the applied
    /// load is λ_a = L/(t+L) = rate·L flits per cycle (§5.5).
    Closed,
}

impl FromStr for Injection {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "bernoulli" => Ok(Injection::Bernoulli),
            "poisson" => Ok(Injection::Poisson),
            "closed" => Ok(Injection::Closed),
            _ => Err(ModelError(format!(
                "unknown injection process `{s}`; expected bernoulli, poisson or closed"
            ))),
        }
    }
}

/// One synthetic run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SyntheticConfig {
    pub pattern: Pattern,
    pub injection: Injection,
    /// Packets per node per cycle.
    pub rate: f64,
    /// Words (flits) per packet.
    pub size: u64,
    /// The warm-up period in cycles: the warm-up takes at least two and ends when the mean latency
    /// settles (see the module's documentation).
    pub warmup: u64,
    pub measure: u64,
    /// Cycles allowed after the window for the measured packets to arrive.
    pub drain: u64,
    /// Hotspot node and the fraction of packets sent to it.
    pub hot_node: NodeId,
    pub hot_fraction: f64,
    pub seed: u64,
}

impl Default for SyntheticConfig {
    fn default() -> Self {
        SyntheticConfig {
            pattern: Pattern::Uniform,
            injection: Injection::Bernoulli,
            rate: 0.01,
            size: 8,
            warmup: 1_000,
            measure: 10_000,
            drain: 50_000,
            hot_node: 0,
            hot_fraction: 0.1,
            seed: 1,
        }
    }
}

/// What a synthetic run measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SyntheticResult {
    pub model: String,
    pub pattern: Pattern,
    /// Offered load: packets per active node per cycle, and the same in flits.
    pub offered: f64,
    pub offered_flits: f64,
    /// Accepted throughput in the window: flits delivered per active node per cycle.
    pub accepted_flits: f64,
    /// The least any active node got delivered, in flits per cycle (Chittor's "worst node").
    pub worst_node_flits: f64,
    /// Latency (creation to full delivery, source queueing included) of window packets.
    pub latency: LatencySummary,
    /// Nodes that inject (a pattern may leave some idle).
    pub active_nodes: usize,
    pub injected: u64,
    /// Window packets still undelivered when the drain ran out (the network saturated).
    pub unfinished: u64,
    /// Cycles simulated.
    pub cycles: u64,
    /// Cycles the warm-up took before the window opened (a multiple of the warm-up period).
    #[serde(default)]
    pub warmup_cycles: u64,
}

/// The destination of a packet from `src`, or `None` when the pattern leaves `src` idle.
pub fn destination(
    net: &Network,
    pattern: Pattern,
    src: NodeId,
    cfg: &SyntheticConfig,
    rng: &mut ChaCha8Rng,
) -> Result<Option<NodeId>, ModelError> {
    // Sources and destinations are the processors' nodes (an anynet network's routers, numbered
    // after its terminals, neither send nor receive, as in BookSim2).
    let n = net.spec.terminals();
    let bits = n.trailing_zeros();
    let pow2 = n.is_power_of_two();
    let need_pow2 = |what: &str| {
        ModelError(format!(
            "the {what} pattern needs a power-of-two number of nodes, not {n}"
        ))
    };
    let grid = matches!(
        net.spec.kind,
        Kind::Mesh | Kind::Torus | Kind::Ring | Kind::Line
    );
    let uniform = |rng: &mut ChaCha8Rng| {
        if n < 2 {
            return None;
        }
        let d = rng.random_range(0..n - 1);
        Some(if d >= src { d + 1 } else { d })
    };
    let dst = match pattern {
        Pattern::Uniform => uniform(rng),
        Pattern::Hotspot => {
            if rng.random::<f64>() < cfg.hot_fraction {
                Some(cfg.hot_node.min(n.saturating_sub(1)))
            } else {
                uniform(rng)
            }
        }
        Pattern::Transpose => {
            let d = &net.spec.dims;
            if grid && d.len() == 2 && d[0] == d[1] {
                let c = &net.coords[src];
                net.node_at(&[c[1], c[0]])
            } else if pow2 && bits.is_multiple_of(2) {
                let h = bits / 2;
                let lo = src & ((1 << h) - 1);
                Some((lo << h) | (src >> h))
            } else {
                return Err(ModelError(
                    "the transpose pattern needs a square 2-D grid or 4^k nodes".into(),
                ));
            }
        }
        Pattern::BitReversal => {
            if !pow2 {
                return Err(need_pow2("bit-reversal"));
            }
            Some((0..bits).fold(0, |acc, b| acc | (((src >> b) & 1) << (bits - 1 - b))))
        }
        Pattern::Shuffle => {
            if !pow2 {
                return Err(need_pow2("shuffle"));
            }
            if bits == 0 {
                Some(src)
            } else {
                Some(((src << 1) | (src >> (bits - 1))) & (n - 1))
            }
        }
        Pattern::Tornado | Pattern::Neighbour => {
            if !grid {
                return Err(ModelError(format!(
                    "the {pattern} pattern needs a mesh, torus, ring or line"
                )));
            }
            let c: Vec<i64> = net.coords[src]
                .iter()
                .zip(&net.spec.dims)
                .map(|(&x, &k)| {
                    let k = k as i64;
                    let shift = if pattern == Pattern::Tornado {
                        (k + 1) / 2 - 1
                    } else {
                        1
                    };
                    (x + shift).rem_euclid(k)
                })
                .collect();
            net.node_at(&c)
        }
    };
    Ok(dst.filter(|&d| d != src))
}

/// Runs synthetic traffic on `model` over `net`.
pub fn run(
    net: &Network,
    model: &mut dyn NetworkModel,
    cfg: &SyntheticConfig,
) -> Result<SyntheticResult, ModelError> {
    if cfg.rate.is_nan() || cfg.rate < 0.0 || !cfg.rate.is_finite() {
        return Err(ModelError(format!(
            "injection rate {} is not a rate",
            cfg.rate
        )));
    }
    if cfg.injection == Injection::Bernoulli && cfg.rate > 1.0 {
        return Err(ModelError(format!(
            "a Bernoulli injection rate is a probability per cycle; {} is above 1 (use poisson)",
            cfg.rate
        )));
    }
    let n = net.spec.terminals();
    let size = cfg.size.max(1);
    let period = cfg.warmup.max(1);
    let most_warmup = period.saturating_mul(WARMUP_PERIODS);
    // The latest the window can close (the warm-up ran every period).
    let last_inject = most_warmup.checked_add(cfg.measure).ok_or_else(|| {
        ModelError(format!(
            "warm-up {} plus measurement window {} cycles is too long",
            cfg.warmup, cfg.measure
        ))
    })?;
    // Checked on the shortest run (two warm-up periods); a longer warm-up is the network's doing.
    let end_inject = period.saturating_mul(2).saturating_add(cfg.measure);
    // Every node offers at most `rate` packets a cycle (the closed loop fewer).
    let packets = n as f64 * cfg.rate * end_inject as f64;
    if packets > Limits::SIM_PACKETS || packets * size as f64 > Limits::SIM_FLITS {
        return Err(ModelError(format!(
            "this run would inject about {packets:.3e} packets of {size} flits, more than a \
             simulation can finish (at most {0:.0e} packets and {1:.0e} flits); \
             lower the rate, the packet size or the measurement window",
            Limits::SIM_PACKETS,
            Limits::SIM_FLITS
        )));
    }
    if cfg.pattern == Pattern::Hotspot && (cfg.hot_node >= n) {
        return Err(ModelError(format!(
            "hotspot node {} is not a node of {} ({n} nodes, numbered from 0)",
            cfg.hot_node, net.spec
        )));
    }
    if !(0.0..=1.0).contains(&cfg.hot_fraction) {
        return Err(ModelError(format!(
            "hotspot fraction {} is not between 0 and 1",
            cfg.hot_fraction
        )));
    }
    let mut rngs: Vec<ChaCha8Rng> = (0..n)
        .map(|i| {
            let mut r = ChaCha8Rng::seed_from_u64(cfg.seed);
            r.set_stream(i as u64);
            r
        })
        .collect();
    // Which nodes inject at all (fixed patterns leave some idle).
    let mut active = vec![false; n];
    for (s, a) in active.iter_mut().enumerate() {
        let mut probe = ChaCha8Rng::seed_from_u64(0);
        *a = destination(net, cfg.pattern, s, cfg, &mut probe)?.is_some()
            || n > 1 && { matches!(cfg.pattern, Pattern::Uniform | Pattern::Hotspot) };
    }
    let active_nodes = active.iter().filter(|&&a| a).count();
    // Until the warm-up ends, the window's place is unknown: `warm_end` and `end_inject` are set
    // when it settles.
    let mut warm_end: Option<u64> = None;
    let mut end_inject = last_inject;
    let mut end = end_inject.saturating_add(cfg.drain);
    // Latency sum and count of the packets delivered in the current warm-up period, and the mean
    // of the period before.
    let mut period_sum = 0u64;
    let mut period_count = 0u64;
    let mut previous_mean: Option<f64> = None;
    let mut periods = 0u64;

    // Next arrival per node, as a real time (cycle = floor).
    let gap = |rng: &mut ChaCha8Rng| -> f64 {
        if cfg.rate <= 0.0 {
            return f64::INFINITY;
        }
        let u: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
        match cfg.injection {
            Injection::Closed => {
                let think = (1.0 / cfg.rate - size as f64).max(0.0).round() as u64;
                rng.random_range(0..=2 * think) as f64
            }
            Injection::Poisson => -u.ln() / cfg.rate,
            Injection::Bernoulli => {
                if cfg.rate >= 1.0 {
                    1.0
                } else {
                    (u.ln() / (1.0 - cfg.rate).ln()).floor() + 1.0
                }
            }
        }
    };
    let mut next: Vec<f64> = vec![f64::INFINITY; n];
    let mut heap: EventQueue<usize> = EventQueue::new();
    for s in 0..n {
        if active[s] {
            let g = gap(&mut rngs[s]);
            // Bernoulli: the first success of trials at cycles 0, 1, … is at cycle g − 1.
            next[s] = if cfg.injection == Injection::Bernoulli {
                g - 1.0
            } else {
                g
            };
            if next[s] < end_inject as f64 {
                heap.push(next[s] as u64, s);
            }
        }
    }

    let closed = cfg.injection == Injection::Closed;
    let mut outstanding = vec![false; n];
    // Creation cycle, source, and whether the packet was created in the measurement window.
    let mut created: Vec<(u64, NodeId, bool)> = Vec::new();
    let mut measured_pending: u64 = 0;
    let mut latencies: Vec<u64> = Vec::new();
    let mut delivered_by_src = vec![0u64; n];
    let mut delivered: Vec<Delivery> = Vec::new();
    let mut t = 0u64;
    loop {
        // The warm-up periods that ended by cycle t: settle, or warm for another period.
        while warm_end.is_none() && t >= (periods + 1).saturating_mul(period) {
            periods += 1;
            let mean = (period_count > 0).then(|| period_sum as f64 / period_count as f64);
            let settled = match (previous_mean, mean) {
                (Some(p), Some(m)) => (m - p).abs() <= SETTLED * m,
                // Nothing delivered in either period: an idle network is as settled as it gets.
                (None, None) => periods >= 2,
                _ => false,
            };
            if settled || periods >= WARMUP_PERIODS {
                let start = periods.saturating_mul(period);
                warm_end = Some(start);
                end_inject = start.saturating_add(cfg.measure);
                end = end_inject.saturating_add(cfg.drain);
            }
            previous_mean = mean;
            period_sum = 0;
            period_count = 0;
        }
        while let Some((c, s)) = heap.pop_due(t) {
            if c >= end_inject {
                // Scheduled while the window's end was not yet known.
                continue;
            }
            if let Some(dst) = destination(net, cfg.pattern, s, cfg, &mut rngs[s])? {
                let id = created.len() as u64;
                let measured = warm_end.is_some_and(|w| c >= w);
                created.push((c, s, measured));
                outstanding[s] = true;
                if measured {
                    measured_pending += 1;
                }
                model.inject(
                    c,
                    Packet {
                        id,
                        src: s,
                        dst,
                        size,
                        created: c,
                    },
                );
            }
            if closed && outstanding[s] {
                // The next send waits for this packet's delivery.
                continue;
            }
            next[s] += gap(&mut rngs[s]);
            if next[s] < end_inject as f64 {
                heap.push(next[s] as u64, s);
            }
        }
        if model.next_event(t).is_some_and(|e| e <= t) {
            delivered.clear();
            model.step(t, &mut delivered);
            for d in &delivered {
                let Some(&(c, s, measured)) = created.get(d.packet as usize) else {
                    continue;
                };
                if measured {
                    measured_pending -= 1;
                    latencies.push(d.at - c);
                }
                if warm_end.is_none() {
                    period_sum += d.at - c;
                    period_count += 1;
                }
                // Accepted throughput counts flits that finished arriving inside the window.
                if warm_end.is_some_and(|w| d.at > w) && d.at <= end_inject {
                    delivered_by_src[s] += size;
                }
                if closed {
                    outstanding[s] = false;
                    next[s] = d.at as f64 + gap(&mut rngs[s]);
                    if next[s] < end_inject as f64 {
                        heap.push(next[s] as u64, s);
                    }
                }
            }
        }
        if warm_end.is_some() && t + 1 >= end_inject && measured_pending == 0 {
            t += 1;
            break;
        }
        // While warming, the end of the current period is an event too (an idle network
        // still has to reach it).
        let period_end = warm_end
            .is_none()
            .then(|| (periods + 1).saturating_mul(period));
        let nt = match next_cycle(
            next_cycle(heap.next_time(), model.next_event(t + 1)),
            period_end,
        ) {
            Some(x) => x,
            None => {
                t += 1;
                break;
            }
        };
        if nt >= end {
            t = end;
            break;
        }
        t = nt.max(t + 1);
    }
    let window = cfg.measure.max(1) as f64;
    let act = active_nodes.max(1) as f64;
    let total: u64 = delivered_by_src.iter().sum();
    let worst = (0..n)
        .filter(|&s| active[s])
        .map(|s| delivered_by_src[s] as f64 / window)
        .fold(f64::INFINITY, f64::min);
    let name = model.name();
    Ok(SyntheticResult {
        model: name,
        pattern: cfg.pattern,
        offered: cfg.rate,
        offered_flits: cfg.rate * size as f64,
        accepted_flits: total as f64 / (act * window),
        worst_node_flits: if worst.is_finite() { worst } else { 0.0 },
        latency: LatencySummary::of(&latencies),
        active_nodes,
        injected: created.len() as u64,
        unfinished: measured_pending,
        cycles: t,
        warmup_cycles: warm_end.unwrap_or(t),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_pattern_gets_the_closest_name() {
        let e = "unifrom".parse::<Pattern>().unwrap_err().0;
        assert!(e.contains("did you mean `uniform`?"), "{e}");
        let e = "zigzag".parse::<Pattern>().unwrap_err().0;
        assert!(!e.contains("did you mean") && e.contains("tornado"), "{e}");
    }

    /// Settings a user can type that would overflow, never finish or silently mean something
    /// else are refused with a message.
    #[test]
    fn impossible_runs_are_refused() {
        let net = Network::build(&"mesh:2x2".parse().unwrap()).unwrap();
        let ctx = crate::sim::registry::ModelContext::new(&net);
        let mut model = crate::sim::registry::build("wormhole", &ctx).unwrap();
        let base = SyntheticConfig::default();
        let bad = [
            SyntheticConfig {
                measure: u64::MAX,
                ..base.clone()
            },
            SyntheticConfig {
                injection: Injection::Poisson,
                rate: 1e9,
                ..base.clone()
            },
            SyntheticConfig {
                size: u64::MAX,
                ..base.clone()
            },
            SyntheticConfig {
                pattern: Pattern::Hotspot,
                hot_node: 4,
                ..base.clone()
            },
            SyntheticConfig {
                hot_fraction: 2.0,
                ..base.clone()
            },
        ];
        for cfg in bad {
            let e = run(&net, model.as_mut(), &cfg).unwrap_err();
            assert!(!e.0.is_empty());
        }
        let quiet = SyntheticConfig {
            rate: 0.0,
            measure: u64::MAX / 2,
            ..base
        };
        assert!(run(&net, model.as_mut(), &quiet).is_ok());
    }

    #[test]
    fn permutations_on_an_8x8_mesh() {
        let net = Network::build(&"mesh:8x8".parse().unwrap()).unwrap();
        let cfg = SyntheticConfig::default();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut d = |p, s| destination(&net, p, s, &cfg, &mut rng).unwrap();
        assert_eq!(d(Pattern::Transpose, 1), Some(8));
        assert_eq!(d(Pattern::Transpose, 9), None);
        assert_eq!(d(Pattern::BitReversal, 1), Some(32));
        assert_eq!(d(Pattern::Shuffle, 33), Some(3));
        assert_eq!(d(Pattern::Tornado, 0), Some(3 + 3 * 8));
        assert_eq!(d(Pattern::Neighbour, 7), Some(8));
        let u = d(Pattern::Uniform, 5).unwrap();
        assert!(u != 5 && u < 64);
    }
}
