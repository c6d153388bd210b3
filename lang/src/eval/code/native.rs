//! Procedure bodies compiled to machine code (with Cranelift), for the procedures a program
//! spends its time in.
//!
//! The closures of [`super`] remove the walk's dispatch but keep a machine made of Rust calls:
//! each node a boxed closure with its prologue, each procedure call five Rust frames and a
//! region of the value stack, each value moved through memory between them. A procedure whose
//! locals are on the stack (see [`super`]) and whose body holds only the forms list programs
//! are made of — constants, locals, calls, `if`, `cond`, `and`, `or`, `begin`, `let`, `let*` — is
//! compiled here, once it has been called [`HOT`] times, into one machine-code function: its
//! locals live in registers, a call of such a procedure defined at top level and named globally
//! is a machine call (its arguments in registers, its value in two), a call of itself in tail
//! position is a jump (a variable passed on moved, not counted), and `car`, `cdr`, the
//! predicates, `cons` and integer arithmetic and comparisons of a builtin named globally while
//! the globals are pristine are made in place, counts included. A variable's last read takes its
//! value over instead of counting it again ([`last_reads`]): a list walked by `car` and `cdr` of
//! a variable read for the last time is freed as the walk goes, while its cells are in the cache.
//! A stretch that calls no procedure reads the pristine flag once and is made in copies
//! ([`stretches`], [`Gen::stretch`]); a half of a variable's pairs is read borrowed and once
//! ([`Gen::borrowed_halves`]); a parameter a loop only reads is lent by its callers ([`lent`]).
//! A cell packs a value behind an `Rc` as other words than the value holds: only atoms and pairs
//! are consed or taken out of cells as words ([`packed_as_held`]).
//!
//! Nothing about the answers changes: every node still takes its step, in the walk's order (the
//! steps between two things that can fail or look at the count are taken with one addition and
//! one comparison, and one by one where a checkpoint falls among them, so a budget runs out at
//! the same step and span; steps met before a path that calls Rust are taken there and given
//! back after, to be taken with those that follow); a global is read at the moment the walk
//! reads it (a call of a procedure named globally is made directly only while the name still
//! holds the procedure the code was made for, which the code keeps alive, known from the
//! globals' version); every error, and everything the code does not
//! make in place — a builtin's other cases, a call of anything else, a call in tail position of
//! another procedure — goes through the same Rust functions as the closures ([`call_on`],
//! [`Machine::call_flat`], [`Pending`]). A test runs programs with this tier on and off and
//! compares values, rendered diagnostics and step counts.
//!
//! The code lives as long as the thread: a procedure's machine code is never freed (a thread
//! compiles at most [`MAX_FUNCTIONS`] procedures, so a REPL or a fuzzer that defines procedures
//! without end stops compiling rather than growing), and neither are the procedures its calls
//! are guarded by.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::mem::offset_of;
use std::rc::Rc;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AbiParam, Block, BlockArg, FuncRef, Function, InstBuilder, MemFlagsData, Signature,
    StackSlotData, StackSlotKind, Value as V,
};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module};

use super::super::ast::{Body, Lambda, Node, NodeKind};
use super::super::builtins::{self, BuiltinDef, Op};
use super::super::cons::{self, ConsRef, CAR_AT, CDR_AT, META_AT, META_STUCK, ONE};
use super::super::env::{Env, Globals};
use super::super::exec::{Entry, INLINE_ARGS, RED_ZONE, STACK_SEGMENT};
use super::super::machine::Machine;
use super::super::symbol::Sym;
use super::super::value::{Closure, ClosureKind, Value};
use super::{call_on, CompiledBody, FlatScope, Raw, Scope};
use super::{ERR, FLAT_TAIL};
use crate::span::Span;
use ttdl_ir::limits::Limits;

mod last_reads;
mod lent;
mod stretches;
mod tails;

thread_local! {
    /// Whether procedure bodies may be compiled to machine code on this thread.
    static NATIVE: Cell<bool> = const { Cell::new(!cfg!(miri)) };
    /// Calls of a procedure before its body is compiled (see [`HOT`]).
    static AFTER: Cell<u32> = const { Cell::new(HOT) };
    /// The machine code of this thread, made on first use (`None` after: no room for it).
    static JIT: RefCell<Option<Option<Jit>>> = const { RefCell::new(None) };
}

/// Turns compiling procedure bodies to machine code on or off for this thread (on by default,
/// off under Miri, which cannot run generated code). Off, every body runs as closures; the
/// answers, errors and step counts are the same either way, which is what this switch is for:
/// comparing the two, and measuring one beside the other.
pub fn set_native(on: bool) {
    NATIVE.with(|n| n.set(on && !cfg!(miri)));
}

/// Whether bodies may be compiled to machine code on this thread.
pub fn native_enabled() -> bool {
    NATIVE.with(Cell::get)
}

/// Sets how many calls of a procedure come before its body is compiled to machine code, on this
/// thread ([`HOT`] by default): tests set it low to compile procedures that few calls reach.
pub fn set_native_after(calls: u32) {
    AFTER.with(|a| a.set(calls.max(1)));
}

/// Calls of a procedure before its body is compiled to machine code. Compiling a procedure
/// takes some 10 to 30 ms (Cranelift's passes over a function that holds every path the
/// procedure's forms can take); a thousand calls of a small procedure take about a
/// millisecond as closures, so a procedure called fewer times than this costs no compilation,
/// and one called more pays it back many times over.
const HOT: u32 = 1000;

/// Procedures one thread compiles at most.
const MAX_FUNCTIONS: usize = 4096;

/// A slot's index in its chunk is its offset times this, shifted right by 32: the reciprocal of
/// the cell's size, rounded up, which is exact for every multiple of the size below the chunk's.
const SLOT_OF: i64 = ((1i64 << 32) + cons::FREEING.cell - 1) / cons::FREEING.cell;
const _: () = assert!(
    (SLOT_OF * cons::FREEING.cell - (1 << 32)) * cons::FREEING.chunk < 1 << 32
        && SLOT_OF * cons::FREEING.chunk < i64::MAX / 2
);

/// Value tags ([`Value`]'s kinds, in order) the code tests.
const NIL: i64 = 0;
const BOOL: i64 = 1;
const INT: i64 = 2;
const PAIR: i64 = 7;
/// The kinds that own something (a count on a shared value): strings, pairs, closures, macros,
/// messages, networks (as [`Value::owns_something`]).
const OWNS: i64 = (1 << 4) | (1 << 7) | (1 << 8) | (1 << 10) | (1 << 12) | (1 << 13);
/// What [`nat_head`] answers for a name that still holds the procedure a call was made for.
const SAME: i64 = 70;

/// Where a procedure's machine code stands.
#[derive(Clone, Copy)]
pub(in crate::eval) enum State {
    /// Not compiled yet; called this many times.
    Cold(u32),
    Ready(NativeEntry),
    /// Not to be compiled (a form it does not make, a closure not at top level, the switch off).
    Never,
}

/// A compiled procedure's entry from Rust: the machine and its arguments' words, which it takes
/// over; its value, error or call in tail position, as the closures return them.
/// `nested` for a procedure not defined at top level (its closures have a scope; see [`run`]).
#[derive(Clone, Copy)]
pub(in crate::eval) struct NativeEntry {
    f: unsafe extern "C" fn(*mut Machine, *const Raw) -> Raw,
    nested: bool,
}

/// The machine code of a procedure `c`, if it has some or has just been called often enough to
/// get some.
#[inline(always)]
pub(super) fn ready(m: &mut Machine, c: &Closure, body: &CompiledBody) -> Option<NativeEntry> {
    match body.native.get() {
        // Code made for closures at top level serves only those, and the other way round.
        State::Ready(e) => (e.nested != c.env.is_empty()).then_some(e),
        State::Never => None,
        State::Cold(n) => warm(m, c, body, n),
    }
}

#[cold]
#[inline(never)]
fn warm(m: &mut Machine, c: &Closure, body: &CompiledBody, n: u32) -> Option<NativeEntry> {
    if n + 1 < AFTER.with(Cell::get) {
        body.native.set(State::Cold(n + 1));
        return None;
    }
    if !native_enabled() {
        body.native.set(State::Never);
        return None;
    }
    compile(m, c);
    match body.native.get() {
        State::Ready(e) => (e.nested != c.env.is_empty()).then_some(e),
        _ => {
            body.native.set(State::Never);
            None
        }
    }
}

/// Runs a compiled procedure whose arguments are on the stack from `base` (as
/// [`Machine::run_flat_at`]): they are handed to the code, and a call it leaves in tail
/// position with its arguments pushed has them moved down to `base`.
#[inline(always)]
pub(super) fn run(m: &mut Machine, e: NativeEntry, base: usize, env: &Env) -> Raw {
    // A procedure not at top level runs with its closure's scope at hand, for the diagnostic
    // of an unbound name (which may find the name there, as the walk's lookup does).
    let saved = if e.nested {
        std::mem::replace(&mut m.native_env, std::ptr::from_ref(env))
    } else {
        std::ptr::null()
    };
    // SAFETY: the values from `base` on are the arguments; the length is cut below them first,
    // so they are owned by the code alone, which reads them all before it does anything else.
    let floor = std::mem::replace(&mut m.native_floor, floor());
    let r = unsafe {
        let args = m.stack.values.as_ptr().add(base).cast::<Raw>();
        m.stack.values.set_len(base);
        (e.f)(m, args)
    };
    m.native_floor = floor;
    if e.nested {
        m.native_env = saved;
    }
    if r.tag() == FLAT_TAIL {
        let from = std::mem::replace(&mut m.pending.flat_from, base);
        m.stack.move_down(base, from);
    }
    r
}

/// The lowest stack address from which the code may call a procedure directly on the stack it
/// runs on now: [`RED_ZONE`] bytes above the stack's end, room for a frame of the code and
/// whatever Rust runs below it until the next look (every closure call through Rust looks again,
/// see `Machine::call_flat`). Where the end is not known, none: every direct call goes through
/// Rust.
fn floor() -> usize {
    let here = 0u8;
    let sp = std::ptr::from_ref(&here).addr();
    match stacker::remaining_stack() {
        Some(left) => (sp - left).saturating_add(RED_ZONE),
        None => usize::MAX,
    }
}

/// A call site's facts for the Rust functions the code calls: the spans its errors and steps
/// name, the global it reads, the locals in scope (for the diagnostic of an unbound name) and the
/// procedure it calls directly.
struct Site {
    span: Span,
    fspan: Span,
    spans: Box<[Span]>,
    sym: Sym,
    scope: Scope,
    name: Option<Sym>,
    /// The procedure's closures have a scope ([`Machine::native_env`]).
    nested: bool,
    /// The globals' version at which the head last held the procedure called directly
    /// (`u64::MAX`: none yet).
    seen: Cell<u64>,
}

/// The functions of a thread's code, and what they keep alive.
struct Jit {
    module: std::mem::ManuallyDrop<JITModule>,
    ctx: Context,
    fctx: FunctionBuilderContext,
    helpers: HashMap<&'static str, FuncId>,
    /// Each lambda compiled (or being compiled): its function and its entry from Rust. The
    /// lambdas are kept (in `lambdas`), so no other lambda is made at a compiled one's address.
    funcs: HashMap<*const Lambda, (FuncId, FuncId)>,
    /// Each one's parameters lent by its callers ([`lent`]), decided when it is declared.
    lent: HashMap<*const Lambda, Rc<[bool]>>,
    /// Each one's calls in tail position, whether they are all of itself or of builtins
    /// ([`tails`]).
    leaf: HashMap<*const Lambda, bool>,
    lambdas: Vec<Rc<Lambda>>,
    /// The lambdas compiled for closures not at top level (never called directly).
    nested: std::collections::HashSet<*const Lambda>,
    /// The procedures calls are made directly to, the sites, the spans of steps and the
    /// constants the code points at: they live as long as the code.
    kept: Vec<Rc<Closure>>,
    /// This thread's pool of cells, which `cons` takes its cells from in place (null: always
    /// through Rust).
    pool: *const (),
    // Boxed: the code holds their addresses, which must not move as the vectors grow.
    #[allow(clippy::vec_box)]
    sites: Vec<Box<Site>>,
    spans: Vec<Box<[Span]>>,
    #[allow(clippy::vec_box)]
    consts: Vec<Box<Value>>,
    named: usize,
    /// A function Cranelift would not make (a bug): nothing more is compiled on this thread.
    broken: bool,
}

/// The space all of a thread's machine code lies in: calls between compiled procedures are
/// near calls (32-bit offsets), so their code must lie within 2 GB; reserved at once (address
/// space only), committed as code is made. A thread compiles at most [`MAX_FUNCTIONS`]
/// procedures, some tens of KB each.
const CODE_SPACE: usize = 256 << 20;

impl Jit {
    fn new() -> Option<Jit> {
        let mut flags = settings::builder();
        flags.set("opt_level", "speed").ok()?;
        // Checked where the tests run (a value read where it was not made on every path, say);
        // not in a release build.
        let verify = if cfg!(debug_assertions) {
            "true"
        } else {
            "false"
        };
        flags.set("enable_verifier", verify).ok()?;
        // The machine's address lives in one register the allocator leaves alone (r15 on
        // x86-64): read wherever the code needs it, never spilled and reloaded around calls.
        flags.set("enable_pinned_reg", "true").ok()?;
        let isa = cranelift_native::builder()
            .ok()?
            .finish(settings::Flags::new(flags))
            .ok()?;
        let mut jb = JITBuilder::with_isa(isa, cranelift_module::default_libcall_names());
        for (name, f) in helpers() {
            jb.symbol(name, f);
        }
        jb.memory_provider(Box::new(
            cranelift_jit::ArenaMemoryProvider::new_with_size(CODE_SPACE).ok()?,
        ));
        let mut module = JITModule::new(jb);
        let mut helpers = HashMap::new();
        for (name, sig) in helper_signatures(&module) {
            let id = module.declare_function(name, Linkage::Import, &sig).ok()?;
            helpers.insert(name, id);
        }
        let ctx = module.make_context();
        Some(Jit {
            module: std::mem::ManuallyDrop::new(module),
            ctx,
            fctx: FunctionBuilderContext::new(),
            helpers,
            funcs: HashMap::new(),
            lent: HashMap::new(),
            leaf: HashMap::new(),
            lambdas: Vec::new(),
            nested: Default::default(),
            kept: Vec::new(),
            pool: cons::pool_address(),
            sites: Vec::new(),
            spans: Vec::new(),
            consts: Vec::new(),
            named: 0,
            broken: false,
        })
    }
}

/// When the thread ends, its code goes: nothing on it can run the code any more. What the code
/// kept alive is dropped after it, as any value a thread-local holds (a list's cells go back to
/// this thread's pool, or to the allocator if the pool is gone already).
impl Drop for Jit {
    fn drop(&mut self) {
        // SAFETY: taken once, here; no function of it runs again (above).
        unsafe { std::mem::ManuallyDrop::take(&mut self.module).free_memory() };
    }
}

/// Whether a form is a variable or a constant (evaluating it cannot fail, and costs nothing).
fn is_leaf(n: &Node) -> bool {
    matches!(n.kind, NodeKind::Const(_) | NodeKind::Local(..))
}

/// Whether a body is made of the forms the code makes (see the module's notes).
fn supported(body: &Body) -> bool {
    body.defines.is_empty() && body.forms.iter().all(supported_node)
}

fn supported_node(n: &Node) -> bool {
    match &n.kind {
        NodeKind::Const(_) | NodeKind::Local(..) | NodeKind::Global(_) => true,
        NodeKind::Call { func, args, .. } => {
            supported_node(func) && args.iter().all(supported_node)
        }
        NodeKind::If { test, then, other } => {
            supported_node(test)
                && supported_node(then)
                && other.as_deref().is_none_or(supported_node)
        }
        NodeKind::Begin(forms) | NodeKind::And(forms) | NodeKind::Or(forms) => {
            forms.iter().all(supported_node)
        }
        NodeKind::Cond(clauses) => clauses.iter().all(|c| {
            c.test.as_ref().is_none_or(supported_node) && c.body.iter().all(supported_node)
        }),
        NodeKind::Let { bindings, body, .. } => {
            bindings.iter().all(|(_, n)| supported_node(n)) && supported(body)
        }
        _ => false,
    }
}

/// The slots a body's locals take: its parameters and every `let` binding in it.
fn slots(body: &Body) -> usize {
    body.forms.iter().map(slots_node).sum()
}

fn slots_node(n: &Node) -> usize {
    match &n.kind {
        NodeKind::Call { func, args, .. } => {
            slots_node(func) + args.iter().map(slots_node).sum::<usize>()
        }
        NodeKind::If { test, then, other } => {
            slots_node(test) + slots_node(then) + other.as_deref().map_or(0, slots_node)
        }
        NodeKind::Begin(forms) | NodeKind::And(forms) | NodeKind::Or(forms) => {
            forms.iter().map(slots_node).sum()
        }
        NodeKind::Cond(clauses) => clauses
            .iter()
            .map(|c| {
                c.test.as_ref().map_or(0, slots_node) + c.body.iter().map(slots_node).sum::<usize>()
            })
            .sum(),
        NodeKind::Let { bindings, body, .. } => {
            bindings.len()
                + bindings.iter().map(|(_, n)| slots_node(n)).sum::<usize>()
                + slots(body)
        }
        _ => 0,
    }
}

