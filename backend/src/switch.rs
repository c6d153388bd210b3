//! Switch programs: what each node's switch does on every cycle (Minsky Fig 5-9).
//!
//! A NuMesh node's communication finite state machine waits for the valid bit, then runs
//! `SWITCH` instructions: for cycles `Start ≤ t < End`, move the words of message `Msg` from input
//! port `In` to output port `Out` (`DownFifo` is the processor's injection FIFO, `UpFifo` its
//! ejection FIFO). One instruction per message fragment per node it passes, taken from the
//! schedule's hold on the output resource.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::schedule::{Hold, Problem, Resource, Schedule};
use crate::topology::{Network, NodeId, Port};
use crate::traffic::MsgId;

/// One `SWITCH` instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Instruction {
    pub start: u64,
    pub end: u64,
    pub msg: MsgId,
    pub input: Port,
    pub output: Port,
}

/// A node's program.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeProgram {
    pub node: NodeId,
    /// In order of start cycle (then message, then output port).
    pub instructions: Vec<Instruction>,
}

/// Every node's program, by node id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchPrograms {
    pub nodes: Vec<NodeProgram>,
}

/// The port of `node` that faces `neighbour` (the port of the link leaving `node` towards it).
pub fn port_towards(network: &Network, node: NodeId, neighbour: NodeId) -> Port {
    match network.link_between(node, neighbour) {
        Some(l) => network.links[l].port,
        // A one-way link: name the input by the neighbour's index among the node's links.
        None => Port::Other(neighbour.min(u16::MAX as usize) as u16),
    }
}

/// The port a resource leaves its switch by, and the node whose switch that is (None for the
/// processor's own injection, which is no switch instruction).
fn output_of(network: &Network, r: Resource) -> Option<(NodeId, Port)> {
    match r {
        Resource::Link { from, to } => Some((from, port_towards(network, from, to))),
        Resource::Eject(n) => Some((n, Port::Eject)),
        Resource::Inject(_) => None,
    }
}

/// The port a resource enters the next switch by.
fn input_of(network: &Network, r: Resource) -> Port {
    match r {
        Resource::Link { from, to } => port_towards(network, to, from),
        Resource::Inject(_) => Port::Inject,
        Resource::Eject(_) => Port::Eject,
    }
}

/// Builds every node's program from a (verified) schedule.
pub fn build(problem: &Problem, schedule: &Schedule) -> SwitchPrograms {
    let network = problem.network;
    let mut nodes: Vec<NodeProgram> = (0..network.nodes())
        .map(|node| NodeProgram {
            node,
            instructions: Vec::new(),
        })
        .collect();
    for h in &schedule.holds {
        let Some((node, output)) = output_of(network, h.resource) else {
            continue;
        };
        let Some(step) = problem
            .steps
            .get(h.msg)
            .and_then(|s| s.iter().find(|s| s.resource == h.resource))
        else {
            continue;
        };
        let input = match step.parent {
            Some(p) => input_of(network, problem.steps[h.msg][p].resource),
            None => Port::Inject,
        };
        if let Some(np) = nodes.get_mut(node) {
            np.instructions.push(Instruction {
                start: h.start,
                end: h.end,
                msg: h.msg,
                input,
                output,
            });
        }
    }
    for np in &mut nodes {
        np.instructions.sort();
    }
    SwitchPrograms { nodes }
}

impl fmt::Display for SwitchPrograms {
    /// The Fig 5-9 listing.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for np in &self.nodes {
            write!(f, "{np}")?;
        }
        Ok(())
    }
}

impl fmt::Display for NodeProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "[Schedule for node: {}]", self.node)?;
        writeln!(f, "#Instruction# WAIT-FOR-VALID-BIT")?;
        for i in &self.instructions {
            writeln!(
                f,
                "#Instruction# SWITCH Msg:{} Start: {} End: {} In: {} Out: {}",
                i.msg,
                i.start,
                i.end,
                i.input.name(),
                i.output.name()
            )?;
        }
        Ok(())
    }
}

/// Holds of a message on the resource leaving `node` by `output` (used by the replay to find the
/// processor's injection cycles).
pub fn injections(schedule: &Schedule) -> Vec<Hold> {
    schedule
        .holds
        .iter()
        .filter(|h| matches!(h.resource, Resource::Inject(_)))
        .copied()
        .collect()
}
