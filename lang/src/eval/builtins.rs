//! The builtin procedures, all in one table. Each is a plain `fn` taking the machine and the
//! evaluated arguments (with their spans, so errors point at the offending argument).

use std::rc::Rc;
use ttdl_ir::limits::Limits;

use super::machine::{type_error, Machine, R};
use super::value::Value;
use super::{comm_forms, format, network_forms, numeric};
use crate::diagnostic::Diagnostic;
use crate::span::Span;

pub type BuiltinFn = fn(&mut Machine, &Args) -> R<Value>;

pub struct BuiltinDef {
    pub name: &'static str,
    pub min: usize,
    /// `None`: any number of arguments from `min` up.
    pub max: Option<usize>,
    pub f: BuiltinFn,
    /// Which of the few builtins the evaluator makes in place, when their arguments are the
    /// common case (see `Machine::call_builtin_inline`).
    pub op: Op,
}

/// Builtins the evaluator makes without the call through the table, on their common arguments
/// (two integers, a few values to cons up, a list to read, a value to test); anything else goes through the builtin itself, so
/// results and errors are the builtin's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Other,
    Cons,
    List,
    Add,
    Sub,
    Mul,
    Modulo,
    NumEq,
    Lt,
    Gt,
    Le,
    Ge,
    Car,
    Cdr,
    Cadr,
    Caddr,
    Cddr,
    Nth,
    ListRef,
    Length,
    NullP,
    PairP,
    Not,
    EqP,
}

impl Op {
    /// `car`, `cdr` and their compositions: a half of a pair, or of a half of one.
    pub fn is_half(self) -> bool {
        matches!(self, Op::Car | Op::Cdr | Op::Cadr | Op::Cddr | Op::Caddr)
    }

    /// Arithmetic and comparisons made in place on two integers.
    pub fn is_int_arith(self) -> bool {
        matches!(
            self,
            Op::Add
                | Op::Sub
                | Op::Mul
                | Op::Modulo
                | Op::NumEq
                | Op::Lt
                | Op::Gt
                | Op::Le
                | Op::Ge
        )
    }

    /// The op of the builtin named `name` (at compile time, from the table).
    const fn of(name: &str) -> Op {
        const OPS: &[(&str, Op)] = &[
            ("cons", Op::Cons),
            ("list", Op::List),
            ("+", Op::Add),
            ("-", Op::Sub),
            ("*", Op::Mul),
            ("modulo", Op::Modulo),
            ("mod", Op::Modulo),
            ("=", Op::NumEq),
            ("<", Op::Lt),
            (">", Op::Gt),
            ("<=", Op::Le),
            (">=", Op::Ge),
            ("car", Op::Car),
            ("first", Op::Car),
            ("cdr", Op::Cdr),
            ("rest", Op::Cdr),
            ("cadr", Op::Cadr),
            ("second", Op::Cadr),
            ("caddr", Op::Caddr),
            ("third", Op::Caddr),
            ("cddr", Op::Cddr),
            ("nth", Op::Nth),
            ("list-ref", Op::ListRef),
            ("length", Op::Length),
            ("null?", Op::NullP),
            ("null", Op::NullP),
            ("pair?", Op::PairP),
            ("consp", Op::PairP),
            ("not", Op::Not),
            ("eq?", Op::EqP),
            ("eql", Op::EqP),
        ];
        let mut i = 0;
        while i < OPS.len() {
            if str_eq(OPS[i].0, name) {
                return OPS[i].1;
            }
            i += 1;
        }
        Op::Other
    }
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

impl std::fmt::Debug for BuiltinDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#<builtin {}>", self.name)
    }
}

/// The evaluated arguments of one builtin call.
pub struct Args<'a> {
    pub vals: &'a [Value],
    /// The whole call.
    pub span: Span,
    /// Each argument's span (may be empty when called through `apply`/`map`).
    pub spans: &'a [Span],
    pub name: &'static str,
}