/// Whether `c` can have machine code: a procedure of required parameters only whose locals are
/// on the stack (so its body reads no variable of its closure's scope) and whose body the code
/// makes.
fn eligible(globals: &Globals, c: &Closure) -> bool {
    let l = &c.lambda;
    c.kind != ClosureKind::Comm
        && l.optional.is_empty()
        && l.rest.is_none()
        && l.required.len() <= 16
        && supported(&l.body)
        && l.compiled(globals).is_flat()
}

/// Compiles `c` and the procedures it calls by name that can be compiled too, so they call each
/// other directly; sets each one's state.
fn compile(m: &mut Machine, c: &Closure) {
    if !eligible(&m.globals, c) || !m.globals.pristine() {
        return;
    }
    let _ = JIT.try_with(|cell| {
        let mut slot = cell.borrow_mut();
        if let Some(jit) = slot.get_or_insert_with(Jit::new) {
            compile_in(jit, m, c);
        }
    });
}

/// [`compile`] in the thread's code.
fn compile_in(jit: &mut Jit, m: &mut Machine, c: &Closure) {
    if jit.broken || jit.funcs.len() >= MAX_FUNCTIONS {
        return;
    }
    let mut todo: Vec<Rc<Lambda>> = Vec::new();
    let mut made: Vec<Rc<Lambda>> = Vec::new();
    jit.declare(&m.globals, &c.lambda, &mut todo, !c.env.is_empty());
    while let Some(l) = todo.pop() {
        if let Err(e) = jit.define(m, &l, &mut todo) {
            // Where the tests run, such a bug fails them (the verifier is on there).
            debug_assert!(false, "Cranelift refused a procedure's code: {e:?}");
            // Functions declared and never defined would fail every later batch: no more.
            jit.module.clear_context(&mut jit.ctx);
            jit.broken = true;
            // A function Cranelift would not make: a bug, but not the user's; the closures run.
            return;
        }
        made.push(l);
    }
    if jit.module.finalize_definitions().is_err() {
        jit.broken = true;
        return;
    }
    for l in made {
        let (_, entry) = jit.funcs[&Rc::as_ptr(&l)];
        let code = jit.module.get_finalized_function(entry);
        // SAFETY: the entry was made with this signature (`Jit::define`).
        let f = unsafe {
            std::mem::transmute::<*const u8, unsafe extern "C" fn(*mut Machine, *const Raw) -> Raw>(
                code,
            )
        };
        let nested = jit.nested.contains(&Rc::as_ptr(&l));
        l.compiled(&m.globals)
            .native
            .set(State::Ready(NativeEntry { f, nested }));
    }
}

/// The signature of a procedure of `n` parameters: the machine, each argument's two words; its
/// value's two words.
fn proc_signature(module: &JITModule, n: usize) -> Signature {
    let mut sig = module.make_signature();
    sig.params.push(AbiParam::new(types::I64));
    for _ in 0..2 * n {
        sig.params.push(AbiParam::new(types::I64));
    }
    sig.returns.push(AbiParam::new(types::I64));
    sig.returns.push(AbiParam::new(types::I64));
    sig
}

impl Jit {
    /// Declares `l`'s function and entry, to be defined in this batch (once).
    fn declare(
        &mut self,
        globals: &Globals,
        l: &Rc<Lambda>,
        todo: &mut Vec<Rc<Lambda>>,
        nested: bool,
    ) -> (FuncId, FuncId) {
        if let Some(&ids) = self.funcs.get(&Rc::as_ptr(l)) {
            return ids;
        }
        self.lent
            .insert(Rc::as_ptr(l), lent::lent_params(globals, l).into());
        self.leaf.insert(Rc::as_ptr(l), tails::leaf(globals, l));
        if nested {
            self.nested.insert(Rc::as_ptr(l));
        }
        let n = l.required.len();
        let sig = proc_signature(&self.module, n);
        let mut esig = self.module.make_signature();
        esig.params.push(AbiParam::new(types::I64));
        esig.params.push(AbiParam::new(types::I64));
        esig.returns.push(AbiParam::new(types::I64));
        esig.returns.push(AbiParam::new(types::I64));
        self.named += 1;
        let f = self
            .module
            .declare_function(&format!("p{}", self.named), Linkage::Local, &sig)
            .expect("a fresh name");
        let e = self
            .module
            .declare_function(&format!("e{}", self.named), Linkage::Local, &esig)
            .expect("a fresh name");
        self.funcs.insert(Rc::as_ptr(l), (f, e));
        self.lambdas.push(l.clone());
        todo.push(l.clone());
        (f, e)
    }

    /// Defines `l`'s function and its entry from Rust.
    fn define(
        &mut self,
        m: &Machine,
        l: &Rc<Lambda>,
        todo: &mut Vec<Rc<Lambda>>,
    ) -> Result<(), Box<cranelift_module::ModuleError>> {
        let (fid, eid) = self.funcs[&Rc::as_ptr(l)];
        let n = l.required.len();
        // The entry: the arguments' words read from memory, the function called.
        self.ctx.func.signature = self
            .module
            .declarations()
            .get_function_decl(eid)
            .signature
            .clone();
        {
            let mut b = FunctionBuilder::new(&mut self.ctx.func, &mut self.fctx);
            let block = b.create_block();
            b.append_block_params_for_function_params(block);
            b.switch_to_block(block);
            b.seal_block(block);
            let (mm, args) = (b.block_params(block)[0], b.block_params(block)[1]);
            let mut vals = vec![mm];
            for i in 0..2 * n {
                vals.push(b.ins().load(
                    types::I64,
                    MemFlagsData::new().with_notrap(),
                    args,
                    (8 * i) as i32,
                ));
            }
            // The pinned register is not saved by the code's prologues: the entry keeps the
            // caller's value and gives it back.
            let saved = b.ins().get_pinned_reg(types::I64);
            b.ins().set_pinned_reg(mm);
            let callee = self.module.declare_func_in_func(fid, b.func);
            let call = b.ins().call(callee, &vals);
            let r = b.inst_results(call).to_vec();
            b.ins().set_pinned_reg(saved);
            // The arguments handed over and lent to the code (see `lent`) are let go here.
            let lent = self.lent[&Rc::as_ptr(l)].clone();
            if lent.contains(&true) {
                let drop = self
                    .module
                    .declare_func_in_func(self.helpers["nat_drop"], b.func);
                for (i, _) in lent.iter().enumerate().filter(|(_, &on)| on) {
                    b.ins().call(drop, &[vals[1 + 2 * i], vals[2 + 2 * i]]);
                }
            }
            b.ins().return_(&r);
            b.finalize(self.module.isa().frontend_config());
        }
        self.module
            .define_function(eid, &mut self.ctx)
            .map_err(Box::new)?;
        self.module.clear_context(&mut self.ctx);

        self.ctx.func.signature = proc_signature(&self.module, n);
        let nslots = n + slots(&l.body);
        let mut fctx = std::mem::replace(&mut self.fctx, FunctionBuilderContext::new());
        {
            let mut func = std::mem::replace(&mut self.ctx.func, Function::new());
            let b = FunctionBuilder::new(&mut func, &mut fctx);
            let nested = self.nested.contains(&Rc::as_ptr(l));
            let mut g = Gen::new(self, m, b, l, nslots, todo);
            g.nested = nested;
            g.function();
            g.b.finalize(self.module.isa().frontend_config());
            self.ctx.func = func;
        }
        self.fctx = fctx;
        self.module
            .define_function(fid, &mut self.ctx)
            .map_err(Box::new)?;
        self.module.clear_context(&mut self.ctx);
        Ok(())
    }
}

/// A block where branches meet, and whether any does.
struct Merge {
    block: Block,
    reached: Cell<bool>,
}

/// A value the code made: its two words, and whether it owns them (a local read where it lies
/// does not; it is borrowed for as long as the local holds it).
#[derive(Clone, Copy)]
struct Val {
    tag: V,
    word: V,
    owned: bool,
}

/// The maker of one procedure's function.
struct Gen<'a, 'j> {
    b: FunctionBuilder<'a>,
    jit: &'j mut Jit,
    globals: &'j Globals,
    lambda: Rc<Lambda>,
    todo: &'j mut Vec<Rc<Lambda>>,
    scope: FlatScope,
    vars: Vec<(Variable, Variable)>,
    /// Steps taken by the nodes met since the last thing that can fail or look at the count.
    steps: Vec<Span>,
    /// Values made and not yet used while code that can fail runs: let go on an error.
    temps: Vec<Val>,
    /// Lets go of every local and returns an error.
    fail: Block,
    /// Lets go of every local and returns its two parameters.
    exit: Block,
    /// Where a call of itself in tail position goes, its parameters bound again.
    head: Block,
    helpers: HashMap<&'static str, FuncRef>,
    /// The variable each value read from one was last read from (see `jump_to_self`).
    reads: HashMap<V, usize>,
    /// The stack slot values are handed to helpers in, and how many it holds.
    slot: Option<(cranelift_codegen::ir::StackSlot, usize)>,
    /// Made for closures not at top level.
    nested: bool,
    /// The reads of variables that are their last (see [`last_reads`]): they take the value
    /// over.
    last: std::collections::HashSet<*const Node>,
    /// Variables read and lent to a call whose arguments are still being made: a last read
    /// among those arguments must not take the value over (the one lent would lose its count).
    lent: Vec<usize>,
    /// The nodes made as stretches that read the pristine flag once ([`stretches`]).
    stretches: std::collections::HashSet<*const Node>,
    /// What the code being made knows of the pristine flag.
    pristine: Known,
    /// Halves read in place from a variable's pairs where the code being made is reached only
    /// through their reading: the variable, the halves taken from it in order (`true` for a
    /// car), and the half's words, borrowed from its cell (see [`Gen::halves`]). Truncated to
    /// a mark where paths that may not have read them meet.
    seen: Vec<((usize, Vec<bool>), V, V)>,
    /// Where each half borrowed from a variable's pairs was taken from (by its tag's value):
    /// the variable it lies under, lent like the variable while a call's arguments are made.
    roots: HashMap<V, (usize, Vec<bool>)>,
    /// Which parameters the callers lend ([`lent`]): borrowed for the whole call, never let go.
    params_lent: Rc<[bool]>,
    /// Within the copy for integers of a stretch that starts the body: where a call of itself
    /// goes round again when it passes integers for those variables (see [`Gen::stretch`]).
    loop_head: Option<(Block, Vec<usize>)>,
}

/// What the code being made knows of the pristine flag: nothing (each builtin named globally
/// reads it), or, inside a stretch ([`stretches`]), that it is set or that it is clear.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Known {
    Unknown,
    Set,
    Clear,
}

/// The paths a builtin's call is made on: in place, the general way, or both, forked on the
/// flag (the blocks to enter).
#[derive(Clone, Copy)]
enum Fork {
    InPlace,
    General,
    Both { in_place: Block, general: Block },
}

/// How a builtin call's head was read, before its arguments: not at all (the flag known set:
/// the builtin is the one fixed), read (the flag known clear), or read when the flag, read
/// then, was clear (`nil` otherwise).
#[derive(Clone, Copy)]
enum Head {
    Fixed,
    Read(Val),
    Either(V, Val),
}

impl<'a, 'j> Gen<'a, 'j> {
    fn new(
        jit: &'j mut Jit,
        m: &'j Machine,
        mut b: FunctionBuilder<'a>,
        l: &Rc<Lambda>,
        nslots: usize,
        todo: &'j mut Vec<Rc<Lambda>>,
    ) -> Self {
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        let fail = b.create_block();
        let exit = b.create_block();
        b.append_block_param(exit, types::I64);
        b.append_block_param(exit, types::I64);
        let head = b.create_block();
        let mut vars = Vec::with_capacity(nslots);
        for _ in 0..nslots {
            let t = b.declare_var(types::I64);
            let w = b.declare_var(types::I64);
            vars.push((t, w));
        }
        b.switch_to_block(entry);
        b.seal_block(entry);
        let params = b.block_params(entry).to_vec();
        let n = l.required.len();
        let zero = b.ins().iconst(types::I64, 0);
        for (i, &(t, w)) in vars.iter().enumerate() {
            if i < n {
                b.def_var(t, params[1 + 2 * i]);
                b.def_var(w, params[2 + 2 * i]);
            } else {
                b.def_var(t, zero);
                b.def_var(w, zero);
            }
        }
        b.ins().jump(head, &[]);
        let last = last_reads::last_reads(l, nslots);
        let stretches = stretches::stretches(&m.globals, l);
        let params_lent = jit.lent[&Rc::as_ptr(l)].clone();
        let mut helpers = HashMap::new();
        for (&name, &id) in &jit.helpers {
            helpers.insert(name, jit.module.declare_func_in_func(id, b.func));
        }
        Gen {
            b,
            jit,
            globals: &m.globals,
            lambda: l.clone(),
            todo,
            scope: FlatScope::new(&l.required),
            vars,
            steps: Vec::new(),
            temps: Vec::new(),
            fail,
            exit,
            head,
            helpers,
            reads: HashMap::new(),
            slot: None,
            nested: false,
            last,
            lent: Vec::new(),
            stretches,
            pristine: Known::Unknown,
            seen: Vec::new(),
            roots: HashMap::new(),
            params_lent,
            loop_head: None,
        }
    }

    fn function(&mut self) {
        self.b.switch_to_block(self.head);
        let body = self.lambda.clone();
        if let Some(v) = self.seq(&body.body.forms, true) {
            let v = self.own(v);
            self.flush();
            self.b.ins().jump(
                self.exit,
                &[BlockArg::Value(v.tag), BlockArg::Value(v.word)],
            );
        }
        self.b.seal_block(self.head);
        // The exit: every local let go, the value returned.
        self.b.switch_to_block(self.exit);
        self.b.seal_block(self.exit);
        let (t, w) = (
            self.b.block_params(self.exit)[0],
            self.b.block_params(self.exit)[1],
        );
        self.drop_locals();
        self.b.ins().return_(&[t, w]);
        self.b.switch_to_block(self.fail);
        self.b.seal_block(self.fail);
        self.drop_locals();
        let e = self.b.ins().iconst(types::I64, ERR as i64);
        let z = self.b.ins().iconst(types::I64, 0);
        self.b.ins().return_(&[e, z]);
    }

    fn drop_locals(&mut self) {
        for i in 0..self.vars.len() {
            if self.is_lent_param(i) {
                continue;
            }
            let (t, w) = self.vars[i];
            let t = self.b.use_var(t);
            let w = self.b.use_var(w);
            self.release(t, w);
        }
    }

    // --- helpers and plumbing ---

    /// Whether variable `i` is a parameter its callers lend ([`lent`]).
    fn is_lent_param(&self, i: usize) -> bool {
        self.params_lent.get(i).copied().unwrap_or(false)
    }

    /// The lent parameter a borrowed value was read from, or from under (a half of its pairs).
    fn lent_root(&self, v: Val) -> Option<usize> {
        if v.owned {
            return None;
        }
        let i = match self.reads.get(&v.tag) {
            Some(&i) => i,
            None => self.roots.get(&v.tag)?.0,
        };
        self.is_lent_param(i).then_some(i)
    }

    fn call_helper(&mut self, name: &str, args: &[V]) -> Vec<V> {
        let f = self.helpers[name];
        let call = self.b.ins().call(f, args);
        self.b.inst_results(call).to_vec()
    }

    /// The machine's address, from the pinned register (set by the entry from Rust).
    fn m(&mut self) -> V {
        self.b.ins().get_pinned_reg(types::I64)
    }

    fn iconst(&mut self, x: i64) -> V {
        self.b.ins().iconst(types::I64, x)
    }

    fn ptr<T>(&mut self, p: *const T) -> V {
        self.iconst(p as usize as i64)
    }

    fn load(&mut self, ty: types::Type, base: V, off: i32) -> V {
        self.b
            .ins()
            .load(ty, MemFlagsData::new().with_notrap(), base, off)
    }

    fn store(&mut self, v: V, base: V, off: i32) {
        self.b
            .ins()
            .store(MemFlagsData::new().with_notrap(), v, base, off);
    }

    /// A fresh block, switched to once its predecessors are all known.
    fn block(&mut self) -> Block {
        self.b.create_block()
    }

    fn enter(&mut self, block: Block) {
        self.b.switch_to_block(block);
        self.b.seal_block(block);
        if self.pristine == Known::Clear {
            // The copy of a stretch made for globals no longer pristine: laid out of the way.
            self.b.set_cold_block(block);
        }
    }

    /// [`Gen::enter`] a path rarely taken (an error, a case through Rust), laid out after the
    /// code of the paths that are.
    fn enter_cold(&mut self, block: Block) {
        self.enter(block);
        self.b.set_cold_block(block);
    }

    /// Goes on at `ok` unless `failed`: then lets go of the values in hand and fails.
    fn check(&mut self, failed: V) {
        let bad = self.block();
        let ok = self.block();
        self.b.ins().brif(failed, bad, &[], ok, &[]);
        self.enter_cold(bad);
        let temps = self.temps.clone();
        for t in temps {
            if t.owned {
                self.release(t.tag, t.word);
            }
        }
        self.b.ins().jump(self.fail, &[]);
        self.enter(ok);
    }

    /// Fails if `tag` is an error's.
    fn check_tag(&mut self, tag: V) {
        let failed = self.b.ins().icmp_imm_s(IntCC::Equal, tag, ERR as i64);
        self.check(failed);
    }

    /// Takes the steps met so far: one addition and comparison, or one by one (out of line)
    /// where the next checkpoint falls among them.
    fn flush(&mut self) {
        self.take_steps();
        self.steps.clear();
    }

