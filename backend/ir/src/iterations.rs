//! The iterations of a repeating program, as records: which ops of each task belong to which
//! iteration of its outermost `iterate`, whether every iteration is the same (same computes, the
//! same messages between the same tasks, up to the iteration index), and the same program with
//! another repetition count.
//!
//! A periodic schedule (SPEC §2; Minsky §6.2.1) is made on a short sample of the program — a few
//! iterations — and repeated; this module makes the sample, and the longer programs that check
//! the repetition, without the language evaluating the program again.

use crate::traffic::{Message, MsgId, Op, Task, TaskId, Traffic};

/// How a uniform repeating program divides: every task that repeats runs `count` iterations of
/// the same body between a prefix and a suffix, and every message is sent and read in the same
/// iteration (or both outside the iterations).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Iterations every repeating task runs.
    pub count: u64,
    /// Per task: its prefix, body ranges and suffix in `ops`.
    tasks: Vec<TaskShape>,
}

/// One task's division of `ops`: `prefix` ends where iteration 0 begins; `bodies[i]` is the op
/// range of iteration `i` including the synchronizations just before it (the body's leading
/// ones), and the suffix is the rest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct TaskShape {
    prefix: usize,
    bodies: Vec<(usize, usize)>,
}

impl TaskShape {
    fn suffix(&self, task: &Task) -> usize {
        self.bodies.last().map_or(task.ops.len(), |b| b.1)
    }
}

/// Where a message of a uniform program sits: outside the iterations, or at `slot` of iteration
/// `iteration` (slots number each iteration's messages by sender, then the sender's order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Place {
    Prefix,
    Iteration { iteration: u64, slot: usize },
    Suffix,
}

/// Whether a folded program (`Traffic::repeat`) is one a document may hold: its iterations
/// repeat alike and it records no more of them than its count says it runs.
pub fn check_repeat(traffic: &Traffic) -> Result<(), String> {
    let Some(n) = traffic.repeat else {
        return Ok(());
    };
    match Shape::of(traffic) {
        None => Err(format!(
            "`repeat` is {n}, but the program's iterations do not repeat alike"
        )),
        Some(shape) if shape.count > n => Err(format!(
            "`repeat` is {n}, but the program records {} iterations",
            shape.count
        )),
        Some(_) => Ok(()),
    }
}

impl Shape {
    /// The shape of `traffic`, when it repeats uniformly; `None` when it does not repeat, or its
    /// iterations differ (other messages, other computes, other counts per task, a message read
    /// in another iteration than the one that sent it).
    pub fn of(traffic: &Traffic) -> Option<Shape> {
        let mut count = None;
        let mut tasks = Vec::with_capacity(traffic.tasks.len());
        for task in &traffic.tasks {
            let shape = task_shape(task)?;
            if !shape.bodies.is_empty() {
                let n = shape.bodies.len() as u64;
                if *count.get_or_insert(n) != n {
                    return None;
                }
            }
            tasks.push(shape);
        }
        let count = count?;
        let shape = Shape { count, tasks };
        let places = shape.places(traffic)?;
        // Every iteration repeats the first: the same ops, messages in the same slots.
        let slot_of = |m: MsgId| match places[m] {
            Place::Iteration { slot, .. } => Some(slot),
            _ => None,
        };
        let template: Vec<&Message> = {
            let mut t: Vec<(usize, &Message)> = traffic
                .messages
                .iter()
                .filter_map(|m| match places[m.id] {
                    Place::Iteration { iteration: 0, slot } => Some((slot, m)),
                    _ => None,
                })
                .collect();
            t.sort_by_key(|(s, _)| *s);
            t.into_iter().map(|(_, m)| m).collect()
        };
        for m in &traffic.messages {
            if let Place::Iteration { slot, .. } = places[m.id] {
                let t = template.get(slot)?;
                if (t.src, &t.dst, t.size, t.phase, &t.label)
                    != (m.src, &m.dst, m.size, m.phase, &m.label)
                {
                    return None;
                }
            }
        }
        for (task, ts) in traffic.tasks.iter().zip(&shape.tasks) {
            let Some(&(s0, e0)) = ts.bodies.first() else {
                continue;
            };
            let first = &task.ops[s0..e0];
            for &(s, e) in &ts.bodies[1..] {
                let ops = &task.ops[s..e];
                if ops.len() != first.len() {
                    return None;
                }
                for (a, b) in first.iter().zip(ops) {
                    let same = match (a, b) {
                        (Op::Compute(x), Op::Compute(y)) => x == y,
                        (Op::Sync(x), Op::Sync(y)) => x == y,
                        (Op::Send(x), Op::Send(y)) | (Op::Recv(x), Op::Recv(y)) => {
                            slot_of(*x).is_some() && slot_of(*x) == slot_of(*y)
                        }
                        _ => false,
                    };
                    if !same {
                        return None;
                    }
                }
            }
        }
        Some(shape)
    }