impl Args<'_> {
    pub fn len(&self) -> usize {
        self.vals.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vals.is_empty()
    }

    pub fn get(&self, i: usize) -> &Value {
        self.vals.get(i).unwrap_or(&Value::Nil)
    }

    pub fn span(&self, i: usize) -> Span {
        self.spans.get(i).copied().unwrap_or(self.span)
    }

    pub fn type_err(&self, m: &Machine, i: usize, expected: &str) -> Diagnostic {
        let v = self.get(i);
        type_error(self.span(i), expected, v, m.show(v)).with_note(format!(
            "in argument {} of `{}`",
            i + 1,
            self.name
        ))
    }

    pub fn int(&self, m: &Machine, i: usize) -> R<i64> {
        match self.get(i) {
            Value::Int(n) => Ok(*n),
            _ => Err(self.type_err(m, i, "an integer")),
        }
    }

    /// A count or size: a non-negative integer.
    pub fn count(&self, m: &Machine, i: usize) -> R<u64> {
        match self.get(i) {
            Value::Int(n) if *n >= 0 => Ok(*n as u64),
            _ => Err(self.type_err(m, i, "a non-negative integer")),
        }
    }

    pub fn list(&self, m: &Machine, i: usize) -> R<Vec<Value>> {
        self.get(i)
            .to_vec()
            .ok_or_else(|| self.type_err(m, i, "a list"))
    }

    pub fn string(&self, m: &Machine, i: usize) -> R<Rc<String>> {
        match self.get(i) {
            Value::Str(s) => Ok(s.clone()),
            _ => Err(self.type_err(m, i, "a string")),
        }
    }
}

pub fn call(
    m: &mut Machine,
    b: &'static BuiltinDef,
    vals: &[Value],
    span: Span,
    spans: &[Span],
) -> R<Value> {
    let n = vals.len();
    if n < b.min || b.max.is_some_and(|max| n > max) {
        let expected = match b.max {
            Some(max) if max == b.min => format!("{max} argument{}", super::ast::plural(max)),
            Some(max) => format!("{} to {max} arguments", b.min),
            None => format!("at least {} argument{}", b.min, super::ast::plural(b.min)),
        };
        return Err(Diagnostic::new(
            "arity",
            format!(
                "`{}` takes {expected}, but {n} {} given",
                b.name,
                if n == 1 { "was" } else { "were" }
            ),
        )
        .with_label(
            span,
            format!("called with {n} argument{}", super::ast::plural(n)),
        )
        .with_note(format!("`{}` is a builtin procedure", b.name)));
    }
    let args = Args {
        vals,
        span,
        spans,
        name: b.name,
    };
    (b.f)(m, &args)
}

macro_rules! table {
    ($( $name:literal $min:literal $max:tt $f:path ;)*) => {
        pub static BUILTINS: &[BuiltinDef] = &[
            $( BuiltinDef {
                name: $name,
                min: $min,
                max: table!(@max $max),
                f: $f,
                op: Op::of($name),
            }, )*
        ];
    };
    (@max _) => { None };
    (@max $n:literal) => { Some($n) };
}

