//! Arithmetic. Integers are 64-bit and checked: overflow and division by zero are diagnostics, not
//! wrong answers. An integer meets a float → float.

use super::builtins::Args;
use super::machine::{Machine, R};
use super::value::Value;
use crate::diagnostic::Diagnostic;

#[derive(Clone, Copy, Debug)]
enum Num {
    I(i64),
    F(f64),
}

impl Num {
    fn f(self) -> f64 {
        match self {
            Num::I(i) => i as f64,
            Num::F(f) => f,
        }
    }
    fn value(self) -> Value {
        match self {
            Num::I(i) => Value::Int(i),
            Num::F(f) => Value::Float(f),
        }
    }
}

fn num(m: &Machine, a: &Args, i: usize) -> R<Num> {
    match a.get(i) {
        Value::Int(n) => Ok(Num::I(*n)),
        Value::Float(f) => Ok(Num::F(*f)),
        _ => Err(a.type_err(m, i, "a number")),
    }
}

fn overflow(a: &Args, what: &str) -> Diagnostic {
    Diagnostic::new(
        "overflow",
        format!(
            "integer overflow in `{}` ({what} does not fit in 64 bits)",
            a.name
        ),
    )
    .with_label(a.span, "overflows here")
    .with_help("use a float (e.g. `1.0`) if an approximate result is enough")
}

fn div_zero(a: &Args, i: usize) -> Diagnostic {
    Diagnostic::new("div-zero", format!("division by zero in `{}`", a.name))
        .with_label(a.span(i), "this is zero")
}

fn fold(
    m: &Machine,
    a: &Args,
    init: Num,
    int: fn(i64, i64) -> Option<i64>,
    float: fn(f64, f64) -> f64,
) -> R<Value> {
    let mut acc = init;
    for i in 0..a.len() {
        let x = num(m, a, i)?;
        acc = match (acc, x) {
            (Num::I(p), Num::I(q)) => Num::I(int(p, q).ok_or_else(|| overflow(a, "the result"))?),
            (p, q) => Num::F(float(p.f(), q.f())),
        };
    }
    Ok(acc.value())
}

pub fn add(m: &mut Machine, a: &Args) -> R<Value> {
    fold(m, a, Num::I(0), i64::checked_add, |x, y| x + y)
}

pub fn mul(m: &mut Machine, a: &Args) -> R<Value> {
    fold(m, a, Num::I(1), i64::checked_mul, |x, y| x * y)
}

pub fn sub(m: &mut Machine, a: &Args) -> R<Value> {
    let first = num(m, a, 0)?;
    if a.len() == 1 {
        return Ok(match first {
            Num::I(i) => Value::Int(i.checked_neg().ok_or_else(|| overflow(a, "the negation"))?),
            Num::F(f) => Value::Float(-f),
        });
    }
    let mut acc = first;
    for i in 1..a.len() {
        acc = match (acc, num(m, a, i)?) {
            (Num::I(p), Num::I(q)) => {
                Num::I(p.checked_sub(q).ok_or_else(|| overflow(a, "the result"))?)
            }
            (p, q) => Num::F(p.f() - q.f()),
        };
    }
    Ok(acc.value())
}

/// `/`: exact when integers divide evenly, a float otherwise; `(/ x)` is `1/x`.
pub fn div(m: &mut Machine, a: &Args) -> R<Value> {
    let (mut acc, start) = if a.len() == 1 {
        (Num::I(1), 0)
    } else {
        (num(m, a, 0)?, 1)
    };
    for i in start..a.len() {
        let d = num(m, a, i)?;
        acc = match (acc, d) {
            (_, Num::I(0)) => return Err(div_zero(a, i)),
            (Num::I(p), Num::I(q)) => match p.checked_rem(q) {
                Some(0) => Num::I(
                    p.checked_div(q)
                        .ok_or_else(|| overflow(a, "the quotient"))?,
                ),
                Some(_) => Num::F(p as f64 / q as f64),
                None => return Err(overflow(a, "the quotient")),
            },
            (p, q) => {
                if q.f() == 0.0 {
                    return Err(div_zero(a, i));
                }
                Num::F(p.f() / q.f())
            }
        };
    }
    Ok(acc.value())
}

fn int_pair(m: &Machine, a: &Args) -> R<(i64, i64)> {
    let (x, y) = (a.int(m, 0)?, a.int(m, 1)?);
    if y == 0 {
        return Err(div_zero(a, 1));
    }
    Ok((x, y))
}

