//! Chittor's contention model (ch. 3, Defs 27–30), on the distinct paths of a routed traffic.
//!
//! A *path* is one (source task, destination task, route); repeated messages of an `iterate` along
//! the same route count once, as the edges of Chittor's process graph do. Paths of zero hops (both
//! tasks on one node) use no channel and are left out. Following the reading that reproduces every
//! number of the thesis, a path does not count itself: ν and d can be 0.
//!
//! * channel load χ(e): paths using directed channel e;
//! * path contention level ν(p): other paths sharing at least one channel with p;
//! * logical path length d(p): hops of p at which a competitor not met before appears.

use super::links::{RouteLinks, Users};
use crate::schedule::FastMap;
use crate::topology::{LinkId, Network, NodeId};
use crate::traffic::{MsgId, Route, Routing, TaskId, Traffic};

/// What makes two paths the same: source task, destination tasks, links.
type PathKey<'a> = (TaskId, &'a [TaskId], &'a [LinkId]);

/// One distinct path and its contention figures.
#[derive(Clone, Debug, PartialEq)]
pub struct PathStats {
    /// The first message that takes it.
    pub msg: MsgId,
    pub src: TaskId,
    pub dst: Vec<TaskId>,
    pub src_node: NodeId,
    pub links: Vec<LinkId>,
    pub hops: usize,
    pub contention: usize,
    pub logical_length: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Contention {
    pub paths: Vec<PathStats>,
    /// χ per link id.
    pub channel_load: Vec<usize>,
    /// δ_avg: paths per sending task.
    pub degree_avg: f64,
}

impl Contention {
    pub fn analyse(traffic: &Traffic, network: &Network, routing: &Routing) -> Contention {
        let routes = RouteLinks::of(traffic, network, routing);
        Contention::of_links(traffic, network, routing, &routes)
    }

    /// [`Contention::analyse`] with every route's links already listed.
    pub fn of_links(
        traffic: &Traffic,
        network: &Network,
        routing: &Routing,
        routes: &RouteLinks,
    ) -> Contention {
        // Distinct paths, each under the first message that takes it, in message order: one
        // hashed look-up per message on borrowed slices (no key copied per message).
        let mut first_of: FastMap<PathKey, MsgId> = Default::default();
        let mut distinct: Vec<MsgId> = Vec::new();
        for m in 0..routes.len() {
            let links = routes.of_message(m);
            if links.is_empty() {
                continue;
            }
            let msg = &traffic.messages[m];
            if let std::collections::hash_map::Entry::Vacant(e) =
                first_of.entry((msg.src, &msg.dst[..], links))
            {
                e.insert(m);
                distinct.push(m);
            }
        }
        drop(first_of);
        let mut paths: Vec<PathStats> = distinct
            .into_iter()
            .map(|msg| {
                let links = routes.of_message(msg).to_vec();
                let m = &traffic.messages[msg];
                PathStats {
                    msg,
                    src: m.src,
                    dst: m.dst.to_vec(),
                    src_node: match &routing.routes[msg] {
                        Route::Path(p) => p.first().copied().unwrap_or(0),
                        Route::Tree(e) => e.first().map(|x| x.0).unwrap_or(0),
                    },
                    hops: links.len(),
                    links,
                    contention: 0,
                    logical_length: 0,
                }
            })
            .collect();
        let users = Users::count(
            network.links.len(),
            paths.iter().map(|p| p.links.as_slice()),
        );
        // The reference algorithm of the notes: O(Σ χ²) with a stamped membership array.
        let mut seen = vec![u32::MAX; paths.len()];
        for i in 0..paths.len() {
            let mut nu = 0usize;
            let mut d = 0usize;
            seen[i] = i as u32;
            for &l in &paths[i].links {
                let mut new = false;
                for &q in users.of(l) {
                    if seen[q as usize] != i as u32 {
                        seen[q as usize] = i as u32;
                        nu += 1;
                        new = true;
                    }
                }
                if new {
                    d += 1;
                }
            }
            paths[i].contention = nu;
            paths[i].logical_length = d;
        }
        let channel_load = (0..users.links()).map(|l| users.of(l).len()).collect();
        let senders = super::senders(traffic).len();
        let degree_avg = if senders == 0 {
            0.0
        } else {
            paths.len() as f64 / senders as f64
        };
        Contention {
            paths,
            channel_load,
            degree_avg,
        }
    }

    fn nu_avg(&self) -> f64 {
        if self.paths.is_empty() {
            return 0.0;
        }
        self.paths.iter().map(|p| p.contention as f64).sum::<f64>() / self.paths.len() as f64
    }

    /// Lemma 3: λ^a = δ_avg / (ν_avg + 1).
    pub fn saturation_avg_node(&self) -> f64 {
        self.degree_avg / (self.nu_avg() + 1.0)
    }

    /// Lemma 4: λ^w = δ_avg / (ν_max + 1).
    pub fn saturation_worst_node(&self) -> f64 {
        let max = self.paths.iter().map(|p| p.contention).max().unwrap_or(0);
        self.degree_avg / (max as f64 + 1.0)
    }

    /// Lemma 5, per sending task: δ(v) / (ν_m(v) + 1), with δ(v) its paths and ν_m(v) their
    /// largest contention. Sorted worst (smallest) first, ties by task id.
    pub fn node_bounds(&self) -> Vec<(TaskId, usize, usize, f64)> {
        let mut by_task: std::collections::BTreeMap<TaskId, (usize, usize)> = Default::default();
        for p in &self.paths {
            let e = by_task.entry(p.src).or_insert((0, 0));
            e.0 += 1;
            e.1 = e.1.max(p.contention);
        }
        let mut v: Vec<(TaskId, usize, usize, f64)> = by_task
            .into_iter()
            .map(|(t, (deg, nu))| (t, deg, nu, deg as f64 / (nu as f64 + 1.0)))
            .collect();
        v.sort_by(|a, b| a.3.total_cmp(&b.3).then(a.0.cmp(&b.0)));
        v
    }
}
