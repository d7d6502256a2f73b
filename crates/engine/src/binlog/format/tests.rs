use super::*;
use crate::types::{Date, DateTime, Decimal};
use std::path::{Path, PathBuf};
use std::process::Command;

const TS: u32 = 1_705_314_030;
const TOOL: &str = "/usr/bin/mariadb-binlog";

fn dec(s: &str) -> Value {
    Value::Decimal(s.parse::<Decimal>().unwrap())
}

fn dt(y: u32, mo: u32, d: u32, h: u32, mi: u32, s: u32, us: u32) -> Value {
    Value::DateTime(DateTime::new(y, mo, d, h, mi, s, us).unwrap())
}

fn date(y: u32, m: u32, d: u32) -> Value {
    Value::Date(Date::new(y, m, d).unwrap())
}

fn bytes(b: &[u8]) -> Value {
    Value::Bytes(b.to_vec())
}

// ---------------------------------------------------------------------------
// Sample data: every column type, with how mariadb-binlog prints each value

/// Every column type quire has, with its DDL spelling.
fn sample_columns() -> Vec<(ColumnType, &'static str)> {
    let d = |precision, scale| ColumnType::Decimal { precision, scale };
    vec![
        (ColumnType::TinyInt { unsigned: false }, "tinyint"),
        (ColumnType::TinyInt { unsigned: true }, "tinyint unsigned"),
        (ColumnType::SmallInt { unsigned: false }, "smallint"),
        (ColumnType::SmallInt { unsigned: true }, "smallint unsigned"),
        (ColumnType::MediumInt { unsigned: false }, "mediumint"),
        (
            ColumnType::MediumInt { unsigned: true },
            "mediumint unsigned",
        ),
        (ColumnType::Int { unsigned: false }, "int"),
        (ColumnType::Int { unsigned: true }, "int unsigned"),
        (ColumnType::BigInt { unsigned: false }, "bigint"),
        (ColumnType::BigInt { unsigned: true }, "bigint unsigned"),
        (d(10, 2), "decimal(10,2)"),
        (d(5, 3), "decimal(5,3)"),
        (d(65, 30), "decimal(65,30)"),
        (d(20, 0), "decimal(20,0)"),
        (ColumnType::Float, "float"),
        (ColumnType::Double, "double"),
        (ColumnType::char(10), "char(10)"),
        (ColumnType::char(100), "char(100)"),
        (ColumnType::varchar(300), "varchar(300)"),
        (ColumnType::varchar(20), "varchar(20)"),
        (ColumnType::text(255), "tinytext"),
        (ColumnType::text(65_535), "text"),
        (ColumnType::text(16_777_215), "mediumtext"),
        (ColumnType::Blob { max_bytes: 65_535 }, "blob"),
        (
            ColumnType::Blob {
                max_bytes: u32::MAX,
            },
            "longblob",
        ),
        (ColumnType::Binary { len: 4 }, "binary(4)"),
        (ColumnType::VarBinary { len: 300 }, "varbinary(300)"),
        (ColumnType::Date, "date"),
        (ColumnType::DateTime { fsp: 6 }, "datetime(6)"),
        (ColumnType::DateTime { fsp: 0 }, "datetime"),
        (ColumnType::DateTime { fsp: 3 }, "datetime(3)"),
        (ColumnType::Timestamp { fsp: 6 }, "timestamp(6)"),
        (ColumnType::Timestamp { fsp: 0 }, "timestamp"),
        (ColumnType::Timestamp { fsp: 1 }, "timestamp(1)"),
    ]
}

fn sample_types() -> Vec<ColumnType> {
    sample_columns().into_iter().map(|(t, _)| t).collect()
}

fn create_table_sql() -> String {
    let cols: Vec<String> = sample_columns()
        .iter()
        .enumerate()
        .map(|(i, (_, ddl))| format!("c{} {ddl}", i + 1))
        .collect();
    format!("CREATE TABLE t ({})", cols.join(", "))
}

type Row = Vec<(Value, String)>;

/// Extreme values: negative minimums, unsigned maximums, a 65-digit
/// decimal, multi-byte and 300-byte strings, a 70 000-byte MEDIUMTEXT,
/// control bytes, the DATETIME and TIMESTAMP range ends.
fn row_a() -> Row {
    let long_varchar = "x".repeat(298) + "é";
    vec![
        (Value::Int(-128), "-128 (128)".into()),
        (Value::UInt(255), "-1 (255)".into()),
        (Value::Int(-32768), "-32768 (32768)".into()),
        (Value::UInt(65535), "-1 (65535)".into()),
        (Value::Int(-8_388_608), "-8388608 (8388608)".into()),
        (Value::UInt(16_777_215), "-1 (16777215)".into()),
        (
            Value::Int(i64::from(i32::MIN)),
            "-2147483648 (2147483648)".into(),
        ),
        (Value::UInt(u64::from(u32::MAX)), "-1 (4294967295)".into()),
        (
            Value::Int(i64::MIN),
            "-9223372036854775808 (9223372036854775808)".into(),
        ),
        (Value::UInt(u64::MAX), "-1 (18446744073709551615)".into()),
        (dec("-123.45"), "-123.45".into()),
        (dec("0.001"), "0.001".into()),
        (
            dec("-12345678901234567890123456789012345.123456789012345678901234567891"),
            "-12345678901234567890123456789012345.123456789012345678901234567891".into(),
        ),
        (dec("99999999999999999999"), "99999999999999999999".into()),
        (Value::Float(1.5), "1.5".into()),
        (Value::Double(-2.25), "-2.25".into()),
        (bytes(b"abc"), "'abc'".into()),
        (
            bytes("ü".repeat(100).as_bytes()),
            format!("'{}'", "ü".repeat(100)),
        ),
        (bytes(long_varchar.as_bytes()), format!("'{long_varchar}'")),
        // mariadb-binlog escapes only control bytes: quotes stay as they are.
        (bytes(b"it's"), "'it's'".into()),
        (bytes(b"tiny\ttext"), "'tiny\\x09text'".into()),
        (bytes(b"line1\nline2"), "'line1\\x0aline2'".into()),
        (
            bytes(&vec![b'm'; 70_000]),
            format!("'{}'", "m".repeat(70_000)),
        ),
        (bytes(b"\x00\x01blob"), "'\\x00\\x01blob'".into()),
        (bytes(b"long blob"), "'long blob'".into()),
        (bytes(b"ab\x00\x00"), "'ab\\x00\\x00'".into()),
        (bytes(&[b'v'; 300]), format!("'{}'", "v".repeat(300))),
        (date(2024, 2, 29), "'2024:02:29'".into()),
        (
            dt(2024, 1, 15, 10, 20, 30, 123_456),
            "'2024-01-15 10:20:30.123456'".into(),
        ),
        (
            dt(9999, 12, 31, 23, 59, 59, 0),
            "'9999-12-31 23:59:59'".into(),
        ),
        (
            dt(1000, 1, 1, 0, 0, 0, 7000),
            "'1000-01-01 00:00:00.007'".into(),
        ),
        (
            dt(2024, 1, 15, 10, 20, 30, 500_000),
            "1705314030.500000".into(),
        ),
        (dt(2038, 1, 19, 3, 14, 7, 0), "2147483647".into()),
        (dt(1970, 1, 1, 0, 0, 1, 900_000), "1.9".into()),
    ]
}

