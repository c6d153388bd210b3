//! Every routed message's links, found once and kept flat, and every link's messages, counted
//! into one table: what link utilization, congestion and Chittor's contention all read. Built
//! per message, not per message and per figure (a large plan has a hundred million route steps;
//! a vector per message or per link costs more than the figures).

use crate::topology::{LinkId, Network};
use crate::traffic::{MsgId, Route, Routing, Traffic};

/// Message `m`'s links (as [`Route::links`] lists them) are `links[first[m]..first[m + 1]]`,
/// for every message that has both a route and a message (the shorter of the two lists).
pub struct RouteLinks {
    first: Vec<usize>,
    links: Vec<LinkId>,
}

impl RouteLinks {
    pub fn of(traffic: &Traffic, network: &Network, routing: &Routing) -> RouteLinks {
        let n = routing.routes.len().min(traffic.messages.len());
        let mut first = Vec::with_capacity(n + 1);
        first.push(0);
        let mut links: Vec<LinkId> = Vec::new();
        for r in &routing.routes[..n] {
            let start = links.len();
            match r {
                Route::Path(p) => links.extend(
                    p.windows(2)
                        .filter_map(|w| network.link_between(w[0], w[1])),
                ),
                Route::Tree(edges) => {
                    links.extend(
                        edges
                            .iter()
                            .filter_map(|&(a, b)| network.link_between(a, b)),
                    );
                    // A tree's links as a set, as `Route::links` gives them.
                    let tail = &mut links[start..];
                    tail.sort_unstable();
                    let kept = dedup_sorted(tail);
                    links.truncate(start + kept);
                }
            }
            first.push(links.len());
        }
        RouteLinks { first, links }
    }

    /// Messages with a route.
    pub fn len(&self) -> usize {
        self.first.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Message `m`'s links.
    pub fn of_message(&self, m: MsgId) -> &[LinkId] {
        &self.links[self.first[m]..self.first[m + 1]]
    }

    /// Every link's messages, in message order (`users(l)` of the result).
    pub fn users(&self, links: usize) -> Users {
        Users::count(links, (0..self.len()).map(|m| self.of_message(m)))
    }
}

/// Items (messages, paths) by link: item numbers of link `l` in `items[first[l]..first[l + 1]]`,
/// in item order. Counted first, then filled, so it is two passes and two vectors in all.
pub struct Users {
    first: Vec<usize>,
    items: Vec<u32>,
}

impl Users {
    /// `each` gives every item's links, in item order; every link is below `links`.
    pub fn count<'a, I>(links: usize, each: I) -> Users
    where
        I: Iterator<Item = &'a [LinkId]> + Clone,
    {
        let mut first = vec![0usize; links + 1];
        for ls in each.clone() {
            for &l in ls {
                first[l + 1] += 1;
            }
        }
        for l in 0..links {
            first[l + 1] += first[l];
        }
        let mut fill = first.clone();
        let mut items = vec![0u32; first[links]];
        for (i, ls) in each.enumerate() {
            for &l in ls {
                items[fill[l]] = i as u32;
                fill[l] += 1;
            }
        }
        Users { first, items }
    }

    /// Link `l`'s items.
    pub fn of(&self, l: LinkId) -> &[u32] {
        &self.items[self.first[l]..self.first[l + 1]]
    }

    /// Links counted.
    pub fn links(&self) -> usize {
        self.first.len() - 1
    }
}

/// Keeps the first of every run of equal items at the front; returns how many.
fn dedup_sorted(v: &mut [LinkId]) -> usize {
    let mut k = 0;
    for i in 0..v.len() {
        if k == 0 || v[i] != v[k - 1] {
            v[k] = v[i];
            k += 1;
        }
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flat lists are `Route::links`, and the users table lists every message on each of
    /// its links in message order.
    #[test]
    fn flat_links_are_the_routes_links() {
        let network = Network::build(&"mesh:3x3".parse().unwrap()).unwrap();
        let mut b = Traffic::builder();
        b.tasks(4);
        b.send(0, 1, 4);
        b.send(1, 2, 4);
        b.send(2, 3, 4);
        let traffic = b.build();
        let routing = Routing {
            routes: vec![
                Route::Path(vec![0, 1, 2, 5]),
                Route::Tree(vec![(1, 2), (1, 4), (2, 5), (1, 2)]),
                Route::Path(vec![4]),
                Route::Path(vec![0, 1]),
            ],
        };
        let rl = RouteLinks::of(&traffic, &network, &routing);
        assert_eq!(rl.len(), 3);
        for m in 0..3 {
            assert_eq!(rl.of_message(m), &routing.routes[m].links(&network)[..]);
        }
        let users = rl.users(network.links.len());
        for l in 0..network.links.len() {
            let direct: Vec<u32> = (0..3)
                .filter(|&m| routing.routes[m].links(&network).contains(&l))
                .map(|m| m as u32)
                .collect();
            assert_eq!(users.of(l), &direct[..]);
        }
    }
}
