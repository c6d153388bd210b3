//! No input may panic: random token soup, mutated examples, random small programs and random
//! (inconsistent) Traffic documents go through the whole pipeline — reader, evaluator, task graph,
//! placement, routing, scheduling, verification, switch programs, replay and every dynamic model —
//! and every failure must be an error value with a message.
//!
//! Case counts are small so the suite stays fast in debug builds; raise `PROPTEST_CASES` to fuzz
//! longer, and set `TTDL_FUZZ_LOG` to see every case and error on standard error.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use proptest::prelude::*;
use ttdl::session::Session;
use ttdl_backend::place::{self, PlaceMethod};
use ttdl_backend::route::{self, RouteMethod};
use ttdl_backend::schedule::{self, verify, Hardware, Method, Problem, ScheduleError};
use ttdl_backend::sim::drive::program::{simulate, SimOptions};
use ttdl_backend::sim::models::scheduled::replay;
use ttdl_backend::sim::registry::{self, ModelContext};
use ttdl_backend::{switch, tasks_file, Network, NetworkSpec};
use ttdl_ir::traffic::{Message, Op, Phase, Task, Traffic};
use ttdl_lang::Limits;

/// Small enough that a runaway script stops in milliseconds in a debug build.
fn budget() -> Limits {
    Limits {
        steps: 200_000,
        depth: 200,
        tasks: 256,
        messages: 2_048,
        ..Limits::default()
    }
}

thread_local! {
    /// A session with the standard library loaded once per test thread.
    static BASE: Session = Session::with_budget(budget()).unwrap_or_else(|e| panic!("{e}"));
}

/// A fresh copy of the session with the standard library.
fn base_session() -> Session {
    BASE.with(Session::clone)
}

/// `cases` unless `PROPTEST_CASES` asks for another count.
fn config(cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(cases);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Runs `f`, turning a panic into a test failure that shows `what` (proptest then shrinks it).
fn no_panic<T>(what: &str, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("panic ({msg}) on:\n{what}")
        }
    }
}

/// Evaluates `source` in `session`; on success also builds the traffic. Every error must render
/// to a message. Returns the traffic when there is one.
fn evaluate(mut session: Session, source: &str) -> Option<Traffic> {
    no_panic(source, move || {
        match session.eval_source("fuzz.ttdl", source) {
            Ok(_) => {}
            Err(d) => {
                assert!(!d.is_empty(), "an error without diagnostics on:\n{source}");
                let text = session.render(&d);
                assert!(text.contains("error["), "{text}");
                return None;
            }
        }
        let _ = session.take_output();
        match session.traffic(None) {
            Ok(t) => Some(t),
            Err(d) => {
                assert!(!d.is_empty(), "an error without diagnostics on:\n{source}");
                assert!(session.render(&d).contains("error["));
                None
            }
        }
    })
}

// ---------------------------------------------------------------------------------------------
// The backend, every stage, on one traffic and network.

fn check_message(stage: &str, e: impl std::fmt::Display) {
    let text = e.to_string();
    if std::env::var_os("TTDL_FUZZ_LOG").is_some() {
        eprintln!("ERROR {stage}: {text}");
    }
    assert!(
        !text.trim().is_empty(),
        "{stage}: an error without a message"
    );
}

/// Sizes beyond which the backend is not driven from a unit test (the work is real, not a hang).
fn small_enough(t: &Traffic) -> bool {
    t.tasks.len() <= 64
        && t.messages.len() <= 128
        && t.messages.iter().map(|m| m.size as u128).sum::<u128>() <= 20_000
        && t.tasks
            .iter()
            .flat_map(|t| &t.ops)
            .map(|op| match op {
                Op::Compute(c) => *c as u128,
                _ => 0,
            })
            .sum::<u128>()
            <= 100_000
}

#[derive(Clone, Copy, Debug)]
struct Choices {
    place: PlaceMethod,
    route: RouteMethod,
    schedule: Method,
    seed: u64,
    models: bool,
}

