//! A shared cons cell in 40 bytes: a reference count and the two halves. `Rc` would add a weak
//! count no list ever uses, making each cell a 48-byte block — 64 bytes once the allocator's
//! header is added, against 48 for this one. Lists are most of what a program allocates (a
//! record-building loop makes four cells per `(src dst 8)` record), so the quarter saved is a
//! quarter of its memory and of the page faults that fill it.
//!
//! The whole unsafe surface of the evaluator is here: a box allocated once, shared by counted
//! references, freed by the last one. Like `Rc`, a `ConsRef` is neither `Send` nor `Sync`
//! (`NonNull` is neither), so the count needs no atomics.

use std::cell::Cell;
use std::ptr::NonNull;

use super::value::Cons;

struct ConsBox {
    count: Cell<usize>,
    cell: Cons,
}

/// A counted reference to a cons cell (the API of `Rc` that lists use).
pub struct ConsRef(NonNull<ConsBox>);

impl ConsRef {
    pub fn new(cell: Cons) -> ConsRef {
        let boxed = Box::new(ConsBox {
            count: Cell::new(1),
            cell,
        });
        ConsRef(NonNull::from(Box::leak(boxed)))
    }

    fn inner(&self) -> &ConsBox {
        // SAFETY: the box stays allocated while any reference (this one) holds a count on it.
        unsafe { self.0.as_ref() }
    }

    pub fn ptr_eq(a: &ConsRef, b: &ConsRef) -> bool {
        a.0 == b.0
    }

    /// The cell's address, an identity for as long as the cell lives.
    pub fn as_ptr(this: &ConsRef) -> *const Cons {
        &this.inner().cell
    }

    pub fn strong_count(this: &ConsRef) -> usize {
        this.inner().count.get()
    }

    /// The cell itself when this is its only reference; the reference back otherwise.
    pub fn try_unwrap(this: ConsRef) -> Result<Cons, ConsRef> {
        if this.inner().count.get() != 1 {
            return Err(this);
        }
        let ptr = this.0;
        std::mem::forget(this);
        // SAFETY: the count was 1 and that reference was just forgotten, so nothing else can
        // reach the box; it came from `Box::leak` in `new`.
        let boxed = unsafe { Box::from_raw(ptr.as_ptr()) };
        Ok(boxed.cell)
    }
}

impl Clone for ConsRef {
    fn clone(&self) -> ConsRef {
        let count = &self.inner().count;
        // As `Rc` does: overflowing the count would later free a cell still in use.
        let Some(n) = count.get().checked_add(1) else {
            std::process::abort();
        };
        count.set(n);
        ConsRef(self.0)
    }
}

impl Drop for ConsRef {
    fn drop(&mut self) {
        let count = &self.inner().count;
        let n = count.get() - 1;
        count.set(n);
        if n == 0 {
            // SAFETY: this was the last reference; the box came from `Box::leak` in `new`.
            drop(unsafe { Box::from_raw(self.0.as_ptr()) });
        }
    }
}

impl std::ops::Deref for ConsRef {
    type Target = Cons;
    fn deref(&self) -> &Cons {
        &self.inner().cell
    }
}

impl std::fmt::Debug for ConsRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::value::Value;

    #[test]
    fn counts_share_and_free() {
        let a = ConsRef::new(Cons {
            car: Value::Int(1),
            cdr: Value::Nil,
        });
        let b = a.clone();
        assert_eq!(ConsRef::strong_count(&a), 2);
        assert!(ConsRef::ptr_eq(&a, &b));
        let a = ConsRef::try_unwrap(a).expect_err("shared");
        drop(b);
        let cell = ConsRef::try_unwrap(a).expect("now unique");
        assert!(matches!(cell.car, Value::Int(1)));
        assert_eq!(std::mem::size_of::<ConsBox>(), 40);
    }
}
