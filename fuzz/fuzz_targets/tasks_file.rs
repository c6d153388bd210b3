//! The tasks-file reader (Minsky Fig 5-5) on arbitrary text: a traffic or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = ttdl_backend::tasks_file::read(text);
    }
});
