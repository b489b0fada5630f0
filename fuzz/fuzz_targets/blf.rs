//! libFuzzer target: [`tandem_fuzz::blf`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tandem_fuzz::blf(data));