/// Ordinary values: small numbers, zero, empty strings.
fn row_b() -> Row {
    vec![
        (Value::Int(127), "127".into()),
        (Value::UInt(0), "0".into()),
        (Value::Int(1), "1".into()),
        (Value::UInt(2), "2".into()),
        (Value::Int(-3), "-3 (16777213)".into()),
        (Value::UInt(4), "4".into()),
        (Value::Int(-5), "-5 (4294967291)".into()),
        (Value::UInt(6), "6".into()),
        (Value::Int(7), "7".into()),
        (Value::UInt(8), "8".into()),
        (dec("0.00"), "0.00".into()),
        (dec("-0.5"), "-0.500".into()),
        (dec("1"), format!("1.{}", "0".repeat(30))),
        (dec("-1"), "-1".into()),
        (Value::Float(-0.25), "-0.25".into()),
        (Value::Double(1e300), "1.0000000000000000525e+300".into()),
        (bytes(b""), "''".into()),
        (bytes(b"z"), "'z'".into()),
        (bytes(b"short"), "'short'".into()),
        (bytes(b"back\\slash"), "'back\\slash'".into()),
        (bytes(b""), "''".into()),
        (bytes(b"t"), "'t'".into()),
        (bytes(b"m"), "'m'".into()),
        (bytes(b""), "''".into()),
        (bytes(b"L"), "'L'".into()),
        (bytes(b"\x01\x02\x03\x04"), "'\\x01\\x02\\x03\\x04'".into()),
        (bytes(b""), "''".into()),
        (date(1, 1, 1), "'0001:01:01'".into()),
        (
            dt(2000, 2, 29, 0, 0, 0, 1),
            "'2000-02-29 00:00:00.000001'".into(),
        ),
        (dt(1970, 1, 1, 0, 0, 0, 0), "'1970-01-01 00:00:00'".into()),
        (
            dt(2023, 12, 31, 23, 59, 59, 999_000),
            "'2023-12-31 23:59:59.999'".into(),
        ),
        (dt(1970, 1, 1, 0, 0, 1, 1), "1.000001".into()),
        (dt(2001, 9, 9, 1, 46, 40, 0), "1000000000".into()),
        (dt(2024, 1, 15, 10, 20, 30, 0), "1705314030.0".into()),
    ]
}

/// All NULLs.
fn row_null() -> Row {
    sample_types()
        .iter()
        .map(|_| (Value::Null, "NULL".to_string()))
        .collect()
}

fn values(row: &Row) -> Vec<Value> {
    row.iter().map(|(v, _)| v.clone()).collect()
}

/// The `###` lines mariadb-binlog prints for one row image.
fn image_lines(clause: &str, row: &Row) -> Vec<String> {
    let mut out = vec![format!("### {clause}")];
    for (i, (_, shown)) in row.iter().enumerate() {
        out.push(format!("###   @{}={shown}", i + 1));
    }
    out
}

/// A second, small table for multi-statement transactions.
fn t2_types() -> Vec<ColumnType> {
    vec![ColumnType::Int { unsigned: false }, ColumnType::varchar(20)]
}

fn t2_row(id: i64, name: &str) -> Row {
    let shown = if id < 0 {
        format!("{id} ({})", id as i32 as u32)
    } else {
        id.to_string()
    };
    vec![
        (Value::Int(id), shown),
        (Value::text(name), format!("'{name}'")),
    ]
}

/// A complete binlog file and the `###` lines mariadb-binlog must print
/// for it: DDL, an INSERT of three rows, an UPDATE of two, a DELETE, a
/// two-statement transaction on two tables, then ROTATE.
fn sample_log(w: &EventWriter, with_gtid: bool) -> (Vec<u8>, Vec<String>) {
    let types = sample_types();
    let nullable = vec![true; types.len()];
    let t2 = t2_types();
    let t2_nullable = [false, true];
    let (ra, rb, rn) = (row_a(), row_b(), row_null());
    let (a, b, n) = (values(&ra), values(&rb), values(&rn));
    let mut expected = Vec::new();
    let mut seq = 0i64;
    let next_gtid = |seq: &mut i64| {
        *seq += 1;
        Gtid {
            last_committed: *seq - 1,
            sequence_number: *seq,
            commit_micros: u64::from(TS) * 1_000_000 + 250,
        }
    };

    let mut f = MAGIC.to_vec();
    f.extend(w.format_description(4, TS, TS));
    if with_gtid {
        let ev = w.previous_gtids(f.len() as u64, TS);
        f.extend(ev);
    }
    let g = next_gtid(&mut seq);
    let ev = w
        .ddl(
            f.len() as u64,
            TS,
            7,
            "db1",
            &create_table_sql(),
            with_gtid.then_some(&g),
        )
        .unwrap();
    f.extend(ev);
    let ev = w
        .ddl(
            f.len() as u64,
            TS,
            7,
            "db1",
            "CREATE TABLE t2 (id int NOT NULL, name varchar(20))",
            None,
        )
        .unwrap();
    f.extend(ev);

    let tx = |f: &mut Vec<u8>, g: Gtid, statements: &[TableRows<'_>], xid: u64| {
        let ev = w
            .transaction(
                f.len() as u64,
                TS,
                7,
                "db1",
                with_gtid.then_some(&g),
                statements,
                xid,
                DEFAULT_ROWS_EVENT_MAX_SIZE,
            )
            .unwrap();
        f.extend(ev);
    };
    let on_t = |kind, rows| TableRows {
        table_id: 42,
        db: "db1",
        table: "t",
        types: &types,
        nullable: &nullable,
        kind,
        rows,
    };

    // INSERT three rows.
    let rows = [RowImage::Row(&a), RowImage::Row(&b), RowImage::Row(&n)];
    tx(
        &mut f,
        next_gtid(&mut seq),
        &[on_t(RowsKind::Write, &rows)],
        101,
    );
    for r in [&ra, &rb, &rn] {
        expected.push("### INSERT INTO `db1`.`t`".to_string());
        expected.extend(image_lines("SET", r));
    }

    // UPDATE two rows.
    let rows = [
        RowImage::Update {
            before: &a,
            after: &b,
        },
        RowImage::Update {
            before: &n,
            after: &a,
        },
    ];
    tx(
        &mut f,
        next_gtid(&mut seq),
        &[on_t(RowsKind::Update, &rows)],
        102,
    );
    for (before, after) in [(&ra, &rb), (&rn, &ra)] {
        expected.push("### UPDATE `db1`.`t`".to_string());
        expected.extend(image_lines("WHERE", before));
        expected.extend(image_lines("SET", after));
    }

    // DELETE one row.
    let rows = [RowImage::Row(&b)];
    tx(
        &mut f,
        next_gtid(&mut seq),
        &[on_t(RowsKind::Delete, &rows)],
        103,
    );
    expected.push("### DELETE FROM `db1`.`t`".to_string());
    expected.extend(image_lines("WHERE", &rb));

    // Two statements on two tables in one transaction.
    let (x1, x2) = (t2_row(1, "one"), t2_row(-2, "two"));
    let (v1, v2) = (values(&x1), values(&x2));
    let t2_rows = [RowImage::Row(&v1), RowImage::Row(&v2)];
    let t_rows = [RowImage::Row(&n)];
    tx(
        &mut f,
        next_gtid(&mut seq),
        &[
            TableRows {
                table_id: 43,
                db: "db1",
                table: "t2",
                types: &t2,
                nullable: &t2_nullable,
                kind: RowsKind::Write,
                rows: &t2_rows,
            },
            on_t(RowsKind::Delete, &t_rows),
        ],
        104,
    );
    for r in [&x1, &x2] {
        expected.push("### INSERT INTO `db1`.`t2`".to_string());
        expected.extend(image_lines("SET", r));
    }
    expected.push("### DELETE FROM `db1`.`t`".to_string());
    expected.extend(image_lines("WHERE", &rn));

    let ev = w.rotate(f.len() as u64, TS, "binlog.000002");
    f.extend(ev);
    (f, expected)
}

