//! `ttdl array`: contention-free schedules for array operations on a 2-D mesh (Eberhart 1996)
//! — shifts, transposes and transfers between distributed sections — with the bound each meets,
//! the unscheduled baseline, and the schedule as a TTDL program.

use clap::{Args, Subcommand, ValueEnum};
use ttdl_backend::array::hybrid::{combining, hybrid_choice};
use ttdl_backend::array::section::{Alignment, ArrayTransfer, Dist, Kind, Section};
use ttdl_backend::array::shift::Shift;
use ttdl_backend::array::transpose::Transpose;
use ttdl_backend::array::{max_link_load, traffic, transfer, warp, StepSchedule, Transfer};

use super::{CliError, CliResult};

#[derive(Clone, Debug, Args)]
pub struct ArrayArgs {
    #[command(subcommand)]
    pub op: ArrayOp,
}

#[derive(Clone, Debug, Subcommand)]
pub enum ArrayOp {
    /// Each source of an R×C grid sends one message to the same place in a grid displaced by
    /// (DR, DC) (Eberhart §3.1, Alg 1)
    Shift {
        /// Source grid, rows x columns, e.g. 3x5
        #[arg(long, value_name = "RxC")]
        sources: String,
        /// Displacement of the destination grid, rows,columns (may be negative)
        #[arg(long, value_name = "DR,DC", allow_hyphen_values = true)]
        offset: String,
        /// Also avoid node contention (a node sending and receiving in one step, §3.1.4)
        #[arg(long)]
        node_free: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Transposed alignment: source (i, j) sends to (R + j, C + i), relative to the source
    /// origin (Eberhart Ch. 4, Alg 7)
    Transpose {
        /// Source grid, rows x columns, e.g. 1x7
        #[arg(long, value_name = "RxC")]
        sources: String,
        /// Eberhart's r and c: where source row 0, column 0 sends, relative to the source origin
        #[arg(long, value_name = "R,C", allow_hyphen_values = true)]
        offset: String,
        #[command(flatten)]
        common: Common,
    },
    /// A transfer between two block-distributed array sections (Eberhart §3.2–3.3, Ch. 4)
    Transfer {
        /// Source section, e.g. 'A(0:7,0:15:2)'
        #[arg(long, value_name = "A(l:h:s,l:h:s)")]
        from: String,
        /// Source block sizes, rows,columns
        #[arg(long, value_name = "KR,KC")]
        from_dist: String,
        /// Destination section, e.g. 'B(8:15,0:7)'
        #[arg(long, value_name = "B(l:h:s,l:h:s)")]
        to: String,
        /// Destination block sizes, rows,columns
        #[arg(long, value_name = "KR,KC")]
        to_dist: String,
        /// How the array dimensions lie on the processor dimensions
        #[arg(long, value_enum, default_value_t = Align::Identical)]
        align: Align,
        /// Message combining inside a region: one message per pair (Alg 3), local gather and
        /// scatter (Alg 4), or the hybrid's choice (Alg 5)
        #[arg(long, value_enum, default_value_t = Subroutine::OneToOne)]
        subroutine: Subroutine,
        #[command(flatten)]
        common: Common,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Align {
    Identical,
    Transposed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Subroutine {
    OneToOne,
    GatherScatter,
    Hybrid,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// The schedule as a TTDL program (one phase per step) for `ttdl run` and `ttdl compare`
    Ttdl,
}

#[derive(Clone, Debug, Args)]
pub struct Common {
    /// Start-up cost α of a message (cost α + Lβ, Eberhart §2.1.3)
    #[arg(long, default_value_t = 1)]
    alpha: u64,
    /// Cost β per data unit
    #[arg(long, default_value_t = 1)]
    beta: u64,
    /// Data units per message of a shift or transpose
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    units: u64,
    /// Also run the unscheduled baseline (WARP, Eberhart App. B) N times: min, mean, max steps
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    unscheduled: Option<u64>,
    /// Seed of the unscheduled runs
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// List every step's messages
    #[arg(long)]
    show_steps: bool,
    /// Print the schedule as a program instead of the summary
    #[arg(long, value_enum)]
    emit: Option<Emit>,
    /// Words per data unit in the emitted program
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    words: u64,
}

pub fn run(args: &ArrayArgs) -> CliResult {
    super::print(&render(args)?)?;
    Ok(())
}

/// What `ttdl array` prints.
pub fn render(args: &ArrayArgs) -> Result<String, CliError> {
    match &args.op {
        ArrayOp::Shift {
            sources,
            offset,
            node_free,
            common,
        } => {
            let (rows, cols) = grid(sources)?;
            let (off_r, off_c) = pair(offset, "--offset")?;
            let shift = Shift {
                rows,
                cols,
                off_r,
                off_c,
                units: common.units,
            };
            let (sections, sched) = if *node_free {
                (shift.node_free_sections(), shift.schedule_node_free())
            } else {
                (shift.sections(), shift.schedule())
            };
            let bound = max_link_load(&shift.transfers());
            let head = format!(
                "shift: {rows}x{cols} sources, offset ({off_r},{off_c}), on a {}x{} mesh\n\
                 sections: {}x{} (Eq 3.3{})\n",
                shift.mesh().0,
                shift.mesh().1,
                sections.0,
                sections.1,
                if *node_free {
                    ", node-contention-free §3.1.4"
                } else {
                    ""
                }
            );
            let title =
                format!("Eberhart Alg 1: shift of {rows}x{cols} sources by ({off_r},{off_c})");
            finish(head, &sched, bound, "Alg 1", shift.mesh(), &title, common)
        }
        ArrayOp::Transpose {
            sources,
            offset,
            common,
        } => {
            let (rows, cols) = grid(sources)?;
            let (r, c) = pair(offset, "--offset")?;
            let t = Transpose {
                rows,
                cols,
                r,
                c,
                units: common.units,
            };
            let sched = t.schedule();
            let bound = max_link_load(&t.transfers());
            let head = format!(
                "transpose: {rows}x{cols} sources, (i, j) -> ({r} + j, {c} + i), on a {}x{} mesh\n\
                 S_cmax: {} (Eq 4.1)\n",
                t.mesh().0,
                t.mesh().1,
                t.s_cmax()
            );
            let title =
                format!("Eberhart Alg 7: transpose of {rows}x{cols} sources, offset ({r},{c})");
            finish(head, &sched, bound, "Alg 7", t.mesh(), &title, common)
        }
        ArrayOp::Transfer {
            from,
            from_dist,
            to,
            to_dist,
            align,
            subroutine,
            common,
        } => {
            let usage = |e: ttdl_backend::array::ArrayError| CliError::Usage(e.0);
            let from: Section = from.parse().map_err(usage)?;
            let to: Section = to.parse().map_err(usage)?;
            let fd: Dist = from_dist.parse().map_err(usage)?;
            let td: Dist = to_dist.parse().map_err(usage)?;
            let alignment = match align {
                Align::Identical => Alignment::Identical,
                Align::Transposed => Alignment::Transposed,
            };
            let t = ArrayTransfer::new(from, fd, to, td, alignment).map_err(usage)?;
            let sub = match subroutine {
                Subroutine::OneToOne => transfer::Subroutine::OneToOne,
                Subroutine::GatherScatter => transfer::Subroutine::GatherScatter,
                Subroutine::Hybrid => transfer::Subroutine::Hybrid {
                    alpha: common.alpha,
                    beta: common.beta,
                },
            };
            let plan = transfer::plan_with(&t, sub);
            let g = t.source_grid();
            let d = t.dest_grid();
            let mesh = (
                (g.row + g.rows).max(d.row + d.rows),
                (g.col + g.cols).max(d.col + d.cols),
            );
            let mut head = format!(
                "transfer: {} (blocks {}x{}) -> {} (blocks {}x{}), {} alignment\n\
                 kind: {} ({} messages; source grid {}x{} at ({},{}), destination grid {}x{} at ({},{}))\n\
                 method: {}\n",
                t.from, fd.kr, fd.kc, t.to, td.kr, td.kc,
                match align { Align::Identical => "identical", Align::Transposed => "transposed" },
                plan.kind, plan.schedule.transfers().count(),
                g.rows, g.cols, g.row, g.col, d.rows, d.cols, d.row, d.col,
                plan.method
            );
            if plan.kind == Kind::Regular && alignment == Alignment::Identical {
                let regions = plan.regions.unwrap_or(1) as u64;
                head += &combining_line(&t, *subroutine, regions, common);
            }
            if let Some(limit) = plan.limit {
                head += &match alignment {
                    Alignment::Identical => format!(
                        "thesis length: {limit} (reg·M, Theorems 2 and 3, with the shift, gather and scatter steps)\n"
                    ),
                    Alignment::Transposed => format!(
                        "thesis length: {limit} (S·reg, Alg 7 on base patterns, §4.2, with the shift steps)\n"
                    ),
                };
            }
            let title = format!("Eberhart: transfer {} -> {}", t.from, t.to);
            finish(
                head,
                &plan.schedule,
                plan.bound,
                &plan.method,
                mesh,
                &title,
                common,
            )
        }
    }
}

/// The base pattern of a regular transfer (Eq 3.5) and what the chosen combining costs per
/// region (Algs 3–5).
fn combining_line(t: &ArrayTransfer, sub: Subroutine, regions: u64, c: &Common) -> String {
    let ratio = |a: i64, b: i64| ((b + a - 1) / a).max(1) as u64;
    let per = |s: i64, k: i64| k / s;
    let (ar, ac) = (per(t.from.rows.s, t.fd.kr), per(t.from.cols.s, t.fd.kc));
    let (br, bc) = (per(t.to.rows.s, t.td.kr), per(t.to.cols.s, t.td.kc));
    // R×C → R'×C' (Eq 3.5).
    let (r, cc, r2, c2) = (ratio(ar, br), ratio(ac, bc), ratio(br, ar), ratio(bc, ac));
    let (sources, dests) = (r * cc, r2 * c2);
    let pow2 = sources.is_power_of_two() && dests.is_power_of_two();
    let order: Vec<bool> = match sub {
        Subroutine::OneToOne => Vec::new(),
        Subroutine::GatherScatter if pow2 => {
            let mut o = vec![true; sources.trailing_zeros() as usize];
            o.extend(vec![false; dests.trailing_zeros() as usize]);
            o
        }
        Subroutine::Hybrid if pow2 => hybrid_choice(regions.max(1), sources, dests, c.alpha, c.beta),
        Subroutine::GatherScatter => {
            // Halving in each dimension of the pattern (Alg 4), outside the cost model.
            let clog = |n: u64| 64 - (n - 1).leading_zeros();
            return format!(
                "base pattern: {r}x{cc} -> {r2}x{c2}; combining: {} gather(s), {} scatter(s), halving each dimension (the cost model of Eq 3.10 needs powers of two)\n",
                clog(r) + clog(cc),
                clog(r2) + clog(c2)
            );
        }
        _ => {
            return format!(
                "base pattern: {r}x{cc} -> {r2}x{c2}; combining needs powers of two (Alg 5), one-to-one used\n"
            )
        }
    };
    let cost = combining(sources, dests, 1, &order);
    format!(
        "base pattern: {r}x{cc} -> {r2}x{c2}; combining: {} gather(s), {} scatter(s); per region {} on the bottleneck + {} once (α={}, β={})\n",
        cost.gathers,
        cost.scatters,
        cost.transmission(c.alpha, c.beta),
        cost.overhead(c.alpha, c.beta),
        c.alpha,
        c.beta
    )
}

fn finish(
    mut out: String,
    sched: &StepSchedule,
    bound: usize,
    method: &str,
    mesh: (i64, i64),
    title: &str,
    c: &Common,
) -> Result<String, CliError> {
    if let Some(Emit::Ttdl) = c.emit {
        return Ok(traffic::to_ttdl(sched, mesh, c.words, title));
    }
    if let Some((step, ch)) = sched.link_conflict() {
        return Err(CliError::Internal(format!(
            "{method} put two messages on channel {:?}->{:?} in step {step}",
            ch.0, ch.1
        )));
    }
    let verdict = if sched.len() == bound {
        "optimal".to_string()
    } else if sched.len() < bound {
        format!(
            "{} below it, combining sends fewer messages",
            bound - sched.len()
        )
    } else {
        format!("{} above it", sched.len() - bound.min(sched.len()))
    };
    out += &format!(
        "steps: {}\nlower bound: {bound} (the most messages on one directed channel): {verdict}\ntime: {} (each step as long as its longest message, α + Lβ with α={}, β={})\n",
        sched.len(),
        sched.time(c.alpha, c.beta),
        c.alpha,
        c.beta
    );
    if let Some(n) = c.unscheduled {
        let all: Vec<Transfer> = sched.transfers().copied().collect();
        let w = warp::unscheduled(&all, n, c.seed);
        out += &format!(
            "unscheduled (WARP, {} runs): min {}, mean {:.2}, max {} steps\n",
            w.runs, w.min, w.mean, w.max
        );
    }
    if c.show_steps {
        for (k, step) in sched.steps.iter().enumerate() {
            let msgs: Vec<String> = step
                .iter()
                .map(|t| format!("({},{})->({},{})", t.src.0, t.src.1, t.dst.0, t.dst.1))
                .collect();
            out += &format!("  step {}: {}\n", k + 1, msgs.join(" "));
        }
    }
    Ok(out)
}

fn grid(text: &str) -> Result<(i64, i64), CliError> {
    let bad = || {
        CliError::Usage(format!(
            "--sources `{text}`: write ROWSxCOLS with both at least 1, e.g. 3x5"
        ))
    };
    let (r, c) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let r: i64 = r.trim().parse().map_err(|_| bad())?;
    let c: i64 = c.trim().parse().map_err(|_| bad())?;
    if !(1..=4096).contains(&r) || !(1..=4096).contains(&c) {
        return Err(bad());
    }
    Ok((r, c))
}

fn pair(text: &str, flag: &str) -> Result<(i64, i64), CliError> {
    let bad = || {
        CliError::Usage(format!(
            "{flag} `{text}`: write two integers A,B, e.g. 2,3 or -2,4"
        ))
    };
    let (a, b) = text.split_once(',').ok_or_else(bad)?;
    let a: i64 = a.trim().parse().map_err(|_| bad())?;
    let b: i64 = b.trim().parse().map_err(|_| bad())?;
    if a.abs() > 4096 || b.abs() > 4096 {
        return Err(bad());
    }
    Ok((a, b))
}
