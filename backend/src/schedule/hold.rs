//! A hold, the plan's row: one message fragment on one resource for a run of cycles, kept in
//! 20 bytes because a million messages make a hundred million of them; and a route step, the
//! resource a hold is on, in 12.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Node32, Resource, ScheduleError};
use crate::traffic::MsgId;

/// A [`Resource`] in two 32-bit words, as a [`Hold`] keeps it: a link is its two nodes, a port
/// its node beside [`Node32::MAX`] (never a node: [`Problem::new`] refuses a network of more than
/// 2³² - 1 nodes), on the side that tells an injection from an ejection.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct PackedResource([Node32; 2]);

impl PackedResource {
    const PORT: Node32 = Node32::MAX;

    fn pack(r: Resource) -> PackedResource {
        PackedResource(match r {
            Resource::Link { from, to } => [from, to],
            Resource::Inject(n) => [n, PackedResource::PORT],
            Resource::Eject(n) => [PackedResource::PORT, n],
        })
    }

    fn unpack(self) -> Resource {
        match self.0 {
            [n, PackedResource::PORT] => Resource::Inject(n),
            [PackedResource::PORT, n] => Resource::Eject(n),
            [from, to] => Resource::Link { from, to },
        }
    }
}

/// A message fragment holding one resource for cycles `start ≤ t < end`.
///
/// 20 bytes: a million messages keep about a hundred million holds (SCALING.md, "A million
/// messages under contention"), so the message, the resource's nodes and both cycles are kept in
/// 32 bits each. [`Hold::new`] refuses a hold past cycle 2³² - 1 with a clear error; the
/// accessors give the usual types back, and the holds order, print and serialise as the
/// `(msg, resource, start, end)` they stand for.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Hold {
    msg: u32,
    resource: PackedResource,
    start: u32,
    end: u32,
}

impl Hold {
    /// Latest cycle a hold may end at.
    pub const LAST_CYCLE: u64 = u32::MAX as u64;

    /// Message `msg` holding `resource` for cycles `start ≤ t < end`; an input error when a
    /// cycle or the message number does not fit in 32 bits.
    pub fn new(
        msg: MsgId,
        resource: Resource,
        start: u64,
        end: u64,
    ) -> Result<Hold, ScheduleError> {
        let too_late = || {
            ScheduleError::TooLarge(format!(
                "message {msg} would hold {resource} until cycle {end}: a plan may run until \
                 cycle {} at most",
                Hold::LAST_CYCLE
            ))
        };
        Ok(Hold {
            msg: u32::try_from(msg).map_err(|_| {
                ScheduleError::TooLarge(format!(
                    "message {msg}: at most 2^32 messages can be planned"
                ))
            })?,
            resource: PackedResource::pack(resource),
            start: u32::try_from(start).map_err(|_| too_late())?,
            end: u32::try_from(end).map_err(|_| too_late())?,
        })
    }

    /// The message holding the resource.
    #[inline]
    pub fn msg(&self) -> MsgId {
        self.msg as MsgId
    }

    /// What it holds.
    #[inline]
    pub fn resource(&self) -> Resource {
        self.resource.unpack()
    }

    /// The first cycle it holds the resource.
    #[inline]
    pub fn start(&self) -> u64 {
        self.start as u64
    }

    /// The cycle after the last it holds the resource.
    #[inline]
    pub fn end(&self) -> u64 {
        self.end as u64
    }

    /// The message, first cycle and end as kept: 32 bits each.
    #[inline]
    pub fn fields32(&self) -> (u32, u32, u32) {
        (self.msg, self.start, self.end)
    }

    /// The same hold moved to `start ≤ t < end`, or the error of [`Hold::new`].
    pub fn at(&self, start: u64, end: u64) -> Result<Hold, ScheduleError> {
        Hold::new(self.msg(), self.resource(), start, end)
    }

    fn key(&self) -> (u32, Resource, u32, u32) {
        (self.msg, self.resource(), self.start, self.end)
    }
}

impl PartialOrd for Hold {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Hold {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

impl fmt::Debug for Hold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hold")
            .field("msg", &self.msg())
            .field("resource", &self.resource())
            .field("start", &self.start())
            .field("end", &self.end())
            .finish()
    }
}

/// How a [`Hold`] is written and read: the fields it stands for.
#[derive(Serialize, Deserialize)]
#[serde(rename = "Hold")]
struct HoldFields {
    msg: MsgId,
    resource: Resource,
    start: u64,
    end: u64,
}

