//! The AAPC phase of every ordered pair of a network, as the ordered-AAPC scheduler looks it up
//! (Yuan §5.4, Fig 5.14).

use super::{grouped_phases, TorusAapc};
use crate::sim::optical::torus::Torus;
use crate::topology::{Kind, Network, NodeId};

/// The AAPC phase of every ordered pair, as the ordered-AAPC scheduler looks it up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AapcPhases {
    nodes: usize,
    /// `phase[src * nodes + dst]`.
    phase: Vec<usize>,
    phases: usize,
}

impl AapcPhases {
    /// The phases for a ring or torus network, `None` for other kinds: the grouped N³/8 phases
    /// where they exist (square 2-D tori with a side of 8 or 16: 64 and 512 phases, Yuan's bound),
    /// the product of ring phases ([`super::product`]) on every other ring or torus.
    pub fn for_network(net: &Network) -> Option<AapcPhases> {
        let dims = &net.spec.dims;
        match net.spec.kind {
            Kind::Torus | Kind::Ring => {}
            _ => return None,
        }
        if let (Kind::Torus, [x, y]) = (net.spec.kind, dims.as_slice()) {
            if let Some(phases) = grouped_phases(&Torus::new(*x, *y)) {
                return Some(AapcPhases::from_phases(
                    x * y,
                    phases.iter().map(|p| p.iter().map(|c| (c.src, c.dst))),
                ));
            }
        }
        Some(AapcPhases::from_product(&TorusAapc::new(dims)))
    }

    /// From explicit phases, each a list of (src, dst); pairs in no phase go to phase 0.
    pub fn from_phases<P, I>(nodes: usize, phases: P) -> AapcPhases
    where
        P: IntoIterator<Item = I>,
        I: IntoIterator<Item = (NodeId, NodeId)>,
    {
        let mut phase = vec![0; nodes * nodes];
        let mut count = 0;
        for (k, pairs) in phases.into_iter().enumerate() {
            count = k + 1;
            for (s, d) in pairs {
                if s < nodes && d < nodes {
                    phase[s * nodes + d] = k;
                }
            }
        }
        AapcPhases {
            nodes,
            phase,
            phases: count.max(1),
        }
    }

    /// From the ring-product construction.
    pub fn from_product(t: &TorusAapc) -> AapcPhases {
        let nodes: usize = t.dims.iter().product();
        let phase = (0..nodes * nodes)
            .map(|i| t.phase_of(i / nodes.max(1), i % nodes.max(1)))
            .collect();
        AapcPhases {
            nodes,
            phase,
            phases: t.phases(),
        }
    }

    pub fn phases(&self) -> usize {
        self.phases
    }

    /// The phase holding `src → dst` (0 for nodes outside the network).
    pub fn phase_of(&self, src: NodeId, dst: NodeId) -> usize {
        if src < self.nodes && dst < self.nodes {
            self.phase[src * self.nodes + dst]
        } else {
            0
        }
    }
}
