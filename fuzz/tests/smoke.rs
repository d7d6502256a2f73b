//! Stable-toolchain smoke run of the harnesses on pseudo-random inputs
//! (no coverage guidance): `cargo test --release` in fuzz/. Set
//! QUIRE_FUZZ_SMOKE=N for more iterations, QUIRE_FUZZ_VERBOSE=1 to print
//! the outcome of generated statements.

fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

fn iterations(default: usize) -> usize {
    std::env::var("QUIRE_FUZZ_SMOKE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn random_input(seed: &mut u64, max: usize) -> Vec<u8> {
    let len = (xorshift(seed) % max as u64) as usize;
    (0..len).map(|_| xorshift(seed) as u8).collect()
}

fn install_filter() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(quire_fuzz::known::tolerate_known_panics);
}

#[test]
fn packet_random() {
    install_filter();
    let mut seed = 0x1234_5678_9ABC_DEF1;
    for _ in 0..iterations(20_000) {
        let data = random_input(&mut seed, 200);
        quire_fuzz::packet::run(&data);
    }
}

#[test]
fn sql_random() {
    use std::sync::atomic::Ordering;
    install_filter();
    let mut seed = 0x0DDB_1A5E_5BAD_5EED;
    for n in 0..iterations(3_000) {
        let mut data = random_input(&mut seed, 300);
        if !data.is_empty() && n % 4 != 0 {
            data[0] |= 0x80; // mostly grammar mode
        }
        quire_fuzz::sql::run(&data);
    }
    let ok = quire_fuzz::sql::OK.load(Ordering::Relaxed);
    let err = quire_fuzz::sql::ERR.load(Ordering::Relaxed);
    let known = quire_fuzz::known::KNOWN_PANICS.load(Ordering::Relaxed);
    eprintln!("sql smoke: {ok} statements succeeded, {err} failed, {known} known panics");
    assert!(ok > 0, "no statement ever succeeded: the set-up is broken");
}

#[test]
fn login_random() {
    use std::sync::atomic::Ordering;
    install_filter();
    quire_fuzz::login::init();
    let mut seed = 0x5EED_0F10_6100_0001;
    for _ in 0..iterations(600) {
        let data = random_input(&mut seed, 120);
        quire_fuzz::login::run(&data);
    }
    let ok = quire_fuzz::login::LOGGED_IN.load(Ordering::Relaxed);
    let refused = quire_fuzz::login::REFUSED.load(Ordering::Relaxed);
    let mutated = quire_fuzz::login::MUTATED.load(Ordering::Relaxed);
    eprintln!("login smoke: {ok} logged in, {refused} refused, {mutated} mutated or soup");
    assert!(
        ok > 0 && refused > 0 && mutated > 0,
        "every kind of flow ran"
    );
}
