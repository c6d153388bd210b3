//! TTDL beside Poseidon, T-CREST's TDM NoC schedule generator (github.com/t-crest/poseidon), on
//! the all-to-all of one word per ordered pair of nodes, N×N bitorus (TTDL's torus) and mesh.
//!
//! `cargo run --release -p ttdl-backend --example bench_poseidon -- [OPTIONS]`
//!
//! - `--poseidon PATH` (or `$POSEIDON`): the `poseidon` binary. Absent: its columns say `n/a`.
//! - `--ttdl PATH` (or `$TTDL`): the `ttdl` binary, default `target/release/ttdl`.
//! - `--sizes 3-10` (or `3,5,8`), `--topologies torus,mesh`, `--seconds 30` (GRASP's and ALNS's
//!   time limit), `--iterations 64` (of the periodic program: 64 is the least TTDL plans as a
//!   periodic schedule), `--ttdl-arg ARG` (repeatable: passed to every `ttdl run`; without a
//!   `--schedule` among them the bench passes `--schedule exact`: `best` also solves the LP, which
//!   on the 10×10 single shot takes minutes and loses to `exact`, and on a 64-iteration sample
//!   does not finish), `--no-periodic`, `--no-poseidon-meta` (GREEDY only).
//!
//! The problem, both sides: every node sends one one-word message (Poseidon: a channel of one
//! phit, `phits="1"`) to every other node; N²(N²−1) messages. Poseidon's timing with
//! `routerDepth="1" linkDepth="0"` — a word injected at slot t crosses its i-th link at t+i and is
//! ejected at t+h+1 — is TTDL's with `--latency 1`; its "Best schedule period" counts slots up to
//! the last ejection, i.e. TTDL's makespan. Poseidon's TDM slot table is that minus its
//! `schedule overlap` (2: no path is shorter than injection, one link, ejection), which is the
//! period a slot table repeats with, i.e. TTDL's periodic all-to-all's period. Placement is the
//! identity on both sides (node (x,y) sends and receives its own words), routes are minimal on
//! both (Poseidon: any shortest path; TTDL: dimension order unless `--ttdl-arg --route …`).
//! Poseidon's switches have no buffers; TTDL's have `--buffer 0` when the binary knows the flag,
//! and the column says "unbounded buffers" otherwise.
//!
//! The bench writes the platform and communication XML files and the TTDL drivers (the stdlib's
//! `all-to-all-on` and `all-to-all-periodic-on`) into a temporary directory, runs everything one
//! after the other, checks that both sides moved the same messages over the same number of hops,
//! and prints a markdown table with the lower bounds computed here (see [`single_shot_bound`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ttdl_backend::topology::Kind;
use ttdl_backend::{Network, NetworkSpec, NodeId};

/// The command line, parsed.
struct Options {
    poseidon: Option<PathBuf>,
    ttdl: Option<PathBuf>,
    sizes: Vec<usize>,
    kinds: Vec<Kind>,
    seconds: u64,
    iterations: u64,
    ttdl_args: Vec<String>,
    periodic: bool,
    meta: bool,
}

fn parse_sizes(s: &str) -> Result<Vec<usize>, String> {
    let bad = || format!("--sizes: expected e.g. `3-10` or `3,5,8`, not `{s}`");
    let mut out = Vec::new();
    for part in s.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) =
                    (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| bad())?),
        }
    }
    if out.iter().any(|&n| n < 3) {
        return Err("--sizes: Poseidon's bitorus needs N ≥ 3".into());
    }
    Ok(out)
}

