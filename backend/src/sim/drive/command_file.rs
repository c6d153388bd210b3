//! Command-file workloads of Ding et al. §5 and a small driver that runs them on any
//! [`NetworkModel`]: each processor works through its own list of messages, in order, keeping at
//! most `window` of them in the network at once (1 = the next message is sent when the previous one
//! has arrived; the paper's processors are "packet generators driven by a command file listing the
//! type and order of communications").
//!
//! The paper does not give the mesh arrangement, the number of rounds or the all-to-all order; the
//! choices here are: 128 processors as an 8×16 torus (row-major), `rounds` visits to the four
//! neighbours, all-to-all by increasing offset (i → i+1, i+2, …), 16 random-neighbour messages
//! after it in Two Phase, and the Hybrid's "specific processors" are the four torus neighbours.
//! [`commands_on_grid`] makes the same patterns for a mesh network, whose edge nodes have only
//! the neighbours inside it.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::sim::{Delivery, NetworkModel, Packet};
use crate::topology::NodeId;

/// Per processor, its messages in order as (destination, size in words).
pub type CommandFile = Vec<Vec<(NodeId, u64)>>;

/// Ding et al. §5 test patterns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Processor 0 sends one message to every other processor.
    Scatter,
    /// Every processor sends to its four mesh neighbours, `rounds` times, in a random order.
    RandomMesh,
    /// Every processor sends to its four mesh neighbours in the fixed order E, W, N, S.
    OrderedMesh,
    /// An all-to-all, then 16 random-neighbour messages.
    TwoPhase,
    /// `percent` % of the messages go to the four fixed neighbours, the rest to random processors.
    Hybrid { percent: u32 },
}

impl Pattern {
    pub fn name(self) -> String {
        match self {
            Pattern::Scatter => "scatter".into(),
            Pattern::RandomMesh => "random-mesh".into(),
            Pattern::OrderedMesh => "ordered-mesh".into(),
            Pattern::TwoPhase => "two-phase".into(),
            Pattern::Hybrid { percent } => format!("hybrid-{percent}"),
        }
    }
}

/// The four torus neighbours (E, W, N, S) of `i` on a `cols`-wide arrangement of `n` nodes.
pub fn mesh_neighbours(n: usize, cols: usize, i: NodeId) -> [NodeId; 4] {
    let cols = cols.clamp(1, n.max(1));
    let rows = n.div_ceil(cols).max(1);
    let (x, y) = (i % cols, i / cols);
    let at = |x: usize, y: usize| (y * cols + x) % n;
    [
        at((x + 1) % cols, y),
        at((x + cols - 1) % cols, y),
        at(x, (y + 1) % rows),
        at(x, (y + rows - 1) % rows),
    ]
}

/// The neighbours of `i` on a `cols`-wide arrangement of `n` nodes: the four torus neighbours
/// (E, W, N, S) when `wrap`, else those of them inside the mesh, in the same order.
pub fn grid_neighbours(n: usize, cols: usize, i: NodeId, wrap: bool) -> Vec<NodeId> {
    if wrap {
        return mesh_neighbours(n, cols, i).to_vec();
    }
    let cols = cols.clamp(1, n.max(1));
    let rows = n.div_ceil(cols).max(1);
    let (x, y) = (i % cols, i / cols);
    let mut nb = Vec::with_capacity(4);
    if x + 1 < cols && i + 1 < n {
        nb.push(i + 1);
    }
    if x > 0 {
        nb.push(i - 1);
    }
    if y + 1 < rows && i + cols < n {
        nb.push(i + cols);
    }
    if y > 0 {
        nb.push(i - cols);
    }
    nb
}

/// The command file of a pattern on `n` processors, messages of `size` words.
pub fn commands(pattern: Pattern, n: usize, size: u64, rounds: usize, seed: u64) -> CommandFile {
    let cols = if n >= 16 { 16 } else { n.max(1) };
    commands_on_grid(pattern, n, cols, true, size, rounds, seed)
}

/// [`commands`] on a `cols`-wide grid, its neighbours those of a torus (`wrap`, as [`commands`]
/// uses) or of a mesh, where edge nodes have only two or three (the patterns for a network of
/// that shape: a processor's neighbours are then one link away).
pub fn commands_on_grid(
    pattern: Pattern,
    n: usize,
    cols: usize,
    wrap: bool,
    size: u64,
    rounds: usize,
    seed: u64,
) -> CommandFile {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut files: CommandFile = vec![Vec::new(); n];
    match pattern {
        Pattern::Scatter => {
            if let Some(root) = files.first_mut() {
                root.extend((1..n).map(|d| (d, size)));
            }
        }
        Pattern::OrderedMesh | Pattern::RandomMesh => {
            for (i, file) in files.iter_mut().enumerate() {
                for _ in 0..rounds {
                    let mut nb = grid_neighbours(n, cols, i, wrap);
                    if pattern == Pattern::RandomMesh {
                        nb.shuffle(&mut rng);
                    }
                    file.extend(nb.iter().filter(|&&d| d != i).map(|&d| (d, size)));
                }
            }
        }
        Pattern::TwoPhase => {
            for (i, file) in files.iter_mut().enumerate() {
                file.extend((1..n).map(|k| ((i + k) % n, size)));
                for _ in 0..16 {
                    let nb = grid_neighbours(n, cols, i, wrap);
                    if nb.is_empty() {
                        continue;
                    }
                    let d = nb[rng.random_range(0..nb.len())];
                    if d != i {
                        file.push((d, size));
                    }
                }
            }
        }
        Pattern::Hybrid { percent } => {
            for (i, file) in files.iter_mut().enumerate() {
                let nb = grid_neighbours(n, cols, i, wrap);
                for k in 0..4 * rounds {
                    let d = if rng.random_range(0..100) < percent && !nb.is_empty() {
                        nb[k % nb.len()]
                    } else {
                        rng.random_range(0..n)
                    };
                    if d != i {
                        file.push((d, size));
                    }
                }
            }
        }
    }
    files
}

