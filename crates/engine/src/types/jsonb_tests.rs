//! Tests of the binary JSON codec: round trips of generated documents,
//! both container widths, every scalar type, and corrupt input.

use super::*;
use crate::types::json::{parse_text, print as print_j, J};
use quire_io::Rng;

fn round_trip(j: &J) -> Vec<u8> {
    let bin = encode(j).expect("encodes");
    assert!(is_binary(&bin));
    assert_eq!(
        decode(&bin).expect("decodes"),
        *j,
        "decode of {}",
        print_j(j)
    );
    assert_eq!(print(&bin).expect("prints"), print_j(j));
    validate(&bin).expect("valid");
    bin
}

fn text(s: &str) -> J {
    parse_text(s.as_bytes()).expect("valid text")
}

fn gen_key(rng: &mut Rng) -> String {
    const ALPHABET: [&str; 8] = ["a", "b", "z", "é", "ключ", "键", "🎉", "\"\\\n"];
    let n = rng.below(4) as usize;
    (0..n)
        .map(|_| ALPHABET[rng.below(ALPHABET.len() as u64) as usize])
        .collect()
}

fn gen_scalar(rng: &mut Rng) -> J {
    match rng.below(10) {
        0 => J::Null,
        1 => J::Bool(rng.chance(0.5)),
        2 => J::Int(rng.range(0, 70_000) as i64 - 35_000),
        3 => J::Int(rng.next_u64() as i64),
        4 => J::UInt(rng.next_u64()),
        5 => J::UInt(rng.below(5_000_000_000)),
        6 => J::Double((rng.next_f64() - 0.5) * 1e6),
        7 => J::Dec(format!("{}.{:02}", rng.below(1000), rng.below(100))),
        _ => J::Str(gen_key(rng).repeat(rng.below(30) as usize)),
    }
}

fn gen(rng: &mut Rng, depth: usize) -> J {
    if depth == 0 || rng.chance(0.3) {
        return gen_scalar(rng);
    }
    let n = rng.below(8) as usize;
    if rng.chance(0.5) {
        J::Arr((0..n).map(|_| gen(rng, depth - 1)).collect())
    } else {
        let mut m = Vec::new();
        for _ in 0..n {
            J::put(&mut m, gen_key(rng), gen(rng, depth - 1));
        }
        J::Obj(m)
    }
}

#[test]
fn generated_documents_round_trip() {
    let mut rng = Rng::new(79);
    for _ in 0..2000 {
        let j = gen(&mut rng, 5);
        round_trip(&j);
    }
}

#[test]
fn every_scalar_type() {
    let cases = [
        (J::Null, LITERAL),
        (J::Bool(true), LITERAL),
        (J::Bool(false), LITERAL),
        (J::Int(-32768), INT16),
        (J::Int(32767), INT16),
        (J::Int(32768), INT32),
        (J::Int(i64::from(i32::MIN)), INT32),
        (J::Int(i64::from(i32::MIN) - 1), INT64),
        (J::Int(i64::MAX), INT64),
        (J::Int(i64::MIN), INT64),
        (J::UInt(65535), UINT16),
        (J::UInt(65536), UINT32),
        (J::UInt(u64::from(u32::MAX) + 1), UINT64),
        (J::UInt(u64::MAX), UINT64),
        (J::Double(-0.5), DOUBLE),
        (J::Double(1e300), DOUBLE),
        (J::Dec("-12.50".into()), OPAQUE),
        (J::Str(String::new()), STRING),
        (J::Str("x".repeat(200)), STRING),
        (J::Str("x".repeat(20_000)), STRING),
    ];
    for (j, t) in cases {
        assert_eq!(round_trip(&j)[0], t, "{j:?}");
        // Inside small and large containers (inlined or not).
        round_trip(&J::Arr(vec![j.clone(), J::Int(1)]));
        round_trip(&J::Obj(vec![("k".into(), j.clone())]));
        let big = J::Str("y".repeat(70_000));
        round_trip(&J::Arr(vec![j.clone(), big.clone()]));
        round_trip(&J::Obj(vec![("a".into(), j), ("bb".into(), big)]));
    }
}

