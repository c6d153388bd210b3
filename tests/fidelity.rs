//! FIDELITY.md: every seed result TTDL reproduces or does not, the document's figure beside ours,
//! the verdict and the command that shows it. Cheap figures are computed here, live, so the table
//! cannot drift from the code; the expensive ones (simulations over many loads) are recorded with
//! the example or test that computes them. `UPDATE_EXPECT=1 cargo test` rewrites the file.

use std::fmt::Write as _;
use std::process::Command;

use expect_test::expect_file;
use ttdl_backend::array::hybrid::{combining, hybrid_choice, TABLE_COLUMNS};
use ttdl_backend::array::shift::Shift;
use ttdl_backend::array::transpose::Transpose;
use ttdl_backend::array::warp;
use ttdl_backend::sim::aapc::{self, AapcPhases};
use ttdl_backend::sim::models::compiled::{patterns, sched, Algorithm};
use ttdl_backend::sim::optical::{analytic, torus::Torus};
use ttdl_backend::{Network, NetworkSpec};

/// One row: seed, result, the document's figure, ours, verdict, how to see it.
struct Row {
    seed: &'static str,
    result: String,
    document: String,
    ours: String,
    verdict: String,
    command: String,
}

fn row(
    seed: &'static str,
    result: &str,
    document: &str,
    ours: String,
    verdict: &str,
    command: &str,
) -> Row {
    Row {
        seed,
        result: result.into(),
        document: document.into(),
        ours,
        verdict: verdict.into(),
        command: command.into(),
    }
}

/// "exact" when the lists agree, otherwise the given reason.
fn exact_or(same: bool, otherwise: &str) -> String {
    if same {
        "exact".into()
    } else {
        otherwise.into()
    }
}

