//! A shared cons cell in 20 bytes: the two halves, each a value packed into a word and a 4-bit tag
//! ([`Value::into_raw`]), and a 24-bit reference count sharing a 32-bit word with the two tags.
//! A `Value` is 16 bytes, half of it the tag, so two of them and an `Rc`-style count made a
//! 40-byte cell (48 with `malloc`'s header); packed, a `(src dst 8)` record's four cells take 80
//! bytes instead of 192. Cells come from a pool of large chunks (below): taking or freeing one is
//! a few instructions. Lists are most of what a program allocates, so their memory and the page
//! faults that fill it are much of its time.
//!
//! A count that reaches its 24-bit limit (16.7 million references to one cell) sticks there:
//! the cell is never freed, a leak in a case no real program reaches, where overflowing would
//! free a cell still in use.
//!
//! A half is read as a [`Half`]: the value rebuilt from its tag and word without taking a count,
//! lent for as long as the cell is. Cells never change once made (a list is built by consing in
//! front), so a borrowed list stays as it is while anything reads it.
//!
//! The whole unsafe surface of the evaluator is here: a slot allocated once, shared by counted
//! references, freed by the last one; and two copies of values made in ways a plain move is not
//! ([`share_stored`], [`push_binding`]). Like `Rc`, a `ConsRef` is neither `Send` nor `Sync`
//! (`NonNull` is neither), so the count needs no atomics and the pool is per thread.

use std::alloc::Layout;
use std::cell::Cell;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ptr::{self, NonNull};

use super::value::{Cons, Value, Word};

/// 4-byte aligned, so cells pack at 20 bytes; the words are read and written unaligned (by value:
/// a packed field is never borrowed).
#[repr(C, packed(4))]
struct ConsBox {
    car: Word,
    cdr: Word,
    /// The count (bits 8 to 31), the cdr's tag (bits 4 to 7) and the car's (bits 0 to 3).
    meta: Cell<u32>,
}

/// Where a cell's car, cdr and meta word lie (for code made at run time, `code::native`).
pub(crate) const CAR_AT: i32 = std::mem::offset_of!(ConsBox, car) as i32;
pub(crate) const CDR_AT: i32 = std::mem::offset_of!(ConsBox, cdr) as i32;
pub(crate) const META_AT: i32 = std::mem::offset_of!(ConsBox, meta) as i32;
/// The meta word from which a count is stuck (its count bits all set).
pub(crate) const META_STUCK: u32 = STUCK << 8;

/// One reference, in [`ConsBox::meta`].
pub(crate) const ONE: u32 = 1 << 8;
/// The count at which it sticks.
const STUCK: u32 = u32::MAX >> 8;

impl ConsBox {
    #[inline]
    fn count(&self) -> u32 {
        self.meta.get() >> 8
    }

    #[inline]
    fn car_tag(&self) -> u8 {
        (self.meta.get() & 0xf) as u8
    }

    #[inline]
    fn cdr_tag(&self) -> u8 {
        ((self.meta.get() >> 4) & 0xf) as u8
    }
}

/// A counted reference to a cons cell (the API of `Rc` that lists use).
pub struct ConsRef(NonNull<ConsBox>);

impl ConsRef {
    pub fn new(car: Value, cdr: Value) -> ConsRef {
        let (car_tag, car) = car.into_raw();
        let (cdr_tag, cdr) = cdr.into_raw();
        debug_assert!(car_tag < 16 && cdr_tag < 16, "a tag fits in 4 bits");
        let slot = pool::alloc();
        // SAFETY: `alloc` hands out an unused slot, sized and aligned for a `ConsBox`.
        unsafe {
            slot.as_ptr().write(ConsBox {
                car,
                cdr,
                meta: Cell::new(ONE | u32::from(cdr_tag) << 4 | u32::from(car_tag)),
            })
        };
        ConsRef(slot)
    }

    fn inner(&self) -> &ConsBox {
        // SAFETY: the box stays allocated while any reference (this one) holds a count on it.
        unsafe { self.0.as_ref() }
    }

