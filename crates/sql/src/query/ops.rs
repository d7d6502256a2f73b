//! # Operators: the plan, executed one row at a time
//!
//! Every plan node becomes an operator with a `next()` that returns the
//! next row or `None` (the Volcano model). Rows are pulled from the top:
//! a `LIMIT 10` over a full-table join stops the join after ten rows, and
//! the join reads its tables in bounded batches (`Txn::scan_after`), so
//! no more than a batch is read past what the consumer takes.
//!
//! ```text
//!   Limit.next ─▶ Sort.next ─▶ Project.next ─▶ Aggregate.next ─▶ Join.next
//!   (streams)     (blocking)   (streams)       (blocking)         (streams:
//!                                                                  nested loops
//!                                                                  over batches)
//! ```
//!
//! The root's rows go to a `RowSink` as they come (`query::select_to`):
//! the server writes each to the socket, so a result set is never held
//! whole. The blocking operators keep bounded memory (`crate::spill`):
//! Sort holds `sort_buffer_size` bytes of rows and merges sorted runs
//! from disk beyond that; Aggregate, Distinct and the set operations
//! hold a hash table of at most min(`tmp_table_size`,
//! `max_heap_table_size`) bytes and hash-partition rows with new keys to
//! disk once it is full, finishing each partition after the input. Every
//! loop over many rows, spilled or not, passes a safe point (`Txn::tick`)
//! so KILL QUERY and `max_execution_time` stop it. Not bounded yet: WITH
//! ROLLUP, window functions, derived tables and uncorrelated subquery
//! results are held in memory whole.
//!
//! Operators do not hold the transaction: each `next` gets it in [`Ex`],
//! with the values of the enclosing query (`outer`, for correlated
//! subqueries) and the statement-wide state ([`Shared`]: subquery result
//! caches, materialised derived tables, recursive CTE rounds).
//!
//! Subqueries in expressions are run by [`Runner`], which `Ex::eval`
//! lends the transaction to for the duration of one evaluation. An
//! uncorrelated subquery runs once per statement (its rows, and for IN a
//! hash set of them, are cached); a correlated one runs per outer row and
//! stops as soon as its answer is known (EXISTS at the first row, a
//! scalar subquery at the second).

use foldhash::{HashMap, HashSet};
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::VecDeque;
use std::sync::Arc;

use quire_engine::types::{compare, Collation, JsonForm};
use quire_engine::{ColumnType, EngineError, LockWait, Scan, TableDef, Txn, Value};

use crate::ctx::Ctx;
use crate::expr::{conform, truth, Cmp, Row, SubKind, SubqueryRunner, E};
use crate::query::access::{exact, key_ranges, Access, KeyRange};
use crate::query::agg::AggState;
use crate::query::hash_join::{key_of, BuildSide, Builder};
use crate::query::key::{key_part, row_key, KeyPart};
use crate::query::plan::{
    HashJoin, Join, Node, ReadLock, SemiLookup, SetOpKind, SourceKind, Subplan,
};
use crate::spill::file::StreamReader;
use crate::spill::hash::{key_bytes, Dedup, Partitions, SetFilter};
use crate::spill::sort::{Sorted, Sorter};
use crate::spill::{row_bytes, Limits};
use crate::SqlResult;

/// Largest batch one scan call returns.
const MAX_BATCH_ROWS: usize = 4096;
/// Largest batch of a locking read under a LIMIT (rows locked past what
/// the consumer takes are at most this many).
const MAX_LOCKING_BATCH_ROWS: usize = 64;

/// Statement-wide execution state.
pub struct Shared<'p> {
    pub cx: &'p Ctx<'p>,
    pub subplans: &'p [Subplan],
    /// Some block has a LIMIT: locking reads fetch in small batches.
    pub any_limit: bool,
    subq_cache: RefCell<HashMap<usize, Arc<SubRows>>>,
    /// Key sets of decorrelated EXISTS subqueries (`semijoin.rs`).
    semi_keys: RefCell<HashMap<usize, Arc<HashSet<Vec<KeyPart>>>>>,
    derived: RefCell<HashMap<usize, Arc<Vec<Vec<Value>>>>>,
    working: RefCell<HashMap<usize, Arc<Vec<Vec<Value>>>>>,
    /// Memory limits of sorts and hash tables (`spill/`), read when an
    /// operator first needs them.
    limits: std::cell::OnceCell<Limits>,
}

impl<'p> Shared<'p> {
    pub fn new(cx: &'p Ctx<'p>, subplans: &'p [Subplan], any_limit: bool) -> Shared<'p> {
        Shared {
            cx,
            subplans,
            any_limit,
            subq_cache: RefCell::new(HashMap::default()),
            semi_keys: RefCell::new(HashMap::default()),
            derived: RefCell::new(HashMap::default()),
            working: RefCell::new(HashMap::default()),
            limits: std::cell::OnceCell::new(),
        }
    }

    /// `sort_buffer_size`, the temporary table limit, the spill directory.
    pub fn limits(&self) -> &Limits {
        self.limits
            .get_or_init(|| Limits::read(self.cx.env, &self.cx.engine.config().datadir))
    }
}

/// What an operator's `next` works with.
pub struct Ex<'e, 'p> {
    pub txn: &'e mut Txn,
    pub sh: &'e Shared<'p>,
    pub outer: &'e [Value],
}

impl Ex<'_, '_> {
    /// Evaluates `e` on `row` (and aggregate values `aggs`).
    pub fn eval(&mut self, e: &E, row: &[Value], aggs: &[Value]) -> SqlResult<Value> {
        let runner = Runner {
            txn: RefCell::new(&mut *self.txn),
            sh: self.sh,
        };
        e.eval(&Row {
            row,
            aggs,
            outer: self.outer,
            subq: Some(&runner),
            wins: &[],
        })
    }

    /// Evaluates `e` on a row that has window values.
    pub fn eval_win(
        &mut self,
        e: &E,
        row: &[Value],
        aggs: &[Value],
        wins: &[Value],
    ) -> SqlResult<Value> {
        let runner = Runner {
            txn: RefCell::new(&mut *self.txn),
            sh: self.sh,
        };
        e.eval(&Row {
            row,
            aggs,
            outer: self.outer,
            subq: Some(&runner),
            wins,
        })
    }

