//! libFuzzer target: [`tandem_fuzz::serial_line`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tandem_fuzz::serial_line(data));