/// A small log (no huge values) for exhaustive truncation tests.
fn small_log(w: &EventWriter) -> Vec<u8> {
    let t2 = t2_types();
    let mut f = MAGIC.to_vec();
    f.extend(w.format_description(4, TS, 0));
    let ev = w.previous_gtids(f.len() as u64, TS);
    f.extend(ev);
    let ev = w
        .ddl(
            f.len() as u64,
            TS,
            1,
            "db",
            "CREATE TABLE t2 (id int, name varchar(20))",
            Some(&Gtid::default()),
        )
        .unwrap();
    f.extend(ev);
    for xid in 1..=4u64 {
        let rows: Vec<Vec<Value>> = (0..xid)
            .map(|i| values(&t2_row(i as i64, "name")))
            .collect();
        let images: Vec<RowImage<'_>> = rows.iter().map(|r| RowImage::Row(r)).collect();
        let g = Gtid {
            last_committed: xid as i64 - 1,
            sequence_number: xid as i64,
            commit_micros: 1,
        };
        let ev = w
            .transaction(
                f.len() as u64,
                TS,
                1,
                "db",
                (xid % 2 == 0).then_some(&g),
                &[TableRows {
                    table_id: 7,
                    db: "db",
                    table: "t2",
                    types: &t2,
                    nullable: &[true, true],
                    kind: RowsKind::Write,
                    rows: &images,
                }],
                xid,
                DEFAULT_ROWS_EVENT_MAX_SIZE,
            )
            .unwrap();
        f.extend(ev);
    }
    let ev = w.stop(f.len() as u64, TS);
    f.extend(ev);
    f
}

// ---------------------------------------------------------------------------
// Primitive encodings

#[test]
fn crc32_is_zlibs() {
    assert_eq!(crc32(b""), 0);
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(
        crc32(b"The quick brown fox jumps over the lazy dog"),
        0x414F_A339
    );
}

#[test]
fn packed_int_round_trip() {
    for v in [
        0u64,
        1,
        250,
        251,
        252,
        0xFFFF,
        0x1_0000,
        0xFF_FFFF,
        0x100_0000,
        u64::MAX,
    ] {
        let mut b = Vec::new();
        put_packed_int(&mut b, v);
        assert_eq!(b.len() as u64, packed_int_len(v), "{v}");
        let mut r: &[u8] = &b;
        assert_eq!(take_packed_int(&mut r).unwrap(), v);
        assert!(r.is_empty());
    }
    for bad in [&[][..], &[0xFC, 1], &[0xFD, 1, 2], &[0xFE, 1], &[0xFF]] {
        let mut r: &[u8] = bad;
        assert!(take_packed_int(&mut r).is_err(), "{bad:?}");
    }
}

#[test]
fn decimal_binary_matches_mysql() {
    // The example of MySQL's decimal2bin documentation: DECIMAL(14,4).
    let d = |s: &str| s.parse::<Decimal>().unwrap();
    let mut b = Vec::new();
    encode_decimal(&d("1234567890.1234"), 14, 4, &mut b).unwrap();
    assert_eq!(b, [0x81, 0x0D, 0xFB, 0x38, 0xD2, 0x04, 0xD2]);
    b.clear();
    encode_decimal(&d("-1234567890.1234"), 14, 4, &mut b).unwrap();
    assert_eq!(b, [0x7E, 0xF2, 0x04, 0xC7, 0x2D, 0xFB, 0x2D]);

    assert_eq!(decimal_bin_size(10, 2), 5);
    assert_eq!(decimal_bin_size(65, 30), 30);
    assert_eq!(decimal_bin_size(9, 9), 4);
    assert_eq!(decimal_bin_size(1, 0), 1);
    assert_eq!(decimal_bin_size(18, 9), 8);

    let cases = [
        ("0", 1, 0),
        ("0", 10, 2),
        ("-0.01", 10, 2),
        ("99999999.99", 10, 2),
        ("-99999999.99", 10, 2),
        ("0.000000001", 9, 9),
        ("-0.999999999", 9, 9),
        ("123456789.123456789", 18, 9),
        ("1", 65, 0),
        (
            "99999999999999999999999999999999999999999999999999999999999999999",
            65,
            0,
        ),
        (
            "-99999999999999999999999999999999999.999999999999999999999999999999",
            65,
            30,
        ),
        ("0.000000000000000000000000000001", 65, 30),
        ("12.5", 3, 1),
    ];
    for (text, p, s) in cases {
        let v = d(text);
        let mut b = Vec::new();
        encode_decimal(&v, p, s, &mut b).unwrap();
        assert_eq!(b.len(), decimal_bin_size(p, s), "{text}");
        let (back, n) = decode_decimal(&b, p, s).unwrap();
        assert_eq!(n, b.len());
        assert_eq!(back, v, "{text} DECIMAL({p},{s})");
        assert_eq!(back.scale(), s);
    }
    // Byte order follows numeric order.
    let mut sorted = Vec::new();
    for t in ["-100.5", "-1", "-0.01", "0", "0.01", "1", "99.99"] {
        let mut b = Vec::new();
        encode_decimal(&d(t), 6, 2, &mut b).unwrap();
        sorted.push(b);
    }
    assert!(sorted.windows(2).all(|w| w[0] < w[1]));
    // Does not fit.
    assert!(encode_decimal(&d("1000"), 5, 2, &mut Vec::new()).is_err());
    assert!(encode_decimal(&d("1"), 0, 0, &mut Vec::new()).is_err());
}

