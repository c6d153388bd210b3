//! Switch programs: what each node's switch does on every cycle (Minsky Fig 5-9).
//!
//! A NuMesh node's communication finite state machine waits for the valid bit, then runs
//! `SWITCH` instructions: for cycles `Start ≤ t < End`, move the words of message `Msg` from input
//! port `In` to output port `Out` (`DownFifo` is the processor's injection FIFO, `UpFifo` its
//! ejection FIFO). One instruction per message fragment per node it passes, taken from the
//! schedule's hold on the output resource.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::schedule::{Hold, Problem, Resource, Schedule, Step};
use crate::topology::{Network, NodeId, Port};
use crate::traffic::MsgId;

/// One `SWITCH` instruction.
///
/// 20 bytes: the programs of a plan hold one per hold that leaves a switch, a hundred million
/// for a million messages, so the cycles and the message are kept in 32 bits as a
/// [`Hold`] keeps them (which the instruction is made from).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Instruction {
    pub start: u32,
    pub end: u32,
    pub msg: u32,
    pub input: Port,
    pub output: Port,
}

impl Instruction {
    /// The message it moves.
    pub fn msg(&self) -> MsgId {
        self.msg as MsgId
    }
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
        Resource::Link { from, to } => Some((
            from as NodeId,
            port_towards(network, from as NodeId, to as NodeId),
        )),
        Resource::Eject(n) => Some((n as NodeId, Port::Eject)),
        Resource::Inject(_) => None,
    }
}

/// The port a resource enters the next switch by.
fn input_of(network: &Network, r: Resource) -> Port {
    match r {
        Resource::Link { from, to } => port_towards(network, to as NodeId, from as NodeId),
        Resource::Inject(_) => Port::Inject,
        Resource::Eject(_) => Port::Eject,
    }
}

/// The instruction hold `h`, on step `j` of its message's route (`steps`), is in its switch's
/// program, and the node whose switch runs it ([`ports`]). `None` for an injection, which is the
/// processor's, not the switch's, and for a step `j` the route does not have. The replay runs
/// these instructions without listing them ([`crate::sim::models::scheduled::replay`]).
pub fn instruction(
    network: &Network,
    steps: &[Step],
    j: usize,
    h: &Hold,
) -> Option<(NodeId, Instruction)> {
    let (node, input, output) = ports(network, steps, j)?;
    let (msg, start, end) = h.fields32();
    Some((
        node,
        Instruction {
            start,
            end,
            msg,
            input,
            output,
        },
    ))
}

/// The switch that sends a message along step `j` of its route (`steps`), and the ports the
/// words come in and go out by: out by the port of the step's resource, in by the port the step
/// before it enters that switch by (the processor's `DownFifo` for a first step). `None` for an
/// injection and for a step the route does not have.
pub fn ports(network: &Network, steps: &[Step], j: usize) -> Option<(NodeId, Port, Port)> {
    let step = steps.get(j)?;
    let (node, output) = output_of(network, step.resource())?;
    let input = match step.parent() {
        Some(p) => input_of(network, steps.get(p)?.resource()),
        None => Port::Inject,
    };
    Some((node, input, output))
}

/// Builds every node's program from a (verified) schedule.
pub fn build(problem: &Problem, schedule: &Schedule) -> SwitchPrograms {
    build_from_holds(problem, &schedule.holds)
}

