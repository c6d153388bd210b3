//! Array sections, block distributions and owners (Eberhart §2.2, §3.3), and what kind of
//! transfer a pair of sections induces: shift ⊂ regular ⊂ general.

use std::fmt;
use std::str::FromStr;

use super::ArrayError;

/// `l:h:s` — the elements `l, l+s, …` up to `h` (h normalized onto the stride, §2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub l: i64,
    pub h: i64,
    pub s: i64,
}

impl Range {
    pub fn new(l: i64, h: i64, s: i64) -> Result<Range, ArrayError> {
        if s <= 0 {
            return Err(ArrayError(format!("stride {s} must be positive")));
        }
        if l < 0 || h < l {
            return Err(ArrayError(format!(
                "section {l}:{h} must have 0 ≤ low ≤ high"
            )));
        }
        // `h = l + i·s` (§2.2): the last element actually in the section.
        let h = l + (h - l) / s * s;
        Ok(Range { l, h, s })
    }

    /// Elements in the section.
    pub fn count(&self) -> i64 {
        (self.h - self.l) / self.s + 1
    }

    /// Regular with respect to block size `k` (§3.2): `l mod k = (h+s) mod k < s` and `s | k`,
    /// so every node holds exactly k/s elements.
    pub fn is_regular(&self, k: i64) -> bool {
        self.l % k == (self.h + self.s) % k && self.l % k < self.s && k % self.s == 0
    }

    /// First element of the section owned by node `n` (a section index), `F(n) = ⌈(n·k − l)/s⌉`
    /// clamped to the section (§3.3).
    pub fn first_local(&self, n: i64, k: i64) -> i64 {
        div_ceil(n * k - self.l, self.s).clamp(0, self.count() - 1)
    }

    /// Last element owned by node `n`, `L(n) = F(n+1) − 1`, clamped.
    pub fn last_local(&self, n: i64, k: i64) -> i64 {
        (div_ceil((n + 1) * k - self.l, self.s) - 1).clamp(0, self.count() - 1)
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.s == 1 {
            write!(f, "{}:{}", self.l, self.h)
        } else {
            write!(f, "{}:{}:{}", self.l, self.h, self.s)
        }
    }
}

fn div_ceil(a: i64, b: i64) -> i64 {
    a.div_euclid(b) + i64::from(a.rem_euclid(b) != 0)
}

/// Owner of element `i` under blocks of `k`: `P(i) = i div k`.
pub fn owner(i: i64, k: i64) -> i64 {
    i.div_euclid(k)
}

/// A 2-D section `A(l:h:s, l:h:s)`: rows, then columns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub rows: Range,
    pub cols: Range,
}

impl FromStr for Section {
    type Err = ArrayError;
    /// `A(0:7, 0:15:2)`; a dimension may be one index (`A(3, 0:7)`), and the stride defaults to 1.
    fn from_str(text: &str) -> Result<Section, ArrayError> {
        let bad = |why: &str| {
            ArrayError(format!(
                "`{text}` is not an array section ({why}); write it as NAME(l:h:s,l:h:s), e.g. A(0:7,0:15:2)"
            ))
        };
        let t = text.trim();
        let open = t.find('(').ok_or_else(|| bad("no `(`"))?;
        let inner = t[open + 1..]
            .strip_suffix(')')
            .ok_or_else(|| bad("no closing `)`"))?;
        let name = t[..open].trim();
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return Err(bad("the name must be letters, digits or _"));
        }
        let dims: Vec<&str> = inner.split(',').map(str::trim).collect();
        let [r, c] = dims.as_slice() else {
            return Err(bad("two dimensions are needed"));
        };
        let range = |d: &str| -> Result<Range, ArrayError> {
            let parts: Vec<i64> = d
                .split(':')
                .map(|p| p.trim().parse::<i64>())
                .collect::<Result<_, _>>()
                .map_err(|_| bad("bounds must be integers"))?;
            match parts.as_slice() {
                [i] => Range::new(*i, *i, 1),
                [l, h] => Range::new(*l, *h, 1),
                [l, h, s] => Range::new(*l, *h, *s),
                _ => Err(bad("a dimension is l:h or l:h:s")),
            }
            .map_err(|e| bad(&e.0))
        };
        Ok(Section {
            name: name.to_string(),
            rows: range(r)?,
            cols: range(c)?,
        })
    }
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({},{})", self.name, self.rows, self.cols)
    }
}

