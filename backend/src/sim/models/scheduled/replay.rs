//! The `scheduled` model: the plan from `ttdl run`, replayed cycle by cycle from the switch
//! programs (Minsky Fig 5-9), moving actual words.
//!
//! Each processor pushes a message's words into its `DownFifo` in the cycles the schedule gives
//! its injection; each switch runs its `SWITCH` instructions, taking, in each cycle of an
//! instruction, the next word of that message waiting at the instruction's input and putting it
//! on the output (a link to the next switch, or the `UpFifo` to the processor). A word crossing a
//! link is usable at the next switch after the switch latency (0: the same cycle, the thesis's
//! circuit model). The replay fails loudly if an instruction finds no word to move, if a link
//! carries two words in one cycle, or if a message arrives incomplete, out of order or later than
//! planned; otherwise it reports when each message arrived and when each task finished, by
//! running the task programs against those arrivals.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::schedule::{program, Problem, Resource, Schedule, ScheduleError};
use crate::switch::{self, port_towards, Instruction, SwitchPrograms};
use crate::topology::{Network, NodeId, Port};
use crate::traffic::{MsgId, Placement, Routing, Traffic};

/// What the replay saw.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayReport {
    /// Per message: the cycle after its last word reached its last destination.
    pub delivered: Vec<u64>,
    /// Per message: the cycle its sender released it (program order, against these arrivals).
    pub released: Vec<u64>,
    /// Per message: `delivered − released`.
    pub latency: Vec<u64>,
    /// Per task: the cycle its program ended.
    pub task_finish: Vec<u64>,
    /// The last task finish or delivery.
    pub completion: u64,
    /// Words moved across links (word-hops).
    pub word_hops: u64,
    /// Most words any one switch held waiting at once.
    pub max_buffered: u64,
    /// Cycles simulated.
    pub cycles: u64,
}

