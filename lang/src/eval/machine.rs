//! The evaluator's state: symbols, globals, the communication being built, the budget and the
//! task-context stack. One `Machine` per interpreter; nothing is global.

use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ttdl_ir::traffic::{Target, TaskId};

use super::builtins;
use super::env::{FramePool, Globals, LocalNames};
use super::symbol::{Interner, Sym};
use super::value::{NetValue, Value};
use crate::comm::{Comm, CommLimits};
use crate::diagnostic::Diagnostic;
use crate::interp::Limits;
use crate::span::Span;

pub type R<T> = Result<T, Diagnostic>;

/// Symbols the evaluator compares against often.
#[derive(Clone, Debug)]
pub struct Known {
    pub quote: Sym,
    pub quasiquote: Sym,
    pub unquote: Sym,
    pub unquote_splicing: Sym,
    pub optional: Sym,
    pub rest: Sym,
    pub body: Sym,
    pub else_: Sym,
}

/// Steps between two looks at the interrupt flag, the clock and the lists' memory: 0.03 to
/// 0.5 ms of evaluation (machine code to the walk), about 1 MB of lists at most. Every 4,096
/// steps, the looks cost 4 % of a list program in machine code.
pub const INTERRUPT_POLL: u64 = 32_768;

/// How often the process's resident memory is read (Linux): reading it costs a few
/// microseconds, so not at every poll.
const RESIDENT_POLL: Duration = Duration::from_millis(100);

/// When the current evaluation started and what it started from: the time and memory budgets
/// count from here ([`Machine::reset_steps`]).
#[derive(Clone, Copy, Debug)]
pub struct Start {
    at: Instant,
    /// Bytes the lists held ([`super::cons::list_bytes`]).
    lists: u64,
    /// Bytes resident in the process, where the system says.
    resident: Option<u64>,
    /// When resident memory is next read.
    next_resident: Instant,
}

impl Start {
    fn now() -> Start {
        let at = Instant::now();
        Start {
            at,
            lists: super::cons::list_bytes(),
            resident: resident_bytes(),
            next_resident: at + RESIDENT_POLL,
        }
    }
}

/// The process's resident memory in bytes (Linux's `/proc/self/status`, `VmRSS`); `None`
/// elsewhere (and under Miri, which has no `/proc`), where only the lists' memory is counted.
fn resident_bytes() -> Option<u64> {
    if cfg!(miri) {
        return None;
    }
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: u64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb.saturating_mul(1024))
}

/// A byte count in MiB, for messages.
fn mib(bytes: u64) -> u64 {
    bytes.div_ceil(1 << 20)
}

#[derive(Clone, Debug)]
pub struct Machine {
    pub syms: Interner,
    pub globals: Globals,
    /// Which names have ever been bound locally (so other names skip the scope chain).
    pub locals: LocalNames,
    pub comm: Comm,
    pub budget: Limits,
    pub known: Known,
    /// Steps taken since the budget was last reset (at each top-level source).
    pub steps: u64,
    /// The step count at which [`Machine::step`] next leaves its fast path: the budget, or
    /// sooner, so an interrupt is noticed within [`INTERRUPT_POLL`] steps.
    pub next_check: u64,
    /// Set by a front end (the REPL's Ctrl-C) to stop the evaluation at its next check.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Where the time and memory budgets of the current evaluation count from.
    pub start: Start,
    /// Current non-tail call depth.
    pub depth: usize,
    /// Current nesting of `eval` and of procedure calls (the stack check runs every few levels).
    pub nesting: usize,
    /// Tasks in whose context stream forms run: the innermost is last.
    pub ctx: Vec<TaskId>,
    /// What `print`, `println` and `(format t …)` wrote.
    pub output: String,
    /// Every network made so far, by id.
    pub nets: Vec<Rc<NetValue>>,
    /// The tasks of each network (`network-tasks`), by network id, made on first use.
    pub net_tasks: Vec<Option<Rc<[TaskId]>>>,
    /// What `(target …)` asked for, and its physical network.
    pub target: Option<Target>,
    pub target_net: Option<Rc<NetValue>>,
    /// Macro expansions in progress (guards against a macro that expands to itself forever).
    pub expansions: usize,
    /// Changes to the evaluator's state other than the communication built (`set!`, `define`,
    /// `gensym`, …): an `iterate` body that makes none evaluates the same way every time.
    pub effects: u64,
    /// Whether a long `iterate` whose iterations repeat is recorded once with its count
    /// (see `Comm::fold`); off, every iteration is evaluated.
    pub fold: bool,
    /// Frames of finished calls and `let`s, reused by the next ones.
    pub frames: FramePool,
    /// What compiled code signalled to its caller (an error, a call in tail position).
    pub(crate) pending: super::code::Pending,
    /// The locals of the running procedures whose locals nothing captures (see [`super::code`]).
    pub(crate) stack: super::code::Stack,
    /// The scope of the procedure running as machine code whose closure is not at top level,
    /// for the diagnostic of a name it finds unbound (see `code::native`); null otherwise.
    pub(crate) native_env: *const super::env::Env,
    /// The lowest stack address machine code calls another procedure from directly: below it,
    /// the call goes through Rust, which grows the stack (see `code::native`).
    pub(crate) native_floor: usize,
}