    /// Messages per iteration.
    pub fn per_iteration(&self, traffic: &Traffic) -> usize {
        self.places(traffic).map_or(0, |p| {
            p.iter()
                .filter(|p| matches!(p, Place::Iteration { iteration: 0, .. }))
                .count()
        })
    }

    /// Where every message sits; `None` when a message is read in another part of the program
    /// than the one that sent it.
    pub fn places(&self, traffic: &Traffic) -> Option<Vec<Place>> {
        let n = traffic.messages.len();
        let mut send: Vec<Option<(TaskId, Place, usize)>> = vec![None; n];
        // Where each message is read; every reader must read it in the same place.
        let mut recv: Vec<Option<Place>> = vec![None; n];
        for (task, ts) in traffic.tasks.iter().zip(&self.tasks) {
            let mut ordinal = 0usize;
            let mut next_body = 0;
            for (i, op) in task.ops.iter().enumerate() {
                let place = self.place_of_op(ts, task, i);
                if ts.bodies.get(next_body).is_some_and(|b| b.0 == i) {
                    ordinal = 0;
                    next_body += 1;
                }
                match *op {
                    Op::Send(m) => {
                        *send.get_mut(m)? = Some((task.id, place, ordinal));
                        ordinal += 1;
                    }
                    Op::Recv(m) => match recv.get_mut(m)? {
                        Some(p) if *p != place => return None,
                        slot => *slot = Some(place),
                    },
                    _ => {}
                }
            }
        }
        // Slots: per iteration, by (sender, the sender's order in the iteration).
        let mut places = vec![Place::Prefix; n];
        for m in 0..n {
            let (_, place, _) = send[m]?;
            if recv[m].is_some_and(|p| p != place) {
                return None;
            }
            places[m] = place;
        }
        // Slot of (task, ordinal): the iteration-0 sends numbered in (task, ordinal) order.
        // Each task's ordinals in an iteration are 0, 1, …, so a task's slots are a run.
        let tasks = traffic.tasks.len();
        let mut sends_of: Vec<usize> = vec![0; tasks + 1];
        for s in send.iter().flatten() {
            if let (t, Place::Iteration { iteration: 0, .. }, o) = *s {
                let c = sends_of.get_mut(t)?;
                *c = (*c).max(o + 1);
            }
        }
        let mut base = vec![0usize; tasks + 1];
        for t in 0..tasks {
            base[t + 1] = base[t] + sends_of[t];
        }
        let total = base[tasks];
        let mut seen = vec![false; total];
        for s in send.iter().flatten() {
            if let (t, Place::Iteration { iteration: 0, .. }, o) = *s {
                seen[base[t] + o] = true;
            }
        }
        // Ordinals with gaps (not 0, 1, …) would leave holes: number the slots densely.
        let mut dense = vec![usize::MAX; total];
        let mut next = 0;
        for (i, &on) in seen.iter().enumerate() {
            if on {
                dense[i] = next;
                next += 1;
            }
        }
        for m in 0..n {
            if let (Some((t, Place::Iteration { iteration, .. }, o)), Place::Iteration { .. }) =
                (send[m], places[m])
            {
                if t >= tasks || o >= sends_of[t] {
                    return None;
                }
                let slot = dense[base[t] + o];
                if slot == usize::MAX {
                    return None;
                }
                places[m] = Place::Iteration { iteration, slot };
            }
        }
        Some(places)
    }

    fn place_of_op(&self, ts: &TaskShape, task: &Task, op: usize) -> Place {
        if op < ts.prefix {
            return Place::Prefix;
        }
        if op >= ts.suffix(task) {
            return Place::Suffix;
        }
        let i = ts.bodies.partition_point(|b| b.1 <= op);
        Place::Iteration {
            iteration: i as u64,
            slot: 0,
        }
    }

