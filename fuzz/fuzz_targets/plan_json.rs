//! The reader of the JSON document `ttdl run --format json` writes (and of a bare traffic IR),
//! on arbitrary text: a program or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = ttdl_backend::pipeline::read_plan_document(text);
    }
});
