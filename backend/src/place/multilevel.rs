//! Multilevel placement for large programs on meshes, tori, rings and lines: coarsen the task
//! graph and the network together, anneal the coarsest pair, then refine level by level.
//!
//! Annealing thousands of tasks at once from a random start leaves large-scale defects: a 64×64
//! Jacobi torus on a 64×64 mesh ends with regions folded different ways, whose seams cost 5–28 %
//! more word-hops than the folding mapping depending on the seed, and the local moves of a cold
//! anneal cannot undo a seam that spans the mesh. The global layout is decided far more cheaply on
//! a small problem:
//!
//! 1. **Coarsen the tasks** by heavy-edge matching (each task, in a seeded random order, pairs
//!    with its most heavily communicating unmatched partner; the few left over pair with the
//!    nearest unmatched task in the graph), so every level has half the tasks of the one below,
//!    each a connected cluster of tightly communicating tasks. An earlier attempt coarsened only
//!    the *mesh* and spread each big node's tasks to its children: which tasks shared a big node
//!    was the annealer's accident rather than the graph's structure, and the spreading lost most
//!    of the quality.
//! 2. **Coarsen the network** in step: each level halves the longest dimension, so a coarse node
//!    covers two nodes below and holds as many clusters as they hold tasks.
//! 3. **Anneal the coarsest level** (at most `COARSEST_TASKS` clusters) with the full schedule.
//! 4. **Uncoarsen**: each cluster's two halves go to the two children of its node, the half pulled
//!    harder (by its partners' coarse positions) towards the higher coordinate going there; then
//!    a short, cool anneal of range-limited swaps (`Refine`) repairs what the split left.
//!
//! Everything draws from one generator seeded by the placement seed, so a seed gives one placement.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::anneal::Progress;
use super::cost::{anneal_coarse, Refine};
use super::slots::Slots;
use crate::topology::{Kind, Network, NetworkSpec, NodeId};
use crate::traffic::{Message, Placement, Task, Traffic};

/// Programs of more tasks than this are placed by levels. At 1,024 tasks (a 32×32 Jacobi torus)
/// the levels and the single anneal are as good as each other (+5 to +9 % of word-hops above the
/// folding mapping over three seeds, 1.5 s), so smaller programs keep the single anneal.
pub(super) const MIN_TASKS: usize = 1024;

/// Coarsening stops once a level has at most this many clusters.
const COARSEST_TASKS: usize = 256;

/// The refinement after each split above the tasks' own level: the clusters there only have to
/// be roughly right, so about 1,000 moves per cluster, from half the mean uphill move's cost down
/// to a fiftieth of it (colder is frozen: a schedule to 1/500 spent most of its moves there).
const REFINE_CLUSTERS: Refine = Refine {
    radius: 3,
    heat: 0.5,
    first: 2,
    step: 1,
    cold: 50.0,
};

/// The last refinement, of the tasks themselves, decides the result: about 5,900 moves per task.
/// On the 64×64 Jacobi torus, moving moves from the cluster levels to this one gained 2–3 % of
/// word-hops at the same time (every level refined alike: +9.0 to +11.5 % in 7 s).
const REFINE_TASKS: Refine = Refine {
    first: 6,
    step: 6,
    ..REFINE_CLUSTERS
};

/// A weighted undirected task graph: `adj[v]` lists (partner, Σ sizes both ways).
struct Graph {
    adj: Vec<Vec<(u32, u64)>>,
}

impl Graph {
    fn len(&self) -> usize {
        self.adj.len()
    }

    /// The aggregated communication partners of `traffic`'s tasks (as the annealer sums them).
    fn of(traffic: &Traffic) -> Graph {
        let tasks = traffic.tasks.len();
        let mut edges = Vec::new();
        for m in &traffic.messages {
            for &d in &m.dst {
                if m.src < tasks && d < tasks && d != m.src {
                    edges.push((m.src as u32, d as u32, m.size));
                    edges.push((d as u32, m.src as u32, m.size));
                }
            }
        }
        Graph::from_edges(tasks, edges)
    }

    /// Sums parallel edges.
    fn from_edges(n: usize, mut edges: Vec<(u32, u32, u64)>) -> Graph {
        edges.sort_unstable();
        let mut adj = vec![Vec::new(); n];
        for (a, b, w) in edges {
            let list: &mut Vec<(u32, u64)> = &mut adj[a as usize];
            match list.last_mut() {
                Some((u, sum)) if *u == b => *sum = sum.saturating_add(w),
                _ => list.push((b, w)),
            }
        }
        Graph { adj }
    }

