//! The TGFF importer on arbitrary text: a TTDL program or a diagnostic, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ttdl_lang::tgff::{import, TgffOptions};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = import(0, "fuzz.tgff", text, &TgffOptions::default());
    }
});
