//! The router's allocators: one matching of requesters (input VCs for VC allocation, input ports
//! for switch allocation) to resources (output VCs, output ports) per router and cycle.
//!
//! - `islip`: iSLIP (McKeown 1999) with `iters` iterations. Each output grants the first
//!   requesting unmatched input at or after its grant pointer, each input accepts the first
//!   granting output at or after its accept pointer; pointers move one past an accepted match,
//!   in the first iteration only. Priorities play no part (as in BookSim2's sparse iSLIP).
//! - `input-first`, `output-first`: separable allocators of round-robin arbiters (Dally & Towles
//!   §19.3): every requester's arbiter picks one resource, then every resource's arbiter picks one
//!   of the requesters that picked it (or the other way round). An arbiter picks the highest
//!   priority, ties going to the first at or after its pointer; a pointer moves one past its
//!   pick only when the pick became a match.
//! - `oldest`: input-first with the packet's age as the priority (oldest wins, ties round-robin).
//!
//! Requesters and resources are at most [`MAX_PORTS`] per router, kept as bit masks, so a round
//! costs a few word operations per request and nothing per idle port.

/// A set of requesters or resources of one router.
pub type Mask = u128;

/// Most requesters or resources one router may have (bits of a [`Mask`]).
pub const MAX_PORTS: usize = 128;

crate::sim::options::choice_enum! {
    /// Which allocator.
    pub enum AllocKind {
        Islip = "islip",
        InputFirst = "input-first",
        OutputFirst = "output-first",
        Oldest = "oldest",
    }
}

impl AllocKind {
    pub fn name(self) -> &'static str {
        crate::sim::options::Choice::word(self)
    }
}

/// No match.
pub const UNMATCHED: u16 = u16::MAX;

/// The requests of one router for one round, and the matching the allocator found.
pub struct Requests {
    n_out: usize,
    /// Per requester, the resources it asks for.
    pub req_in: Vec<Mask>,
    /// Per resource, the requesters asking for it.
    pub req_out: Vec<Mask>,
    /// Requesters and resources with at least one request.
    pub inputs: Mask,
    pub outputs: Mask,
    /// Priorities by `input · n_out + output`: the requester's own (`in_pri`, its preference
    /// among resources) and the one resources see (`out_pri`). Read only where a request is.
    in_pri: Vec<i64>,
    out_pri: Vec<i64>,
    /// Whether any priority is not 0 (else arbiters are plain round-robin).
    prioritized: bool,
    /// Result: the resource matched to each requester, the requester matched to each resource.
    pub match_in: Vec<u16>,
    pub match_out: Vec<u16>,
}

impl Requests {
    pub fn new(n_in: usize, n_out: usize) -> Self {
        Requests {
            n_out,
            req_in: vec![0; n_in],
            req_out: vec![0; n_out],
            inputs: 0,
            outputs: 0,
            in_pri: vec![0; n_in * n_out],
            out_pri: vec![0; n_in * n_out],
            prioritized: false,
            match_in: vec![UNMATCHED; n_in],
            match_out: vec![UNMATCHED; n_out],
        }
    }

    /// Forgets the last round (only the entries it touched).
    pub fn clear(&mut self) {
        for i in bits(self.inputs) {
            self.req_in[i] = 0;
            self.match_in[i] = UNMATCHED;
        }
        for o in bits(self.outputs) {
            self.req_out[o] = 0;
            self.match_out[o] = UNMATCHED;
        }
        self.inputs = 0;
        self.outputs = 0;
        self.prioritized = false;
    }

    pub fn is_empty(&self) -> bool {
        self.inputs == 0
    }

    /// Whether requester `i` asks for resource `o`.
    #[inline]
    pub fn has(&self, i: usize, o: usize) -> bool {
        self.req_in[i] >> o & 1 != 0
    }

    #[inline]
    pub fn priority(&self, i: usize, o: usize) -> i64 {
        self.in_pri[i * self.n_out + o]
    }

    /// Adds (or replaces) the request of `i` for `o`.
    #[inline]
    pub fn add(&mut self, i: usize, o: usize, in_pri: i64, out_pri: i64) {
        self.req_in[i] |= 1 << o;
        self.req_out[o] |= 1 << i;
        self.inputs |= 1 << i;
        self.outputs |= 1 << o;
        let k = i * self.n_out + o;
        self.in_pri[k] = in_pri;
        self.out_pri[k] = out_pri;
        self.prioritized |= in_pri != 0 || out_pri != 0;
    }
}

/// The set bits of a mask, lowest first.
#[inline]
pub fn bits(mut m: Mask) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            return None;
        }
        let b = m.trailing_zeros() as usize;
        m &= m - 1;
        Some(b)
    })
}

