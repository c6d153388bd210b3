//! The reader and the evaluator on arbitrary text, with the standard library loaded and under a
//! small budget (a runaway stops in milliseconds), then matching and timing what it built: any
//! input gives a value or diagnostics, never a panic, a hang or an abort.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ttdl_lang::{Interpreter, Limits};

thread_local! {
    /// The interpreter with the standard library loaded, once; each input runs in a clone of
    /// it (a cheap snapshot: values are shared).
    static LOADED: Interpreter = {
        let limits = Limits {
            steps: 200_000,
            depth: 200,
            tasks: 256,
            messages: 2_048,
            memory: 64 << 20,
            time: std::time::Duration::from_secs(2),
        };
        let mut interp = Interpreter::new(limits);
        for (name, text) in ttdl_stdlib::SOURCES {
            if interp.eval_source(name, text).is_err() {
                panic!("the standard library does not load under the fuzzing budget: {name}");
            }
        }
        interp
    };
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut interp = LOADED.with(Interpreter::clone);
    if interp.eval_source("fuzz.ttdl", text).is_ok() {
        let _ = interp.traffic(None);
    }
});
