//! Which cycles each resource is already held in: per resource, one lane per unit of capacity
//! (a link has one; a node with several processor ports has several), each a set of disjoint
//! half-open intervals.

use std::collections::{BTreeMap, HashMap};

use super::{Hardware, Resource};

/// Held spans of one lane: start → (end, message).
type Lane = BTreeMap<u64, (u64, usize)>;

#[derive(Clone, Debug, Default)]
pub struct Occupancy {
    lanes: HashMap<Resource, Vec<Lane>>,
    hardware: Hardware,
}

impl Occupancy {
    pub fn new(hardware: Hardware) -> Self {
        Occupancy {
            lanes: HashMap::new(),
            hardware,
        }
    }

    /// The earliest `s ≥ t` at which some lane of `r` is free for `[s, s+len)`, and that lane.
    pub fn earliest(&self, r: Resource, t: u64, len: u64) -> (u64, usize) {
        let Some(lanes) = self.lanes.get(&r) else {
            return (t, 0);
        };
        let cap = self.hardware.capacity(r) as usize;
        let mut best = (u64::MAX, 0);
        for lane in 0..cap {
            let s = match lanes.get(lane) {
                Some(l) => earliest_in(l, t, len),
                None => t,
            };
            if s < best.0 {
                best = (s, lane);
            }
        }
        best
    }

    /// Is lane `lane` of `r` free for `[s, s+len)`?
    pub fn free(&self, r: Resource, lane: usize, s: u64, len: u64) -> bool {
        match self.lanes.get(&r).and_then(|l| l.get(lane)) {
            Some(l) => earliest_in(l, s, len) == s,
            None => true,
        }
    }

    /// A free lane for `[s, s+len)`, if any.
    pub fn free_lane(&self, r: Resource, s: u64, len: u64) -> Option<usize> {
        (0..self.hardware.capacity(r) as usize).find(|&lane| self.free(r, lane, s, len))
    }

    pub fn take(&mut self, r: Resource, lane: usize, s: u64, len: u64, msg: usize) {
        if len == 0 {
            return;
        }
        let cap = self.hardware.capacity(r) as usize;
        let lanes = self
            .lanes
            .entry(r)
            .or_insert_with(|| vec![BTreeMap::new(); cap]);
        if let Some(l) = lanes.get_mut(lane) {
            l.insert(s, (s + len, msg));
        }
    }
}

/// Earliest start `≥ t` of a gap of `len` cycles in a set of disjoint intervals.
fn earliest_in(l: &BTreeMap<u64, (u64, usize)>, t: u64, len: u64) -> u64 {
    let mut s = t;
    // The interval starting at or before t may still cover t.
    if let Some((_, &(e, _))) = l.range(..=s).next_back() {
        s = s.max(e);
    }
    for (&a, &(e, _)) in l.range(s..) {
        if a >= s.saturating_add(len) {
            break;
        }
        s = s.max(e);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
