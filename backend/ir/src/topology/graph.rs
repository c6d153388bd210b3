//! An arbitrary network from an undirected edge list (`NetworkSpec.edges`): each edge becomes two
//! directed links. Node k's j-th neighbour (by id) is its port `Other(j)`.

use super::{Link, Port, TopologyError};

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
