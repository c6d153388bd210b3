//! Irregular networks from BookSim2's `anynet` files (`--network anynet:FILE`).
//!
//! The format, as BookSim2's `src/examples/anynet/README` describes it: one line per router (or
//! per node), a head `router R` (or `node N`) followed by what it connects to — `node N` (a
//! terminal attached to the router), `router R2` (a channel between the two routers), optionally
//! followed by the channel's latency in cycles (`router 0 router 1 10`). A connection need be
//! written once: links are bidirectional. A node is attached to exactly one router. Keywords are
//! read in any case (`Router 0`), ids may be any numbers as long as each names one router or
//! node, and `#` or `//` starts a comment (an addition of ours; BookSim2 has none).
//!
//! How it maps onto TTDL's nodes. Every TTDL node has a switch and one injection and one
//! ejection port, and a link carries one word per cycle each way. A BookSim2 *node* (terminal)
//! becomes a TTDL node linked to its router, a BookSim2 *router* a TTDL node of its own: terminals
//! are nodes `0..T` (in the order of their BookSim2 ids), routers `T..T+R` (likewise), and
//! placement uses the first `NetworkSpec::terminals` nodes only, so tasks run on terminals. Every link, terminal–router and
//! router–router, is one TTDL link each way. A latency other than 1 is refused with its place in
//! the file: no model here gives a link more than one cycle (write a longer channel as a chain of
//! routers).
//!
//! The scheduled plan routes on shortest paths as on any graph; the dynamic models route by
//! [`super::updown`] tables (deadlock-free up*/down*).

use std::collections::BTreeMap;

use super::registry::Topology;
use super::{graph, Kind, Link, NetworkSpec, NodeId, TopologyError};

pub struct Anynet;

impl Topology for Anynet {
    fn name(&self) -> &'static str {
        "anynet"
    }
    fn help(&self) -> &'static str {
        "an irregular network from a BookSim2 anynet file (`router R node N router R2 …` per line)"
    }
    fn example(&self) -> &'static str {
        "anynet:FILE"
    }
    /// ARGS is the file's path; the file is read now, so the spec holds the whole network.
    fn parse(&self, _kind: Kind, args: &str, _whole: &str) -> Result<NetworkSpec, TopologyError> {
        read_file(args)
    }
    fn spec_args(&self, spec: &NetworkSpec) -> String {
        spec.file.clone().unwrap_or_else(|| "-".into())
    }
    fn arity(&self) -> Option<usize> {
        Some(2)
    }
    fn takes_edges(&self) -> bool {
        true
    }
    fn node_count(&self, spec: &NetworkSpec) -> usize {
        spec.dims.iter().fold(0usize, |a, &d| a.saturating_add(d))
    }
    fn terminals(&self, spec: &NetworkSpec) -> usize {
        spec.dims.first().copied().unwrap_or(0)
    }
    fn build(&self, spec: &NetworkSpec) -> Result<(Vec<Vec<i64>>, Vec<Link>), TopologyError> {
        graph::build(self.node_count(spec), &spec.edges, &spec.to_string())
    }
}

/// The largest anynet file read (a guard against `anynet:/dev/zero`).
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// Reads and parses an anynet file.
pub fn read_file(path: &str) -> Result<NetworkSpec, TopologyError> {
    use std::io::Read;
    let bad = |why: String| TopologyError::Shape(format!("anynet:{path}"), why);
    let file = std::fs::File::open(path).map_err(|e| bad(format!("cannot read: {e}")))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| bad(format!("cannot read: {e}")))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(bad(format!(
            "the file is larger than {} MiB",
            MAX_FILE_BYTES >> 20
        )));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| bad("cannot read: the file is not UTF-8 text".into()))?;
    let mut spec = parse_text(&text, path)?;
    spec.file = Some(path.to_string());
    Ok(spec)
}

/// What a word of a line names.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Item {
    Router(u64),
    Node(u64),
}

