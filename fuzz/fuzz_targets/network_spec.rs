//! The network-spec parser (`mesh:4x4`, `torus:8x8`, `hypercube:6`, …) on arbitrary text; a
//! spec it accepts is built when it is small: a network or an error, never a panic. Specs that
//! name a file (`anynet:FILE`) are left to the `anynet` target, which fuzzes the file's text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ttdl_ir::topology::{Kind, Network, NetworkSpec};

/// Links a spec may have for the target to build it: a crossbar of n nodes has n(n-1), so one
/// at the 4,096-node limit is 16.7 M links, about 2 GB and seconds of legitimate work, more than
/// one fuzz input may take; the others have a few links per node.
const BUILT_LINKS: usize = 1 << 22;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if text.split_once(':').is_some_and(|(k, _)| k.trim() == "anynet") {
        return;
    }
    if let Ok(spec) = text.parse::<NetworkSpec>() {
        let _ = spec.to_string().parse::<NetworkSpec>();
        let n = spec.node_count();
        let links = if spec.kind == Kind::Crossbar {
            n.saturating_mul(n)
        } else {
            n.saturating_mul(64)
        };
        if n <= 4096 && links <= BUILT_LINKS {
            let _ = Network::build(&spec);
        }
    }
});