    /// The cell, lent for as long as this reference is.
    #[inline]
    pub fn cell(&self) -> CellRef<'_> {
        CellRef(self.0, PhantomData)
    }

    #[inline]
    pub fn car(&self) -> Half<'_> {
        self.cell().car()
    }

    #[inline]
    pub fn cdr(&self) -> Half<'_> {
        self.cell().cdr()
    }

    pub fn ptr_eq(a: &ConsRef, b: &ConsRef) -> bool {
        a.0 == b.0
    }

    /// The cell's address, an identity for as long as the cell lives.
    pub fn as_ptr(this: &ConsRef) -> *const () {
        this.0.as_ptr().cast()
    }

    pub fn strong_count(this: &ConsRef) -> usize {
        this.inner().count() as usize
    }

    /// The reference as a word (for a packed half), the pointer with its provenance;
    /// [`ConsRef::from_raw`] takes it back.
    pub(crate) fn into_raw(this: ConsRef) -> Word {
        let p = this.0.as_ptr().cast();
        std::mem::forget(this);
        p
    }

    /// # Safety
    /// `word` came from [`ConsRef::into_raw`], and the count it carried is handed over.
    pub(crate) unsafe fn from_raw(word: Word) -> ConsRef {
        // SAFETY: `into_raw` made the word from a non-null pointer.
        ConsRef(unsafe { NonNull::new_unchecked(word.cast()) })
    }

    /// The cell itself when this is its only reference; the reference back otherwise.
    pub fn try_unwrap(this: ConsRef) -> Result<Cons, ConsRef> {
        if this.inner().count() != 1 {
            return Err(this);
        }
        let slot = this.0;
        std::mem::forget(this);
        // SAFETY: the count was 1 and that reference was just forgotten, so nothing else can
        // reach the box: its halves are moved out and the slot, now unused, goes back to the
        // pool.
        unsafe { Ok(take_halves(slot)) }
    }

    /// Frees cells from this one along the cdrs for as long as each is held only here and its
    /// car owns nothing (a record of atoms, a list of numbers), and returns what is left: the
    /// first cell that is shared or holds something in its car, or the last cdr (see
    /// [`free_atoms_from`]).
    pub(crate) fn free_atoms(this: ConsRef) -> Value {
        let p = this.0;
        std::mem::forget(this);
        // SAFETY: the reference is handed over to the walk, and what it leaves comes back packed.
        match unsafe { free_atoms_from(p) } {
            Left::Cell(p) => Value::Pair(ConsRef(p)),
            // SAFETY: the cdr packed by `ConsRef::new`, handed over.
            Left::Last(tag, word) => unsafe { Value::from_raw(tag, word) },
        }
    }

    /// Lets go of a reference to a cell given as its word (as [`ConsRef::into_raw`] made it),
    /// as dropping the [`ConsRef`] would, with the common cases in one loop that makes no
    /// `Value`: a shared cell counted down in place, and the cells held only here whose car owns
    /// nothing freed along the cdrs ([`ConsRef::free_atoms`]), and a tree of cells held only
    /// here freed by [`free_tree`]. What machine code lets go of
    /// (the cell consed for a call, a list of numbers) went through the drop glue of a `Value`,
    /// a cell and its two halves, for a few instructions of work: 8 % of the eight queens.
    ///
    /// # Safety
    /// `word` came from [`ConsRef::into_raw`], and the count it carried is handed over.
    pub(crate) unsafe fn release(word: Word) {
        // SAFETY: as the caller promises.
        let left = unsafe { free_atoms_from(NonNull::new_unchecked(word.cast())) };
        match left {
            Left::Cell(p) => {
                // SAFETY: a live cell whose count includes the walk's reference.
                let b = unsafe { p.as_ref() };
                let meta = b.meta.get();
                if meta >= 2 * ONE {
                    if meta < META_STUCK {
                        b.meta.set(meta - ONE);
                    }
                } else {
                    // SAFETY: the last reference, with a car that owns something.
                    unsafe { free_tree(p) };
                }
            }
            Left::Last(tag, word) => {
                if Value::tag_owns_something(tag) {
                    // SAFETY: as in `free_atoms`.
                    drop(unsafe { Value::from_raw(tag, word) });
                }
            }
        }
    }

    /// [`ConsRef::try_unwrap`] as the two halves, without a [`Cons`] (whose own drop a list
    /// walk that frees cells would only run on emptied halves).
    #[inline]
    pub fn into_halves(this: ConsRef) -> Result<(Value, Value), ConsRef> {
        if this.inner().count() != 1 {
            return Err(this);
        }
        let slot = this.0;
        std::mem::forget(this);
        // SAFETY: as in `try_unwrap`.
        unsafe { Ok(halves_of(slot)) }
    }

    /// One half of a cell (`car` or not) as its tag and word, its count moved to the value: the
    /// cell's other half let go and the cell freed when this was its only reference, and
    /// otherwise the half counted once more and this reference let go. What a last read of a
    /// variable in machine code does with `car` or `cdr`: a list walked that way is freed as the
    /// walk goes. The half is handed back as two words, not as a `Value` (returned through
    /// memory and read back as one 16-byte piece, it stalled on the two stores that wrote it).
    pub(crate) fn take_half(this: ConsRef, car: bool) -> (u8, Word) {
        if this.inner().count() != 1 {
            let half = if car { this.car() } else { this.cdr() };
            return (*half).clone().into_raw();
        }
        let slot = this.0;
        std::mem::forget(this);
        // SAFETY: this was the cell's only reference: its halves move out and its slot is freed
        // before the other half is dropped (which may free other cells).
        unsafe {
            let b = slot.as_ref();
            let (ct, c, dt, d) = (b.car_tag(), b.car, b.cdr_tag(), b.cdr);
            pool::free(slot);
            let ((kt, k), (ot, o)) = if car {
                ((ct, c), (dt, d))
            } else {
                ((dt, d), (ct, c))
            };
            drop(Value::from_raw(ot, o));
            (kt, k)
        }
    }
}

/// How machine code takes a cell as [`pool::alloc`] and `take` do on their common path (the
/// current chunk's sweep has a free slot in hand): the pool's `current` chunk, then in its header
/// the slots in hand (`bits`), the count of slots in use and the sweep's word; the slot is the
/// chunk's `(cursor - 1) * 64 + trailing zeros of bits`-th. Any other case (no current chunk, no
/// slot in hand) goes through [`ConsRef::new`].
pub(crate) struct Taking {
    pub current_at: i32,
    pub bits_at: i32,
    pub live_at: i32,
    pub cursor_at: i32,
    pub cell: i64,
}

/// How machine code frees a slot as [`pool::free`] does on its common path (a chunk that keeps
/// cells in use and is the current one, listed already, or too full to list): the slot's chunk
/// is its address rounded down to `chunk` bytes; in its header, the slot's bit in the bitmap of
/// free slots is set and the count of slots in use goes down. Any other case goes through
/// [`free_slot`].
pub(crate) struct Freeing {
    pub chunk: i64,
    pub cell: i64,
    pub free_at: i32,
    pub live_at: i32,
    pub current_at: i32,
    pub listed_at: i32,
    pub reuse_at: i64,
}

pub(crate) use pool::{address as pool_address, FREEING, TAKING};

/// Gives back the slot of a cell whose halves machine code has moved out.
///
/// # Safety
/// As [`pool::free`]: `word` is a cell of this thread's pool, moved out of and not used again.
pub(crate) unsafe fn free_slot(word: Word) {
    // SAFETY: as the caller promises; a cell's word is non-null.
    unsafe { pool::free(NonNull::new_unchecked(word.cast())) }
}

/// A value packed as a half of a cell is, a tag and a word, owning what the value owned: what the
/// explicit stack of values being freed holds ([`super::value::drop_deep`]). Pushing one stores
/// the two words where they were made; a `Value` pushed would often be spilled as two words and
/// copied back as one 16-byte piece, a store-forwarding stall per element of a freed list.
pub(crate) struct Packed {
    tag: u8,
    bits: Word,
}

impl Packed {
    #[inline]
    pub fn new(v: Value) -> Packed {
        let (tag, bits) = v.into_raw();
        Packed { tag, bits }
    }

    #[inline]
    pub fn into_value(self) -> Value {
        let p = ManuallyDrop::new(self);
        // SAFETY: packed by `into_raw` in `new`; what it owned is handed back once (the packed
        // copy is forgotten).
        unsafe { Value::from_raw(p.tag, p.bits) }
    }
}

impl Drop for Packed {
    fn drop(&mut self) {
        // SAFETY: as for `into_value`; this is the packed value's only owner.
        drop(unsafe { Value::from_raw(self.tag, self.bits) });
    }
}