fn ttdl(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ttdl"))
        .args(args)
        .output()
        .expect("ttdl runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn field(out: &str, name: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix(name))
        .map(|v| v.split_whitespace().next().unwrap_or("").to_string())
        .unwrap_or_default()
}

fn minsky() -> Vec<Row> {
    // §5.1.2: the 4×4 Jacobi exchange (4 × 16 messages of 8 words), no compute.
    let script = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/jacobi-2d.ttdl"
    ))
    .unwrap()
    .replace("(let ((compute-time 10))", "(let ((compute-time 0))")
    .replace("             2))", "             1))");
    let dir = std::env::temp_dir().join(format!("ttdl-fidelity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("exchange.ttdl");
    std::fs::write(&file, script).unwrap();
    let f = file.to_str().unwrap();
    let m0 = field(&ttdl(&["run", f]), "makespan:");
    let m1 = field(&ttdl(&["run", f, "--latency", "1"]), "makespan:");
    let setup = ttdl(&["run", f, "--setup", "1"]);
    let (ms, bs) = (field(&setup, "makespan:"), field(&setup, "lower bound:"));
    // The default switch buffers hold 2 words; the figures under none and under unbounded ones.
    let other_buffers = |args: &[&str], name: &str| -> Vec<String> {
        ["0", "unbounded"]
            .iter()
            .map(|b| {
                let mut a = args.to_vec();
                a.extend(["--buffer", b]);
                field(&ttdl(&a), name)
            })
            .collect()
    };
    let ms_other = other_buffers(&["run", f, "--setup", "1"], "makespan:");
    let _ = std::fs::remove_dir_all(&dir);
    let fft_file = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/fft-pipelined.ttdl");
    let fft = ttdl(&["run", fft_file]);
    let fft_other = other_buffers(&["run", fft_file], "period:");
    let buffers = |other: &[String], ours: &str| {
        if other.iter().all(|o| o == ours) {
            "with 2-word switch buffers (the default), as with none and with unbounded ones"
                .to_string()
        } else {
            format!(
                "with 2-word switch buffers (the default); {} bufferless, {} unbounded",
                other[0], other[1]
            )
        }
    };
    vec![
        row(
            "Minsky 1993",
            "§5.1.2 Jacobi 4×4 exchange, 64 messages of 8 words",
            "36 network cycles (8 + 1 set-up per direction)",
            format!("{ms} with one set-up cycle per transfer (bound {bs}), {}; {m0} without it, {m1} with one cycle per hop instead", buffers(&ms_other, &ms)),
            &exact_or(ms == "36" && bs == "36", "differs"),
            "ttdl run examples/jacobi-2d.ttdl (compute 0, 1 iteration) --setup 1 [--setup 0, --latency 1]",
        ),
        row(
            "Minsky 1993",
            "§5.2 pipelined FFT, maximum throughput",
            "one iteration per 12 cycles",
            format!("period {}, {}", field(&fft, "period:"), buffers(&fft_other, &field(&fft, "period:"))),
            &exact_or(field(&fft, "period:") == "12", "differs"),
            "ttdl run examples/fft-pipelined.ttdl",
        ),
    ]
}

fn eberhart() -> Vec<Row> {
    let printed: [(u64, u64, u64); 6] = [
        (16, 64, 160),
        (15, 51, 123),
        (17, 53, 125),
        (18, 48, 108),
        (18, 48, 108),
        (22, 49, 103),
    ];
    let ours: Vec<(u64, u64, u64)> = TABLE_COLUMNS
        .iter()
        .map(|(_, o)| {
            let c = combining(4, 2, 1, o);
            (c.total(1, 1, 1), c.total(4, 1, 1), c.total(10, 1, 1))
        })
        .collect();
    let choice: Vec<usize> = [1, 4, 10]
        .iter()
        .map(|&r| hybrid_choice(r, 4, 2, 1, 1).len())
        .collect();
    let shift = |r, c, dr, dc| Shift {
        rows: r,
        cols: c,
        off_r: dr,
        off_c: dc,
        units: 1,
    };
    let tr = |r, c, dr, dc| Transpose {
        rows: r,
        cols: c,
        r: dr,
        c: dc,
        units: 1,
    };
    let examples = [
        shift(2, 3, 3, 3).schedule().len(),
        shift(3, 5, 2, 3).schedule().len(),
        shift(3, 5, 2, 3).schedule_node_free().len(),
        tr(3, 2, 3, 3).schedule().len(),
        tr(2, 3, 0, 1).schedule().len(),
        shift(4, 4, 2, 2).schedule().len(),
        tr(1, 7, -2, 4).schedule().len(),
    ];
    let ncs = [3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 20, 24, 32];
    let curve: Vec<i64> = ncs
        .iter()
        .map(|&n| {
            Transpose {
                rows: 1,
                cols: n,
                r: -(n / 3),
                c: 2 * (n / 3),
                units: 1,
            }
            .s_cmax()
        })
        .collect();
    let s14 = Shift {
        rows: 14,
        cols: 14,
        off_r: 2,
        off_c: 2,
        units: 1,
    };
    let w = warp::unscheduled(&s14.transfers(), 100, 1);
    vec![
        row(
            "Eberhart 1996",
            "§3.2.4 hybrid combining table, columns a–f, totals for 1/4/10 regions",
            "16/64/160, 15/51/123, 17/53/125, 18/48/108, 18/48/108, 22/49/103",
            ours.iter().map(|(a, b, c)| format!("{a}/{b}/{c}")).collect::<Vec<_>>().join(", "),
            &exact_or(ours == printed, "differs"),
            "cargo test --test all array::hybrid",
        ),
        row(
            "Eberhart 1996",
            "Alg 5's choice for 1, 4, 10 regions",
            "b (1 step), d/e (2), f (3)",
            format!("{}, {} and {} combining steps", choice[0], choice[1], choice[2]),
            &exact_or(choice == [1, 2, 3], "differs"),
            "cargo test --test all array::hybrid",
        ),
        row(
            "Eberhart 1996",
            "worked examples, Figs 3.2, 3.3, 3.4, 4.1, 4.2, 5.2 (right), 5.6 (right): steps",
            "3, 3, 3, 2, 2, 2, 4",
            examples.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "),
            &exact_or(examples == [3, 3, 3, 2, 2, 2, 4], "differs"),
            "ttdl array shift --sources 3x5 --offset 2,3; ttdl array transpose --sources 1x7 --offset -2,4",
        ),
        row(
            "Eberhart 1996",
            "Fig 5.6 S_cmax, one row of N_c = 3…32",
            "2 2 3 4 4 5 6 6 8 10 13 16 21 (notes, Eq 4.1)",
            curve.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" "),
            &exact_or(curve == [2, 2, 3, 4, 4, 5, 6, 6, 8, 10, 13, 16, 21], "differs"),
            "cargo test --test all array::fig_5_6",
        ),
        row(
            "Eberhart 1996",
            "Fig 5.2 offset (2,2) on 14×14 (196 processors): scheduled vs unscheduled",
            "2 steps; unscheduled average > 3× (> 6), worst 5×",
            format!("{} steps; unscheduled mean {:.2}, max {} (100 runs)", s14.schedule().len(), w.mean, w.max),
            if w.mean > 6.0 { "trend reproduced (the simulator's arbitration order is a gap in the thesis)" } else { "differs" },
            "ttdl array shift --sources 14x14 --offset 2,2 --unscheduled 100",
        ),
    ]
}

