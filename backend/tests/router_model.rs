//! The `router` model: BookSim2's zero-load latency formula, credit and flit conservation,
//! reproducibility, deadlock freedom on tori, and BookSim2's 8×8 mesh latency at 0.02.

use ttdl_backend::sim::drive::synthetic::{self, Pattern, SyntheticConfig, SyntheticResult};
use ttdl_backend::sim::models::router::{AllocKind, Router, RouterConfig};
use ttdl_backend::sim::registry::{self, ModelContext};
use ttdl_backend::sim::{Delivery, NetworkModel, Packet};
use ttdl_backend::Network;

fn net(s: &str) -> Network {
    Network::build(&s.parse().unwrap()).unwrap()
}

/// Latency of one packet alone in the network.
fn lone(net: &Network, cfg: RouterConfig, src: usize, dst: usize, size: u64) -> u64 {
    let mut m = Router::new(net, cfg).unwrap();
    let created = 3;
    m.inject(
        created,
        Packet {
            id: 7,
            src,
            dst,
            size,
            created,
        },
    );
    let mut out = Vec::new();
    let mut t = created;
    while out.is_empty() {
        assert!(m.next_event(t).is_some(), "the packet got lost");
        m.step(t, &mut out);
        t += 1;
        assert!(t < 10_000);
    }
    assert_eq!(
        out,
        vec![Delivery {
            packet: 7,
            at: out[0].at
        }]
    );
    out[0].at - created
}

/// BookSim2's fitted zero-load latency, `P·(D+1) + 2 + (L−1)`: P = 5 with its defaults, 3 with
/// its shortest pipeline; D hops, L flits (D = 0 is a packet to its own node).
#[test]
fn zero_load_latency_is_booksims_formula() {
    let mesh = net("mesh:8x8");
    for (cfg, p) in [(RouterConfig::booksim(), 5), (RouterConfig::min(), 3)] {
        assert_eq!(cfg.per_hop(), p);
        for (src, dst) in [(0, 0), (0, 1), (0, 9), (0, 63), (7, 56), (27, 30)] {
            let d = ((src % 8) as i64 - (dst % 8) as i64).unsigned_abs()
                + ((src / 8) as i64 - (dst / 8) as i64).unsigned_abs();
            for l in [1, 2, 8, 20] {
                assert_eq!(
                    lone(&mesh, cfg, src, dst, l),
                    p * (d + 1) + 2 + (l - 1),
                    "{} D={d} L={l}",
                    cfg.name()
                );
            }
        }
    }
    // Other delays: every router stage (switch traversal included) counts D+1 times, the links
    // D times, the injection and ejection channels one cycle each; a VC bids for the switch
    // again only when its last allocation is over, so body flits follow every
    // `sw_alloc_delay` cycles (as in BookSim2).
    let cfg = RouterConfig {
        routing_delay: 2,
        vc_alloc_delay: 2,
        sw_alloc_delay: 3,
        st_delay: 2,
        link_delay: 4,
        credit_delay: 2,
        ..RouterConfig::booksim()
    };
    let line = net("line:6");
    for d in 0..6u64 {
        for l in [1, 5, 16] {
            assert_eq!(
                lone(&line, cfg, 0, d as usize, l),
                9 * (d + 1) + 4 * d + 3 + 3 * (l - 1),
                "D={d} L={l}"
            );
        }
    }
    // Torus: the wrap-around link is one hop.
    assert_eq!(
        lone(&net("torus:8x8"), RouterConfig::booksim(), 0, 7, 8),
        5 * 2 + 2 + 7
    );
}

/// Checks the model's invariants after every cycle.
struct Checked(Router);

impl NetworkModel for Checked {
    fn name(&self) -> String {
        self.0.name()
    }
    fn inject(&mut self, now: u64, packet: Packet) {
        self.0.inject(now, packet)
    }
    fn step(&mut self, now: u64, delivered: &mut Vec<Delivery>) {
        self.0.step(now, delivered);
        if let Err(e) = self.0.check_invariants() {
            panic!("cycle {now}: {e}");
        }
    }
    fn next_event(&self, now: u64) -> Option<u64> {
        self.0.next_event(now)
    }
}

