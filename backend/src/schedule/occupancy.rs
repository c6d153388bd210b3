//! Which cycles each resource is already held in: per resource, one lane per unit of capacity
//! (a link has one; a node with several processor ports has several), each a set of disjoint
//! half-open intervals.

use std::cell::Cell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::{Hardware, Hold, Resource};

/// Item numbers grouped by a key below `n`: a counting sort, stable, in time linear in the items
/// and keys (a plan's holds or switch instructions by message, which the verifier, the buffer
/// check and the replay each read message by message). Items without a key are left out.
pub struct Groups {
    first: Vec<u32>,
    order: Vec<u32>,
}

impl Groups {
    /// Groups the items `0..` of `keys` (fewer than 2³² of them) by their key.
    pub fn new<I>(n: usize, keys: I) -> Groups
    where
        I: Iterator<Item = Option<usize>> + Clone,
    {
        let mut first = vec![0u32; n + 1];
        for k in keys.clone().flatten() {
            first[k + 1] += 1;
        }
        for k in 0..n {
            first[k + 1] += first[k];
        }
        let mut order = vec![0u32; first[n] as usize];
        let mut fill = first.clone();
        for (i, k) in keys.enumerate() {
            if let Some(k) = k {
                order[fill[k] as usize] = i as u32;
                fill[k] += 1;
            }
        }
        Groups { first, order }
    }

    /// The items of key `k`, in their order.
    pub fn of(&self, k: usize) -> &[u32] {
        &self.order[self.first[k] as usize..self.first[k + 1] as usize]
    }

    /// The items of key `k`, to reorder in place.
    pub fn of_mut(&mut self, k: usize) -> &mut [u32] {
        &mut self.order[self.first[k] as usize..self.first[k + 1] as usize]
    }

    /// Every item, group after group.
    pub fn all(&self) -> &[u32] {
        &self.order
    }
}

/// Every resource of a network by a dense number: the injection ports, the ejection ports, then
/// the links in the network's order. A pass over every route step of a large plan counts into
/// tables indexed by it, where a map hashed or ordered by resource costs a lookup per step.
pub(crate) struct ResourceIndex<'a> {
    network: &'a crate::topology::Network,
    nodes: usize,
}

impl<'a> ResourceIndex<'a> {
    pub fn new(network: &'a crate::topology::Network) -> Self {
        ResourceIndex {
            network,
            nodes: network.nodes(),
        }
    }

    /// How many numbers there are.
    pub fn len(&self) -> usize {
        2 * self.nodes + self.network.links.len()
    }

    /// `r`'s number, or `None` when `r` is not a resource of the network.
    pub fn of(&self, r: Resource) -> Option<usize> {
        match r {
            Resource::Inject(n) => ((n as usize) < self.nodes).then_some(n as usize),
            Resource::Eject(n) => ((n as usize) < self.nodes).then_some(self.nodes + n as usize),
            Resource::Link { from, to } => self
                .network
                .link_between(from as usize, to as usize)
                .map(|l| 2 * self.nodes + l),
        }
    }

    /// The resource numbered `i` (below [`ResourceIndex::len`]).
    pub fn resource(&self, i: usize) -> Resource {
        if i < self.nodes {
            Resource::inject(i)
        } else if i < 2 * self.nodes {
            Resource::eject(i - self.nodes)
        } else {
            let l = &self.network.links[i - 2 * self.nodes];
            Resource::link(l.from, l.to)
        }
    }
}

/// Held spans of one lane: sorted, disjoint half-open `[start, end)` intervals, touching ones
/// merged. Messages are placed roughly in release order, so most inserts land at the end and a
/// lane stays short (back-to-back traffic is one interval).
///
/// Cycles are kept in 32 bits, as a plan's holds keep them ([`Hold`]): a lane is read near its
/// end by every placement, and twice as many spans fit in the cache lines read there. A span
/// reaching past cycle 2³² − 1 is kept up to it; the hold made with it is refused then.
type Lane = Vec<(u32, u32)>;

/// A cycle as a lane keeps it.
fn cycle32(t: u64) -> u32 {
    t.min(u32::MAX as u64) as u32
}