    /// Whether every condition is TRUE on `row`.
    pub fn passes(&mut self, conds: &[E], row: &[Value]) -> SqlResult<bool> {
        for c in conds {
            if truth(&self.eval(c, row, &[])?) != Some(true) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// A running operator.
pub trait Operator<'p> {
    fn next(&mut self, ex: &mut Ex<'_, 'p>) -> SqlResult<Option<Vec<Value>>>;
}

pub type BoxOp<'p> = Box<dyn Operator<'p> + 'p>;

/// Builds the operator tree of `node`.
pub fn build<'p>(node: &'p Node) -> BoxOp<'p> {
    match node {
        Node::Join(j) => Box::new(JoinOp::new(j)),
        Node::Aggregate {
            input,
            group,
            aggs,
            width,
            rollup,
        } => Box::new(AggregateOp {
            input: build(input),
            group,
            aggs,
            width: *width,
            rollup: *rollup,
            out: None,
            input_done: false,
            queue: VecDeque::new(),
            rollup_state: None,
        }),
        Node::Project {
            input,
            exprs,
            having,
            agg_width,
            types,
            wins,
        } => Box::new(ProjectOp {
            input: build(input),
            exprs,
            having: having.as_ref(),
            agg_width: *agg_width,
            types,
            wins: *wins,
            moved: movable_cols(exprs, having.as_ref(), *agg_width, *wins),
        }),
        Node::Window {
            input,
            specs,
            having,
            agg_width,
        } => Box::new(crate::query::window::WindowOp::new(
            build(input),
            specs,
            having.as_ref(),
            *agg_width,
        )),
        Node::Distinct {
            input,
            width,
            colls,
        } => Box::new(DistinctOp {
            colls,
            input: build(input),
            width: *width,
            dedup: None,
            input_done: false,
        }),
        Node::Sort { input, keys, top } => Box::new(SortOp {
            input: build(input),
            keys,
            top: *top,
            out: None,
        }),
        Node::Limit {
            input,
            offset,
            limit,
            width,
        } => Box::new(LimitOp {
            input: build(input),
            skip: *offset,
            left: *limit,
            width: *width,
        }),
        Node::SetOp {
            op,
            all,
            left,
            right,
            colls,
        } => Box::new(SetOpOp {
            colls,
            op: *op,
            all: *all,
            left: build(left),
            right: Some(build(right)),
            filter: None,
            dedup: None,
            on_right: false,
            input_done: false,
        }),
        Node::Recursive {
            id,
            anchor,
            step,
            distinct,
        } => Box::new(RecursiveOp {
            id: *id,
            anchor: Some(build(anchor)),
            step,
            distinct: *distinct,
            seen: HashSet::default(),
            round: VecDeque::new(),
            next_round: Vec::new(),
            rounds: 0,
            done: false,
        }),
        Node::Values(rows) => Box::new(ValuesOp {
            rows: rows.clone(),
            pos: 0,
        }),
    }
}

/// Runs `node` to completion.
pub fn collect<'p>(node: &'p Node, ex: &mut Ex<'_, 'p>) -> SqlResult<Vec<Vec<Value>>> {
    let mut op = build(node);
    let mut out = Vec::new();
    while let Some(r) = op.next(ex)? {
        out.push(r);
    }
    Ok(out)
}

// ------------------------------------------------------------ subqueries

/// A subquery's rows, kept for an uncorrelated subquery.
struct SubRows {
    rows: Vec<Vec<Value>>,
    /// Hash keys of the first column's non-NULL values (IN).
    set: HashSet<KeyPart>,
    has_null: bool,
}

pub struct Runner<'e, 'p> {
    txn: RefCell<&'e mut Txn>,
    sh: &'e Shared<'p>,
}

impl Runner<'_, '_> {
    /// Rows of subplan `id` (at most `max`).
    fn rows(&self, id: usize, outer: &[Value], max: Option<usize>) -> SqlResult<Vec<Vec<Value>>> {
        let sp = self
            .sh
            .subplans
            .get(id)
            .ok_or_else(|| EngineError::internal("unknown subquery"))?;
        let mut g = self
            .txn
            .try_borrow_mut()
            .map_err(|_| EngineError::internal("subquery re-entered"))?;
        let mut ex = Ex {
            txn: &mut g,
            sh: self.sh,
            outer,
        };
        let mut op = build(&sp.node);
        let mut out = Vec::new();
        while max.is_none_or(|m| out.len() < m) {
            match op.next(&mut ex)? {
                Some(r) => out.push(r),
                None => break,
            }
        }
        Ok(out)
    }

    fn cached(&self, id: usize) -> SqlResult<Arc<SubRows>> {
        if let Some(c) = self.sh.subq_cache.borrow().get(&id) {
            return Ok(c.clone());
        }
        let rows = self.rows(id, &[], None)?;
        let mut set = HashSet::default();
        let mut has_null = false;
        for r in &rows {
            match r.first() {
                Some(Value::Null) | None => has_null = true,
                Some(v) => {
                    set.insert(key_part(v));
                }
            }
        }
        let c = Arc::new(SubRows {
            rows,
            set,
            has_null,
        });
        self.sh.subq_cache.borrow_mut().insert(id, c.clone());
        Ok(c)
    }
}

impl Runner<'_, '_> {
    /// A decorrelated EXISTS (`semijoin.rs`): the subquery's key rows are
    /// read once into a set; this outer row's key is looked up in it. A
    /// NULL on either side matches nothing (`a = NULL` is never true).
    fn semi_exists(&self, id: usize, lk: &SemiLookup, outer: &[Value]) -> SqlResult<Value> {
        let keys = self.semi_key_set(id)?;
        let r = Row {
            row: &[],
            aggs: &[],
            outer,
            subq: None,
            wins: &[],
        };
        let mut probe = Vec::with_capacity(lk.outer_keys.len());
        for e in &lk.outer_keys {
            let v = e.eval(&r)?;
            if v.is_null() {
                return Ok(Value::Int(0));
            }
            probe.push(key_part(&v));
        }
        Ok(Value::Int(i64::from(keys.contains(&probe))))
    }

    fn semi_key_set(&self, id: usize) -> SqlResult<Arc<HashSet<Vec<KeyPart>>>> {
        if let Some(k) = self.sh.semi_keys.borrow().get(&id) {
            return Ok(k.clone());
        }
        let mut set = HashSet::default();
        for row in self.rows(id, &[], None)? {
            if row.iter().any(Value::is_null) {
                continue;
            }
            set.insert(row.iter().map(key_part).collect::<Vec<_>>());
        }
        let set = Arc::new(set);
        self.sh.semi_keys.borrow_mut().insert(id, set.clone());
        Ok(set)
    }
}

fn err_subquery_rows() -> EngineError {
    EngineError::new(1242, "21000", "Subquery returns more than 1 row")
}

fn cmp_holds(op: Cmp, a: &Value, b: &Value, coll: Option<Collation>) -> Option<bool> {
    if a.is_null() || b.is_null() {
        return None;
    }
    let o = crate::expr::compare_in(a, b, coll)?;
    Some(match op {
        Cmp::Eq | Cmp::NullSafeEq => o == Ordering::Equal,
        Cmp::Ne => o != Ordering::Equal,
        Cmp::Lt => o == Ordering::Less,
        Cmp::Le => o != Ordering::Greater,
        Cmp::Gt => o == Ordering::Greater,
        Cmp::Ge => o != Ordering::Less,
    })
}

/// `x op ANY (rows)` (`all` false) or `x op ALL (rows)`, three-valued.
fn quantified(
    op: Cmp,
    all: bool,
    x: &Value,
    rows: &[Vec<Value>],
    coll: Option<Collation>,
) -> Value {
    let mut unknown = false;
    for r in rows {
        let v = r.first().unwrap_or(&Value::Null);
        match cmp_holds(op, x, v, coll) {
            Some(true) if !all => return Value::Int(1),
            Some(false) if all => return Value::Int(0),
            None => unknown = true,
            _ => {}
        }
    }
    if unknown {
        Value::Null
    } else {
        Value::Int(i64::from(all))
    }
}

