//! libFuzzer target: [`tandem_fuzz::udp`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tandem_fuzz::udp(data));