/// The last frames that close on themselves are held by global closures (a procedure made by a
/// procedure with internal defines): once the globals go, the pool frees them.
impl Drop for Machine {
    fn drop(&mut self) {
        drop(std::mem::take(&mut self.globals));
        self.frames.collect_cycles();
    }
}

impl Machine {
    pub fn new(budget: Limits) -> Machine {
        let mut syms = Interner::default();
        let known = Known {
            quote: syms.intern("quote"),
            quasiquote: syms.intern("quasiquote"),
            unquote: syms.intern("unquote"),
            unquote_splicing: syms.intern("unquote-splicing"),
            optional: syms.intern("&optional"),
            rest: syms.intern("&rest"),
            body: syms.intern("&body"),
            else_: syms.intern("else"),
        };
        let limits = CommLimits {
            max_tasks: budget.tasks,
            max_messages: budget.messages,
        };
        let mut m = Machine {
            syms,
            globals: Globals::default(),
            locals: LocalNames::default(),
            comm: Comm::new(limits),
            budget,
            known,
            steps: 0,
            next_check: 0,
            depth: 0,
            nesting: 0,
            ctx: Vec::new(),
            output: String::new(),
            nets: Vec::new(),
            net_tasks: Vec::new(),
            target: None,
            target_net: None,
            expansions: 0,
            effects: 0,
            fold: true,
            interrupt: None,
            frames: FramePool::default(),
            pending: Default::default(),
            stack: Default::default(),
            native_env: std::ptr::null(),
            native_floor: usize::MAX,
            start: Start::now(),
        };
        m.reset_steps();
        builtins::install(&mut m);
        m
    }