    /// Takes the steps met so far, as [`Gen::flush`], but leaves them met, for a path that is
    /// about to call Rust and then join a path that has not taken them: it gives them back
    /// after the call ([`Gen::give_back`]), to be taken again where the paths go on together.
    /// (A path that fails keeps them taken: the error comes after them.) How many.
    fn take_steps(&mut self) -> i64 {
        if self.steps.is_empty() {
            return 0;
        }
        let spans: Box<[Span]> = self.steps.clone().into();
        let n = spans.len() as i64;
        let sp = spans.as_ptr();
        self.jit.spans.push(spans);
        let m = self.m();
        let steps = self.load(types::I64, m, offset_of!(Machine, steps) as i32);
        let next = self.load(types::I64, m, offset_of!(Machine, next_check) as i32);
        let after = self.b.ins().iadd_imm_s(steps, n);
        let over = self.b.ins().icmp(IntCC::UnsignedGreaterThan, after, next);
        let fast = self.block();
        let slow = self.block();
        let done = self.block();
        self.b.ins().brif(over, slow, &[], fast, &[]);
        self.enter(fast);
        self.store(after, m, offset_of!(Machine, steps) as i32);
        self.b.ins().jump(done, &[]);
        self.enter_cold(slow);
        let p = self.ptr(sp);
        let nn = self.iconst(n);
        let r = self.call_helper("nat_steps", &[m, p, nn])[0];
        self.check(r);
        self.b.ins().jump(done, &[]);
        self.enter(done);
        n
    }

    /// Gives back `n` steps taken by [`Gen::take_steps`].
    fn give_back(&mut self, n: i64) {
        if n == 0 {
            return;
        }
        let m = self.m();
        let steps = self.load(types::I64, m, offset_of!(Machine, steps) as i32);
        let less = self.b.ins().iadd_imm_s(steps, -n);
        self.store(less, m, offset_of!(Machine, steps) as i32);
    }

    /// Ends a path of a builtin's call at `merge` with its value, its steps still to take (as on
    /// the other paths).
    fn join(&mut self, merge: &Merge, v: Val) {
        let v = self.own(v);
        self.b.ins().jump(
            merge.block,
            &[BlockArg::Value(v.tag), BlockArg::Value(v.word)],
        );
        merge.reached.set(true);
    }

    /// Whether a tag is of a kind that owns something.
    fn owns(&mut self, tag: V) -> V {
        let one = self.iconst(1);
        let bit = self.b.ins().ishl(one, tag);
        let hit = self.b.ins().band_imm_u(bit, OWNS);
        self.b.ins().icmp_imm_s(IntCC::NotEqual, hit, 0)
    }

    /// A bit per tag among `tags` (`1 << tag`, or-ed).
    fn tag_bits(&mut self, tags: &[V]) -> V {
        let one = self.iconst(1);
        let bits: Vec<V> = tags.iter().map(|&t| self.b.ins().ishl(one, t)).collect();
        bits.into_iter()
            .reduce(|a, b| self.b.ins().bor(a, b))
            .expect("a tag")
    }

    /// Whether values of these tags are all of kinds packed in a cell as their words are
    /// ([`packed_as_held`]).
    fn packed_as_held(&mut self, tags: &[V]) -> V {
        let bits = self.tag_bits(tags);
        let hit = self.b.ins().band_imm_u(bits, PACKED_OTHERWISE);
        self.b.ins().icmp_imm_s(IntCC::Equal, hit, 0)
    }

    /// Takes a count on a value (a pair's in place).
    fn retain(&mut self, tag: V, word: V) {
        let owns = self.owns(tag);
        let some = self.block();
        let pair = self.block();
        let other = self.block();
        let done = self.block();
        self.b.ins().brif(owns, some, &[], done, &[]);
        self.enter(some);
        let is_pair = self.b.ins().icmp_imm_s(IntCC::Equal, tag, PAIR);
        self.b.ins().brif(is_pair, pair, &[], other, &[]);
        self.enter(pair);
        self.count_pair(word, done);
        self.enter(other);
        self.call_helper("nat_clone", &[tag, word]);
        self.b.ins().jump(done, &[]);
        self.enter(done);
    }

