//! Multi-hop TDM networks (Yuan Ch.4) simulated packet by packet, against the analytic model.

use expect_test::expect;
use ttdl_backend::sim::models::multihop::{poisson_run, MultiHop, MultiHopConfig};
use ttdl_backend::sim::optical::analytic::TopologyParams;
use ttdl_backend::sim::optical::rca::Logical;
use ttdl_backend::sim::optical::torus::Torus;
use ttdl_backend::sim::{NetworkModel, Packet};

#[test]
fn light_load_delay_matches_the_model_on_8x8() {
    // Yuan §4.2: at light load a packet waits (d+1)/2 per lightpath on average and γ per router.
    let t = Torus::new(8, 8);
    let mut out = String::new();
    for l in Logical::ALL {
        let mut net = MultiHop::new(MultiHopConfig {
            torus: t,
            logical: l,
            gamma: 1.0,
        })
        .unwrap();
        let d = net.degree();
        let r = poisson_run(&mut net, 0.002, 200, 3000, 7).unwrap();
        let model = TopologyParams::yuan(l, 8).unwrap().with_degree(d);
        let want = model.light_load_delay(1.0);
        let err = (r.delay - want).abs() / want;
        assert!(
            err < 0.1,
            "{}: simulated {} vs model {want}",
            l.name(),
            r.delay
        );
        assert!(
            (r.paths_per_packet - (model.h + 1.0)).abs() < 0.15,
            "{}: {}",
            l.name(),
            r.paths_per_packet
        );
        out += &format!(
            "{:10} d={:3} delay sim {:7.2} model {:7.2}\n",
            l.name(),
            d,
            r.delay,
            want
        );
    }
    expect![[r#"
        all-to-all d= 64 delay sim   33.56 model   34.50
        allxy      d= 14 delay sim   16.57 model   16.11
        hypercube  d=  6 delay sim   15.09 model   14.50
        torus      d=  4 delay sim   16.29 model   15.00
    "#]]
    .assert_eq(&out);
}

#[test]
fn a_message_is_delivered_when_its_last_packet_is_routed() {
    let t = Torus::new(4, 4);
    let mut net = MultiHop::new(MultiHopConfig {
        torus: t,
        logical: Logical::Torus,
        gamma: 1.0,
    })
    .unwrap();
    net.inject(
        0,
        Packet {
            id: 9,
            src: 0,
            dst: 5,
            size: 3,
            created: 0,
        },
    );
    let mut got = Vec::new();
    let mut now = 0;
    while let Some(t) = net.next_event(now) {
        net.step(t, &mut got);
        now = t + 1;
        if now > 1000 {
            break;
        }
    }
    // 0 → 1 (x, channel 0) → 5 (y, channel 2); three packets share each lightpath, one per frame.
    expect!["[Delivery { packet: 9, at: 16 }]"].assert_eq(&format!("{got:?}"));
}