/// Resources are small keys looked up once per step of every placement: a multiplicative hash
/// (no denial-of-service concern here) instead of SipHash.
#[derive(Default)]
pub(crate) struct FastHasher(u64);

/// A map keyed by small plan keys (resources, switch ports), hashed with [`FastHasher`].
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }
    fn write_u8(&mut self, x: u8) {
        self.write_u64(x as u64);
    }
}

#[derive(Clone, Debug, Default)]
pub struct Occupancy {
    /// Resource → index of its first lane in `lanes` (its lanes are consecutive).
    index: HashMap<Resource, u32, BuildHasherDefault<FastHasher>>,
    lanes: Vec<Lane>,
    /// Per lane: where in it the last question was answered. Messages are placed roughly in
    /// release order, so the next question about a lane is mostly near the last one, and is
    /// searched outward from there: a route's hops reach lanes far into their future (a long
    /// route's last hops are placed a hundred cycles after its first), where a search from
    /// the lane's end would read a dozen entries spread over it, a cache miss each.
    hints: Vec<Cell<u32>>,
    hardware: Hardware,
}

impl Occupancy {
    pub fn new(hardware: Hardware) -> Self {
        Occupancy {
            index: HashMap::default(),
            lanes: Vec::new(),
            hints: Vec::new(),
            hardware,
        }
    }

    /// Where `r`'s lanes are, for [`Occupancy::earliest_in_lanes`]: a placement asks about the
    /// same few resources many times and looks each up once.
    pub fn lanes_index(&self, r: Resource) -> Option<(usize, usize)> {
        let first = *self.index.get(&r)? as usize;
        Some((first, self.hardware.capacity(r) as usize))
    }

    /// [`Occupancy::earliest`] on lanes found by [`Occupancy::lanes_index`] (valid until the
    /// next [`Occupancy::take`] of a new resource).
    pub fn earliest_in_lanes(&self, at: Option<(usize, usize)>, t: u64, len: u64) -> (u64, usize) {
        let Some((first, cap)) = at.filter(|&(f, cap)| f + cap <= self.lanes.len()) else {
            return (t, 0);
        };
        let mut best = (u64::MAX, 0);
        for lane in 0..cap {
            let s = earliest_in(&self.lanes[first + lane], t, len, &self.hints[first + lane]);
            if s < best.0 {
                best = (s, lane);
            }
        }
        best
    }

    /// The earliest `s ≥ t` at which some lane of `r` is free for `[s, s+len)`, and that lane.
    pub fn earliest(&self, r: Resource, t: u64, len: u64) -> (u64, usize) {
        self.earliest_in_lanes(self.lanes_index(r), t, len)
    }

    /// Is lane `lane` of `r` free for `[s, s+len)`?
    pub fn free(&self, r: Resource, lane: usize, s: u64, len: u64) -> bool {
        match self.lanes_index(r).filter(|&(_, cap)| lane < cap) {
            Some((first, _)) => {
                let at = first + lane;
                earliest_in(&self.lanes[at], s, len, &self.hints[at]) == s
            }
            None => true,
        }
    }

    /// A free lane for `[s, s+len)`, if any.
    pub fn free_lane(&self, r: Resource, s: u64, len: u64) -> Option<usize> {
        (0..self.hardware.capacity(r) as usize).find(|&lane| self.free(r, lane, s, len))
    }

    /// Marks `[s, s+len)` of lane `lane` of `r` held (by message `_msg`; the verifier, not this
    /// structure, reports who holds what).
    pub fn take(&mut self, r: Resource, lane: usize, s: u64, len: u64, _msg: usize) {
        if len == 0 {
            return;
        }
        let cap = self.hardware.capacity(r) as usize;
        let first = match self.index.get(&r) {
            Some(&f) => f as usize,
            None => {
                let f = self.lanes.len();
                self.lanes.resize(f + cap, Vec::new());
                self.hints.resize(f + cap, Cell::new(0));
                self.index.insert(r, f as u32);
                f
            }
        };
        if lane >= cap {
            return;
        }
        let l = &mut self.lanes[first + lane];
        let (s, e) = (cycle32(s), cycle32(s.saturating_add(len)));
        if s == e {
            return;
        }
        let i = partition_from_end(l, |iv| iv.0 < s);
        let joins_prev = i > 0 && l[i - 1].1 == s;
        let joins_next = i < l.len() && l[i].0 == e;
        match (joins_prev, joins_next) {
            (true, true) => {
                l[i - 1].1 = l[i].1;
                l.remove(i);
            }
            (true, false) => l[i - 1].1 = e,
            (false, true) => l[i].0 = s,
            (false, false) => l.insert(i, (s, e)),
        }
    }
}

