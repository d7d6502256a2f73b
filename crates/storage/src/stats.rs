//! Status counters, named after the MySQL/InnoDB `SHOW GLOBAL STATUS`
//! variables they will be shown as. They are plain relaxed atomics: a counter
//! read is a snapshot for operators, never a synchronisation point.

use std::sync::atomic::{AtomicU64, Ordering};

macro_rules! counters {
    ($( $(#[$doc:meta])* $field:ident => $name:literal, )*) => {
        /// Storage-layer counters. Field names are the MySQL names lower-cased.
        #[derive(Debug, Default)]
        pub struct Stats {
            $( $(#[$doc])* pub $field: AtomicU64, )*
        }

        impl Stats {
            /// (MySQL status name, value) for every counter, in a fixed order.
            pub fn snapshot(&self) -> Vec<(&'static str, u64)> {
                vec![ $( ($name, self.$field.load(Ordering::Relaxed)), )* ]
            }
        }
    };
}

counters! {
    /// Bytes written to the redo log files (including write-ahead padding).
    innodb_os_log_written => "Innodb_os_log_written",
    /// fsync-class calls on redo log files.
    innodb_os_log_fsyncs => "Innodb_os_log_fsyncs",
    /// Redo writes issued.
    innodb_log_writes => "Innodb_log_writes",
    /// Times a writer waited: for log buffer space, or at the checkpoint
    /// sync point (checkpoint age past the sync flush point).
    innodb_log_waits => "Innodb_log_waits",
    /// Redo log resizes done (SET GLOBAL innodb_redo_log_capacity, or a
    /// start with another capacity than the files').
    innodb_redo_log_resizes => "Quire_redo_log_resizes",
    /// fsync-class calls on data and doublewrite files.
    innodb_data_fsyncs => "Innodb_data_fsyncs",
    /// Page writes to data files (in place).
    innodb_pages_written => "Innodb_pages_written",
    /// Page reads from data files.
    innodb_pages_read => "Innodb_pages_read",
    /// Doublewrite batches written.
    innodb_dblwr_writes => "Innodb_dblwr_writes",
    /// Pages written to the doublewrite files.
    innodb_dblwr_pages_written => "Innodb_dblwr_pages_written",
    /// Times a thread needing a free buffer pool frame had to wait for a
    /// flush to make one.
    innodb_buffer_pool_wait_free => "Innodb_buffer_pool_wait_free",
    /// Page writes in flight right now (a gauge).
    innodb_data_pending_writes => "Innodb_data_pending_writes",
    /// Pages flushed by the page cleaner (all reasons).
    innodb_buffer_pool_pages_flushed => "Innodb_buffer_pool_pages_flushed",
    /// Torn pages found during recovery and restored from doublewrite.
    quire_torn_pages_restored => "Quire_torn_pages_restored",
    /// Torn pages found during recovery that could not be restored.
    quire_torn_pages_detected => "Quire_torn_pages_detected",
    /// LOB pages written for off-page values (lob.rs).
    quire_lob_pages_written => "Quire_lob_pages_written",
    /// LOB pages read for off-page values.
    quire_lob_pages_read => "Quire_lob_pages_read",
    /// LOB pages freed (purge, replaced values, recovery's orphans).
    quire_lob_pages_freed => "Quire_lob_pages_freed",
}

impl Stats {
    pub fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }
    pub fn inc(c: &AtomicU64) {
        c.fetch_add(1, Ordering::Relaxed);
    }
    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}
