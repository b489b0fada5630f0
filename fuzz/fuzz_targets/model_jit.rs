//! libFuzzer target: [`tandem_fuzz::model_jit`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tandem_fuzz::model_jit(data));
