//! Rerouting respects the maximum misrouting distance (Minsky §4.2.2, footnote 13): a message may
//! leave its shortest path only by as many hops as its slack allows.

use ttdl_backend::metrics::Metrics;
use ttdl_backend::route::{self, RouteMethod, RouteOptions};
use ttdl_backend::traffic::{Message, Placement, Route, Task, Traffic};
use ttdl_backend::{Network, NetworkSpec};

/// Two 4-word messages between neighbouring nodes 0 and 1 of a 3×3 mesh, both in `[0, window)`.
fn pair(window: u64) -> Traffic {
    Traffic {
        tasks: (0..2)
            .map(|i| Task {
                id: i,
                name: format!("t{i}"),
                ..Task::default()
            })
            .collect(),
        messages: (0..2)
            .map(|id| Message {
                id,
                src: 0,
                dst: vec![1],
                size: 4,
                release: 0,
                deadline: window,
                ..Message::default()
            })
            .collect(),
        ..Traffic::default()
    }
}

fn run(window: u64) -> (Vec<Route>, f64) {
    let t = pair(window);
    let net = Network::build(&"mesh:3x3".parse::<NetworkSpec>().unwrap()).unwrap();
    let p = Placement {
        node_of: vec![0, 1],
    };
    let opts = RouteOptions::new(RouteMethod::Reroute, 9);
    let (r, _) = route::route_with(&t, &net, &p, &opts, &mut |_| {}).unwrap();
    let peak = Metrics::compute(&t, &net, &p, &r).peak_utilization;
    (r.routes, peak)
}

#[test]
fn slack_of_two_allows_a_detour() {
    let (routes, peak) = run(6);
    assert!((peak - 4.0 / 6.0).abs() < 1e-9, "{peak}");
    let mut lens: Vec<usize> = routes
        .iter()
        .map(|r| match r {
            Route::Path(p) => p.len() - 1,
            Route::Tree(_) => 0,
        })
        .collect();
    lens.sort_unstable();
    assert_eq!(lens, vec![1, 3]);
}

#[test]
fn slack_of_one_forbids_it() {
    let (routes, peak) = run(5);
    assert!((peak - 8.0 / 5.0).abs() < 1e-9, "{peak}");
    assert!(routes.iter().all(|r| *r == Route::Path(vec![0, 1])));
}