impl SubqueryRunner for Runner<'_, '_> {
    fn eval(
        &self,
        id: usize,
        kind: SubKind,
        lhs: Option<&Value>,
        outer: &[Value],
    ) -> SqlResult<Value> {
        let sp = self.sh.subplans.get(id);
        if let (Some(lk), SubKind::Exists) = (sp.and_then(|s| s.lookup.as_ref()), kind) {
            return self.semi_exists(id, lk, outer);
        }
        let correlated = sp.is_some_and(|s| s.correlated);
        let null = Value::Null;
        let x = lhs.unwrap_or(&null);
        if !correlated {
            let c = self.cached(id)?;
            return Ok(match kind {
                SubKind::Exists => Value::Int(i64::from(!c.rows.is_empty())),
                SubKind::Scalar => match c.rows.len() {
                    0 => Value::Null,
                    1 => c.rows[0].first().cloned().unwrap_or(Value::Null),
                    _ => return Err(err_subquery_rows()),
                },
                SubKind::In(coll) => {
                    if c.rows.is_empty() {
                        Value::Int(0)
                    } else if x.is_null() {
                        Value::Null
                    } else if coll.is_some() {
                        // The cached set holds bytes: compare under the
                        // collation instead.
                        quantified(Cmp::Eq, false, x, &c.rows, coll)
                    } else if c.set.contains(&key_part(x)) {
                        Value::Int(1)
                    } else if c.has_null || !hash_exact(x, &c.rows) {
                        // A NULL in the list, or values whose equality the
                        // hash key cannot decide (mixed types): compare.
                        quantified(Cmp::Eq, false, x, &c.rows, None)
                    } else {
                        Value::Int(0)
                    }
                }
                SubKind::Any(op, coll) => quantified(op, false, x, &c.rows, coll),
                SubKind::All(op, coll) => quantified(op, true, x, &c.rows, coll),
            });
        }
        Ok(match kind {
            SubKind::Exists => Value::Int(i64::from(!self.rows(id, outer, Some(1))?.is_empty())),
            SubKind::Scalar => {
                let rows = self.rows(id, outer, Some(2))?;
                match rows.len() {
                    0 => Value::Null,
                    1 => rows[0].first().cloned().unwrap_or(Value::Null),
                    _ => return Err(err_subquery_rows()),
                }
            }
            SubKind::In(coll) => {
                let rows = self.rows(id, outer, None)?;
                if rows.is_empty() {
                    Value::Int(0)
                } else {
                    quantified(Cmp::Eq, false, x, &rows, coll)
                }
            }
            SubKind::Any(op, coll) => quantified(op, false, x, &self.rows(id, outer, None)?, coll),
            SubKind::All(op, coll) => quantified(op, true, x, &self.rows(id, outer, None)?, coll),
        })
    }
}

/// Whether hash-key equality decides `x = v` for every value of the
/// first column (same kind of value: both numbers, both strings, ...).
fn hash_exact(x: &Value, rows: &[Vec<Value>]) -> bool {
    let kind = |v: &Value| match v {
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) => 0,
        Value::Float(_) | Value::Double(_) => 1,
        Value::Bytes(_) => 2,
        Value::Null => 9,
        _ => 3,
    };
    let k = kind(x);
    k != 1
        && rows
            .iter()
            .all(|r| r.first().is_none_or(|v| kind(v) == k || v.is_null()))
}

// ------------------------------------------------------------------ join

/// Candidate rows of one step for the current row of the steps before.
enum Cands {
    Empty,
    Rows {
        rows: Arc<Vec<Vec<Value>>>,
        pos: usize,
    },
    Scan {
        ranges: Vec<KeyRange>,
        ri: usize,
        batch: VecDeque<Vec<Value>>,
        after: Option<Vec<u8>>,
        range_done: bool,
        batch_rows: usize,
        max_batch_rows: usize,
        /// Several ranges (IN): rows already produced, by primary key. A
        /// bound the engine cannot encode exactly widens its range, so two
        /// ranges may overlap; a row is still produced once.
        seen: Option<HashSet<Vec<u8>>>,
    },
}

struct Level {
    cands: Cands,
    /// An ON match was found (outer sources).
    matched: bool,
    /// The NULL row of an outer source was produced.
    null_done: bool,
    /// A hash step's table, built at its first probe.
    hash: Option<BuildSide>,
    /// The current row was set aside in a spilled hash step's probe
    /// partitions: nothing (not even a NULL row) is produced for it now.
    deferred: bool,
}

pub struct JoinOp<'p> {
    j: &'p Join,
    row: Vec<Value>,
    levels: Vec<Level>,
    depth: usize,
    started: bool,
    done: bool,
    produced: usize,
    /// The spilled hash step whose partitions are being replayed: going
    /// back from it takes the next probe row from disk.
    floor: Option<usize>,
    /// Rows of derived tables that read only the enclosing query's row
    /// (`SourceKind::Lateral` reading nothing of this FROM), by source:
    /// the same for every row of this join, computed at first use.
    outer_only: Vec<Option<Arc<Vec<Vec<Value>>>>>,
}