/// Hold numbers grouped by resource, groups in resource order, each sorted by (start, message,
/// number); and each group's resource and range. A counting sort on the resources' numbers in
/// `network` ([`ResourceIndex`]; hashed for a hold on a resource the network lacks, which only
/// a wrong schedule has), then small sorts: the checks that read holds per resource touch each
/// hold a few times, in order.
pub(crate) fn by_resource(
    holds: &[Hold],
    network: &crate::topology::Network,
) -> (Vec<u32>, Vec<(Resource, usize, usize)>) {
    let index = ResourceIndex::new(network);
    // Per hold: its resource's number.
    let mut prov: Vec<u32> = Vec::with_capacity(holds.len());
    let mut others: FastMap<Resource, u32> = FastMap::default();
    for h in holds {
        let r = h.resource();
        let p = match index.of(r) {
            Some(i) => i,
            None => {
                let next = index.len() + others.len();
                *others.entry(r).or_insert(next as u32) as usize
            }
        };
        prov.push(p as u32);
    }
    let keys = index.len() + others.len();
    let mut first = vec![0usize; keys + 1];
    for &p in &prov {
        first[p as usize + 1] += 1;
    }
    for k in 0..keys {
        first[k + 1] += first[k];
    }
    let mut order = vec![0u32; holds.len()];
    let mut fill = first.clone();
    for (i, &p) in prov.iter().enumerate() {
        order[fill[p as usize]] = i as u32;
        fill[p as usize] += 1;
    }
    drop(prov);
    // The keys held, in resource order.
    let mut unnumbered: Vec<(u32, Resource)> = others.into_iter().map(|(r, k)| (k, r)).collect();
    unnumbered.sort_unstable();
    let mut held: Vec<(Resource, usize)> = (0..keys)
        .filter(|&k| first[k + 1] > first[k])
        .map(|k| {
            let r = if k < index.len() {
                index.resource(k)
            } else {
                unnumbered[k - index.len()].1
            };
            (r, k)
        })
        .collect();
    held.sort_unstable();
    let mut groups = Vec::with_capacity(held.len());
    // Each group sorted on its keys gathered once (a group's holds lie in schedule order,
    // so the gathering reads forward), not looked up in every comparison: start and message
    // in one 64-bit word (both are kept in 32 bits), then the number.
    let mut keyed: Vec<(u64, u32)> = Vec::new();
    for (r, k) in held {
        let (lo, hi) = (first[k], first[k + 1]);
        let group = &mut order[lo..hi];
        keyed.clear();
        keyed.extend(group.iter().map(|&i| {
            let h = &holds[i as usize];
            ((h.start() << 32) | h.msg() as u64, i)
        }));
        if !keyed.is_sorted() {
            keyed.sort_unstable();
            for (o, &(_, i)) in group.iter_mut().zip(&keyed) {
                *o = i;
            }
        }
        groups.push((r, lo, hi));
    }
    (order, groups)
}

/// `l.partition_point(pred)` for a `pred` true on a prefix of `l`, searched from the end by
/// doubling steps, then by halving: a lane (or a buffer's spans) is mostly asked about near its
/// end, as messages are placed roughly in release order, so this reads the last few entries
/// where a binary search would read a dozen spread over the lane (a cache miss each, millions
/// of times in a large plan).
pub(super) fn partition_from_end<T>(l: &[T], pred: impl Fn(&T) -> bool) -> usize {
    // Every entry at or after `hi` fails `pred`.
    let mut hi = l.len();
    let mut step = 1;
    while hi > 0 {
        let probe = hi.saturating_sub(step);
        if pred(&l[probe]) {
            return probe + 1 + l[probe + 1..hi].partition_point(&pred);
        }
        hi = probe;
        step *= 2;
    }
    0
}