table! {
    "+" 0 _ numeric::add;
    "-" 1 _ numeric::sub;
    "*" 0 _ numeric::mul;
    "/" 1 _ numeric::div;
    "mod" 2 2 numeric::modulo;
    "modulo" 2 2 numeric::modulo;
    "remainder" 2 2 numeric::remainder;
    "quotient" 2 2 numeric::quotient;
    "abs" 1 1 numeric::abs;
    "min" 1 _ numeric::min;
    "max" 1 _ numeric::max;
    "expt" 2 2 numeric::expt;
    "floor" 1 1 numeric::floor;
    "ceiling" 1 1 numeric::ceiling;
    "round" 1 1 numeric::round;
    "truncate" 1 1 numeric::truncate;
    "sqrt" 1 1 numeric::sqrt;
    "1+" 1 1 numeric::inc;
    "1-" 1 1 numeric::dec;
    "ash" 2 2 numeric::ash;
    "logand" 0 _ numeric::logand;
    "logior" 0 _ numeric::logior;
    "logxor" 0 _ numeric::logxor;
    "lognot" 1 1 numeric::lognot;
    "=" 1 _ numeric::num_eq;
    "/=" 1 _ numeric::num_ne;
    "<" 1 _ numeric::lt;
    "<=" 1 _ numeric::le;
    ">" 1 _ numeric::gt;
    ">=" 1 _ numeric::ge;
    "zero?" 1 1 numeric::zerop;
    "even?" 1 1 numeric::evenp;
    "odd?" 1 1 numeric::oddp;
    "exact->inexact" 1 1 numeric::to_float;
    "not" 1 1 not;
    "eq?" 2 2 eqp;
    "eql" 2 2 eqp;
    "equal?" 2 2 equalp;
    "equal" 2 2 equalp;
    "null?" 1 1 nullp;
    "null" 1 1 nullp;
    "pair?" 1 1 pairp;
    "consp" 1 1 pairp;
    "list?" 1 1 listp;
    "number?" 1 1 numberp;
    "integer?" 1 1 integerp;
    "string?" 1 1 stringp;
    "symbol?" 1 1 symbolp;
    "keyword?" 1 1 keywordp;
    "procedure?" 1 1 procedurep;
    "task?" 1 1 comm_forms::taskp;
    "list" 0 _ list;
    "cons" 2 2 cons;
    "car" 1 1 car;
    "cdr" 1 1 cdr;
    "first" 1 1 car;
    "rest" 1 1 cdr;
    "second" 1 1 second;
    "third" 1 1 third;
    "cadr" 1 1 second;
    "cddr" 1 1 cddr;
    "caddr" 1 1 third;
    "nth" 2 2 nth;
    "list-ref" 2 2 list_ref;
    "length" 1 1 length;
    "append" 0 _ append;
    "reverse" 1 1 reverse;
    "last" 1 1 last;
    "member" 2 2 member;
    "assoc" 2 2 assoc;
    "map" 2 _ map;
    "mapcar" 2 _ map;
    "for-each" 2 _ for_each;
    "filter" 2 2 filter;
    "remove" 2 2 remove;
    "reduce" 2 3 reduce;
    "apply" 1 _ apply;
    "range" 1 3 range;
    "iota" 1 3 iota;
    "string-append" 0 _ string_append;
    "string-length" 1 1 string_length;
    "symbol->string" 1 1 symbol_to_string;
    "string->symbol" 1 1 string_to_symbol;
    "number->string" 1 1 number_to_string;
    "format" 1 _ format::format;
    "print" 1 1 print;
    "println" 0 _ println;
    "newline" 0 0 newline;
    "error" 1 _ error;
    "gensym" 0 1 gensym;
    "task-name" 1 1 comm_forms::task_name;
    "task-id" 1 1 comm_forms::task_id;
    "message-size" 1 1 comm_forms::message_size;
    "compute" 1 1 comm_forms::compute;
    "write-stream" 2 2 comm_forms::write_stream;
    "read-stream" 2 2 comm_forms::read_stream;
    "broadcast" 1 _ comm_forms::broadcast;
    "current-task" 0 0 comm_forms::current_task;
    "network-tasks" 1 1 network_forms::network_tasks;
    "neighbor" 3 3 network_forms::neighbor;
    "coords" 2 2 network_forms::coords;
    "task-at" 2 2 network_forms::task_at;
    "network-size" 1 1 network_forms::network_size;
    "network-dims" 1 1 network_forms::network_dims;
    "network-kind" 1 1 network_forms::network_kind;
}