impl<'p> JoinOp<'p> {
    fn new(j: &'p Join) -> JoinOp<'p> {
        JoinOp {
            j,
            row: vec![Value::Null; j.width],
            levels: (0..j.steps.len())
                .map(|_| Level {
                    cands: Cands::Empty,
                    matched: false,
                    null_done: false,
                    hash: None,
                    deferred: false,
                })
                .collect(),
            depth: 0,
            started: false,
            done: false,
            produced: 0,
            floor: None,
            outer_only: vec![None; j.sources.len()],
        }
    }

    /// Prepares step `k`'s candidates for the current row.
    fn open(&mut self, k: usize, ex: &mut Ex<'_, 'p>) -> SqlResult<()> {
        self.levels[k].matched = false;
        self.levels[k].null_done = false;
        self.levels[k].deferred = false;
        let j = self.j;
        if let Some(h) = &j.steps[k].hash {
            return self.open_hash(k, h, ex);
        }
        self.levels[k].cands = self.source_cands(k, ex)?;
        Ok(())
    }

    /// Step `k`'s candidates read from its source.
    fn source_cands(&mut self, k: usize, ex: &mut Ex<'_, 'p>) -> SqlResult<Cands> {
        let step = &self.j.steps[k];
        let src = &self.j.sources[step.source];
        Ok(match &src.kind {
            SourceKind::Table { def, .. } => {
                let acc = step
                    .access
                    .as_ref()
                    .ok_or_else(|| EngineError::internal("table step without access"))?;
                self.open_table(k, def, acc, step.scan_limit, step.columns.as_deref(), ex)?
            }
            SourceKind::Rows(rows) => Cands::Rows {
                rows: rows.clone(),
                pos: 0,
            },
            SourceKind::Derived(node) => Cands::Rows {
                rows: materialise(node, ex)?,
                pos: 0,
            },
            SourceKind::Lateral { node, reads } if reads.is_empty() => {
                let rows = match &self.outer_only[step.source] {
                    Some(rows) => rows.clone(),
                    None => {
                        let rows = lateral_rows(node, &self.row[..src.offset], ex)?;
                        self.outer_only[step.source] = Some(rows.clone());
                        rows
                    }
                };
                Cands::Rows { rows, pos: 0 }
            }
            SourceKind::Lateral { node, .. } => Cands::Rows {
                rows: lateral_rows(node, &self.row[..src.offset], ex)?,
                pos: 0,
            },
            SourceKind::Working(id) => Cands::Rows {
                rows: ex.sh.working.borrow().get(id).cloned().unwrap_or_default(),
                pos: 0,
            },
        })
    }

    /// A hash step's candidates: the bucket of the current row's probe
    /// key (the table is built at the first call). A spilled table sets
    /// the row aside instead, unless its partitions are being replayed.
    fn open_hash(&mut self, k: usize, h: &'p HashJoin, ex: &mut Ex<'_, 'p>) -> SqlResult<()> {
        if self.levels[k].hash.is_none() {
            let built = self.build_hash(k, h, ex)?;
            self.levels[k].hash = Some(built);
        }
        let mut probe = Vec::with_capacity(h.probe.len());
        for e in &h.probe {
            probe.push(ex.eval(e, &self.row, &[])?);
        }
        let key = key_of(&probe, &h.null_safe);
        let replaying = self.floor == Some(k);
        let lv = &mut self.levels[k];
        let bucket = match lv.hash.as_mut() {
            Some(BuildSide::Memory(map)) => key.and_then(|k| map.get(&k).cloned()),
            Some(BuildSide::Spilled(sp)) if replaying => key.and_then(|k| sp.lookup(&k)),
            Some(BuildSide::Spilled(sp)) => {
                sp.add_probe(key.as_ref(), &self.row)?;
                lv.deferred = true;
                None
            }
            None => None,
        };
        lv.cands = match bucket {
            Some(rows) => Cands::Rows { rows, pos: 0 },
            None => Cands::Empty,
        };
        Ok(())
    }

    /// Reads step `k`'s source once into its hash table.
    fn build_hash(&mut self, k: usize, h: &HashJoin, ex: &mut Ex<'_, 'p>) -> SqlResult<BuildSide> {
        let src = &self.j.sources[self.j.steps[k].source];
        let (offset, width) = (src.offset, src.width);
        self.levels[k].cands = self.source_cands(k, ex)?;
        let sh = ex.sh;
        let limits = sh.limits();
        let mut b = Builder::new(limits.join_bytes, &limits.dir, &h.null_safe);
        // The build keys read only this source: evaluated on a row that
        // holds just its values.
        let mut scratch = vec![Value::Null; self.j.width];
        while let Some(vals) = self.candidate(k, ex)? {
            ex.txn.tick()?;
            for (i, v) in vals.iter().take(width).enumerate() {
                scratch[offset + i] = v.clone();
            }
            let mut kv = Vec::with_capacity(h.build.len());
            for e in &h.build {
                kv.push(ex.eval(e, &scratch, &[])?);
            }
            b.add(kv, vals)?;
        }
        self.levels[k].cands = Cands::Empty;
        b.finish()
    }

    /// Starts replaying the lowest spilled hash step with probe rows set
    /// aside (all steps before it are done); false when there is none.
    fn start_replay(&mut self, ex: &mut Ex<'_, 'p>) -> SqlResult<bool> {
        self.floor = None;
        for k in 0..self.levels.len() {
            if let Some(BuildSide::Spilled(sp)) = self.levels[k].hash.as_mut() {
                if sp.pending() {
                    sp.start_replay()?;
                    self.floor = Some(k);
                    return self.next_replayed(k, ex);
                }
            }
        }
        Ok(false)
    }

    /// The next probe row of replayed step `k` in place and the step
    /// opened for it; false when its partitions are all done.
    fn next_replayed(&mut self, k: usize, ex: &mut Ex<'_, 'p>) -> SqlResult<bool> {
        let Some(BuildSide::Spilled(sp)) = self.levels[k].hash.as_mut() else {
            return Ok(false);
        };
        let Some(row) = sp.next_probe(ex.txn)? else {
            return Ok(false);
        };
        self.row = row;
        self.depth = k;
        self.open(k, ex)?;
        Ok(true)
    }

    /// The lock step `k`'s rows are read with: its source's own (a
    /// multi-table UPDATE/DELETE's targets and read tables), else the
    /// block's FOR UPDATE / FOR SHARE.
    fn step_lock(&self, k: usize) -> Option<ReadLock> {
        let src = &self.j.sources[self.j.steps[k].source];
        src.lock.or(self.j.lock)
    }

    /// Whether step `k`'s rows carry their engine key (`Source::key_slot`).
    fn keyed(&self, k: usize) -> bool {
        self.j.sources[self.j.steps[k].source].key_slot.is_some()
    }

    fn open_table(
        &mut self,
        k: usize,
        def: &TableDef,
        acc: &Access,
        scan_limit: Option<usize>,
        columns: Option<&[bool]>,
        ex: &mut Ex<'_, 'p>,
    ) -> SqlResult<Cands> {
        let runner = Runner {
            txn: RefCell::new(&mut *ex.txn),
            sh: ex.sh,
        };
        let r = Row {
            row: &self.row,
            aggs: &[],
            outer: ex.outer,
            subq: Some(&runner),
            wins: &[],
        };
        let Some(ranges) = key_ranges(acc, &r)? else {
            return Ok(Cands::Empty);
        };
        let lock = self.step_lock(k);
        let keyed = self.keyed(k);
        // A full unique key on the primary key: one point read.
        if acc.point && acc.index.is_none() && ranges.len() == 1 {
            let tys = def.pk_types();
            let exact_vals: Option<Vec<Value>> = ranges[0]
                .prefix
                .iter()
                .zip(&tys)
                .map(|(v, t)| exact(v, t))
                .collect();
            if let Some(pk) = exact_vals {
                let mut got = match lock {
                    Some(l) => ex.txn.get_locked(def, &pk, l.mode, l.wait)?,
                    None => ex.txn.get_cols(def, &pk, columns)?,
                };
                if let (true, Some(v)) = (keyed, got.as_mut()) {
                    v.push(Value::Bytes(ex.txn.encode_session_pk(def, &pk)?));
                }
                return Ok(Cands::Rows {
                    rows: Arc::new(got.into_iter().collect()),
                    pos: 0,
                });
            }
        }
        let limited = self.j.limit.is_some() || ex.sh.any_limit;
        let (first, max) = match (scan_limit, lock) {
            (Some(l), _) => (l.max(1), l.max(1)),
            (None, Some(_)) if limited => (1, MAX_LOCKING_BATCH_ROWS),
            (None, _) if self.j.limit.is_some() => (16, MAX_BATCH_ROWS),
            (None, _) => (256, MAX_BATCH_ROWS),
        };
        let seen = (ranges.len() > 1).then(HashSet::default);
        Ok(Cands::Scan {
            seen,
            ranges,
            ri: 0,
            batch: VecDeque::new(),
            after: None,
            range_done: false,
            batch_rows: first,
            max_batch_rows: max,
        })
    }

    /// The next candidate row of step `k` (None: exhausted).
    fn candidate(&mut self, k: usize, ex: &mut Ex<'_, 'p>) -> SqlResult<Option<Vec<Value>>> {
        let step = &self.j.steps[k];
        let scan_limit = step.scan_limit;
        let lock = self.step_lock(k);
        let keyed = self.keyed(k);
        match &mut self.levels[k].cands {
            Cands::Empty => Ok(None),
            Cands::Rows { rows, pos } => {
                let r = rows.get(*pos).cloned();
                *pos += 1;
                Ok(r)
            }
            Cands::Scan {
                ranges,
                ri,
                batch,
                after,
                range_done,
                batch_rows,
                max_batch_rows,
                seen,
            } => loop {
                if let Some(r) = batch.pop_front() {
                    return Ok(Some(r));
                }
                if *ri >= ranges.len() {
                    return Ok(None);
                }
                if *range_done || scan_limit.is_some() && after.is_some() {
                    *ri += 1;
                    *after = None;
                    *range_done = false;
                    continue;
                }
                let SourceKind::Table { def, .. } = &self.j.sources[step.source].kind else {
                    return Ok(None);
                };
                let acc = step
                    .access
                    .as_ref()
                    .ok_or_else(|| EngineError::internal("table step without access"))?;
                let range = &ranges[*ri];
                let s = Scan {
                    index: acc.index.clone(),
                    lower: range.lower.clone(),
                    upper: range.upper.clone(),
                    reverse: acc.reverse,
                    lock: lock.map(|l| l.mode),
                    wait: lock.map_or(LockWait::Wait, |l| l.wait),
                    limit: Some(*batch_rows),
                };
                let json = if step.json_stored {
                    JsonForm::Stored
                } else {
                    JsonForm::Printed
                };
                let cols = step.columns.as_deref();
                let got = ex
                    .txn
                    .scan_after_cols_as(def, &s, after.as_deref(), cols, json)?;
                if got.rows.len() < *batch_rows {
                    *range_done = true;
                }
                *batch_rows = (*batch_rows * 2).min(*max_batch_rows);
                match got.resume {
                    Some(k) => *after = Some(k),
                    None => *range_done = true,
                }
                let with_key = |r: quire_engine::Row| {
                    let mut v = r.values;
                    if keyed {
                        v.push(Value::Bytes(r.key));
                    }
                    v
                };
                match seen.as_mut() {
                    None => batch.extend(got.rows.into_iter().map(with_key)),
                    Some(seen) => {
                        for r in got.rows {
                            if seen.insert(r.key.clone()) {
                                batch.push_back(with_key(r));
                            }
                        }
                    }
                }
            },
        }
    }

    fn set_source(&mut self, k: usize, vals: Option<Vec<Value>>) {
        let src = &self.j.sources[self.j.steps[k].source];
        match vals {
            // One table: its row is the whole join row; moved, not copied.
            Some(v)
                if src.key_slot.is_none()
                    && src.offset == 0
                    && src.width == self.j.width
                    && v.len() == src.width =>
            {
                self.row = v;
                return;
            }
            _ => {}
        }
        if self.row.len() != self.j.width {
            // The single-table output path moved the row out (see next).
            self.row.clear();
            self.row.resize(self.j.width, Value::Null);
        }
        match vals {
            Some(mut v) => {
                if let Some(slot) = src.key_slot {
                    self.row[slot] = if v.len() > src.width {
                        v.pop().unwrap_or(Value::Null)
                    } else {
                        Value::Null
                    };
                }
                for (i, x) in v.into_iter().enumerate().take(src.width) {
                    self.row[src.offset + i] = x;
                }
            }
            None => {
                for i in 0..src.width {
                    self.row[src.offset + i] = Value::Null;
                }
                if let Some(slot) = src.key_slot {
                    self.row[slot] = Value::Null;
                }
            }
        }
    }

    /// Advances step `k` to its next row that passes; false when done.
    fn advance(&mut self, k: usize, ex: &mut Ex<'_, 'p>) -> SqlResult<bool> {
        let step = &self.j.steps[k];
        let outer_on = self.j.sources[step.source].outer_on.as_deref();
        loop {
            // A safe point for KILL QUERY / max_execution_time.
            ex.txn.tick()?;
            match self.candidate(k, ex)? {
                Some(vals) => {
                    self.set_source(k, Some(vals));
                    if let Some(on) = outer_on {
                        if !ex.passes(on, &self.row)? {
                            continue;
                        }
                        self.levels[k].matched = true;
                    }
                    if ex.passes(&step.filter, &self.row)? {
                        return Ok(true);
                    }
                }
                None => {
                    let lv = &mut self.levels[k];
                    if outer_on.is_some() && !lv.matched && !lv.null_done && !lv.deferred {
                        lv.null_done = true;
                        self.set_source(k, None);
                        if ex.passes(&step.filter, &self.row)? {
                            return Ok(true);
                        }
                    }
                    self.set_source(k, None);
                    return Ok(false);
                }
            }
        }
    }
}

impl<'p> Operator<'p> for JoinOp<'p> {
    fn next(&mut self, ex: &mut Ex<'_, 'p>) -> SqlResult<Option<Vec<Value>>> {
        if self.done {
            return Ok(None);
        }
        if !self.started {
            self.started = true;
            if !ex.passes(&self.j.gate, &self.row)? {
                self.done = true;
                return Ok(None);
            }
            if self.j.steps.is_empty() {
                // SELECT without FROM: one empty row.
                self.done = true;
                return Ok(Some(Vec::new()));
            }
            self.open(0, ex)?;
            self.depth = 0;
        }
        let last = self.j.steps.len() - 1;
        // The optimizer's limit: no consumer wants more rows.
        if self.j.limit.is_some_and(|l| self.produced >= l) {
            self.done = true;
            return Ok(None);
        }
        loop {
            let k = self.depth;
            if self.advance(k, ex)? {
                if k == last {
                    self.produced += 1;
                    if last == 0 {
                        // Nothing reads the row again before the next
                        // set_source refills it: hand it over.
                        return Ok(Some(std::mem::take(&mut self.row)));
                    }
                    return Ok(Some(self.row.clone()));
                }
                self.depth += 1;
                self.open(k + 1, ex)?;
            } else if self.floor == Some(k) {
                // A replayed hash step: its next probe row from disk, or
                // the next spilled step's replay.
                if !self.next_replayed(k, ex)? && !self.start_replay(ex)? {
                    self.done = true;
                    return Ok(None);
                }
            } else if k == 0 {
                if !self.start_replay(ex)? {
                    self.done = true;
                    return Ok(None);
                }
            } else {
                self.depth -= 1;
            }
        }
    }
}