#[test]
fn type_mapping_and_metadata() {
    let cases: Vec<(ColumnType, u8, Vec<u8>)> = vec![
        (ColumnType::TinyInt { unsigned: true }, 1, vec![]),
        (ColumnType::SmallInt { unsigned: false }, 2, vec![]),
        (ColumnType::MediumInt { unsigned: false }, 9, vec![]),
        (ColumnType::Int { unsigned: false }, 3, vec![]),
        (ColumnType::BigInt { unsigned: true }, 8, vec![]),
        (
            ColumnType::Decimal {
                precision: 10,
                scale: 2,
            },
            246,
            vec![10, 2],
        ),
        (ColumnType::Float, 4, vec![4]),
        (ColumnType::Double, 5, vec![8]),
        (ColumnType::char(10), 254, vec![0xFE, 40]),
        // 400 bytes: the high bits 0x100 fold into the real-type byte.
        (ColumnType::char(100), 254, vec![0xEE, 0x90]),
        (ColumnType::char(255), 254, vec![0xCE, 0xFC]),
        (ColumnType::Binary { len: 16 }, 254, vec![0xFE, 16]),
        (ColumnType::varchar(300), 15, vec![0xB0, 0x04]),
        (ColumnType::varchar(16_383), 15, vec![0xFC, 0xFF]),
        (ColumnType::VarBinary { len: 65_535 }, 15, vec![0xFF, 0xFF]),
        (ColumnType::text(255), 252, vec![1]),
        (ColumnType::text(65_535), 252, vec![2]),
        (
            ColumnType::Blob {
                max_bytes: 16_777_215,
            },
            252,
            vec![3],
        ),
        (
            ColumnType::Blob {
                max_bytes: u32::MAX,
            },
            252,
            vec![4],
        ),
        (ColumnType::Date, 10, vec![]),
        (ColumnType::DateTime { fsp: 6 }, 18, vec![6]),
        (ColumnType::Timestamp { fsp: 0 }, 17, vec![0]),
    ];
    for (ty, code, meta) in cases {
        assert_eq!(binlog_type(&ty), (code, meta), "{ty}");
    }
}

#[test]
fn temporal_bytes() {
    let mut b = Vec::new();
    encode_value(
        &dt(2024, 1, 15, 10, 20, 30, 123_456),
        &ColumnType::DateTime { fsp: 6 },
        &mut b,
    )
    .unwrap();
    assert_eq!(b, [0x99, 0xB2, 0x5E, 0xA5, 0x1E, 0x01, 0xE2, 0x40]);
    b.clear();
    encode_value(
        &dt(2024, 1, 15, 10, 20, 30, 500_000),
        &ColumnType::Timestamp { fsp: 2 },
        &mut b,
    )
    .unwrap();
    assert_eq!(b, [0x65, 0xA5, 0x06, 0xEE, 50]);
    b.clear();
    encode_value(&date(2024, 2, 29), &ColumnType::Date, &mut b).unwrap();
    let packed = 29 | (2 << 5) | (2024 << 9);
    assert_eq!(b, (packed as u32).to_le_bytes()[..3]);
    assert_eq!(
        timestamp_seconds(&DateTime::new(1970, 1, 1, 0, 0, 0, 0).unwrap()),
        0
    );
    assert_eq!(
        timestamp_seconds(&DateTime::new(2038, 1, 19, 3, 14, 7, 0).unwrap()),
        i64::from(i32::MAX)
    );
    // Every fsp round-trips, truncating below the fsp's unit.
    for fsp in 0..=6u8 {
        for ty in [ColumnType::DateTime { fsp }, ColumnType::Timestamp { fsp }] {
            let unit = 10u32.pow(6 - u32::from(fsp));
            let v = dt(2001, 2, 3, 4, 5, 6, 654_321 / unit * unit);
            let mut b = Vec::new();
            encode_value(&v, &ty, &mut b).unwrap();
            let (back, n) = decode_value(&b, &ty).unwrap();
            assert_eq!(n, b.len());
            assert_eq!(back, v, "{ty}");
        }
    }
}

#[test]
fn row_images_round_trip() {
    let types = sample_types();
    for row in [row_a(), row_b(), row_null()] {
        let v = values(&row);
        let mut b = Vec::new();
        encode_row_image(&v, &types, &mut b).unwrap();
        let (back, n) = decode_row_image(&b, &types).unwrap();
        assert_eq!(n, b.len());
        assert_eq!(back, v);
    }
}

#[test]
fn bad_values_are_errors() {
    let enc = |v: Value, ty: ColumnType| encode_value(&v, &ty, &mut Vec::new());
    assert!(enc(Value::Int(128), ColumnType::TinyInt { unsigned: false }).is_err());
    assert!(enc(Value::Int(-1), ColumnType::Int { unsigned: true }).is_err());
    assert!(enc(
        Value::UInt(u64::MAX),
        ColumnType::BigInt { unsigned: false }
    )
    .is_err());
    assert!(enc(Value::text("1"), ColumnType::Int { unsigned: false }).is_err());
    assert!(enc(bytes(&[b'a'; 41]), ColumnType::char(10)).is_err());
    assert!(enc(bytes(&[b'a'; 81]), ColumnType::varchar(20)).is_err());
    assert!(enc(bytes(&[b'a'; 256]), ColumnType::text(255)).is_err());
    assert!(enc(Value::Int(1), ColumnType::Blob { max_bytes: 255 }).is_err());
    assert!(enc(dt(2040, 1, 1, 0, 0, 0, 0), ColumnType::Timestamp { fsp: 0 }).is_ok()); // u32 seconds reach 2106
    assert!(enc(
        dt(1969, 12, 31, 23, 59, 59, 0),
        ColumnType::Timestamp { fsp: 0 }
    )
    .is_err());
    assert!(enc(Value::Double(1.0), ColumnType::Date).is_err());
    let types = [ColumnType::Int { unsigned: false }];
    assert!(encode_row_image(&[], &types, &mut Vec::new()).is_err());
    let w = EventWriter::new(1, true);
    let one = [Value::Int(1)];
    assert!(w
        .rows(
            0,
            0,
            RowsKind::Update,
            1,
            &types,
            &[RowImage::Row(&one)],
            true
        )
        .is_err());
    assert!(w
        .rows(
            0,
            0,
            RowsKind::Write,
            1,
            &types,
            &[RowImage::Update {
                before: &one,
                after: &one
            }],
            true
        )
        .is_err());
}