/// Block sizes per dimension (rows, columns): element (i, j) lives on node (i div k_r, j div k_c).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dist {
    pub kr: i64,
    pub kc: i64,
}

impl FromStr for Dist {
    type Err = ArrayError;
    fn from_str(text: &str) -> Result<Dist, ArrayError> {
        let parts: Vec<i64> = text
            .split(',')
            .map(|p| p.trim().parse::<i64>())
            .collect::<Result<_, _>>()
            .map_err(|_| ArrayError(format!("`{text}` is not a distribution; write KR,KC")))?;
        match parts.as_slice() {
            [kr, kc] if *kr > 0 && *kc > 0 => Ok(Dist { kr: *kr, kc: *kc }),
            _ => Err(ArrayError(format!(
                "`{text}` is not a distribution: write two positive block sizes KR,KC"
            ))),
        }
    }
}

/// How array dimensions lie on processor dimensions: rows on rows (Ch. 3), or B's rows on
/// processor columns (Ch. 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alignment {
    Identical,
    Transposed,
}

/// What a transfer between two distributed sections is (§2.2 definitions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Both regular, `k/s = k'/s'` in each dimension: one message per source.
    Shift,
    /// Both regular, and in each dimension one of `k/s`, `k'/s'` divides the other.
    Regular,
    /// Anything else.
    General,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Shift => "shift",
            Kind::Regular => "regular",
            Kind::General => "general",
        })
    }
}

/// The source (or destination) grid of a section: its first node and its size (Eq 3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    pub row: i64,
    pub col: i64,
    pub rows: i64,
    pub cols: i64,
}

/// A transfer of section `from` (distributed by `fd`) to section `to` (by `td`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayTransfer {
    pub from: Section,
    pub fd: Dist,
    pub to: Section,
    pub td: Dist,
    pub align: Alignment,
}

impl ArrayTransfer {
    pub fn new(
        from: Section,
        fd: Dist,
        to: Section,
        td: Dist,
        align: Alignment,
    ) -> Result<ArrayTransfer, ArrayError> {
        // Sections conform (Eq 2.2): the same shape, in the alignment's order.
        let (tr, tc) = match align {
            Alignment::Identical => (to.rows.count(), to.cols.count()),
            Alignment::Transposed => (to.cols.count(), to.rows.count()),
        };
        if (from.rows.count(), from.cols.count()) != (tr, tc) {
            return Err(ArrayError(format!(
                "{from} has {}×{} elements but {to} has {}×{}: the sections must conform",
                from.rows.count(),
                from.cols.count(),
                to.rows.count(),
                to.cols.count()
            )));
        }
        // §2.2 assumes a stride no larger than the block.
        for (r, k, what) in [
            (from.rows, fd.kr, "rows of the source"),
            (from.cols, fd.kc, "columns of the source"),
            (to.rows, td.kr, "rows of the destination"),
            (to.cols, td.kc, "columns of the destination"),
        ] {
            if r.s > k {
                return Err(ArrayError(format!(
                    "the {what} have stride {} larger than the block {k}; the schedules assume stride ≤ block (Eberhart §2.2)",
                    r.s
                )));
            }
        }
        Ok(ArrayTransfer {
            from,
            fd,
            to,
            td,
            align,
        })
    }

    pub fn source_grid(&self) -> Grid {
        grid(&self.from, self.fd)
    }

    pub fn dest_grid(&self) -> Grid {
        grid(&self.to, self.td)
    }

