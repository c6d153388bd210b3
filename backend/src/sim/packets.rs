//! Packets of bounded size for the packet-switched models (SPEC §5: `packet=N`, the largest
//! packet in flits): a message longer than `N` words travels as ⌈size/N⌉ packets, each with its
//! own head, handed to the model one after the other at the source (its injection queue sends
//! them in order), and the message is delivered when its last packet is. One wrapper serves every
//! model that takes the option (wormhole, router, circuit, store-and-forward).

use std::collections::HashMap;

use super::energy::{Activity, Hardware};
use super::options::{int, OptionSpec};
use super::{Delivery, NetworkModel, Packet};
use crate::topology::Network;

/// The option, declared once for every model that takes it.
pub const OPTION: OptionSpec = int(
    "packet",
    "0",
    0,
    1 << 40,
    "largest packet in flits: a longer message travels as several packets, each with its own \
     head (0: one packet per message)",
);

/// `model`, with messages cut into packets of at most `max` words when `max > 0`.
pub fn limit(model: Box<dyn NetworkModel>, max: u64) -> Box<dyn NetworkModel> {
    if max == 0 {
        model
    } else {
        Box::new(Packetized {
            inner: model,
            max,
            next_id: 0,
            owner: HashMap::new(),
            left: HashMap::new(),
            sent: 0,
            scratch: Vec::new(),
        })
    }
}

/// A model fed packets of at most `max` words.
struct Packetized {
    inner: Box<dyn NetworkModel>,
    max: u64,
    next_id: u64,
    /// Inner packet → the message copy it carries part of.
    owner: HashMap<u64, u64>,
    /// Message copy → its packets not yet delivered.
    left: HashMap<u64, u64>,
    sent: u64,
    scratch: Vec<Delivery>,
}

impl NetworkModel for Packetized {
    fn name(&self) -> String {
        format!("{} packet={}", self.inner.name(), self.max)
    }

    fn inject(&mut self, now: u64, packet: Packet) {
        // A message of 0 words is one (head-only) packet, as without the option.
        let count = packet.size.div_ceil(self.max).max(1);
        self.left.insert(packet.id, count);
        let mut rest = packet.size;
        for _ in 0..count {
            let size = rest.min(self.max);
            rest -= size;
            let id = self.next_id;
            self.next_id += 1;
            self.owner.insert(id, packet.id);
            self.sent += 1;
            self.inner.inject(
                now,
                Packet {
                    id,
                    size,
                    ..packet.clone()
                },
            );
        }
    }

    fn step(&mut self, now: u64, delivered: &mut Vec<Delivery>) {
        self.scratch.clear();
        self.inner.step(now, &mut self.scratch);
        for d in &self.scratch {
            let Some(msg) = self.owner.remove(&d.packet) else {
                continue;
            };
            if let Some(n) = self.left.get_mut(&msg) {
                *n -= 1;
                if *n == 0 {
                    self.left.remove(&msg);
                    delivered.push(Delivery {
                        packet: msg,
                        at: d.at,
                    });
                }
            }
        }
    }

    fn next_event(&self, now: u64) -> Option<u64> {
        self.inner.next_event(now)
    }

    fn link_busy(&self) -> Vec<u64> {
        self.inner.link_busy()
    }

    fn stalled(&self, now: u64) -> Option<String> {
        self.inner.stalled(now)
    }

    fn progress(&self) -> u64 {
        self.inner.progress()
    }

    fn hardware(&self, network: &Network) -> Hardware {
        self.inner.hardware(network)
    }

    fn activity(&self) -> Option<Activity> {
        self.inner.activity()
    }

    fn packets(&self) -> Option<u64> {
        Some(self.sent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in network that delivers each packet `size + 1` cycles after it was handed over,
    /// in order.
    struct Fifo {
        queue: Vec<(u64, u64)>,
        sizes: Vec<u64>,
    }

    impl NetworkModel for Fifo {
        fn name(&self) -> String {
            "fifo".into()
        }
        fn inject(&mut self, now: u64, p: Packet) {
            self.sizes.push(p.size);
            self.queue.push((now + p.size + 1, p.id));
        }
        fn step(&mut self, now: u64, delivered: &mut Vec<Delivery>) {
            self.queue.retain(|&(at, id)| {
                if at <= now {
                    delivered.push(Delivery { packet: id, at });
                    false
                } else {
                    true
                }
            });
        }
        fn next_event(&self, now: u64) -> Option<u64> {
            self.queue.iter().map(|&(at, _)| at.max(now)).min()
        }
    }

    #[test]
    fn a_message_is_delivered_with_its_last_packet() {
        let fifo = Fifo {
            queue: Vec::new(),
            sizes: Vec::new(),
        };
        let mut m = limit(Box::new(fifo), 3);
        let p = |id, size| Packet {
            id,
            src: 0,
            dst: 1,
            size,
            created: 0,
        };
        m.inject(0, p(10, 7));
        m.inject(0, p(11, 0));
        m.inject(0, p(12, 3));
        assert_eq!(m.packets(), Some(3 + 1 + 1));
        assert_eq!(m.name(), "fifo packet=3");
        let mut out = Vec::new();
        for t in 0..10 {
            m.step(t, &mut out);
        }
        out.sort_by_key(|d| d.packet);
        assert_eq!(
            out,
            vec![
                Delivery { packet: 10, at: 4 },
                Delivery { packet: 11, at: 1 },
                Delivery { packet: 12, at: 4 }
            ]
        );
    }
}
