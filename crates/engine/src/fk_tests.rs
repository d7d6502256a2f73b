//! Foreign keys at the row operations (txn/fk.rs): the locks that keep a
//! child from being added under a parent being deleted, in both orders,
//! and definitions with keys surviving a crash.

use std::time::Duration;

use quire_io::{CrashMode, FlushMethod, SimFs};

use crate::catalog::{ColumnDef, NewTable};
use crate::constraint::{FkAction, ForeignKeyDef};
use crate::engine::Engine;
use crate::tests::open;
use crate::txn::{Isolation, Txn};
use crate::types::{ColumnType, Value};

fn int() -> ColumnType {
    ColumnType::Int { unsigned: false }
}

/// d.p(id PK) with rows 1, 2 and d.c(id PK, pid -> p.id ON DELETE
/// `on_delete`, KEY pid) with child 10 -> 1.
fn setup(e: &Engine, on_delete: FkAction) {
    e.create_database("d", true).expect("db");
    e.create_table(
        "d",
        "p",
        vec![ColumnDef::new("id", int(), false)],
        vec![0],
        vec![],
        false,
    )
    .expect("p");
    let spec = NewTable {
        columns: vec![
            ColumnDef::new("id", int(), false),
            ColumnDef::new("pid", int(), true),
        ],
        primary: vec![0],
        indexes: vec![crate::IndexSpec::whole("pid", false, vec![1])],
        foreign_keys: vec![ForeignKeyDef {
            name: "c_ibfk_1".into(),
            columns: vec![1],
            ref_db: "d".into(),
            ref_table: "p".into(),
            ref_columns: vec!["id".into()],
            on_delete,
            on_update: FkAction::NoAction,
        }],
        ..NewTable::default()
    };
    e.create_table_with("d", "c", spec, false).expect("c");
    let (p, c) = (e.table("d", "p").expect("p"), e.table("d", "c").expect("c"));
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    for id in [1, 2] {
        tx.insert(&p, vec![Some(Value::Int(id))]).expect("parent");
    }
    tx.insert(&c, vec![Some(Value::Int(10)), Some(Value::Int(1))])
        .expect("child");
    tx.commit().expect("commit");
}

fn short_wait(e: &Engine) -> Txn {
    let mut t = e.begin(Isolation::RepeatableRead, false);
    t.set_lock_wait_timeout(Some(Duration::from_millis(200)));
    t
}

fn count(e: &Engine, table: &str) -> usize {
    let t = e.table("d", table).expect("table");
    let mut tx = e.begin(Isolation::RepeatableRead, true);
    tx.scan(&t, &crate::txn::Scan::default())
        .expect("scan")
        .len()
}

/// A child inserted (not yet committed) under parent 2 holds a shared lock
/// on it: deleting the parent waits (1205 here); once the child commits,
/// the delete is refused (1451). And the other order: a parent deleted
/// (uncommitted) makes a child insert under it wait; after the delete
/// commits, the insert is refused (1452).
#[test]
fn child_insert_and_parent_delete_exclude_each_other() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    setup(&e, FkAction::Restrict);
    let (p, c) = (e.table("d", "p").expect("p"), e.table("d", "c").expect("c"));
    let pk2 = Txn::encode_pk(&p, &[Value::Int(2)]).expect("pk");

    let mut child = short_wait(&e);
    child
        .insert(&c, vec![Some(Value::Int(11)), Some(Value::Int(2))])
        .expect("child under 2");
    let mut parent = short_wait(&e);
    let err = parent
        .delete(&p, &pk2)
        .expect_err("must wait for the child");
    assert_eq!(err.code, 1205, "{err:?}");
    parent.rollback();
    child.commit().expect("child commits");
    let mut parent = short_wait(&e);
    assert_eq!(parent.delete(&p, &pk2).expect_err("referenced").code, 1451);
    parent.rollback();

    // Parent 1 loses its child, then is deleted (uncommitted).
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let ck10 = Txn::encode_pk(&c, &[Value::Int(10)]).expect("pk");
    assert!(tx.delete(&c, &ck10).expect("delete child"));
    tx.commit().expect("commit");
    let pk1 = Txn::encode_pk(&p, &[Value::Int(1)]).expect("pk");
    let mut parent = short_wait(&e);
    assert!(parent.delete(&p, &pk1).expect("delete parent 1"));
    let mut child = short_wait(&e);
    let err = child
        .insert(&c, vec![Some(Value::Int(12)), Some(Value::Int(1))])
        .expect_err("must wait for the parent's delete");
    assert_eq!(err.code, 1205, "{err:?}");
    child.rollback();
    parent.commit().expect("parent delete commits");
    let mut child = short_wait(&e);
    let err = child
        .insert(&c, vec![Some(Value::Int(12)), Some(Value::Int(1))])
        .expect_err("no parent");
    assert_eq!(err.code, 1452, "{err:?}");
    child.rollback();
    assert_eq!(count(&e, "c"), 1);
}

/// With foreign_key_checks off a transaction neither checks nor cascades.
#[test]
fn checks_off_neither_checks_nor_cascades() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let e = open(&sim);
    setup(&e, FkAction::Cascade);
    let (p, c) = (e.table("d", "p").expect("p"), e.table("d", "c").expect("c"));
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    tx.set_foreign_key_checks(false);
    tx.insert(&c, vec![Some(Value::Int(20)), Some(Value::Int(99))])
        .expect("orphan accepted");
    let pk1 = Txn::encode_pk(&p, &[Value::Int(1)]).expect("pk");
    assert!(tx.delete(&p, &pk1).expect("delete"));
    tx.commit().expect("commit");
    assert_eq!(count(&e, "c"), 2, "no cascade with checks off");
    // With checks on, deleting parent 2 (no children) cascades nothing
    // and a cascade from a new parent reaches its child.
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    tx.insert(&c, vec![Some(Value::Int(21)), Some(Value::Int(2))])
        .expect("child of 2");
    let pk2 = Txn::encode_pk(&p, &[Value::Int(2)]).expect("pk");
    assert!(tx.delete(&p, &pk2).expect("delete 2"));
    tx.commit().expect("commit");
    assert_eq!(count(&e, "c"), 2, "child 21 went with its parent");
}

/// Definitions with foreign keys are catalog format 3: a crash right
/// after the CREATE TABLE keeps the key and its enforcement.
#[test]
fn keys_survive_a_crash() {
    let sim = SimFs::new(FlushMethod::Fsync);
    {
        let e = open(&sim);
        setup(&e, FkAction::SetNull);
        sim.crash(CrashMode::Power { sector: 512 }, 7);
    }
    let e = open(&sim);
    let c = e.table("d", "c").expect("c");
    assert_eq!(c.foreign_keys.len(), 1);
    assert_eq!(c.foreign_keys[0].on_delete, FkAction::SetNull);
    let p = e.table("d", "p").expect("p");
    let mut tx = e.begin(Isolation::RepeatableRead, false);
    let pk1 = Txn::encode_pk(&p, &[Value::Int(1)]).expect("pk");
    assert!(tx.delete(&p, &pk1).expect("delete"));
    let ck10 = Txn::encode_pk(&c, &[Value::Int(10)]).expect("pk");
    let row = tx.get_by_key(&c, &ck10).expect("get").expect("child kept");
    assert_eq!(row[1], Value::Null, "SET NULL after the restart");
    tx.commit().expect("commit");
}
