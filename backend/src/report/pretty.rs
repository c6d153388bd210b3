//! Pretty-printed JSON written from any depth, byte for byte as `serde_json`'s pretty printer
//! writes the same value whole (two-space indents; `[]` and `{}` when empty; `": "` after a
//! key). The plan document ([`super::json`]) is written part by part: its skeleton's members,
//! and its long lists row by row, each row starting at the depth it sits at in the document.
//! The millions of schedule rows of a large plan are written by hand ([`hold_row`]); every other
//! value goes through `serde_json` with [`Indented`] as its formatter, so its numbers and
//! strings are `serde_json`'s own.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::Formatter;

use crate::schedule::{Hold, Resource};

/// Two spaces per level, for up to 32 levels in one write.
const SPACES: &[u8; 64] = b"                                                                ";

/// Writes `depth` levels of indentation.
pub(crate) fn indent(w: &mut impl Write, depth: usize) -> io::Result<()> {
    let mut left = depth * 2;
    while left > 0 {
        let k = left.min(SPACES.len());
        w.write_all(&SPACES[..k])?;
        left -= k;
    }
    Ok(())
}

/// `serde_json`'s `PrettyFormatter` starting `depth` levels in.
pub(crate) struct Indented {
    current: usize,
    has_value: bool,
}

impl Indented {
    pub fn at(depth: usize) -> Indented {
        Indented {
            current: depth,
            has_value: false,
        }
    }
}

impl Formatter for Indented {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.current += 1;
        self.has_value = false;
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.current -= 1;
        if self.has_value {
            w.write_all(b"\n")?;
            indent(&mut IoRef(w), self.current)?;
        }
        w.write_all(b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        indent(&mut IoRef(w), self.current)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.current += 1;
        self.has_value = false;
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.current -= 1;
        if self.has_value {
            w.write_all(b"\n")?;
            indent(&mut IoRef(w), self.current)?;
        }
        w.write_all(b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        indent(&mut IoRef(w), self.current)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// A `?Sized` writer as a sized one.
struct IoRef<'w, W: ?Sized>(&'w mut W);

impl<W: ?Sized + Write> Write for IoRef<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Writes `value` pretty-printed as it stands `depth` levels into a document.
pub(crate) fn value_at<T: Serialize + ?Sized>(
    w: &mut impl Write,
    depth: usize,
    value: &T,
) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(w, Indented::at(depth));
    value.serialize(&mut ser).map_err(io::Error::other)
}

/// Writes a list `depth` levels in, each item written by `item` at `depth + 1` (`[]` when
/// there is none).
pub(crate) fn list_at<W: Write, T>(
    w: &mut W,
    depth: usize,
    items: impl Iterator<Item = T>,
    mut item: impl FnMut(&mut W, usize, T) -> io::Result<()>,
) -> io::Result<()> {
    w.write_all(b"[")?;
    let mut first = true;
    for x in items {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        first = false;
        indent(w, depth + 1)?;
        item(w, depth + 1, x)?;
    }
    if !first {
        w.write_all(b"\n")?;
        indent(w, depth)?;
    }
    w.write_all(b"]")
}

/// Writes a number as `serde_json` does.
fn number(w: &mut impl Write, n: u64) -> io::Result<()> {
    Indented::at(0).write_u64(w, n)
}

/// One `schedule` row, `depth` levels in: `{"end", "link", "msg", "start"}` with the resource
/// as `[from, to]`, `["inject", n]` or `["eject", n]` (as [`super::json`] names it).
pub(crate) fn hold_row(w: &mut impl Write, depth: usize, h: &Hold) -> io::Result<()> {
    let (a, b) = match h.resource() {
        Resource::Link { from, to } => (None, (from, to)),
        Resource::Inject(n) => (Some(&b"\"inject\""[..]), (0, n)),
        Resource::Eject(n) => (Some(&b"\"eject\""[..]), (0, n)),
    };
    w.write_all(b"{\n")?;
    indent(w, depth + 1)?;
    w.write_all(b"\"end\": ")?;
    number(w, h.end())?;
    w.write_all(b",\n")?;
    indent(w, depth + 1)?;
    w.write_all(b"\"link\": [\n")?;
    indent(w, depth + 2)?;
    match a {
        Some(tag) => w.write_all(tag)?,
        None => number(w, b.0 as u64)?,
    }
    w.write_all(b",\n")?;
    indent(w, depth + 2)?;
    number(w, b.1 as u64)?;
    w.write_all(b"\n")?;
    indent(w, depth + 1)?;
    w.write_all(b"],\n")?;
    indent(w, depth + 1)?;
    w.write_all(b"\"msg\": ")?;
    number(w, h.msg() as u64)?;
    w.write_all(b",\n")?;
    indent(w, depth + 1)?;
    w.write_all(b"\"start\": ")?;
    number(w, h.start())?;
    w.write_all(b"\n")?;
    indent(w, depth)?;
    w.write_all(b"}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What `serde_json`'s own pretty printer writes for `v`.
    fn pretty(v: &serde_json::Value) -> String {
        serde_json::to_string_pretty(v).unwrap()
    }

    #[test]
    fn values_at_a_depth_are_the_pretty_printers_lines() {
        let v = json!({"a": [1, [], {}, {"b": [null, "x\n\"y"]}], "c": 1.5, "d": {}});
        let whole = pretty(&json!({"outer": {"inner": v.clone()}}));
        let mut part = Vec::new();
        value_at(&mut part, 2, &v).unwrap();
        let part = String::from_utf8(part).unwrap();
        assert!(
            whole.contains(&format!("\"inner\": {part}\n")),
            "{whole}\n{part}"
        );
    }

    #[test]
    fn lists_and_hold_rows_are_the_pretty_printers_lines() {
        let holds = [
            Hold::new(3, Resource::Link { from: 1, to: 2 }, 4, 12).unwrap(),
            Hold::new(0, Resource::Inject(7), 0, 8).unwrap(),
            Hold::new(10, Resource::Eject(0), 100, 101).unwrap(),
        ];
        let rows: Vec<_> = holds
            .iter()
            .map(|h| {
                let link = match h.resource() {
                    Resource::Link { from, to } => json!([from, to]),
                    Resource::Inject(n) => json!(["inject", n]),
                    Resource::Eject(n) => json!(["eject", n]),
                };
                json!({"end": h.end(), "link": link, "msg": h.msg(), "start": h.start()})
            })
            .collect();
        for n in 0..=holds.len() {
            let whole = pretty(&json!({ "schedule": rows[..n] }));
            let mut part = b"{\n  \"schedule\": ".to_vec();
            list_at(&mut part, 1, holds[..n].iter(), hold_row).unwrap();
            part.extend_from_slice(b"\n}");
            assert_eq!(String::from_utf8(part).unwrap(), whole);
        }
    }
}