fn parse_options() -> Result<Options, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut o = Options {
        poseidon: std::env::var_os("POSEIDON").map(PathBuf::from),
        ttdl: Some(
            std::env::var_os("TTDL")
                .map(PathBuf::from)
                .unwrap_or_else(|| root.join("target/release/ttdl")),
        ),
        sizes: (3..=10).collect(),
        kinds: vec![Kind::Torus, Kind::Mesh],
        seconds: 30,
        iterations: 64,
        ttdl_args: Vec::new(),
        periodic: true,
        meta: true,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--poseidon" => o.poseidon = Some(value(&a)?.into()),
            "--ttdl" => o.ttdl = Some(value(&a)?.into()),
            "--sizes" => o.sizes = parse_sizes(&value(&a)?)?,
            "--topologies" => {
                o.kinds = value(&a)?
                    .split(',')
                    .map(|k| match k {
                        "torus" | "bitorus" => Ok(Kind::Torus),
                        "mesh" => Ok(Kind::Mesh),
                        _ => Err(format!("--topologies: torus or mesh, not `{k}`")),
                    })
                    .collect::<Result<_, _>>()?
            }
            "--seconds" => {
                o.seconds = value(&a)?
                    .parse()
                    .map_err(|_| "--seconds: a whole number".to_string())?
            }
            "--iterations" => {
                o.iterations = value(&a)?
                    .parse()
                    .map_err(|_| "--iterations: a whole number".to_string())?
            }
            "--ttdl-arg" => o.ttdl_args.push(value(&a)?),
            "--no-periodic" => o.periodic = false,
            "--no-poseidon-meta" => o.meta = false,
            "-h" | "--help" => {
                println!("{}", HELP);
                std::process::exit(0);
            }
            _ => return Err(format!("unknown argument `{a}`\n{HELP}")),
        }
    }
    Ok(o)
}

const HELP: &str = "bench_poseidon [--poseidon PATH] [--ttdl PATH] [--sizes 3-10] \
[--topologies torus,mesh] [--seconds 30] [--iterations 64] [--ttdl-arg ARG]… [--no-periodic] \
[--no-poseidon-meta]";

// ---------------------------------------------------------------------------------------------
// Lower bounds

