//! The network-spec parser (`mesh:4x4`, `torus:8x8`, `hypercube:6`, …) on arbitrary text; a
//! spec it accepts is built when it is small: a network or an error, never a panic. Specs that
//! name a file (`anynet:FILE`) are left to the `anynet` target, which fuzzes the file's text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ttdl_ir::topology::{Network, NetworkSpec};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if text.split_once(':').is_some_and(|(k, _)| k.trim() == "anynet") {
        return;
    }
    if let Ok(spec) = text.parse::<NetworkSpec>() {
        let _ = spec.to_string().parse::<NetworkSpec>();
        if spec.node_count() <= 4096 {
            let _ = Network::build(&spec);
        }
    }
});
