//! libFuzzer target: [`tandem_fuzz::dcp_master`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tandem_fuzz::dcp_master(data));