/// Parses anynet text; `file` names it in messages (`FILE:LINE:COLUMN: …`).
pub fn parse_text(text: &str, file: &str) -> Result<NetworkSpec, TopologyError> {
    let mut routers: BTreeMap<u64, (usize, usize)> = BTreeMap::new();
    // Node id → (router id, where first attached).
    let mut attached: BTreeMap<u64, (u64, (usize, usize))> = BTreeMap::new();
    let mut loose_nodes: BTreeMap<u64, (usize, usize)> = BTreeMap::new();
    let mut channels: Vec<(u64, u64)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let err = |col: usize, message: String| TopologyError::File {
            file: file.to_string(),
            line: line_no,
            column: col,
            message,
        };
        let code = strip_comment(raw);
        let words = words(code);
        let mut k = 0;
        let mut head: Option<Item> = None;
        while k < words.len() {
            let (col, word) = words[k];
            let keyword = word.to_ascii_lowercase();
            let is_router = match keyword.as_str() {
                "router" => true,
                "node" => false,
                _ if word.parse::<u64>().is_ok() => {
                    return Err(err(
                        col,
                        format!("`{word}`: a latency follows a `router R2` connection only"),
                    ))
                }
                _ => {
                    return Err(err(
                        col,
                        format!("expected `router` or `node`, found `{word}`"),
                    ))
                }
            };
            let what = if is_router { "router" } else { "node" };
            let (id_col, id_word) = *words.get(k + 1).ok_or_else(|| {
                err(
                    col + word.len(),
                    format!("`{word}` needs a {what} number after it"),
                )
            })?;
            let id = id_word.parse::<u64>().map_err(|_| {
                err(
                    id_col,
                    format!("`{id_word}` is not a {what} number (a whole number ≥ 0)"),
                )
            })?;
            k += 2;
            let item = if is_router {
                Item::Router(id)
            } else {
                Item::Node(id)
            };
            // A latency after a router connection (not after the head).
            if let (Some(_), Item::Router(_)) = (head, item) {
                if let Some(&(lat_col, lat_word)) = words.get(k) {
                    if let Ok(lat) = lat_word.parse::<u64>() {
                        if lat != 1 {
                            return Err(err(
                                lat_col,
                                format!(
                                    "link latency {lat}: every link here takes one cycle \
                                     (write a longer channel as a chain of routers)"
                                ),
                            ));
                        }
                        k += 1;
                    }
                }
            }
            match item {
                Item::Router(r) => {
                    routers.entry(r).or_insert((line_no, col));
                }
                Item::Node(n) => {
                    loose_nodes.entry(n).or_insert((line_no, col));
                }
            }
            let Some(h) = head else {
                head = Some(item);
                continue;
            };
            match (h, item) {
                (Item::Node(a), Item::Node(b)) => {
                    return Err(err(
                        col,
                        format!("node {a} can connect to a router only, not to node {b}"),
                    ))
                }
                (Item::Router(a), Item::Router(b)) if a == b => {
                    return Err(err(col, format!("router {a} is linked to itself")))
                }
                (Item::Router(a), Item::Router(b)) => channels.push((a.min(b), a.max(b))),
                (Item::Router(r), Item::Node(n)) | (Item::Node(n), Item::Router(r)) => {
                    match attached.get(&n) {
                        Some(&(other, (l, c))) if other != r => {
                            return Err(err(
                                col,
                                format!(
                                    "node {n} is attached to router {other} already \
                                     ({file}:{l}:{c}); a node has one router"
                                ),
                            ))
                        }
                        Some(_) => {}
                        None => {
                            attached.insert(n, (r, (line_no, col)));
                        }
                    }
                }
            }
        }
    }
    for (n, &(l, c)) in &loose_nodes {
        if !attached.contains_key(n) {
            return Err(TopologyError::File {
                file: file.to_string(),
                line: l,
                column: c,
                message: format!("node {n} is not attached to any router"),
            });
        }
    }
    if routers.is_empty() {
        return Err(TopologyError::File {
            file: file.to_string(),
            line: 1,
            column: 1,
            message: "no routers: write `router R node N router R2 …` per line".into(),
        });
    }
    let terminals = attached.len();
    let node_index: BTreeMap<u64, NodeId> =
        attached.keys().enumerate().map(|(i, &n)| (n, i)).collect();
    let router_index: BTreeMap<u64, NodeId> = routers
        .keys()
        .enumerate()
        .map(|(i, &r)| (r, terminals + i))
        .collect();
    let mut edges: Vec<(NodeId, NodeId)> = Vec::with_capacity(terminals + channels.len());
    for (n, (r, _)) in &attached {
        edges.push((node_index[n], router_index[r]));
    }
    channels.sort_unstable();
    channels.dedup();
    for (a, b) in channels {
        edges.push((router_index[&a], router_index[&b]));
    }
    if terminals == 0 {
        return Err(TopologyError::File {
            file: file.to_string(),
            line: 1,
            column: 1,
            message: "no nodes: attach at least one `node N` to a router".into(),
        });
    }
    let mut spec = NetworkSpec::new(Kind::Anynet, vec![terminals, routers.len()]);
    spec.edges = edges;
    Ok(spec)
}

