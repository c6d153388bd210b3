//! An arbitrary network from an undirected edge list (`NetworkSpec.edges`): each edge becomes two
//! directed links. Node k's j-th neighbour (by id) is its port `Other(j)`. Written
//! `graph:0-1,1-2,2-0` (nodes are numbered from 0; the count is the largest id plus one), or in
//! JSON as `{"kind": "graph", "dims": [3], "edges": [[0, 1], [1, 2], [2, 0]]}`.

use super::registry::Topology;
use super::{Kind, Link, NetworkSpec, Port, TopologyError};

pub struct Graph;

impl Topology for Graph {
    fn name(&self) -> &'static str {
        "graph"
    }
    fn help(&self) -> &'static str {
        "an explicit undirected edge list A-B,… (nodes 0..largest id)"
    }
    fn example(&self) -> &'static str {
        "graph:0-1,1-2,2-3,3-0,0-2"
    }
    fn parse(&self, kind: Kind, args: &str, whole: &str) -> Result<NetworkSpec, TopologyError> {
        let syntax = || TopologyError::Syntax(whole.to_string());
        if !args.contains('-') {
            let n = args.parse::<usize>().map_err(|_| syntax())?;
            return Ok(NetworkSpec::new(kind, vec![n]));
        }
        let mut edges = Vec::new();
        for pair in args.split(',') {
            let (a, b) = pair.split_once('-').ok_or_else(syntax)?;
            let a = a.trim().parse::<usize>().map_err(|_| syntax())?;
            let b = b.trim().parse::<usize>().map_err(|_| syntax())?;
            edges.push((a, b));
        }
        let n = edges
            .iter()
            .map(|&(a, b)| a.max(b).saturating_add(1))
            .max()
            .unwrap_or(0);
        let mut spec = NetworkSpec::new(kind, vec![n]);
        spec.edges = edges;
        Ok(spec)
    }
    fn spec_args(&self, spec: &NetworkSpec) -> String {
        if spec.edges.is_empty() {
            return spec.dims.first().copied().unwrap_or(0).to_string();
        }
        let edges: Vec<String> = spec.edges.iter().map(|(a, b)| format!("{a}-{b}")).collect();
        edges.join(",")
    }
    fn arity(&self) -> Option<usize> {
        Some(1)
    }
    fn check(&self, spec: &NetworkSpec) -> Result<(), String> {
        let n = spec.dims.first().copied().unwrap_or(0);
        if spec.edges.is_empty() && n > 1 {
            return Err(format!(
                "a graph of {n} nodes needs its edges: write `graph:0-1,1-2,…` \
                 (or `anynet:FILE` for a file)"
            ));
        }
        Ok(())
    }
    fn takes_edges(&self) -> bool {
        true
    }
    fn build(&self, spec: &NetworkSpec) -> Result<(Vec<Vec<i64>>, Vec<Link>), TopologyError> {
        build(
            spec.dims.first().copied().unwrap_or(0),
            &spec.edges,
            &spec.to_string(),
        )
    }
}

pub fn build(
    n: usize,
    edges: &[(usize, usize)],
    name: &str,
) -> Result<(Vec<Vec<i64>>, Vec<Link>), TopologyError> {
    let bad = |why: String| TopologyError::Shape(name.to_string(), why);
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        if a >= n || b >= n {
            return Err(bad(format!("edge ({a}, {b}) names a node outside 0..{n}")));
        }
        if a == b {
            return Err(bad(format!("edge ({a}, {b}) is a self loop")));
        }
        adj[a].push(b);
        adj[b].push(a);
    }
    for list in adj.iter_mut() {
        list.sort_unstable();
        list.dedup();
    }
    let coords = (0..n).map(|i| vec![i as i64]).collect();
    let mut links = Vec::new();
    for (from, list) in adj.iter().enumerate() {
        for (j, &to) in list.iter().enumerate() {
            links.push(Link {
                from,
                to,
                port: Port::Other(j.min(u16::MAX as usize) as u16),
            });
        }
    }
    Ok((coords, links))
}