    /// Takes a count on the pair at `word` in its cell (unless the count is stuck), then goes to
    /// `done`.
    fn count_pair(&mut self, word: V, done: Block) {
        let meta = self.load(types::I32, word, META_AT);
        let stuck =
            self.b
                .ins()
                .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, meta, META_STUCK as i64);
        let inc = self.block();
        self.b.ins().brif(stuck, done, &[], inc, &[]);
        self.enter(inc);
        let meta2 = self.b.ins().iadd_imm_s(meta, ONE as i64);
        self.store(meta2, word, META_AT);
        self.b.ins().jump(done, &[]);
    }

    /// Lets go of a value (a pair that keeps other references, in place).
    fn release(&mut self, tag: V, word: V) {
        let owns = self.owns(tag);
        let some = self.block();
        let pair = self.block();
        let slow = self.block();
        let dec = self.block();
        let done = self.block();
        self.b.ins().brif(owns, some, &[], done, &[]);
        self.enter(some);
        let is_pair = self.b.ins().icmp_imm_s(IntCC::Equal, tag, PAIR);
        self.b.ins().brif(is_pair, pair, &[], slow, &[]);
        self.enter(pair);
        let meta = self.load(types::I32, word, META_AT);
        // Two references or more and not stuck: one less, in place.
        let shared =
            self.b
                .ins()
                .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, meta, 2 * ONE as i64);
        let stuck =
            self.b
                .ins()
                .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, meta, META_STUCK as i64);
        let not_stuck = self.b.ins().bxor_imm_u(stuck, 1);
        let fast = self.b.ins().band(shared, not_stuck);
        self.b.ins().brif(fast, dec, &[], slow, &[]);
        self.enter(dec);
        let meta2 = self.b.ins().iadd_imm_s(meta, -(ONE as i64));
        self.store(meta2, word, META_AT);
        self.b.ins().jump(done, &[]);
        self.enter_cold(slow);
        self.call_helper("nat_drop", &[tag, word]);
        self.b.ins().jump(done, &[]);
        self.enter(done);
    }

    /// A value the code owns: a borrowed one with a count taken.
    fn own(&mut self, v: Val) -> Val {
        if !v.owned {
            self.retain(v.tag, v.word);
        }
        Val { owned: true, ..v }
    }

    fn let_go(&mut self, v: Val) {
        if v.owned {
            self.release(v.tag, v.word);
        }
    }

    fn atom(&mut self, tag: i64, word: i64) -> Val {
        Val {
            tag: self.iconst(tag),
            word: self.iconst(word),
            owned: true,
        }
    }

    fn boolean(&mut self, b: V) -> Val {
        let word = self.b.ins().uextend(types::I64, b);
        Val {
            tag: self.iconst(BOOL),
            word,
            owned: true,
        }
    }

    /// Whether a value is true (anything but `nil` and `#f`).
    fn truth(&mut self, v: Val) -> V {
        let nil = self.b.ins().icmp_imm_s(IntCC::Equal, v.tag, NIL);
        let is_bool = self.b.ins().icmp_imm_s(IntCC::Equal, v.tag, BOOL);
        let low = self.b.ins().band_imm_u(v.word, 0xff);
        let zero = self.b.ins().icmp_imm_s(IntCC::Equal, low, 0);
        let f = self.b.ins().band(is_bool, zero);
        let falsy = self.b.ins().bor(nil, f);
        self.b.ins().bxor_imm_u(falsy, 1)
    }

    fn site(&mut self, span: Span, fspan: Span, spans: &[Span], sym: Sym, name: Option<Sym>) -> V {
        let scope = Some(
            self.scope
                .frames
                .iter()
                .map(|fr| (fr.names[..fr.filled].to_vec(), fr.offset))
                .collect(),
        );
        let site = Box::new(Site {
            span,
            fspan,
            spans: spans.into(),
            sym,
            scope,
            name,
            nested: self.nested,
            seen: Cell::new(u64::MAX),
        });
        let p: *const Site = &*site;
        self.jit.sites.push(site);
        self.ptr(p)
    }

    /// Writes values into a fresh stack slot (the helper they go to takes them over); its
    /// address.
    fn spill(&mut self, vals: &[Val]) -> V {
        // One slot serves every call: a helper takes the values over as soon as they are written.
        let slot = match self.slot {
            Some((slot, size)) if size >= vals.len() => slot,
            _ => {
                let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                    StackSlotKind::ExplicitSlot,
                    (16 * vals.len().max(1)) as u32,
                    3,
                ));
                self.slot = Some((slot, vals.len().max(1)));
                slot
            }
        };
        for (i, v) in vals.iter().enumerate() {
            self.b
                .ins()
                .stack_store(types::I64, v.tag, slot, (16 * i) as i32);
            self.b
                .ins()
                .stack_store(types::I64, v.word, slot, (16 * i + 8) as i32);
        }
        self.b.ins().stack_addr(types::I64, slot, 0)
    }

    /// The pristine flag, read.
    fn pristine_flag(&mut self) -> V {
        let m = self.m();
        self.load(
            types::I8,
            m,
            (offset_of!(Machine, globals) + Globals::PRISTINE_AT) as i32,
        )
    }

    /// The paths of a call of a builtin named globally: in place while the globals are
    /// pristine, the general way otherwise; the flag read unless a stretch knows it.
    fn fork(&mut self) -> Fork {
        match self.pristine {
            Known::Set => Fork::InPlace,
            Known::Clear => Fork::General,
            Known::Unknown => {
                let flag = self.pristine_flag();
                self.fork_on(flag)
            }
        }
    }

    /// Both paths, forked on `flag` read before.
    fn fork_on(&mut self, flag: V) -> Fork {
        let (in_place, general) = (self.block(), self.block());
        self.b.ins().brif(flag, in_place, &[], general, &[]);
        Fork::Both { in_place, general }
    }

    /// Whether `fork` has a general path; entered if so.
    fn general_path(&mut self, fork: Fork) -> bool {
        match fork {
            Fork::InPlace => false,
            Fork::General => true,
            Fork::Both { general, .. } => {
                self.enter_cold(general);
                true
            }
        }
    }

    /// Whether `fork` has a path in place; entered if so.
    fn in_place_path(&mut self, fork: Fork) -> bool {
        match fork {
            Fork::General => false,
            Fork::InPlace => true,
            Fork::Both { in_place, .. } => {
                self.enter(in_place);
                true
            }
        }
    }

    /// A stretch ([`stretches`]): the flag read once and the code `make` makes made in copies:
    /// with the flag known clear; known set; and, where `n` gives variables to integer
    /// arithmetic, known set with those variables' tags the integers' constant once a test at
    /// the start finds them all integers. The paths meet with the values `make` gives, of
    /// `types`; `owned` is where an owned value's two words are among them (let go if the steps
    /// taken where the paths meet fail). The steps met on the paths are taken there when they
    /// differ, and left to take when they do not.
    fn stretch(
        &mut self,
        n: &Node,
        types: &[types::Type],
        owned: Option<usize>,
        make: &mut dyn FnMut(&mut Self) -> Option<Vec<V>>,
    ) -> Option<Vec<V>> {
        // A stretch that starts the body is where a call of itself in tail position comes back
        // to: with nothing on the way that could clear the flag, the copy for integers is a loop
        // of its own while that call passes integers for its variables.
        let at_head = self.b.current_block() == Some(self.head)
            && self.b.func.layout.first_inst(self.head).is_none()
            && self.steps.is_empty()
            && self.temps.is_empty();
        let flag = self.pristine_flag();
        let (set, clear) = (self.block(), self.block());
        self.b.ins().brif(flag, set, &[], clear, &[]);
        let mut copies = vec![(clear, Known::Clear, false)];
        // With the flag set, a third copy where the variables given to integer arithmetic are
        // integers: their tags are the constant, so every check of them folds away.
        let ints = self.int_operands(n);
        if ints.is_empty() {
            copies.push((set, Known::Set, false));
        } else {
            self.enter(set);
            let mut all = None;
            for &i in &ints {
                let t = self.b.use_var(self.vars[i].0);
                let is = self.b.ins().icmp_imm_s(IntCC::Equal, t, INT);
                all = Some(all.map_or(is, |a| self.b.ins().band(a, is)));
            }
            let (int, plain) = (self.block(), self.block());
            self.b.ins().brif(all.expect("some"), int, &[], plain, &[]);
            copies.push((plain, Known::Set, false));
            copies.push((int, Known::Set, true));
        }
        let steps = self.steps.clone();
        // The copies take the same slots for their `let`s: only one runs.
        let next = self.scope.next;
        let seen = self.seen.len();
        let mut ends = Vec::new();
        for (block, known, int) in copies {
            self.enter(block);
            self.pristine = known;
            self.steps = steps.clone();
            self.scope.next = next;
            self.seen.truncate(seen);
            let mut round = None;
            if int {
                let t = self.iconst(INT);
                for &i in &ints {
                    self.b.def_var(self.vars[i].0, t);
                }
                if at_head {
                    // Sealed once every call of itself in the copy is made. Every way in
                    // brings integers: their tags are the constant here too (the variables
                    // read in the block would otherwise be its parameters, not known).
                    let head = self.block();
                    self.b.ins().jump(head, &[]);
                    self.b.switch_to_block(head);
                    let t = self.iconst(INT);
                    for &i in &ints {
                        self.b.def_var(self.vars[i].0, t);
                    }
                    self.loop_head = Some((head, ints.clone()));
                    round = Some(head);
                }
            }
            let made = make(self);
            if let Some(head) = round {
                self.loop_head = None;
                self.b.seal_block(head);
            }
            if let Some(vals) = made {
                let end = self.block();
                for &t in types {
                    self.b.append_block_param(end, t);
                }
                let args: Vec<BlockArg> = vals.iter().map(|&v| BlockArg::Value(v)).collect();
                self.b.ins().jump(end, &args);
                ends.push((end, std::mem::take(&mut self.steps)));
            }
        }
        self.pristine = Known::Unknown;
        self.seen.truncate(seen);
        let Some(first) = ends.first().map(|(_, s)| s.clone()) else {
            self.steps = steps;
            return None;
        };
        let same = ends.iter().all(|(_, s)| *s == first);
        let merge = self.block();
        for &t in types {
            self.b.append_block_param(merge, t);
        }
        for (end, met) in ends {
            self.enter(end);
            let vals = self.b.block_params(end).to_vec();
            if !same {
                self.steps = met;
                let held = owned.map(|i| Val {
                    tag: vals[i],
                    word: vals[i + 1],
                    owned: true,
                });
                self.temps.extend(held);
                self.flush();
                if held.is_some() {
                    self.temps.pop();
                }
            }
            let args: Vec<BlockArg> = vals.iter().map(|&v| BlockArg::Value(v)).collect();
            self.b.ins().jump(merge, &args);
        }
        self.steps = if same { first } else { Vec::new() };
        self.enter(merge);
        Some(self.b.block_params(merge).to_vec())
    }

    /// The variables in scope that `n` gives to integer arithmetic or comparisons as they are
    /// (not under a `let`, whose names may be others), in order, once each.
    fn int_operands(&self, n: &Node) -> Vec<usize> {
        let mut found = Vec::new();
        self.int_operands_in(n, &mut found);
        found
    }

    fn int_operands_in(&self, n: &Node, found: &mut Vec<usize>) {
        match &n.kind {
            NodeKind::Call { func, args, .. } => {
                let arith = match func.kind {
                    NodeKind::Global(sym) => self
                        .globals
                        .fixed_builtin(sym)
                        .is_some_and(|b| b.op.is_int_arith()),
                    _ => false,
                };
                for a in args {
                    match a.kind {
                        NodeKind::Local(sym, slot) if arith => {
                            if let Some(i) = self.scope.loc(sym, slot) {
                                let i = i as usize;
                                if !found.contains(&i) {
                                    found.push(i);
                                }
                            }
                        }
                        _ => self.int_operands_in(a, found),
                    }
                }
            }
            NodeKind::If { test, then, other } => {
                self.int_operands_in(test, found);
                self.int_operands_in(then, found);
                if let Some(o) = other {
                    self.int_operands_in(o, found);
                }
            }
            NodeKind::Begin(forms) | NodeKind::And(forms) | NodeKind::Or(forms) => {
                for f in forms {
                    self.int_operands_in(f, found);
                }
            }
            NodeKind::Cond(clauses) => {
                for c in clauses {
                    if let Some(t) = &c.test {
                        self.int_operands_in(t, found);
                    }
                    for f in &c.body {
                        self.int_operands_in(f, found);
                    }
                }
            }
            _ => {}
        }
    }

    /// Whether `n` is a stretch to make now.
    fn starts_stretch(&self, n: &Node) -> bool {
        self.pristine == Known::Unknown && self.stretches.contains(&(n as *const Node))
    }

    // --- forms ---

    /// A sequence's value (its last form in the sequence's position); `None` when control left
    /// (a call in tail position).
    fn seq(&mut self, forms: &[Node], tail: bool) -> Option<Val> {
        let Some((last, init)) = forms.split_last() else {
            return Some(self.atom(NIL, 0));
        };
        for f in init {
            let v = self.node(f, false)?;
            self.let_go(v);
        }
        self.node(last, tail)
    }

    fn node(&mut self, n: &Node, tail: bool) -> Option<Val> {
        if self.starts_stretch(n) {
            let vals = self.stretch(n, &[types::I64, types::I64], Some(0), &mut |g| {
                let v = g.node(n, tail)?;
                let v = g.own(v);
                Some(vec![v.tag, v.word])
            })?;
            return Some(Val {
                tag: vals[0],
                word: vals[1],
                owned: true,
            });
        }
        match &n.kind {
            NodeKind::Const(v) => {
                self.steps.push(n.span);
                Some(self.constant(v))
            }
            &NodeKind::Local(sym, slot) => {
                self.steps.push(n.span);
                let i = self
                    .scope
                    .loc(sym, slot)
                    .expect("a flat body's locals resolve") as usize;
                let (t, w) = self.vars[i];
                let mut v = Val {
                    tag: self.b.use_var(t),
                    word: self.b.use_var(w),
                    owned: false,
                };
                if self.last.contains(&(n as *const Node))
                    && !self.lent.contains(&i)
                    && !self.is_lent_param(i)
                {
                    // Its last read: the value is taken over, the variable left with nothing.
                    v.owned = true;
                    let z = self.iconst(0);
                    self.b.def_var(t, z);
                    self.b.def_var(w, z);
                } else {
                    self.reads.insert(v.tag, i);
                }
                Some(v)
            }
            &NodeKind::Global(sym) => {
                self.steps.push(n.span);
                self.flush();
                let site = self.site(n.span, n.span, &[], sym, None);
                let m = self.m();
                let r = self.call_helper("nat_global", &[m, site]);
                self.check_tag(r[0]);
                Some(Val {
                    tag: r[0],
                    word: r[1],
                    owned: true,
                })
            }
            NodeKind::Call {
                func,
                args,
                arg_spans,
            } => self.call(n.span, func, args, arg_spans, tail),
            NodeKind::If { test, then, other } => {
                self.steps.push(n.span);
                let yes = self.test(test)?;
                // The steps met so far are taken on each branch, with the branch's own.
                let met = self.steps.clone();
                let seen = self.seen.len();
                let (a, b) = (self.block(), self.block());
                self.b.ins().brif(yes, a, &[], b, &[]);
                let merge = self.merge();
                self.enter(a);
                let v = self.node(then, tail);
                self.branch_to(&merge, v);
                self.steps = met;
                self.seen.truncate(seen);
                self.enter(b);
                let v = match other {
                    Some(o) => self.node(o, tail),
                    None => Some(self.atom(NIL, 0)),
                };
                self.branch_to(&merge, v);
                self.seen.truncate(seen);
                self.branches_met(&merge)
            }
            NodeKind::Begin(forms) => {
                self.steps.push(n.span);
                self.seq(forms, tail)
            }
            NodeKind::And(forms) | NodeKind::Or(forms) => {
                let or = matches!(n.kind, NodeKind::Or(_));
                self.steps.push(n.span);
                let Some((last, init)) = forms.split_last() else {
                    return Some(self.atom(BOOL, i64::from(!or)));
                };
                let merge = self.merge();
                // Each form is reached through the ones before it; the end, through any.
                let seen = self.seen.len();
                for f in init {
                    let (yes, v) = self.test_value(f)?;
                    let met = self.steps.clone();
                    let (decided, next) = (self.block(), self.block());
                    if or {
                        self.b.ins().brif(yes, decided, &[], next, &[]);
                    } else {
                        self.b.ins().brif(yes, next, &[], decided, &[]);
                    }
                    self.enter(decided);
                    self.branch_to(&merge, Some(v));
                    self.steps = met;
                    self.enter(next);
                    self.let_go(v);
                }
                let v = self.node(last, tail);
                self.branch_to(&merge, v);
                self.seen.truncate(seen);
                self.branches_met(&merge)
            }
            NodeKind::Cond(clauses) => {
                self.steps.push(n.span);
                let merge = self.merge();
                // Each clause is reached through the tests before it, not through their bodies.
                let seen = self.seen.len();
                for c in clauses {
                    let Some(test) = &c.test else {
                        // `else` with no body answers `#t` (its test's value), as the walk.
                        let v = if c.body.is_empty() {
                            Some(self.atom(BOOL, 1))
                        } else {
                            self.seq(&c.body, tail)
                        };
                        self.branch_to(&merge, v);
                        self.seen.truncate(seen);
                        return self.branches_met(&merge);
                    };
                    if c.body.is_empty() {
                        let (yes, t) = self.test_value(test)?;
                        let met = self.steps.clone();
                        let (hit, next) = (self.block(), self.block());
                        self.b.ins().brif(yes, hit, &[], next, &[]);
                        self.enter(hit);
                        self.branch_to(&merge, Some(t));
                        self.steps = met;
                        self.enter(next);
                        self.let_go(t);
                    } else {
                        let yes = self.test(test)?;
                        let met = self.steps.clone();
                        let tested = self.seen.len();
                        let (hit, next) = (self.block(), self.block());
                        self.b.ins().brif(yes, hit, &[], next, &[]);
                        self.enter(hit);
                        let v = self.seq(&c.body, tail);
                        self.branch_to(&merge, v);
                        self.steps = met;
                        self.seen.truncate(tested);
                        self.enter(next);
                    }
                }
                let v = Some(self.atom(NIL, 0));
                self.branch_to(&merge, v);
                self.seen.truncate(seen);
                self.branches_met(&merge)
            }
            NodeKind::Let {
                bindings,
                body,
                sequential,
            } => {
                self.steps.push(n.span);
                self.flat_let(bindings, body, *sequential, tail)
            }
            _ => unreachable!("only supported forms are compiled"),
        }
    }

    /// A block where branches meet with their values.
    fn merge(&mut self) -> Merge {
        let b = self.block();
        self.b.append_block_param(b, types::I64);
        self.b.append_block_param(b, types::I64);
        Merge {
            block: b,
            reached: Cell::new(false),
        }
    }

    /// Ends a branch at `merge` with its value (owned), unless control left already.
    fn branch_to(&mut self, merge: &Merge, v: Option<Val>) {
        if let Some(v) = v {
            let v = self.own(v);
            self.flush();
            self.b.ins().jump(
                merge.block,
                &[BlockArg::Value(v.tag), BlockArg::Value(v.word)],
            );
            merge.reached.set(true);
        }
    }

    /// Where branches ended by [`Gen::branch_to`] meet: each took its steps, so none are left
    /// to take (a branch that left in tail position may have left some in the list, taken).
    fn branches_met(&mut self, merge: &Merge) -> Option<Val> {
        self.steps.clear();
        self.at_merge(merge)
    }

    fn at_merge(&mut self, merge: &Merge) -> Option<Val> {
        if !merge.reached.get() {
            // Every branch left by a call in tail position: the block is never reached.
            self.enter(merge.block);
            let e = self.iconst(ERR as i64);
            let z = self.iconst(0);
            self.b
                .ins()
                .jump(self.exit, &[BlockArg::Value(e), BlockArg::Value(z)]);
            return None;
        }
        self.enter(merge.block);
        let p = self.b.block_params(merge.block);
        Some(Val {
            tag: p[0],
            word: p[1],
            owned: true,
        })
    }

    fn constant(&mut self, v: &Value) -> Val {
        let atom = match *v {
            Value::Nil => Some((NIL, 0)),
            Value::Bool(b) => Some((BOOL, i64::from(b))),
            Value::Int(i) => Some((INT, i)),
            Value::Float(f) => Some((3, f.to_bits() as i64)),
            Value::Symbol(s) => Some((5, i64::from(s.0))),
            Value::Keyword(s) => Some((6, i64::from(s.0))),
            _ => None,
        };
        if let Some((t, w)) = atom {
            return self.atom(t, w);
        }
        let kept = Box::new(v.clone());
        let p: *const Value = &*kept;
        self.jit.consts.push(kept);
        let p = self.ptr(p);
        let r = self.call_helper("nat_const", &[p]);
        Val {
            tag: r[0],
            word: r[1],
            owned: true,
        }
    }

    /// `let` and `let*` (as the closures' `flat_let`): each binding fills its slot, let go again
    /// when the `let` is over.
    fn flat_let(
        &mut self,
        bindings: &[(Sym, Node)],
        body: &Body,
        sequential: bool,
        tail: bool,
    ) -> Option<Val> {
        let names: Vec<Sym> = bindings.iter().map(|(s, _)| *s).collect();
        let len = names.len();
        // Halves seen under the `let`'s variables go with them.
        let seen = self.seen.len();
        let (offset, pending) = self.scope.open_let(names, sequential);
        for (i, (_, init)) in bindings.iter().enumerate() {
            self.scope.let_init(i, sequential);
            let v = self.node(init, false)?;
            let v = self.own(v);
            let (t, w) = self.vars[offset as usize + i];
            self.b.def_var(t, v.tag);
            self.b.def_var(w, v.word);
        }
        self.scope.let_body(pending);
        let v = self.seq(&body.forms, tail);
        self.seen.truncate(seen);
        self.scope.frames.pop();
        let v = v.map(|v| self.own(v));
        // The slots are let go when the `let` is over (a call in tail position lets them go
        // with the rest).
        if v.is_some() {
            for i in 0..len {
                let (t, w) = self.vars[offset as usize + i];
                let (tv, wv) = (self.b.use_var(t), self.b.use_var(w));
                self.release(tv, wv);
                let z = self.iconst(0);
                self.b.def_var(t, z);
                self.b.def_var(w, z);
            }
        }
        v
    }

    /// Evaluates arguments in order, each kept in hand (let go on an error) until the call.
    fn args(&mut self, args: &[Node], owned: bool) -> Option<Vec<Val>> {
        self.args_owning(args, |_| owned, false)
    }

    /// [`Gen::args`], the `i`th counted at once when `owned(i)` (it is to be owned anyway: a
    /// value counted at once lends nothing to the call, and a later argument may take the
    /// variable it came from over with its last read); but a variable read where it lies, when
    /// `moves` (a call of itself moves it, see `jump_to_self`).
    fn args_owning(
        &mut self,
        args: &[Node],
        owned: impl Fn(usize) -> bool,
        moves: bool,
    ) -> Option<Vec<Val>> {
        let base = self.temps.len();
        let lent = self.lent.len();
        let mut vals = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let v = match self.node(a, false) {
                Some(v) => v,
                None => {
                    self.temps.truncate(base);
                    self.lent.truncate(lent);
                    return None;
                }
            };
            let moved = moves && !v.owned && self.reads.contains_key(&v.tag);
            let v = if owned(i) && !moved { self.own(v) } else { v };
            if !v.owned {
                if let Some(&i) = self.reads.get(&v.tag) {
                    self.lent.push(i);
                } else if let Some((i, _)) = self.roots.get(&v.tag) {
                    // A half borrowed from under a variable: the variable is lent too.
                    self.lent.push(*i);
                }
            }
            self.temps.push(v);
            vals.push(v);
        }
        self.temps.truncate(base);
        self.lent.truncate(lent);
        Some(vals)
    }

    fn call(
        &mut self,
        span: Span,
        func: &Node,
        args: &[Node],
        spans: &[Span],
        tail: bool,
    ) -> Option<Val> {
        self.steps.push(span);
        let NodeKind::Global(sym) = func.kind else {
            // Any other head: evaluated (its steps), then the arguments, then applied.
            let f = self.node(func, false)?;
            let f = self.own(f);
            self.temps.push(f);
            let vals = self.args(args, true);
            self.temps.pop();
            let vals = vals?;
            let site = self.site(span, func.span, spans, Sym(0), None);
            return self.apply(f, &vals, site, tail);
        };
        self.steps.push(func.span);
        if let Some(b) = self
            .globals
            .fixed_builtin(sym)
            .filter(|_| args.len() <= INLINE_ARGS)
        {
            return self.builtin_call(b, sym, span, func.span, args, spans, tail);
        }
        // A procedure the name holds now, if it can be called directly.
        let direct = match self.globals.get(sym) {
            Some(Value::Closure(c))
                if eligible(self.globals, c)
                    && c.env.is_empty()
                    && !self.jit.nested.contains(&Rc::as_ptr(&c.lambda))
                    && c.lambda.required.len() == args.len() =>
            {
                Some(c.clone())
            }
            _ => None,
        };
        let name = direct.as_ref().and_then(|c| c.name());
        let site = self.site(span, func.span, spans, sym, name);
        let q = match &direct {
            Some(c) => self.ptr(Rc::as_ptr(c)),
            None => self.iconst(0),
        };
        let f = match &direct {
            Some(_) => self.head_of(site, q),
            None => {
                self.flush();
                let m = self.m();
                let head = self.call_helper("nat_head", &[m, site, q]);
                self.check_tag(head[0]);
                Val {
                    tag: head[0],
                    word: head[1],
                    owned: true,
                }
            }
        };
        // A call of itself in tail position takes its arguments as they come: a variable
        // passed on is moved, not counted (see `jump_to_self`); other paths count them.
        let to_self = tail
            && direct
                .as_ref()
                .is_some_and(|c| Rc::ptr_eq(&c.lambda, &self.lambda));
        self.temps.push(f);
        // A procedure called directly takes its arguments as they come: a variable passed on is
        // moved or lent, not counted (see `jump_to_self`, `direct`); other paths count them.
        let keeps: Option<Rc<[bool]>> = match &direct {
            Some(_) if to_self => Some(self.params_lent.clone()),
            Some(c) => Some(self.declare(c).2),
            None => None,
        };
        let vals = self.args_owning(args, |i| keeps.as_ref().is_none_or(|l| !l[i]), to_self);
        self.temps.pop();
        let vals = vals?;
        self.flush();
        let Some(c) = direct else {
            return self.apply(f, &vals, site, tail);
        };
        // The name still holds the procedure: called directly; else the general way (the
        // arguments of a call of itself counted there, where they are not moved).
        let same = self.b.ins().icmp_imm_s(IntCC::Equal, f.tag, SAME);
        let (yes, no) = (self.block(), self.block());
        self.b.ins().brif(same, yes, &[], no, &[]);
        let merge = self.merge();
        self.enter_cold(no);
        let counted: Vec<Val> = vals.iter().map(|&v| self.own(v)).collect();
        let v = self.apply(f, &counted, site, tail);
        self.branch_to(&merge, v);
        self.enter(yes);
        let v = if to_self && self.lends_to_self(&vals) {
            self.jump_to_self(&vals);
            None
        } else if tail && self.calls_in_tail(&c) {
            self.direct_tail(&c, &vals);
            None
        } else if tail {
            // A call in tail position of another procedure goes back to the caller's loop (and
            // so does one of itself that would not lend its parameters views of them).
            let counted: Vec<Val> = vals.iter().map(|&v| self.own(v)).collect();
            let fv = self.call_helper("nat_closure", &[q]);
            let fv = Val {
                tag: fv[0],
                word: fv[1],
                owned: true,
            };
            self.apply(fv, &counted, site, true)
        } else {
            Some(self.direct(&c, &vals, site))
        };
        self.branch_to(&merge, v);
        self.jit.kept.push(c);
        self.branches_met(&merge)
    }

    /// What a call's head names, for a call made directly to the procedure at `q` while the name
    /// holds it: [`SAME`] when the globals' version says it still does, and only otherwise its
    /// value read through Rust (`SAME` again, another value, or the error of an unbound name).
    fn head_of(&mut self, site: V, q: V) -> Val {
        let m = self.m();
        let merge = self.merge();
        let slow = self.block();
        // The name held `c` when the globals were last at the number this site saw (a number
        // changes at every assignment of a global): then it still does.
        let version = self.load(
            types::I64,
            m,
            (offset_of!(Machine, globals) + Globals::VERSION_AT) as i32,
        );
        let seen = self.load(types::I64, site, offset_of!(Site, seen) as i32);
        let same = self.b.ins().icmp(IntCC::Equal, version, seen);
        let hit = self.block();
        self.b.ins().brif(same, hit, &[], slow, &[]);
        self.enter(hit);
        let s = self.iconst(SAME);
        let z = self.iconst(0);
        self.b
            .ins()
            .jump(merge.block, &[BlockArg::Value(s), BlockArg::Value(z)]);
        merge.reached.set(true);
        self.enter_cold(slow);
        // Only this path reads the name through Rust (which may find it unbound): the steps are
        // taken before, and given back to be taken with the arguments'.
        let kept = self.take_steps();
        let head = self.call_helper("nat_head", &[m, site, q]);
        self.check_tag(head[0]);
        self.give_back(kept);
        self.b.ins().jump(
            merge.block,
            &[BlockArg::Value(head[0]), BlockArg::Value(head[1])],
        );
        merge.reached.set(true);
        self.at_merge(&merge).expect("reached")
    }

    /// A call of itself in tail position: the locals let go, the parameters bound to the
    /// arguments, and round again.
    /// An argument that is a variable read where it lies takes over that variable's count
    /// (the variable is let go here anyway), once; any other is counted.
    fn jump_to_self(&mut self, vals: &[Val]) {
        let mut moved = vec![false; self.vars.len()];
        let mut taken = Vec::with_capacity(vals.len());
        for (i, &v) in vals.iter().enumerate() {
            if self.is_lent_param(i) {
                // A view of a lent parameter (see `lends_to_self`): still borrowed.
                taken.push(v);
                continue;
            }
            let from = (!v.owned)
                .then(|| self.reads.get(&v.tag).copied())
                .flatten()
                .filter(|&j| {
                    let (t, w) = self.vars[j];
                    !self.is_lent_param(j)
                        && !moved[j]
                        && self.b.use_var(t) == v.tag
                        && self.b.use_var(w) == v.word
                });
            match from {
                Some(j) => {
                    moved[j] = true;
                    taken.push(Val { owned: true, ..v });
                }
                None => taken.push(self.own(v)),
            }
        }
        for (i, &gone) in moved.iter().enumerate() {
            if !gone && !self.is_lent_param(i) {
                let (t, w) = self.vars[i];
                let (tv, wv) = (self.b.use_var(t), self.b.use_var(w));
                self.release(tv, wv);
            }
        }
        let vals = taken;
        let z = self.iconst(0);
        for i in 0..self.vars.len() {
            let (t, w) = self.vars[i];
            match vals.get(i) {
                Some(v) => {
                    self.b.def_var(t, v.tag);
                    self.b.def_var(w, v.word);
                }
                None => {
                    self.b.def_var(t, z);
                    self.b.def_var(w, z);
                }
            }
        }
        let again = match &self.loop_head {
            Some((block, ints))
                if ints
                    .iter()
                    .all(|&i| vals.get(i).is_some_and(|v| self.is_int(v.tag))) =>
            {
                *block
            }
            _ => self.head,
        };
        self.b.ins().jump(again, &[]);
    }

    /// Whether a call in tail position of `c` is made directly ([`tails`]): this procedure is
    /// not a leaf, and `c` is one.
    fn calls_in_tail(&mut self, c: &Rc<Closure>) -> bool {
        self.declare(c);
        !self.jit.leaf[&Rc::as_ptr(&self.lambda)] && self.jit.leaf[&Rc::as_ptr(&c.lambda)]
    }

    /// A call in tail position of a leaf made directly (see [`tails`]): as [`Gen::direct`], but
    /// the depth is not counted (a call in tail position takes none), and what the callee
    /// answers, a value, an error or a call in tail position, is this procedure's. What this
    /// procedure holds and does not lend to the call is let go before it, as the general way
    /// lets go of it before the callee runs; the rest once it returns.
    fn direct_tail(&mut self, c: &Rc<Closure>, vals: &[Val]) {
        let (fid, _, lent) = self.declare(c);
        let vals = self.handed(vals, &lent);
        // The variables a borrowed argument may come from, or from under: kept. One whose
        // source is not found keeps them all (keeping a variable longer is always safe).
        let mut lending = vec![false; self.vars.len()];
        let mut found = true;
        for v in vals.iter().filter(|v| !v.owned) {
            let mut any = false;
            for i in self
                .reads
                .get(&v.tag)
                .into_iter()
                .copied()
                .chain(self.roots.get(&v.tag).map(|r| r.0))
            {
                lending[i] = true;
                any = true;
            }
            for (i, &(t, w)) in self.vars.iter().enumerate() {
                if self.b.use_var(t) == v.tag && self.b.use_var(w) == v.word {
                    lending[i] = true;
                    any = true;
                }
            }
            found &= any;
        }
        let z = self.iconst(0);
        for (i, &keep) in lending.iter().enumerate() {
            if !found || keep || self.is_lent_param(i) {
                continue;
            }
            let (t, w) = self.vars[i];
            let (tv, wv) = (self.b.use_var(t), self.b.use_var(w));
            self.release(tv, wv);
            self.b.def_var(t, z);
            self.b.def_var(w, z);
        }
        let r = self.call_compiled(fid, &vals, &lent);
        self.b
            .ins()
            .jump(self.exit, &[BlockArg::Value(r[0]), BlockArg::Value(r[1])]);
    }

    /// A callee's arguments as it takes them: counted where it owns them, as they are where it
    /// borrows them ([`lent`]).
    fn handed(&mut self, vals: &[Val], lent: &[bool]) -> Vec<Val> {
        vals.iter()
            .enumerate()
            .map(|(i, &v)| if lent[i] { v } else { self.own(v) })
            .collect()
    }

    /// Calls the compiled function `fid` on `vals` (as [`Gen::handed`] made them), and lets go,
    /// once it returns, of what of the lent ones this code owns; its answer's two words.
    fn call_compiled(&mut self, fid: FuncId, vals: &[Val], lent: &[bool]) -> Vec<V> {
        let m = self.m();
        let callee = self.jit.module.declare_func_in_func(fid, self.b.func);
        let mut argv = vec![m];
        for v in vals {
            argv.push(v.tag);
            argv.push(v.word);
        }
        let call = self.b.ins().call(callee, &argv);
        let r = self.b.inst_results(call).to_vec();
        for (i, &v) in vals.iter().enumerate() {
            if lent[i] {
                self.let_go(v);
            }
        }
        r
    }

    /// A procedure called directly, declared to be made in this batch if it is not yet: its
    /// function, its entry and its parameters lent.
    fn declare(&mut self, c: &Rc<Closure>) -> (FuncId, FuncId, Rc<[bool]>) {
        let (f, e) = self.jit.declare(self.globals, &c.lambda, self.todo, false);
        (f, e, self.jit.lent[&Rc::as_ptr(&c.lambda)].clone())
    }

    /// Whether a call of itself may jump with these arguments: each one for a lent parameter
    /// is a view of a lent parameter (alive until the call returns); any other call goes the
    /// general way.
    fn lends_to_self(&self, vals: &[Val]) -> bool {
        vals.iter()
            .enumerate()
            .all(|(i, &v)| !self.is_lent_param(i) || self.lent_root(v).is_some())
    }

    /// A call of anything the general way (as the closures' `call_global` and `general`):
    /// `f` and the arguments handed over.
    fn apply(&mut self, f: Val, vals: &[Val], site: V, tail: bool) -> Option<Val> {
        self.flush();
        self.apply_keeping(f, vals, site, tail, 0)
    }

    /// [`Gen::apply`] after `kept` steps were taken and are to be given back once it returns.
    fn apply_keeping(
        &mut self,
        f: Val,
        vals: &[Val],
        site: V,
        tail: bool,
        kept: i64,
    ) -> Option<Val> {
        let args = self.spill(vals);
        let n = self.iconst(vals.len() as i64);
        let t = self.iconst(i64::from(tail));
        let m = self.m();
        let r = self.call_helper("nat_apply", &[m, f.tag, f.word, args, n, site, t]);
        let v = Val {
            tag: r[0],
            word: r[1],
            owned: true,
        };
        if tail {
            // A value, an error or a call for the caller's loop: returned as it is.
            self.b.ins().jump(
                self.exit,
                &[BlockArg::Value(v.tag), BlockArg::Value(v.word)],
            );
            return None;
        }
        self.check_tag(v.tag);
        self.give_back(kept);
        Some(v)
    }

    /// A non-tail call of a compiled procedure (as [`Machine::call_flat`]): its depth counted,
    /// the stack pointer looked at (through Rust, which grows the stack, below the floor; see
    /// [`floor`]), a call it leaves in tail position run, and its error given the call site.
    fn direct(&mut self, c: &Rc<Closure>, vals: &[Val], site: V) -> Val {
        // What the callee owns is handed over counted; what it borrows ([`lent`]) is passed as
        // it is, and what of that this code owns is let go once the call returns. Through Rust,
        // everything is handed over (the entry lets go of what it lent).
        let (fid, eid, lent) = self.declare(c);
        let vals = &self.handed(vals, &lent)[..];
        let m = self.m();
        let depth_at = offset_of!(Machine, depth) as i32;
        let limit_at = (offset_of!(Machine, budget) + offset_of!(Limits, depth)) as i32;
        let depth = self.load(types::I64, m, depth_at);
        let depth1 = self.b.ins().iadd_imm_s(depth, 1);
        // Below the floor the Rust entry set, through Rust, which grows the stack.
        let sp = self.b.ins().get_stack_pointer(types::I64);
        let floor = self.load(types::I64, m, offset_of!(Machine, native_floor) as i32);
        let low = self.b.ins().icmp(IntCC::UnsignedLessThan, sp, floor);
        let join = self.merge();
        let (checked, fast) = (self.block(), self.block());
        self.b.ins().brif(low, checked, &[], fast, &[]);
        self.enter_cold(checked);
        let handed: Vec<Val> = vals.iter().map(|&v| self.own(v)).collect();
        let m = self.m();
        let args = self.spill(&handed);
        let entry = self.jit.module.declare_func_in_func(eid, self.b.func);
        let ep = self.b.ins().func_addr(types::I64, entry);
        let r = self.call_helper("nat_call_checked", &[m, ep, args, site]);
        self.b
            .ins()
            .jump(join.block, &[BlockArg::Value(r[0]), BlockArg::Value(r[1])]);
        self.enter(fast);
        let m = self.m();
        let limit = self.load(types::I64, m, limit_at);
        let over = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, depth, limit);
        let (runaway, go) = (self.block(), self.block());
        self.b.ins().brif(over, runaway, &[], go, &[]);
        self.enter_cold(runaway);
        let handed: Vec<Val> = vals.iter().map(|&v| self.own(v)).collect();
        let m = self.m();
        let args = self.spill(&handed);
        let n = self.iconst(vals.len() as i64);
        let r = self.call_helper("nat_runaway", &[m, args, n, site]);
        self.b
            .ins()
            .jump(join.block, &[BlockArg::Value(r[0]), BlockArg::Value(r[1])]);
        self.enter(go);
        let m = self.m();
        self.store(depth1, m, depth_at);
        let r = self.call_compiled(fid, vals, &lent);
        let signal = self
            .b
            .ins()
            .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, r[0], ERR as i64);
        let (sig, ok) = (self.block(), self.block());
        self.b.ins().brif(signal, sig, &[], ok, &[]);
        self.enter(ok);
        let m = self.m();
        self.store(depth, m, depth_at);
        self.b
            .ins()
            .jump(join.block, &[BlockArg::Value(r[0]), BlockArg::Value(r[1])]);
        self.enter_cold(sig);
        let m = self.m();
        let r2 = self.call_helper("nat_after", &[m, r[0], r[1], site]);
        self.b.ins().jump(
            join.block,
            &[BlockArg::Value(r2[0]), BlockArg::Value(r2[1])],
        );
        self.enter(join.block);
        let p = self.b.block_params(join.block).to_vec();
        self.check_tag(p[0]);
        Val {
            tag: p[0],
            word: p[1],
            owned: true,
        }
    }

    /// A call of a builtin the name is fixed to (see [`Globals::fixed_builtin`]): made in place
    /// while the globals are still pristine, the general way once they are not.
    #[allow(clippy::too_many_arguments)]
    fn builtin_call(
        &mut self,
        b: &'static BuiltinDef,
        sym: Sym,
        span: Span,
        fspan: Span,
        args: &[Node],
        spans: &[Span],
        tail: bool,
    ) -> Option<Val> {
        if self.pristine == Known::Set {
            // The flag known set: the builtin in place, its value as it comes (a half borrowed
            // from under a variable stays borrowed, see `borrowed_halves`).
            let site = self.site(span, fspan, spans, sym, None);
            let vals = self.args(args, matches!(b.op, Op::Cons))?;
            return Some(self.inline(b, &vals, site));
        }
        if args.iter().all(is_leaf) {
            let merge = self.merge();
            let mut inline = |g: &mut Self, vals: &[Val], site: V| {
                let v = g.inline(b, vals, site);
                g.join(&merge, v);
            };
            let general = |g: &mut Self, v: Option<Val>| {
                if let Some(v) = v {
                    g.join(&merge, v);
                }
            };
            self.leaf_builtin(
                b,
                sym,
                (span, fspan),
                args,
                spans,
                tail,
                &mut inline,
                general,
            );
            return self.at_merge(&merge);
        }
        let (head, site, vals) = self.builtin_args(b, sym, span, fspan, args, spans)?;
        let merge = self.merge();
        let (fork, f) = self.fork_at(head);
        if self.general_path(fork) {
            let owned: Vec<Val> = vals.iter().map(|&v| self.own(v)).collect();
            let kept = self.take_steps();
            if let Some(v) = self.apply_keeping(f.expect("read"), &owned, site, tail, kept) {
                self.join(&merge, v);
            }
        }
        if self.in_place_path(fork) {
            let seen = self.seen.len();
            let v = self.inline(b, &vals, site);
            self.join(&merge, v);
            // Halves read on this path only are not read where the paths meet.
            self.seen.truncate(seen);
        }
        self.at_merge(&merge)
    }

    /// The paths a builtin's call takes after its arguments, as its head was read (see
    /// [`Gen::builtin_args`]), and the head's value where it was.
    fn fork_at(&mut self, head: Head) -> (Fork, Option<Val>) {
        match head {
            Head::Fixed => (Fork::InPlace, None),
            Head::Read(f) => (Fork::General, Some(f)),
            Head::Either(flag, f) => (self.fork_on(flag), Some(f)),
        }
    }

    /// A builtin call's steps, its head read where the walk reads it when the globals are no
    /// longer pristine (a name once bound stays bound, so the read cannot fail), and its
    /// arguments: how the head was read (see [`Head`]), the call's site and the arguments
    /// (borrowed where they can be, but for `cons`).
    fn builtin_args(
        &mut self,
        b: &'static BuiltinDef,
        sym: Sym,
        span: Span,
        fspan: Span,
        args: &[Node],
        spans: &[Span],
    ) -> Option<(Head, V, Vec<Val>)> {
        let site = self.site(span, fspan, spans, sym, None);
        let head = match self.pristine {
            Known::Set => Head::Fixed,
            Known::Clear => {
                let m = self.m();
                let z = self.iconst(0);
                let r = self.call_helper("nat_head", &[m, site, z]);
                Head::Read(Val {
                    tag: r[0],
                    word: r[1],
                    owned: true,
                })
            }
            Known::Unknown => {
                let pristine = self.pristine_flag();
                let m = self.m();
                let head = self.merge();
                let z = self.iconst(0);
                let (read, skip) = (self.block(), self.block());
                self.b.ins().brif(pristine, skip, &[], read, &[]);
                self.enter(skip);
                self.b
                    .ins()
                    .jump(head.block, &[BlockArg::Value(z), BlockArg::Value(z)]);
                self.enter_cold(read);
                let r = self.call_helper("nat_head", &[m, site, z]);
                self.b
                    .ins()
                    .jump(head.block, &[BlockArg::Value(r[0]), BlockArg::Value(r[1])]);
                self.enter(head.block);
                let hp = self.b.block_params(head.block).to_vec();
                Head::Either(
                    pristine,
                    Val {
                        tag: hp[0],
                        word: hp[1],
                        owned: true,
                    },
                )
            }
        };
        let f = match head {
            Head::Fixed => None,
            Head::Read(f) | Head::Either(_, f) => Some(f),
        };
        self.temps.extend(f);
        let vals = self.args(args, matches!(b.op, Op::Cons));
        if f.is_some() {
            self.temps.pop();
        }
        let vals = vals?;
        Some((head, site, vals))
    }

    /// Whether a test of `if` or `cond` holds (its value made and let go, as the walk does).
    /// A predicate or a comparison of a builtin the name is fixed to answers without a value
    /// made, while the globals are pristine.
    fn test(&mut self, n: &Node) -> Option<V> {
        self.test_keeping(n, false).map(|(yes, _)| yes)
    }

    /// Whether a form's value is true, and the value (owned): a form of `and` or `or` that is
    /// not the last, whose value is the whole form's when it decides. A builtin test answers
    /// as in [`Gen::test`], its value `#t` or `#f` where it is made in place.
    fn test_value(&mut self, n: &Node) -> Option<(V, Val)> {
        self.test_keeping(n, true)
            .map(|(yes, v)| (yes, v.expect("kept")))
    }

    /// The builtin a form calls when it is a test made in place: a predicate or a comparison of
    /// a builtin the name is fixed to, with its number of arguments.
    fn builtin_test_of(&self, n: &Node) -> Option<&'static BuiltinDef> {
        let NodeKind::Call { func, args, .. } = &n.kind else {
            return None;
        };
        let NodeKind::Global(sym) = func.kind else {
            return None;
        };
        self.globals.fixed_builtin(sym).filter(|b| {
            matches!(
                (b.op, args.len()),
                (Op::NullP | Op::PairP | Op::Not, 1)
                    | (Op::NumEq | Op::Lt | Op::Gt | Op::Le | Op::Ge | Op::EqP, 2)
            )
        })
    }

    fn test_keeping(&mut self, n: &Node, keep: bool) -> Option<(V, Option<Val>)> {
        if self.starts_stretch(n) {
            let types: &[types::Type] = if keep {
                &[types::I8, types::I64, types::I64]
            } else {
                &[types::I8]
            };
            let vals = self.stretch(n, types, keep.then_some(1), &mut |g| {
                let (yes, v) = g.test_keeping(n, keep)?;
                let mut vals = vec![yes];
                if let Some(v) = v {
                    vals.extend([v.tag, v.word]);
                }
                Some(vals)
            })?;
            let value = keep.then(|| Val {
                tag: vals[1],
                word: vals[2],
                owned: true,
            });
            return Some((vals[0], value));
        }
        if let (
            Some(b),
            NodeKind::Call {
                func,
                args,
                arg_spans,
            },
        ) = (self.builtin_test_of(n), &n.kind)
        {
            if let NodeKind::Global(sym) = func.kind {
                self.steps.push(n.span);
                self.steps.push(func.span);
                // `not` of a test: while the globals are pristine, the test's answer inverted
                // (no boolean made in between).
                if let (Op::Not, [arg]) = (b.op, args.as_slice()) {
                    if !is_leaf(arg) && self.builtin_test_of(arg).is_some() && slots_node(arg) == 0
                    {
                        return self.not_test(sym, (n.span, func.span), arg, arg_spans, keep);
                    }
                }
                return self.builtin_test(b, sym, n.span, func.span, args, arg_spans, keep);
            }
        }
        let t = self.node(n, false)?;
        if keep {
            let t = self.own(t);
            let yes = self.truth(t);
            return Some((yes, Some(t)));
        }
        if !t.owned {
            return Some((self.truth(t), None));
        }
        // A boolean, the common answer of a procedure called as a test, owns nothing: told
        // apart first, it is tested without a look at what the value owns.
        let (boolean, other, done) = (self.block(), self.block(), self.block());
        self.b.append_block_param(done, types::I8);
        let is_bool = self.b.ins().icmp_imm_s(IntCC::Equal, t.tag, BOOL);
        self.b.ins().brif(is_bool, boolean, &[], other, &[]);
        self.enter(boolean);
        let low = self.b.ins().band_imm_u(t.word, 0xff);
        let yes = self.b.ins().icmp_imm_s(IntCC::NotEqual, low, 0);
        self.b.ins().jump(done, &[BlockArg::Value(yes)]);
        self.enter(other);
        let yes = self.b.ins().icmp_imm_s(IntCC::NotEqual, t.tag, NIL);
        self.let_go(t);
        self.b.ins().jump(done, &[BlockArg::Value(yes)]);
        self.enter(done);
        Some((self.b.block_params(done)[0], None))
    }

    /// A builtin test (see [`Gen::test`]): whether it holds and, when `keep`, its value too
    /// (owned): `#t` or `#f` where it is made in place, the value the name's procedure answered
    /// otherwise.
    #[allow(clippy::too_many_arguments)]
    fn builtin_test(
        &mut self,
        b: &'static BuiltinDef,
        sym: Sym,
        span: Span,
        fspan: Span,
        args: &[Node],
        spans: &[Span],
        keep: bool,
    ) -> Option<(V, Option<Val>)> {
        let merge = self.block();
        self.b.append_block_param(merge, types::I8);
        if keep {
            self.b.append_block_param(merge, types::I64);
            self.b.append_block_param(merge, types::I64);
        }
        // A path's end: whether the test holds, and its value when kept.
        let made = |g: &mut Self, yes: V| {
            if keep {
                let t = g.iconst(BOOL);
                let w = g.b.ins().uextend(types::I64, yes);
                g.b.ins().jump(
                    merge,
                    &[BlockArg::Value(yes), BlockArg::Value(t), BlockArg::Value(w)],
                );
            } else {
                g.b.ins().jump(merge, &[BlockArg::Value(yes)]);
            }
        };
        let answered = |g: &mut Self, v: Val| {
            let yes = g.truth(v);
            if keep {
                g.b.ins().jump(
                    merge,
                    &[
                        BlockArg::Value(yes),
                        BlockArg::Value(v.tag),
                        BlockArg::Value(v.word),
                    ],
                );
            } else {
                g.let_go(v);
                g.b.ins().jump(merge, &[BlockArg::Value(yes)]);
            }
        };
        if args.iter().all(is_leaf) {
            let mut inline = |g: &mut Self, vals: &[Val], site: V| {
                let yes = g.inline_test(b, vals, site);
                made(g, yes);
            };
            let general = |g: &mut Self, v: Option<Val>| {
                answered(g, v.expect("not in tail position"));
            };
            self.leaf_builtin(
                b,
                sym,
                (span, fspan),
                args,
                spans,
                false,
                &mut inline,
                general,
            );
        } else {
            let (head, site, vals) = self.builtin_args(b, sym, span, fspan, args, spans)?;
            let (fork, f) = self.fork_at(head);
            if self.general_path(fork) {
                let owned: Vec<Val> = vals.iter().map(|&v| self.own(v)).collect();
                let kept = self.take_steps();
                let v = self
                    .apply_keeping(f.expect("read"), &owned, site, false, kept)
                    .expect("not in tail position");
                answered(self, v);
            }
            if self.in_place_path(fork) {
                let yes = self.inline_test(b, &vals, site);
                made(self, yes);
            }
        }
        self.enter(merge);
        let p = self.b.block_params(merge).to_vec();
        let value = keep.then(|| Val {
            tag: p[1],
            word: p[2],
            owned: true,
        });
        Some((p[0], value))
    }

    /// `(not test)` as a test (see [`Gen::test_keeping`]), `test` a builtin test itself whose
    /// `let`s bind nothing (its code is made twice, once on each path, and a binding's slots are
    /// taken where its code is made). While the globals are
    /// pristine, `test` is made as a test and its answer inverted; otherwise the general way:
    /// the name's value read, `test`'s value made and the two applied.
    fn not_test(
        &mut self,
        sym: Sym,
        (span, fspan): (Span, Span),
        arg: &Node,
        spans: &[Span],
        keep: bool,
    ) -> Option<(V, Option<Val>)> {
        let site = self.site(span, fspan, spans, sym, None);
        let merge = self.block();
        self.b.append_block_param(merge, types::I8);
        if keep {
            self.b.append_block_param(merge, types::I64);
            self.b.append_block_param(merge, types::I64);
        }
        let fork = self.fork();
        let before = self.steps.clone();
        // `arg` is made on each path: what one reads, the other has not.
        let seen = self.seen.len();
        if self.general_path(fork) {
            let m = self.m();
            let z = self.iconst(0);
            let head = self.call_helper("nat_head", &[m, site, z]);
            let f = Val {
                tag: head[0],
                word: head[1],
                owned: true,
            };
            self.temps.push(f);
            let v = self.node(arg, false);
            self.temps.pop();
            let v = v?;
            let v = self.own(v);
            let kept = self.take_steps();
            let r = self
                .apply_keeping(f, &[v], site, false, kept)
                .expect("not in tail position");
            let yes = self.truth(r);
            if keep {
                self.b.ins().jump(
                    merge,
                    &[
                        BlockArg::Value(yes),
                        BlockArg::Value(r.tag),
                        BlockArg::Value(r.word),
                    ],
                );
            } else {
                self.let_go(r);
                self.b.ins().jump(merge, &[BlockArg::Value(yes)]);
            }
            // The path in place starts where this one did (this one's steps, given back after
            // the call, are the same spans).
            if matches!(fork, Fork::Both { .. }) {
                self.steps = before;
            }
            self.seen.truncate(seen);
        }
        if self.in_place_path(fork) {
            let yes = self.test(arg)?;
            if matches!(fork, Fork::Both { .. }) {
                self.seen.truncate(seen);
            }
            let no = self.b.ins().bxor_imm_u(yes, 1);
            if keep {
                let t = self.iconst(BOOL);
                let w = self.b.ins().uextend(types::I64, no);
                self.b.ins().jump(
                    merge,
                    &[BlockArg::Value(no), BlockArg::Value(t), BlockArg::Value(w)],
                );
            } else {
                self.b.ins().jump(merge, &[BlockArg::Value(no)]);
            }
        }
        self.enter(merge);
        let p = self.b.block_params(merge).to_vec();
        let value = keep.then(|| Val {
            tag: p[1],
            word: p[2],
            owned: true,
        });
        Some((p[0], value))
    }

    /// A predicate or a comparison made in place, as whether it holds (see [`Gen::test`]).
    fn inline_test(&mut self, b: &'static BuiltinDef, vals: &[Val], site: V) -> V {
        match (b.op, vals) {
            (Op::NullP, [x]) => {
                let r = self.b.ins().icmp_imm_s(IntCC::Equal, x.tag, NIL);
                self.let_go(*x);
                r
            }
            (Op::PairP, [x]) => {
                let r = self.b.ins().icmp_imm_s(IntCC::Equal, x.tag, PAIR);
                self.let_go(*x);
                r
            }
            (Op::Not, [x]) => {
                let t = self.truth(*x);
                self.let_go(*x);
                self.b.ins().bxor_imm_u(t, 1)
            }
            (Op::EqP, [x, y]) => self.eq_test(b, *x, *y, site),
            (_, [x, y]) => self.int_test(b, *x, *y, site),
            _ => unreachable!("a predicate of one argument or a comparison of two"),
        }
    }

    /// A builtin call whose arguments are all variables or constants, made one of two ways
    /// chosen once: while the globals are pristine, the fixed builtin made in place
    /// (`inline`); otherwise the name's value read where the walk reads it, the arguments
    /// evaluated again (they cost nothing and take the same steps) and the value called the
    /// general way (`general`, which gets the value, or nothing if the call left in tail
    /// position). Both paths end with the same steps still to take.
    #[allow(clippy::too_many_arguments)]
    fn leaf_builtin(
        &mut self,
        b: &'static BuiltinDef,
        sym: Sym,
        (span, fspan): (Span, Span),
        args: &[Node],
        spans: &[Span],
        tail: bool,
        inline: &mut dyn FnMut(&mut Self, &[Val], V),
        general: impl FnOnce(&mut Self, Option<Val>),
    ) {
        let site = self.site(span, fspan, spans, sym, None);
        let fork = self.fork();
        let before = self.steps.clone();
        if self.general_path(fork) {
            let m = self.m();
            let z = self.iconst(0);
            let head = self.call_helper("nat_head", &[m, site, z]);
            let f = Val {
                tag: head[0],
                word: head[1],
                owned: true,
            };
            let vals: Vec<Val> = args
                .iter()
                .map(|a| {
                    let v = self.node(a, false).expect("a leaf");
                    self.own(v)
                })
                .collect();
            let kept = self.take_steps();
            let v = self.apply_keeping(f, &vals, site, tail, kept);
            general(self, v);
            // The path in place starts where this one did (this one's steps, given back after
            // the call, are the same spans).
            if matches!(fork, Fork::Both { .. }) {
                self.steps = before;
            }
        }
        if !self.in_place_path(fork) {
            return;
        }
        let seen = self.seen.len();
        let vals: Vec<Val> = args
            .iter()
            .map(|a| {
                let v = self.node(a, false).expect("a leaf");
                if matches!(b.op, Op::Cons) {
                    self.own(v)
                } else {
                    v
                }
            })
            .collect();
        inline(self, &vals, site);
        if matches!(fork, Fork::Both { .. }) {
            // Halves read on this path only are not read where the paths meet.
            self.seen.truncate(seen);
        }
    }

    /// A builtin made in place (its common cases; the rest through the table, as
    /// [`call_on`]); the arguments let go.
    fn inline(&mut self, b: &'static BuiltinDef, vals: &[Val], site: V) -> Val {
        match (b.op, vals) {
            (Op::NullP, [x]) => {
                let r = self.b.ins().icmp_imm_s(IntCC::Equal, x.tag, NIL);
                self.let_go(*x);
                self.boolean(r)
            }
            (Op::PairP, [x]) => {
                let r = self.b.ins().icmp_imm_s(IntCC::Equal, x.tag, PAIR);
                self.let_go(*x);
                self.boolean(r)
            }
            (Op::Not, [x]) => {
                let t = self.truth(*x);
                let r = self.b.ins().bxor_imm_u(t, 1);
                self.let_go(*x);
                self.boolean(r)
            }
            (Op::Cons, [x, y]) => self.cons(*x, *y),
            (Op::EqP, [x, y]) => {
                let r = self.eq_test(b, *x, *y, site);
                self.boolean(r)
            }
            (Op::Car, [x]) => self.halves(b, *x, &[true], site),
            (Op::Cdr, [x]) => self.halves(b, *x, &[false], site),
            (Op::Cadr, [x]) => self.halves(b, *x, &[false, true], site),
            (Op::Cddr, [x]) => self.halves(b, *x, &[false, false], site),
            (Op::Caddr, [x]) => self.halves(b, *x, &[false, false, true], site),
            (Op::Length, [x]) => self.length(b, *x, site),
            (op, [x, y]) if op.is_int_arith() => self.ints(b, *x, *y, site),
            _ => self.table(b, vals, site),
        }
    }

    /// `length` of a list, counted along its cells' cdrs; anything else (a string, an improper
    /// list, an error) through the table.
    fn length(&mut self, b: &'static BuiltinDef, x: Val, site: V) -> Val {
        let merge = self.merge();
        let (walk, done, slow, empty) = (self.block(), self.block(), self.block(), self.block());
        self.b.append_block_param(walk, types::I64);
        self.b.append_block_param(walk, types::I64);
        self.b.append_block_param(done, types::I64);
        let is_pair = self.b.ins().icmp_imm_s(IntCC::Equal, x.tag, PAIR);
        let not_pair = self.block();
        let one = self.iconst(1);
        self.b.ins().brif(
            is_pair,
            walk,
            &[BlockArg::Value(x.word), BlockArg::Value(one)],
            not_pair,
            &[],
        );
        self.enter(not_pair);
        let is_nil = self.b.ins().icmp_imm_s(IntCC::Equal, x.tag, NIL);
        self.b.ins().brif(is_nil, empty, &[], slow, &[]);
        self.enter(empty);
        let zero = self.iconst(0);
        self.b.ins().jump(done, &[BlockArg::Value(zero)]);
        // Cells `1..=n` so far, `cell` the last: its cdr's tag says whether the list goes on.
        self.b.switch_to_block(walk);
        let (cell, n) = (self.b.block_params(walk)[0], self.b.block_params(walk)[1]);
        let meta = self.load(types::I32, cell, META_AT);
        let meta = self.b.ins().uextend(types::I64, meta);
        let cdr_tag = self.b.ins().ushr_imm_u(meta, 4);
        let cdr_tag = self.b.ins().band_imm_u(cdr_tag, 0xf);
        let on = self.b.ins().icmp_imm_s(IntCC::Equal, cdr_tag, PAIR);
        let (next, end, proper) = (self.block(), self.block(), self.block());
        self.b.ins().brif(on, next, &[], end, &[]);
        self.enter(next);
        let cdr = self.load(types::I64, cell, CDR_AT);
        let n1 = self.b.ins().iadd_imm_s(n, 1);
        self.b
            .ins()
            .jump(walk, &[BlockArg::Value(cdr), BlockArg::Value(n1)]);
        self.b.seal_block(walk);
        self.enter(end);
        let nil = self.b.ins().icmp_imm_s(IntCC::Equal, cdr_tag, NIL);
        self.b.ins().brif(nil, proper, &[], slow, &[]);
        self.enter(proper);
        self.b.ins().jump(done, &[BlockArg::Value(n)]);
        self.enter(done);
        let n = self.b.block_params(done)[0];
        self.let_go(x);
        let int = self.iconst(INT);
        self.b
            .ins()
            .jump(merge.block, &[BlockArg::Value(int), BlockArg::Value(n)]);
        merge.reached.set(true);
        self.enter_cold(slow);
        let v = self.table(b, &[x], site);
        self.b.ins().jump(
            merge.block,
            &[BlockArg::Value(v.tag), BlockArg::Value(v.word)],
        );
        self.at_merge(&merge).expect("reached")
    }

    /// A pair of two values the code owns (handed over to it): its cell taken in place from the
    /// thread's pool when the current chunk has a slot in hand (see [`cons::Taking`]), otherwise
    /// through Rust.
    fn cons(&mut self, x: Val, y: Val) -> Val {
        let pool = self.jit.pool;
        if pool.is_null() {
            let r = self.call_helper("nat_cons", &[x.tag, x.word, y.tag, y.word]);
            return Val {
                tag: r[0],
                word: r[1],
                owned: true,
            };
        }
        let t = &cons::TAKING;
        let merge = self.merge();
        let (slow, simple, has, take) = (self.block(), self.block(), self.block(), self.block());
        // A value behind an `Rc` is packed as another pointer than the one it holds
        // (`packed_as_held`): only atoms and pairs are packed in place.
        let both = self.packed_as_held(&[x.tag, y.tag]);
        self.b.ins().brif(both, simple, &[], slow, &[]);
        self.enter(simple);
        let p = self.ptr(pool);
        let c = self.load(types::I64, p, t.current_at);
        self.b.ins().brif(c, has, &[], slow, &[]);
        self.enter(has);
        let bits = self.load(types::I64, c, t.bits_at);
        self.b.ins().brif(bits, take, &[], slow, &[]);
        self.enter(take);
        let less = self.b.ins().iadd_imm_s(bits, -1);
        let rest = self.b.ins().band(bits, less);
        self.store(rest, c, t.bits_at);
        let live = self.load(types::I64, c, t.live_at);
        let live = self.b.ins().iadd_imm_s(live, 1);
        self.store(live, c, t.live_at);
        let cursor = self.load(types::I64, c, t.cursor_at);
        let word = self.b.ins().iadd_imm_s(cursor, -1);
        let base = self.b.ins().ishl_imm_u(word, 6);
        let low = self.b.ins().ctz(bits);
        let i = self.b.ins().iadd(base, low);
        let off = self.b.ins().imul_imm_s(i, t.cell);
        let slot = self.b.ins().iadd(c, off);
        self.store(x.word, slot, CAR_AT);
        self.store(y.word, slot, CDR_AT);
        let dt = self.b.ins().ishl_imm_u(y.tag, 4);
        let tags = self.b.ins().bor(dt, x.tag);
        let meta = self.b.ins().bor_imm_u(tags, i64::from(ONE));
        let meta = self.b.ins().ireduce(types::I32, meta);
        self.store(meta, slot, META_AT);
        let pair = self.iconst(PAIR);
        self.b
            .ins()
            .jump(merge.block, &[BlockArg::Value(pair), BlockArg::Value(slot)]);
        merge.reached.set(true);
        self.enter_cold(slow);
        let r = self.call_helper("nat_cons", &[x.tag, x.word, y.tag, y.word]);
        self.b
            .ins()
            .jump(merge.block, &[BlockArg::Value(r[0]), BlockArg::Value(r[1])]);
        self.at_merge(&merge).expect("reached")
    }

    /// A builtin through the table ([`call_on`]), the arguments handed over.
    fn table(&mut self, b: &'static BuiltinDef, vals: &[Val], site: V) -> Val {
        let kept = self.take_steps();
        let owned: Vec<Val> = vals.iter().map(|&v| self.own(v)).collect();
        let args = self.spill(&owned);
        let n = self.iconst(owned.len() as i64);
        let bp = self.ptr(b);
        let m = self.m();
        let r = self.call_helper("nat_builtin", &[m, bp, args, n, site]);
        self.check_tag(r[0]);
        self.give_back(kept);
        Val {
            tag: r[0],
            word: r[1],
            owned: true,
        }
    }

    /// `car`, `cdr` and their compositions (`path` from the last applied to the first): each
    /// half read in the cell, borrowed, and the last one counted; anything but a pair on the
    /// way, or a half that is a shared value other than a pair, through the table.
    fn halves(&mut self, b: &'static BuiltinDef, x: Val, path: &[bool], site: V) -> Val {
        if !x.owned {
            if let Some(v) = self.borrowed_halves(b, x, path, site) {
                return v;
            }
        }
        let merge = self.merge();
        let slow = self.block();
        if let (true, &[car]) = (x.owned, path) {
            // A pair the code holds the only count on (a variable's last read): its half taken
            // over, the cell freed (see `ConsRef::take_half`).
            let is_pair = self.b.ins().icmp_imm_s(IntCC::Equal, x.tag, PAIR);
            let (pair, only, shared) = (self.block(), self.block(), self.block());
            self.b.ins().brif(is_pair, pair, &[], slow, &[]);
            self.enter(pair);
            let meta = self.load(types::I32, x.word, META_AT);
            let alone = self
                .b
                .ins()
                .icmp_imm_u(IntCC::UnsignedLessThan, meta, 2 * ONE as i64);
            self.b.ins().brif(alone, only, &[], shared, &[]);
            self.enter(only);
            if !self.jit.pool.is_null() {
                // Both halves packed as held (atoms and pairs): moved out in place, the slot
                // freed, then the other half let go (which may free other cells).
                let meta = self.b.ins().uextend(types::I64, meta);
                let ct = self.b.ins().band_imm_u(meta, 0xf);
                let dt = self.b.ins().ushr_imm_u(meta, 4);
                let dt = self.b.ins().band_imm_u(dt, 0xf);
                let (kt, ot) = if car { (ct, dt) } else { (dt, ct) };
                let (k_at, o_at) = if car {
                    (CAR_AT, CDR_AT)
                } else {
                    (CDR_AT, CAR_AT)
                };
                let held = self.packed_as_held(&[kt, ot]);
                let (moved, through) = (self.block(), self.block());
                self.b.ins().brif(held, moved, &[], through, &[]);
                self.enter(moved);
                let k = self.load(types::I64, x.word, k_at);
                let o = self.load(types::I64, x.word, o_at);
                self.free_slot(x.word);
                self.release(ot, o);
                self.b
                    .ins()
                    .jump(merge.block, &[BlockArg::Value(kt), BlockArg::Value(k)]);
                self.enter_cold(through);
            }
            let c = self.iconst(i64::from(car));
            let r = self.call_helper("nat_take", &[x.word, c]);
            self.b
                .ins()
                .jump(merge.block, &[BlockArg::Value(r[0]), BlockArg::Value(r[1])]);
            merge.reached.set(true);
            self.enter(shared);
        }
        let mut cur = (x.tag, x.word);
        for &car in path.iter().rev() {
            cur = self.half(cur, car, slow);
        }
        // The half's word is the value's when it is an atom or a pair; a pair is counted in
        // place, any other shared value goes through the table.
        let is_pair = self.b.ins().icmp_imm_s(IntCC::Equal, cur.0, PAIR);
        let (pair, other, atom) = (self.block(), self.block(), self.block());
        self.b.ins().brif(is_pair, pair, &[], other, &[]);
        self.enter(pair);
        self.count_pair(cur.1, atom);
        self.enter(other);
        let owns = self.owns(cur.0);
        self.b.ins().brif(owns, slow, &[], atom, &[]);
        self.enter(atom);
        self.let_go(x);
        self.b.ins().jump(
            merge.block,
            &[BlockArg::Value(cur.0), BlockArg::Value(cur.1)],
        );
        merge.reached.set(true);
        self.enter_cold(slow);
        let v = self.table(b, &[x], site);
        self.b.ins().jump(
            merge.block,
            &[BlockArg::Value(v.tag), BlockArg::Value(v.word)],
        );
        self.at_merge(&merge).expect("reached")
    }

    /// Gives back the slot of the cell at `word`, its halves moved out: in place on the common
    /// path of `pool::free` (see [`cons::Freeing`]), through Rust otherwise.
    fn free_slot(&mut self, word: V) {
        let f = &cons::FREEING;
        let chunk = self.b.ins().band_imm_u(word, !(f.chunk - 1));
        let off = self.b.ins().isub(word, chunk);
        // The slot's index: its offset, a multiple of the cell's size, times the size's
        // reciprocal (exact below the chunk's size, see `SLOT_OF`).
        let i = self.b.ins().imul_imm_u(off, SLOT_OF);
        let i = self.b.ins().ushr_imm_u(i, 32);
        let live = self.load(types::I64, chunk, f.live_at);
        let live1 = self.b.ins().iadd_imm_s(live, -1);
        let current = self.load(types::I8, chunk, f.current_at);
        let listed = self.load(types::I8, chunk, f.listed_at);
        let kept = self.b.ins().bor(current, listed);
        let kept = self.b.ins().icmp_imm_s(IntCC::NotEqual, kept, 0);
        let full = self
            .b
            .ins()
            .icmp_imm_u(IntCC::UnsignedGreaterThan, live1, f.reuse_at);
        let quiet = self.b.ins().bor(kept, full);
        let some = self.b.ins().icmp_imm_s(IntCC::NotEqual, live1, 0);
        let fast = self.b.ins().band(quiet, some);
        let (here, rust, done) = (self.block(), self.block(), self.block());
        self.b.ins().brif(fast, here, &[], rust, &[]);
        self.enter(here);
        let w = self.b.ins().ushr_imm_u(i, 6);
        let w = self.b.ins().ishl_imm_u(w, 3);
        let at = self.b.ins().iadd(chunk, w);
        let bits = self.load(types::I64, at, f.free_at);
        let one = self.iconst(1);
        let low = self.b.ins().band_imm_u(i, 63);
        let bit = self.b.ins().ishl(one, low);
        let bits = self.b.ins().bor(bits, bit);
        self.store(bits, at, f.free_at);
        self.store(live1, chunk, f.live_at);
        self.b.ins().jump(done, &[]);
        self.enter_cold(rust);
        self.call_helper("nat_free_slot", &[word]);
        self.b.ins().jump(done, &[]);
        self.enter(done);
    }

    /// [`Gen::halves`] of a value borrowed from under a variable (the variable's own, or a half
    /// of it): the half borrowed too, not counted. Pairs never change, and the variable holds
    /// its pairs until the code lets it go after every use of the half (the variable is lent to
    /// the call the half is an argument of, see [`Gen::args`]); so the half is read once where
    /// the code is reached only through an earlier reading ([`Gen::seen`]).
    ///
    /// Something other than a pair on the way goes through the table, which answers `nil` (the
    /// `cdr` of a pair that ends a list, `cadr` of a short list) or fails: never a value that
    /// owns anything, so the value where the paths meet is borrowed on both.
    fn borrowed_halves(
        &mut self,
        b: &'static BuiltinDef,
        x: Val,
        path: &[bool],
        site: V,
    ) -> Option<Val> {
        let (root, mut taken) = match self.reads.get(&x.tag) {
            Some(&i) => (i, Vec::new()),
            None => self.roots.get(&x.tag)?.clone(),
        };
        taken.extend(path.iter().rev());
        let key = (root, taken);
        if let Some(&(_, tag, word)) = self.seen.iter().rev().find(|(k, _, _)| *k == key) {
            return Some(Val {
                tag,
                word,
                owned: false,
            });
        }
        let merge = self.merge();
        let slow = self.block();
        let mut cur = (x.tag, x.word);
        for &car in path.iter().rev() {
            cur = self.half(cur, car, slow);
        }
        // An atom or a pair has its words as packed; anything else is made into its own (lent).
        let held = self.packed_as_held(&[cur.0]);
        let lend = self.block();
        self.b.ins().brif(
            held,
            merge.block,
            &[BlockArg::Value(cur.0), BlockArg::Value(cur.1)],
            lend,
            &[],
        );
        merge.reached.set(true);
        self.enter(lend);
        let r = self.call_helper("nat_lend", &[cur.0, cur.1]);
        self.b
            .ins()
            .jump(merge.block, &[BlockArg::Value(r[0]), BlockArg::Value(r[1])]);
        self.enter_cold(slow);
        let v = self.table(b, &[x], site);
        self.b.ins().jump(
            merge.block,
            &[BlockArg::Value(v.tag), BlockArg::Value(v.word)],
        );
        let v = Val {
            owned: false,
            ..self.at_merge(&merge).expect("reached")
        };
        self.seen.push((key.clone(), v.tag, v.word));
        self.roots.insert(v.tag, key);
        Some(v)
    }

    /// The car (`car`) or the cdr of the value `(tag, word)`, read in its cell (not counted);
    /// anything but a pair goes to `slow`.
    fn half(&mut self, (tag, word): (V, V), car: bool, slow: Block) -> (V, V) {
        let is_pair = self.b.ins().icmp_imm_s(IntCC::Equal, tag, PAIR);
        let next = self.block();
        self.b.ins().brif(is_pair, next, &[], slow, &[]);
        self.enter(next);
        let meta = self.load(types::I32, word, META_AT);
        let meta = self.b.ins().uextend(types::I64, meta);
        let tag = if car {
            self.b.ins().band_imm_u(meta, 0xf)
        } else {
            let s = self.b.ins().ushr_imm_u(meta, 4);
            self.b.ins().band_imm_u(s, 0xf)
        };
        let word = self.load(types::I64, word, if car { CAR_AT } else { CDR_AT });
        (tag, word)
    }

    /// A comparison of two integers in place, as whether it holds (no boolean made); every other
    /// kind through the table, its value's truth.
    fn int_test(&mut self, b: &'static BuiltinDef, x: Val, y: Val, site: V) -> V {
        let cc = match b.op {
            Op::NumEq => IntCC::Equal,
            Op::Lt => IntCC::SignedLessThan,
            Op::Gt => IntCC::SignedGreaterThan,
            Op::Le => IntCC::SignedLessThanOrEqual,
            _ => IntCC::SignedGreaterThanOrEqual,
        };
        let merge = self.block();
        self.b.append_block_param(merge, types::I8);
        let xi = self.b.ins().icmp_imm_s(IntCC::Equal, x.tag, INT);
        let yi = self.b.ins().icmp_imm_s(IntCC::Equal, y.tag, INT);
        let both = self.b.ins().band(xi, yi);
        let (fast, slow) = (self.block(), self.block());
        self.b.ins().brif(both, fast, &[], slow, &[]);
        self.enter(fast);
        let r = self.b.ins().icmp(cc, x.word, y.word);
        self.b.ins().jump(merge, &[BlockArg::Value(r)]);
        self.enter_cold(slow);
        let v = self.table(b, &[x, y], site);
        let yes = self.truth(v);
        self.let_go(v);
        self.b.ins().jump(merge, &[BlockArg::Value(yes)]);
        self.enter(merge);
        self.b.block_params(merge)[0]
    }

    /// `eq?` in place, as whether it holds, for the kinds whose identity is in their word (`nil`,
    /// integers, symbols, keywords, pairs: the same kind and the same payload, as
    /// [`Value::is_eq`]); the arguments let go. Any other kind through the table.
    fn eq_test(&mut self, b: &'static BuiltinDef, x: Val, y: Val, site: V) -> V {
        /// `nil`, integers, symbols, keywords and pairs.
        const BY_WORD: i64 = (1 << NIL) | (1 << INT) | (1 << 5) | (1 << 6) | (1 << PAIR);
        let merge = self.block();
        self.b.append_block_param(merge, types::I8);
        let both = self.tag_bits(&[x.tag, y.tag]);
        let other = self.b.ins().band_imm_u(both, !BY_WORD);
        let (fast, slow) = (self.block(), self.block());
        self.b.ins().brif(other, slow, &[], fast, &[]);
        self.enter(fast);
        // Only an integer's and a pair's word is all value: a symbol's or keyword's is its low
        // 32 bits, and `nil` has none (what lies past a value's payload is not part of it).
        let same_tag = self.b.ins().icmp(IntCC::Equal, x.tag, y.tag);
        let diff = self.b.ins().bxor(x.word, y.word);
        let whole = self.b.ins().icmp_imm_s(IntCC::Equal, diff, 0);
        let low = self.b.ins().band_imm_u(diff, 0xffff_ffff);
        let low = self.b.ins().icmp_imm_s(IntCC::Equal, low, 0);
        let is_int = self.b.ins().icmp_imm_s(IntCC::Equal, x.tag, INT);
        let is_pair = self.b.ins().icmp_imm_s(IntCC::Equal, x.tag, PAIR);
        let full = self.b.ins().bor(is_int, is_pair);
        let same_word = self.b.ins().select(full, whole, low);
        let is_nil = self.b.ins().icmp_imm_s(IntCC::Equal, x.tag, NIL);
        let same = self.b.ins().bor(is_nil, same_word);
        let r = self.b.ins().band(same_tag, same);
        self.let_go(x);
        self.let_go(y);
        self.b.ins().jump(merge, &[BlockArg::Value(r)]);
        self.enter_cold(slow);
        let v = self.table(b, &[x, y], site);
        let yes = self.truth(v);
        self.let_go(v);
        self.b.ins().jump(merge, &[BlockArg::Value(yes)]);
        self.enter(merge);
        self.b.block_params(merge)[0]
    }

    /// Integer arithmetic (`+ - * modulo`) and comparisons of two integers in place; overflow, a
    /// divisor of 0 or -1 and every other kind through the table.
    fn ints(&mut self, b: &'static BuiltinDef, x: Val, y: Val, site: V) -> Val {
        let merge = self.merge();
        let xi = self.b.ins().icmp_imm_s(IntCC::Equal, x.tag, INT);
        let yi = self.b.ins().icmp_imm_s(IntCC::Equal, y.tag, INT);
        let both = self.b.ins().band(xi, yi);
        let (fast, slow) = (self.block(), self.block());
        self.b.ins().brif(both, fast, &[], slow, &[]);
        self.enter(fast);
        let (a, c) = (x.word, y.word);
        let cmp = |cc| Some(cc);
        let cc = match b.op {
            Op::NumEq => cmp(IntCC::Equal),
            Op::Lt => cmp(IntCC::SignedLessThan),
            Op::Gt => cmp(IntCC::SignedGreaterThan),
            Op::Le => cmp(IntCC::SignedLessThanOrEqual),
            Op::Ge => cmp(IntCC::SignedGreaterThanOrEqual),
            _ => None,
        };
        if let Some(cc) = cc {
            let r = self.b.ins().icmp(cc, a, c);
            let v = self.boolean(r);
            self.b.ins().jump(
                merge.block,
                &[BlockArg::Value(v.tag), BlockArg::Value(v.word)],
            );
        } else if let Op::Modulo = b.op {
            // The sign of the divisor, as `numeric::modulo`; a divisor of 0 (an error) or -1
            // (whose remainder of the least integer overflows there) through the table.
            let zero = self.b.ins().icmp_imm_s(IntCC::Equal, c, 0);
            let minus = self.b.ins().icmp_imm_s(IntCC::Equal, c, -1);
            let odd = self.b.ins().bor(zero, minus);
            let ok = self.block();
            self.b.ins().brif(odd, slow, &[], ok, &[]);
            self.enter(ok);
            let r = self.b.ins().srem(a, c);
            let r_neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, r, 0);
            let c_neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, c, 0);
            let differ = self.b.ins().bxor(r_neg, c_neg);
            let nonzero = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
            let fix = self.b.ins().band(differ, nonzero);
            let moved = self.b.ins().iadd(r, c);
            let r = self.b.ins().select(fix, moved, r);
            let t = self.iconst(INT);
            self.b
                .ins()
                .jump(merge.block, &[BlockArg::Value(t), BlockArg::Value(r)]);
        } else {
            let (r, overflow) = match b.op {
                Op::Add => self.b.ins().sadd_overflow(a, c),
                Op::Sub => self.b.ins().ssub_overflow(a, c),
                _ => self.b.ins().smul_overflow(a, c),
            };
            let ok = self.block();
            self.b.ins().brif(overflow, slow, &[], ok, &[]);
            self.enter(ok);
            let t = self.iconst(INT);
            self.b
                .ins()
                .jump(merge.block, &[BlockArg::Value(t), BlockArg::Value(r)]);
        }
        merge.reached.set(true);
        self.enter_cold(slow);
        let v = self.table(b, &[x, y], site);
        self.b.ins().jump(
            merge.block,
            &[BlockArg::Value(v.tag), BlockArg::Value(v.word)],
        );
        let v = self.at_merge(&merge).expect("reached");
        if cc.is_none() && self.is_int(x.tag) && self.is_int(y.tag) {
            // Two integers: an integer, or an error (an overflow, a division by zero).
            return Val {
                tag: self.iconst(INT),
                ..v
            };
        }
        v
    }

    /// Whether a tag is known, where the code is made, to be an integer's (the constant).
    fn is_int(&self, tag: V) -> bool {
        let dfg = &self.b.func.dfg;
        match dfg.value_def(tag) {
            cranelift_codegen::ir::ValueDef::Result(inst, _) => matches!(
                dfg.insts[inst],
                cranelift_codegen::ir::InstructionData::UnaryImm {
                    opcode: cranelift_codegen::ir::Opcode::Iconst,
                    imm,
                } if imm.bits() == INT
            ),
            _ => false,
        }
    }
}

