#![no_main]
//! Client-packet decoders of quire-server (see src/packet.rs).

use libfuzzer_sys::fuzz_target;

fuzz_target!(
    init: {
        quire_fuzz::known::tolerate_known_panics();
    },
    |data: &[u8]| {
        quire_fuzz::packet::run(data);
    }
);