/// The line without a `#` or `//` comment.
fn strip_comment(line: &str) -> &str {
    let end = [line.find('#'), line.find("//")]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(line.len());
    &line[..end]
}

/// The whitespace-separated words of a line with their 1-based columns (in characters).
fn words(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, ch) in line.char_indices() {
        if ch.is_whitespace() {
            if let Some(s) = start.take() {
                out.push((s, &line[s..i]));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push((s, &line[s..]));
    }
    out.into_iter()
        .map(|(s, w)| (line[..s].chars().count() + 1, w))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::Network;

    fn err(text: &str) -> String {
        parse_text(text, "t.anynet").unwrap_err().to_string()
    }

    /// BookSim2's own example: three routers with three nodes each, router 0–1, 2–1, 2–0.
    #[test]
    fn booksims_example_builds() {
        let text = "router 0 node 0 node 1 node 2 router 1\n\
                    router 1 node 3 node 4 node 5\n\
                    router 2 node 6 node 7 node 8 router 1 router 0\n";
        let spec = parse_text(text, "ex").unwrap();
        assert_eq!(spec.dims, vec![9, 3]);
        assert_eq!(spec.terminals(), 9);
        let net = Network::build(&spec).unwrap();
        assert_eq!(net.nodes(), 12);
        // 9 terminal links and 3 router channels, both ways.
        assert_eq!(net.links.len(), 24);
        assert_eq!(net.distance(0, 8), 3); // node 0 → router 0 → router 2 → node 8
        assert_eq!(net.distance(0, 1), 2);
    }

    #[test]
    fn ids_need_not_be_dense_and_latency_one_is_read() {
        let spec =
            parse_text("Router 7 node 40 router 3 1\nrouter 3 node 2 // two\n", "x").unwrap();
        assert_eq!(spec.dims, vec![2, 2]);
        // node 2 → TTDL 0, node 40 → 1; router 3 → 2, router 7 → 3.
        assert_eq!(spec.edges, vec![(0, 2), (1, 3), (2, 3)]);
    }

    #[test]
    fn bad_lines_are_located() {
        assert_eq!(
            err("router 0 node 0\nrouter 1 nod 1\n"),
            "t.anynet:2:10: expected `router` or `node`, found `nod`"
        );
        assert_eq!(
            err("router 0 node x"),
            "t.anynet:1:15: `x` is not a node number (a whole number ≥ 0)"
        );
        assert_eq!(
            err("router 0 node"),
            "t.anynet:1:14: `node` needs a node number after it"
        );
        assert!(err("router 0 node 0\nrouter 1 node 0")
            .starts_with("t.anynet:2:10: node 0 is attached to router 0 already (t.anynet:1:10)"));
        assert_eq!(
            err("router 0 router 0"),
            "t.anynet:1:10: router 0 is linked to itself"
        );
        assert_eq!(
            err("node 0 node 1"),
            "t.anynet:1:8: node 0 can connect to a router only, not to node 1"
        );
        assert!(err("router 0 node 0 router 1 10").starts_with("t.anynet:1:26: link latency 10"));
        assert!(err("router 0 node 0 5").contains("1:17: `5`: a latency follows"));
        assert!(
            err("router 0 node 0\nnode 3\n").starts_with("t.anynet:2:1: node 3 is not attached")
        );
        assert!(err("\n# nothing\n").contains("no routers"));
        assert!(err("router 0 router 1").contains("no nodes"));
    }

    #[test]
    fn a_disconnected_file_is_an_error_and_a_missing_file_says_so() {
        let spec = parse_text("router 0 node 0\nrouter 1 node 1\n", "x").unwrap();
        let e = Network::build(&spec).unwrap_err().to_string();
        assert!(e.contains("disconnected"), "{e}");
        let e = "anynet:/no/such/file"
            .parse::<NetworkSpec>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot read"), "{e}");
    }
}