/// A copy of a value that has lain in memory a while (a frame's slot): a count taken on what it
/// shares, then its 16 bytes copied as one piece. Copying a compound value is copying its bytes
/// and counting one more reference, so this is what cloning gives; but a clone is written as two
/// words, and the next move of it (into a frame, a buffer) reads them back as one 16-byte piece,
/// which the store buffer cannot forward: a stall of some ten cycles.
#[inline(always)]
pub(crate) fn share_stored(v: &Value) -> Value {
    if v.owns_something() {
        std::mem::forget(v.clone());
    }
    // SAFETY: a bitwise copy of a valid value; what it shares was counted once more just above
    // (a clone of a compound value is its bytes and one more count), and that count is the copy's.
    unsafe { ptr::read(v) }
}

/// Appends a binding to a frame's vector, its two fields written in place. Pushed as a pair, the
/// pair was built on the stack (a 4-byte and a 16-byte store) and copied into the vector as a
/// 16-byte and an 8-byte piece, a load the store buffer cannot forward from the narrower stores:
/// a stall of some ten cycles on every argument bound.
#[inline(always)]
pub(crate) fn push_binding<K, V>(vars: &mut Vec<(K, V)>, key: K, value: V) {
    vars.reserve(1);
    let len = vars.len();
    // SAFETY: `reserve` made room for an element at `len`; both of its fields are written before
    // the length covers it.
    unsafe {
        let slot = vars.as_mut_ptr().add(len);
        ptr::addr_of_mut!((*slot).0).write(key);
        ptr::addr_of_mut!((*slot).1).write(value);
        vars.set_len(len + 1);
    }
}

/// [`push_binding`] of a value given as its two words.
///
/// # Safety
/// `words` are the words of a value that was then forgotten: the binding takes what it owned.
#[inline(always)]
pub(crate) unsafe fn push_binding_words<K>(
    vars: &mut Vec<(K, Value)>,
    key: K,
    words: [std::mem::MaybeUninit<u64>; 2],
) {
    vars.reserve(1);
    let len = vars.len();
    // SAFETY: `reserve` made room for an element at `len`; both of its fields are written (the
    // value as its two words, the bits of the value forgotten) before the length covers it.
    unsafe {
        let slot = vars.as_mut_ptr().add(len);
        ptr::addr_of_mut!((*slot).0).write(key);
        let dst = ptr::addr_of_mut!((*slot).1).cast::<std::mem::MaybeUninit<u64>>();
        dst.write(words[0]);
        dst.add(1).write(words[1]);
        vars.set_len(len + 1);
    }
}

/// Where [`free_atoms_from`] stopped: at a cell shared or holding something in its car, or past
/// the last cell freed, at its cdr as the cell packed it; the walk's reference in either.
enum Left {
    Cell(NonNull<ConsBox>),
    Last(u8, Word),
}

/// Frees cells from `p` along the cdrs for as long as each is held only by the walk and its car
/// owns nothing. The walk reads the packed words and makes no `Value`: holding the next cdr as a
/// `Value` through the loop spilled and reloaded it, a store-forwarding stall per cell.
///
/// # Safety
/// `p` is a live cell, and its count includes a reference handed over to the walk.
#[inline(always)]
unsafe fn free_atoms_from(mut p: NonNull<ConsBox>) -> Left {
    loop {
        // SAFETY: `p` is a live cell whose count includes the reference this walk holds (the
        // one given, then the cdr of a cell freed here, whose count moved to the walk).
        let b = unsafe { p.as_ref() };
        if b.count() != 1 || Value::tag_owns_something(b.car_tag()) {
            return Left::Cell(p);
        }
        let (cdr_tag, cdr) = (b.cdr_tag(), b.cdr);
        // SAFETY: the only reference was the walk's, and the car owns nothing: the slot can
        // go, and the cdr's count moves to the walk.
        unsafe { pool::free(p) };
        if cdr_tag != Value::PAIR_TAG {
            return Left::Last(cdr_tag, cdr);
        }
        // SAFETY: a pair's word is a non-null cell pointer (`ConsRef::into_raw`).
        p = unsafe { NonNull::new_unchecked(cdr.cast()) };
    }
}

/// Frees the cell `p`, held only by the walk, and the cells under it held only there: the halves
/// that are pairs are walked, the cdr waiting while the car is taken apart (a list of records
/// keeps one cell waiting, a balanced tree one per level). The walk reads the packed words and
/// makes no `Value` of a pair: freed through the drop glue and `drop_from`, every half of a tree
/// went through a `Value`, 13 % of the time of a tree built and folded. A closure or macro in a
/// cell may hold a long chain of its own: those go to [`drop_deep`](super::value::drop_deep).
///
/// # Safety
/// `p` is a live cell, and its count includes a reference handed over to the walk.
unsafe fn free_tree(p: NonNull<ConsBox>) {
    let mut waiting: smallvec::SmallVec<[NonNull<ConsBox>; 32]> = smallvec::SmallVec::new();
    let mut deep: Vec<Value> = Vec::new();
    let mut next = Some(p);
    while let Some(p) = next.take().or_else(|| waiting.pop()) {
        // SAFETY: a live cell whose count includes the walk's reference (handed over, or the
        // half of a cell freed here, whose count moved to the walk).
        let b = unsafe { p.as_ref() };
        let meta = b.meta.get();
        if meta >= 2 * ONE {
            if meta < META_STUCK {
                b.meta.set(meta - ONE);
            }
            continue;
        }
        let (ct, c, dt, d) = (b.car_tag(), b.car, b.cdr_tag(), b.cdr);
        // SAFETY: the walk held the only reference: the halves are moved out and the slot goes.
        unsafe { pool::free(p) };
        let mut half = |tag: u8, word: Word| {
            if tag == Value::PAIR_TAG {
                // SAFETY: a pair's word is a non-null cell pointer (`ConsRef::into_raw`).
                return Some(unsafe { NonNull::new_unchecked(word.cast::<ConsBox>()) });
            }
            if Value::tag_owns_something(tag) {
                // SAFETY: the half packed by `ConsRef::new`, handed over.
                let v = unsafe { Value::from_raw(tag, word) };
                if super::value::holds_deep(&v) {
                    deep.push(v);
                }
            }
            None
        };
        let (car, cdr) = (half(ct, c), half(dt, d));
        next = match (car, cdr) {
            (Some(car), Some(cdr)) => {
                waiting.push(cdr);
                Some(car)
            }
            (car, cdr) => car.or(cdr),
        };
    }
    if !deep.is_empty() {
        super::value::drop_deep(deep, Vec::new());
    }
}