/// Under load, credits and flits are conserved every cycle (credits + flits buffered + both in
/// flight = buffer size, so no credit count goes negative and no buffer overflows), and every
/// flit that entered the network leaves it.
#[test]
fn credits_and_flits_are_conserved() {
    let cases = [
        ("mesh:4x4", RouterConfig::booksim()),
        ("mesh:4x4", RouterConfig::min()),
        (
            "mesh:4x4",
            RouterConfig {
                wait_for_tail_credit: true,
                vc_buf: 3,
                vcs: 3,
                credit_delay: 2,
                ..RouterConfig::booksim()
            },
        ),
        (
            "torus:4x4",
            RouterConfig {
                vc_alloc: AllocKind::InputFirst,
                sw_alloc: AllocKind::OutputFirst,
                ..RouterConfig::min()
            },
        ),
        (
            "mesh:3x3x2",
            RouterConfig {
                vc_alloc: AllocKind::Oldest,
                sw_alloc: AllocKind::Oldest,
                link_delay: 3,
                vc_buf: 2,
                ..RouterConfig::booksim()
            },
        ),
        (
            "hypercube:4",
            RouterConfig {
                iters: 3,
                sw_alloc_delay: 2,
                ..RouterConfig::booksim()
            },
        ),
    ];
    for (spec, cfg) in cases {
        let n = net(spec);
        let mut m = Checked(Router::new(&n, cfg).unwrap());
        let run = SyntheticConfig {
            rate: 0.08,
            size: 5,
            warmup: 0,
            measure: 600,
            drain: 50_000,
            seed: 3,
            ..SyntheticConfig::default()
        };
        let r = synthetic::run(&n, &mut m, &run).unwrap();
        assert_eq!(r.unfinished, 0, "{spec} {}", cfg.name());
        let (into, out) = m.0.flits();
        assert_eq!(into, r.injected * 5, "{spec} {}", cfg.name());
        assert_eq!(into, out, "{spec} {}: flits lost", cfg.name());
        // Credits still on their way back settle within a few cycles.
        let mut t = r.cycles;
        let mut none = Vec::new();
        while m.next_event(t).is_some() {
            m.step(t, &mut none);
            t += 1;
            assert!(t < r.cycles + 100, "{spec}: work left");
        }
        assert!(none.is_empty());
    }
}

fn run(spec: &str, network: &str, cfg: &SyntheticConfig) -> SyntheticResult {
    let n = net(network);
    let ctx = ModelContext::new(&n).with_seed(cfg.seed);
    let mut m = registry::build(spec, &ctx).unwrap();
    synthetic::run(&n, m.as_mut(), cfg).unwrap()
}

/// The same seed gives the same run, another seed another.
#[test]
fn runs_are_reproducible() {
    let cfg = SyntheticConfig {
        rate: 0.03,
        warmup: 200,
        measure: 1_500,
        seed: 11,
        ..SyntheticConfig::default()
    };
    let a = run("router", "mesh:6x6", &cfg);
    assert_eq!(a, run("router", "mesh:6x6", &cfg));
    let b = run("router", "mesh:6x6", &SyntheticConfig { seed: 12, ..cfg });
    assert_ne!(a.latency, b.latency);
}

/// Dimension order with two dateline classes cannot deadlock on a torus: overloaded, then left
/// to drain, every packet arrives (with either VC release rule and either pipeline).
#[test]
fn tori_drain_under_overload() {
    for spec in [
        "router",
        "router preset=min",
        "router wait_for_tail_credit=1 vc_buf=2",
        "router vcs=4 vc_alloc=oldest",
    ] {
        for network in ["torus:5x5", "ring:8"] {
            let cfg = SyntheticConfig {
                pattern: Pattern::Uniform,
                rate: 0.2,
                size: 8,
                warmup: 0,
                measure: 1_000,
                drain: 200_000,
                seed: 2,
                ..SyntheticConfig::default()
            };
            let r = run(spec, network, &cfg);
            assert_eq!(r.unfinished, 0, "{spec} on {network}");
            assert!(r.accepted_flits < r.offered_flits, "{spec}: not overloaded");
        }
    }
}