    /// The names printing needs (symbols and tasks).
    pub fn names(&self) -> super::value::Names<'_> {
        super::value::Names {
            syms: &self.syms,
            comm: &self.comm,
        }
    }

    pub fn intern(&mut self, name: &str) -> Sym {
        self.syms.intern(name)
    }

    pub fn name(&self, sym: Sym) -> &str {
        self.syms.name(sym)
    }

    pub fn define_global(&mut self, name: &str, value: Value) {
        let s = self.intern(name);
        self.globals.set(s, value);
    }

    pub fn show(&self, v: &Value) -> String {
        v.to_text(&self.names(), true)
    }

    /// Starts a fresh budget — steps, time and memory — (each top-level source gets its own).
    pub fn reset_steps(&mut self) {
        self.steps = 0;
        self.start = Start::now();
        self.next_check = self.check_after(0);
    }

    /// The step count of the next check: every [`INTERRUPT_POLL`] steps, for the clock, the
    /// memory and the interrupt flag (about 0.1% of the evaluation's time).
    fn check_after(&self, steps: u64) -> u64 {
        self.budget.steps.min(steps.saturating_add(INTERRUPT_POLL))
    }

    /// Counts one evaluation step against the budget. The fast path is one compare; the
    /// interrupt flag is read only every [`INTERRUPT_POLL`] steps.
    ///
    /// The span is passed by reference and read only at a checkpoint: passed by value (24
    /// bytes), each call site kept a copy of it in its caller's frame.
    #[inline]
    pub fn step(&mut self, span: &Span) -> R<()> {
        self.steps += 1;
        if self.steps > self.next_check {
            return self.checkpoint(span);
        }
        Ok(())
    }

    /// Takes one step for each of two spans, in order, as two calls of [`Machine::step`] would,
    /// with one comparison when neither reaches the next checkpoint (a builtin call and its
    /// head). Where one would, they are taken one by one, so a budget runs out at the same step
    /// and span. The spans are passed by reference: by value (24 bytes each) they took room in
    /// the frame of every caller, a level of the evaluator's recursion among them.
    #[inline(always)]
    pub fn step2(&mut self, a: &Span, b: &Span) -> R<()> {
        self.step_up_to_4(2, a, b, None, None)
    }

    /// [`Machine::step2`] of three spans (a predicate of a variable: the call, its head, the
    /// variable).
    #[inline(always)]
    pub fn step3(&mut self, a: &Span, b: &Span, c: &Span) -> R<()> {
        self.step_up_to_4(3, a, b, Some(c), None)
    }

    /// [`Machine::step2`] of four spans (a comparison of two leaves).
    #[inline(always)]
    pub fn step4(&mut self, a: &Span, b: &Span, c: &Span, d: &Span) -> R<()> {
        self.step_up_to_4(4, a, b, Some(c), Some(d))
    }

    #[inline(always)]
    fn step_up_to_4(
        &mut self,
        n: u64,
        a: &Span,
        b: &Span,
        c: Option<&Span>,
        d: Option<&Span>,
    ) -> R<()> {
        if self.steps + n <= self.next_check {
            self.steps += n;
            return Ok(());
        }
        self.steps_one_by_one(a, b, c, d)
    }

    #[cold]
    #[inline(never)]
    fn steps_one_by_one(
        &mut self,
        a: &Span,
        b: &Span,
        c: Option<&Span>,
        d: Option<&Span>,
    ) -> R<()> {
        self.step(a)?;
        self.step(b)?;
        if let Some(c) = c {
            self.step(c)?;
        }
        if let Some(d) = d {
            self.step(d)?;
        }
        Ok(())
    }

    /// Counts `n` steps of work done inside a builtin (copying a list, say).
    pub fn charge(&mut self, n: u64, span: Span) -> R<()> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > self.next_check {
            return self.checkpoint(&span);
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn checkpoint(&mut self, span: &Span) -> R<()> {
        let span = *span;
        if self.steps > self.budget.steps {
            return Err(self.out_of_steps(span));
        }
        let elapsed = self.start.at.elapsed();
        if elapsed > self.budget.time {
            return Err(self.out_of_time(elapsed, span));
        }
        let lists = super::cons::list_bytes().saturating_sub(self.start.lists);
        let mut grown = lists;
        if let Some(base) = self.start.resident {
            let now = Instant::now();
            if now >= self.start.next_resident {
                self.start.next_resident = now + RESIDENT_POLL;
                if let Some(r) = resident_bytes() {
                    grown = grown.max(r.saturating_sub(base));
                }
            }
        }
        if grown > self.budget.memory {
            return Err(self.out_of_memory(grown, span));
        }
        if let Some(flag) = &self.interrupt {
            if flag.swap(false, Ordering::Relaxed) {
                return Err(Diagnostic::new("interrupted", "interrupted")
                    .with_label(span, "evaluating here when interrupted")
                    .with_help(
                        "the evaluation was stopped (Ctrl-C); definitions made before it stay",
                    ));
            }
        }
        self.next_check = self.check_after(self.steps);
        Ok(())
    }

    #[cold]
    fn out_of_steps(&self, span: Span) -> Diagnostic {
        Diagnostic::new(
            "budget",
            format!(
                "evaluation ran out of its step budget ({} steps)",
                self.budget.steps
            ),
        )
        .with_label(span, "still evaluating here when the budget ran out")
        .with_help(format!(
            "a loop or recursion probably never ends; if the program really is this big, raise \
             the step budget with `--max-steps {}` (or `Limits::steps` when embedding)",
            round_up(self.budget.steps.saturating_mul(10))
        ))
    }

    /// What the evaluation did before a budget stopped it: the progress a runaway makes.
    fn progress(&self) -> String {
        format!(
            "{} steps in {:.1} s, {} MiB of lists",
            self.steps,
            self.start.at.elapsed().as_secs_f64(),
            mib(super::cons::list_bytes().saturating_sub(self.start.lists)),
        )
    }

    #[cold]
    fn out_of_time(&self, elapsed: Duration, span: Span) -> Diagnostic {
        let limit = self.budget.time.as_secs_f64();
        Diagnostic::new(
            "budget",
            format!(
                "evaluation ran out of its time budget ({limit} s; {})",
                self.progress()
            ),
        )
        .with_label(span, "still evaluating here when the time ran out")
        .with_help(format!(
            "a loop or recursion probably never ends; if the program really runs this long, \
             raise the time budget with `--max-time {}` (or `Limits::time` when embedding)",
            round_up((elapsed.as_secs().max(1)).saturating_mul(10))
        ))
    }

    #[cold]
    fn out_of_memory(&self, grown: u64, span: Span) -> Diagnostic {
        Diagnostic::new(
            "budget",
            format!(
                "evaluation ran out of its memory budget ({} MiB; it took {} MiB: {})",
                mib(self.budget.memory),
                mib(grown),
                self.progress()
            ),
        )
        .with_label(span, "still evaluating here when the memory ran out")
        .with_help(format!(
            "a loop or recursion probably keeps building data that never ends; if the program \
             really needs this much, raise the memory budget with `--max-memory {}` (MiB; or \
             `Limits::memory` when embedding)",
            round_up(mib(self.budget.memory).saturating_mul(4))
        ))
    }

    pub fn steps_left(&self) -> u64 {
        self.budget.steps.saturating_sub(self.steps)
    }

    /// Error for a loop that would need more steps than are left.
    pub fn runaway_loop(&self, form: &str, count: u64, per: u64, span: Span) -> Diagnostic {
        Diagnostic::new(
            "runaway-loop",
            format!(
                "`{form}` would run {count} times (about {} steps), more than the {} steps left \
                 in the budget",
                count.saturating_mul(per.max(1)),
                self.steps_left()
            ),
        )
        .with_label(span, format!("this loop runs {count} times"))
        .with_help(format!(
            "lower the count, or raise the step budget with `--max-steps {}` (or `Limits::steps` \
             when embedding)",
            round_up(self.steps.saturating_add(count.saturating_mul(per.max(1))))
        ))
    }

    pub fn current_task(&self, form: &str, span: Span) -> R<TaskId> {
        self.ctx.last().copied().ok_or_else(|| {
            Diagnostic::new(
                "no-task-context",
                format!("`{form}` is used outside the context of any task"),
            )
            .with_label(span, "no task to attach this to")
            .with_help(
                "stream forms describe one task's program: put them in the body of a \
                 `(define-comm NAME (TASK params…) …)` and call `(NAME task …)`, or wrap them \
                 in `(with-task TASK …)`",
            )
        })
    }
}