    /// Shift, regular or general (§2.2).
    pub fn kind(&self) -> Kind {
        let regular = self.from.rows.is_regular(self.fd.kr)
            && self.from.cols.is_regular(self.fd.kc)
            && self.to.rows.is_regular(self.td.kr)
            && self.to.cols.is_regular(self.td.kc);
        if !regular {
            return Kind::General;
        }
        let per = |r: Range, k: i64| k / r.s;
        let (a_r, a_c) = (
            per(self.from.rows, self.fd.kr),
            per(self.from.cols, self.fd.kc),
        );
        let (b_r, b_c) = match self.align {
            Alignment::Identical => (per(self.to.rows, self.td.kr), per(self.to.cols, self.td.kc)),
            Alignment::Transposed => (per(self.to.cols, self.td.kc), per(self.to.rows, self.td.kr)),
        };
        if a_r == b_r && a_c == b_c {
            Kind::Shift
        } else if (a_r % b_r == 0 || b_r % a_r == 0) && (a_c % b_c == 0 || b_c % a_c == 0) {
            Kind::Regular
        } else {
            Kind::General
        }
    }

    /// Every message the transfer needs, by owner: element by element, summed per (source
    /// node, destination node), self-messages left out (a node keeps its own data).
    pub fn messages(&self) -> Vec<super::Transfer> {
        let mut units: std::collections::BTreeMap<(super::Node, super::Node), u64> =
            std::collections::BTreeMap::new();
        for i in 0..self.from.rows.count() {
            for j in 0..self.from.cols.count() {
                let a = (
                    self.from.rows.l + i * self.from.rows.s,
                    self.from.cols.l + j * self.from.cols.s,
                );
                let (bi, bj) = match self.align {
                    Alignment::Identical => (i, j),
                    Alignment::Transposed => (j, i),
                };
                let b = (
                    self.to.rows.l + bi * self.to.rows.s,
                    self.to.cols.l + bj * self.to.cols.s,
                );
                let src = (owner(a.0, self.fd.kr), owner(a.1, self.fd.kc));
                let dst = (owner(b.0, self.td.kr), owner(b.1, self.td.kc));
                if src != dst {
                    *units.entry((src, dst)).or_default() += 1;
                }
            }
        }
        units
            .into_iter()
            .map(|((src, dst), units)| super::Transfer { src, dst, units })
            .collect()
    }
}

fn grid(s: &Section, d: Dist) -> Grid {
    let row = owner(s.rows.l, d.kr);
    let col = owner(s.cols.l, d.kc);
    Grid {
        row,
        col,
        rows: owner(s.rows.h, d.kr) - row + 1,
        cols: owner(s.cols.h, d.kc) - col + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_sections_as_printed() {
        // §3.2, k = 4: A(1:11:2) regular; A(3:11:2) not (3 ≥ 2); A(2:11:3) not (3 ∤ 4).
        assert!(Range::new(1, 11, 2).unwrap().is_regular(4));
        assert!(!Range::new(3, 11, 2).unwrap().is_regular(4));
        assert!(!Range::new(2, 11, 3).unwrap().is_regular(4));
    }

    #[test]
    fn parse_and_classify() {
        let a: Section = "A(0:1, 0:4:2)".parse().unwrap();
        assert_eq!(a.to_string(), "A(0:1,0:4:2)");
        assert!("A(0:1)".parse::<Section>().is_err());
        assert!("A(0:1,4:2)".parse::<Section>().is_err());
        assert!("A(0:1,0:4:0)".parse::<Section>().is_err());
        assert!("0,2".parse::<Dist>().is_err());
        // Fig 3.1: A(0:1, 0:4:2) → B(3:4, 3:5), block sizes 1 except k_c = 2: a shift of
        // 2×3 sources by (3,3).
        let t = ArrayTransfer::new(
            a,
            Dist { kr: 1, kc: 2 },
            "B(3:4,3:5)".parse().unwrap(),
            Dist { kr: 1, kc: 1 },
            Alignment::Identical,
        )
        .unwrap();
        let g = t.source_grid();
        assert_eq!((g.rows, g.cols), (2, 3));
        let d = t.dest_grid();
        assert_eq!((d.row - g.row, d.col - g.col), (3, 3));
        assert_eq!(t.kind(), Kind::Shift);
        assert_eq!(t.messages().len(), 6);
    }
}