impl Serialize for Hold {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        HoldFields {
            msg: self.msg(),
            resource: self.resource(),
            start: self.start(),
            end: self.end(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Hold {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let h = HoldFields::deserialize(d)?;
        Hold::new(h.msg, h.resource, h.start, h.end).map_err(serde::de::Error::custom)
    }
}

/// One step of a message's journey: a resource and the step it follows (None for the first).
/// 12 bytes: a million messages of a hundred hops keep a hundred million of them, so the
/// resource is kept as a hold keeps it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Step {
    resource: PackedResource,
    /// The step before this one (its index in the message's steps), [`Step::NO_PARENT`] for the
    /// first; 32 bits, as a message's route is far shorter, and no `Option` (which would take
    /// 8 bytes) to keep the millions of steps of a large program small.
    parent: u32,
}

impl Step {
    const NO_PARENT: u32 = u32::MAX;

    pub fn new(resource: Resource, parent: Option<usize>) -> Step {
        Step {
            resource: PackedResource::pack(resource),
            parent: parent.map_or(Step::NO_PARENT, |p| {
                u32::try_from(p)
                    .ok()
                    .filter(|&p| p != Step::NO_PARENT)
                    .expect("a route of fewer than 2^32 - 1 hops")
            }),
        }
    }

    /// The resource it holds.
    #[inline]
    pub fn resource(&self) -> Resource {
        self.resource.unpack()
    }

    /// The step before this one, `None` for the injection.
    #[inline]
    pub fn parent(&self) -> Option<usize> {
        (self.parent != Step::NO_PARENT).then_some(self.parent as usize)
    }
}

impl fmt::Debug for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Step")
            .field("resource", &self.resource())
            .field("parent", &self.parent)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of resource comes back as it went in, ports beside links whose nodes are the
    /// port's node, and the holds order as the fields they stand for.
    #[test]
    fn a_hold_gives_back_what_it_was_given() {
        let rs = [
            Resource::link(0, 1),
            Resource::link(1, 0),
            Resource::link(7, 7),
            Resource::inject(7),
            Resource::eject(7),
            Resource::inject(0),
            Resource::eject(0),
            Resource::link(u32::MAX as usize - 1, 3),
        ];
        let mut holds = Vec::new();
        for (i, &r) in rs.iter().enumerate() {
            let h = Hold::new(i, r, 10 * i as u64, 10 * i as u64 + 8).unwrap();
            assert_eq!(
                (h.msg(), h.resource(), h.start(), h.end()),
                (i, r, 10 * i as u64, 10 * i as u64 + 8)
            );
            holds.push(h);
            holds.push(Hold::new(0, r, 5, 6).unwrap());
        }
        let mut sorted = holds.clone();
        sorted.sort();
        let mut by_fields: Vec<_> = holds
            .iter()
            .map(|h| (h.msg(), h.resource(), h.start(), h.end()))
            .collect();
        by_fields.sort();
        let got: Vec<_> = sorted
            .iter()
            .map(|h| (h.msg(), h.resource(), h.start(), h.end()))
            .collect();
        assert_eq!(got, by_fields);
    }

    /// A hold past cycle 2³² - 1 is a clear error, not a wrapped cycle.
    #[test]
    fn a_hold_past_32_bit_cycles_is_refused() {
        let r = Resource::link(0, 1);
        assert!(Hold::new(0, r, Hold::LAST_CYCLE - 8, Hold::LAST_CYCLE).is_ok());
        let e = Hold::new(3, r, Hold::LAST_CYCLE - 2, Hold::LAST_CYCLE + 6).unwrap_err();
        assert!(
            matches!(&e, ScheduleError::TooLarge(m) if m.contains("cycle 4294967295")),
            "{e}"
        );
        assert!(Hold::new(3, r, 1 << 40, (1 << 40) + 1).is_err());
    }

    /// The written form is the fields' (a plan document is unchanged), and reads back.
    #[test]
    fn a_hold_is_written_as_its_fields() {
        let h = Hold::new(3, Resource::link(1, 2), 4, 12).unwrap();
        let text = serde_json::to_string(&h).unwrap();
        assert_eq!(
            text,
            r#"{"msg":3,"resource":{"Link":{"from":1,"to":2}},"start":4,"end":12}"#
        );
        assert_eq!(serde_json::from_str::<Hold>(&text).unwrap(), h);
        assert_eq!(
            format!("{h:?}"),
            "Hold { msg: 3, resource: Link { from: 1, to: 2 }, start: 4, end: 12 }"
        );
        let late = r#"{"msg":3,"resource":{"Inject":1},"start":4,"end":4294967296}"#;
        assert!(serde_json::from_str::<Hold>(late).is_err());
    }
}