/// Moves both halves out of a slot nothing else refers to, and frees the slot.
///
/// # Safety
/// The slot holds a cell no reference counts any more.
#[inline(always)]
unsafe fn halves_of(slot: NonNull<ConsBox>) -> (Value, Value) {
    // SAFETY: the halves were packed by `ConsRef::new`; their counts move to the new values.
    // The words are read, the slot freed, and only then are the values made: values held across
    // the call would be spilled as words and reloaded as 16-byte pieces, a store-forwarding stall.
    unsafe {
        let b = slot.as_ref();
        let (car_tag, car, cdr_tag, cdr) = (b.car_tag(), b.car, b.cdr_tag(), b.cdr);
        pool::free(slot);
        (Value::from_raw(car_tag, car), Value::from_raw(cdr_tag, cdr))
    }
}

/// Moves both halves out of a slot nothing else refers to, and frees the slot.
///
/// # Safety
/// The slot holds a cell no reference counts any more.
unsafe fn take_halves(slot: NonNull<ConsBox>) -> Cons {
    // SAFETY: as for `halves_of`.
    let (car, cdr) = unsafe { halves_of(slot) };
    Cons { car, cdr }
}

impl Clone for ConsRef {
    fn clone(&self) -> ConsRef {
        let b = self.inner();
        // At its limit the count sticks (the cell is never freed) instead of overflowing.
        if b.count() != STUCK {
            b.meta.set(b.meta.get() + ONE);
        }
        ConsRef(self.0)
    }
}

impl Drop for ConsRef {
    fn drop(&mut self) {
        let b = self.inner();
        if b.count() == STUCK {
            return;
        }
        let meta = b.meta.get() - ONE;
        b.meta.set(meta);
        if meta < ONE {
            // SAFETY: this was the last reference. The halves are moved out and the slot freed
            // before they are dropped (which may free other cells; `Cons`'s drop keeps a long
            // chain off the Rust stack).
            let (car, cdr) = unsafe { halves_of(self.0) };
            super::value::drop_halves(car, cdr);
        }
    }
}

impl std::fmt::Debug for ConsRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cons")
            .field("car", &*self.car())
            .field("cdr", &*self.cdr())
            .finish()
    }
}

/// A cell lent for `'a`: what a list walk steps through.
#[derive(Clone, Copy)]
pub struct CellRef<'a>(NonNull<ConsBox>, PhantomData<&'a ConsBox>);

impl<'a> CellRef<'a> {
    fn inner(self) -> &'a ConsBox {
        // SAFETY: the cell is alive for 'a (some list borrowed for 'a refers to it).
        unsafe { self.0.as_ref() }
    }

    #[inline]
    pub fn car(self) -> Half<'a> {
        let b = self.inner();
        // SAFETY: the half was packed by `ConsRef::new` and stays packed for 'a.
        Half(
            ManuallyDrop::new(unsafe { Value::from_raw(b.car_tag(), b.car) }),
            PhantomData,
        )
    }

    #[inline]
    pub fn cdr(self) -> Half<'a> {
        let b = self.inner();
        // SAFETY: as for `car`.
        Half(
            ManuallyDrop::new(unsafe { Value::from_raw(b.cdr_tag(), b.cdr) }),
            PhantomData,
        )
    }

    pub fn ptr_eq(self, other: CellRef<'_>) -> bool {
        self.0 == other.0
    }
}

/// One half of a cell, read as a value it lends for `'a` (it holds no count of its own: cloning
/// the value it derefs to takes one).
pub struct Half<'a>(ManuallyDrop<Value>, PhantomData<&'a ConsBox>);

impl<'a> Half<'a> {
    /// The cell this half refers to, if it is a pair: the next step of a list walk.
    #[inline]
    pub fn pair(&self) -> Option<CellRef<'a>> {
        match &*self.0 {
            Value::Pair(c) => Some(CellRef(c.0, PhantomData)),
            _ => None,
        }
    }
}

impl std::ops::Deref for Half<'_> {
    type Target = Value;
    #[inline]
    fn deref(&self) -> &Value {
        &self.0
    }
}

/// Bytes of memory this thread's lists hold (whole chunks of cells): what the evaluation
/// budget's memory limit counts of them.
pub fn list_bytes() -> u64 {
    pool::bytes_held()
}

/// Cells come from chunks of [`pool::CHUNK`] bytes, aligned to their size, so a cell finds its
/// chunk by masking its address. A chunk's header keeps a bitmap of its free slots; cells are
/// taken by sweeping it in address order, and a freed cell sets its bit. A chunk whose cells are
/// all free goes back to the system allocator. Against `Box` (the system allocator per cell), a
/// cell costs its 20 bytes instead of a 32-byte block, and taking or freeing one is a few
/// instructions.
///
/// Why a bitmap and not a list of freed slots: a list handed slots back in the reverse order they
/// were freed, so after a few rounds of freeing and consing a list's cells lay scattered over
/// megabytes, and every step along a list, every cell freed and every cell taken (reading the
/// link in the freed slot) missed the cache: three quarters of `ConsRef::new`'s samples and nine
/// tenths of the free walk's sat on those loads in the quicksort benchmark. Swept in address
/// order, the cells a loop conses lie side by side, as a copying or sweeping collector lays them
/// out, and the walks over them run ahead of the memory.
///
/// The pool is per thread (cells, like `Rc`, never leave their thread), an allocator's cache
/// rather than interpreter state: two interpreters on one thread share it as they share `malloc`.
mod pool {
    use super::*;

    /// Bytes per chunk (and its alignment). Under Miri a chunk is small, so that its tests
    /// fill, empty and return several chunks in seconds rather than hours.
    pub const CHUNK: usize = if cfg!(miri) {
        16 * 1024
    } else {
        2 * 1024 * 1024
    };
    const CELL: usize = std::mem::size_of::<ConsBox>();
    /// Slots of a chunk, the header's included.
    const SLOTS: usize = CHUNK / CELL;
    /// Words of the bitmap of free slots.
    const WORDS: usize = SLOTS.div_ceil(64);
    /// The first slots of each chunk hold its header.
    const FIRST: usize = std::mem::size_of::<Header>().div_ceil(CELL);
    /// Slots for cells.
    const USABLE: usize = SLOTS - FIRST;
    /// A chunk that is not the one cells are taken from is swept again once at most this many of
    /// its slots are in use: a sweep of a nearly full chunk would read its whole bitmap for a few
    /// slots.
    const REUSE_AT: usize = USABLE - USABLE / 4;