/// The busiest port's words, sent or received: the completion time of the command files at full
/// link rate, against which a run's efficiency is measured.
pub fn busiest_port_words(files: &CommandFile) -> u64 {
    let n = files
        .iter()
        .flatten()
        .map(|&(d, _)| d + 1)
        .chain([files.len()])
        .max()
        .unwrap_or(0);
    let mut sent = vec![0u64; n];
    let mut recv = vec![0u64; n];
    for (s, f) in files.iter().enumerate() {
        for &(d, w) in f {
            sent[s] += w;
            recv[d] += w;
        }
    }
    sent.into_iter().chain(recv).max().unwrap_or(0)
}

/// Every (source, destination) in order of first use: the k-th message of every node before the
/// (k+1)-th of any (the order a compiler would see the connections in).
pub fn pairs_in_order(files: &CommandFile) -> Vec<(NodeId, NodeId)> {
    let longest = files.iter().map(|f| f.len()).max().unwrap_or(0);
    (0..longest)
        .flat_map(|k| {
            files
                .iter()
                .enumerate()
                .filter_map(move |(s, f)| f.get(k).map(|&(d, _)| (s, d)))
        })
        .collect()
}

/// What a driven run measured.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Cycle the last message arrived.
    pub completion: u64,
    pub messages: u64,
    pub words: u64,
    /// Sum over messages of (arrival − hand-over).
    pub total_latency: u64,
    /// Messages still undelivered when the run stopped (a model fault or the cycle limit).
    pub stuck: u64,
}

impl RunStats {
    pub fn mean_latency(&self) -> f64 {
        if self.messages == 0 {
            0.0
        } else {
            self.total_latency as f64 / self.messages as f64
        }
    }
}

/// Runs a command file on `model`, at most `window` messages per processor in flight, stopping
/// at `limit` cycles at the latest.
pub fn drive(
    model: &mut dyn NetworkModel,
    files: &CommandFile,
    window: usize,
    limit: u64,
) -> RunStats {
    let window = window.max(1);
    let mut next = vec![0usize; files.len()];
    let mut in_flight = vec![0usize; files.len()];
    let mut owner: Vec<(usize, u64, u64)> = Vec::new(); // by packet id: (processor, created, size)
    let mut stats = RunStats::default();
    let mut now = 0u64;
    let issue = |p: usize,
                 at: u64,
                 model: &mut dyn NetworkModel,
                 next: &mut Vec<usize>,
                 in_flight: &mut Vec<usize>,
                 owner: &mut Vec<(usize, u64, u64)>| {
        while in_flight[p] < window {
            let Some(&(dst, size)) = files[p].get(next[p]) else {
                break;
            };
            next[p] += 1;
            in_flight[p] += 1;
            let id = owner.len() as u64;
            owner.push((p, at, size));
            model.inject(
                at,
                Packet {
                    id,
                    src: p,
                    dst,
                    size,
                    created: at,
                },
            );
        }
    };
    for p in 0..files.len() {
        issue(p, 0, model, &mut next, &mut in_flight, &mut owner);
    }
    let mut delivered: Vec<Delivery> = Vec::new();
    while let Some(t) = model.next_event(now) {
        if t > limit {
            break;
        }
        let t = t.max(now);
        model.step(t, &mut delivered);
        now = t + 1;
        delivered.sort_by_key(|d| (d.at, d.packet));
        for d in delivered.drain(..) {
            let Some(&(p, created, size)) = owner.get(d.packet as usize) else {
                continue;
            };
            in_flight[p] -= 1;
            stats.messages += 1;
            stats.words += size;
            stats.total_latency += d.at.saturating_sub(created);
            stats.completion = stats.completion.max(d.at);
            issue(
                p,
                d.at.max(now),
                model,
                &mut next,
                &mut in_flight,
                &mut owner,
            );
        }
    }
    stats.stuck = owner.len() as u64 - stats.messages
        + files
            .iter()
            .zip(&next)
            .map(|(f, &n)| (f.len() - n) as u64)
            .sum::<u64>();
    stats
}
