//! Distributed path reservation (Yuan Ch.3): protocol mechanics and Yuan's findings.

use ttdl_backend::sim::models::path_reservation::{
    poisson_run, Direction, PathReservation, ReservationConfig,
};
use ttdl_backend::sim::optical::torus::Torus;
use ttdl_backend::sim::{Delivery, NetworkModel, Packet};

fn drain(net: &mut PathReservation, limit: u64) -> Vec<Delivery> {
    let mut got = Vec::new();
    let mut now = 0;
    while let Some(t) = net.next_event(now) {
        if t > limit {
            break;
        }
        net.step(t, &mut got);
        now = t + 1;
    }
    got
}

#[test]
fn one_message_on_an_idle_network() {
    // 0 → 3 on a 8×8 torus: 3 hops. Forward: RES is processed at 4 nodes (1 + 2·3 = 7), the ACK
    // comes back over 3 hops (+6), so the source may send from slot 13 on, in its channel's slot.
    for dir in [Direction::Forward, Direction::Backward] {
        let cfg = ReservationConfig::new(Torus::new(8, 8), 8, dir, 2);
        let mut net = PathReservation::new(cfg).unwrap();
        net.inject(
            0,
            Packet {
                id: 1,
                src: 0,
                dst: 3,
                size: 4,
                created: 0,
            },
        );
        let got = drain(&mut net, 10_000);
        assert_eq!(got.len(), 1);
        let lat = net.stats.latency_sum;
        // Backward: PROB over 3 hops (7), RES back (+6), the source sends right after its ACK.
        let setup = 13;
        assert!((setup..setup + 8).contains(&lat), "{dir:?}: latency {lat}");
        assert_eq!(
            got[0].at,
            lat + 3 * 8 + 1,
            "{dir:?}: 4 packets, one per frame of 8"
        );
        assert_eq!(net.stats.attempts, 1);
        assert!(
            net.all_channels_free(),
            "{dir:?}: REL must free every channel"
        );
        assert_eq!(net.in_flight(), 0);
    }
}

#[test]
fn every_protocol_delivers_everything_and_frees_every_channel() {
    let t = Torus::new(4, 4);
    for dir in [Direction::Forward, Direction::Backward] {
        for hold in [0, 5] {
            for s in [1, 2, 4] {
                let mut cfg = ReservationConfig::new(t, 4, dir, s);
                cfg.hold = hold;
                cfg.seed = 3;
                let mut net = PathReservation::new(cfg.clone()).unwrap();
                let mut id = 0;
                for now in 0..200u64 {
                    for src in 0..16 {
                        if (now * 7 + src as u64 * 13) % 23 == 5 {
                            let dst = (src + 1 + (now as usize % 15)) % 16;
                            net.inject(
                                now,
                                Packet {
                                    id,
                                    src,
                                    dst,
                                    size: 3,
                                    created: now,
                                },
                            );
                            id += 1;
                        }
                    }
                    let mut got = Vec::new();
                    net.step(now, &mut got);
                }
                let mut got = drain(&mut net, 1_000_000);
                got.sort_by_key(|d| d.packet);
                assert!(
                    net.in_flight() == 0,
                    "{}: {} still in flight",
                    cfg.label(),
                    net.in_flight()
                );
                assert!(net.all_channels_free(), "{}: leaked channels", cfg.label());
                assert!(
                    net.stats.delivered == id,
                    "{}: {} of {id}",
                    cfg.label(),
                    net.stats.delivered
                );
            }
        }
    }
}

#[test]
fn light_load_throughput_equals_offered_load() {
    // Yuan Fig 3.4: at r = 0.003 every protocol carries r messages per node per slot.
    let cfg = ReservationConfig::new(Torus::new(8, 8), 8, Direction::Backward, 1);
    let r = poisson_run(&cfg, 0.003, 8, 500, 6000).unwrap();
    assert!((r.throughput - 0.003).abs() < 0.0006, "{r:?}");
}

/// Peak delivered rate over a few offered loads around saturation (a coarse `max_throughput`).
fn peak(cfg: &ReservationConfig, rates: &[f64], measure: u64) -> f64 {
    rates
        .iter()
        .map(|&r| poisson_run(cfg, r, 8, 300, measure).unwrap().throughput)
        .fold(0.0, f64::max)
}

#[test]
fn yuan_findings_on_16x16_with_8_packet_messages() {
    // Yuan §3.3–3.4 (Fig 3.4–3.6, Table 3.1), small version of examples/yuan_table_3_1.rs:
    // (1) at d = 32 the best backward protocol beats the best forward one in maximum throughput;
    // (2) the throughput-optimal s grows with d: at d = 4 conservative forward (s = 1) beats s = 4,
    //     at d = 32 an intermediate s beats s = 1 and s = d.
    let t = Torus::new(16, 16);
    let rates = [0.014, 0.018, 0.022];
    let m = 1200;
    let tp = |dir, d, s| peak(&ReservationConfig::new(t, d, dir, s), &rates, m);
    let f1 = tp(Direction::Forward, 32, 1);
    let f6 = tp(Direction::Forward, 32, 6);
    let f32 = tp(Direction::Forward, 32, 32);
    let b1 = tp(Direction::Backward, 32, 1);
    let b2 = tp(Direction::Backward, 32, 2);
    let best_f = f1.max(f6).max(f32);
    let best_b = b1.max(b2);
    println!("d=32: FD s=1 {f1:.4} s=6 {f6:.4} s=32 {f32:.4}; BD s=1 {b1:.4} s=2 {b2:.4}");
    assert!(best_b > best_f, "backward {best_b} vs forward {best_f}");
    assert!(
        f6 > f1 && f6 > f32,
        "forward d=32: s=6 {f6}, s=1 {f1}, s=32 {f32}"
    );
    let small = [0.006, 0.008, 0.010];
    let g1 = peak(
        &ReservationConfig::new(t, 4, Direction::Forward, 1),
        &small,
        m,
    );
    let g4 = peak(
        &ReservationConfig::new(t, 4, Direction::Forward, 4),
        &small,
        m,
    );
    println!("d=4: FD s=1 {g1:.4} s=4 {g4:.4}");
    assert!(g1 > g4, "forward d=4: s=1 {g1} vs s=4 {g4}");
    // Yuan p.27: the best protocol reaches almost 30% of the 0.0625 ceiling.
    assert!(best_b > 0.2 * 0.0625 && best_b < 0.0625, "{best_b}");
}