/// [`build`] from the holds alone: the programs are the holds on their routes, whatever the
/// schedule's timing (a periodic plan's longer runs, extrapolated from a verified kernel).
pub fn build_from_holds(problem: &Problem, holds: &[crate::schedule::Hold]) -> SwitchPrograms {
    let network = problem.network;
    // Each node's program sized once (a count first): the programs of a large run hold millions
    // of instructions, which vectors grown by doubling would hold up to twice over.
    let mut count = vec![0usize; network.nodes()];
    for h in holds {
        if let Some(c) = output_of(network, h.resource()).and_then(|(node, _)| count.get_mut(node))
        {
            *c += 1;
        }
    }
    let mut nodes: Vec<NodeProgram> = (0..network.nodes())
        .map(|node| NodeProgram {
            node,
            instructions: Vec::with_capacity(count[node]),
        })
        .collect();
    for h in holds {
        let Some(steps) = problem.steps.get(h.msg()) else {
            continue;
        };
        let Some(j) = steps.iter().position(|s| s.resource() == h.resource()) else {
            continue;
        };
        if let Some((node, i)) = instruction(network, steps, j, h) {
            if let Some(np) = nodes.get_mut(node) {
                np.instructions.push(i);
            }
        }
    }
    for np in &mut nodes {
        // Equal instructions are identical, so an unstable sort gives the same programs.
        np.instructions.sort_unstable();
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
        .filter(|h| matches!(h.resource(), Resource::Inject(_)))
        .copied()
        .collect()
}

/// Switch programs with a loop (Minsky §6.2.1: a periodic schedule's switch runs its kernel
/// over and over): per node, a prologue, one window of the kernel with a repetition count, and
/// an epilogue — the NuMesh switch's program for a run of any length in the same few lines.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopPrograms {
    /// Cycles between repetitions of the loop body.
    pub period: u64,
    /// Message ids advance by this much per repetition.
    pub msg_step: usize,
    pub nodes: Vec<LoopProgram>,
}

/// One node's looped program: `prologue`, then `body` `count` times (each repetition `period`
/// cycles after the last, its message ids `msg_step` higher), then `epilogue` (absolute cycles).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopProgram {
    pub node: NodeId,
    pub prologue: Vec<Instruction>,
    pub body: Vec<Instruction>,
    pub count: u64,
    pub epilogue: Vec<Instruction>,
}

impl LoopPrograms {
    /// Per node, the loop that turns `short` (a run) into `longer` (the same run with one more
    /// kernel of `period` cycles and `msg_step` messages inserted): `short`'s instructions up to
    /// where the two part, then the window of `longer` there, then the rest of `short` moved by
    /// one period. `None` when a node's programs differ otherwise.
    pub fn find(
        short: &SwitchPrograms,
        longer: &SwitchPrograms,
        period: u64,
        msg_step: usize,
    ) -> Option<LoopPrograms> {
        let mut nodes = Vec::with_capacity(short.nodes.len());
        for (a, b) in short.nodes.iter().zip(&longer.nodes) {
            let (ia, ib) = (&a.instructions, &b.instructions);
            let c = ia.iter().zip(ib).take_while(|(x, y)| x == y).count();
            if c == ia.len() && c == ib.len() {
                nodes.push(LoopProgram {
                    node: a.node,
                    prologue: ia.clone(),
                    body: Vec::new(),
                    count: 0,
                    epilogue: Vec::new(),
                });
                continue;
            }
            // A cut `t` before which both runs agree, after which `longer` is `short` one
            // period later, with the kernel's window `[t, t + period)` in between.
            let first = ia
                .get(c)
                .map_or(u64::MAX, |i| i.start as u64)
                .min(ib.get(c)?.start as u64);
            let cut = (0..=4 * period)
                .filter_map(|back| first.checked_sub(back))
                .find_map(|t| {
                    let lo_a = ia.partition_point(|i| (i.start as u64) < t);
                    let lo_b = ib.partition_point(|i| (i.start as u64) < t);
                    let hi_b = ib.partition_point(|i| (i.start as u64) < t + period);
                    let moved: Option<Vec<Instruction>> = ia[lo_a..]
                        .iter()
                        .map(|i| shifted(i, period, msg_step))
                        .collect();
                    let same = moved.is_some_and(|moved| ib[hi_b..] == moved[..]);
                    (ia[..lo_a] == ib[..lo_b] && same && hi_b > lo_b).then_some((lo_a, lo_b, hi_b))
                });
            let (lo_a, lo_b, hi_b) = cut?;
            let c = lo_a;
            let body = ib[lo_b..hi_b].to_vec();
            nodes.push(LoopProgram {
                node: a.node,
                prologue: ia[..c].to_vec(),
                body,
                count: 1,
                epilogue: ia[c..].to_vec(),
            });
        }
        Some(LoopPrograms {
            period,
            msg_step,
            nodes,
        })
    }