/// BookSim2, 8×8 mesh, uniform, 8-flit packets at 0.02 packets/node/cycle: 45.40 cycles
/// (`booksim2-8x8.md`). A short run (3,000 warm-up, 6,000 measured cycles) lands within 3%;
/// BookSim's `uniform` also sends 1/64 of packets to their own node, which lowers its mean by
/// about 1% (5.25 hops instead of 5.33), so ours sits a little above. The full comparison at
/// every load is `examples/bench_router.rs`.
#[test]
fn booksim_latency_at_two_percent_load() {
    let cfg = SyntheticConfig {
        rate: 0.02,
        size: 8,
        warmup: 3_000,
        measure: 6_000,
        drain: 20_000,
        seed: 1,
        ..SyntheticConfig::default()
    };
    let r = run("router preset=booksim", "mesh:8x8", &cfg);
    let diff = (r.latency.mean - 45.40) / 45.40;
    assert!(diff.abs() < 0.03, "mean {:.2}", r.latency.mean);
    assert_eq!(r.unfinished, 0);
    assert_eq!(r.model, "router");
}

/// Options: presets, names, refusals.
#[test]
fn options_and_names() {
    let n = net("torus:4x4");
    let ctx = ModelContext::new(&n);
    let name = |s: &str| registry::build(s, &ctx).unwrap().name();
    assert_eq!(name("router"), "router");
    assert_eq!(name("router preset=min"), "router preset=min");
    assert_eq!(
        name("router preset=min vcs=4 sw_alloc=oldest"),
        "router preset=min vcs=4 sw_alloc=oldest"
    );
    assert_eq!(name("router speculative=1"), "router speculative=1");
    for bad in [
        "router vcs=1",
        "router preset=fast",
        "router speculative=2",
        "router preset=min vc_alloc_delay=2",
        "router st_delay=0",
    ] {
        assert!(registry::build(bad, &ctx).is_err(), "{bad}");
    }
    let xbar = net("crossbar:4");
    let ctx = ModelContext::new(&xbar);
    // A network without dimension order is routed by up*/down* tables.
    assert!(registry::build("router", &ctx).is_ok());
}

/// The events the router counts for its energy: a lone packet of L flits over D hops is written
/// into and read out of D + 1 input buffers, crosses D + 1 crossbars with a switch grant each, D
/// links and its injection and ejection channels. On the 8×8 mesh from node 0 (x = 0, y = 0)
/// to node 9 it goes +x then +y: it enters by the injection port (position 4 of 5, the far
/// half), then by the +x and +y inputs (BookSim2's positions 1 and 3: the near and far half);
/// it leaves by +x (0), +y (2) and the ejection port (4).
#[test]
fn a_lone_packet_counts_its_events() {
    let mesh = net("mesh:8x8");
    let mut m = Router::new(&mesh, RouterConfig::booksim()).unwrap();
    m.inject(
        0,
        Packet {
            id: 1,
            src: 0,
            dst: 9,
            size: 8,
            created: 0,
        },
    );
    let mut out = Vec::new();
    let mut t = 0;
    while m.next_event(t).is_some() {
        m.step(t, &mut out);
        t += 1;
    }
    assert_eq!(out.len(), 1);
    let a = m.activity().expect("the router counts its events");
    let (l, d) = (8, 2);
    assert_eq!(
        (a.buffer_writes, a.buffer_reads),
        (l * (d + 1), l * (d + 1))
    );
    assert_eq!((a.crossbar, a.allocations), (l * (d + 1), l * (d + 1)));
    assert_eq!((a.link_flits, a.port_flits), (l * d, 2 * l));
    assert_eq!((a.crossbar_near_in, a.crossbar_near_out), (l, 2 * l));
    let hw = m.hardware(&mesh);
    assert_eq!((hw.inputs, hw.outputs, hw.buffer_flits), (5, 5, 16));
    assert_eq!((hw.routers, hw.channels), (64, 224 + 128));
}