#[test]
fn large_containers_past_64_kib() {
    let arr = J::Arr((0..30_000).map(|i| J::Int(i * 7)).collect());
    assert_eq!(round_trip(&arr)[0], LARGE_ARRAY);
    let many = J::Arr((0..70_000).map(|_| J::Null).collect());
    assert_eq!(round_trip(&many)[0], LARGE_ARRAY, "count past 16 bits");
    let mut m = Vec::new();
    for i in 0..9000 {
        J::put(&mut m, format!("key{i}"), J::Int(i * 100_000));
    }
    let obj = J::Obj(m);
    let bin = round_trip(&obj);
    assert_eq!(bin[0], LARGE_OBJECT);
    let Node::Obj(c) = root(&bin).expect("root") else {
        panic!("not an object")
    };
    assert!(matches!(c.get("key4321"), Ok(Some(Node::Int(432_100_000)))));
    assert!(matches!(c.get("key9000"), Ok(None)));
    // Small containers nested in a large one and the other way round.
    let nested = J::Arr(vec![obj.clone(), text(r#"{"a": [1, 2]}"#), arr]);
    assert_eq!(round_trip(&nested)[0], LARGE_ARRAY);
    let small = J::Arr(vec![J::Int(1), J::Int(70_000)]);
    assert_eq!(round_trip(&small)[0], SMALL_ARRAY);
}

#[test]
fn keys_sorted_unicode_and_duplicates() {
    let j = text(r#"{"bb": 1, "a": 2, "é": 3, "键": 4, "a": 5, "": 6}"#);
    let bin = round_trip(&j);
    assert_eq!(
        print(&bin).expect("prints"),
        r#"{"": 6, "a": 5, "bb": 1, "é": 3, "键": 4}"#
    );
    // An unsorted model value with a duplicate: sorted, last value wins.
    let raw = J::Obj(vec![
        ("b".into(), J::Int(1)),
        ("a".into(), J::Int(2)),
        ("b".into(), J::Int(3)),
    ]);
    let bin = encode(&raw).expect("encodes");
    assert_eq!(print(&bin).expect("prints"), r#"{"a": 2, "b": 3}"#);
    let Node::Obj(c) = root(&bin).expect("root") else {
        panic!("not an object")
    };
    assert!(matches!(c.get("b"), Ok(Some(Node::Int(3)))));
    assert_eq!(
        encode(&J::Obj(vec![("k".repeat(70_000), J::Null)])),
        Err(EncodeError::KeyTooLong)
    );
}

#[test]
fn depth_100() {
    let deep = format!("{}1{}", "[".repeat(100), "]".repeat(100));
    let j = text(&deep);
    round_trip(&j);
    let deep_obj = format!("{}1{}", "{\"k\": ".repeat(99), "}".repeat(99));
    round_trip(&text(&deep_obj));
}

#[test]
fn empty_containers_and_scalar_roots() {
    for s in [
        "{}", "[]", "[[], {}]", "\"\"", "0", "-1", "1.5", "true", "null",
    ] {
        round_trip(&text(s));
    }
    assert_eq!(encode(&text("{}")).expect("encodes")[0], SMALL_OBJECT);
    assert_eq!(encode(&text("[]")).expect("encodes")[0], SMALL_ARRAY);
}

#[test]
fn corrupt_values_are_errors() {
    let mut rng = Rng::new(7);
    let docs = [
        text(r#"{"a": [1, 2, {"b": "xyz"}], "cc": 1.5, "ddd": 70000, "e": null}"#),
        J::Arr((0..20_000).map(|i| J::Int(i * 70_000)).collect()),
    ];
    for j in docs {
        let bin = encode(&j).expect("encodes");
        // Every truncation.
        let step = (bin.len() / 500).max(1);
        for cut in (0..bin.len()).step_by(step) {
            assert!(print(&bin[..cut]).is_err(), "cut at {cut}");
        }
        // Random byte changes: an error or some document, never a panic.
        for _ in 0..3000 {
            let mut bad = bin.clone();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(bad.len() as u64) as usize;
                bad[at] = rng.below(256) as u8;
            }
            let _ = print(&bad);
            let _ = decode(&bad);
            if let Ok(Node::Obj(c)) = root(&bad) {
                let _ = c.get("a");
            }
        }
    }
}

#[test]
fn self_referencing_containers_are_refused() {
    // A small array whose two elements both point at the array itself.
    let mut bad = vec![SMALL_ARRAY];
    bad.extend_from_slice(&2u16.to_le_bytes());
    bad.extend_from_slice(&10u16.to_le_bytes());
    for _ in 0..2 {
        bad.push(SMALL_ARRAY);
        bad.extend_from_slice(&0u16.to_le_bytes());
    }
    assert!(print(&bad).is_err());
    assert!(decode(&bad).is_err());
}

#[test]
fn stored_values_text_or_binary() {
    let t = br#"{"a": 1}"#;
    assert!(!is_binary(t));
    assert_eq!(stored_text(t).expect("old text"), t.to_vec());
    let bin = stored_form(t).expect("encodes").into_owned();
    assert!(is_binary(&bin));
    assert_eq!(stored_text(&bin).expect("binary"), t.to_vec());
    assert_eq!(stored_form(&bin).expect("kept").as_ref(), &bin[..]);
    assert_eq!(stored_doc(t).expect("text"), stored_doc(&bin).expect("bin"));
    assert!(
        stored_text(b" {}").is_err(),
        "printed text never starts with a space"
    );
    assert!(stored_text(b"").is_err());
}