/// Place, route, schedule, verify, build switch programs, replay, then every dynamic model.
fn backend(traffic: &Traffic, spec: &NetworkSpec, c: Choices) {
    let what = format!("{spec} {c:?}\n{traffic:?}");
    no_panic(&what, || backend_stages(traffic, spec, c));
}

fn backend_stages(traffic: &Traffic, spec: &NetworkSpec, c: Choices) {
    if std::env::var_os("TTDL_FUZZ_LOG").is_some() {
        eprintln!("CASE {spec} {c:?}\n{traffic:?}");
    }
    let network = match Network::build(spec) {
        Ok(n) => n,
        Err(e) => return check_message("network", e),
    };
    let placement = match place::place(traffic, &network, c.place, c.seed) {
        Ok(p) => p,
        Err(e) => return check_message("place", e),
    };
    let routing = match route::route(traffic, &network, &placement, c.route, c.seed) {
        Ok(r) => r,
        Err(e) => return check_message("route", e),
    };
    let hardware = Hardware {
        ports: 1,
        hop_latency: c.seed % 2,
        setup: 0,
        buffer: [Hardware::BUFFER, Some(0), None][(c.seed % 3) as usize],
    };
    match schedule::schedule(
        traffic, &network, &placement, &routing, c.schedule, hardware,
    ) {
        Ok(s) => {
            let problem = Problem::new(traffic, &network, &placement, &routing, hardware)
                .unwrap_or_else(|e| panic!("a scheduled problem cannot be rebuilt: {e}"));
            if let Err(v) = verify::verify(&problem, &s) {
                panic!("the verifier rejects a returned schedule: {}", v.0);
            }
            if std::env::var_os("TTDL_FUZZ_LOG").is_some() {
                eprintln!("SCHEDULED");
            }
            let programs = switch::build(&problem, &s);
            let _ = programs.to_string();
            if let Err(e) = replay::replay(traffic, &network, &placement, &routing, &s) {
                panic!("the switch programs do not replay the schedule: {e}");
            }
        }
        Err(e @ (ScheduleError::Invalid { .. } | ScheduleError::Lp(_))) => {
            panic!("the scheduler failed internally: {e}")
        }
        Err(e) => check_message("schedule", e),
    }
    let _ = tasks_file::write(traffic, Some((&network, &placement)));
    if !c.models {
        return;
    }
    let ctx = ModelContext::new(&network)
        .with_program(traffic, &placement)
        .with_seed(c.seed);
    let opts = SimOptions {
        max_cycles: 200_000,
        ..SimOptions::for_program(traffic, &network, &placement)
    };
    for entry in registry::MODELS {
        for extra in entry.compare {
            let spec = format!("{} {extra}", entry.name);
            let mut model = match registry::build(spec.trim(), &ctx) {
                Ok(m) => m,
                Err(e) => {
                    check_message(&spec, e);
                    continue;
                }
            };
            if std::env::var_os("TTDL_FUZZ_LOG").is_some() {
                eprintln!("MODEL {spec}");
            }
            if let Err(e) = simulate(traffic, &placement, &network, model.as_mut(), &opts) {
                check_message(&spec, e);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Strategies.

const WORDS: &[&str] = &[
    "deftask",
    "with-task",
    "write-stream",
    "read-stream",
    "compute",
    "iterate",
    "sequence",
    "broadcast",
    "synchronize",
    "defmessage",
    "define-comm",
    "task",
    "define",
    "lambda",
    "let",
    "if",
    "cond",
    "case",
    "while",
    "set!",
    "quote",
    "quasiquote",
    "list",
    "car",
    "cdr",
    "cons",
    "+",
    "-",
    "*",
    "/",
    "mod",
    "expt",
    "=",
    "<",
    "make-network",
    "network-tasks",
    "neighbor",
    "coords",
    "task-at",
    "target",
    "define-mapping",
    "println",
    "format",
    "apply",
    "map",
    "vector",
    "string-append",
    "t0",
    "t1",
    "t2",
    "x",
    "n",
    "nil",
    "#t",
    "#f",
    ":topology",
    ":dims",
    ":mapping",
    ":edges",
    ":place",
    ":route",
    ":schedule",
    ":seed",
    "mesh",
    "torus",
    "hypercube",
    "ring",
    "line",
    "crossbar",
    "diamond",
    "graph",
    "'mesh",
    "east",
    "north",
];

const ODD: &[&str] = &[
    "(",
    "(",
    "(",
    ")",
    ")",
    ")",
    "'",
    "`",
    ",",
    ",@",
    "#|",
    "|#",
    ";x\n",
    "\"s\"",
    "\"unclosed",
    "\"a\\\"b\"",
    "\"\\",
    "0",
    "-1",
    "1.5",
    "1e999",
    "-0",
    "99999999999999999999999",
    "9223372036854775807",
    "-9223372036854775808",
    "4294967296",
    ".",
    "#",
    "#\\a",
    "λ",
    "é",
    "\u{feff}",
    "\u{0}",
    "\u{7f}",
    "🦀",
    "\t",
    "\n",
    "[",
    "]",
    "{",
    "}",
    "|",
    "\\",
];

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(WORDS).prop_map(str::to_string),
        3 => proptest::sample::select(ODD).prop_map(str::to_string),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => "[a-z0-9:#-]{1,6}",
    ]
}

fn soup() -> impl Strategy<Value = String> {
    proptest::collection::vec(token(), 0..60).prop_map(|t| t.join(" "))
}

fn spec() -> impl Strategy<Value = NetworkSpec> {
    let named = proptest::sample::select(vec![
        "mesh:1x1",
        "mesh:1x4",
        "mesh:2x3",
        "mesh:3x3",
        "mesh:2x2x2",
        "torus:3x2",
        "torus:1x3",
        "ring:1",
        "ring:2",
        "ring:5",
        "line:1",
        "line:3",
        "hypercube:1",
        "hypercube:3",
        "crossbar:1",
        "crossbar:4",
        "diamond:2x2",
        "diamond:1x3",
        "graph:1",
        "graph:0-1,1-2,2-3",
    ])
    .prop_map(|s| {
        s.parse::<NetworkSpec>()
            .unwrap_or_else(|e| panic!("{s}: {e}"))
    });
    let graph = (
        2usize..6,
        proptest::collection::vec((0usize..6, 0usize..6), 0..8),
    )
        .prop_map(|(n, edges)| {
            let mut s = NetworkSpec::new(ttdl_ir::topology::Kind::Graph, vec![n]);
            s.edges = edges
                .into_iter()
                .filter(|&(a, b)| a < n && b < n && a != b)
                .collect();
            s
        });
    prop_oneof![4 => named, 1 => graph]
}

fn choices() -> impl Strategy<Value = Choices> {
    (
        proptest::sample::select(PlaceMethod::ALL.to_vec()),
        proptest::sample::select(RouteMethod::ALL.to_vec()),
        proptest::sample::select(vec![Method::Lp, Method::Exact, Method::Best]),
        0u64..4,
        proptest::bool::weighted(0.5),
    )
        .prop_map(|(place, route, schedule, seed, models)| Choices {
            place,
            route,
            schedule,
            seed,
            models,
        })
}

/// One message of a random program: sender, receivers (several = broadcast), size, and the
/// compute before the send.
#[derive(Clone, Debug)]
struct Msg {
    src: usize,
    dst: Vec<usize>,
    size: u64,
    compute: u64,
    /// Sent this many times (`iterate`).
    repeat: u64,
}

fn program() -> impl Strategy<Value = (usize, Vec<Msg>, Option<usize>)> {
    (1usize..8).prop_flat_map(|tasks| {
        let msg = (
            0..tasks,
            proptest::collection::vec(0..tasks, 1..3),
            prop_oneof![1 => Just(0u64), 12 => 1u64..12, 1 => Just(1u64 << 40)],
            prop_oneof![Just(0u64), 1u64..20],
            prop_oneof![3 => Just(1u64), 1 => 0u64..4],
        )
            .prop_map(|(src, dst, size, compute, repeat)| Msg {
                src,
                dst,
                size,
                compute,
                repeat,
            });
        (
            Just(tasks),
            proptest::collection::vec(msg, 0..8),
            proptest::option::of(0usize..3),
        )
    })
}

/// The program as TTDL: every send is matched by a read at each receiver, in the same order.
fn program_source(tasks: usize, msgs: &[Msg], phase_every: Option<usize>) -> String {
    let mut s = String::from("(deftask");
    for t in 0..tasks {
        s.push_str(&format!(" t{t}"));
    }
    s.push_str(")\n");
    for (i, m) in msgs.iter().enumerate() {
        if let Some(k) = phase_every.filter(|&k| k > 0 && i % k == 0) {
            for t in 0..tasks {
                s.push_str(&format!("(with-task t{t} (synchronize p{}))\n", i / k));
            }
        }
        let dst: Vec<String> = m.dst.iter().map(|d| format!("t{d}")).collect();
        let send = if m.dst.len() == 1 {
            format!("(write-stream {} {})", m.size, dst.join(" "))
        } else {
            format!("(broadcast {} {})", m.size, dst.join(" "))
        };
        s.push_str(&format!(
            "(with-task t{} (iterate (compute {}) {send} {}))\n",
            m.src, m.compute, m.repeat
        ));
        for d in &m.dst {
            s.push_str(&format!(
                "(with-task t{d} (iterate (read-stream {} t{}) {}))\n",
                m.size, m.src, m.repeat
            ));
        }
    }
    s
}

/// A Traffic document as a user could write it in JSON: ids, ops and phases need not agree.
fn raw_traffic() -> impl Strategy<Value = Traffic> {
    (1usize..5, 0usize..5).prop_flat_map(|(ntasks, nmsgs)| {
        let op = prop_oneof![
            (0u64..30).prop_map(Op::Compute),
            (0usize..nmsgs + 2).prop_map(Op::Send),
            (0usize..nmsgs + 2).prop_map(Op::Recv),
            (0usize..3).prop_map(Op::Sync),
        ];
        let task = proptest::collection::vec(op, 0..5);
        let message = (
            0usize..ntasks + 1,
            proptest::collection::vec(0usize..ntasks + 1, 0..3),
            prop_oneof![Just(0u64), 1u64..10, Just(u64::MAX)],
            prop_oneof![Just(0u64), 0u64..40, Just(u64::MAX)],
            prop_oneof![Just(0u64), 0u64..80, Just(u64::MAX)],
            0usize..3,
        );
        (
            proptest::collection::vec(task, ntasks),
            proptest::collection::vec(message, nmsgs),
            0usize..3,
            prop_oneof![Just(0u64), 0u64..100, Just(u64::MAX)],
        )
            .prop_map(|(tasks, messages, nphases, critical_path)| Traffic {
                tasks: tasks
                    .into_iter()
                    .enumerate()
                    .map(|(id, ops)| Task {
                        id,
                        name: format!("t{id}"),
                        ops,
                        ..Task::default()
                    })
                    .collect(),
                messages: messages
                    .into_iter()
                    .enumerate()
                    .map(|(id, (src, dst, size, release, deadline, phase))| Message {
                        id,
                        src,
                        dst: dst.into(),
                        size,
                        release,
                        deadline,
                        phase,
                        ..Message::default()
                    })
                    .collect(),
                phases: (0..nphases)
                    .map(|id| Phase {
                        id,
                        name: format!("p{id}"),
                        start: 0,
                    })
                    .collect(),
                critical_path,
                ..Traffic::default()
            })
    })
}

// ---------------------------------------------------------------------------------------------
// Mutations of the examples.

fn examples() -> &'static [(String, String)] {
    static EXAMPLES: OnceLock<Vec<(String, String)>> = OnceLock::new();
    EXAMPLES.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
        let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "ttdl"))
                    .filter_map(|p| {
                        let text = std::fs::read_to_string(&p).ok()?;
                        Some((p.display().to_string(), text))
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        out
    })
}

