//! The one event queue every model runs under: the drivers ([`super::drive`]) keep their own
//! events here (a task waking, a source's next injection) and ask the model for its next
//! ([`super::NetworkModel::next_event`]), then jump to the earlier of the two, so idle stretches
//! cost nothing whatever the model.
//!
//! Events at the same cycle come out in the order of their payload (a task or node id), so a
//! run is the same whatever order they were pushed in.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A min-queue of `(cycle, event)`.
#[derive(Clone, Debug)]
pub struct EventQueue<E: Ord> {
    heap: BinaryHeap<Reverse<(u64, E)>>,
}

impl<E: Ord> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
        }
    }
}

impl<E: Ord + Copy> EventQueue<E> {
    pub fn new() -> Self {
        Self::default()
    }

    /// `event` happens at cycle `at`.
    pub fn push(&mut self, at: u64, event: E) {
        self.heap.push(Reverse((at, event)));
    }

    /// The cycle of the earliest event.
    pub fn next_time(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((at, _))| *at)
    }

    /// The earliest event, left in the queue.
    pub fn peek(&self) -> Option<(u64, E)> {
        self.heap.peek().map(|Reverse(x)| *x)
    }

    /// Removes and returns the earliest event if it is due at or before `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<(u64, E)> {
        match self.heap.peek() {
            Some(Reverse((at, _))) if *at <= now => self.heap.pop().map(|Reverse(x)| x),
            _ => None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }
}

impl<E: Ord + Copy> FromIterator<(u64, E)> for EventQueue<E> {
    fn from_iter<I: IntoIterator<Item = (u64, E)>>(events: I) -> Self {
        EventQueue {
            heap: events.into_iter().map(Reverse).collect(),
        }
    }
}

/// The next cycle anything happens: the earlier of the driver's next event and the model's.
pub fn next_cycle(driver: Option<u64>, model: Option<u64>) -> Option<u64> {
    match (driver, model) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_and_ties_by_payload() {
        let mut q: EventQueue<usize> = [(5, 2), (3, 9), (5, 1)].into_iter().collect();
        q.push(3, 4);
        assert_eq!(q.next_time(), Some(3));
        assert_eq!(q.pop_due(2), None);
        assert_eq!(q.pop_due(3), Some((3, 4)));
        assert_eq!(q.pop_due(3), Some((3, 9)));
        assert_eq!(q.pop_due(10), Some((5, 1)));
        assert_eq!(q.pop_due(10), Some((5, 2)));
        assert!(q.is_empty());
        assert_eq!(next_cycle(Some(4), Some(2)), Some(2));
        assert_eq!(next_cycle(None, Some(2)), Some(2));
        assert_eq!(next_cycle(None, None), None);
    }
}
