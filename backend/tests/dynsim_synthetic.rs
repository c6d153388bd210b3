//! Synthetic traffic: deadlock freedom under overload, Chittor's transpose saturation level, and
//! reproducibility.

use ttdl_backend::sim::drive::synthetic::{
    self, Injection, Pattern, SyntheticConfig, SyntheticResult,
};
use ttdl_backend::sim::registry::{self, ModelContext};
use ttdl_backend::Network;

fn sweep_point(net: &str, spec: &str, cfg: &SyntheticConfig) -> SyntheticResult {
    let net = Network::build(&net.parse().unwrap()).unwrap();
    let ctx = ModelContext::new(&net).with_seed(cfg.seed);
    let mut model = registry::build(spec, &ctx).unwrap();
    synthetic::run(&net, model.as_mut(), cfg).unwrap()
}

/// Overload every routing function and topology, then stop injecting: every measured packet
/// must still arrive (a deadlock would leave worms stuck forever).
#[test]
fn overloaded_networks_drain() {
    let cases = [
        ("mesh:4x4", "wormhole"),
        ("mesh:4x4", "wormhole routing=west-first"),
        ("mesh:4x4", "wormhole routing=odd-even vc=2"),
        ("mesh:4x4", "wormhole routing=odd-even"),
        ("torus:4x4", "wormhole vc=2 buf=1"),
        ("ring:6", "wormhole vc=2"),
        ("hypercube:4", "wormhole arb=fifo"),
        ("mesh:3x3x2", "wormhole arb=biased"),
        ("mesh:4x4", "circuit"),
        ("torus:4x4", "circuit"),
        ("mesh:4x4", "store-forward"),
    ];
    for (net, spec) in cases {
        let cfg = SyntheticConfig {
            pattern: Pattern::Uniform,
            rate: 0.08,
            size: 6,
            warmup: 200,
            measure: 1_500,
            drain: 200_000,
            seed: 5,
            ..SyntheticConfig::default()
        };
        let r = sweep_point(net, spec, &cfg);
        assert_eq!(r.unfinished, 0, "{net} {spec}: {r:?}");
        assert!(r.latency.count > 500, "{net} {spec}: {r:?}");
    }
}

/// Chittor §5.4: matrix transpose on a k×k mesh, dimension order, time-stamp priority. The worst
/// node saturates near 1/(ν_max+1) = 1/(k−1) flits/node/cycle (k = 6: 0.20). Below it the network
/// keeps up; well above it the worst node's accepted traffic stays near the prediction.
#[test]
fn transpose_saturates_near_chittor_prediction() {
    let k = 6;
    let predicted = 1.0 / (k as f64 - 1.0);
    let point = |flits: f64| {
        let cfg = SyntheticConfig {
            pattern: Pattern::Transpose,
            rate: flits / 20.0,
            size: 20,
            warmup: 2_000,
            measure: 20_000,
            drain: 0,
            seed: 11,
            ..SyntheticConfig::default()
        };
        sweep_point(&format!("mesh:{k}x{k}"), "wormhole arb=oldest", &cfg)
    };
    let low = point(0.5 * predicted);
    assert!(
        (low.accepted_flits / low.offered_flits - 1.0).abs() < 0.1,
        "below saturation the network keeps up: {low:?}"
    );
    let high = point(2.0 * predicted);
    let worst = high.worst_node_flits;
    assert!(
        worst > 0.6 * predicted && worst < 1.25 * predicted,
        "worst node {worst:.3} vs predicted {predicted:.3}"
    );
    assert!(high.accepted_flits < high.offered_flits * 0.9, "{high:?}");
}

#[test]
fn same_seed_same_result() {
    for injection in [Injection::Bernoulli, Injection::Poisson] {
        let cfg = SyntheticConfig {
            pattern: Pattern::Hotspot,
            injection,
            rate: 0.03,
            size: 5,
            warmup: 100,
            measure: 2_000,
            drain: 20_000,
            seed: 9,
            ..SyntheticConfig::default()
        };
        let a = serde_json::to_string(&sweep_point("torus:4x4", "wormhole", &cfg)).unwrap();
        let b = serde_json::to_string(&sweep_point("torus:4x4", "wormhole", &cfg)).unwrap();
        assert_eq!(a, b);
        let other = SyntheticConfig { seed: 10, ..cfg };
        let c = serde_json::to_string(&sweep_point("torus:4x4", "wormhole", &other)).unwrap();
        assert_ne!(a, c);
    }
}

/// The same check with Chittor's own closed-loop shell (§5.2: compute U[0, 2t], send, wait):
/// the worst node's traffic levels off near 1/(ν_max+1) and the average node's near
/// δ/(ν_avg+1) = 3/(2k−1) (k = 6: 0.20 and 0.27).
#[test]
fn closed_loop_transpose_levels_off_near_prediction() {
    let k = 6;
    let worst_pred = 1.0 / (k as f64 - 1.0);
    let avg_pred = 3.0 / (2.0 * k as f64 - 1.0);
    let cfg = SyntheticConfig {
        pattern: Pattern::Transpose,
        injection: Injection::Closed,
        rate: 0.6 / 20.0,
        size: 20,
        warmup: 2_000,
        measure: 20_000,
        drain: 0,
        seed: 3,
        ..SyntheticConfig::default()
    };
    let r = sweep_point(&format!("mesh:{k}x{k}"), "wormhole arb=oldest", &cfg);
    assert!(
        r.worst_node_flits > 0.75 * worst_pred && r.worst_node_flits < 1.25 * worst_pred,
        "worst node {:.3} vs {worst_pred:.3}",
        r.worst_node_flits
    );
    assert!(
        r.accepted_flits > 0.75 * avg_pred && r.accepted_flits < 1.25 * avg_pred,
        "average node {:.3} vs {avg_pred:.3}",
        r.accepted_flits
    );
}