// --- the Rust functions the code calls ---

/// The values `n` words pairs at `args` stand for, taken over.
unsafe fn take_args(args: *mut Raw, n: usize) -> Vec<Value> {
    // SAFETY: the code wrote `n` values there and hands them over.
    (0..n).map(|i| unsafe { arg(args, i).value() }).collect()
}

/// The `i`th value the code wrote at `args`, read as the two words it was written as: read as
/// one 16-byte piece right after two 8-byte stores, it waits for them to reach the cache (the
/// store buffer cannot forward them), a stall that was half the time of a closure's call.
///
/// # Safety
/// `args` holds more than `i` values.
#[inline(always)]
unsafe fn arg(args: *const Raw, i: usize) -> Raw {
    // SAFETY: as the caller promises; a `Raw` is two words (`repr(C)`). Volatile, or the
    // compiler joins the two reads into the one 16-byte read this is here to avoid.
    unsafe {
        let w = args.add(i).cast::<u64>();
        Raw::words(w.read_volatile(), w.add(1).read_volatile())
    }
}

/// A global's value (as the closures' `lookup_global_in`); for an unbound name, the locals in
/// scope are made into frames for the diagnostic, which names them (their values are in
/// registers, and the diagnostic does not show them).
fn global_in(m: &Machine, site: &Site, span: Span) -> crate::eval::machine::R<Value> {
    let (sym, scope) = (site.sym, &site.scope);
    if let Some(v) = m.globals.get(sym) {
        return Ok(crate::eval::env::share(v));
    }
    let mut env = if site.nested && !m.native_env.is_null() {
        // SAFETY: the scope of the closure running, set by `run` for the length of its call.
        unsafe { (*m.native_env).clone() }
    } else {
        Env::new()
    };
    for (names, _) in scope.iter().flat_map(|s| s.iter()) {
        let f = env.extend(names.len());
        for &n in names {
            f.push(n, Value::Nil);
        }
        env = f;
    }
    m.lookup(sym, &env, span)
}