fn yuan() -> Vec<Row> {
    let t41: Vec<String> = analytic::table_4_1(16)
        .iter()
        .map(|p| format!("{} d={}", p.logical.name(), p.d))
        .collect();
    let phases8 = aapc::aapc_phases(&Torus::new(8, 8)).len();
    let phases16 = aapc::aapc_phases(&Torus::new(16, 16)).len();
    let net = Network::build(&"torus:8x8".parse::<NetworkSpec>().unwrap()).unwrap();
    let aapc = AapcPhases::for_network(&net).unwrap();
    let pats = [
        ("ring", patterns::ring(64)),
        ("NN", patterns::nearest_neighbor(8, 8)),
        ("hypercube", patterns::hypercube(6)),
        ("shuffle", patterns::shuffle_exchange(6)),
        ("all-to-all", patterns::all_to_all(64)),
    ];
    // Per pattern: greedy in source order, coloring per round, per pick, static, AAPC, combined.
    let algorithms = [
        Algorithm::Greedy,
        Algorithm::Coloring,
        Algorithm::DynamicColoring,
        Algorithm::StaticColoring,
        Algorithm::OrderedAapc,
        Algorithm::Combined,
    ];
    let conns: Vec<_> = pats
        .iter()
        .map(|(_, pairs)| patterns::connections(&net, pairs).unwrap())
        .collect();
    let degrees: Vec<Vec<usize>> = conns
        .iter()
        .map(|c| {
            algorithms
                .iter()
                .map(|&a| sched::schedule(c, a, Some(&aapc)).unwrap().degree())
                .collect()
        })
        .collect();
    let column = |k: usize| {
        degrees
            .iter()
            .map(|d| d[k].to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let col = |k: usize| degrees.iter().map(|d| d[k]).collect::<Vec<_>>();
    // Greedy in random orders: the mean over 20 seeded orders per pattern.
    let random: Vec<f64> = conns
        .iter()
        .map(|c| {
            (1..=20)
                .map(|s| sched::greedy_random(c, s).degree())
                .sum::<usize>() as f64
                / 20.0
        })
        .collect();
    let random_text = random
        .iter()
        .map(|m| format!("{m:.1}"))
        .collect::<Vec<_>>()
        .join(", ");
    let printed_greedy = [3.0, 6.0, 9.0, 6.0, 92.0];
    let off_greedy: Vec<&str> = pats
        .iter()
        .zip(random.iter().zip(printed_greedy))
        .filter(|(_, (o, t))| ((*o - t) / t).abs() > 0.06)
        .map(|((name, _), _)| *name)
        .collect();
    let table_5_4 = table_5_4(&net, &aapc);
    vec![
        row(
            "Yuan 1998",
            "Table 4.1 on 16×16: multiplexing degree d of each logical topology",
            "all-to-all 512, allXY 32, hypercube 10, torus 4 (closed forms)",
            t41.join(", "),
            "exact",
            "ttdl model --network torus:16x16",
        ),
        row(
            "Yuan 1998",
            "Fig 4.12 crossovers on 16×16 (γ where each topology beats the torus)",
            "hypercube 0.5, allXY 4.25, all-to-all 256.25",
            "hypercube 0.5, allXY 4.278, all-to-all 255.5".into(),
            "within 1% (recorded from cargo test -p ttdl-backend --test all optical_analytic)",
            "ttdl model --network torus:16x16",
        ),
        row(
            "Yuan 1998",
            "§4.1 AAPC phases on N×N tori (N³/8)",
            "8×8: 64, 16×16: 512",
            format!("8×8: {phases8}, 16×16: {phases16}"),
            &exact_or(phases8 == 64 && phases16 == 512, "differs"),
            "cargo test -p ttdl-backend --test all optical_aapc",
        ),
        row(
            "Yuan 1998",
            "Table 5.6 on 8×8, combined scheduler (ring, NN, hypercube, shuffle, all-to-all)",
            "2, 4, 7, 4, 64",
            column(5),
            &exact_or(col(5) == [2, 4, 7, 4, 64], "differs"),
            "ttdl simulate … --model \"compiled algorithm=combined\"",
        ),
        row(
            "Yuan 1998",
            "Table 5.6 greedy column",
            "3, 6, 9, 6, 92",
            format!("in a random order (mean of 20 seeded orders): {random_text}; in source order: {}", column(0)),
            &if off_greedy.is_empty() {
                "within 6% in a random order: the order is not given, and a dynamic scheduler takes requests as they come".to_string()
            } else {
                format!("within 6% in a random order except {} (the order is not given; source order is further off)", off_greedy.join(", "))
            },
            "cargo run --release -p ttdl-backend --example yuan_ch5",
        ),
        row(
            "Yuan 1998",
            "Table 5.6 coloring column (Fig 5.13 read three ways)",
            "2, 4, 7, 4, 83",
            format!(
                "re-sorted once per round {}; after every pick {}; never (static priorities) {}",
                column(1),
                column(2),
                column(3)
            ),
            &exact_or(
                col(1) == [2, 4, 7, 4, 83] || col(2) == [2, 4, 7, 4, 83] || col(3) == [2, 4, 7, 4, 83],
                "differs in part: the static reading gives all-to-all's 83 and matches Table 5.4 (next rows), but the ring 3 and hypercube 8; re-sorting after every pick gives the ring 2 but all-to-all 76; the literal once-per-round sort is furthest off (88)",
            ),
            "cargo run --release -p ttdl-backend --example yuan_ch5",
        ),
        row(
            "Yuan 1998",
            "Table 5.4 (random patterns): greedy, coloring, AAPC, combined, rows 100, 800, 2000, 4000 connections",
            "7.0/6.7/6.9/6.6, 27.2/25.9/26.5/25.6, 53.4/50.4/50.4/49.7, 91.6/83/64/64",
            table_5_4.0,
            &table_5_4.1,
            "cargo run --release -p ttdl-backend --example yuan_ch5 100",
        ),
        row(
            "Yuan 1998",
            "Table 5.5 (500 random redistributions of a 64³ array): combined per bucket 101–200 … 4032",
            "4.6, 9.5, 15.5, 27.6, 35.1, 50.4, 64; patterns per bucket 34, 50, 54, 105, 122, 15, 77, 43",
            "4.5, 8.4, 16.3, 28.0, 35.5, 49.5, 64; patterns per bucket 5, 20, 48, 122, 167, 13, 83, 42 (recorded, seed 1)".into(),
            "trend reproduced: within 5% in every bucket above 400 connections and the same empty buckets; the draw of distributions is not given (ours: processor counts split at random, block sizes powers of two), so the bucket populations and the sparse buckets differ",
            "cargo run --release -p ttdl-backend --example yuan_ch5",
        ),
        row(
            "Yuan 1998",
            "Table 5.6 AAPC column",
            "2, 4, 8, 5, 64",
            column(4),
            "within one configuration: hypercube 7 where Yuan prints 8 (the thesis takes its AAPC phases from Hinrichs et al. [33] without giving them; the construction we use packs the hypercube's connections one phase tighter, and the 64-phase bound is met either way)",
            "cargo test -p ttdl-backend --test all compiled_tables",
        ),
        row(
            "Yuan 1998",
            "Table 3.1 optimal initial channel set s, forward/backward, d = 4, 8, 16, 32",
            "1/1, 2/1, 5/2, 10/3",
            "1/1, 1/1, 3/1, 10/2; within 1% of the best: forward 1, 1, 3–4, 4–11, backward 1, 1, 1–2, 2 (recorded)".into(),
            "differs in part: with Fig 3.5's forward holding (holding 10) the d = 32 forward optimum is Yuan's 10 (with dropping it was 6); elsewhere ours is one or two smaller, the curves are flat near the optimum, and Yuan's s is within 3.4% of our best throughput everywhere",
            "cargo run --release -p ttdl-backend --example yuan_table_3_1",
        ),
    ]
}

/// Yuan Table 5.4 on four rows with 10 random patterns each (the thesis averages 100; the
/// example runs every row): greedy in generation order, static coloring, AAPC, combined. The
/// text of the row and its verdict.
fn table_5_4(net: &Network, aapc: &AapcPhases) -> (String, String) {
    use rand::SeedableRng;
    let printed = [
        (100, [7.0, 6.7, 6.9, 6.6]),
        (800, [27.2, 25.9, 26.5, 25.6]),
        (2000, [53.4, 50.4, 50.4, 49.7]),
        (4000, [91.6, 83.0, 64.0, 64.0]),
    ];
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let mut cells = Vec::new();
    let mut worst = [0f64; 4];
    for (k, thesis) in printed {
        let mut sum = [0usize; 4];
        for _ in 0..10 {
            let pairs = patterns::random(64, k, &mut rng);
            let conns = patterns::connections(net, &pairs).unwrap();
            let order: Vec<usize> = (0..conns.len()).collect();
            let d = [
                sched::greedy(&conns, &order).degree(),
                sched::coloring_static(&conns).degree(),
                sched::schedule(&conns, Algorithm::OrderedAapc, Some(aapc))
                    .unwrap()
                    .degree(),
                sched::schedule(&conns, Algorithm::Combined, Some(aapc))
                    .unwrap()
                    .degree(),
            ];
            for (s, x) in sum.iter_mut().zip(d) {
                *s += x;
            }
        }
        let mean = sum.map(|s| s as f64 / 10.0);
        for j in 0..4 {
            worst[j] = worst[j].max(((mean[j] - thesis[j]) / thesis[j]).abs());
        }
        cells.push(mean.map(|m| format!("{m:.1}")).join("/"));
    }
    let pct = worst.map(|w| (100.0 * w).ceil());
    // Ten patterns per row are noisy (the example's 100 per row, recorded below, are not): the
    // test only asks that no column stray beyond twice the 5 % the verdict claims.
    assert!(pct.iter().all(|&p| p <= 10.0), "Table 5.4 drifted: {pct:?}");
    let verdict = format!(
        "within 5% in every column with 100 patterns per row, as the thesis averages (recorded from the example: largest differences greedy 4.0%, coloring 4.9%, AAPC 4.1%, combined 1.6%); 10 per row here: {}%, {}%, {}%, {}%",
        pct[0], pct[1], pct[2], pct[3]
    );
    (
        format!(
            "{} (greedy in generation order, static coloring)",
            cells.join(", ")
        ),
        verdict,
    )
}

/// τ/τm of one Table 4.1 loop: the program's completion per loop over a lone one-hop message's
/// time, L + 1 cycles (Chittor eq 1.3 with no router delay, checked by `dynsim_latency`).
fn pr_ratio(pattern: &str, model: &str) -> f64 {
    let script = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/pr-channel.ttdl"
    ))
    .unwrap()
    .replace(
        "(defvar pattern 'aa-4nn)",
        &format!("(defvar pattern '{pattern})"),
    );
    assert!(script.contains("(defvar size 515)") && script.contains("(defvar loops 4)"));
    let dir =
        std::env::temp_dir().join(format!("ttdl-fidelity-pr-{}-{pattern}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("pr.ttdl");
    std::fs::write(&file, script).unwrap();
    let out = ttdl(&["simulate", file.to_str().unwrap(), "--model", model]);
    let _ = std::fs::remove_dir_all(&dir);
    let done: f64 = field(&out, "completion").parse().unwrap();
    done / 4.0 / 516.0
}

/// "within N%" when every (ours, theirs) pair is that close (N the largest difference, at least
/// 1), else "differs by N%: why".
fn within(pairs: &[(f64, f64)], why: &str) -> String {
    let worst = pairs
        .iter()
        .map(|(o, t)| ((o - t) / t).abs() * 100.0)
        .fold(0.0, f64::max);
    if worst <= 5.0 {
        format!("within {}%: needs {why}", worst.ceil().max(1.0))
    } else {
        format!("differs by {:.0}%: {why}", worst)
    }
}

fn chittor_and_ding() -> Vec<Row> {
    let shared = "wormhole vc=2 pr=shared";
    let (aa1, aa4) = (pr_ratio("aa-1nn", shared), pr_ratio("aa-4nn", shared));
    let (ab1, ab4) = (pr_ratio("ab-1nn", shared), pr_ratio("ab-4nn", shared));
    let (aa1_sep, aa4_sep) = (
        pr_ratio("aa-1nn", "wormhole vc=2"),
        pr_ratio("aa-4nn", "wormhole vc=2"),
    );
    vec![
        row(
            "Chittor 1991",
            "eqs 1.1–1.3: a lone message's latency under store-and-forward, circuit and wormhole",
            "the formulas",
            "equal, every size and distance tried".into(),
            "exact (recorded from cargo test -p ttdl-backend --test all dynsim_latency)",
            "ttdl simulate … --model store-forward|circuit|wormhole",
        ),
        row(
            "Chittor 1991",
            "Table 4.1 τ/τm at 515 bytes, shared processor–router channel: AA-1NN, AA-4NN",
            "1.98, 8.90",
            format!(
                "{:.2}, {:.2} (separate channels: {:.2}, {:.2})",
                aa1, aa4, aa1_sep, aa4_sep
            ),
            &within(&[(aa1, 1.98), (aa4, 8.90)], "two virtual channels (vc=2); with one, worms waiting for a busy pr-channel block links and AA-4NN takes 10.8"),
            "ttdl simulate examples/pr-channel.ttdl --model \"wormhole vc=2 pr=shared\" (pattern aa-1nn, aa-4nn)",
        ),
        row(
            "Chittor 1991",
            "Table 4.1 τ/τm at 515 bytes, shared processor–router channel: AB-1NN, AB-4NN",
            "2.00, 9.97",
            format!("{:.2}, {:.2}", ab1, ab4),
            &within(&[(ab1, 2.00), (ab4, 9.97)], "the order of the echoes is not given; ours is east, west, north, south, and the mesh's edges shift it"),
            "ttdl simulate examples/pr-channel.ttdl --model \"wormhole vc=2 pr=shared\" (pattern ab-1nn, ab-4nn)",
        ),
        row(
            "Ding et al.",
            "§5 orderings: dynamic within 10% of preload on random mesh traffic; Fig 5 hybrids",
            "orderings",
            "Fig 5 at 1 message in flight, time-out 10, 2 specific processors (128-port crossbar): 50%: 1/2 0.170 > 0/3 0.164; 85%: 2/1 0.224 vs 1/2 0.177; 100%: 0.401 vs 0.200. Fig 4 random mesh: dynamic/preload at best 0.84 (window 1), 0.56 at window 4; preload 0.65 vs circuit 0.37, mesh wormhole 0.33 at window 4".into(),
            "differs: the Fig 5 hybrid orderings hold (at the parameters stated; recorded from examples/pms_sweep.rs, checked at 32 ports by pms_model::fig5_hybrid_orderings_at_small_scale), but dynamic TDM comes within 10% of preload at no window, time-out, slot size or guard, on the crossbar or a 16x8 mesh: first-fit reactive slot assignment does not find the 4-colouring of the neighbour pattern that the compiler preloads, so blocked connections wait for evictions",
            "cargo run --release -p ttdl-backend --example pms_sweep",
        ),
    ]
}

#[test]
fn fidelity_table_is_current() {
    let mut rows = minsky();
    rows.extend(eberhart());
    rows.extend(yuan());
    rows.extend(chittor_and_ding());
    let mut s = String::from(
        "# Fidelity: the seeds' results, theirs beside ours\n\n\
         Generated by `tests/fidelity.rs` (`UPDATE_EXPECT=1 cargo test --test all fidelity` rewrites it);\n\
         figures marked *recorded* come from the example or test named, the others are computed when the\n\
         test runs. A verdict other than *exact* or *within* names the reason.\n\n\
         | seed | result | document | ours | verdict | command |\n|---|---|---|---|---|---|\n",
    );
    for r in &rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | `{}` |",
            r.seed, r.result, r.document, r.ours, r.verdict, r.command
        );
    }
    let exact = rows
        .iter()
        .filter(|r| r.verdict.starts_with("exact"))
        .count();
    let within = rows
        .iter()
        .filter(|r| r.verdict.starts_with("within") || r.verdict.starts_with("trend"))
        .count();
    let _ = writeln!(
        s,
        "\n{} rows: {exact} exact, {within} within a stated margin or as a trend, {} differing or not reproduced.",
        rows.len(),
        rows.len() - exact - within
    );
    expect_file!["../FIDELITY.md"].assert_eq(&s);
}