    struct Header {
        /// Bit `i % 64` of word `i / 64` is set when slot `i` is free and not yet swept.
        free: [Cell<u64>; WORDS],
        /// Slots in use.
        live: Cell<usize>,
        /// The sweep's next word of `free`.
        cursor: Cell<usize>,
        /// Free slots of the word before `cursor` not taken yet (taken out of `free`).
        bits: Cell<u64>,
        /// Links in the list of chunks to sweep again (other than the current chunk).
        prev: Cell<*mut Header>,
        next: Cell<*mut Header>,
        listed: Cell<bool>,
        /// Whether this is the chunk cells are taken from (the pool's `current`): kept here so
        /// that freeing a cell of a chunk the pool already tracks needs no look at the pool.
        current: Cell<bool>,
    }

    /// Where machine code finds what it takes a cell with (see [`super::Taking`]).
    pub(crate) const TAKING: super::Taking = super::Taking {
        current_at: std::mem::offset_of!(Pool, current) as i32,
        bits_at: std::mem::offset_of!(Header, bits) as i32,
        live_at: std::mem::offset_of!(Header, live) as i32,
        cursor_at: std::mem::offset_of!(Header, cursor) as i32,
        cell: CELL as i64,
    };

    /// Where machine code finds what it frees a slot with (see [`super::Freeing`]).
    pub(crate) const FREEING: super::Freeing = super::Freeing {
        chunk: CHUNK as i64,
        cell: CELL as i64,
        free_at: std::mem::offset_of!(Header, free) as i32,
        live_at: std::mem::offset_of!(Header, live) as i32,
        current_at: std::mem::offset_of!(Header, current) as i32,
        listed_at: std::mem::offset_of!(Header, listed) as i32,
        reuse_at: REUSE_AT as i64,
    };

    /// This thread's pool, for machine code made on this thread (which runs only here, and never
    /// after the thread's pool is gone: see [`super::Taking`]); null if it is gone already.
    pub(crate) fn address() -> *const () {
        POOL.try_with(|p| std::ptr::from_ref(p).cast::<()>())
            .unwrap_or(ptr::null())
    }

    /// Chunks of this thread: the one cells are taken from, and the others worth sweeping again.
    struct Pool {
        current: Cell<*mut Header>,
        partial: Cell<*mut Header>,
        /// Empty chunks kept back (a stack linked through their `next`, at most [`SPARES`]),
        /// so a program whose lists grow and shrink — a tree built and freed each round, a list
        /// sorted into a new one — does not map and zero fresh chunks each time: what the
        /// system took back had to be faulted in and zeroed again, a tenth of a tree fold's
        /// time in the kernel.
        spare: Cell<*mut Header>,
        spares: Cell<usize>,
    }

    /// Empty chunks a thread keeps at most (32 MiB). They stay counted in [`bytes_held`], as
    /// chunks in use are: a program's lists take no more than at their peak.
    const SPARES: usize = 16;

    impl Pool {
        /// Keeps an empty chunk back, or gives it back to the system when enough are kept.
        ///
        /// # Safety
        /// `c` is an empty, unlisted chunk of this pool that nothing refers to.
        unsafe fn keep(&self, c: *mut Header) {
            if self.spares.get() >= SPARES {
                // SAFETY: as the caller promises.
                unsafe { release(c) };
                return;
            }
            // SAFETY: as the caller promises: its links are free to use.
            unsafe { (*c).next.set(self.spare.get()) };
            self.spare.set(c);
            self.spares.set(self.spares.get() + 1);
        }

        /// An empty chunk kept back, if any.
        fn take_spare(&self) -> Option<*mut Header> {
            let c = self.spare.get();
            if c.is_null() {
                return None;
            }
            // SAFETY: a kept chunk is live, and its `next` links the stack.
            self.spare
                .set(unsafe { (*c).next.replace(ptr::null_mut()) });
            self.spares.set(self.spares.get() - 1);
            Some(c)
        }
    }

    /// When the thread ends, its current chunk goes back if no cell uses it. A chunk still in
    /// use (by values other thread-locals hold) goes back when its last cell is freed.
    impl Drop for Pool {
        fn drop(&mut self) {
            while let Some(spare) = self.take_spare() {
                // SAFETY: a kept chunk is empty and nothing refers to it.
                unsafe { release(spare) };
            }
            let c = self.current.get();
            // SAFETY: `current` is a live chunk of this pool; empty, nothing refers to it.
            if !c.is_null() && unsafe { (*c).live.get() } == 0 {
                unsafe { release(c) };
            }
        }
    }

    thread_local! {
        static POOL: Pool = const {
            Pool {
                current: Cell::new(ptr::null_mut()),
                partial: Cell::new(ptr::null_mut()),
                spare: Cell::new(ptr::null_mut()),
                spares: Cell::new(0),
            }
        };
    }

    thread_local! {
        /// Chunks this thread holds (in use, listed, current or spare): what its lists take
        /// from the system ([`bytes_held`]).
        static HELD: Cell<usize> = const { Cell::new(0) };
    }

    /// Bytes of chunks this thread holds: what the evaluator's memory budget counts of its
    /// lists (`Limits::memory`), read at each budget check.
    pub fn bytes_held() -> u64 {
        HELD.try_with(Cell::get).unwrap_or(0) as u64 * CHUNK as u64
    }

    /// Gives a chunk back to the system allocator.
    ///
    /// # Safety
    /// `c` is an empty chunk of this thread that nothing refers to any more.
    unsafe fn release(c: *mut Header) {
        let _ = HELD.try_with(|n| n.set(n.get().saturating_sub(1)));
        // SAFETY: as the caller promises; the chunk was allocated with this layout.
        unsafe { std::alloc::dealloc(c.cast(), layout()) };
    }

    fn layout() -> Layout {
        // CHUNK is a power of two and far below isize::MAX.
        Layout::from_size_align(CHUNK, CHUNK).unwrap_or_else(|_| std::process::abort())
    }

    /// The chunk a slot belongs to: the slot's address rounded down to the chunk's alignment.
    /// `map_addr` keeps the slot pointer's provenance, which is the whole chunk's (every slot
    /// pointer is derived from the pointer the chunk was allocated as), so the header is reached
    /// without turning an integer into a pointer.
    fn chunk_of(slot: *mut ConsBox) -> *mut Header {
        slot.map_addr(|a| a & !(CHUNK - 1)).cast::<Header>()
    }

    /// An unused slot for one cell.
    #[inline]
    pub fn alloc() -> NonNull<ConsBox> {
        POOL.try_with(|p| {
            let c = p.current.get();
            if !c.is_null() {
                // SAFETY: `current` is a live chunk of this thread.
                if let Some(slot) = unsafe { take(c) } {
                    return slot;
                }
            }
            alloc_slow(p)
        })
        .unwrap_or_else(|_| alloc_unpooled())
    }