/// Jackson's bound for words that each need one cycle on one of `machines` identical resources:
/// a word with head `a` cannot use them before cycle `a`, and the run ends no earlier than `b`
/// cycles after the cycle it used them in. For the words with head ≥ a and tail ≥ b, the
/// resources are busy at least ⌈count / machines⌉ cycles from `a` on, so the end is at least
/// a + ⌈count/machines⌉ − 1 + b; the bound is the best (a, b).
fn jackson(words: &BTreeMap<(u64, u64), u64>, machines: u64) -> u64 {
    let heads: Vec<u64> = {
        let mut v: Vec<u64> = words.keys().map(|k| k.0).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let tails: Vec<u64> = {
        let mut v: Vec<u64> = words.keys().map(|k| k.1).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let mut best = 0;
    for &a in &heads {
        for &b in &tails {
            let count: u64 = words
                .iter()
                .filter(|(&(h, t), _)| h >= a && t >= b)
                .map(|(_, &c)| c)
                .sum();
            if count > 0 {
                best = best.max(a + count.div_ceil(machines) - 1 + b);
            }
        }
    }
    best
}

/// Lower bounds of the all-to-all on `net`, whatever the routes and the order.
struct Bounds {
    /// Makespan of the single-shot all-to-all (Poseidon's period).
    single: u64,
    /// What sets `single`.
    single_by: String,
    /// Period of the periodic all-to-all (Poseidon's slot table).
    period: u64,
    period_by: String,
}

/// The time model both tools share (latency 1 per hop, bufferless or not): a word released at 0
/// and sent over h hops is injected at t ≥ 0, crosses hop i at t + i and is ejected at t + h + 1;
/// the run ends one cycle after the last ejection. So
/// - a node's injection port sends its N²−1 words one per cycle from 0, each needing h + 2 more
///   cycles; its ejection port takes them one per cycle, none before h + 1;
/// - every cut of the network into a column (row) band and the rest is crossed, out of the band,
///   by every word from inside to outside: one of the cut's links for one cycle, no earlier than
///   hop (distance from the source to the band's edge) + 1, and at least (distance from the
///   other side of the edge to the destination) + 2 cycles before the end (lead-in and
///   lead-out). Every band of every dimension is tried.
///
/// Each resource gives [`jackson`]'s bound. For the period, lead-in and lead-out vanish: the
/// bound is the largest words per resource (port: N²−1, cut: ⌈words / links⌉).
fn bounds(net: &Network) -> Bounds {
    let nodes = net.nodes();
    let mut single = (0, String::new());
    let mut period = (0, String::new());
    let keep = |s: &mut (u64, String), v: u64, by: &dyn Fn() -> String| {
        if v > s.0 {
            *s = (v, by());
        }
    };
    for n in 0..nodes {
        let mut inj = BTreeMap::new();
        let mut ej = BTreeMap::new();
        for m in (0..nodes).filter(|&m| m != n) {
            *inj.entry((0, net.distance(n, m) as u64 + 2)).or_insert(0) += 1;
            *ej.entry((net.distance(m, n) as u64 + 1, 1)).or_insert(0) += 1;
        }
        let node = format!("{:?}", net.coords[n]);
        keep(&mut single, jackson(&inj, 1), &|| {
            format!("injection port of {node}")
        });
        keep(&mut single, jackson(&ej, 1), &|| {
            format!("ejection port of {node}")
        });
        keep(&mut period, (nodes - 1) as u64, &|| {
            format!("ports ({} words per node)", nodes - 1)
        });
    }
    let dims = net.spec.dims.clone();
    for (dim, &size) in dims.iter().enumerate() {
        // Bands of consecutive coordinates [lo, lo + len) (wrapping on a torus).
        let wrap = net.spec.kind == Kind::Torus;
        for lo in 0..size {
            for len in 1..size {
                if !wrap && lo + len > size {
                    continue;
                }
                let inside = |n: NodeId| {
                    let x = net.coords[n][dim] as usize;
                    (x + size - lo) % size < len
                };
                let cut: Vec<(NodeId, NodeId)> = net
                    .links
                    .iter()
                    .filter(|l| inside(l.from) && !inside(l.to))
                    .map(|l| (l.from, l.to))
                    .collect();
                if cut.is_empty() {
                    continue;
                }
                let mut words = BTreeMap::new();
                let mut total = 0u64;
                for s in (0..nodes).filter(|&s| inside(s)) {
                    for d in (0..nodes).filter(|&d| !inside(d)) {
                        let head = cut.iter().map(|&(u, _)| net.distance(s, u)).min();
                        let tail = cut.iter().map(|&(_, v)| net.distance(v, d)).min();
                        if let (Some(h), Some(t)) = (head, tail) {
                            *words.entry((h as u64 + 1, t as u64 + 2)).or_insert(0) += 1;
                            total += 1;
                        }
                    }
                }
                let links = cut.len() as u64;
                let what = || {
                    format!(
                        "cut of {} links out of {}-band {lo}..{} ({total} words)",
                        links,
                        ["x", "y", "z"].get(dim).unwrap_or(&"?"),
                        (lo + len - 1) % size
                    )
                };
                keep(&mut single, jackson(&words, links), &what);
                keep(&mut period, total.div_ceil(links), &what);
            }
        }
    }
    Bounds {
        single: single.0,
        single_by: single.1,
        period: period.0,
        period_by: period.1,
    }
}

/// The least total word-hops of the all-to-all: every ordered pair's distance.
fn min_word_hops(net: &Network) -> u64 {
    let n = net.nodes();
    (0..n)
        .flat_map(|a| (0..n).map(move |b| (a, b)))
        .map(|(a, b)| net.distance(a, b) as u64)
        .sum()
}

// ---------------------------------------------------------------------------------------------
// Running the tools

/// Runs a command with a time limit; its stdout, and the wall-clock seconds it took.
fn run_timed(cmd: &mut Command, limit: Duration) -> Result<(String, f64), String> {
    use std::io::Read;
    let start = Instant::now();
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut text);
            }
            text
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("no answer in {} s", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let secs = start.elapsed().as_secs_f64();
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    if !status.success() {
        return Err(format!(
            "{status}: {}",
            err.lines().last().unwrap_or("").trim()
        ));
    }
    Ok((out, secs))
}

/// Poseidon's platform file: N×N, one cycle per router, none per link (SPEC-equal timing).
fn platform_xml(kind: Kind, n: usize) -> String {
    let t = if kind == Kind::Torus {
        "bitorus"
    } else {
        "mesh"
    };
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<platform width=\"{n}\" height=\"{n}\">\n  \
         <topology type=\"{t}\" routerDepth=\"1\" linkDepth=\"0\"></topology>\n</platform>\n"
    )
}