/// `mod`: the result has the sign of the divisor (Common Lisp `mod`), so `(mod -1 4)` is 3.
pub fn modulo(m: &mut Machine, a: &Args) -> R<Value> {
    let (x, y) = int_pair(m, a)?;
    let r = x
        .checked_rem(y)
        .ok_or_else(|| overflow(a, "the remainder"))?;
    Ok(Value::Int(if r != 0 && (r < 0) != (y < 0) {
        r + y
    } else {
        r
    }))
}

pub fn remainder(m: &mut Machine, a: &Args) -> R<Value> {
    let (x, y) = int_pair(m, a)?;
    Ok(Value::Int(
        x.checked_rem(y)
            .ok_or_else(|| overflow(a, "the remainder"))?,
    ))
}

/// `quotient`: integer division truncating toward zero.
pub fn quotient(m: &mut Machine, a: &Args) -> R<Value> {
    let (x, y) = int_pair(m, a)?;
    Ok(Value::Int(
        x.checked_div(y)
            .ok_or_else(|| overflow(a, "the quotient"))?,
    ))
}

pub fn abs(m: &mut Machine, a: &Args) -> R<Value> {
    Ok(match num(m, a, 0)? {
        Num::I(i) => Value::Int(i.checked_abs().ok_or_else(|| overflow(a, "the result"))?),
        Num::F(f) => Value::Float(f.abs()),
    })
}

fn extreme(m: &Machine, a: &Args, want_max: bool) -> R<Value> {
    let mut best = num(m, a, 0)?;
    let mut any_float = matches!(best, Num::F(_));
    for i in 1..a.len() {
        let x = num(m, a, i)?;
        any_float |= matches!(x, Num::F(_));
        let better = if want_max {
            x.f() > best.f()
        } else {
            x.f() < best.f()
        };
        if better {
            best = x;
        }
    }
    Ok(if any_float {
        Value::Float(best.f())
    } else {
        best.value()
    })
}

pub fn min(m: &mut Machine, a: &Args) -> R<Value> {
    extreme(m, a, false)
}

pub fn max(m: &mut Machine, a: &Args) -> R<Value> {
    extreme(m, a, true)
}

pub fn expt(m: &mut Machine, a: &Args) -> R<Value> {
    match (num(m, a, 0)?, num(m, a, 1)?) {
        (Num::I(b), Num::I(e)) if e >= 0 => {
            let e = u32::try_from(e).map_err(|_| overflow(a, "the power"))?;
            Ok(Value::Int(
                b.checked_pow(e).ok_or_else(|| overflow(a, "the power"))?,
            ))
        }
        (b, e) => Ok(Value::Float(b.f().powf(e.f()))),
    }
}

fn float_to_int(a: &Args, f: f64) -> R<Value> {
    if !f.is_finite() || f.abs() >= 9.2e18 {
        return Err(overflow(a, "the value"));
    }
    Ok(Value::Int(f as i64))
}

fn rounding(m: &Machine, a: &Args, op: fn(f64) -> f64) -> R<Value> {
    match num(m, a, 0)? {
        Num::I(i) => Ok(Value::Int(i)),
        Num::F(f) => float_to_int(a, op(f)),
    }
}

pub fn floor(m: &mut Machine, a: &Args) -> R<Value> {
    rounding(m, a, f64::floor)
}

pub fn ceiling(m: &mut Machine, a: &Args) -> R<Value> {
    rounding(m, a, f64::ceil)
}

pub fn round(m: &mut Machine, a: &Args) -> R<Value> {
    rounding(m, a, f64::round)
}

pub fn truncate(m: &mut Machine, a: &Args) -> R<Value> {
    rounding(m, a, f64::trunc)
}

/// `sqrt`: exact for perfect squares of integers, a float otherwise.
pub fn sqrt(m: &mut Machine, a: &Args) -> R<Value> {
    let x = num(m, a, 0)?;
    if x.f() < 0.0 {
        return Err(Diagnostic::new("type", "square root of a negative number")
            .with_label(a.span(0), "this is negative"));
    }
    if let Num::I(i) = x {
        let r = (i as f64).sqrt().round() as i64;
        for c in [r - 1, r, r + 1] {
            if c >= 0 && c.checked_mul(c) == Some(i) {
                return Ok(Value::Int(c));
            }
        }
    }
    Ok(Value::Float(x.f().sqrt()))
}

pub fn inc(m: &mut Machine, a: &Args) -> R<Value> {
    Ok(match num(m, a, 0)? {
        Num::I(i) => Value::Int(i.checked_add(1).ok_or_else(|| overflow(a, "the result"))?),
        Num::F(f) => Value::Float(f + 1.0),
    })
}

