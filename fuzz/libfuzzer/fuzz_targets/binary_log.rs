#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz::assert_case(fuzz::target::Target::BinaryLog, data));
