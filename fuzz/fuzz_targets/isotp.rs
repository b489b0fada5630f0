//! libFuzzer target: [`tandem_fuzz::isotp`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tandem_fuzz::isotp(data));