    /// The same loops for a run `extra` kernels longer: more repetitions, the epilogue later.
    pub fn lengthened(&self, extra: u64) -> LoopPrograms {
        let mut out = self.clone();
        for np in out.nodes.iter_mut().filter(|np| !np.body.is_empty()) {
            np.count += extra;
        }
        out
    }

    /// Every instruction, the loops unrolled (to check a loop against the plain programs).
    pub fn unrolled(&self) -> SwitchPrograms {
        SwitchPrograms {
            nodes: self
                .nodes
                .iter()
                .map(|np| {
                    // A repetition past 32-bit cycles is left out, so the check fails.
                    let mut instructions = np.prologue.clone();
                    for r in 0..np.count {
                        instructions.extend(np.body.iter().filter_map(|i| self.repetition(i, r)));
                    }
                    instructions.extend(
                        np.epilogue
                            .iter()
                            .filter_map(|i| self.repetition(i, np.count)),
                    );
                    NodeProgram {
                        node: np.node,
                        instructions,
                    }
                })
                .collect(),
        }
    }

    /// Instruction `i` of the loop body (or the epilogue) after `r` repetitions; `None` past
    /// 32-bit cycles or message numbers.
    fn repetition(&self, i: &Instruction, r: u64) -> Option<Instruction> {
        shifted(
            i,
            self.period.checked_mul(r)?,
            self.msg_step.checked_mul(r as usize)?,
        )
    }

    /// [`LoopPrograms::repetition`] in full width, for the listing: (message, start, end).
    fn listed(&self, i: &Instruction, r: u64) -> (u128, u128, u128) {
        let (r, p, m) = (r as u128, self.period as u128, self.msg_step as u128);
        (
            i.msg as u128 + m * r,
            i.start as u128 + p * r,
            i.end as u128 + p * r,
        )
    }
}

impl fmt::Display for LoopPrograms {
    /// The Fig 5-9 listing with a loop: the body's cycles and message ids are those of its first
    /// repetition; each repetition runs `Period` cycles later on messages `MsgStep` higher.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Repetition `r` of an instruction, in full width (a long run's epilogue may lie past
        // the 32-bit cycles an instruction keeps).
        let line = |f: &mut fmt::Formatter<'_>, indent: &str, i: &Instruction, r: u64| {
            let (msg, start, end) = self.listed(i, r);
            writeln!(
                f,
                "#Instruction# {indent}SWITCH Msg:{msg} Start: {start} End: {end} In: {} Out: {}",
                i.input.name(),
                i.output.name()
            )
        };
        for np in &self.nodes {
            writeln!(f, "[Schedule for node: {}]", np.node)?;
            writeln!(f, "#Instruction# WAIT-FOR-VALID-BIT")?;
            for i in &np.prologue {
                line(f, "", i, 0)?;
            }
            if np.count > 0 {
                writeln!(
                    f,
                    "#Instruction# LOOP Count: {} Period: {} MsgStep: {}",
                    np.count, self.period, self.msg_step
                )?;
                for i in &np.body {
                    line(f, "  ", i, 0)?;
                }
                writeln!(f, "#Instruction# END-LOOP")?;
            }
            for i in &np.epilogue {
                line(f, "", i, np.count)?;
            }
        }
        Ok(())
    }
}

/// `i`, `cycles` later on a message `msgs` higher; `None` past 32 bits.
fn shifted(i: &Instruction, cycles: u64, msgs: usize) -> Option<Instruction> {
    let up = |x: u32, by: u64| u32::try_from(x as u64 + by).ok();
    Some(Instruction {
        start: up(i.start, cycles)?,
        end: up(i.end, cycles)?,
        msg: up(i.msg, u64::try_from(msgs).ok()?)?,
        ..*i
    })
}