    /// A slot after this thread's pool is gone: a chunk of its own, freed with the cell.
    #[cold]
    fn alloc_unpooled() -> NonNull<ConsBox> {
        // SAFETY: a fresh chunk has free slots.
        match unsafe { take(new_chunk()) } {
            Some(slot) => slot,
            None => std::process::abort(),
        }
    }

    /// The next free slot of chunk `c` in address order, if its sweep has one left.
    #[inline]
    unsafe fn take(c: *mut Header) -> Option<NonNull<ConsBox>> {
        let h = unsafe { &*c };
        let mut bits = h.bits.get();
        if bits == 0 {
            bits = refill(h)?;
        }
        h.bits.set(bits & (bits - 1));
        h.live.set(h.live.get() + 1);
        let i = (h.cursor.get() - 1) * 64 + bits.trailing_zeros() as usize;
        // SAFETY: a set bit is a free slot of this chunk, within it (`new_chunk` sets no bit
        // past the last slot or over the header).
        NonNull::new(unsafe { c.cast::<u8>().add(i * CELL).cast::<ConsBox>() })
    }

    /// The sweep's next word with free slots, taken out of the bitmap; `None` at the chunk's end.
    #[inline(never)]
    fn refill(h: &Header) -> Option<u64> {
        let mut w = h.cursor.get();
        while w < WORDS {
            let bits = h.free[w].replace(0);
            w += 1;
            if bits != 0 {
                h.cursor.set(w);
                return Some(bits);
            }
        }
        h.cursor.set(WORDS);
        None
    }

    #[cold]
    fn alloc_slow(p: &Pool) -> NonNull<ConsBox> {
        // The current chunk's sweep is over: it leaves the pool's hands, to be swept again from
        // its start once enough of its cells are free. A chunk worth sweeping first, then the
        // spare, then a fresh one.
        let old = p.current.replace(ptr::null_mut());
        if !old.is_null() {
            // SAFETY: the old current chunk is live: a current chunk is not given back while it
            // is current, even empty.
            let h = unsafe { &*old };
            h.current.set(false);
            if h.live.get() <= REUSE_AT {
                // SAFETY: a live chunk of this pool, not listed while it was current.
                unsafe { enlist(p, old) };
            }
        }
        let next = p.partial.get();
        let c = if !next.is_null() {
            // SAFETY: a listed chunk is live and has free slots.
            unsafe { unlist(p, next) };
            next
        } else if let Some(c) = p.take_spare() {
            c
        } else {
            new_chunk()
        };
        // SAFETY: `c` is live and ours; its sweep starts again at its first slot.
        unsafe {
            (*c).current.set(true);
            (*c).cursor.set(0);
            (*c).bits.set(0);
        }
        p.current.set(c);
        // SAFETY: `c` is live and has a free slot (fresh, empty, or listed with free slots).
        match unsafe { take(c) } {
            Some(slot) => slot,
            None => std::process::abort(),
        }
    }

    fn new_chunk() -> *mut Header {
        let layout = layout();
        // SAFETY: the layout has a nonzero size.
        let c = unsafe { std::alloc::alloc(layout) }.cast::<Header>();
        if c.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        let _ = HELD.try_with(|n| n.set(n.get() + 1));
        // Chunks are not advised into transparent huge pages (`MADV_HUGEPAGE`): one fault per
        // 2 MiB instead of 512 looked cheaper, but measured on a virtual machine whose host takes
        // back free memory, a fresh huge page is zeroed in memory the host must supply again, and
        // bench_records spent 0.30 s in the kernel against 0.13 s with small pages (0.58 s
        // against 0.13 s at worst), for the same user time.
        // Every slot past the header is free.
        let word = |w: usize| {
            let (lo, hi) = (w * 64, w * 64 + 64);
            (lo..hi)
                .filter(|&i| (FIRST..SLOTS).contains(&i))
                .fold(0u64, |bits, i| bits | 1 << (i - lo))
        };
        // SAFETY: the chunk is fresh and large enough for its header.
        unsafe {
            c.write(Header {
                free: std::array::from_fn(|w| Cell::new(word(w))),
                live: Cell::new(0),
                cursor: Cell::new(0),
                bits: Cell::new(0),
                prev: Cell::new(ptr::null_mut()),
                next: Cell::new(ptr::null_mut()),
                listed: Cell::new(false),
                current: Cell::new(false),
            })
        };
        c
    }

    /// Gives back the slot of a cell already dropped.
    ///
    /// # Safety
    /// `slot` came from [`alloc`] on this thread and its cell has been moved out or dropped.
    #[inline]
    pub unsafe fn free(slot: NonNull<ConsBox>) {
        let slot = slot.as_ptr();
        let c = chunk_of(slot);
        // SAFETY: a slot's chunk lives while the slot is in use.
        let h = unsafe { &*c };
        let i = (slot.addr() - c.addr()) / CELL;
        let word = &h.free[i / 64];
        word.set(word.get() | 1 << (i % 64));
        let live = h.live.get() - 1;
        h.live.set(live);
        // The common case: a chunk that still holds cells and is the current one, listed
        // already, or too full to list. Nothing else changes, and the thread-local pool is not
        // touched.
        if live != 0 && (h.current.get() || h.listed.get() || live > REUSE_AT) {
            return;
        }
        // After this thread's pool is gone (a value dropped by another thread-local's
        // destructor), the chunk is on its own: it goes back to the allocator once empty.
        let kept = POOL.try_with(|p| {
            if c == p.current.get() {
                return;
            }
            if live == 0 {
                if h.listed.get() {
                    // SAFETY: listed chunks are live chunks of this pool.
                    unsafe { unlist(p, c) };
                }
                // SAFETY: `c` is empty, unlisted now, and nothing refers to it any more.
                unsafe { p.keep(c) };
            } else if !h.listed.get() {
                // SAFETY: `c` is a live chunk of this pool.
                unsafe { enlist(p, c) };
            }
        });
        if kept.is_err() && live == 0 {
            // SAFETY: as above; the pool that listed it no longer exists.
            unsafe { release(c) };
        }
    }

    unsafe fn enlist(p: &Pool, c: *mut Header) {
        let h = unsafe { &*c };
        let head = p.partial.get();
        h.prev.set(ptr::null_mut());
        h.next.set(head);
        if !head.is_null() {
            unsafe { (*head).prev.set(c) };
        }
        p.partial.set(c);
        h.listed.set(true);
    }