// ---------------------------------------------------------------------------
// Events and the reader

#[test]
fn event_header_and_footer() {
    for checksum in [true, false] {
        let w = EventWriter::new(0xA1B2_C3D4, checksum);
        let ev = w.xid(1000, 0x0102_0304, 77);
        let size = 19 + 8 + if checksum { 4 } else { 0 };
        assert_eq!(ev.len(), size);
        assert_eq!(ev[..4], [4, 3, 2, 1]);
        assert_eq!(ev[4], event_type::XID);
        assert_eq!(ev[5..9], 0xA1B2_C3D4u32.to_le_bytes());
        assert_eq!(ev[9..13], (size as u32).to_le_bytes());
        assert_eq!(ev[13..17], (1000 + size as u32).to_le_bytes());
        assert_eq!(ev[17..19], [0, 0]);
        assert_eq!(ev[19..27], 77u64.to_le_bytes());
        if checksum {
            assert_eq!(ev[27..], crc32(&ev[..27]).to_le_bytes());
        }
        // The FORMAT_DESCRIPTION_EVENT is 122 bytes (end_log_pos 126, like
        // MySQL 8.0) and always has a CRC.
        let fde = w.format_description(4, 0, 0);
        assert_eq!(fde.len(), 122);
        assert_eq!(fde[117], u8::from(checksum));
        assert_eq!(fde[118..], crc32(&fde[..118]).to_le_bytes());
    }
}

#[test]
fn sample_log_parses_back() {
    for checksum in [true, false] {
        for with_gtid in [true, false] {
            let w = EventWriter::new(3, checksum);
            let (f, _) = sample_log(&w, with_gtid);
            let log = parse_events(&f);
            assert_eq!(log.error, None);
            assert!(log.checksum == checksum && !log.in_use);
            assert_eq!(log.valid_end, f.len() as u64);
            assert_eq!(log.complete_tx_end, f.len() as u64);
            assert_eq!(log.xids, [101, 102, 103, 104]);
            // Positions chain and every event has the writer's server id.
            let mut pos = 4;
            for ev in &log.events {
                assert_eq!(ev.pos, pos);
                assert_eq!(ev.server_id, 3);
                assert_eq!(ev.timestamp, TS);
                pos = ev.end;
            }
            let types: Vec<u8> = log.events.iter().map(|e| e.type_code).collect();
            let gtids = types
                .iter()
                .filter(|&&t| t == event_type::ANONYMOUS_GTID)
                .count();
            assert_eq!(gtids, if with_gtid { 5 } else { 0 });
            match &log.events[0].data {
                EventData::FormatDescription {
                    binlog_version: 4,
                    server_version,
                    created: TS,
                    ..
                } => assert_eq!(server_version, SERVER_VERSION),
                other => panic!("{other:?}"),
            }
            let queries: Vec<&str> = log
                .events
                .iter()
                .filter_map(|e| match &e.data {
                    EventData::Query { sql, db, .. } => {
                        assert_eq!(db, "db1");
                        Some(sql.as_str())
                    }
                    _ => None,
                })
                .collect();
            assert_eq!(queries.len(), 6);
            assert_eq!(queries[0], create_table_sql());
            assert!(queries[2..].iter().all(|q| *q == "BEGIN"));
            assert_eq!(
                log.events.last().map(|e| &e.data),
                Some(&EventData::Rotate {
                    position: 4,
                    next_file: "binlog.000002".to_string()
                })
            );

            // Decode every rows event with its table's types.
            let types = sample_types();
            let mut decoded: Vec<DecodedRow> = Vec::new();
            let mut stmt_ends = 0;
            for ev in &log.events {
                match &ev.data {
                    EventData::TableMap {
                        table,
                        column_types,
                        nullable,
                        ..
                    } if table == "t" => {
                        let codes: Vec<u8> = types.iter().map(|t| binlog_type(t).0).collect();
                        assert_eq!(column_types, &codes);
                        assert!(nullable.iter().all(|&n| n));
                    }
                    EventData::Rows(r) if r.table_id == 42 => {
                        assert!(
                            ev.end - ev.pos <= DEFAULT_ROWS_EVENT_MAX_SIZE as u64 || {
                                // Only single rows above the limit get a big event.
                                r.decode(&types).unwrap().len() == 1
                            }
                        );
                        if r.flags & STMT_END_F != 0 {
                            stmt_ends += 1;
                        }
                        decoded.extend(r.decode(&types).unwrap());
                    }
                    _ => {}
                }
            }
            assert_eq!(stmt_ends, 4);
            let (a, b, n) = (values(&row_a()), values(&row_b()), values(&row_null()));
            let w_ = |v: &Vec<Value>| DecodedRow {
                before: None,
                after: Some(v.clone()),
            };
            let u_ = |x: &Vec<Value>, y: &Vec<Value>| DecodedRow {
                before: Some(x.clone()),
                after: Some(y.clone()),
            };
            let d_ = |v: &Vec<Value>| DecodedRow {
                before: Some(v.clone()),
                after: None,
            };
            assert_eq!(
                decoded,
                [
                    w_(&a),
                    w_(&b),
                    w_(&n),
                    u_(&a, &b),
                    u_(&n, &a),
                    d_(&b),
                    d_(&n)
                ]
            );
        }
    }
}