/// Binds every builtin, and a few constants, in the global environment.
pub fn install(m: &mut Machine) {
    for b in BUILTINS {
        m.define_global(b.name, Value::Builtin(b));
    }
    m.define_global("t", Value::Bool(true));
    // Directions for `neighbor` (SPEC §1.4), usable unquoted.
    for d in ["east", "west", "north", "south", "up", "down"] {
        let s = m.intern(d);
        m.globals.set(s, Value::Symbol(s));
    }
    m.globals.seal();
}

fn check_size(a: &Args, n: u64, max: u64, what: &str) -> R<()> {
    if n > max {
        return Err(Diagnostic::new(
            "budget",
            format!(
                "`{}` would make {n} {what}, more than the limit of {max}",
                a.name
            ),
        )
        .with_label(a.span, "too big")
        .with_help("build the data in smaller pieces"));
    }
    Ok(())
}

fn bool(b: bool) -> R<Value> {
    Ok(Value::Bool(b))
}

fn not(_: &mut Machine, a: &Args) -> R<Value> {
    bool(!a.get(0).is_true())
}
fn eqp(_: &mut Machine, a: &Args) -> R<Value> {
    bool(a.get(0).is_eq(a.get(1)))
}
fn equalp(_: &mut Machine, a: &Args) -> R<Value> {
    bool(a.get(0).equal(a.get(1)))
}
fn nullp(_: &mut Machine, a: &Args) -> R<Value> {
    bool(matches!(a.get(0), Value::Nil))
}
fn pairp(_: &mut Machine, a: &Args) -> R<Value> {
    bool(matches!(a.get(0), Value::Pair(_)))
}
fn listp(_: &mut Machine, a: &Args) -> R<Value> {
    bool(a.get(0).is_list())
}
fn numberp(_: &mut Machine, a: &Args) -> R<Value> {
    bool(matches!(a.get(0), Value::Int(_) | Value::Float(_)))
}
fn integerp(_: &mut Machine, a: &Args) -> R<Value> {
    bool(matches!(a.get(0), Value::Int(_)))
}
fn stringp(_: &mut Machine, a: &Args) -> R<Value> {
    bool(matches!(a.get(0), Value::Str(_)))
}
fn symbolp(_: &mut Machine, a: &Args) -> R<Value> {
    bool(matches!(a.get(0), Value::Symbol(_)))
}
fn keywordp(_: &mut Machine, a: &Args) -> R<Value> {
    bool(matches!(a.get(0), Value::Keyword(_)))
}
fn procedurep(_: &mut Machine, a: &Args) -> R<Value> {
    bool(matches!(a.get(0), Value::Closure(_) | Value::Builtin(_)))
}