/// A derived table's rows, computed once per statement.
fn materialise<'p>(node: &'p Node, ex: &mut Ex<'_, 'p>) -> SqlResult<Arc<Vec<Vec<Value>>>> {
    let key = node as *const Node as usize;
    let cacheable = !reads_working(node);
    if cacheable {
        if let Some(r) = ex.sh.derived.borrow().get(&key) {
            return Ok(r.clone());
        }
    }
    // Derived tables see no enclosing row.
    let mut inner = Ex {
        txn: &mut *ex.txn,
        sh: ex.sh,
        outer: &[],
    };
    let rows = Arc::new(collect(node, &mut inner)?);
    if cacheable {
        ex.sh.derived.borrow_mut().insert(key, rows.clone());
    }
    Ok(rows)
}

/// A LATERAL derived table's rows for the current row of the sources
/// before it (`before`, the join row up to its offset): computed again
/// each time, never cached. Its outer row is the block's, then `before`,
/// as it was bound (`bind::Binder::lateral_scope`).
fn lateral_rows<'p>(
    node: &'p Node,
    before: &[Value],
    ex: &mut Ex<'_, 'p>,
) -> SqlResult<Arc<Vec<Vec<Value>>>> {
    let mut outer = Vec::with_capacity(ex.outer.len() + before.len());
    outer.extend_from_slice(ex.outer);
    outer.extend_from_slice(before);
    let mut inner = Ex {
        txn: &mut *ex.txn,
        sh: ex.sh,
        outer: &outer,
    };
    Ok(Arc::new(collect(node, &mut inner)?))
}

/// Whether a plan reads a recursive CTE's working rows (its result
/// changes from round to round, so it is not cached).
fn reads_working(node: &Node) -> bool {
    match node {
        Node::Join(j) => j.sources.iter().any(|s| match &s.kind {
            SourceKind::Working(_) => true,
            SourceKind::Derived(n) | SourceKind::Lateral { node: n, .. } => reads_working(n),
            _ => false,
        }),
        Node::Aggregate { input, .. }
        | Node::Project { input, .. }
        | Node::Window { input, .. }
        | Node::Distinct { input, .. }
        | Node::Sort { input, .. }
        | Node::Limit { input, .. } => reads_working(input),
        Node::SetOp { left, right, .. } => reads_working(left) || reads_working(right),
        Node::Recursive { anchor, step, .. } => reads_working(anchor) || reads_working(step),
        Node::Values(_) => false,
    }
}