#[test]
fn gtid_events_carry_clock_and_self_inclusive_length() {
    for checksum in [true, false] {
        let w = EventWriter::new(1, checksum);
        let (f, _) = sample_log(&w, true);
        let log = parse_events(&f);
        let mut seen = 0;
        for (i, ev) in log.events.iter().enumerate() {
            if let EventData::Gtid {
                anonymous,
                rbr_only,
                last_committed,
                sequence_number,
                commit_micros,
                transaction_length,
                ..
            } = ev.data
            {
                seen += 1;
                assert!(anonymous);
                assert_eq!(sequence_number, seen);
                assert_eq!(last_committed, seen - 1);
                assert_eq!(commit_micros, u64::from(TS) * 1_000_000 + 250);
                // DDL (a lone QUERY) is not row-only; transactions are.
                let next = &log.events[i + 1];
                let is_ddl = matches!(&next.data, EventData::Query { sql, .. } if sql != "BEGIN");
                assert_eq!(rbr_only, !is_ddl);
                // The length runs from this event to the XID (or the DDL).
                let end = log.events[i + 1..]
                    .iter()
                    .find(|e| is_ddl || matches!(e.data, EventData::Xid(_)))
                    .map(|e| e.end)
                    .unwrap();
                assert_eq!(transaction_length, end - ev.pos);
            }
        }
        assert_eq!(seen, 5);
        // Sizes near the packed-integer width changes.
        for rest in [
            0u64, 150, 170, 180, 65_400, 65_460, 65_470, 16_777_100, 16_777_200,
        ] {
            let len = w.anonymous_gtid_len(rest);
            let ev = w.anonymous_gtid(0, 0, &Gtid::default(), true, rest);
            assert_eq!(ev.len() as u64, len, "rest {rest}");
            let mut tail: &[u8] = &ev[19 + 42 + 7..];
            assert_eq!(take_packed_int(&mut tail).unwrap(), len + rest);
        }
    }
}

#[test]
fn rows_events_respect_the_size_limit() {
    let types = t2_types();
    let rows: Vec<Vec<Value>> = (0..1000)
        .map(|i| values(&t2_row(i, &"n".repeat((i % 20) as usize))))
        .collect();
    let images: Vec<RowImage<'_>> = rows.iter().map(|r| RowImage::Row(r)).collect();
    for checksum in [true, false] {
        let w = EventWriter::new(1, checksum);
        for limit in [DEFAULT_ROWS_EVENT_MAX_SIZE, 1024, 100, 1] {
            let mut f = MAGIC.to_vec();
            f.extend(w.format_description(4, 0, 0));
            let evs = w
                .rows_events(
                    f.len() as u64,
                    TS,
                    RowsKind::Write,
                    9,
                    &types,
                    &ImageColumns::full(types.len()),
                    &images,
                    true,
                    limit,
                )
                .unwrap();
            for ev in &evs {
                f.extend(ev);
            }
            let log = parse_events(&f);
            assert_eq!(log.error, None);
            assert_eq!(log.events.len(), 1 + evs.len());
            let mut all = Vec::new();
            for (i, ev) in log.events[1..].iter().enumerate() {
                let EventData::Rows(r) = &ev.data else {
                    panic!("{ev:?}")
                };
                let decoded = r.decode(&types).unwrap();
                assert_eq!(r.flags & STMT_END_F != 0, i + 1 == evs.len());
                let size = (ev.end - ev.pos) as usize;
                assert!(size <= limit || decoded.len() == 1, "{size} > {limit}");
                all.extend(decoded.into_iter().map(|d| d.after.unwrap()));
            }
            assert_eq!(all, rows);
            if limit == DEFAULT_ROWS_EVENT_MAX_SIZE {
                assert!(evs.len() > 1 && evs.len() < 10);
                // Events are filled: no two neighbours would fit in one.
                for pair in log.events[1..].windows(2) {
                    let a = pair[0].end - pair[0].pos;
                    let b = pair[1].end - pair[1].pos;
                    assert!(a + b > limit as u64);
                }
            }
            if limit == 1 {
                assert_eq!(evs.len(), rows.len());
            }
        }
        assert!(w
            .rows_events(
                0,
                0,
                RowsKind::Write,
                9,
                &types,
                &ImageColumns::full(types.len()),
                &[],
                true,
                100,
            )
            .unwrap()
            .is_empty());
    }
}

#[test]
fn relocation_equals_encoding_in_place() {
    let types = t2_types();
    let r = values(&t2_row(5, "five"));
    let rows = [RowImage::Row(&r)];
    let st = [TableRows {
        table_id: 1,
        db: "d",
        table: "t2",
        types: &types,
        nullable: &[false, true],
        kind: RowsKind::Write,
        rows: &rows,
    }];
    for checksum in [true, false] {
        let w = EventWriter::new(9, checksum);
        let g = Gtid {
            last_committed: 3,
            sequence_number: 4,
            commit_micros: 5,
        };
        let at0 = w
            .transaction(0, TS, 1, "d", Some(&g), &st, 55, 8192)
            .unwrap();
        let at_p = w
            .transaction(123_456, TS, 1, "d", Some(&g), &st, 55, 8192)
            .unwrap();
        let mut moved = at0.clone();
        relocate_events(&mut moved, 123_456, checksum).unwrap();
        assert_eq!(moved, at_p);
        assert!(relocate_events(&mut moved[..at0.len() - 1], 0, checksum).is_err());
    }
}

#[test]
fn checksum_and_size_errors_stop_the_scan() {
    let w = EventWriter::new(1, true);
    let f = small_log(&w);
    let log = parse_events(&f);
    assert_eq!(log.error, None);
    assert_eq!(log.xids, [1, 2, 3, 4]);
    // Corrupt one byte inside each event in turn: the scan stops there and
    // keeps the transactions completed before it.
    for (k, ev) in log.events.iter().enumerate() {
        let mut bad = f.clone();
        let at = (ev.pos + (ev.end - ev.pos) / 2) as usize;
        bad[at] ^= 0x40;
        let got = parse_events(&bad);
        assert!(got.error.is_some(), "event {k} at {}", ev.pos);
        assert_eq!(got.events.len(), k);
        assert_eq!(got.valid_end, ev.pos);
        assert!(got.complete_tx_end <= ev.pos);
        let expect_xids: Vec<u64> = log.events[..k]
            .iter()
            .filter_map(|e| match e.data {
                EventData::Xid(x) => Some(x),
                _ => None,
            })
            .collect();
        assert_eq!(got.xids, expect_xids);
    }
    // Without checksums a flipped size or position is still caught.
    let w = EventWriter::new(1, false);
    let f = small_log(&w);
    let log = parse_events(&f);
    assert_eq!(log.error, None);
    let third = &log.events[3];
    let mut bad = f.clone();
    bad[third.pos as usize + 13] ^= 1; // log_pos
    assert!(parse_events(&bad).error.is_some());
    let mut bad = f.clone();
    bad[third.pos as usize + 9] ^= 0x10; // event_size
    assert_eq!(parse_events(&bad).valid_end, third.pos);
}