fn list(_: &mut Machine, a: &Args) -> R<Value> {
    Ok(a.vals
        .iter()
        .rev()
        .fold(Value::Nil, |acc, v| Value::cons(v.clone(), acc)))
}
fn cons(_: &mut Machine, a: &Args) -> R<Value> {
    Ok(Value::cons(a.get(0).clone(), a.get(1).clone()))
}
fn car(m: &mut Machine, a: &Args) -> R<Value> {
    match a.get(0) {
        Value::Pair(c) => Ok(Value::clone(&c.car())),
        Value::Nil => Ok(Value::Nil),
        _ => Err(a.type_err(m, 0, "a list")),
    }
}
fn cdr(m: &mut Machine, a: &Args) -> R<Value> {
    match a.get(0) {
        Value::Pair(c) => Ok(Value::clone(&c.cdr())),
        Value::Nil => Ok(Value::Nil),
        _ => Err(a.type_err(m, 0, "a list")),
    }
}
fn nth_of(m: &Machine, a: &Args, list_arg: usize, n: usize) -> R<Value> {
    let l = a.get(list_arg);
    if !matches!(l, Value::Pair(_) | Value::Nil) {
        return Err(a.type_err(m, list_arg, "a list"));
    }
    Ok(l.iter().nth(n).map_or(Value::Nil, |v| Value::clone(&v)))
}
fn second(m: &mut Machine, a: &Args) -> R<Value> {
    nth_of(m, a, 0, 1)
}
fn third(m: &mut Machine, a: &Args) -> R<Value> {
    nth_of(m, a, 0, 2)
}
fn cddr(m: &mut Machine, a: &Args) -> R<Value> {
    let l = a.get(0);
    match l {
        Value::Pair(c) => match &*c.cdr() {
            Value::Pair(d) => Ok(Value::clone(&d.cdr())),
            _ => Ok(Value::Nil),
        },
        Value::Nil => Ok(Value::Nil),
        _ => Err(a.type_err(m, 0, "a list")),
    }
}
/// `(nth N LIST)` (Common Lisp order).
fn nth(m: &mut Machine, a: &Args) -> R<Value> {
    let n = a.count(m, 0)?;
    nth_of(m, a, 1, n as usize)
}
/// `(list-ref LIST N)` (Scheme order).
fn list_ref(m: &mut Machine, a: &Args) -> R<Value> {
    let n = a.count(m, 1)?;
    nth_of(m, a, 0, n as usize)
}
fn length(m: &mut Machine, a: &Args) -> R<Value> {
    match a.get(0) {
        Value::Str(s) => Ok(Value::Int(s.chars().count() as i64)),
        // One walk, not a properness check and then a count: a long list is mostly cache
        // misses, so each pass over it costs.
        v => match v.list_len() {
            Some(n) => Ok(Value::Int(n as i64)),
            None => Err(a.type_err(m, 0, "a list or a string")),
        },
    }
}
fn append(m: &mut Machine, a: &Args) -> R<Value> {
    let Some((last, init)) = a.vals.split_last() else {
        return Ok(Value::Nil);
    };
    let mut items = Vec::new();
    for (i, v) in init.iter().enumerate() {
        match v.to_vec() {
            Some(vs) => items.extend(vs),
            None => return Err(a.type_err(m, i, "a list")),
        }
        check_size(a, items.len() as u64, Limits::LIST_LENGTH, "elements")?;
        m.charge(items.len() as u64, a.span)?;
    }
    // The last list is shared, not copied.
    Ok(items
        .into_iter()
        .rev()
        .fold(last.clone(), |acc, v| Value::cons(v, acc)))
}
fn reverse(m: &mut Machine, a: &Args) -> R<Value> {
    let v = a.list(m, 0)?;
    Ok(v.into_iter().fold(Value::Nil, |acc, x| Value::cons(x, acc)))
}
fn last(m: &mut Machine, a: &Args) -> R<Value> {
    let v = a.get(0);
    if !v.is_list() {
        return Err(a.type_err(m, 0, "a list"));
    }
    Ok(v.iter().last().map_or(Value::Nil, |v| Value::clone(&v)))
}
/// The tail of the list starting at the first `equal?` element, or `#f`... (`nil`, as in Lisp).
fn member(m: &mut Machine, a: &Args) -> R<Value> {
    let x = a.get(0);
    let mut cur = a.get(1).clone();
    if !cur.is_list() {
        return Err(a.type_err(m, 1, "a list"));
    }
    loop {
        let next = match &cur {
            Value::Pair(c) if c.car().equal(x) => return Ok(cur.clone()),
            Value::Pair(c) => Value::clone(&c.cdr()),
            _ => return Ok(Value::Nil),
        };
        cur = next;
    }
}
fn assoc(m: &mut Machine, a: &Args) -> R<Value> {
    let key = a.get(0);
    let l = a.get(1);
    if !l.is_list() {
        return Err(a.type_err(m, 1, "an association list"));
    }
    for entry in l.iter() {
        if let Value::Pair(c) = &*entry {
            if c.car().equal(key) {
                return Ok(Value::clone(&entry));
            }
        }
    }
    Ok(Value::Nil)
}
fn lists_of(m: &Machine, a: &Args) -> R<Vec<Vec<Value>>> {
    (1..a.len()).map(|i| a.list(m, i)).collect()
}
fn map(m: &mut Machine, a: &Args) -> R<Value> {
    let f = a.get(0).clone();
    let lists = lists_of(m, a)?;
    let n = lists.iter().map(Vec::len).min().unwrap_or(0);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let args = lists.iter().map(|l| l[i].clone()).collect();
        out.push(m.apply(&f, args, a.span)?);
    }
    Ok(Value::list(out))
}
fn for_each(m: &mut Machine, a: &Args) -> R<Value> {
    let f = a.get(0).clone();
    let lists = lists_of(m, a)?;
    let n = lists.iter().map(Vec::len).min().unwrap_or(0);
    for i in 0..n {
        let args = lists.iter().map(|l| l[i].clone()).collect();
        m.apply(&f, args, a.span)?;
    }
    Ok(Value::Nil)
}
fn filter_by(m: &mut Machine, a: &Args, keep: bool) -> R<Value> {
    let f = a.get(0).clone();
    let items = a.list(m, 1)?;
    let mut out = Vec::new();
    for x in items {
        if m.apply(&f, vec![x.clone()], a.span)?.is_true() == keep {
            out.push(x);
        }
    }
    Ok(Value::list(out))
}
fn filter(m: &mut Machine, a: &Args) -> R<Value> {
    filter_by(m, a, true)
}
fn remove(m: &mut Machine, a: &Args) -> R<Value> {
    filter_by(m, a, false)
}
/// `(reduce F LIST)` or `(reduce F INITIAL LIST)`: a left fold, `(F acc x)`.
fn reduce(m: &mut Machine, a: &Args) -> R<Value> {
    let f = a.get(0).clone();
    let (mut acc, items) = if a.len() == 3 {
        (Some(a.get(1).clone()), a.list(m, 2)?)
    } else {
        (None, a.list(m, 1)?)
    };
    for x in items {
        acc = Some(match acc {
            None => x,
            Some(acc) => m.apply(&f, vec![acc, x], a.span)?,
        });
    }
    match acc {
        Some(v) => Ok(v),
        None => m.apply(&f, Vec::new(), a.span),
    }
}
/// `(apply F a b … LIST)`.
fn apply(m: &mut Machine, a: &Args) -> R<Value> {
    let f = a.get(0).clone();
    let mut args: Vec<Value> = a.vals[1..].to_vec();
    if let Some(last) = args.pop() {
        match last.to_vec() {
            Some(vs) => args.extend(vs),
            None => return Err(a.type_err(m, a.len() - 1, "a list as the last argument")),
        }
    }
    m.apply(&f, args, a.span)
}
fn int_list(m: &Machine, a: &Args, start: i64, end: i64, step: i64) -> R<Value> {
    if step == 0 {
        return Err(
            Diagnostic::new("type", "a range step of 0 never ends").with_label(a.span, "here")
        );
    }
    let len = if step > 0 {
        (end.saturating_sub(start).max(0) as u64).div_ceil(step as u64)
    } else {
        (start.saturating_sub(end).max(0) as u64).div_ceil(step.unsigned_abs())
    };
    m.check_loop(a.name, len, a.span)?;
    check_size(a, len, Limits::LIST_LENGTH, "elements")?;
    let mut out = Vec::with_capacity(len as usize);
    let mut x = start;
    for _ in 0..len {
        out.push(Value::Int(x));
        x = x.wrapping_add(step);
    }
    Ok(Value::list(out))
}
/// `(range END)`, `(range START END)`, `(range START END STEP)`: END excluded.
fn range(m: &mut Machine, a: &Args) -> R<Value> {
    let (start, end, step) = match a.len() {
        1 => (0, a.int(m, 0)?, 1),
        2 => (a.int(m, 0)?, a.int(m, 1)?, 1),
        _ => (a.int(m, 0)?, a.int(m, 1)?, a.int(m, 2)?),
    };
    int_list(m, a, start, end, step)
}
/// `(iota COUNT [START [STEP]])` (SRFI-1).
fn iota(m: &mut Machine, a: &Args) -> R<Value> {
    let count = a.count(m, 0)? as i64;
    let start = if a.len() > 1 { a.int(m, 1)? } else { 0 };
    let step = if a.len() > 2 { a.int(m, 2)? } else { 1 };
    m.check_loop("iota", count as u64, a.span)?;
    check_size(a, count as u64, Limits::LIST_LENGTH, "elements")?;
    Ok(Value::list((0..count).map(|i| {
        Value::Int(start.wrapping_add(i.wrapping_mul(step)))
    })))
}
fn string_append(m: &mut Machine, a: &Args) -> R<Value> {
    let mut out = String::new();
    for i in 0..a.len() {
        out.push_str(&a.string(m, i)?);
        check_size(a, out.len() as u64, Limits::STRING_LENGTH, "bytes")?;
    }
    Ok(Value::str(out))
}
/// `(string-length S)`: its length in characters, as `length` counts a string.
fn string_length(m: &mut Machine, a: &Args) -> R<Value> {
    Ok(Value::Int(a.string(m, 0)?.chars().count() as i64))
}
fn symbol_to_string(m: &mut Machine, a: &Args) -> R<Value> {
    match a.get(0) {
        Value::Symbol(s) | Value::Keyword(s) => Ok(Value::str(m.name(*s).to_string())),
        _ => Err(a.type_err(m, 0, "a symbol")),
    }
}
fn string_to_symbol(m: &mut Machine, a: &Args) -> R<Value> {
    let s = a.string(m, 0)?;
    Ok(Value::Symbol(m.intern(&s)))
}
fn number_to_string(m: &mut Machine, a: &Args) -> R<Value> {
    match a.get(0) {
        v @ (Value::Int(_) | Value::Float(_)) => Ok(Value::str(m.show(v))),
        _ => Err(a.type_err(m, 0, "a number")),
    }
}
/// `(print X)`: writes X as `display` would, no newline; returns X.
fn print(m: &mut Machine, a: &Args) -> R<Value> {
    let text = a.get(0).to_text(&m.names(), false);
    m.output.push_str(&text);
    Ok(a.get(0).clone())
}
/// `(println X …)`: writes its arguments separated by spaces, then a newline.
fn println(m: &mut Machine, a: &Args) -> R<Value> {
    let parts: Vec<String> = a
        .vals
        .iter()
        .map(|v| v.to_text(&m.names(), false))
        .collect();
    m.output.push_str(&parts.join(" "));
    m.output.push('\n');
    Ok(Value::Nil)
}
fn newline(m: &mut Machine, _: &Args) -> R<Value> {
    m.output.push('\n');
    Ok(Value::Nil)
}
/// `(error "format" args…)`: stops evaluation with a message pointing at the call.
fn error(m: &mut Machine, a: &Args) -> R<Value> {
    let msg = match a.get(0) {
        Value::Str(s) => format::render(m, a, s, 1)?,
        other => {
            let mut parts = vec![other.to_text(&m.names(), false)];
            parts.extend(a.vals[1..].iter().map(|v| m.show(v)));
            parts.join(" ")
        }
    };
    Err(Diagnostic::new("error", msg).with_label(a.span, "raised here"))
}
/// A fresh symbol no program text can spell, for macros that need private names.
fn gensym(m: &mut Machine, a: &Args) -> R<Value> {
    m.effects += 1;
    let prefix = match a.get(0) {
        Value::Str(s) => s.to_string(),
        Value::Symbol(s) => m.name(*s).to_string(),
        _ => "g".to_string(),
    };
    let name = format!("#:{prefix}{}", m.syms.len());
    Ok(Value::Symbol(m.intern(&name)))
}
