//! libFuzzer target: [`tandem_fuzz::ssp`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tandem_fuzz::ssp(data));