// ------------------------------------------------------------- aggregate

struct AggregateOp<'p> {
    input: BoxOp<'p>,
    group: &'p [E],
    aggs: &'p [crate::expr::AggSpec],
    width: usize,
    rollup: bool,
    /// Finished rows of the table being handed out.
    out: Option<std::vec::IntoIter<Vec<Value>>>,
    input_done: bool,
    /// Partitions of input rows set aside when the table was full
    /// (`spill/hash.rs`), each to be grouped on its own.
    queue: VecDeque<(StreamReader, u32)>,
    rollup_state: Option<RollupState<'p>>,
}

struct Group {
    row: Vec<Value>,
    states: Vec<AggState>,
}

/// Where a grouping pass reads its rows: the operator's input, or a
/// partition written by an earlier pass.
enum GroupSource {
    Input,
    Spilled(StreamReader),
}

impl<'p> AggregateOp<'p> {
    fn new_group(&self, row: Vec<Value>) -> Group {
        Group {
            row,
            states: self.aggs.iter().map(|a| AggState::new(a.kind)).collect(),
        }
    }

    fn source_row(
        &mut self,
        src: &mut GroupSource,
        ex: &mut Ex<'_, 'p>,
    ) -> SqlResult<Option<Vec<Value>>> {
        match src {
            GroupSource::Input => self.input.next(ex),
            GroupSource::Spilled(r) => {
                ex.txn.tick()?;
                r.next_row()
            }
        }
    }

    /// One grouping pass (no ROLLUP): the groups that fit within the
    /// temporary-table limit, finished; rows of further groups go to
    /// partitions, queued for later passes.
    fn group_pass(
        &mut self,
        mut src: GroupSource,
        level: u32,
        ex: &mut Ex<'_, 'p>,
    ) -> SqlResult<Vec<Vec<Value>>> {
        let sh = ex.sh;
        let limits = sh.limits();
        let (limit, dir) = (limits.table_bytes, limits.dir.clone());
        let mut groups: Vec<Group> = Vec::new();
        let mut index: HashMap<Vec<KeyPart>, usize> = HashMap::default();
        let mut bytes = 0usize;
        let mut over: Option<Partitions> = None;
        while let Some(row) = self.source_row(&mut src, ex)? {
            let mut kv = Vec::with_capacity(self.group.len());
            for g in self.group {
                kv.push(ex.eval(g, &row, &[])?);
            }
            let key = row_key(&kv);
            let gi = match index.get(&key) {
                Some(&i) => i,
                None => {
                    let b = row_bytes(&row) + key_bytes(&key) + 64 * self.aggs.len();
                    if over.is_some() || (bytes + b > limit && !groups.is_empty()) {
                        let p = match over.as_mut() {
                            Some(p) => p,
                            None => over.insert(Partitions::new(&dir, level)?),
                        };
                        p.push(&key, &row)?;
                        continue;
                    }
                    bytes += b;
                    let g = self.new_group(row.clone());
                    groups.push(g);
                    index.insert(key, groups.len() - 1);
                    groups.len() - 1
                }
            };
            let mut g = std::mem::replace(
                &mut groups[gi],
                Group {
                    row: Vec::new(),
                    states: Vec::new(),
                },
            );
            self.add(&mut g, &row, ex)?;
            groups[gi] = g;
        }
        if let Some(p) = over {
            self.queue.extend(p.finish()?);
        }
        if level == 0 && groups.is_empty() && self.group.is_empty() {
            groups.push(self.new_group(vec![Value::Null; self.width]));
        }
        groups.into_iter().map(|g| self.finish(g)).collect()
    }

    fn add(&self, g: &mut Group, row: &[Value], ex: &mut Ex<'_, 'p>) -> SqlResult<()> {
        for (st, spec) in g.states.iter_mut().zip(self.aggs) {
            let v = match &spec.arg {
                None => None,
                Some(e) => Some(ex.eval(e, row, &[])?),
            };
            st.add(spec, v)?;
        }
        Ok(())
    }

    fn finish(&self, g: Group) -> SqlResult<Vec<Value>> {
        let mut out = g.row;
        out.resize(self.width, Value::Null);
        for (s, a) in g.states.iter().zip(self.aggs) {
            out.push(s.finish(a)?);
        }
        Ok(out)
    }

    /// WITH ROLLUP, first call: the input sorted by its GROUP BY values
    /// (`spill/sort.rs`: within `sort_buffer_size`, runs on disk beyond),
    /// each row carrying those values at its end.
    fn sort_for_rollup(&mut self, ex: &mut Ex<'_, 'p>) -> SqlResult<RollupState<'p>> {
        let n = self.group.len();
        let cmp: RowCmp<'p> = Box::new(move |a: &[Value], b: &[Value]| {
            let (ka, kb) = (&a[a.len() - n..], &b[b.len() - n..]);
            for (x, y) in ka.iter().zip(kb) {
                let o = null_first(x, y);
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        });
        let mut sorter = Sorter::new(cmp, None, ex.sh.limits());
        while let Some(mut row) = self.input.next(ex)? {
            let mut kv = Vec::with_capacity(n);
            for g in self.group {
                kv.push(ex.eval(g, &row, &[])?);
            }
            row.extend(kv);
            let tx: &Txn = ex.txn;
            sorter.push(row, &|| tx.tick())?;
        }
        let tx: &Txn = ex.txn;
        Ok(RollupState {
            sorted: sorter.finish(&|| tx.tick())?,
            levels: (0..=n).map(|_| None).collect(),
            last_key: None,
            pending: VecDeque::new(),
            done: false,
        })
    }

    /// A new group at `level` (the first `level` GROUP BY values), its
    /// row being `row` with the rolled-up columns read as NULL.
    fn rollup_group(&self, row: &[Value], level: usize) -> Group {
        let mut rep = row.to_vec();
        for g in &self.group[level..] {
            if let E::Col(c) = g {
                if let Some(x) = rep.get_mut(*c) {
                    *x = Value::Null;
                }
            }
        }
        self.new_group(rep)
    }

    /// Closes the groups of levels `from..` (deepest first: a
    /// super-aggregate row follows the rows it sums).
    fn close_levels(&self, st: &mut RollupState<'p>, from: usize) -> SqlResult<()> {
        for l in (from..st.levels.len()).rev() {
            if let Some(g) = st.levels[l].take() {
                st.pending.push_back(self.finish(g)?);
            }
        }
        Ok(())
    }

    /// WITH ROLLUP: walks the sorted rows; where the GROUP BY values
    /// first differ at position i, the groups of levels above i end.
    fn next_rollup(&mut self, ex: &mut Ex<'_, 'p>) -> SqlResult<Option<Vec<Value>>> {
        let mut st = match self.rollup_state.take() {
            Some(st) => st,
            None => self.sort_for_rollup(ex)?,
        };
        let n = self.group.len();
        let r = loop {
            if let Some(r) = st.pending.pop_front() {
                break Some(r);
            }
            if st.done {
                break None;
            }
            let tx: &Txn = ex.txn;
            let Some(mut row) = st.sorted.next(&|| tx.tick())? else {
                self.close_levels(&mut st, 0)?;
                st.done = true;
                continue;
            };
            let kv = row.split_off(row.len() - n);
            let key = row_key(&kv);
            let first_diff = match &st.last_key {
                None => 0,
                Some(last) => last.iter().zip(&key).take_while(|(a, b)| a == b).count(),
            };
            if st.last_key.is_some() {
                self.close_levels(&mut st, first_diff + 1)?;
            }
            for l in 0..=n {
                if st.levels[l].is_none() {
                    st.levels[l] = Some(self.rollup_group(&row, l));
                }
                if let Some(mut g) = st.levels[l].take() {
                    self.add(&mut g, &row, ex)?;
                    st.levels[l] = Some(g);
                }
            }
            st.last_key = Some(key);
        };
        self.rollup_state = Some(st);
        Ok(r)
    }
}

