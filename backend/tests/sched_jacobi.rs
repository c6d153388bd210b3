//! Jacobi 2D on a 4×4 mesh (Minsky §5.1): a logical torus folded onto the mesh, 64 messages of
//! 8 words. The thesis's exchange took 36 network cycles (Figs 5-6/5-7).

use crate::support::*;
use ttdl_backend::schedule::{self, Hardware, Method, Problem};
use ttdl_backend::sim::models::scheduled::replay;
use ttdl_backend::switch;

#[test]
fn jacobi_4x4_within_thesis_36_cycles() {
    let (traffic, placement) = jacobi2d(4, 8, 0);
    assert_eq!(traffic.messages.len(), 64);
    let net = net("mesh:4x4");
    let routing = route_all(&traffic, &net, &placement);
    // Folded torus: every logical neighbour within 2 hops.
    for r in &routing.routes {
        if let ttdl_backend::Route::Path(p) = r {
            assert!(p.len() <= 3, "{p:?}");
        }
    }
    let problem = Problem::new(&traffic, &net, &placement, &routing, Hardware::default()).unwrap();
    let (bound, why) = schedule::lower_bound(&problem);
    assert_eq!(
        (bound, why.as_str()),
        (32, "critical path under the port model (32 cycles)")
    );
    for method in [Method::Exact, Method::Lp, Method::Best] {
        let s = schedule::schedule(
            &traffic,
            &net,
            &placement,
            &routing,
            method,
            Hardware::default(),
        )
        .unwrap();
        let exchange = s.arrival.iter().max().copied().unwrap();
        assert!(
            exchange <= 36,
            "{method:?}: exchange took {exchange} cycles"
        );
        assert!(exchange >= bound);
        assert!(s.deadlines_met(), "{method:?}: {:?}", s.relaxed);
        let replay = replay::replay(&traffic, &net, &placement, &routing, &s).unwrap();
        assert_eq!(replay.delivered, s.arrival);
        assert_eq!(replay.completion, s.makespan);
    }
    // With one cycle per switch traversal, each exchange also pays the pipeline fill of its
    // longest route (inject, two links, eject: 3 cycles), and the program's four exchanges are
    // sequential: 4 × (8 + 3) = 44 is then the best possible.
    let hw = Hardware {
        hop_latency: 1,
        ..Hardware::default()
    };
    for method in [Method::Exact, Method::Lp] {
        let s = schedule::schedule(&traffic, &net, &placement, &routing, method, hw).unwrap();
        let exchange = s.arrival.iter().max().copied().unwrap();
        assert!(exchange <= 44, "{method:?} with latency: {exchange} cycles");
        replay::replay(&traffic, &net, &placement, &routing, &s).unwrap();
    }
}

#[test]
fn jacobi_switch_programs_fig_5_9() {
    let (traffic, placement) = jacobi2d(4, 8, 0);
    let net = net("mesh:4x4");
    let routing = route_all(&traffic, &net, &placement);
    let hw = Hardware {
        hop_latency: 1,
        ..Hardware::default()
    };
    let s = schedule::schedule(&traffic, &net, &placement, &routing, Method::Exact, hw).unwrap();
    let problem = Problem::new(&traffic, &net, &placement, &routing, hw).unwrap();
    let programs = switch::build(&problem, &s);
    let text: String = programs.nodes[..2].iter().map(|n| n.to_string()).collect();
    expect_test::expect![[r#"
        [Schedule for node: 0]
        #Instruction# WAIT-FOR-VALID-BIT
        #Instruction# SWITCH Msg:0 Start: 1 End: 9 In: DownFifo Out: North
        #Instruction# SWITCH Msg:12 Start: 2 End: 10 In: North Out: UpFifo
        #Instruction# SWITCH Msg:16 Start: 11 End: 19 In: DownFifo Out: East
        #Instruction# SWITCH Msg:19 Start: 12 End: 20 In: East Out: UpFifo
        #Instruction# SWITCH Msg:32 Start: 21 End: 29 In: DownFifo Out: East
        #Instruction# SWITCH Msg:33 Start: 24 End: 32 In: East Out: UpFifo
        #Instruction# SWITCH Msg:48 Start: 33 End: 41 In: DownFifo Out: North
        #Instruction# SWITCH Msg:52 Start: 36 End: 44 In: North Out: UpFifo
        [Schedule for node: 1]
        #Instruction# WAIT-FOR-VALID-BIT
        #Instruction# SWITCH Msg:3 Start: 1 End: 9 In: DownFifo Out: North
        #Instruction# SWITCH Msg:15 Start: 2 End: 10 In: North Out: UpFifo
        #Instruction# SWITCH Msg:19 Start: 11 End: 19 In: DownFifo Out: West
        #Instruction# SWITCH Msg:16 Start: 12 End: 20 In: West Out: East
        #Instruction# SWITCH Msg:18 Start: 13 End: 21 In: East Out: UpFifo
        #Instruction# SWITCH Msg:32 Start: 22 End: 30 In: West Out: UpFifo
        #Instruction# SWITCH Msg:35 Start: 22 End: 30 In: DownFifo Out: East
        #Instruction# SWITCH Msg:33 Start: 23 End: 31 In: East Out: West
        #Instruction# SWITCH Msg:51 Start: 31 End: 39 In: DownFifo Out: North
        #Instruction# SWITCH Msg:55 Start: 34 End: 42 In: North Out: UpFifo
    "#]]
    .assert_eq(&text);
    let replay = replay::replay(&traffic, &net, &placement, &routing, &s).unwrap();
    assert_eq!(replay.delivered, s.arrival);
}

/// The replay checks the plan by running it: the plan replays with and without a switch
/// latency, while an ejection moved a cycle later delivers late (or meets the next message's
/// words at the processor) and a link's instruction moved a cycle earlier finds no word to move.
#[test]
fn the_replay_refuses_holds_its_programs_do_not_run() {
    use ttdl_backend::schedule::{Hold, Resource};
    let (traffic, placement) = jacobi2d(4, 8, 0);
    let net = net("mesh:4x4");
    let routing = route_all(&traffic, &net, &placement);
    for hop_latency in [0, 1] {
        let hw = Hardware {
            hop_latency,
            ..Hardware::default()
        };
        let s =
            schedule::schedule(&traffic, &net, &placement, &routing, Method::Exact, hw).unwrap();
        let ok = replay::replay(&traffic, &net, &placement, &routing, &s).unwrap();
        assert_eq!(ok.delivered, s.arrival);
        let moved = |pick: &dyn Fn(&Hold) -> bool, later: bool| -> String {
            let mut bad = s.clone();
            let i = bad.holds.iter().position(pick).unwrap();
            let h = bad.holds[i];
            bad.holds[i] = match later {
                true => h.at(h.start() + 1, h.end() + 1),
                false => h.at(h.start() - 1, h.end() - 1),
            }
            .unwrap();
            replay::replay(&traffic, &net, &placement, &routing, &bad)
                .unwrap_err()
                .to_string()
        };
        let late = moved(&|h| matches!(h.resource(), Resource::Eject(_)), true);
        assert!(
            late.contains("arrived at") || late.contains("out of UpFifo"),
            "{late}"
        );
        // The first link of a message whose injection starts with it.
        let first_link = |h: &Hold| {
            matches!(h.resource(), Resource::Link { from, .. }
                if s.holds.iter().any(|i| i.msg() == h.msg()
                    && i.resource() == Resource::Inject(from)
                    && i.start() + hop_latency == h.start()))
                && h.start() > 0
        };
        let early = moved(&first_link, false);
        assert!(early.contains("but no word of it is there"), "{early}");
    }
}