/// Offsets at which a transaction or standalone event ends, from a full parse.
fn unit_ends(log: &ParsedLog) -> Vec<u64> {
    let mut ends = Vec::new();
    for ev in &log.events {
        let standalone = match &ev.data {
            EventData::Query { sql, .. } => sql != "BEGIN",
            EventData::Xid(_)
            | EventData::FormatDescription { .. }
            | EventData::PreviousGtids(_)
            | EventData::Rotate { .. }
            | EventData::Stop => true,
            _ => false,
        };
        if standalone {
            ends.push(ev.end);
        }
    }
    ends
}

#[test]
fn truncated_tail_cuts_back_to_the_last_complete_transaction() {
    for checksum in [true, false] {
        let w = EventWriter::new(1, checksum);
        let f = small_log(&w);
        let full = parse_events(&f);
        let ends = unit_ends(&full);
        let xid_ends: Vec<(u64, u64)> = full
            .events
            .iter()
            .filter_map(|e| match e.data {
                EventData::Xid(x) => Some((e.end, x)),
                _ => None,
            })
            .collect();
        for len in 0..=f.len() {
            let log = parse_events(&f[..len]);
            let l = len as u64;
            let expect = if len < 4 {
                0
            } else {
                ends.iter().copied().filter(|&e| e <= l).max().unwrap_or(4)
            };
            assert_eq!(log.complete_tx_end, expect, "len {len}");
            assert!(log.valid_end <= l && log.complete_tx_end <= log.valid_end);
            let xids: Vec<u64> = xid_ends
                .iter()
                .filter(|(e, _)| *e <= l)
                .map(|(_, x)| *x)
                .collect();
            assert_eq!(log.xids, xids, "len {len}");
            // A cut exactly between two events reads cleanly.
            let clean = len == 4 || full.events.iter().any(|e| e.end == l);
            assert_eq!(log.error.is_none(), clean, "len {len}");
        }
    }
}

use crate::types::testutil::Rng;

#[test]
fn garbage_never_panics() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let logs = [
        small_log(&EventWriter::new(1, true)),
        small_log(&EventWriter::new(1, false)),
    ];
    let fde_end = 4 + 122;
    for round in 0..4000 {
        let good = &logs[round % 2];
        let n = (rng.next() % 600) as usize;
        let mut buf = match round % 3 {
            0 => rng.bytes(n),
            1 => {
                let mut b = MAGIC.to_vec();
                b.extend(rng.bytes(n));
                b
            }
            _ => {
                let mut b = good[..fde_end].to_vec();
                b.extend(rng.bytes(n));
                b
            }
        };
        let log = parse_events(&buf);
        assert!(log.valid_end as usize <= buf.len());
        // Bit flips and truncations of a valid log.
        buf = good.to_vec();
        for _ in 0..(1 + rng.next() % 4) {
            let at = (rng.next() as usize) % buf.len();
            buf[at] ^= 1 << (rng.next() % 8);
        }
        let cut = (rng.next() as usize) % (buf.len() + 1);
        let log = parse_events(&buf[..cut]);
        assert!(log.complete_tx_end <= log.valid_end && log.valid_end as usize <= cut);
        // Row decoding of garbage rows must fail cleanly too.
        for ev in &log.events {
            if let EventData::Rows(r) = &ev.data {
                let _ = r.decode(&t2_types());
            }
        }
    }
    // Decoders on random input.
    for _ in 0..3000 {
        let n = (rng.next() % 64) as usize;
        let b = rng.bytes(n);
        let _ = decode_row_image(&b, &sample_types());
        let _ = decode_decimal(&b, 65, 30);
        let _ = decode_value(&b, &ColumnType::DateTime { fsp: 6 });
        let _ = decode_value(&b, &ColumnType::Timestamp { fsp: 3 });
        let _ = decode_value(&b, &ColumnType::Date);
    }
}

#[test]
fn in_use_flag_leaves_the_checksum_valid() {
    let w = EventWriter::new(1, true);
    let mut f = small_log(&w);
    f[FDE_FLAGS_OFFSET as usize] |= LOG_EVENT_BINLOG_IN_USE_F as u8;
    let log = parse_events(&f);
    assert_eq!(log.error, None);
    assert!(log.in_use);
    assert_eq!(log.xids, [1, 2, 3, 4]);
}

// ---------------------------------------------------------------------------
// The real tool

/// A file in the temp dir, removed when dropped.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn temp_file(name: &str, data: &[u8]) -> TempFile {
    let dir = std::env::temp_dir();
    let path = dir.join(format!("quire-binlog-format-{}-{name}", std::process::id()));
    std::fs::write(&path, data).unwrap();
    TempFile(path)
}

