#![no_main]
//! The whole connection phase of quire-server against a scripted,
//! mutating client (see src/login.rs).

use libfuzzer_sys::fuzz_target;

fuzz_target!(
    init: {
        quire_fuzz::login::init();
        quire_fuzz::known::tolerate_known_panics();
    },
    |data: &[u8]| {
        quire_fuzz::login::run(data);
    }
);