/// Takes the steps `spans` stand for one by one; 1 for an error (kept in the machine).
unsafe extern "C" fn nat_steps(m: *mut Machine, spans: *const Span, n: u64) -> u64 {
    // SAFETY: the machine running the code, and spans the code keeps.
    let (m, spans) = unsafe { (&mut *m, std::slice::from_raw_parts(spans, n as usize)) };
    for s in spans {
        if let Err(e) = m.step(s) {
            m.pending.fail(e);
            return 1;
        }
    }
    0
}

unsafe extern "C" fn nat_clone(tag: u64, word: u64) {
    // SAFETY: the words of a live value, whose count is taken and kept by the code.
    let v = std::mem::ManuallyDrop::new(unsafe { Raw::words(tag, word).value() });
    std::mem::forget((*v).clone());
}

/// Lets go of a value the code owns: a pair without making a `Value` ([`ConsRef::release`]).
unsafe extern "C" fn nat_drop(tag: u64, word: u64) {
    if tag == PAIR as u64 {
        // SAFETY: the word of a pair the code owns and lets go, as `ConsRef::into_raw` made it.
        unsafe { ConsRef::release(std::ptr::with_exposed_provenance_mut(word as usize)) };
        return;
    }
    // SAFETY: the words of a value the code owns and lets go.
    drop(unsafe { Raw::words(tag, word).value() });
}

