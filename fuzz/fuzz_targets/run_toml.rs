//! libFuzzer target: [`tandem_fuzz::run_toml`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tandem_fuzz::run_toml(data));