/// WITH ROLLUP in progress: the sorted input, the open group of each
/// level (0 = the grand total), finished rows not handed out yet.
struct RollupState<'p> {
    sorted: Sorted<RowCmp<'p>>,
    levels: Vec<Option<Group>>,
    last_key: Option<Vec<KeyPart>>,
    pending: VecDeque<Vec<Value>>,
    done: bool,
}

pub fn null_first(a: &Value, b: &Value) -> Ordering {
    match (a.is_null(), b.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => compare(a, b).unwrap_or(Ordering::Equal),
    }
}

impl<'p> Operator<'p> for AggregateOp<'p> {
    fn next(&mut self, ex: &mut Ex<'_, 'p>) -> SqlResult<Option<Vec<Value>>> {
        loop {
            if let Some(r) = self.out.as_mut().and_then(|o| o.next()) {
                return Ok(Some(r));
            }
            if self.rollup {
                return self.next_rollup(ex);
            }
            let rows = if !self.input_done {
                self.input_done = true;
                self.group_pass(GroupSource::Input, 0, ex)?
            } else if let Some((r, level)) = self.queue.pop_front() {
                self.group_pass(GroupSource::Spilled(r), level, ex)?
            } else {
                return Ok(None);
            };
            self.out = Some(rows.into_iter());
        }
    }
}

// --------------------------------------------------------------- project

struct ProjectOp<'p> {
    input: BoxOp<'p>,
    exprs: &'p [E],
    having: Option<&'p E>,
    agg_width: Option<usize>,
    types: &'p [ColumnType],
    wins: usize,
    /// Per select-list item: a plain column nothing else reads, whose
    /// value is moved out of the input row instead of copied.
    moved: Vec<bool>,
}

/// Which select-list items can take their value from the input row by
/// moving it: a bare column reference, read by no other item, over a
/// plain row (no HAVING, aggregates or windows sharing the row).
fn movable_cols(
    exprs: &[E],
    having: Option<&E>,
    agg_width: Option<usize>,
    wins: usize,
) -> Vec<bool> {
    if having.is_some() || agg_width.is_some() || wins > 0 {
        return vec![false; exprs.len()];
    }
    let mut reads: Vec<u32> = Vec::new();
    let mut see = |c: usize| {
        if reads.len() <= c {
            reads.resize(c + 1, 0);
        }
        reads[c] += 1;
    };
    for e in exprs {
        e.for_each_col(&mut see);
    }
    exprs
        .iter()
        .map(|e| matches!(e, E::Col(c) if reads.get(*c) == Some(&1)))
        .collect()
}

/// Splits an input row into (row, aggregate values, window values).
pub fn split_row(
    input: &[Value],
    agg_width: Option<usize>,
    wins: usize,
) -> (&[Value], &[Value], &[Value]) {
    let (base, w) = input.split_at(input.len().saturating_sub(wins));
    let (row, aggs) = match agg_width {
        Some(a) if a <= base.len() => base.split_at(a),
        _ => (base, &[][..]),
    };
    (row, aggs, w)
}

impl<'p> Operator<'p> for ProjectOp<'p> {
    fn next(&mut self, ex: &mut Ex<'_, 'p>) -> SqlResult<Option<Vec<Value>>> {
        while let Some(mut input) = self.input.next(ex)? {
            // Moved columns first (nothing else reads them), then the rest
            // evaluate over the row as it came.
            let mut taken: Vec<Option<Value>> = Vec::new();
            if self.moved.iter().any(|&m| m) {
                taken = self
                    .exprs
                    .iter()
                    .zip(&self.moved)
                    .map(|(e, &m)| match (e, m) {
                        (E::Col(c), true) => {
                            input.get_mut(*c).map(|v| std::mem::replace(v, Value::Null))
                        }
                        _ => None,
                    })
                    .collect();
            }
            let (row, aggs, wins) = split_row(&input, self.agg_width, self.wins);
            if let Some(h) = self.having {
                if truth(&ex.eval_win(h, row, aggs, wins)?) != Some(true) {
                    continue;
                }
            }
            let mut out = Vec::with_capacity(self.exprs.len());
            for (i, e) in self.exprs.iter().enumerate() {
                let v = match taken.get_mut(i).and_then(Option::take) {
                    Some(v) => v,
                    None => ex.eval_win(e, row, aggs, wins)?,
                };
                out.push(match self.types.get(i) {
                    Some(t) => conform(v, t),
                    None => v,
                });
            }
            return Ok(Some(out));
        }
        Ok(None)
    }
}

// ------------------------------------------------- distinct, sort, limit

struct DistinctOp<'p> {
    colls: &'p [crate::query::key::KeyOf],
    input: BoxOp<'p>,
    width: usize,
    dedup: Option<Dedup>,
    input_done: bool,
}

impl<'p> Operator<'p> for DistinctOp<'p> {
    fn next(&mut self, ex: &mut Ex<'_, 'p>) -> SqlResult<Option<Vec<Value>>> {
        let width = self.width;
        let dedup = self
            .dedup
            .get_or_insert_with(|| Dedup::new(ex.sh.limits(), Some(width), self.colls.to_vec()));
        if !self.input_done {
            while let Some(r) = self.input.next(ex)? {
                if let Some(r) = dedup.offer(r)? {
                    return Ok(Some(r));
                }
            }
            self.input_done = true;
        }
        let tx: &Txn = ex.txn;
        dedup.drain(&|| tx.tick())
    }
}

fn sort_cmp(a: &[Value], b: &[Value], keys: &[(usize, bool)]) -> Ordering {
    for (i, d) in keys {
        let o = null_first(&a[*i], &b[*i]);
        let o = if *d { o.reverse() } else { o };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

type RowCmp<'p> = Box<dyn Fn(&[Value], &[Value]) -> Ordering + 'p>;

/// ORDER BY: all input rows, sorted within `sort_buffer_size` (runs on
/// disk beyond it, `spill/sort.rs`), then handed out one at a time.
struct SortOp<'p> {
    input: BoxOp<'p>,
    keys: &'p [(usize, bool)],
    top: Option<usize>,
    out: Option<Sorted<RowCmp<'p>>>,
}

impl<'p> Operator<'p> for SortOp<'p> {
    fn next(&mut self, ex: &mut Ex<'_, 'p>) -> SqlResult<Option<Vec<Value>>> {
        if self.out.is_none() {
            let keys = self.keys;
            let cmp: RowCmp<'p> = Box::new(move |a, b| sort_cmp(a, b, keys));
            let mut sorter = Sorter::new(cmp, self.top, ex.sh.limits());
            while let Some(r) = self.input.next(ex)? {
                let tx: &Txn = ex.txn;
                sorter.push(r, &|| tx.tick())?;
            }
            let tx: &Txn = ex.txn;
            self.out = Some(sorter.finish(&|| tx.tick())?);
        }
        let tx: &Txn = ex.txn;
        match self.out.as_mut() {
            Some(o) => o.next(&|| tx.tick()),
            None => Ok(None),
        }
    }
}