/// Runs mariadb-binlog; `None` (with a notice) when it is not installed.
fn run_tool(path: &Path, args: &[&str]) -> Option<(i32, String, String)> {
    if !Path::new(TOOL).exists() {
        eprintln!("NOTICE: {TOOL} is not installed; skipping the mariadb-binlog check");
        return None;
    }
    let out = Command::new(TOOL).args(args).arg(path).output().unwrap();
    Some((
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// The `### ...` lines of a decoded dump, without `-vv` type comments and
/// FLOAT's trailing padding.
fn row_lines(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.starts_with("###"))
        .map(|l| {
            let l = match l.find(" /* ") {
                Some(i) if l.ends_with("*/") => &l[..i],
                _ => l,
            };
            l.trim_end().to_string()
        })
        .collect()
}

fn check_with_tool(checksum: bool, with_gtid: bool) {
    let w = EventWriter::new(11, checksum);
    let (f, expected) = sample_log(&w, with_gtid);
    let log = parse_events(&f);
    assert_eq!(log.error, None);
    let path = temp_file(&format!("binlog-{checksum}-{with_gtid}.000001"), &f);
    let mut arg_sets: Vec<Vec<&str>> = vec![
        vec!["--verbose"],
        vec!["--base64-output=decode-rows", "--verbose"],
        vec!["--base64-output=decode-rows", "-vv"],
    ];
    if checksum {
        arg_sets.push(vec!["--verify-binlog-checksum", "--verbose"]);
    }
    for args in arg_sets {
        let Some((code, out, err)) = run_tool(&path.0, &args) else {
            return;
        };
        let ctx = format!("checksum={checksum} gtid={with_gtid} args={args:?}");
        assert_eq!(code, 0, "{ctx}: exit status; stderr: {err}");
        assert!(err.trim().is_empty(), "{ctx}: stderr: {err}");
        for bad in ["ERROR", "Error", "Warning", "warning", "orrupt", "Unknown"] {
            assert!(!out.contains(bad), "{ctx}: output contains {bad:?}");
        }
        let got = row_lines(&out);
        assert_eq!(got.len(), expected.len(), "{ctx}");
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(g, e, "{ctx}: line {i}");
        }
        // Every event is where we put it, and the non-row events show up.
        for ev in &log.events {
            assert!(
                out.contains(&format!("end_log_pos {} ", ev.end)),
                "{ctx}: no event ending at {}",
                ev.end
            );
        }
        for needle in [
            "Start: binlog v 4, server v 8.0.36-quire",
            "CREATE TABLE t (c1 tinyint",
            "CREATE TABLE t2 (id int NOT NULL",
            "Table_map: `db1`.`t` mapped to number 42",
            "Table_map: `db1`.`t2` mapped to number 43",
            "Xid = 101",
            "Xid = 104",
            "COMMIT/*!*/;",
            "Rotate to binlog.000002  pos: 4",
            "flags: STMT_END_F",
            "SET @@session.sql_mode=1168113696",
            "SET @@session.character_set_client=utf8mb4,@@session.collation_connection=46,@@session.collation_server=46",
            "SET @@session.time_zone='+00:00'",
        ] {
            assert!(out.contains(needle), "{ctx}: missing {needle:?}");
        }
        if checksum {
            assert!(out.contains(" CRC32 0x"), "{ctx}");
        }
        if with_gtid {
            assert!(out.contains("# Ignorable event type 34 (MySQL Anonymous_Gtid)"));
            assert!(out.contains("# Ignorable event type 35 (MySQL Previous_gtids)"));
        }
    }
}

#[test]
fn mariadb_binlog_decodes_every_type_crc32() {
    check_with_tool(true, true);
    check_with_tool(true, false);
}

#[test]
fn mariadb_binlog_decodes_every_type_without_checksum() {
    check_with_tool(false, true);
    check_with_tool(false, false);
}

#[test]
fn mariadb_binlog_sees_the_in_use_flag_and_truncated_files() {
    let w = EventWriter::new(1, true);
    let mut f = small_log(&w);
    f[FDE_FLAGS_OFFSET as usize] |= LOG_EVENT_BINLOG_IN_USE_F as u8;
    let path = temp_file("inuse.000001", &f);
    let Some((code, out, err)) = run_tool(&path.0, &["--verify-binlog-checksum", "-v"]) else {
        return;
    };
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("# Warning: this binlog is either in use or was not closed properly."));
    assert!(out.contains("Xid = 4"));
    // A file cut at complete_tx_end of a torn copy reads cleanly again.
    f[FDE_FLAGS_OFFSET as usize] &= !(LOG_EVENT_BINLOG_IN_USE_F as u8);
    // Cut into the last XID_EVENT (STOP is 23 bytes, XID 31).
    let torn = &f[..f.len() - 30];
    let log = parse_events(torn);
    assert_eq!(log.xids, [1, 2, 3]);
    let cut = &torn[..log.complete_tx_end as usize];
    let path = temp_file("cut.000001", cut);
    let Some((code, out, err)) = run_tool(&path.0, &["--verify-binlog-checksum", "-v"]) else {
        return;
    };
    assert_eq!(code, 0, "{err}");
    assert!(err.trim().is_empty(), "{err}");
    assert!(out.contains("Xid = 3") && !out.contains("Xid = 4") && !out.contains("Warning"));
}

/// Partial row images (binlog_row_image MINIMAL) and a tail of
/// placeholder events (the active file's preallocated space), as
/// mariadb-binlog reads them: only the present columns, and the
/// placeholders as ignorable events up to the end.
#[test]
fn mariadb_binlog_reads_minimal_images_and_a_placeholder_tail() {
    let w = EventWriter::new(1, true);
    let types = vec![
        ColumnType::Int { unsigned: false },
        ColumnType::Int { unsigned: false },
        ColumnType::varchar(20),
    ];
    let mut f = MAGIC.to_vec();
    f.extend(w.format_description(4, TS, 0));
    f.extend(w.query(f.len() as u64, TS, 1, "db", "BEGIN"));
    f.extend(w.table_map(
        f.len() as u64,
        TS,
        42,
        "db",
        "t",
        &types,
        &[false, true, true],
        None,
    ));
    let before = vec![Value::Int(1), Value::Int(10), Value::text("x")];
    let after = vec![Value::Int(1), Value::Int(11), Value::text("x")];
    let rows = [RowImage::Update {
        before: &before,
        after: &after,
    }];
    let cols = ImageColumns::for_rows(RowImageMode::Minimal, &types, &[0], RowsKind::Update, &rows);
    assert_eq!(cols.before, [true, false, false]);
    assert_eq!(cols.after, [false, true, false]);
    for ev in w
        .rows_events(
            f.len() as u64,
            TS,
            RowsKind::Update,
            42,
            &types,
            &cols,
            &rows,
            true,
            DEFAULT_ROWS_EVENT_MAX_SIZE,
        )
        .unwrap()
    {
        f.extend(ev);
    }
    f.extend(w.xid(f.len() as u64, TS, 7));
    let end = f.len();
    // The filler to the next 4 KiB boundary, then two whole chunks.
    let boundary = 4096;
    f.extend(w.placeholder(end as u64, boundary - end));
    for i in 0..2u64 {
        f.extend(w.placeholder(4096 * (1 + i), 4096));
    }
    assert_eq!(f.len(), 3 * 4096);
    let log = parse_events(&f);
    assert_eq!(log.error, None);
    assert_eq!(
        log.complete_tx_end, end as u64,
        "the placeholders end the log"
    );
    let EventData::Rows(r) = &log.events[3].data else {
        panic!("rows event expected");
    };
    let decoded = r.decode_partial(&types).unwrap();
    assert_eq!(
        decoded,
        [(
            Some(vec![Some(Value::Int(1)), None, None]),
            Some(vec![None, Some(Value::Int(11)), None])
        )]
    );
    let path = temp_file("minimal.000001", &f);
    let Some((code, out, err)) = run_tool(&path.0, &["--verify-binlog-checksum", "-v"]) else {
        return;
    };
    assert_eq!(code, 0, "{err}");
    assert!(err.trim().is_empty(), "{err}");
    assert_eq!(
        row_lines(&out),
        [
            "### UPDATE `db`.`t`",
            "### WHERE",
            "###   @1=1",
            "### SET",
            "###   @2=11"
        ]
    );
    assert!(out.contains("Xid = 7"));
    assert_eq!(out.matches("# Ignorable event type 28").count(), 3, "{out}");
}