pub fn type_error(span: Span, expected: &str, got: &Value, shown: String) -> Diagnostic {
    // A pair that does not end a list is not called a list: "expected a list, found list
    // `(1 . 2)`" read as a contradiction.
    let name = match got {
        Value::Pair(_) if !got.is_list() => "pair",
        _ => got.type_name(),
    };
    let found = if shown == name {
        format!("`{shown}`")
    } else {
        format!("{name} `{shown}`")
    };
    Diagnostic::new("type", format!("expected {expected}, found {found}"))
        .with_label(span, format!("this is {} {name}", article(name)))
}

pub fn article(word: &str) -> &'static str {
    match word.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}

/// Edit distance counting a swap of two neighbouring characters as one edit (optimal string
/// alignment), for "did you mean" suggestions: `fodl` is one edit from `fold`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        d[i * w] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = best;
        }
    }
    d[a.len() * w + b.len()]
}

/// The closest name within a small edit distance, ties broken alphabetically.
pub fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .filter(|c| *c != name)
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c.to_string())
}

/// The smallest 1, 2 or 5 × 10^k at or above `n`: a budget a person would type.
fn round_up(n: u64) -> u64 {
    let mut unit = 1u64;
    loop {
        for m in [1, 2, 5] {
            let v = unit.saturating_mul(m);
            if v >= n || v == u64::MAX {
                return v;
            }
        }
        unit = unit.saturating_mul(10);
    }
}