    /// The graph as a program the annealer can place: one message per edge.
    fn traffic(&self) -> Traffic {
        let mut messages = Vec::new();
        for (a, list) in self.adj.iter().enumerate() {
            for &(b, w) in list.iter().filter(|&&(b, _)| a < b as usize) {
                messages.push(Message {
                    id: messages.len(),
                    src: a,
                    dst: vec![b as usize].into(),
                    size: w,
                    ..Message::default()
                });
            }
        }
        Traffic {
            tasks: (0..self.len())
                .map(|id| Task {
                    id,
                    ..Task::default()
                })
                .collect(),
            messages,
            ..Traffic::default()
        }
    }

    /// Heavy-edge matching: returns each vertex's cluster and the graph of clusters.
    fn coarsen(&self, rng: &mut ChaCha8Rng) -> (Vec<u32>, Graph) {
        const NONE: u32 = u32::MAX;
        let n = self.len();
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.shuffle(rng);
        let mut mate = vec![NONE; n];
        for &v in &order {
            if mate[v as usize] != NONE {
                continue;
            }
            let best = self.adj[v as usize]
                .iter()
                .filter(|&&(u, _)| mate[u as usize] == NONE)
                .max_by_key(|&&(_, w)| w);
            if let Some(&(u, _)) = best {
                mate[v as usize] = u;
                mate[u as usize] = v;
            }
        }
        // The unmatched pair with the nearest unmatched task (breadth-first, a bounded search),
        // so that every level halves and each cluster fills exactly the nodes under its node.
        let mut seen = vec![NONE; n];
        let mut queue = Vec::new();
        for &v in &order {
            if mate[v as usize] != NONE {
                continue;
            }
            queue.clear();
            queue.push(v);
            seen[v as usize] = v;
            let mut head = 0;
            let mut found = None;
            while head < queue.len() && head < 512 && found.is_none() {
                let x = queue[head];
                head += 1;
                for &(u, _) in &self.adj[x as usize] {
                    if seen[u as usize] == v {
                        continue;
                    }
                    seen[u as usize] = v;
                    if mate[u as usize] == NONE {
                        found = Some(u);
                        break;
                    }
                    queue.push(u);
                }
            }
            if let Some(u) = found {
                mate[v as usize] = u;
                mate[u as usize] = v;
            }
        }
        // Whatever is left (tasks in other components) pairs in order.
        let rest: Vec<u32> = order
            .iter()
            .copied()
            .filter(|&v| mate[v as usize] == NONE)
            .collect();
        for pair in rest.chunks(2) {
            if let [a, b] = *pair {
                mate[a as usize] = b;
                mate[b as usize] = a;
            }
        }
        let mut parent = vec![NONE; n];
        let mut clusters = 0u32;
        for v in 0..n {
            if parent[v] == NONE {
                parent[v] = clusters;
                if mate[v] != NONE {
                    parent[mate[v] as usize] = clusters;
                }
                clusters += 1;
            }
        }
        let mut edges = Vec::new();
        for (v, list) in self.adj.iter().enumerate() {
            for &(u, w) in list {
                let (pv, pu) = (parent[v], parent[u as usize]);
                if pv != pu {
                    edges.push((pv, pu, w));
                }
            }
        }
        (parent, Graph::from_edges(clusters as usize, edges))
    }
}

/// The network of the level above: the longest dimension halved (rounded up). `None` when the
/// kind has no grid or the dimension is too short to halve usefully.
fn halve(spec: &NetworkSpec) -> Option<(NetworkSpec, usize)> {
    if !matches!(
        spec.kind,
        Kind::Mesh | Kind::Torus | Kind::Line | Kind::Ring
    ) {
        return None;
    }
    let (k, &d) = spec
        .dims
        .iter()
        .enumerate()
        .max_by_key(|&(i, &d)| (d, std::cmp::Reverse(i)))?;
    if d < 4 {
        return None;
    }
    let mut coarse = spec.clone();
    coarse.dims[k] = d.div_ceil(2);
    Some((coarse, k))
}