    /// The same program repeated `count` times (at least 1): the first `count` iterations when
    /// it is shorter, the last iteration repeated when it is longer, the prefix and suffix as
    /// they are. Messages are numbered prefix first, then iteration by iteration in slot order,
    /// then the suffix, so iteration `i`'s message at slot `s` is `first + i·per + s` (see
    /// [`Layout`]). Releases and deadlines of repeated messages are copied: time the result.
    pub fn with_count(&self, traffic: &Traffic, count: u64) -> (Traffic, Layout) {
        let count = count.max(1);
        let places = self
            .places(traffic)
            .expect("a shape's places exist for the traffic it was made from");
        let per = places
            .iter()
            .filter(|p| matches!(p, Place::Iteration { iteration: 0, .. }))
            .count();
        let mut prefix: Vec<MsgId> = Vec::new();
        let mut suffix: Vec<MsgId> = Vec::new();
        for (m, p) in places.iter().enumerate() {
            match p {
                Place::Prefix => prefix.push(m),
                Place::Suffix => suffix.push(m),
                _ => {}
            }
        }
        let first = prefix.len();
        let layout = Layout {
            prefix: first,
            per,
            count,
            suffix: suffix.len(),
        };
        // New id of an old message seen in (new) iteration `it`.
        let new_id = |old: MsgId, it: u64| -> MsgId {
            match places[old] {
                Place::Prefix => prefix.binary_search(&old).unwrap_or(0),
                Place::Suffix => {
                    first + per * count as usize + suffix.binary_search(&old).unwrap_or(0)
                }
                Place::Iteration { slot, .. } => first + per * it as usize + slot,
            }
        };
        let mut messages = vec![Message::default(); layout.total()];
        let src_iteration = |it: u64| it.min(self.count - 1);
        for (old, p) in places.iter().enumerate() {
            let mut put = |id: MsgId, iteration: u64| {
                let mut m = traffic.messages[old].clone();
                m.id = id;
                m.iteration = iteration;
                messages[id] = m;
            };
            match *p {
                Place::Prefix | Place::Suffix => {
                    put(new_id(old, 0), traffic.messages[old].iteration)
                }
                Place::Iteration { iteration, .. } => {
                    if iteration < count && iteration < self.count - 1 {
                        put(new_id(old, iteration), iteration);
                    } else if iteration == self.count - 1 {
                        for it in iteration..count {
                            put(new_id(old, it), it);
                        }
                    }
                }
            }
        }
        let tasks = traffic
            .tasks
            .iter()
            .zip(&self.tasks)
            .map(|(task, ts)| {
                let mut ops = Vec::new();
                let mut marks = Vec::new();
                let map = |op: &Op, it: u64| match *op {
                    Op::Send(m) => Op::Send(new_id(m, it)),
                    Op::Recv(m) => Op::Recv(new_id(m, it)),
                    other => other,
                };
                ops.extend(task.ops[..ts.prefix].iter().map(|o| map(o, 0)));
                if !ts.bodies.is_empty() {
                    for it in 0..count {
                        let (s, e) = ts.bodies[src_iteration(it) as usize];
                        marks.push(crate::traffic::IterationMark {
                            op: ops.len(),
                            iteration: Some(it),
                        });
                        ops.extend(task.ops[s..e].iter().map(|o| map(o, it)));
                    }
                    marks.push(crate::traffic::IterationMark {
                        op: ops.len(),
                        iteration: None,
                    });
                }
                ops.extend(task.ops[ts.suffix(task)..].iter().map(|o| map(o, 0)));
                Task {
                    ops,
                    iterations: marks,
                    ..task.clone()
                }
            })
            .collect();
        let mut out = Traffic {
            tasks,
            messages,
            ..traffic.clone()
        };
        out.repeat = None;
        if let Some(p) = &mut out.period {
            p.iterations = count;
        }
        (out, layout)
    }
}

/// How [`Shape::with_count`] numbers messages: `prefix` messages, then `count` iterations of
/// `per` messages, then `suffix`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub prefix: usize,
    pub per: usize,
    pub count: u64,
    pub suffix: usize,
}

impl Layout {
    pub fn total(&self) -> usize {
        self.prefix + self.per * self.count as usize + self.suffix
    }

    /// Where message `m` sits.
    pub fn place(&self, m: MsgId) -> Place {
        if m < self.prefix {
            Place::Prefix
        } else if m < self.prefix + self.per * self.count as usize {
            let k = m - self.prefix;
            Place::Iteration {
                iteration: (k / self.per) as u64,
                slot: k % self.per,
            }
        } else {
            Place::Suffix
        }
    }
}