/// Poseidon's communication file: one channel of one phit per ordered pair, written out (rather
/// than `type="all2all"`) so the bench counts what it asked for. Returns (text, channels).
fn communication_xml(n: usize) -> (String, u64) {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<communication type=\"custom\" phits=\"1\">\n",
    );
    let mut count = 0;
    for a in 0..n * n {
        for b in (0..n * n).filter(|&b| b != a) {
            let _ = writeln!(
                s,
                "  <channel from=\"({},{})\" to=\"({},{})\" bandwidth=\"1\" />",
                a % n,
                a / n,
                b % n,
                b / n
            );
            count += 1;
        }
    }
    s.push_str("</communication>\n");
    (s, count)
}

/// One Poseidon run: its best period and the word-hops of that schedule.
struct PoseidonRun {
    period: u64,
    word_hops: u64,
    secs: f64,
}

/// Runs Poseidon; the word-hops come from the link utilisation of its stats file (the busy slots
/// of all links over links × period, to six digits).
fn run_poseidon(
    bin: &Path,
    dir: &Path,
    platform: &Path,
    comm: &Path,
    meta: &[&str],
    links: u64,
    limit: Duration,
) -> Result<PoseidonRun, String> {
    let stats = dir.join(format!("stats-{}", meta.join("-")));
    let _ = std::fs::remove_dir_all(&stats);
    std::fs::create_dir_all(&stats).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(bin);
    cmd.current_dir(dir)
        .arg("-p")
        .arg(platform)
        .arg("-c")
        .arg(comm)
        .args(meta)
        .arg(format!("--cal-stats={}/", stats.display()));
    let (out, secs) = run_timed(&mut cmd, limit)?;
    let period = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("Best schedule period:"))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .ok_or("no `Best schedule period` in Poseidon's output")?;
    if !out.contains("Schedule verified.") {
        return Err("Poseidon did not verify its schedule".into());
    }
    let mut util = None;
    for e in std::fs::read_dir(&stats).map_err(|e| e.to_string())? {
        let text = std::fs::read_to_string(e.map_err(|e| e.to_string())?.path())
            .map_err(|e| e.to_string())?;
        util = text.lines().find_map(|l| {
            l.strip_prefix("# Link_util_best")
                .and_then(|v| v.trim().parse::<f64>().ok())
        });
    }
    let util = util.ok_or("no link utilisation in Poseidon's stats file")?;
    Ok(PoseidonRun {
        period,
        word_hops: (util * (links * period) as f64).round() as u64,
        secs,
    })
}

/// What `ttdl run` printed that the table needs.
#[derive(Default)]
struct TtdlRun {
    messages: u64,
    words: u64,
    word_hops: u64,
    makespan: u64,
    lower_bound: u64,
    /// The achieved period and its printed bound, for a repeating program.
    period: Option<u64>,
    period_bound: Option<u64>,
    secs: f64,
}

