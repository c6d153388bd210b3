//! Traffic built by hand for the scheduler tests: Jacobi 2D on a logical torus folded onto a mesh
//! (Minsky §5.1), the pipelined FFT (Fig 5-10), Viterbi (Figs 5-15/5-16), and a dimension-order
//! router.
#![allow(dead_code)]

use ttdl_backend::schedule::program::apply_ideal_timing;
use ttdl_backend::topology::{Kind, Network, NetworkSpec, NodeId};
use ttdl_backend::traffic::{Message, Op, Period, Phase, Placement, Route, Routing, Task, Traffic};

pub fn net(s: &str) -> Network {
    Network::build(&s.parse::<NetworkSpec>().unwrap()).unwrap()
}

/// Dimension-order route: x first, then y, …; the short way round on a torus.
pub fn dor(net: &Network, a: NodeId, b: NodeId) -> Vec<NodeId> {
    let dims = &net.spec.dims;
    let wrap = matches!(net.spec.kind, Kind::Torus | Kind::Ring);
    let mut cur = net.coords[a].clone();
    let goal = &net.coords[b];
    let mut path = vec![a];
    for d in 0..cur.len() {
        while cur[d] != goal[d] {
            let k = dims[d] as i64;
            let fwd = (goal[d] - cur[d]).rem_euclid(k);
            let step = if wrap {
                if fwd <= k - fwd {
                    1
                } else {
                    -1
                }
            } else if goal[d] > cur[d] {
                1
            } else {
                -1
            };
            cur[d] = if wrap {
                (cur[d] + step).rem_euclid(k)
            } else {
                cur[d] + step
            };
            path.push(net.node_at(&cur).unwrap());
        }
    }
    path
}

/// Routes every message with DOR; a multicast becomes the union of its DOR paths (a tree).
pub fn route_all(traffic: &Traffic, net: &Network, placement: &Placement) -> Routing {
    let routes = traffic
        .messages
        .iter()
        .map(|m| {
            let s = placement.node_of[m.src];
            if m.dst.len() == 1 {
                Route::Path(dor(net, s, placement.node_of[m.dst[0]]))
            } else {
                let mut edges: Vec<(NodeId, NodeId)> = Vec::new();
                let mut reached = std::collections::BTreeSet::from([s]);
                for &d in &m.dst {
                    let p = dor(net, s, placement.node_of[d]);
                    for w in p.windows(2) {
                        if reached.insert(w[1]) {
                            edges.push((w[0], w[1]));
                        }
                    }
                }
                Route::Tree(edges)
            }
        })
        .collect();
    Routing { routes }
}

/// The torus → mesh fold of one dimension: logical 0,1,2,3 → physical 0,2,3,1 (neighbours ≤ 2 hops).
pub fn fold(i: usize, n: usize) -> usize {
    if i < n.div_ceil(2) {
        2 * i
    } else {
        2 * (n - 1 - i) + 1
    }
}

fn task(id: usize, name: String) -> Task {
    Task {
        id,
        name,
        ..Task::default()
    }
}

fn msg(id: usize, src: usize, dst: Vec<usize>, size: u64) -> Message {
    Message {
        id,
        src,
        dst: dst.into(),
        size,
        ..Message::default()
    }
}

/// Jacobi 2D (Fig 5-2) on an n×n logical torus: each task writes 8 words north, reads from the
/// south, then east/west, west/east, south/north. Returns traffic and the folded placement on an
/// n×n mesh.
pub fn jacobi2d(n: usize, size: u64, compute: u64) -> (Traffic, Placement) {
    let tasks = n * n;
    let at = |x: usize, y: usize| (y % n) * n + (x % n);
    // (dx, dy) of each write, in program order: north, east, west, south.
    let dirs: [(isize, isize); 4] = [(0, 1), (1, 0), (-1, 0), (0, -1)];
    let nb = |t: usize, (dx, dy): (isize, isize)| {
        let (x, y) = ((t % n) as isize, (t / n) as isize);
        at(
            (x + dx).rem_euclid(n as isize) as usize,
            (y + dy).rem_euclid(n as isize) as usize,
        )
    };
    let mut traffic = Traffic::default();
    for t in 0..tasks {
        let mut tk = task(t, format!("j{t}"));
        tk.coords = Some(vec![(t % n) as i64, (t / n) as i64]);
        traffic.tasks.push(tk);
    }
    for (s, &d) in dirs.iter().enumerate() {
        for t in 0..tasks {
            traffic
                .messages
                .push(msg(s * tasks + t, t, vec![nb(t, d)], size));
        }
    }
    for t in 0..tasks {
        for (s, &(dx, dy)) in dirs.iter().enumerate() {
            let from = nb(t, (-dx, -dy));
            traffic.tasks[t].ops.push(Op::Send(s * tasks + t));
            traffic.tasks[t].ops.push(Op::Recv(s * tasks + from));
        }
        if compute > 0 {
            traffic.tasks[t].ops.push(Op::Compute(compute));
        }
    }
    traffic.phases.push(Phase {
        id: 0,
        name: "0".into(),
        start: 0,
    });
    apply_ideal_timing(&mut traffic).unwrap();
    let node_of = (0..tasks)
        .map(|t| fold(t / n, n) * n + fold(t % n, n))
        .collect();
    (traffic, Placement { node_of })
}

