//! The annealer's configuration space: every node has `cap` slots, each empty or holding one task.
//! Swapping the contents of two slots moves a task (to an empty slot) or exchanges two tasks — the
//! thesis's "swapping two tasks at random" extended to several tasks per node.

use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::topology::NodeId;
use crate::traffic::{Placement, TaskId};

#[derive(Clone, Debug)]
pub struct Slots {
    nodes: usize,
    /// Slot s lives on node `s % nodes`.
    slot: Vec<Option<TaskId>>,
    slot_of: Vec<usize>,
    /// `slot_of[t] % nodes`, kept so that the annealer's inner loop does not divide.
    node: Vec<u32>,
    /// Slots that do not hold a wired-down task.
    movable: Vec<usize>,
    /// `is_movable[s]`: slot s is in `movable`.
    is_movable: Vec<bool>,
}

impl Slots {
    fn capacity(tasks: usize, nodes: usize, wired: &[Option<NodeId>], at_least: usize) -> usize {
        let mut per_node = vec![0usize; nodes];
        for n in wired.iter().flatten() {
            per_node[*n] += 1;
        }
        let wired_max = per_node.into_iter().max().unwrap_or(0);
        tasks.div_ceil(nodes).max(wired_max).max(at_least).max(1)
    }

    fn empty(tasks: usize, nodes: usize, cap: usize) -> Slots {
        Slots {
            nodes,
            slot: vec![None; nodes * cap],
            slot_of: vec![usize::MAX; tasks],
            node: vec![0; tasks],
            movable: Vec::new(),
            is_movable: Vec::new(),
        }
    }

    /// Puts `task` in the first free slot of `node`.
    fn put(&mut self, task: TaskId, node: NodeId) -> bool {
        let mut s = node;
        while s < self.slot.len() {
            if self.slot[s].is_none() {
                self.slot[s] = Some(task);
                self.slot_of[task] = s;
                self.node[task] = node as u32;
                return true;
            }
            s += self.nodes;
        }
        false
    }

    fn finish(&mut self, wired: &[Option<NodeId>]) {
        self.movable = (0..self.slot.len())
            .filter(|&s| match self.slot[s] {
                Some(t) => wired.get(t).copied().flatten().is_none(),
                None => true,
            })
            .collect();
        self.is_movable = vec![false; self.slot.len()];
        for &s in &self.movable {
            self.is_movable[s] = true;
        }
    }

    /// Wired tasks where they must be; the rest in random slots, filling every node once before
    /// any node gets a second task.
    pub fn random(
        tasks: usize,
        nodes: usize,
        wired: &[Option<NodeId>],
        rng: &mut ChaCha8Rng,
    ) -> Slots {
        let cap = Slots::capacity(tasks, nodes, wired, 1);
        let mut s = Slots::empty(tasks, nodes, cap);
        for (t, w) in wired.iter().enumerate() {
            if let Some(n) = w {
                s.put(t, *n);
            }
        }
        let mut free: Vec<usize> = Vec::new();
        for layer in 0..cap {
            let mut layer_free: Vec<usize> = (layer * nodes..(layer + 1) * nodes)
                .filter(|&i| s.slot[i].is_none())
                .collect();
            layer_free.shuffle(rng);
            free.extend(layer_free);
        }
        let mut free = free.into_iter();
        for (t, w) in wired.iter().enumerate().take(tasks) {
            if w.is_none() {
                if let Some(slot) = free.next() {
                    s.slot[slot] = Some(t);
                    s.slot_of[t] = slot;
                    s.node[t] = (slot % nodes) as u32;
                }
            }
        }
        s.finish(wired);
        s
    }

    /// The given placement (wired tasks forced to their nodes).
    pub fn from_placement(p: &Placement, nodes: usize, wired: &[Option<NodeId>]) -> Option<Slots> {
        let tasks = wired.len();
        if p.node_of.len() != tasks || p.node_of.iter().any(|&n| n >= nodes) {
            return None;
        }
        let node_of: Vec<NodeId> = (0..tasks)
            .map(|t| wired[t].unwrap_or(p.node_of[t]))
            .collect();
        let mut load = vec![0usize; nodes];
        for &n in &node_of {
            load[n] += 1;
        }
        let cap = Slots::capacity(tasks, nodes, wired, load.into_iter().max().unwrap_or(1));
        let mut s = Slots::empty(tasks, nodes, cap);
        for (t, &n) in node_of.iter().enumerate() {
            s.put(t, n);
        }
        s.finish(wired);
        Some(s)
    }

    #[inline]
    pub fn node_of(&self, t: TaskId) -> NodeId {
        self.node[t] as usize
    }

    pub fn placement(&self) -> Placement {
        Placement {
            node_of: (0..self.slot_of.len()).map(|t| self.node_of(t)).collect(),
        }
    }

    /// Two movable slots on different nodes, at least one occupied.
    pub fn pick_pair(&self, rng: &mut ChaCha8Rng) -> Option<(usize, usize)> {
        if self.movable.len() < 2 {
            return None;
        }
        for _ in 0..32 {
            let a = self.movable[rng.random_range(0..self.movable.len())];
            let b = self.movable[rng.random_range(0..self.movable.len())];
            if a % self.nodes != b % self.nodes
                && (self.slot[a].is_some() || self.slot[b].is_some())
            {
                return Some((a, b));
            }
        }
        None
    }

    /// Two movable slots, at least one occupied, the second on a node `near` gives for the
    /// first's node (a range-limited move); `None` after a few fruitless tries.
    pub fn pick_near(
        &self,
        rng: &mut ChaCha8Rng,
        mut near: impl FnMut(NodeId, &mut ChaCha8Rng) -> Option<NodeId>,
    ) -> Option<(usize, usize)> {
        if self.movable.len() < 2 {
            return None;
        }
        let layers = self.slot.len() / self.nodes.max(1);
        for _ in 0..32 {
            let a = self.movable[rng.random_range(0..self.movable.len())];
            let node_a = a % self.nodes;
            let Some(node_b) = near(node_a, rng) else {
                continue;
            };
            if node_b == node_a || node_b >= self.nodes {
                continue;
            }
            let b = node_b + self.nodes * rng.random_range(0..layers.max(1));
            if self.is_movable.get(b) == Some(&true)
                && (self.slot[a].is_some() || self.slot[b].is_some())
            {
                return Some((a, b));
            }
        }
        None
    }

    /// The slots that do not hold a wired-down task, in slot order.
    pub fn movable(&self) -> &[usize] {
        &self.movable
    }

    /// Whether two slots are on the same node (swapping their contents leaves the placement as
    /// it is when both are, or when both are empty).
    pub fn same_node(&self, a: usize, b: usize) -> bool {
        a % self.nodes == b % self.nodes
    }

    pub fn content(&self, s: usize) -> Option<TaskId> {
        self.slot[s]
    }

    pub fn swap(&mut self, a: usize, b: usize) {
        self.slot.swap(a, b);
        if let Some(t) = self.slot[a] {
            self.slot_of[t] = a;
            self.node[t] = (a % self.nodes) as u32;
        }
        if let Some(t) = self.slot[b] {
            self.slot_of[t] = b;
            self.node[t] = (b % self.nodes) as u32;
        }
    }
}
