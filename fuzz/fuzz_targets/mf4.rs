//! libFuzzer target: [`tandem_fuzz::mf4`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tandem_fuzz::mf4(data));