/// The pipelined FFT of Fig 5-10/5-11, repeated `iters` times: a source broadcasts a 4-word
/// block to the four tasks of row 0; rows 0–2 compute 12 cycles and send 4 words to two tasks of
/// the next row (butterfly), row 3 computes. Tasks: source, then row r task i = 1 + 4r + i.
/// Placement: row r on mesh row r+1 of a 4×5 mesh, the source at (0, 0).
pub fn fft(iters: u64) -> (Traffic, Placement) {
    let mut traffic = Traffic::default();
    traffic.tasks.push(task(0, "source".into()));
    for r in 0..4 {
        for i in 0..4 {
            traffic.tasks.push(task(1 + 4 * r + i, format!("f{r}{i}")));
        }
    }
    let id = |r: usize, i: usize| 1 + 4 * r + i;
    for k in 0..iters {
        let new = |traffic: &mut Traffic, src: usize, dst: Vec<usize>| {
            let m = traffic.messages.len();
            let mut mm = msg(m, src, dst, 4);
            mm.iteration = k;
            traffic.messages.push(mm);
            m
        };
        let b = new(&mut traffic, 0, (0..4).map(|i| id(0, i)).collect());
        traffic.tasks[0].ops.push(Op::Send(b));
        traffic.tasks[0].ops.push(Op::Compute(12));
        for i in 0..4 {
            traffic.tasks[id(0, i)].ops.push(Op::Recv(b));
        }
        for r in 0..3 {
            let stride = if r == 2 { 0 } else { 1 << r };
            for i in 0..4 {
                let t = id(r, i);
                traffic.tasks[t].ops.push(Op::Compute(12));
                let partners: Vec<usize> = if r == 2 { vec![i] } else { vec![i, i ^ stride] };
                for p in partners {
                    let m = new(&mut traffic, t, vec![id(r + 1, p)]);
                    traffic.tasks[t].ops.push(Op::Send(m));
                    traffic.tasks[id(r + 1, p)].ops.push(Op::Recv(m));
                }
            }
        }
        for i in 0..4 {
            traffic.tasks[id(3, i)].ops.push(Op::Compute(12));
        }
    }
    // Receives of one iteration were pushed in message order; they are already grouped by task.
    traffic.phases.push(Phase {
        id: 0,
        name: "0".into(),
        start: 0,
    });
    traffic.period = Some(Period {
        iterations: iters,
        lower_bound: 12,
        bound_by: "compute (12 cycles)".into(),
    });
    apply_ideal_timing(&mut traffic).unwrap();
    let mut node_of = vec![0usize];
    for r in 0..4 {
        for i in 0..4 {
            node_of.push((r + 1) * 4 + i);
        }
    }
    (traffic, Placement { node_of })
}

/// Viterbi (Figs 5-15/5-16): a host distributes a 1500-word lexicon to 7 nodes (phase 0), sends
/// speech data down the pipeline of nodes 1–7 (phase 1, `n` blocks), and collects results back up
/// the pipeline (phase 2, `m` blocks). Nodes compute 3000 cycles per block (the last one 2000).
pub fn viterbi(n: u64, m: u64, words: u64) -> Traffic {
    let mut traffic = Traffic::default();
    traffic.tasks.push(task(0, "host".into()));
    for d in 0..7 {
        traffic.tasks.push(task(d + 1, format!("d{d}")));
    }
    for p in 0..3 {
        traffic.phases.push(Phase {
            id: p,
            name: format!("phase-{p}"),
            start: 0,
        });
    }
    let new = |traffic: &mut Traffic, src: usize, dst: usize, phase: usize, it: u64| {
        let id = traffic.messages.len();
        let mut mm = msg(id, src, vec![dst], words);
        mm.phase = phase;
        mm.iteration = it;
        traffic.messages.push(mm);
        id
    };
    for t in 0..8 {
        traffic.tasks[t].ops.push(Op::Sync(0));
    }
    for d in 1..8 {
        let l = new(&mut traffic, 0, d, 0, 0);
        traffic.tasks[0].ops.push(Op::Send(l));
        traffic.tasks[d].ops.push(Op::Recv(l));
    }
    for t in 0..8 {
        traffic.tasks[t].ops.push(Op::Sync(1));
    }
    let s = new(&mut traffic, 0, 1, 1, 0);
    traffic.tasks[0].ops.push(Op::Send(s));
    // Speech data: node d reads from prev, computes, writes to next, n times. The host sends
    // one block per iteration to node 1.
    let mut first = Some(s);
    for k in 0..n {
        let inp = match first.take() {
            Some(s) => s,
            None => {
                let s = new(&mut traffic, 0, 1, 1, k);
                traffic.tasks[0].ops.push(Op::Send(s));
                s
            }
        };
        let mut prev = inp;
        for d in 1..8 {
            traffic.tasks[d].ops.push(Op::Recv(prev));
            traffic.tasks[d]
                .ops
                .push(Op::Compute(if d == 7 { 2000 } else { 3000 }));
            if d < 7 {
                let out = new(&mut traffic, d, d + 1, 1, k);
                traffic.tasks[d].ops.push(Op::Send(out));
                prev = out;
            }
        }
    }
    for t in 0..8 {
        traffic.tasks[t].ops.push(Op::Sync(2));
    }
    for k in 0..m {
        // Results flow from node 7 back to the host.
        traffic.tasks[7].ops.push(Op::Compute(2000));
        let mut out = new(&mut traffic, 7, 6, 2, k);
        traffic.tasks[7].ops.push(Op::Send(out));
        for d in (1..7).rev() {
            traffic.tasks[d].ops.push(Op::Recv(out));
            traffic.tasks[d].ops.push(Op::Compute(3000));
            let to = if d == 1 { 0 } else { d - 1 };
            out = new(&mut traffic, d, to, 2, k);
            traffic.tasks[d].ops.push(Op::Send(out));
        }
        traffic.tasks[0].ops.push(Op::Recv(out));
    }
    apply_ideal_timing(&mut traffic).unwrap();
    traffic
}
