//! libFuzzer target: [`tandem_fuzz::candump`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tandem_fuzz::candump(data));