impl ReplayReport {
    pub fn mean_latency(&self) -> f64 {
        if self.latency.is_empty() {
            0.0
        } else {
            self.latency.iter().sum::<u64>() as f64 / self.latency.len() as f64
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    #[error("replay: {0}")]
    Mismatch(String),
}

/// Replays a schedule: builds the switch programs and executes them cycle by cycle.
pub fn replay(
    traffic: &Traffic,
    network: &Network,
    placement: &Placement,
    routing: &Routing,
    schedule: &Schedule,
) -> Result<ReplayReport, ReplayError> {
    let problem = Problem::new(traffic, network, placement, routing, schedule.hardware)?;
    let programs = switch::build(&problem, schedule);
    run(&problem, schedule, &programs)
}

/// Executes given switch programs (with the schedule's injections as the processors' sends).
pub fn run(
    problem: &Problem,
    schedule: &Schedule,
    programs: &SwitchPrograms,
) -> Result<ReplayReport, ReplayError> {
    let traffic = problem.traffic;
    let network = problem.network;
    let h = schedule.hardware.hop_latency;
    let n = traffic.messages.len();
    let bad = |s: String| Err(ReplayError::Mismatch(s));

    // Every instruction, with its node; grouped by start cycle.
    let mut all: Vec<(NodeId, Instruction)> = Vec::new();
    for np in &programs.nodes {
        for i in &np.instructions {
            all.push((np.node, *i));
        }
    }
    // How far along its message's route each instruction sits: running them in this order lets
    // a word cross every switch of a zero-latency route in one pass.
    let depth: Vec<usize> = all
        .iter()
        .map(|(node, i)| {
            let r = match i.output {
                Port::Eject => Resource::Eject(*node),
                out => match network.neighbor(*node, out) {
                    Some(to) => Resource::Link { from: *node, to },
                    None => return usize::MAX,
                },
            };
            problem
                .steps
                .get(i.msg)
                .and_then(|st| st.iter().position(|s| s.resource == r))
                .unwrap_or(usize::MAX)
        })
        .collect();
    let injections = switch::injections(schedule);
    let mut starts: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (k, (_, i)) in all.iter().enumerate() {
        starts.entry(i.start).or_default().push(k);
    }
    let mut inj_starts: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (k, hold) in injections.iter().enumerate() {
        inj_starts.entry(hold.start).or_default().push(k);
    }
    let horizon = all
        .iter()
        .map(|(_, i)| i.end)
        .chain(injections.iter().map(|h| h.end))
        .max()
        .unwrap_or(0);

    // Words waiting at (node, msg, input port): (word index, usable from cycle).
    let mut waiting: HashMap<(NodeId, MsgId, Port), Vec<(u64, u64)>> = HashMap::new();
    // How far each (node, msg, output port) has read its input's word list.
    let mut cursor: HashMap<(NodeId, MsgId, Port), usize> = HashMap::new();
    // Words each message's processor has pushed so far.
    let mut pushed = vec![0u64; n];
    // Per (msg, destination node): words received, and when the last one came.
    let mut received: BTreeMap<(MsgId, NodeId), (u64, u64)> = BTreeMap::new();
    let mut word_hops = 0u64;
    // Buffer occupancy events per node: +1 when a word becomes usable, −1 when it is taken.
    let mut buffer_events: Vec<(NodeId, u64, i64)> = Vec::new();

    let mut active_inj: Vec<usize> = Vec::new();
    let mut active: Vec<usize> = Vec::new();
    let mut t = 0u64;
    while t < horizon {
        // Skip idle stretches.
        if active.is_empty() && active_inj.is_empty() {
            let next = [starts.range(t..).next(), inj_starts.range(t..).next()]
                .into_iter()
                .flatten()
                .map(|(&s, _)| s)
                .min();
            match next {
                Some(s) => t = t.max(s),
                None => break,
            }
        }
        if let Some(ks) = starts.get(&t) {
            active.extend(ks);
            active.sort_by_key(|&k| (depth[k], k));
        }
        if let Some(ks) = inj_starts.get(&t) {
            active_inj.extend(ks);
        }
        active.retain(|&k| all[k].1.end > t);
        active_inj.retain(|&k| injections[k].end > t);

        // Processors push one word per injection hold per cycle.
        for &k in &active_inj {
            let hold = injections[k];
            let Resource::Inject(node) = hold.resource else {
                continue;
            };
            let w = pushed[hold.msg];
            pushed[hold.msg] += 1;
            waiting
                .entry((node, hold.msg, Port::Inject))
                .or_default()
                .push((w, t));
            buffer_events.push((node, t, 1));
        }
        // Switches: each active instruction moves one word this cycle; with zero latency a word
        // may cross several switches in one cycle, so repeat until nothing moves.
        let mut done = vec![false; active.len()];
        let mut links_used: HashMap<(NodeId, Port), Vec<MsgId>> = HashMap::new();
        loop {
            let mut progress = false;
            for (a, &k) in active.iter().enumerate() {
                if done[a] {
                    continue;
                }
                let (node, ins) = all[k];
                let key_in = (node, ins.msg, ins.input);
                let key_out = (node, ins.msg, ins.output);
                let c = cursor.get(&key_out).copied().unwrap_or(0);
                let Some(&(word, usable)) = waiting.get(&key_in).and_then(|v| v.get(c)) else {
                    continue;
                };
                if usable > t {
                    continue;
                }
                done[a] = true;
                progress = true;
                cursor.insert(key_out, c + 1);
                let used = links_used.entry((node, ins.output)).or_default();
                used.push(ins.msg);
                let cap = if ins.output == Port::Eject {
                    schedule.hardware.ports.max(1)
                } else {
                    1
                };
                if used.len() > cap as usize {
                    return bad(format!(
                        "node {node} sends messages {:?} out of {} in cycle {t}",
                        used,
                        ins.output.name()
                    ));
                }
                buffer_events.push((node, t, -1));
                match ins.output {
                    Port::Eject => {
                        let e = received.entry((ins.msg, node)).or_insert((0, 0));
                        if word != e.0 {
                            return bad(format!(
                                "message {} reached node {node} out of order: word {word} where {} was due",
                                ins.msg, e.0
                            ));
                        }
                        e.0 += 1;
                        e.1 = t + 1;
                    }
                    out => {
                        let Some(next) = network.neighbor(node, out) else {
                            return bad(format!(
                                "node {node} sends message {} out of {}, which leads nowhere",
                                ins.msg,
                                out.name()
                            ));
                        };
                        word_hops += 1;
                        let port_in = port_towards(network, next, node);
                        waiting
                            .entry((next, ins.msg, port_in))
                            .or_default()
                            .push((word, t + h));
                        buffer_events.push((next, t + h, 1));
                    }
                }
            }
            if !progress {
                break;
            }
        }
        if let Some(a) = done.iter().position(|d| !d) {
            let (node, ins) = all[active[a]];
            return bad(format!(
                "in cycle {t}, node {node} is to send message {} from {} to {} but no word of it is there",
                ins.msg,
                ins.input.name(),
                ins.output.name()
            ));
        }
        t += 1;
    }

    // Every message complete at every destination, when planned.
    let node_of = &problem.placement.node_of;
    let mut delivered = vec![0u64; n];
    for (m, msg) in traffic.messages.iter().enumerate() {
        let mut nodes: Vec<NodeId> = msg
            .dst
            .iter()
            .filter_map(|&d| node_of.get(d).copied())
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        for node in nodes {
            if msg.size == 0 {
                delivered[m] = delivered[m].max(schedule.arrival[m]);
                continue;
            }
            let (words, at) = received.get(&(m, node)).copied().unwrap_or((0, 0));
            if words != msg.size {
                return bad(format!(
                    "message {m} delivered {words} of its {} words at node {node}",
                    msg.size
                ));
            }
            delivered[m] = delivered[m].max(at);
        }
        if delivered[m] != schedule.arrival[m] {
            return bad(format!(
                "message {m} arrived at {} but the schedule planned {}",
                delivered[m], schedule.arrival[m]
            ));
        }
    }

    // The programs against the replayed arrivals.
    let (released, task_finish) = if program::is_driven(traffic) {
        let timing = program::run_with(traffic, |m, d, at| {
            node_of
                .get(d)
                .and_then(|node| received.get(&(m, *node)))
                .map_or(at.max(schedule.arrival[m]), |&(_, a)| a)
        })?;
        for m in 0..n {
            if schedule.sent[m] < timing.release[m] {
                return bad(format!(
                    "message {m} was injected at {} before its sender released it at {}",
                    schedule.sent[m], timing.release[m]
                ));
            }
        }
        (timing.release, timing.task_finish)
    } else {
        (
            traffic.messages.iter().map(|m| m.release).collect(),
            schedule.task_finish.clone(),
        )
    };
    let latency = (0..n)
        .map(|m| delivered[m].saturating_sub(released[m]))
        .collect();
    let completion = task_finish
        .iter()
        .chain(delivered.iter())
        .copied()
        .max()
        .unwrap_or(0);

    // Peak buffering per node.
    buffer_events.sort_by_key(|&(node, t, d)| (node, t, d));
    let mut max_buffered = 0i64;
    let mut cur: (NodeId, i64) = (usize::MAX, 0);
    for (node, _, d) in buffer_events {
        if node != cur.0 {
            cur = (node, 0);
        }
        cur.1 += d;
        max_buffered = max_buffered.max(cur.1);
    }

    Ok(ReplayReport {
        delivered,
        released,
        latency,
        task_finish,
        completion,
        word_hops,
        max_buffered: max_buffered.max(0) as u64,
        cycles: horizon,
    })
}