/// `l.partition_point(pred)` for a `pred` true on a prefix of `l`, searched outward from
/// `hint` by doubling steps, then by halving: the answer near the last one is found reading
/// the few entries between them.
pub(super) fn partition_near<T>(l: &[T], pred: impl Fn(&T) -> bool, hint: usize) -> usize {
    let n = l.len();
    let mut lo = hint.min(n);
    if lo == n || !pred(&l[lo]) {
        // Every entry from `lo` on fails `pred`: the answer is in the entries before.
        return partition_from_end(&l[..lo], pred);
    }
    // `l[lo]` passes `pred`: the answer is after it.
    let mut step = 1;
    loop {
        let probe = lo + step;
        if probe >= n || !pred(&l[probe]) {
            let hi = probe.min(n);
            return lo + 1 + l[lo + 1..hi].partition_point(&pred);
        }
        lo = probe;
        step *= 2;
    }
}

/// Earliest start `≥ t` of a gap of `len` cycles in a lane; `hint` is where the lane's last
/// question was answered, and keeps this one's.
fn earliest_in(l: &[(u32, u32)], t: u64, len: u64, hint: &Cell<u32>) -> u64 {
    let mut s = t;
    // Intervals ending at or before t are behind us.
    let from = partition_near(l, |iv| iv.1 as u64 <= t, hint.get() as usize);
    hint.set(from as u32);
    for &(a, e) in &l[from..] {
        if a as u64 >= s.saturating_add(len) {
            break;
        }
        s = s.max(e as u64);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_from_the_end_as_a_binary_search_does() {
        for n in 0..40usize {
            let l: Vec<usize> = (0..n).map(|i| i * 3).collect();
            for t in 0..=(3 * n + 2) {
                let pred = |x: &usize| *x < t;
                assert_eq!(
                    partition_from_end(&l, pred),
                    l.partition_point(pred),
                    "{n} {t}"
                );
            }
        }
    }

    #[test]
    fn partitions_near_a_hint_as_a_binary_search_does() {
        for n in 0..40usize {
            let l: Vec<usize> = (0..n).map(|i| i * 3).collect();
            for t in 0..=(3 * n + 2) {
                for hint in 0..=(n + 2) {
                    let pred = |x: &usize| *x < t;
                    assert_eq!(
                        partition_near(&l, pred, hint),
                        l.partition_point(pred),
                        "{n} {t} {hint}"
                    );
                }
            }
        }
    }

    #[test]
    fn gaps() {
        let hw = Hardware::default();
        let mut o = Occupancy::new(hw);
        let r = Resource::Inject(0);
        o.take(r, 0, 2, 3, 0); // [2,5)
        o.take(r, 0, 7, 2, 1); // [7,9)
        assert_eq!(o.earliest(r, 0, 2), (0, 0));
        assert_eq!(o.earliest(r, 0, 3), (9, 0));
        assert_eq!(o.earliest(r, 3, 2), (5, 0));
        assert_eq!(o.earliest(r, 5, 3), (9, 0));
        assert!(!o.free(r, 0, 4, 1));
        assert!(o.free(r, 0, 5, 2));
        // Touching spans merge; a span filling a gap joins both neighbours.
        o.take(r, 0, 5, 2, 2); // [2,9)
        assert_eq!(o.earliest(r, 0, 3), (9, 0));
        assert_eq!(o.lanes.len(), 1);
        assert_eq!(o.lanes[0], vec![(2, 9)]);
        o.take(r, 0, 0, 1, 3);
        o.take(r, 0, 1, 1, 4);
        assert_eq!(o.lanes[0], vec![(0, 9)]);
        // A span past the last 32-bit cycle is kept up to it (its hold is refused).
        let e = Resource::Eject(0);
        let last = u32::MAX as u64;
        o.take(e, 0, last - 1, 5, 5);
        assert_eq!(o.lanes[1], vec![(u32::MAX - 1, u32::MAX)]);
        assert_eq!(o.earliest(e, last - 3, 2), (last - 3, 0));
        assert_eq!(o.earliest(e, last - 2, 2), (last, 0));
    }
}