/// Splits each cluster of the coarse placement onto the children of its node (along dimension
/// `k`), then moves any task that does not fit to the nearest node with room.
fn expand(
    fine: &Graph,
    parent: &[u32],
    coarse_place: &Placement,
    fine_net: &Network,
    coarse_net: &Network,
    k: usize,
) -> Placement {
    let n = fine.len();
    let cap = n.div_ceil(fine_net.nodes()).max(1);
    let extent = coarse_net.spec.dims[k] as i64;
    let wrap = matches!(coarse_net.spec.kind, Kind::Torus | Kind::Ring);
    let pos = |v: usize| coarse_net.coords[coarse_place.node_of[parent[v] as usize]][k];
    // How hard v's partners pull it towards higher coordinates along k.
    let pull = |v: usize| -> i64 {
        let p = pos(v);
        fine.adj[v]
            .iter()
            .map(|&(u, w)| {
                let mut d = pos(u as usize) - p;
                if wrap {
                    d = d.rem_euclid(extent);
                    if 2 * d > extent {
                        d -= extent;
                    }
                }
                w as i64 * d
            })
            .sum()
    };
    let mut on = vec![Vec::new(); coarse_net.nodes()];
    for v in 0..n {
        on[coarse_place.node_of[parent[v] as usize]].push(v);
    }
    let mut node_of = vec![usize::MAX; n];
    let mut load = vec![0usize; fine_net.nodes()];
    let mut overflow = Vec::new();
    for (cn, members) in on.iter_mut().enumerate() {
        if members.is_empty() {
            continue;
        }
        let mut c = coarse_net.coords[cn].clone();
        let children: Vec<NodeId> = [0, 1]
            .iter()
            .filter_map(|&half| {
                c[k] = coarse_net.coords[cn][k] * 2 + half;
                fine_net.node_at(&c)
            })
            .collect();
        members.sort_by_key(|&v| (pull(v), v));
        let m = members.len();
        for (i, &v) in members.iter().enumerate() {
            let child = children[(i * children.len() / m).min(children.len() - 1)];
            if load[child] < cap {
                load[child] += 1;
                node_of[v] = child;
            } else {
                overflow.push((v, child));
            }
        }
    }
    for (v, near) in overflow {
        let to = nearest_free(fine_net, near, &load, cap);
        load[to] += 1;
        node_of[v] = to;
    }
    Placement { node_of }
}

/// The nearest node (in links) to `from` holding fewer than `cap` tasks.
fn nearest_free(net: &Network, from: NodeId, load: &[usize], cap: usize) -> NodeId {
    let mut seen = vec![false; net.nodes()];
    let mut queue = std::collections::VecDeque::from([from]);
    seen[from] = true;
    while let Some(x) = queue.pop_front() {
        if load[x] < cap {
            return x;
        }
        for &l in &net.out[x] {
            let to = net.links[l].to;
            if !seen[to] {
                seen[to] = true;
                queue.push_back(to);
            }
        }
    }
    (0..net.nodes()).find(|&x| load[x] < cap).unwrap_or(from)
}

/// Multilevel placement of `traffic` (no wired-down tasks) on `network` with the coarse cost, or
/// `None` when the network cannot be coarsened.
pub(super) fn place(
    traffic: &Traffic,
    network: &Network,
    seed: u64,
    progress: &mut dyn FnMut(Progress),
) -> Option<Placement> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut graphs = vec![Graph::of(traffic)];
    let mut specs = vec![network.spec.clone()];
    let mut splits = Vec::new();
    while graphs[graphs.len() - 1].len() > COARSEST_TASKS {
        let Some((spec, k)) = halve(&specs[specs.len() - 1]) else {
            break;
        };
        let (parent, g) = graphs[graphs.len() - 1].coarsen(&mut rng);
        graphs.push(g);
        specs.push(spec);
        splits.push((parent, k));
    }
    if splits.is_empty() {
        return None;
    }
    let built: Vec<Network> = specs[1..]
        .iter()
        .map(Network::build)
        .collect::<Result<_, _>>()
        .ok()?;
    let net = |level: usize| {
        if level == 0 {
            network
        } else {
            &built[level - 1]
        }
    };
    // Progress counts iterations over all levels.
    let mut before = 0u64;
    let mut report = |p: Progress, before: u64| {
        progress(Progress {
            iterations: before + p.iterations,
            total: before + p.total,
            ..p
        })
    };
    let top = graphs.len() - 1;
    let n = graphs[top].len();
    let slots = Slots::random(n, net(top).nodes(), &vec![None; n], &mut rng);
    let mut last = 0;
    let mut placement = anneal_coarse(
        &graphs[top].traffic(),
        net(top),
        slots,
        None,
        &mut rng,
        &mut |p| {
            last = p.iterations;
            report(p, before)
        },
    );
    before += last;
    for level in (0..top).rev() {
        let (parent, k) = &splits[level];
        let split = expand(
            &graphs[level],
            parent,
            &placement,
            net(level),
            net(level + 1),
            *k,
        );
        let n = graphs[level].len();
        let slots = Slots::from_placement(&split, net(level).nodes(), &vec![None; n])?;
        let owned;
        let tr = if level == 0 {
            traffic
        } else {
            owned = graphs[level].traffic();
            &owned
        };
        let mut last = 0;
        placement = anneal_coarse(
            tr,
            net(level),
            slots,
            Some(if level == 0 {
                &REFINE_TASKS
            } else {
                &REFINE_CLUSTERS
            }),
            &mut rng,
            &mut |p| {
                last = p.iterations;
                report(p, before)
            },
        );
        before += last;
    }
    Some(placement)
}
