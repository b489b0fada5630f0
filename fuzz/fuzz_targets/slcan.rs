//! libFuzzer target: [`tandem_fuzz::slcan`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tandem_fuzz::slcan(data));