    unsafe fn unlist(p: &Pool, c: *mut Header) {
        let h = unsafe { &*c };
        let (prev, next) = (h.prev.get(), h.next.get());
        if prev.is_null() {
            p.partial.set(next);
        } else {
            unsafe { (*prev).next.set(next) };
        }
        if !next.is_null() {
            unsafe { (*next).prev.set(prev) };
        }
        h.listed.set(false);
        h.prev.set(ptr::null_mut());
        h.next.set(ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::value::Value;

    /// Values of every kind copied by `share_stored` and bound by `push_binding` keep their
    /// counts: each copy is one more reference, and dropping everything frees everything.
    #[test]
    fn stored_copies_and_bindings_keep_counts() {
        let s = std::rc::Rc::new(String::from("s"));
        let list = Value::list([Value::Int(1), Value::Int(2)]);
        let values = [
            Value::Nil,
            Value::Bool(true),
            Value::Int(-3),
            Value::Float(1.5),
            Value::Str(s.clone()),
            list.clone(),
        ];
        let mut frame: Vec<(u32, Value)> = Vec::new();
        for (k, v) in values.iter().enumerate() {
            let copy = share_stored(v);
            assert!(copy.equal(v));
            push_binding(&mut frame, k as u32, copy);
        }
        assert_eq!(std::rc::Rc::strong_count(&s), 3);
        let Value::Pair(c) = &list else {
            panic!("a list")
        };
        assert_eq!(ConsRef::strong_count(c), 3);
        // Moved in as their two words: each binding owns what its value owned.
        for (k, v) in values.iter().enumerate() {
            // SAFETY: a value is two words (as `code::Raw` asserts); the copy is moved into them.
            let words = unsafe {
                std::mem::transmute::<Value, [std::mem::MaybeUninit<u64>; 2]>(share_stored(v))
            };
            // SAFETY: the words of the copy just forgotten.
            unsafe { push_binding_words(&mut frame, k as u32, words) };
        }
        assert_eq!(std::rc::Rc::strong_count(&s), 4);
        assert_eq!(ConsRef::strong_count(c), 4);
        let (by_value, by_words) = frame.split_at(values.len());
        assert!(by_value
            .iter()
            .zip(by_words)
            .all(|((_, a), (_, b))| a.equal(b)));
        frame.truncate(values.len());
        assert_eq!(std::rc::Rc::strong_count(&s), 3);
        assert_eq!(frame.len(), values.len());
        assert!(frame.iter().zip(&values).all(|((_, a), b)| a.equal(b)));
        drop(frame);
        drop(values);
        assert_eq!(std::rc::Rc::strong_count(&s), 1);
        assert_eq!(ConsRef::strong_count(c), 1);
    }

    #[test]
    fn counts_share_and_free() {
        let a = ConsRef::new(Value::Int(1), Value::Nil);
        let b = a.clone();
        assert_eq!(ConsRef::strong_count(&a), 2);
        assert!(ConsRef::ptr_eq(&a, &b));
        let a = ConsRef::try_unwrap(a).expect_err("shared");
        drop(b);
        let cell = ConsRef::try_unwrap(a).expect("now unique");
        assert!(matches!(cell.car, Value::Int(1)));
        assert_eq!(std::mem::size_of::<ConsBox>(), 20);
    }

    /// Freeing a list of records, some holding strings, lists held elsewhere and deeper lists,
    /// gives back exactly the references it held.
    #[test]
    fn freeing_lists_gives_back_every_reference() {
        let s = std::rc::Rc::new(String::from("s"));
        let shared = Value::list([Value::Int(1), Value::Int(2)]);
        let records = Value::list((0..1000).map(|i| match i % 4 {
            0 => Value::list([Value::Int(i), Value::Str(s.clone()), Value::Int(8)]),
            1 => Value::list([Value::Int(i), shared.clone()]),
            2 => Value::list([Value::list([Value::Str(s.clone())]), Value::Int(i)]),
            _ => Value::cons(Value::Int(i), Value::Str(s.clone())),
        }));
        assert_eq!(std::rc::Rc::strong_count(&s), 1 + 750);
        let Value::Pair(head) = &shared else {
            panic!("a list")
        };
        assert_eq!(ConsRef::strong_count(head), 1 + 250);
        drop(records);
        assert_eq!(std::rc::Rc::strong_count(&s), 1);
        assert_eq!(ConsRef::strong_count(head), 1);
    }

    /// A tree let go of from machine code (`ConsRef::release`, `free_tree`): every cell held only
    /// there freed, every reference its halves held given back once, what is held elsewhere kept.
    #[test]
    fn releasing_trees_gives_back_every_reference() {
        let s = std::rc::Rc::new(String::from("s"));
        let shared = Value::list([Value::Int(1), Value::Int(2)]);
        // A balanced tree of pairs whose leaves are numbers, strings and a list held elsewhere;
        // one subtree held elsewhere too.
        fn tree(depth: u32, n: i64, s: &std::rc::Rc<String>, shared: &Value) -> Value {
            if depth == 0 {
                return match n % 3 {
                    0 => Value::Int(n),
                    1 => Value::Str(s.clone()),
                    _ => shared.clone(),
                };
            }
            Value::cons(
                tree(depth - 1, 2 * n, s, shared),
                tree(depth - 1, 2 * n + 1, s, shared),
            )
        }
        let kept = tree(3, 5, &s, &shared);
        let whole = Value::cons(
            tree(8, 1, &s, &shared),
            Value::cons(kept.clone(), Value::Nil),
        );
        let (strings, lists) = (std::rc::Rc::strong_count(&s), {
            let Value::Pair(head) = &shared else {
                panic!("a list")
            };
            ConsRef::strong_count(head)
        });
        assert!(strings > 80 && lists > 80);
        let Value::Pair(root) = whole else {
            panic!("a pair")
        };
        // SAFETY: the word of a reference handed over.
        unsafe { ConsRef::release(ConsRef::into_raw(root)) };
        let Value::Pair(head) = &shared else {
            panic!("a list")
        };
        // What `kept` holds is all that is left.
        let in_kept = |n: i64| (0..8).filter(|i| (5 * 8 + i) % 3 == n).count();
        assert_eq!(std::rc::Rc::strong_count(&s), 1 + in_kept(1));
        assert_eq!(ConsRef::strong_count(head), 1 + in_kept(2));
        let Value::Pair(k) = &kept else {
            panic!("a pair")
        };
        assert_eq!(ConsRef::strong_count(k), 1);
        drop(kept);
        assert_eq!(std::rc::Rc::strong_count(&s), 1);
        assert_eq!(ConsRef::strong_count(head), 1);
    }

    /// A spine whose runs of atoms are broken by cells that own something (a string, a nested
    /// list, a shared tail) is freed run by run, every reference given back once.
    #[test]
    fn runs_of_atoms_and_owning_cells_are_all_freed() {
        let s = std::rc::Rc::new(String::from("s"));
        let shared = Value::list([Value::Int(1), Value::Int(2)]);
        let mut list = shared.clone();
        for i in 0..300 {
            let car = match i % 7 {
                3 => Value::Str(s.clone()),
                5 => Value::list([Value::Int(i), Value::Str(s.clone())]),
                6 => shared.clone(),
                _ => Value::Int(i),
            };
            list = Value::cons(car, list);
        }
        // Two cells of numbers in front of it, sharing it: freeing them stops at the shared cell.
        let front = Value::cons(Value::Int(-1), Value::cons(Value::Int(-2), list.clone()));
        let Value::Pair(head) = &shared else {
            panic!("a list")
        };
        assert_eq!(std::rc::Rc::strong_count(&s), 1 + 2 * 43);
        assert_eq!(ConsRef::strong_count(head), 2 + 42);
        drop(front);
        assert_eq!(std::rc::Rc::strong_count(&s), 1 + 2 * 43);
        drop(list);
        assert_eq!(std::rc::Rc::strong_count(&s), 1);
        assert_eq!(ConsRef::strong_count(head), 1);
    }

    /// The packed tags that own nothing are those of the values that own nothing.
    #[test]
    fn packed_tags_own_what_their_values_own() {
        let values = [
            Value::Nil,
            Value::Bool(true),
            Value::Int(-3),
            Value::Float(0.5),
            Value::str("s"),
            Value::Symbol(crate::eval::Sym(4)),
            Value::Keyword(crate::eval::Sym(4)),
            Value::list([Value::Int(1)]),
            Value::Task(2),
        ];
        for v in values {
            let owns = v.owns_something();
            let pair = matches!(v, Value::Pair(_));
            let p = Packed::new(v);
            assert_eq!(Value::tag_owns_something(p.tag), owns);
            assert_eq!(p.tag == Value::PAIR_TAG, pair);
        }
    }

    /// A count at its limit sticks there: the cell stays, readable, however many references
    /// are then dropped. 16.7 million real clones: too long for Miri, which runs the short
    /// version below.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "16.7 million clones; `a_count_near_its_limit_sticks` is Miri's"
    )]
    fn a_count_at_its_limit_sticks() {
        let a = ConsRef::new(Value::Int(7), Value::Nil);
        for _ in 1..STUCK {
            std::mem::forget(a.clone());
        }
        assert_eq!(ConsRef::strong_count(&a), STUCK as usize);
        let b = a.clone();
        assert_eq!(ConsRef::strong_count(&b), STUCK as usize);
        drop(b);
        drop(a.clone());
        assert_eq!(ConsRef::strong_count(&a), STUCK as usize);
        assert!(matches!(*a.car(), Value::Int(7)));
    }