#[derive(Clone, Debug)]
enum Mutation {
    DeleteRange(usize, usize),
    DuplicateRange(usize, usize),
    SwapLines(usize, usize),
    DeleteLine(usize),
    Number(usize, &'static str),
    DropStreamForm(usize),
    SwapSizes(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let big = proptest::sample::select(vec![
        "0",
        "-1",
        "1",
        "4294967296",
        "9223372036854775807",
        "99999999999999999999",
        "1e300",
        "0.5",
    ]);
    prop_oneof![
        (any::<usize>(), 0usize..40).prop_map(|(a, n)| Mutation::DeleteRange(a, n)),
        (any::<usize>(), 0usize..80).prop_map(|(a, n)| Mutation::DuplicateRange(a, n)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        any::<usize>().prop_map(Mutation::DeleteLine),
        (any::<usize>(), big).prop_map(|(a, n)| Mutation::Number(a, n)),
        any::<usize>().prop_map(Mutation::DropStreamForm),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapSizes(a, b)),
    ]
}

/// Byte ranges of the numbers in `text`.
fn numbers(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_alphanumeric());
        if starts {
            let s = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i == b.len() || !b[i].is_ascii_alphabetic() {
                out.push((s, i));
            }
        } else {
            i += 1;
        }
    }
    out
}

