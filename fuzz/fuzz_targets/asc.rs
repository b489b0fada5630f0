//! libFuzzer target: [`tandem_fuzz::asc`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tandem_fuzz::asc(data));