/// Gives back the slot of a cell whose halves the code moved out (see [`cons::free_slot`]).
unsafe extern "C" fn nat_free_slot(word: u64) {
    // SAFETY: a cell of this thread's pool the code held the only count on and moved out of.
    unsafe { cons::free_slot(std::ptr::with_exposed_provenance_mut(word as usize)) };
}

/// The car (`car` not 0) or the cdr of a pair the code owns, taken over (see
/// [`ConsRef::take_half`]).
unsafe extern "C" fn nat_take(word: u64, car: u64) -> Raw {
    // SAFETY: the words of a pair the code owns and hands over.
    match unsafe { Raw::words(PAIR as u64, word).value() } {
        Value::Pair(c) => {
            let (tag, word) = ConsRef::take_half(c, car != 0);
            if packed_as_held(tag) {
                Raw::words(u64::from(tag), word.expose_provenance() as u64)
            } else {
                // SAFETY: a half as its cell packed it, its count handed over.
                Raw::of(unsafe { Value::from_raw(tag, word) })
            }
        }
        other => Raw::of(other),
    }
}

/// The kinds a cell packs as other words than their values hold (a bit per tag): those that own
/// something, but pairs (see [`packed_as_held`]).
const PACKED_OTHERWISE: i64 = OWNS & !(1 << PAIR);

