//! A full crossbar: every node reaches every other in one hop (the PMS switch of Ding et al. and
//! the compiled-communication crossbar). Modelled as a complete directed graph; the k-th link of a
//! node is its port `Other(k)`.

use super::{Link, Port};

pub fn build(n: usize) -> (Vec<Vec<i64>>, Vec<Link>) {
    let coords = (0..n).map(|i| vec![i as i64]).collect();
    let mut links = Vec::with_capacity(n * n.saturating_sub(1));
    for from in 0..n {
        for to in 0..n {
            if to != from {
                links.push(Link {
                    from,
                    to,
                    port: Port::Other(to.min(u16::MAX as usize) as u16),
                });
            }
        }
    }
    (coords, links)
}
