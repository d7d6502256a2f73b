#![no_main]
//! The SQL front end on an in-memory engine (see src/sql.rs).

use libfuzzer_sys::fuzz_target;

fuzz_target!(
    init: {
        quire_fuzz::sql::init();
        quire_fuzz::known::tolerate_known_panics();
    },
    |data: &[u8]| {
        quire_fuzz::sql::run(data);
    }
);