pub fn dec(m: &mut Machine, a: &Args) -> R<Value> {
    Ok(match num(m, a, 0)? {
        Num::I(i) => Value::Int(i.checked_sub(1).ok_or_else(|| overflow(a, "the result"))?),
        Num::F(f) => Value::Float(f - 1.0),
    })
}

/// `(ash X N)`: arithmetic shift left by N (right when N is negative).
pub fn ash(m: &mut Machine, a: &Args) -> R<Value> {
    let (x, n) = (a.int(m, 0)?, a.int(m, 1)?);
    if n >= 0 {
        let n = u32::try_from(n)
            .ok()
            .filter(|&n| n < 64)
            .ok_or_else(|| overflow(a, "the shift"))?;
        let r = x.checked_shl(n).filter(|r| r >> n == x);
        Ok(Value::Int(r.ok_or_else(|| overflow(a, "the shift"))?))
    } else {
        let n = n.unsigned_abs().min(63) as u32;
        Ok(Value::Int(x >> n))
    }
}

fn bits(m: &Machine, a: &Args, init: i64, op: fn(i64, i64) -> i64) -> R<Value> {
    let mut acc = init;
    for i in 0..a.len() {
        acc = op(acc, a.int(m, i)?);
    }
    Ok(Value::Int(acc))
}

pub fn logand(m: &mut Machine, a: &Args) -> R<Value> {
    bits(m, a, -1, |x, y| x & y)
}

pub fn logior(m: &mut Machine, a: &Args) -> R<Value> {
    bits(m, a, 0, |x, y| x | y)
}

pub fn logxor(m: &mut Machine, a: &Args) -> R<Value> {
    bits(m, a, 0, |x, y| x ^ y)
}

pub fn lognot(m: &mut Machine, a: &Args) -> R<Value> {
    Ok(Value::Int(!a.int(m, 0)?))
}

fn compare(m: &Machine, a: &Args, ok: fn(std::cmp::Ordering) -> bool) -> R<Value> {
    let mut prev = num(m, a, 0)?;
    let mut result = true;
    for i in 1..a.len() {
        let x = num(m, a, i)?;
        let ord = match (prev, x) {
            (Num::I(p), Num::I(q)) => p.cmp(&q),
            (p, q) => p
                .f()
                .partial_cmp(&q.f())
                .unwrap_or(std::cmp::Ordering::Less),
        };
        result &= ok(ord);
        prev = x;
    }
    Ok(Value::Bool(result))
}

pub fn num_eq(m: &mut Machine, a: &Args) -> R<Value> {
    compare(m, a, |o| o.is_eq())
}

/// `/=`: true when no two arguments are equal.
pub fn num_ne(m: &mut Machine, a: &Args) -> R<Value> {
    let xs = (0..a.len()).map(|i| num(m, a, i)).collect::<R<Vec<_>>>()?;
    for (i, x) in xs.iter().enumerate() {
        for y in &xs[i + 1..] {
            let same = match (x, y) {
                (Num::I(p), Num::I(q)) => p == q,
                (p, q) => p.f() == q.f(),
            };
            if same {
                return Ok(Value::Bool(false));
            }
        }
    }
    Ok(Value::Bool(true))
}

pub fn lt(m: &mut Machine, a: &Args) -> R<Value> {
    compare(m, a, |o| o.is_lt())
}

pub fn le(m: &mut Machine, a: &Args) -> R<Value> {
    compare(m, a, |o| o.is_le())
}

pub fn gt(m: &mut Machine, a: &Args) -> R<Value> {
    compare(m, a, |o| o.is_gt())
}

pub fn ge(m: &mut Machine, a: &Args) -> R<Value> {
    compare(m, a, |o| o.is_ge())
}

pub fn zerop(m: &mut Machine, a: &Args) -> R<Value> {
    Ok(Value::Bool(num(m, a, 0)?.f() == 0.0))
}

pub fn evenp(m: &mut Machine, a: &Args) -> R<Value> {
    Ok(Value::Bool(a.int(m, 0)? % 2 == 0))
}

pub fn oddp(m: &mut Machine, a: &Args) -> R<Value> {
    Ok(Value::Bool(a.int(m, 0)? % 2 != 0))
}

pub fn to_float(m: &mut Machine, a: &Args) -> R<Value> {
    Ok(Value::Float(num(m, a, 0)?.f()))
}
