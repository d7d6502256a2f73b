//! `Decimal::parse_prefix` on each argument.
fn main() {
    for a in std::env::args().skip(1) {
        let r = quire_engine::types::Decimal::parse_prefix(a.as_bytes());
        println!(
            "{a:?} -> {:?}",
            r.map(|p| (p.value.to_string(), p.consumed, p.lost_digits))
        );
    }
}