/// The first set bit of `m` at or after `from`, wrapping around.
#[inline]
fn first_from(m: Mask, from: usize) -> usize {
    let hi = if from >= MAX_PORTS {
        0
    } else {
        m & (!0 << from)
    };
    if hi != 0 {
        hi.trailing_zeros() as usize
    } else {
        m.trailing_zeros() as usize
    }
}

/// A round-robin arbiter with priorities: the highest priority in `m`, ties to the first at or
/// after `ptr` (BookSim's `Supersedes`).
#[inline]
fn arbitrate(m: Mask, ptr: usize, size: usize, pri: impl Fn(usize) -> i64) -> usize {
    let mut best = usize::MAX;
    let mut best_key = (i64::MIN, usize::MAX);
    for b in bits(m) {
        let key = (pri(b), usize::MAX - (b + size - ptr) % size);
        if best == usize::MAX || key > best_key {
            best = b;
            best_key = key;
        }
    }
    best
}

/// One allocator of every router, with its arbiters' pointers.
pub struct Allocator {
    pub kind: AllocKind,
    iters: usize,
    n_in: usize,
    n_out: usize,
    /// iSLIP grant pointers / output arbiters' pointers, by `router · n_out + output`.
    out_ptr: Vec<u16>,
    /// iSLIP accept pointers / input arbiters' pointers, by `router · n_in + input`.
    in_ptr: Vec<u16>,
    /// Scratch: per resource, the requesters forwarded to it (separable input-first), or per
    /// requester the resources that granted it.
    fwd: Vec<Mask>,
}

impl Allocator {
    pub fn new(kind: AllocKind, iters: usize, routers: usize, n_in: usize, n_out: usize) -> Self {
        Allocator {
            kind,
            iters: iters.max(1),
            n_in,
            n_out,
            out_ptr: vec![0; routers * n_out],
            in_ptr: vec![0; routers * n_in],
            fwd: vec![0; n_in.max(n_out)],
        }
    }

    /// Matches `r`'s requests for `router`, filling `r.match_in` / `r.match_out`.
    pub fn allocate(&mut self, router: usize, r: &mut Requests) {
        if r.inputs == 0 {
            return;
        }
        if r.inputs.is_power_of_two() {
            // One requester (the common case at low load): every allocator matches it to the
            // resource its own arbiter prefers and moves both pointers.
            let i = r.inputs.trailing_zeros() as usize;
            let ptr = self.in_ptr[router * self.n_in + i] as usize;
            let o = if r.prioritized && self.kind != AllocKind::Islip {
                let n_out = self.n_out;
                arbitrate(r.req_in[i], ptr, n_out, |o| r.in_pri[i * n_out + o])
            } else {
                first_from(r.req_in[i], ptr)
            };
            r.match_in[i] = o as u16;
            r.match_out[o] = i as u16;
            self.in_ptr[router * self.n_in + i] = ((o + 1) % self.n_out) as u16;
            self.out_ptr[router * self.n_out + o] = ((i + 1) % self.n_in) as u16;
            return;
        }
        match self.kind {
            AllocKind::Islip => self.islip(router, r),
            AllocKind::InputFirst | AllocKind::Oldest => self.input_first(router, r),
            AllocKind::OutputFirst => self.output_first(router, r),
        }
    }

    fn islip(&mut self, router: usize, r: &mut Requests) {
        let (n_in, n_out) = (self.n_in, self.n_out);
        let mut in_matched: Mask = 0;
        let mut out_matched: Mask = 0;
        for iter in 0..self.iters {
            // Grant: each free output to the first free requesting input from its pointer.
            let mut granted_in: Mask = 0;
            for o in bits(r.outputs & !out_matched) {
                let cand = r.req_out[o] & !in_matched;
                if cand == 0 {
                    continue;
                }
                let i = first_from(cand, self.out_ptr[router * n_out + o] as usize);
                if self.fwd[i] == 0 {
                    granted_in |= 1 << i;
                }
                self.fwd[i] |= 1 << o;
            }
            if granted_in == 0 {
                break;
            }
            // Accept: each input takes the first granting output from its pointer.
            for i in bits(granted_in) {
                let grants = std::mem::take(&mut self.fwd[i]);
                let o = first_from(grants, self.in_ptr[router * n_in + i] as usize);
                in_matched |= 1 << i;
                out_matched |= 1 << o;
                r.match_in[i] = o as u16;
                r.match_out[o] = i as u16;
                if iter == 0 {
                    self.out_ptr[router * n_out + o] = ((i + 1) % n_in) as u16;
                    self.in_ptr[router * n_in + i] = ((o + 1) % n_out) as u16;
                }
            }
        }
    }

