//! libFuzzer target: [`tandem_fuzz::xcp_slave`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tandem_fuzz::xcp_slave(data));