fn floor(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn mutate(text: &str, m: &Mutation) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let n = text.len().max(1);
    match *m {
        Mutation::DeleteRange(a, len) => {
            let s = floor(text, a % n);
            let e = floor(text, s + len);
            format!("{}{}", &text[..s], &text[e..])
        }
        Mutation::DuplicateRange(a, len) => {
            let s = floor(text, a % n);
            let e = floor(text, s + len);
            format!("{}{}{}", &text[..e], &text[s..e], &text[e..])
        }
        Mutation::SwapLines(a, b) if !lines.is_empty() => {
            let mut l = lines.clone();
            l.swap(a % lines.len(), b % lines.len());
            l.join("\n")
        }
        Mutation::DeleteLine(a) if !lines.is_empty() => {
            let mut l = lines.clone();
            l.remove(a % lines.len());
            l.join("\n")
        }
        Mutation::Number(a, to) => {
            let nums = numbers(text);
            match nums.get(a % nums.len().max(1)) {
                Some(&(s, e)) => format!("{}{to}{}", &text[..s], &text[e..]),
                None => text.to_string(),
            }
        }
        Mutation::DropStreamForm(a) => {
            let forms: Vec<usize> = text
                .match_indices("(read-stream")
                .chain(text.match_indices("(write-stream"))
                .map(|(i, _)| i)
                .collect();
            match forms.get(a % forms.len().max(1)) {
                Some(&s) => {
                    let e = text[s..].find(')').map_or(text.len(), |p| s + p + 1);
                    format!("{}{}", &text[..s], &text[e..])
                }
                None => text.to_string(),
            }
        }
        Mutation::SwapSizes(a, b) => {
            let nums = numbers(text);
            if nums.len() < 2 {
                return text.to_string();
            }
            let (x, y) = (nums[a % nums.len()], nums[b % nums.len()]);
            let (x, y) = if x.0 <= y.0 { (x, y) } else { (y, x) };
            if x == y {
                return text.to_string();
            }
            format!(
                "{}{}{}{}{}",
                &text[..x.0],
                &text[y.0..y.1],
                &text[x.1..y.0],
                &text[x.0..x.1],
                &text[y.1..]
            )
        }
        _ => text.to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// The properties.

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn token_soup_never_panics(source in soup(), stdlib in any::<bool>()) {
        let session = if stdlib {
            base_session()
        } else {
            Session::without_stdlib_with_budget(budget())
        };
        evaluate(session, &source);
        no_panic(&source, || ttdl_lang::syntax::is_incomplete(&source));
    }
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn mutated_examples_never_panic(
        which in any::<usize>(),
        mutations in proptest::collection::vec(mutation(), 1..4),
        c in choices(),
    ) {
        let all = examples();
        prop_assume!(!all.is_empty());
        let (name, text) = &all[which % all.len()];
        let mut source = text.clone();
        for m in &mutations {
            source = mutate(&source, m);
        }
        if let Some(traffic) = evaluate(base_session(), &source) {
            if small_enough(&traffic) {
                let spec = traffic
                    .target
                    .as_ref()
                    .and_then(|t| t.network.clone())
                    .or_else(|| traffic.logical.clone())
                    .unwrap_or_else(|| NetworkSpec::new(ttdl_ir::topology::Kind::Mesh, vec![4, 4]));
                let what = format!("{name} after {mutations:?}");
                let models = c.models && traffic.messages.len() <= 64;
                no_panic(&what, || backend(&traffic, &spec, Choices { models, ..c }));
            }
        }
    }
}

proptest! {
    #![proptest_config(config(40))]

    #[test]
    fn random_programs_go_through_the_backend(
        (tasks, msgs, phases) in program(),
        spec in spec(),
        c in choices(),
    ) {
        let source = program_source(tasks, &msgs, phases);
        if let Some(traffic) = evaluate(base_session(), &source) {
            if std::env::var_os("TTDL_FUZZ_LOG").is_some() {
                eprintln!("EVALUATED {} messages", traffic.messages.len());
            }
            backend(&traffic, &spec, c);
        }
    }

    #[test]
    fn inconsistent_traffic_documents_are_errors(
        traffic in raw_traffic(),
        spec in spec(),
        c in choices(),
    ) {
        backend(&traffic, &spec, c);
        let text = tasks_file::write(&traffic, None);
        let _ = no_panic(&text, || tasks_file::read(&text).map(|_| ()).map_err(|e| check_message("tasks", e)));
    }

    #[test]
    fn tasks_file_soup_never_panics(lines in proptest::collection::vec(prop_oneof![
        2 => "[a-z0-9 :()#-]{0,30}",
        1 => proptest::sample::select(vec![
            "#Model", "TDL", "#Ntasks", "#Nphases", "#nNodes", "#nx", "#ny", "#nz", "#nt",
            "#Target", "#Critical path", "#Period", "#Tasks", "#Placement", "#Messages",
            "#Programs", "#Phases", "0", "1", "2", "10000000000", "18446744073709551615", "-1",
            "0 - 0", "1 - 1", "0 1 0 10 1", "network mesh:2x2", "network graph:3 edges 0-1 1-9",
        ]).prop_map(str::to_string),
    ], 0..24)) {
        let text = lines.join("\n");
        let _ = no_panic(&text, || tasks_file::read(&text).map(|_| ()).map_err(|e| check_message("tasks", e)));
    }
}

proptest! {
    #![proptest_config(config(24))]

    /// The interactive loop, line by line: entries split anywhere, commands with odd arguments.
    #[test]
    fn repl_lines_never_panic(
        lines in proptest::collection::vec(
            prop_oneof![
                3 => soup(),
                1 => proptest::sample::select(vec![
                    ":help", ":check", ":check nosuch", ":check torus->mesh", ":env", ":env t",
                    ":load", ":load /nonexistent", ":load /", ":reset", ":q x", ":", ":::", ":c (",
                ]).prop_map(str::to_string),
            ],
            0..8,
        ),
    ) {
        let what = lines.join("\n");
        no_panic(&what, || {
            let options = ttdl_repl::ReplOptions {
                stdlib: false,
                budget: budget(),
                ..Default::default()
            };
            let mut repl = ttdl_repl::Repl::new(options).unwrap_or_else(|e| panic!("{e}"));
            for line in &lines {
                let _ = repl.handle(line);
            }
            let _ = repl.finish();
            let _ = repl.completions();
        });
    }
}

// ---------------------------------------------------------------------------------------------
// The binary on nasty command lines: exit 1 (bad input) or 2 (bad usage) with a message, quickly.

#[test]
fn nasty_command_lines_fail_cleanly() {
    let dir = std::env::temp_dir().join(format!("ttdl-no-panic-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let file = |name: &str, text: &[u8]| {
        let p = dir.join(name);
        let _ = std::fs::write(&p, text);
        p.display().to_string()
    };
    let small = file(
        "small.ttdl",
        b"(deftask a b)\n(with-task a (write-stream 8 b))\n(with-task b (read-stream 8 a))\n",
    );
    let parens = file("parens.ttdl", "(".repeat(1 << 20).as_bytes());
    let garbage = file("garbage.ttdl", &[0xff, 0xfe, 0x00, 0x80, b'(', 0xc3]);
    let long_line = file(
        "long.ttdl",
        format!("{}\n{}", "(a".repeat(200), "x".repeat(1 << 20)).as_bytes(),
    );
    let huge = file(
        "huge.ttdl",
        b"(deftask a b)\n(with-task a (write-stream 1099511627776 b))\n(with-task b (read-stream 1099511627776 a))\n",
    );
    let existing = file("existing.txt", b"x");
    let missing = dir.join("missing.ttdl").display().to_string();
    let d = dir.display().to_string();
    let cases: &[(&[&str], u8)] = &[
        (&["check", &d], 1),
        (&["run", &missing], 1),
        (&["check", &garbage], 1),
        (&["check", &parens], 1),
        (&["check", &long_line], 1),
        (&["run", &huge], 1),
        (&["run", &small, "--network", "mesh:0x4"], 2),
        (&["run", &small, "--network", "hypercube:40"], 2),
        (&["run", &small, "--network", "torus:100000x100000"], 2),
        (&["run", &small, "--seed", "18446744073709551616"], 2),
        (&["run", &small, "--out", &existing], 1),
        (&["run", &small, "--ports", "4294967295"], 2),
        (&["run", &small, "--latency", "18446744073709551615"], 2),
        (&["simulate", &small, "--model", "wormhole", "vc=0"], 2),
        (&["simulate", &small, "--model", "wormhole", "buf=0"], 2),
        (&["simulate", &huge, "--model", "wormhole"], 1),
        (&["sweep", "--rates", "5", "--network", "mesh:2x2"], 2),
        (
            &["sweep", "--steps", "100000000", "--network", "mesh:2x2"],
            2,
        ),
        (
            &[
                "sweep",
                "--injection",
                "poisson",
                "--rates",
                "1e9",
                "--network",
                "mesh:2x2",
            ],
            2,
        ),
        (
            &[
                "sweep",
                "--measure",
                "18446744073709551615",
                "--network",
                "mesh:2x2",
            ],
            2,
        ),
        (
            &[
                "sweep",
                "--pattern",
                "hotspot",
                "--hot-node",
                "9",
                "--network",
                "mesh:2x2",
            ],
            2,
        ),
        (
            &[
                "model",
                "--simulate",
                "18446744073709551615",
                "--lambda",
                "0.01",
                "--logical",
                "torus",
            ],
            1,
        ),
    ];
    for (args, want) in cases {
        let started = std::time::Instant::now();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ttdl"))
            .args(*args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run ttdl: {e}"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(i32::from(*want)),
            "ttdl {args:?}:\n{stderr}"
        );
        assert!(!stderr.contains("panicked"), "ttdl {args:?}:\n{stderr}");
        assert!(!stderr.trim().is_empty(), "ttdl {args:?}: no message");
        assert!(
            stderr.len() < 200_000,
            "ttdl {args:?}: {} bytes of message",
            stderr.len()
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "ttdl {args:?} took {:?}",
            started.elapsed()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
