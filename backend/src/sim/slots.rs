//! Slots of the models' in-flight tables: a finished packet's slot is reused by the next one, so
//! a long run keeps a table as large as the most packets ever in flight, not one entry per packet.

/// An index into such a table: `usize`, or `u32` where the tables are kept compact.
pub trait SlotIndex: Copy {
    fn from_index(i: usize) -> Self;
    fn index(self) -> usize;
}

impl SlotIndex for usize {
    fn from_index(i: usize) -> Self {
        i
    }
    fn index(self) -> usize {
        self
    }
}

impl SlotIndex for u32 {
    fn from_index(i: usize) -> Self {
        u32::try_from(i).expect("fewer than 2^32 packets in flight")
    }
    fn index(self) -> usize {
        self as usize
    }
}

/// Puts `item` in a freed slot of `items` when there is one, else at the end; its slot.
pub fn reuse_or_push<T, I: SlotIndex>(items: &mut Vec<T>, free: &mut Vec<I>, item: T) -> I {
    match free.pop() {
        Some(s) => {
            items[s.index()] = item;
            s
        }
        None => {
            items.push(item);
            I::from_index(items.len() - 1)
        }
    }
}