/// A task's prefix and iteration bodies, from its iteration marks; `None` when its iterations
/// are not 0, 1, 2, … in order, one run each.
fn task_shape(task: &Task) -> Option<TaskShape> {
    let its = task.op_iterations();
    // First and last op of each iteration (syncs carry no iteration: they belong to the gap).
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for (i, (op, it)) in task.ops.iter().zip(&its).enumerate() {
        if matches!(op, Op::Sync(_)) {
            continue;
        }
        if let Some(it) = *it {
            let k = it as usize;
            if k == spans.len() {
                if let Some(last) = spans.last() {
                    if last.1 > i {
                        return None;
                    }
                }
                spans.push((i, i + 1));
            } else if k + 1 == spans.len() {
                spans[k].1 = i + 1;
            } else {
                return None;
            }
        }
    }
    if spans.is_empty() {
        return Some(TaskShape {
            prefix: task.ops.len(),
            bodies: Vec::new(),
        });
    }
    // No op outside the iterations between two of them.
    for w in spans.windows(2) {
        if task.ops[w[0].1..w[1].0]
            .iter()
            .zip(&its[w[0].1..w[1].0])
            .any(|(op, it)| !matches!(op, Op::Sync(_)) && it.is_none())
        {
            return None;
        }
    }
    let prefix = {
        // The syncs just before iteration 0 lead it, as they lead every later body.
        let lead = spans.get(1).map_or(0, |s1| s1.0 - spans[0].1);
        let mut p = spans[0].0;
        let mut k = 0;
        while k < lead && p > 0 && matches!(task.ops[p - 1], Op::Sync(_)) {
            p -= 1;
            k += 1;
        }
        p
    };
    let mut bodies = Vec::with_capacity(spans.len());
    let mut start = prefix;
    for (i, s) in spans.iter().enumerate() {
        // The syncs after an iteration lead the next body (or, after the last, the suffix).
        let _ = i;
        bodies.push((start, s.1));
        start = s.1;
    }
    Some(TaskShape { prefix, bodies })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::IterationMark;

    /// Two tasks: a sends to b three times, each iteration computes 2 first.
    fn pipe(n: u64) -> Traffic {
        let mut a_ops = vec![Op::Sync(0)];
        let mut b_ops = vec![Op::Sync(0)];
        let mut a_marks = Vec::new();
        let mut b_marks = Vec::new();
        let mut messages = Vec::new();
        for i in 0..n {
            a_marks.push(IterationMark {
                op: a_ops.len(),
                iteration: Some(i),
            });
            b_marks.push(IterationMark {
                op: b_ops.len(),
                iteration: Some(i),
            });
            let id = messages.len();
            messages.push(Message {
                id,
                src: 0,
                dst: vec![1].into(),
                size: 4,
                iteration: i,
                ..Message::default()
            });
            a_ops.extend([Op::Compute(2), Op::Send(id)]);
            b_ops.extend([Op::Recv(id), Op::Compute(3)]);
        }
        a_marks.push(IterationMark {
            op: a_ops.len(),
            iteration: None,
        });
        let last = messages.len();
        messages.push(Message {
            id: last,
            src: 0,
            dst: vec![1].into(),
            size: 1,
            ..Message::default()
        });
        a_ops.push(Op::Send(last));
        b_marks.push(IterationMark {
            op: b_ops.len(),
            iteration: None,
        });
        b_ops.push(Op::Recv(last));
        let task = |id: usize, ops: Vec<Op>, iterations| Task {
            id,
            name: format!("t{id}"),
            ops,
            iterations,
            ..Task::default()
        };
        Traffic {
            tasks: vec![task(0, a_ops, a_marks), task(1, b_ops, b_marks)],
            messages,
            ..Traffic::default()
        }
    }

    #[test]
    fn a_uniform_program_resized_equals_the_program_of_that_size() {
        let shape = Shape::of(&pipe(3)).expect("uniform");
        assert_eq!(shape.count, 3);
        for n in [1, 2, 3, 5, 9] {
            let (t, layout) = shape.with_count(&pipe(3), n);
            assert_eq!(t.tasks, pipe(n).tasks, "{n} iterations");
            assert_eq!(t.messages, pipe(n).messages, "{n} iterations");
            assert_eq!(layout.total(), n as usize + 1);
            assert_eq!(layout.place(n as usize), Place::Suffix);
            if n > 1 {
                let second = Place::Iteration {
                    iteration: 1,
                    slot: 0,
                };
                assert_eq!(layout.place(1), second);
            }
        }
    }

    #[test]
    fn iterations_that_differ_have_no_shape() {
        let mut t = pipe(3);
        t.tasks[0].ops[3] = Op::Compute(5);
        assert_eq!(Shape::of(&t), None);
        let mut t = pipe(3);
        t.messages[2].size = 7;
        assert_eq!(Shape::of(&t), None);
        // No iterations at all.
        let mut t = pipe(2);
        for task in &mut t.tasks {
            task.iterations.clear();
        }
        assert_eq!(Shape::of(&t), None);
    }
}