    fn input_first(&mut self, router: usize, r: &mut Requests) {
        let (n_in, n_out) = (self.n_in, self.n_out);
        let mut pick_in = [0u16; MAX_PORTS];
        let mut targets: Mask = 0;
        for i in bits(r.inputs) {
            let ptr = self.in_ptr[router * n_in + i] as usize;
            let o = if r.prioritized {
                arbitrate(r.req_in[i], ptr, n_out, |o| r.in_pri[i * n_out + o])
            } else {
                first_from(r.req_in[i], ptr)
            };
            pick_in[i] = o as u16;
            self.fwd[o] |= 1 << i;
            targets |= 1 << o;
        }
        for o in bits(targets) {
            let cand = std::mem::take(&mut self.fwd[o]);
            let ptr = self.out_ptr[router * n_out + o] as usize;
            let i = if r.prioritized {
                arbitrate(cand, ptr, n_in, |i| r.out_pri[i * n_out + o])
            } else {
                first_from(cand, ptr)
            };
            debug_assert_eq!(pick_in[i] as usize, o);
            r.match_in[i] = o as u16;
            r.match_out[o] = i as u16;
            self.in_ptr[router * n_in + i] = ((o + 1) % n_out) as u16;
            self.out_ptr[router * n_out + o] = ((i + 1) % n_in) as u16;
        }
    }

    fn output_first(&mut self, router: usize, r: &mut Requests) {
        let (n_in, n_out) = (self.n_in, self.n_out);
        let mut granted: Mask = 0;
        for o in bits(r.outputs) {
            let ptr = self.out_ptr[router * n_out + o] as usize;
            let i = if r.prioritized {
                arbitrate(r.req_out[o], ptr, n_in, |i| r.out_pri[i * n_out + o])
            } else {
                first_from(r.req_out[o], ptr)
            };
            self.fwd[i] |= 1 << o;
            granted |= 1 << i;
        }
        for i in bits(granted) {
            let cand = std::mem::take(&mut self.fwd[i]);
            let ptr = self.in_ptr[router * n_in + i] as usize;
            let o = if r.prioritized {
                arbitrate(cand, ptr, n_out, |o| r.in_pri[i * n_out + o])
            } else {
                first_from(cand, ptr)
            };
            r.match_in[i] = o as u16;
            r.match_out[o] = i as u16;
            self.in_ptr[router * n_in + i] = ((o + 1) % n_out) as u16;
            self.out_ptr[router * n_out + o] = ((i + 1) % n_in) as u16;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matching(kind: AllocKind, iters: usize, reqs: &[(usize, usize)]) -> Vec<(usize, usize)> {
        let mut a = Allocator::new(kind, iters, 1, 4, 4);
        let mut r = Requests::new(4, 4);
        for &(i, o) in reqs {
            r.add(i, o, 0, 0);
        }
        a.allocate(0, &mut r);
        (0..4)
            .filter(|&i| r.match_in[i] != UNMATCHED)
            .map(|i| (i, r.match_in[i] as usize))
            .collect()
    }

    #[test]
    fn islip_iterations_fill_the_matching() {
        // Everyone asks for output 0 first (pointers at 0): one iteration matches input 0 to
        // output 0 only, since input 0 is granted by outputs 0 and 1 and accepts 0.
        let reqs = [(0, 0), (0, 1), (1, 0), (1, 1)];
        assert_eq!(matching(AllocKind::Islip, 1, &reqs), vec![(0, 0)]);
        assert_eq!(matching(AllocKind::Islip, 2, &reqs), vec![(0, 0), (1, 1)]);
        // Separable input-first: both inputs pick output 0; one wins.
        assert_eq!(matching(AllocKind::InputFirst, 1, &reqs), vec![(0, 0)]);
        assert_eq!(
            matching(AllocKind::OutputFirst, 1, &reqs),
            vec![(0, 0)],
            "both outputs grant input 0"
        );
    }

    #[test]
    fn pointers_rotate_and_priorities_win() {
        let mut a = Allocator::new(AllocKind::Islip, 1, 1, 4, 4);
        let mut r = Requests::new(4, 4);
        let mut winners = Vec::new();
        for _ in 0..4 {
            r.clear();
            for i in 0..4 {
                r.add(i, 2, 0, 0);
            }
            a.allocate(0, &mut r);
            winners.push(r.match_out[2]);
        }
        assert_eq!(winners, vec![0, 1, 2, 3]);
        let mut a = Allocator::new(AllocKind::InputFirst, 1, 1, 4, 4);
        r.clear();
        r.add(0, 1, 0, 0);
        r.add(3, 1, 0, 5);
        a.allocate(0, &mut r);
        assert_eq!(r.match_out[1], 3);
    }
}
