//! First-fit packing of pairs into conflict-free phases: the AAPC phases of tori without grouped
//! phases, and every logical topology on a mesh (whose constructions need the wrap-around links).

use super::{Connection, Phase};
use crate::sim::optical::torus::Torus;
use crate::topology::NodeId;

/// First-fit packing of every ordered pair (by decreasing distance, then source, then
/// destination) into phases without link, source or destination conflicts.
pub fn greedy_phases(t: &Torus) -> Vec<Phase> {
    let all: Vec<(NodeId, NodeId)> = (0..t.nodes())
        .flat_map(|s| (0..t.nodes()).filter(move |&d| d != s).map(move |d| (s, d)))
        .collect();
    greedy_pairs(t, &all)
}

/// First-fit packing of the given pairs (longest first, then by source and destination) into
/// phases without link, source or destination conflicts; on a mesh this is how every logical
/// topology is realized, the torus constructions needing the wrap-around links.
pub fn greedy_pairs(t: &Torus, pairs: &[(NodeId, NodeId)]) -> Vec<Phase> {
    let mut pairs: Vec<(usize, NodeId, NodeId)> = pairs
        .iter()
        .map(|&(s, d)| (t.distance(s, d), s, d))
        .collect();
    pairs.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut phases: Vec<Phase> = Vec::new();
    let mut busy: Vec<(Vec<bool>, Vec<bool>, Vec<bool>)> = Vec::new();
    for (_, s, d) in pairs {
        let links = t.xy_route(s, d);
        let fit = busy
            .iter()
            .position(|(l, tx, rx)| !tx[s] && !rx[d] && links.iter().all(|&x| !l[x]));
        let i = match fit {
            Some(i) => i,
            None => {
                busy.push((
                    vec![false; t.link_slots()],
                    vec![false; t.nodes()],
                    vec![false; t.nodes()],
                ));
                phases.push(Vec::new());
                busy.len() - 1
            }
        };
        let (l, tx, rx) = &mut busy[i];
        for &x in &links {
            l[x] = true;
        }
        tx[s] = true;
        rx[d] = true;
        phases[i].push(Connection {
            src: s,
            dst: d,
            links,
        });
    }
    phases
}
