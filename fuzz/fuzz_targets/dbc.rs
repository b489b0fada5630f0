//! libFuzzer target: [`tandem_fuzz::dbc`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tandem_fuzz::dbc(data));