struct LimitOp<'p> {
    input: BoxOp<'p>,
    skip: usize,
    left: Option<usize>,
    width: usize,
}

impl<'p> Operator<'p> for LimitOp<'p> {
    fn next(&mut self, ex: &mut Ex<'_, 'p>) -> SqlResult<Option<Vec<Value>>> {
        if self.left == Some(0) {
            return Ok(None);
        }
        while let Some(mut r) = self.input.next(ex)? {
            if self.skip > 0 {
                self.skip -= 1;
                continue;
            }
            if let Some(l) = self.left.as_mut() {
                *l -= 1;
            }
            r.truncate(self.width);
            return Ok(Some(r));
        }
        Ok(None)
    }
}

// ------------------------------------------------------ set operations

struct SetOpOp<'p> {
    colls: &'p [crate::query::key::KeyOf],
    op: SetOpKind,
    all: bool,
    left: BoxOp<'p>,
    right: Option<BoxOp<'p>>,
    /// INTERSECT / EXCEPT: the right side's keys with counts.
    filter: Option<SetFilter>,
    /// The DISTINCT variants: duplicates removed on the way out.
    dedup: Option<Dedup>,
    on_right: bool,
    /// The left input (INTERSECT / EXCEPT) or both (UNION) are read.
    input_done: bool,
}

impl<'p> SetOpOp<'p> {
    /// UNION [ALL]: the left rows, then the right.
    fn next_union(&mut self, ex: &mut Ex<'_, 'p>) -> SqlResult<Option<Vec<Value>>> {
        while !self.input_done {
            let r = if self.on_right {
                match self.right.as_mut() {
                    Some(op) => op.next(ex)?,
                    None => None,
                }
            } else {
                self.left.next(ex)?
            };
            let Some(r) = r else {
                if self.on_right {
                    self.input_done = true;
                } else {
                    self.on_right = true;
                }
                continue;
            };
            match self.dedup.as_mut() {
                None => return Ok(Some(r)),
                Some(d) => {
                    if let Some(r) = d.offer(r)? {
                        return Ok(Some(r));
                    }
                }
            }
        }
        let tx: &Txn = ex.txn;
        match self.dedup.as_mut() {
            Some(d) => d.drain(&|| tx.tick()),
            None => Ok(None),
        }
    }

    /// INTERSECT / EXCEPT [ALL]: left rows the right side's keys keep.
    fn next_filtered(&mut self, ex: &mut Ex<'_, 'p>) -> SqlResult<Option<Vec<Value>>> {
        if self.filter.is_none() {
            let mut f = SetFilter::new(
                ex.sh.limits(),
                self.op == SetOpKind::Intersect,
                self.all,
                self.colls.to_vec(),
            );
            if let Some(mut op) = self.right.take() {
                while let Some(r) = op.next(ex)? {
                    f.add_right(r, 1)?;
                }
            }
            self.filter = Some(f);
        }
        loop {
            let kept = if !self.input_done {
                match self.left.next(ex)? {
                    Some(r) => match self.filter.as_mut() {
                        Some(f) => f.offer_left(r)?,
                        None => None,
                    },
                    None => {
                        self.input_done = true;
                        continue;
                    }
                }
            } else {
                let tx: &Txn = ex.txn;
                let from_filter = match self.filter.as_mut() {
                    Some(f) => f.drain(&|| tx.tick())?,
                    None => None,
                };
                match from_filter {
                    Some(r) => Some(r),
                    // Everything kept went through the de-duplication:
                    // what it set aside comes last.
                    None => {
                        return match self.dedup.as_mut() {
                            Some(d) => d.drain(&|| tx.tick()),
                            None => Ok(None),
                        }
                    }
                }
            };
            let Some(r) = kept else { continue };
            match self.dedup.as_mut() {
                None => return Ok(Some(r)),
                Some(d) => {
                    if let Some(r) = d.offer(r)? {
                        return Ok(Some(r));
                    }
                }
            }
        }
    }
}

impl<'p> Operator<'p> for SetOpOp<'p> {
    fn next(&mut self, ex: &mut Ex<'_, 'p>) -> SqlResult<Option<Vec<Value>>> {
        if !self.all && self.dedup.is_none() {
            self.dedup = Some(Dedup::new(ex.sh.limits(), None, self.colls.to_vec()));
        }
        if self.op == SetOpKind::Union {
            self.next_union(ex)
        } else {
            self.next_filtered(ex)
        }
    }
}

// ------------------------------------------------------- recursive CTE

struct RecursiveOp<'p> {
    id: usize,
    anchor: Option<BoxOp<'p>>,
    step: &'p Node,
    distinct: bool,
    seen: HashSet<Vec<KeyPart>>,
    /// Rows of the current round still to hand out.
    round: VecDeque<Vec<Value>>,
    /// Rows of the current round, for the next round's working table.
    next_round: Vec<Vec<Value>>,
    rounds: u64,
    done: bool,
}

fn max_recursion(ex: &Ex) -> u64 {
    ex.sh
        .cx
        .env
        .sysvar("cte_max_recursion_depth", crate::parse::Scope::Session)
        .ok()
        .and_then(|v| match v {
            Value::Int(i) => u64::try_from(i).ok(),
            Value::UInt(u) => Some(u),
            _ => None,
        })
        .unwrap_or(1000)
}

impl<'p> Operator<'p> for RecursiveOp<'p> {
    fn next(&mut self, ex: &mut Ex<'_, 'p>) -> SqlResult<Option<Vec<Value>>> {
        loop {
            if let Some(r) = self.round.pop_front() {
                self.next_round.push(r.clone());
                return Ok(Some(r));
            }
            if self.done {
                return Ok(None);
            }
            let produced: Vec<Vec<Value>> = if let Some(mut a) = self.anchor.take() {
                let mut v = Vec::new();
                while let Some(r) = a.next(ex)? {
                    v.push(r);
                }
                v
            } else {
                if self.next_round.is_empty() {
                    self.done = true;
                    continue;
                }
                self.rounds += 1;
                if self.rounds > max_recursion(ex) {
                    return Err(EngineError::new(
                        3636,
                        "HY000",
                        format!(
                            "Recursive query aborted after {} iterations. Try increasing @@cte_max_recursion_depth to a larger value.",
                            self.rounds
                        ),
                    ));
                }
                let work = Arc::new(std::mem::take(&mut self.next_round));
                ex.sh.working.borrow_mut().insert(self.id, work);
                collect(self.step, ex)?
            };
            self.next_round.clear();
            for r in produced {
                ex.txn.tick()?;
                if !self.distinct || self.seen.insert(row_key(&r)) {
                    self.round.push_back(r);
                }
            }
            if self.round.is_empty() {
                self.done = true;
            }
        }
    }
}

// ---------------------------------------------------------------- values

struct ValuesOp {
    rows: Arc<Vec<Vec<Value>>>,
    pos: usize,
}

impl<'p> Operator<'p> for ValuesOp {
    fn next(&mut self, _ex: &mut Ex<'_, 'p>) -> SqlResult<Option<Vec<Value>>> {
        let r = self.rows.get(self.pos).cloned();
        self.pos += 1;
        Ok(r)
    }
}