/// The first number after `prefix` on the line that starts with it.
fn number_after(text: &str, prefix: &str) -> Option<u64> {
    let rest = text.lines().find_map(|l| l.strip_prefix(prefix))?;
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

fn run_ttdl(
    bin: &Path,
    script: &Path,
    spec: &NetworkSpec,
    extra: &[String],
) -> Result<TtdlRun, String> {
    let mut cmd = Command::new(bin);
    cmd.arg("run")
        .arg(script)
        .args(["--network", &spec.to_string()])
        .args(["--place", "identity", "--latency", "1"])
        .args(extra);
    let (out, secs) = run_timed(&mut cmd, Duration::from_secs(4 * 3600))?;
    let need = |p: &str| number_after(&out, p).ok_or(format!("no `{p}` in ttdl's summary"));
    let words = out
        .lines()
        .find_map(|l| l.strip_prefix("messages:"))
        .and_then(|r| r.split_once('(').map(|(_, w)| w))
        .and_then(|w| w.split_whitespace().next())
        .and_then(|w| w.parse().ok())
        .ok_or("no word count in ttdl's summary")?;
    let period_line = out.lines().find_map(|l| l.strip_prefix("period:"));
    let period = period_line.and_then(|l| {
        let l = l.trim_start();
        let d: String = l.chars().take_while(|c| c.is_ascii_digit()).collect();
        d.parse().ok()
    });
    let period_bound = period_line.and_then(|l| {
        let rest = l.split_once("lower bound ")?.1;
        let d: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        d.parse().ok()
    });
    Ok(TtdlRun {
        messages: need("messages:")?,
        words,
        word_hops: need("placement cost:")?,
        makespan: need("makespan:")?,
        lower_bound: need("lower bound:")?,
        period,
        period_bound,
        secs,
    })
}

// ---------------------------------------------------------------------------------------------
// The table

/// One row: one network.
struct Row {
    n: usize,
    kind: Kind,
    messages: u64,
    min_hops: u64,
    bounds: Bounds,
    single: Result<TtdlRun, String>,
    periodic: Option<Result<TtdlRun, String>>,
    poseidon: Vec<(&'static str, Result<PoseidonRun, String>)>,
    notes: Vec<String>,
    /// Iterations of the periodic program.
    iterations: u64,
}

fn cell_ttdl(r: &Result<TtdlRun, String>, value: impl Fn(&TtdlRun) -> Option<u64>) -> String {
    match r {
        Ok(t) => match value(t) {
            Some(v) => format!("{v} ({:.1} s)", t.secs),
            None => format!("none ({:.1} s)", t.secs),
        },
        Err(e) => format!("error: {e}"),
    }
}

fn cell_poseidon(r: &Result<PoseidonRun, String>) -> String {
    match r {
        Ok(p) => format!("{} / {} ({:.1} s)", p.period, p.period - 2, p.secs),
        Err(e) => format!("error: {e}"),
    }
}

fn print_header(buffers: &str, opts: &Options) {
    println!(
        "All-to-all, one word per ordered pair of nodes, identity placement, 1 cycle per hop, \
         TTDL {buffers}; Poseidon GRASP (β = 0.02) and ALNS (initial GREEDY) {} s each. \
         Poseidon cells: period (= makespan) / slot table (= period − 2). Times are wall clock.\n",
        opts.seconds
    );
    println!(
        "| N | network | messages | single-shot bound | TTDL makespan | TTDL's printed bound | \
         GREEDY | GRASP | ALNS | period bound | TTDL period | TTDL's printed period bound |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
}

fn print_row(r: &Row) {
    let p = |name: &str| {
        r.poseidon
            .iter()
            .find(|(m, _)| *m == name)
            .map(|(_, x)| cell_poseidon(x))
            .unwrap_or_else(|| "n/a".into())
    };
    let periodic = match &r.periodic {
        Some(Ok(t)) if t.period.is_none() => format!(
            "{:.2}/iteration, no steady state ({:.1} s)",
            t.makespan as f64 / r.iterations as f64,
            t.secs
        ),
        Some(x) => cell_ttdl(x, |t| t.period),
        None => "n/a".into(),
    };
    let printed_period_bound = match &r.periodic {
        Some(Ok(t)) => t
            .period_bound
            .map(|b| b.to_string())
            .unwrap_or_else(|| "none".into()),
        _ => "n/a".into(),
    };
    println!(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
        r.n,
        if r.kind == Kind::Torus {
            "torus"
        } else {
            "mesh"
        },
        r.messages,
        r.bounds.single,
        cell_ttdl(&r.single, |t| Some(t.makespan)),
        r.single
            .as_ref()
            .map(|t| t.lower_bound.to_string())
            .unwrap_or_else(|_| "n/a".into()),
        p("GREEDY"),
        p("GRASP"),
        p("ALNS"),
        r.bounds.period,
        periodic,
        printed_period_bound,
    );
}

/// Checks that both sides solved the same problem; each difference becomes a note.
fn same_problem(r: &mut Row, iterations: u64) {
    let mut notes = Vec::new();
    if let Ok(t) = &r.single {
        if t.messages != r.messages || t.words != r.messages {
            notes.push(format!(
                "TTDL single-shot: {} messages / {} words, Poseidon {} channels of 1 phit",
                t.messages, t.words, r.messages
            ));
        }
        if t.word_hops != r.min_hops {
            notes.push(format!(
                "TTDL single-shot: {} word-hops, minimal {}",
                t.word_hops, r.min_hops
            ));
        }
    }
    if let Some(Ok(t)) = &r.periodic {
        if t.messages != r.messages * iterations || t.word_hops != r.min_hops * iterations {
            notes.push(format!(
                "TTDL periodic: {} messages and {} word-hops over {iterations} iterations, \
                 expected {} and {}",
                t.messages,
                t.word_hops,
                r.messages * iterations,
                r.min_hops * iterations
            ));
        }
    }
    for (name, p) in &r.poseidon {
        if let Ok(p) = p {
            if p.word_hops != r.min_hops {
                notes.push(format!(
                    "Poseidon {name}: {} word-hops, minimal {}",
                    p.word_hops, r.min_hops
                ));
            }
        }
    }
    r.notes = notes;
}

fn main() {
    let mut opts = match parse_options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if let Some(p) = &opts.poseidon {
        if !p.is_file() {
            eprintln!("Poseidon binary {} not found.", p.display());
            opts.poseidon = None;
        }
    }
    if opts.poseidon.is_none() {
        eprintln!(
            "No Poseidon binary (--poseidon PATH or $POSEIDON): its columns are skipped. To build \
             it: git clone https://github.com/t-crest/poseidon; apt-get install libpugixml-dev \
             libboost-program-options-dev cmake; in src/CMakeLists.txt link `pugixml` instead of \
             lib/pugixml/build/libpugixml.a; mkdir build && cd build && cmake ../src && make."
        );
    }
    if let Some(t) = &opts.ttdl {
        if !t.is_file() {
            eprintln!(
                "ttdl binary {} not found (cargo build --release, or --ttdl PATH): TTDL's \
                 columns are skipped.",
                t.display()
            );
            opts.ttdl = None;
        }
    }
    let buffer_flag = opts.ttdl.as_ref().is_some_and(|t| {
        Command::new(t)
            .args(["run", "--help"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).contains("--buffer"))
            .unwrap_or(false)
    });
    let mut ttdl_args = opts.ttdl_args.clone();
    if !ttdl_args.iter().any(|a| a.starts_with("--schedule")) {
        ttdl_args.extend(["--schedule".to_string(), "exact".to_string()]);
    }
    let buffers = if buffer_flag {
        ttdl_args.extend(["--buffer".to_string(), "0".to_string()]);
        "`--buffer 0` (bufferless, as Poseidon)"
    } else {
        "with unbounded buffers (this ttdl has no `--buffer`; Poseidon's switches have none)"
    };
    let dir = std::env::temp_dir().join(format!("bench-poseidon-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("cannot make {}: {e}", dir.display());
        std::process::exit(1);
    }
    print_header(buffers, &opts);
    let mut all_notes = Vec::new();
    for &n in &opts.sizes {
        for &kind in &opts.kinds {
            let spec = NetworkSpec::new(kind, vec![n, n]);
            let net = match Network::build(&spec) {
                Ok(net) => net,
                Err(e) => {
                    eprintln!("{spec}: {e}");
                    continue;
                }
            };
            let name = format!(
                "{}{n}x{n}",
                if kind == Kind::Torus { "torus" } else { "mesh" }
            );
            let platform = dir.join(format!("{name}.platform.xml"));
            let comm = dir.join(format!("all-to-all-{n}x{n}.xml"));
            let (comm_text, channels) = communication_xml(n);
            let single_src = dir.join(format!("{name}.ttdl"));
            let periodic_src = dir.join(format!("{name}-periodic.ttdl"));
            let topo = if kind == Kind::Torus { "torus" } else { "mesh" };
            let net_form = format!("(make-network :topology {topo} :dims (list {n} {n}))");
            let written = std::fs::write(&platform, platform_xml(kind, n))
                .and_then(|_| std::fs::write(&comm, comm_text))
                .and_then(|_| {
                    std::fs::write(
                        &single_src,
                        format!(
                            ";; Single-shot all-to-all, one word per pair.\n\
                             (all-to-all-on (network-tasks {net_form}) 1)\n"
                        ),
                    )
                })
                .and_then(|_| {
                    std::fs::write(
                        &periodic_src,
                        format!(
                            ";; Periodic all-to-all, one word per pair per iteration.\n\
                             (all-to-all-periodic-on {net_form} {} 1)\n",
                            opts.iterations
                        ),
                    )
                });
            if let Err(e) = written {
                eprintln!("cannot write into {}: {e}", dir.display());
                std::process::exit(1);
            }
            let links = net.links.len() as u64;
            let mut row = Row {
                n,
                kind,
                messages: channels,
                min_hops: min_word_hops(&net),
                bounds: bounds(&net),
                single: Err("skipped".into()),
                periodic: None,
                poseidon: Vec::new(),
                notes: Vec::new(),
                iterations: opts.iterations,
            };
            if let Some(bin) = &opts.poseidon {
                let limit = Duration::from_secs(opts.seconds * 4 + 120);
                let secs = opts.seconds.to_string();
                let mut runs: Vec<(&'static str, Vec<&str>)> =
                    vec![("GREEDY", vec!["-m", "GREEDY"])];
                if opts.meta {
                    runs.push(("GRASP", vec!["-m", "GRASP", "-b", "0.02", "-t", &secs]));
                    runs.push(("ALNS", vec!["-m", "ALNS", "-i", "GREEDY", "-t", &secs]));
                }
                for (m, args) in runs {
                    let r = run_poseidon(bin, &dir, &platform, &comm, &args, links, limit);
                    row.poseidon.push((m, r));
                }
            }
            if let Some(bin) = &opts.ttdl {
                row.single = run_ttdl(bin, &single_src, &spec, &ttdl_args);
                if opts.periodic {
                    row.periodic = Some(run_ttdl(bin, &periodic_src, &spec, &ttdl_args));
                }
            }
            same_problem(&mut row, opts.iterations);
            print_row(&row);
            all_notes.push((
                name,
                row.bounds.single_by.clone(),
                row.bounds.period_by.clone(),
                std::mem::take(&mut row.notes),
            ));
        }
    }
    println!();
    for (name, single_by, period_by, notes) in all_notes {
        println!(
            "- {name}: single-shot bound set by the {single_by}; period bound by the {period_by}."
        );
        for note in notes {
            println!("  - not the same problem: {note}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