    /// The same stickiness from a count set just below the limit (as 16.7 million forgotten
    /// clones would leave it): reaching it, cloning and dropping at it leave the cell readable.
    /// The count is then put back to this reference's own, so the cell is freed and Miri's leak
    /// check has nothing to report.
    #[test]
    fn a_count_near_its_limit_sticks() {
        let a = ConsRef::new(Value::Int(7), Value::list([Value::Int(8)]));
        let set_count = |r: &ConsRef, n: u32| {
            let meta = &r.inner().meta;
            meta.set(meta.get() & 0xff | n << 8);
        };
        set_count(&a, STUCK - 1);
        let b = a.clone();
        assert_eq!(ConsRef::strong_count(&a), STUCK as usize);
        let c = b.clone();
        assert_eq!(ConsRef::strong_count(&a), STUCK as usize);
        drop(b);
        drop(c);
        drop(a.clone());
        assert_eq!(ConsRef::strong_count(&a), STUCK as usize);
        assert!(matches!(*a.car(), Value::Int(7)));
        assert_eq!(a.cdr().list_len(), Some(1));
        set_count(&a, 1);
        assert!(ConsRef::try_unwrap(a).is_ok());
    }

    /// Cells taken after others were freed come in address order (the sweep), not in the
    /// reverse order of their freeing: the cells a loop conses lie side by side.
    #[test]
    fn cells_are_taken_in_address_order() {
        let n = pool::CHUNK / std::mem::size_of::<ConsBox>() / 2;
        let make = |n: usize| -> Vec<ConsRef> {
            (0..n as i64)
                .map(|i| ConsRef::new(Value::Int(i), Value::Nil))
                .collect()
        };
        let ascending = |cells: &[ConsRef]| {
            cells
                .windows(2)
                .filter(|w| ConsRef::as_ptr(&w[0]) < ConsRef::as_ptr(&w[1]))
                .count()
        };
        let kept = make(n);
        // Freed in the order they were taken: a list of freed slots would hand them back last
        // first, going down.
        for _ in 0..3 {
            let cells = make(n);
            // Only a move to another chunk may go down.
            assert!(
                ascending(&cells) + 3 >= n - 1,
                "{} of {n}",
                ascending(&cells)
            );
            drop(cells);
        }
        assert_eq!(kept.len(), n);
    }

    /// Lists spanning many chunks, freed in an order that empties chunks other than the current
    /// one and refills partly freed ones, keep their contents.
    #[test]
    fn the_pool_reuses_and_returns_chunks() {
        let n = 3 * pool::CHUNK / std::mem::size_of::<ConsBox>();
        let make = move |k: i64| Value::list((0..n as i64).map(move |i| Value::Int(i * k)));
        let (a, b) = (make(1), make(2));
        let sum = |v: &Value| {
            v.iter()
                .map(|x| match *x {
                    Value::Int(i) => i,
                    _ => 0,
                })
                .sum::<i64>()
        };
        let expect = (n as i64 - 1) * n as i64 / 2;
        drop(a);
        let c = make(3);
        assert_eq!(sum(&b), 2 * expect);
        assert_eq!(sum(&c), 3 * expect);
        drop(b);
        drop(c);
        let d = make(1);
        assert_eq!(sum(&d), expect);
        std::thread::spawn(move || assert_eq!(sum(&make(1)), expect))
            .join()
            .expect("a thread of its own");
    }
}
