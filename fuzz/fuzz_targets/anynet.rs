//! BookSim2 anynet files (`--network anynet:FILE`) on arbitrary text: a network or a located
//! error, never a panic; a small network that builds gets up*/down* tables whose routes arrive
//! and whose channel dependency graph is acyclic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ttdl_ir::topology::anynet;
use ttdl_ir::topology::updown::UpDown;
use ttdl_ir::topology::Network;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(spec) = anynet::parse_text(text, "fuzz.anynet") else {
        return;
    };
    if spec.node_count() > 4096 {
        return;
    }
    let Ok(net) = Network::build(&spec) else {
        return;
    };
    if net.nodes() > 64 {
        return;
    }
    let table = UpDown::new(&net).expect("a connected network has up*/down* tables");
    for a in 0..net.nodes() {
        for b in 0..net.nodes() {
            assert_eq!(table.route(a, b).last(), Some(&b));
        }
    }
    assert_eq!(table.dependency_cycle(&net), None);
});