/// Whether a half packed in a cell ([`Value::into_raw`]) has the words of the value it packs:
/// atoms, and pairs (one pointer either way). A value behind an `Rc` (a string, a closure…) is
/// packed as the pointer `Rc::into_raw` gives, which is not the one the value holds.
fn packed_as_held(tag: u8) -> bool {
    PACKED_OTHERWISE >> tag & 1 == 0
}

/// A half of a cell as packed there (`tag` not [`packed_as_held`]) made into the value's words,
/// its count not taken: lent for as long as the cell holds it.
unsafe extern "C" fn nat_lend(tag: u64, word: u64) -> Raw {
    // SAFETY: the half's words as the cell packed them; the value made from them is handed back
    // as words and never dropped here, so the count stays the cell's.
    Raw::of(unsafe {
        Value::from_raw(
            tag as u8,
            std::ptr::with_exposed_provenance_mut(word as usize),
        )
    })
}

unsafe extern "C" fn nat_const(v: *const Value) -> Raw {
    // SAFETY: a constant the code keeps.
    Raw::of(unsafe { (*v).clone() })
}

unsafe extern "C" fn nat_cons(at: u64, aw: u64, dt: u64, dw: u64) -> Raw {
    // SAFETY: two values the code owns, moved into the cell.
    unsafe {
        Raw::of(Value::cons(
            Raw::words(at, aw).value(),
            Raw::words(dt, dw).value(),
        ))
    }
}

unsafe extern "C" fn nat_builtin(
    m: *mut Machine,
    b: *const BuiltinDef,
    args: *mut Raw,
    n: u64,
    site: *const Site,
) -> Raw {
    // SAFETY: the machine running the code; a builtin of the table; the arguments handed over;
    // a site the code keeps.
    let (m, b, site) = unsafe { (&mut *m, &*b, &*site) };
    // SAFETY: the arguments handed over.
    unsafe { call_on_args(m, b, args, n as usize, site) }
}

/// A builtin through the table ([`call_on`]) with the `n` arguments at `args`, taken over: in a
/// buffer on the Rust stack for up to [`INLINE_ARGS`] (a vector was an allocation per call).
///
/// # Safety
/// `args` holds `n` values the caller hands over.
unsafe fn call_on_args(
    m: &mut Machine,
    b: &'static BuiltinDef,
    args: *mut Raw,
    n: usize,
    site: &Site,
) -> Raw {
    if n <= INLINE_ARGS {
        let mut vals: [Value; INLINE_ARGS] = Default::default();
        for (i, v) in vals.iter_mut().enumerate().take(n) {
            // SAFETY: the arguments handed over, each moved once; the slot held `Nil`.
            std::mem::forget(std::mem::replace(v, unsafe { arg(args, i).value() }));
        }
        // SAFETY: values owned here; the slots past `n` hold `Nil`.
        return unsafe { call_on(m, b, &mut vals[..n], site.span, &site.spans) };
    }
    let mut vals = unsafe { take_args(args, n) };
    // SAFETY: values owned here.
    unsafe { call_on(m, b, &mut vals, site.span, &site.spans) }
}

/// A global's value (as `Machine::lookup_global`), or an error.
unsafe extern "C" fn nat_global(m: *mut Machine, site: *const Site) -> Raw {
    // SAFETY: as above.
    let (m, site) = unsafe { (&mut *m, &*site) };
    let r = global_in(m, site, site.span);
    Raw::result(m, r)
}

/// What a call's head names, read after its steps: [`SAME`] when it still holds the procedure
/// `q` the code calls directly, else its value, or the error of an unbound name.
unsafe extern "C" fn nat_head(m: *mut Machine, site: *const Site, q: *const Closure) -> Raw {
    // SAFETY: as above.
    let (m, site) = unsafe { (&mut *m, &*site) };
    match m.globals.get(site.sym) {
        Some(Value::Closure(c)) if std::ptr::eq(Rc::as_ptr(c), q) => {
            site.seen.set(m.globals.version());
            Raw::words(SAME as u64, 0)
        }
        Some(v) => Raw::of(v.clone()),
        None => {
            let r = global_in(m, site, site.fspan);
            Raw::result(m, r)
        }
    }
}

/// The procedure a call is made directly to, as a value (counted).
unsafe extern "C" fn nat_closure(q: *const Closure) -> Raw {
    // SAFETY: a procedure the code keeps alive; one more count on it is handed over.
    unsafe {
        Rc::increment_strong_count(q);
        Raw::of(Value::Closure(Rc::from_raw(q)))
    }
}

/// A call the general way (as the closures' `call_global` past its builtin, and `general`):
/// in tail position (`tail` 1) a procedure's call is left to the caller's loop.
unsafe extern "C" fn nat_apply(
    m: *mut Machine,
    ft: u64,
    fw: u64,
    args: *mut Raw,
    n: u64,
    site: *const Site,
    tail: u64,
) -> Raw {
    // SAFETY: as above; `f` and the arguments handed over.
    let (m, site) = unsafe { (&mut *m, &*site) };
    let f = unsafe { Raw::words(ft, fw).value() };
    let n = n as usize;
    let (span, fspan) = (site.span, site.fspan);
    // The common calls take their arguments where they lie: onto the stack for a procedure
    // whose locals live there, into a buffer for a builtin.
    let f = match f {
        Value::Closure(c)
            if Machine::binds_directly(&c, n) && c.lambda.compiled(&m.globals).is_flat() =>
        {
            if tail == 0 {
                // SAFETY: as above.
                if let Some(r) = unsafe { call_code(m, &c, args, n, site) } {
                    return r;
                }
            }
            let base = m.stack.values.len();
            for i in 0..n {
                // SAFETY: the arguments handed over, each moved once.
                m.stack.push(unsafe { arg(args, i) });
            }
            return if tail != 0 {
                m.pending.flat_tail(c, base, span)
            } else {
                m.call_flat(c, base, span)
            };
        }
        Value::Builtin(b) if n <= INLINE_ARGS => {
            // SAFETY: as above.
            return unsafe { call_on_args(m, b, args, n, site) };
        }
        f => f,
    };
    let vals = unsafe { take_args(args, n) };
    match f {
        Value::Closure(c) if c.kind != ClosureKind::Comm => {
            if tail != 0 {
                m.pending.tail(c, Entry::Args(vals), span)
            } else {
                let r = m.enter(c, Entry::Args(vals), span);
                Raw::result(m, r)
            }
        }
        Value::Closure(c) => {
            let r = m.call_comm(c, vals, span);
            Raw::result(m, r)
        }
        Value::Builtin(b) => {
            let r = builtins::call(m, b, &vals, span, &site.spans);
            Raw::result(m, r)
        }
        other => {
            let e = m.not_callable(&other, fspan);
            m.pending.fail(e)
        }
    }
}

/// A non-tail call of a procedure value with machine code (a closure passed as an argument, a
/// `lambda`), made on the arguments where the code spilled them: as [`Machine::call_flat`]
/// would make it, without the trip through the value stack and the Rust entry (a closure
/// called by `map` took some 200 instructions a call there). `None` where the procedure has no
/// code or the stack is low: the general way then.
///
/// # Safety
/// `args` holds `n` values the code hands over.
unsafe fn call_code(
    m: &mut Machine,
    c: &Rc<Closure>,
    args: *mut Raw,
    n: usize,
    site: &Site,
) -> Option<Raw> {
    let body = c.lambda.compiled(&m.globals);
    let e = ready(m, c, body)?;
    // As a direct call looks, below the floor of the code that called: the general way, which
    // grows the stack.
    let here = 0u8;
    if std::ptr::from_ref(&here).addr() < m.native_floor {
        return None;
    }
    if m.depth >= m.budget.depth {
        // SAFETY: as the caller promises.
        drop(unsafe { take_args(args, n) });
        let e = m.runaway_recursion(site.span);
        return Some(m.pending.fail(e));
    }
    m.depth += 1;
    let saved = if e.nested {
        std::mem::replace(&mut m.native_env, std::ptr::from_ref(&c.env))
    } else {
        std::ptr::null()
    };
    // SAFETY: the code's entry, its arguments handed over.
    let r = unsafe { (e.f)(m, args) };
    if e.nested {
        m.native_env = saved;
    }
    Some(m.end_call(r, c.name(), site.span))
}

/// What a direct call's signal comes to (as the end of `Machine::call_flat_here`): a call it
/// left in tail position run, the depth given back, an error given the call site.
unsafe extern "C" fn nat_after(m: *mut Machine, t: u64, w: u64, site: *const Site) -> Raw {
    // SAFETY: as above.
    let (m, site) = unsafe { (&mut *m, &*site) };
    m.end_call(Raw::words(t, w), site.name, site.span)
}

/// A direct call past the depth budget: its arguments let go, the error made.
unsafe extern "C" fn nat_runaway(
    m: *mut Machine,
    args: *mut Raw,
    n: u64,
    site: *const Site,
) -> Raw {
    // SAFETY: as above.
    let (m, site) = unsafe { (&mut *m, &*site) };
    drop(unsafe { take_args(args, n as usize) });
    let e = m.runaway_recursion(site.span);
    m.pending.fail(e)
}

/// A direct call made through Rust where the stack is low: grown, with a floor for its new
/// part (see [`floor`]).
unsafe extern "C" fn nat_call_checked(
    m: *mut Machine,
    entry: unsafe extern "C" fn(*mut Machine, *const Raw) -> Raw,
    args: *mut Raw,
    site: *const Site,
) -> Raw {
    // SAFETY: as above.
    let mm = unsafe { &mut *m };
    stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
        if mm.depth >= mm.budget.depth {
            let n = unsafe { &*site }.spans.len();
            return unsafe { nat_runaway(m, args, n as u64, site) };
        }
        mm.depth += 1;
        let floor = std::mem::replace(&mut mm.native_floor, floor());
        // SAFETY: the code's entry, its arguments handed over.
        let r = unsafe { entry(m, args) };
        mm.native_floor = floor;
        if r.is_value() {
            mm.depth -= 1;
            return r;
        }
        unsafe { nat_after(m, r.tag(), 0, site) }
    })
}

type HelperFn = *const u8;

/// The Rust functions the code calls, by name.
fn helpers() -> [(&'static str, HelperFn); 16] {
    [
        ("nat_steps", nat_steps as HelperFn),
        ("nat_clone", nat_clone as HelperFn),
        ("nat_drop", nat_drop as HelperFn),
        ("nat_free_slot", nat_free_slot as HelperFn),
        ("nat_const", nat_const as HelperFn),
        ("nat_cons", nat_cons as HelperFn),
        ("nat_take", nat_take as HelperFn),
        ("nat_lend", nat_lend as HelperFn),
        ("nat_builtin", nat_builtin as HelperFn),
        ("nat_global", nat_global as HelperFn),
        ("nat_head", nat_head as HelperFn),
        ("nat_closure", nat_closure as HelperFn),
        ("nat_apply", nat_apply as HelperFn),
        ("nat_after", nat_after as HelperFn),
        ("nat_runaway", nat_runaway as HelperFn),
        ("nat_call_checked", nat_call_checked as HelperFn),
    ]
}

/// Each helper's signature: its number of 64-bit parameters and results.
fn helper_signatures(module: &JITModule) -> Vec<(&'static str, Signature)> {
    let shape: &[(&str, usize, usize)] = &[
        ("nat_steps", 3, 1),
        ("nat_clone", 2, 0),
        ("nat_drop", 2, 0),
        ("nat_free_slot", 1, 0),
        ("nat_const", 1, 2),
        ("nat_cons", 4, 2),
        ("nat_take", 2, 2),
        ("nat_lend", 2, 2),
        ("nat_builtin", 5, 2),
        ("nat_global", 2, 2),
        ("nat_head", 3, 2),
        ("nat_closure", 1, 2),
        ("nat_apply", 7, 2),
        ("nat_after", 4, 2),
        ("nat_runaway", 4, 2),
        ("nat_call_checked", 4, 2),
    ];
    shape
        .iter()
        .map(|&(name, params, results)| {
            let mut sig = module.make_signature();
            for _ in 0..params {
                sig.params.push(AbiParam::new(types::I64));
            }
            for _ in 0..results {
                sig.returns.push(AbiParam::new(types::I64));
            }
            (name, sig)
        })
        .collect()
}
