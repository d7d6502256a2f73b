//! Behaviour of the public API: defaults, parsing, errors, precedence.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn parse(args: &[&str]) -> Result<(Config, Vec<String>), ConfigError> {
    parse_args(strings(args))
}

/// A scratch directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "quire-config-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch(dir)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("create dir");
        }
        fs::write(&path, text).expect("write file");
        path
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

// ---------------------------------------------------------------- defaults

#[test]
fn defaults_are_mysql_8_0_defaults() {
    let c = Config::default();
    assert_eq!(c.datadir, PathBuf::from("./quire-data"));
    assert_eq!(c.innodb_page_size, 16384);
    assert_eq!(c.innodb_buffer_pool_size, 128 << 20);
    assert_eq!(c.innodb_log_buffer_size, 16 << 20);
    assert_eq!(c.innodb_redo_log_capacity, 100 << 20);
    assert_eq!(c.innodb_log_write_ahead_size, 8192);
    assert_eq!(c.innodb_flush_method, FlushMethod::Fsync);
    assert!(!c.innodb_use_fdatasync);
    assert_eq!(c.innodb_io_capacity, 200);
    assert_eq!(c.innodb_io_capacity_max, 2000);
    assert_eq!(c.innodb_max_dirty_pages_pct, 90.0);
    assert_eq!(c.innodb_max_dirty_pages_pct_lwm, 10.0);
    assert!(c.innodb_adaptive_flushing);
    assert_eq!(c.innodb_adaptive_flushing_lwm, 10.0);
    assert_eq!(c.innodb_flush_neighbors, 0);
    assert_eq!(c.innodb_doublewrite, DoublewriteMode::On);
    assert_eq!(c.innodb_doublewrite_dir, None);
    assert_eq!(c.innodb_doublewrite_files, 2);
    assert_eq!(c.innodb_doublewrite_pages, 4);
    assert_eq!(c.innodb_flush_log_at_trx_commit, 1);
    assert_eq!(c.innodb_flush_log_at_timeout, 1);
    assert_eq!(c.innodb_lock_wait_timeout, 50);
    c.validate().expect("defaults are valid");
}

#[test]
fn defaults_print_as_show_variables_does() {
    let c = Config::default();
    let shown: Vec<(&str, String)> = c.variables().collect();
    let expected = [
        ("activate_all_roles_on_login", "OFF"),
        ("auto_generate_certs", "ON"),
        ("bind_address", "127.0.0.1"),
        ("binlog_cache_size", "32768"),
        ("binlog_checksum", "CRC32"),
        ("binlog_expire_logs_auto_purge", "ON"),
        ("binlog_expire_logs_seconds", "2592000"),
        ("binlog_format", "ROW"),
        ("binlog_group_commit_sync_delay", "0"),
        ("binlog_group_commit_sync_no_delay_count", "0"),
        ("binlog_row_image", "FULL"),
        ("binlog_row_metadata", "MINIMAL"),
        ("caching_sha2_password_auto_generate_rsa_keys", "ON"),
        ("cte_max_recursion_depth", "1000"),
        ("datadir", "./quire-data"),
        ("default_authentication_plugin", "caching_sha2_password"),
        ("enforce_gtid_consistency", "OFF"),
        ("gtid_mode", "OFF"),
        ("innodb_adaptive_flushing", "ON"),
        ("innodb_adaptive_flushing_lwm", "10"),
        ("innodb_buffer_pool_size", "134217728"),
        ("innodb_doublewrite", "ON"),
        ("innodb_doublewrite_dir", ""),
        ("innodb_doublewrite_files", "2"),
        ("innodb_doublewrite_pages", "4"),
        ("innodb_flush_log_at_timeout", "1"),
        ("innodb_flush_log_at_trx_commit", "1"),
        ("innodb_flush_method", "fsync"),
        ("innodb_flush_neighbors", "0"),
        ("innodb_io_capacity", "200"),
        ("innodb_io_capacity_max", "2000"),
        ("innodb_lock_wait_timeout", "50"),
        ("innodb_log_buffer_size", "16777216"),
        ("innodb_log_write_ahead_size", "8192"),
        ("innodb_max_dirty_pages_pct", "90.000000"),
        ("innodb_max_dirty_pages_pct_lwm", "10.000000"),
        ("innodb_page_size", "16384"),
        ("innodb_redo_log_capacity", "104857600"),
        ("innodb_sort_buffer_size", "1048576"),
        ("innodb_stats_auto_recalc", "ON"),
        ("innodb_stats_persistent", "ON"),
        ("innodb_stats_persistent_sample_pages", "20"),
        ("innodb_use_fdatasync", "OFF"),
        ("join_buffer_size", "262144"),
        ("lock_wait_timeout", "31536000"),
        ("log_bin", "ON"),
        ("log_bin_basename", ""),
        ("max_allowed_packet", "67108864"),
        ("max_binlog_cache_size", "18446744073709547520"),
        ("max_binlog_size", "1073741824"),
        ("max_connect_errors", "100"),
        ("max_connections", "151"),
        ("max_heap_table_size", "16777216"),
        ("max_user_connections", "0"),
        ("port", "3306"),
        ("quire_prepare_flush", "GROUP"),
        ("require_secure_transport", "OFF"),
        ("rpl_semi_sync_master_enabled", "OFF"),
        ("rpl_semi_sync_master_timeout", "10000"),
        ("rpl_semi_sync_master_wait_for_slave_count", "1"),
        ("rpl_semi_sync_master_wait_point", "AFTER_SYNC"),
        ("rpl_semi_sync_source_enabled", "OFF"),
        ("rpl_semi_sync_source_timeout", "10000"),
        ("rpl_semi_sync_source_wait_for_replica_count", "1"),
        ("rpl_semi_sync_source_wait_point", "AFTER_SYNC"),
        ("server_id", "1"),
        ("skip_replica_start", "OFF"),
        ("socket", ""),
        ("sort_buffer_size", "262144"),
        ("ssl_ca", ""),
        ("ssl_cert", ""),
        ("ssl_key", ""),
        ("sync_binlog", "1"),
        ("thread_stack", "8388608"),
        ("tls_version", "TLSv1.2,TLSv1.3"),
        ("tmp_table_size", "16777216"),
        ("wait_timeout", "28800"),
    ];
    let expected: Vec<(&str, String)> = expected.iter().map(|(n, v)| (*n, v.to_string())).collect();
    assert_eq!(shown, expected);
}

#[test]
fn registry_is_sorted_and_its_defaults_match_default_impl() {
    let names: Vec<&str> = registry().iter().map(|v| v.name).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(names, sorted, "registry must be sorted and unique");
    let c = Config::default();
    for info in registry() {
        assert_eq!(c.get(info.name).unwrap(), info.default, "{}", info.name);
        assert!(!info.help.is_empty(), "{}", info.name);
    }
}

#[test]
fn dynamic_flags_follow_mysql() {
    let read_only = [
        "datadir",
        "innodb_doublewrite_dir",
        "innodb_doublewrite_files",
        "innodb_doublewrite_pages",
        "innodb_flush_method",
        "innodb_page_size",
        "innodb_sort_buffer_size",
        "log_bin",
        "log_bin_basename",
        "bind_address",
        "port",
        "socket",
        "thread_stack",
        "skip_replica_start",
        // MySQL 8.0.16+ lets SET GLOBAL change these for ALTER INSTANCE
        // RELOAD TLS, which quire does not have: read-only here.
        "ssl_ca",
        "ssl_cert",
        "ssl_key",
        "tls_version",
        "auto_generate_certs",
        "caching_sha2_password_auto_generate_rsa_keys",
        "default_authentication_plugin",
    ];
    for info in registry() {
        assert_eq!(
            info.dynamic,
            !read_only.contains(&info.name),
            "{} dynamic flag",
            info.name
        );
    }
    assert!(var_info("innodb-buffer-pool-size").unwrap().dynamic);
    assert!(!var_info("INNODB_PAGE_SIZE").unwrap().dynamic);
    assert!(var_info("innodb_nope").is_none());
}

#[test]
fn every_variable_round_trips_through_its_printed_form() {
    let mut c = Config {
        datadir: PathBuf::from("/srv/quire"),
        innodb_doublewrite_dir: Some(PathBuf::from("/fast/dblwr")),
        innodb_doublewrite: DoublewriteMode::DetectOnly,
        innodb_flush_method: FlushMethod::ODirectNoFsync,
        innodb_max_dirty_pages_pct: 75.5,
        ..Config::default()
    };
    let before = c.clone();
    for (name, value) in before.variables() {
        c.set(name, &value).unwrap();
    }
    assert_eq!(c, before);
}

// ------------------------------------------------------------ set and get

#[test]
fn names_accept_dashes_underscores_and_any_case() {
    let mut c = Config::default();
    c.set("innodb-buffer-pool-size", "64M").unwrap();
    assert_eq!(c.innodb_buffer_pool_size, 64 << 20);
    c.set("INNODB_Buffer-Pool_SIZE", "32M").unwrap();
    assert_eq!(c.innodb_buffer_pool_size, 32 << 20);
    assert_eq!(c.get("innodb-buffer-pool-size").unwrap(), "33554432");
    assert_eq!(
        c.get("Innodb_Buffer_Pool_Size").unwrap(),
        c.get("innodb_buffer_pool_size").unwrap()
    );
}

#[test]
fn size_suffixes_are_powers_of_1024() {
    let mut c = Config::default();
    c.set("innodb_buffer_pool_size", "1G").unwrap();
    assert_eq!(c.innodb_buffer_pool_size, 1 << 30);
    c.set("innodb_buffer_pool_size", "256m").unwrap();
    assert_eq!(c.innodb_buffer_pool_size, 256 << 20);
    c.set("innodb_redo_log_capacity", "2G").unwrap();
    assert_eq!(c.innodb_redo_log_capacity, 2 << 30);
    c.set("innodb_log_buffer_size", "512K").unwrap();
    assert_eq!(c.innodb_log_buffer_size, 512 << 10);
    c.set("innodb_page_size", "8k").unwrap();
    assert_eq!(c.innodb_page_size, 8192);
    c.set("innodb_page_size", "65536").unwrap();
    assert_eq!(c.innodb_page_size, 65536);
    c.set("innodb_redo_log_capacity", "1T").unwrap_err();
    assert_eq!(c.get("innodb_redo_log_capacity").unwrap(), "2147483648");
}

#[test]
fn out_of_range_is_refused_naming_the_range() {
    let mut c = Config::default();
    let e = c.set("innodb_buffer_pool_size", "3M").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Variable 'innodb_buffer_pool_size' can't be set to the value of '3M': \
         allowed range is 5242880 (5M) .. 18446744073709551615"
    );
    assert_eq!(e.mysql_errno(), 1231);
    assert_eq!(
        e.mysql_message(),
        "Variable 'innodb_buffer_pool_size' can't be set to the value of '3M'"
    );
    assert_eq!(e.variable(), Some("innodb_buffer_pool_size"));
    assert_eq!(c, Config::default(), "a refused value changes nothing");

    let cases = [
        (
            "innodb_log_buffer_size",
            "128K",
            "allowed range is 262144 (256K) .. 4294967295",
        ),
        (
            "innodb_log_buffer_size",
            "4G",
            "allowed range is 262144 (256K) .. 4294967295",
        ),
        (
            "innodb_redo_log_capacity",
            "4M",
            "allowed range is 8388608 (8M) .. 137438953472 (128G)",
        ),
        ("innodb_redo_log_capacity", "129G", "137438953472 (128G)"),
        (
            "innodb_io_capacity",
            "99",
            "allowed range is 100 .. 18446744073709551615",
        ),
        (
            "innodb_io_capacity_max",
            "4294967296",
            "allowed range is 100 .. 4294967295",
        ),
        ("innodb_flush_neighbors", "3", "allowed range is 0 .. 2"),
        (
            "innodb_flush_log_at_trx_commit",
            "3",
            "allowed range is 0 .. 2",
        ),
        (
            "innodb_flush_log_at_timeout",
            "0",
            "allowed range is 1 .. 2700",
        ),
        (
            "innodb_flush_log_at_timeout",
            "2701",
            "allowed range is 1 .. 2700",
        ),
        (
            "innodb_lock_wait_timeout",
            "0",
            "allowed range is 1 .. 1073741824",
        ),
        (
            "innodb_lock_wait_timeout",
            "1073741825",
            "allowed range is 1 .. 1073741824",
        ),
        ("innodb_doublewrite_files", "1", "allowed range is 2 .. 256"),
        (
            "innodb_doublewrite_files",
            "257",
            "allowed range is 2 .. 256",
        ),
        ("innodb_doublewrite_pages", "3", "allowed range is 4 .. 512"),
        (
            "innodb_doublewrite_pages",
            "513",
            "allowed range is 4 .. 512",
        ),
        (
            "innodb_adaptive_flushing_lwm",
            "71",
            "allowed range is 0 .. 70",
        ),
        (
            "innodb_max_dirty_pages_pct",
            "100",
            "allowed range is 0 .. 99.999",
        ),
        (
            "innodb_max_dirty_pages_pct_lwm",
            "-1",
            "allowed range is 0 .. 99.999",
        ),
        (
            "innodb_io_capacity",
            "-5",
            "allowed range is 100 .. 18446744073709551615",
        ),
        (
            "innodb_io_capacity",
            "99999999999999999999",
            "allowed range is 100",
        ),
        (
            "innodb_buffer_pool_size",
            "16E",
            "allowed range is 5242880 (5M)",
        ),
    ];
    for (name, value, range) in cases {
        let e = c.set(name, value).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!(
                "Variable '{name}' can't be set to the value of '{value}': "
            )),
            "{msg}"
        );
        assert!(msg.contains(range), "{name}={value}: {msg}");
        assert_eq!(e.mysql_errno(), 1231, "{msg}");
    }
    assert_eq!(c, Config::default());
}

#[test]
fn limits_themselves_are_accepted() {
    let mut c = Config::default();
    for (name, value) in [
        ("innodb_buffer_pool_size", "5M"),
        ("innodb_log_buffer_size", "262144"),
        ("innodb_log_buffer_size", "4294966272"),
        ("innodb_redo_log_capacity", "8M"),
        ("innodb_redo_log_capacity", "128G"),
        ("innodb_io_capacity", "100"),
        ("innodb_flush_log_at_timeout", "2700"),
        ("innodb_lock_wait_timeout", "1073741824"),
        ("innodb_doublewrite_pages", "512"),
        ("innodb_doublewrite_files", "256"),
        ("innodb_max_dirty_pages_pct", "99.999"),
        ("innodb_max_dirty_pages_pct_lwm", "0"),
        ("innodb_adaptive_flushing_lwm", "70"),
        ("innodb_log_write_ahead_size", "512"),
    ] {
        c.set(name, value)
            .unwrap_or_else(|e| panic!("{name}={value}: {e}"));
    }
    assert_eq!(c.innodb_log_buffer_size, 4_294_966_272);
    assert_eq!(c.innodb_max_dirty_pages_pct, 99.999);
}

#[test]
fn powers_of_two_and_block_multiples() {
    let mut c = Config::default();
    for bad in ["12k", "2k", "128k", "10000"] {
        let e = c.set("innodb_page_size", bad).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("allowed values are powers of 2 from 4096 (4K) to 65536 (64K)"),
            "{e}"
        );
    }
    let e = c.set("innodb_log_write_ahead_size", "3000").unwrap_err();
    assert!(
        e.to_string()
            .contains("powers of 2 from 512 to 65536 (64K)"),
        "{e}"
    );
    let e = c.set("innodb_buffer_pool_size", "100000000").unwrap_err();
    assert!(
        e.to_string()
            .ends_with("must be a multiple of 1048576 (1M)"),
        "{e}"
    );
    let e = c.set("innodb_log_buffer_size", "300000").unwrap_err();
    assert!(
        e.to_string().ends_with("must be a multiple of 1024 (1K)"),
        "{e}"
    );
    c.set("innodb_redo_log_capacity", "200M").unwrap();
    assert!(c.set("innodb_redo_log_capacity", "200000000").is_err());
}

#[test]
fn values_of_the_wrong_type_are_error_1232() {
    let mut c = Config::default();
    for (name, value) in [
        ("innodb_io_capacity", "abc"),
        ("innodb_io_capacity", ""),
        ("innodb_io_capacity", "1.5"),
        ("innodb_buffer_pool_size", "128MB"),
        ("innodb_max_dirty_pages_pct", "lots"),
        ("innodb_max_dirty_pages_pct", "nan"),
        ("innodb_adaptive_flushing_lwm", "10.5"),
    ] {
        let e = c.set(name, value).unwrap_err();
        assert_eq!(e.mysql_errno(), 1232, "{name}={value}: {e}");
        assert!(
            e.to_string()
                .starts_with(&format!("Incorrect argument type to variable '{name}'")),
            "{e}"
        );
        assert_eq!(
            e.mysql_message(),
            format!("Incorrect argument type to variable '{name}'")
        );
    }
}

#[test]
fn booleans_take_mysql_spellings() {
    let mut c = Config::default();
    for (v, want) in [
        ("OFF", false),
        ("on", true),
        ("0", false),
        ("1", true),
        ("false", false),
        ("TRUE", true),
        (" Off ", false),
    ] {
        c.set("innodb_use_fdatasync", v).unwrap();
        assert_eq!(c.innodb_use_fdatasync, want, "{v}");
    }
    assert_eq!(c.get("innodb_use_fdatasync").unwrap(), "OFF");
    let e = c.set("innodb_adaptive_flushing", "yes").unwrap_err();
    assert_eq!(e.mysql_errno(), 1231);
    assert!(e.to_string().contains("allowed values are ON, OFF"), "{e}");
}

#[test]
fn flush_method_is_case_insensitive_and_refuses_test_settings() {
    let mut c = Config::default();
    for (v, want) in [
        ("o_direct", FlushMethod::ODirect),
        ("O_DSYNC", FlushMethod::ODsync),
        ("O_Direct_No_Fsync", FlushMethod::ODirectNoFsync),
        ("FSYNC", FlushMethod::Fsync),
    ] {
        c.set("innodb_flush_method", v).unwrap();
        assert_eq!(c.innodb_flush_method, want);
        assert_eq!(c.get("innodb_flush_method").unwrap(), want.name());
    }
    let e = c.set("innodb_flush_method", "foo").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Variable 'innodb_flush_method' can't be set to the value of 'foo': \
         allowed values are fsync, O_DSYNC, O_DIRECT, O_DIRECT_NO_FSYNC"
    );
    for v in ["littlesync", "NOSYNC"] {
        let e = c.set("innodb_flush_method", v).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("does not support"), "{msg}");
        assert!(msg.contains("allowed values are fsync, O_DSYNC"), "{msg}");
    }
}

#[test]
fn doublewrite_modes() {
    let mut c = Config::default();
    for (v, want, shown) in [
        ("OFF", DoublewriteMode::Off, "OFF"),
        ("DETECT_AND_RECOVER", DoublewriteMode::On, "ON"),
        ("detect_only", DoublewriteMode::DetectOnly, "DETECT_ONLY"),
        ("0", DoublewriteMode::Off, "OFF"),
        ("true", DoublewriteMode::On, "ON"),
    ] {
        c.set("innodb_doublewrite", v).unwrap();
        assert_eq!(c.innodb_doublewrite, want, "{v}");
        assert_eq!(c.get("innodb_doublewrite").unwrap(), shown);
    }
    let e = c.set("innodb_doublewrite", "sometimes").unwrap_err();
    assert!(
        e.to_string()
            .contains("allowed values are ON, OFF, DETECT_ONLY (also DETECT_AND_RECOVER"),
        "{e}"
    );
    assert_eq!(DoublewriteMode::DetectOnly.to_string(), "DETECT_ONLY");
}

#[test]
fn floats_print_with_six_decimals() {
    let mut c = Config::default();
    c.set("innodb_max_dirty_pages_pct", "75.5").unwrap();
    assert_eq!(c.innodb_max_dirty_pages_pct, 75.5);
    assert_eq!(c.get("innodb_max_dirty_pages_pct").unwrap(), "75.500000");
    c.set("innodb_adaptive_flushing_lwm", "20").unwrap();
    assert_eq!(c.innodb_adaptive_flushing_lwm, 20.0);
    assert_eq!(c.get("innodb_adaptive_flushing_lwm").unwrap(), "20");
}

#[test]
fn paths() {
    let mut c = Config::default();
    assert_eq!(c.doublewrite_dir(), Path::new("./quire-data"));
    c.set("innodb_doublewrite_dir", "/fast/dblwr").unwrap();
    assert_eq!(c.doublewrite_dir(), Path::new("/fast/dblwr"));
    assert_eq!(c.get("innodb_doublewrite_dir").unwrap(), "/fast/dblwr");
    c.set("innodb_doublewrite_dir", "").unwrap();
    assert_eq!(c.innodb_doublewrite_dir, None);
    c.set("datadir", "/srv/q").unwrap();
    assert_eq!(c.doublewrite_dir(), Path::new("/srv/q"));
    let e = c.set("datadir", "").unwrap_err();
    assert!(e.to_string().contains("must not be empty"), "{e}");
}

#[test]
fn unknown_variables_are_error_1193() {
    let mut c = Config::default();
    let e = c.set("innodb_foo", "1").unwrap_err();
    assert_eq!(e.to_string(), "unknown variable 'innodb_foo'");
    assert_eq!(e.mysql_errno(), 1193);
    assert_eq!(e.mysql_message(), "Unknown system variable 'innodb_foo'");
    let e = c.get("Innodb-Foo").unwrap_err();
    assert_eq!(e.to_string(), "unknown variable 'innodb_foo'");
}

// ---------------------------------------------------------- cross checks

#[test]
fn validate_checks_rules_between_variables() {
    let c = Config {
        innodb_io_capacity: 5000,
        ..Config::default()
    };
    let e = c.validate().unwrap_err();
    assert_eq!(
        e.to_string(),
        "Variable 'innodb_io_capacity_max' can't be set to the value of '2000': \
         innodb_io_capacity_max (2000) must be at least innodb_io_capacity (5000)"
    );

    let c = Config {
        innodb_page_size: 4096,
        ..Config::default()
    };
    let e = c.validate().unwrap_err();
    assert!(
        e.to_string()
            .contains("innodb_log_write_ahead_size (8192) must be at most innodb_page_size (4096)"),
        "{e}"
    );

    let c = Config {
        innodb_max_dirty_pages_pct: 5.0,
        ..Config::default()
    };
    let e = c.validate().unwrap_err();
    assert!(
        e.to_string().contains(
            "innodb_max_dirty_pages_pct_lwm (10) must be at most innodb_max_dirty_pages_pct (5)"
        ),
        "{e}"
    );

    let c = Config {
        innodb_max_dirty_pages_pct: 50.0,
        innodb_max_dirty_pages_pct_lwm: 50.0,
        innodb_io_capacity: 2000,
        innodb_page_size: 8192,
        ..Config::default()
    };
    c.validate().expect("equal values are fine");
}

#[test]
fn validate_rechecks_fields_set_directly() {
    for c in [
        Config {
            innodb_page_size: 1000,
            ..Config::default()
        },
        Config {
            innodb_log_write_ahead_size: 1000,
            ..Config::default()
        },
        Config {
            innodb_flush_log_at_trx_commit: 7,
            ..Config::default()
        },
        Config {
            innodb_max_dirty_pages_pct: f64::NAN,
            ..Config::default()
        },
        Config {
            innodb_adaptive_flushing_lwm: 10.5,
            ..Config::default()
        },
        Config {
            datadir: PathBuf::new(),
            ..Config::default()
        },
    ] {
        let e = c.validate().unwrap_err();
        assert_eq!(e.mysql_errno(), 1231, "{e}");
    }
}

#[test]
fn set_global_refuses_read_only_and_inconsistent_values() {
    let mut c = Config::default();
    let e = c.set_global("innodb_page_size", "8192").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Variable 'innodb_page_size' is a read only variable"
    );
    assert_eq!(e.mysql_errno(), 1238);
    let e = c.set_global("innodb-flush-method", "O_DIRECT").unwrap_err();
    assert_eq!(e.mysql_errno(), 1238);
    assert_eq!(
        c.set_global("innodb_nope", "1").unwrap_err().mysql_errno(),
        1193
    );

    c.set_global("innodb_io_capacity", "1000").unwrap();
    assert_eq!(c.innodb_io_capacity, 1000);

    let before = c.clone();
    let e = c.set_global("innodb_io_capacity", "5000").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Variable 'innodb_io_capacity' can't be set to the value of '5000': \
         innodb_io_capacity_max (2000) must be at least innodb_io_capacity (5000)"
    );
    assert_eq!(c, before, "a refused SET GLOBAL changes nothing");
    let e = c.set_global("innodb_max_dirty_pages_pct", "5").unwrap_err();
    assert_eq!(e.variable(), Some("innodb_max_dirty_pages_pct"));
    assert_eq!(c, before);

    c.set_global("innodb_doublewrite", "DETECT_ONLY").unwrap();
    c.set_global("innodb_doublewrite", "DETECT_AND_RECOVER")
        .unwrap();
    assert_eq!(c.innodb_doublewrite, DoublewriteMode::On);
    let e = c.set_global("innodb_doublewrite", "OFF").unwrap_err();
    assert!(e.to_string().contains("needs a restart"), "{e}");
    assert_eq!(c.innodb_doublewrite, DoublewriteMode::On);
}

// ------------------------------------------------------------ command line

#[test]
fn non_variable_arguments_pass_through_in_order() {
    let (c, rest) = parse(&[
        "btree",
        "--keys",
        "100",
        "--innodb-buffer-pool-size=256M",
        "-v",
        "--threads=4",
        "--innodb_flush_method",
        "O_DIRECT",
        "positional",
        "--datadir=/tmp/q",
        "--json",
    ])
    .unwrap();
    assert_eq!(
        rest,
        strings(&[
            "btree",
            "--keys",
            "100",
            "-v",
            "--threads=4",
            "positional",
            "--json"
        ])
    );
    assert_eq!(c.innodb_buffer_pool_size, 256 << 20);
    assert_eq!(c.innodb_flush_method, FlushMethod::ODirect);
    assert_eq!(c.datadir, PathBuf::from("/tmp/q"));
}

#[test]
fn no_arguments_give_the_defaults() {
    let (c, rest) = parse(&[]).unwrap();
    assert_eq!(c, Config::default());
    assert!(rest.is_empty());
}

#[test]
fn booleans_alone_mean_on_and_never_take_the_next_argument() {
    let (c, rest) = parse(&["--innodb-use-fdatasync", "OFF", "--keys", "5"]).unwrap();
    assert!(c.innodb_use_fdatasync);
    assert_eq!(rest, strings(&["OFF", "--keys", "5"]));
    let (c, _) = parse(&["--innodb_use_fdatasync=off"]).unwrap();
    assert!(!c.innodb_use_fdatasync);
    let (c, _) = parse(&["--innodb-doublewrite"]).unwrap();
    assert_eq!(c.innodb_doublewrite, DoublewriteMode::On);
}

#[test]
fn skip_disable_and_enable_prefixes() {
    let (c, rest) = parse(&["--skip-innodb-adaptive-flushing"]).unwrap();
    assert!(!c.innodb_adaptive_flushing);
    assert!(rest.is_empty());
    let (c, _) = parse(&["--skip_innodb_doublewrite"]).unwrap();
    assert_eq!(c.innodb_doublewrite, DoublewriteMode::Off);
    let (c, _) = parse(&[
        "--disable-innodb-adaptive-flushing",
        "--enable-innodb-use-fdatasync",
    ])
    .unwrap();
    assert!(!c.innodb_adaptive_flushing);
    assert!(c.innodb_use_fdatasync);

    let e = parse(&["--skip-innodb-io-capacity"]).unwrap_err();
    assert!(matches!(e, ConfigError::BadOption { .. }), "{e}");
    assert!(e.to_string().contains("only to boolean variables"), "{e}");
    let e = parse(&["--skip-innodb-adaptive-flushing=1"]).unwrap_err();
    assert!(e.to_string().contains("does not take a value"), "{e}");
}

#[test]
fn name_value_as_two_arguments() {
    let (c, rest) = parse(&["--innodb-io-capacity", "500", "--keys", "1"]).unwrap();
    assert_eq!(c.innodb_io_capacity, 500);
    assert_eq!(rest, strings(&["--keys", "1"]));
    let e = parse(&["--keys", "1", "--innodb-io-capacity"]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "option '--innodb-io-capacity': requires a value"
    );
}

#[test]
fn unknown_innodb_options_are_errors() {
    for (arg, name) in [
        ("--innodb-xyz=1", "innodb_xyz"),
        ("--innodb_xyz", "innodb_xyz"),
        ("--skip-innodb-xyz", "innodb_xyz"),
        ("--INNODB-Buffer-Pool=1G", "innodb_buffer_pool"),
        ("--innodbx", "innodbx"),
    ] {
        let e = parse(&["--keys", "1", arg]).unwrap_err();
        assert_eq!(e.to_string(), format!("unknown variable '{name}'"), "{arg}");
    }
}

#[test]
fn loose_options_are_applied_or_dropped() {
    let (c, rest) = parse(&[
        "--loose-innodb-io-capacity=300",
        "--loose-innodb-from-the-future=1",
        "--loose-keys",
        "--loose-skip-innodb-adaptive-flushing",
        "x",
    ])
    .unwrap();
    assert_eq!(c.innodb_io_capacity, 300);
    assert!(!c.innodb_adaptive_flushing);
    assert_eq!(rest, strings(&["x"]));
}

#[test]
fn double_dash_ends_option_processing() {
    let (c, rest) = parse(&[
        "--innodb-io-capacity=300",
        "--",
        "--innodb-io-capacity=400",
        "--innodb-xyz",
    ])
    .unwrap();
    assert_eq!(c.innodb_io_capacity, 300);
    assert_eq!(
        rest,
        strings(&["--", "--innodb-io-capacity=400", "--innodb-xyz"])
    );
}

#[test]
fn later_options_win() {
    let (c, _) = parse(&["--innodb-io-capacity=300", "--innodb_io_capacity=400"]).unwrap();
    assert_eq!(c.innodb_io_capacity, 400);
}

#[test]
fn command_line_errors_name_variable_and_range() {
    let e = parse(&["--innodb-buffer-pool-size=3M"]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Variable 'innodb_buffer_pool_size' can't be set to the value of '3M': \
         allowed range is 5242880 (5M) .. 18446744073709551615"
    );
}

#[test]
fn unset_variables_follow_the_ones_given() {
    // innodb_io_capacity_max: max(2000, 2 * innodb_io_capacity), as MySQL.
    let (c, _) = parse(&["--innodb-io-capacity=5000"]).unwrap();
    assert_eq!(c.innodb_io_capacity_max, 10_000);
    let (c, _) = parse(&["--innodb-io-capacity=300"]).unwrap();
    assert_eq!(c.innodb_io_capacity_max, 2000);
    // Beyond what innodb_io_capacity_max can follow (2^32-1): refused.
    let e = parse(&["--innodb-io-capacity=5000000000"]).unwrap_err();
    assert!(
        e.to_string()
            .contains("innodb_io_capacity_max (4294967295)"),
        "{e}"
    );
    let (c, _) = parse(&["--innodb-io-capacity=5000", "--innodb-io-capacity-max=6000"]).unwrap();
    assert_eq!(c.innodb_io_capacity_max, 6000);
    let e = parse(&["--innodb-io-capacity=5000", "--innodb-io-capacity-max=3000"]).unwrap_err();
    assert!(
        e.to_string()
            .contains("must be at least innodb_io_capacity (5000)"),
        "{e}"
    );

    // innodb_log_write_ahead_size follows a smaller page size...
    let (c, _) = parse(&["--innodb-page-size=4k"]).unwrap();
    assert_eq!(c.innodb_log_write_ahead_size, 4096);
    // ...but two explicit, conflicting values are refused.
    let e = parse(&["--innodb-page-size=4k", "--innodb-log-write-ahead-size=8k"]).unwrap_err();
    assert!(
        e.to_string()
            .contains("must be at most innodb_page_size (4096)"),
        "{e}"
    );

    // innodb_max_dirty_pages_pct_lwm follows a lower innodb_max_dirty_pages_pct.
    let (c, _) = parse(&["--innodb-max-dirty-pages-pct=5"]).unwrap();
    assert_eq!(c.innodb_max_dirty_pages_pct_lwm, 5.0);
    let e = parse(&[
        "--innodb-max-dirty-pages-pct=5",
        "--innodb-max-dirty-pages-pct-lwm=6",
    ])
    .unwrap_err();
    assert_eq!(e.variable(), Some("innodb_max_dirty_pages_pct_lwm"));
}

// -------------------------------------------------------------- my.cnf

const SAMPLE_CNF: &str = r#"
# A my.cnf as people write them.
; semicolon comment

[client]
port = 3306
innodb_buffer_pool_size = not even looked at

[mysqld]
innodb_buffer_pool_size = 64M   # trailing comment
innodb-flush-method=O_DIRECT
datadir = "/data/my db#1"
innodb_doublewrite_dir = '/fast/dblwr'
innodb_use_fdatasync
skip-innodb-adaptive-flushing
loose-innodb_from_the_future = 1
  innodb_io_capacity   =   400

[mysqld_safe]
log-error = /var/log/mysqld.log

[SERVER]
innodb_lock_wait_timeout = 120
"#;

#[test]
fn defaults_file_with_comments_quotes_and_sections() {
    let dir = Scratch::new();
    let path = dir.write("my.cnf", SAMPLE_CNF);
    let c = parse_defaults_file(&path).unwrap();
    assert_eq!(c.innodb_buffer_pool_size, 64 << 20);
    assert_eq!(c.innodb_flush_method, FlushMethod::ODirect);
    assert_eq!(c.datadir, PathBuf::from("/data/my db#1"));
    assert_eq!(c.innodb_doublewrite_dir, Some(PathBuf::from("/fast/dblwr")));
    assert!(c.innodb_use_fdatasync);
    assert!(!c.innodb_adaptive_flushing);
    assert_eq!(c.innodb_io_capacity, 400);
    assert_eq!(c.innodb_io_capacity_max, 2000);
    assert_eq!(c.innodb_lock_wait_timeout, 120);
    assert_eq!(
        c.innodb_page_size, 16384,
        "untouched variables keep defaults"
    );
}

#[test]
fn command_line_overrides_defaults_file_wherever_it_appears() {
    let dir = Scratch::new();
    let path = dir.write(
        "my.cnf",
        "[mysqld]\ninnodb_io_capacity = 300\ninnodb_lock_wait_timeout = 7\n",
    );
    let file = path.display().to_string();
    for args in [
        vec![
            "--innodb-io-capacity=700".to_string(),
            format!("--defaults-file={file}"),
        ],
        vec![
            "--defaults-file".to_string(),
            file.clone(),
            "--innodb-io-capacity=700".to_string(),
        ],
    ] {
        let (c, rest) = parse_args(args.clone()).unwrap();
        assert_eq!(c.innodb_io_capacity, 700, "{args:?}");
        assert_eq!(c.innodb_lock_wait_timeout, 7, "{args:?}");
        assert!(rest.is_empty(), "{rest:?}");
    }
}

#[test]
fn defaults_file_errors_name_file_and_line() {
    let dir = Scratch::new();
    let path = dir.write("my.cnf", "[mysqld]\n# fine\nno_such_knob = 3306\n");
    let e = parse_defaults_file(&path).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{}:3: unknown variable 'no_such_knob'", path.display())
    );
    assert_eq!(e.mysql_errno(), 1193);
    assert_eq!(e.variable(), Some("no_such_knob"));

    let path = dir.write("bad.cnf", "[mysqld]\n\ninnodb_page_size = 12k\n");
    let e = parse_defaults_file(&path).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:3: Variable 'innodb_page_size' can't be set to the value of '12k': \
             allowed values are powers of 2 from 4096 (4K) to 65536 (64K)",
            path.display()
        )
    );
    assert_eq!(e.mysql_errno(), 1231);

    let path = dir.write("skip.cnf", "[mysqld]\nskip-innodb-xyz\n");
    let e = parse_defaults_file(&path).unwrap_err();
    assert!(
        e.to_string().ends_with(":2: unknown variable 'innodb_xyz'"),
        "{e}"
    );

    let path = dir.write("bare.cnf", "[mysqld]\ninnodb_io_capacity\n");
    let e = parse_defaults_file(&path).unwrap_err();
    assert!(
        e.to_string()
            .contains(":2: option 'innodb_io_capacity': requires a value"),
        "{e}"
    );

    let path = dir.write("nosection.cnf", "# hi\ninnodb_io_capacity = 300\n");
    let e = parse_defaults_file(&path).unwrap_err();
    assert!(
        e.to_string()
            .contains(":2: option before any [section] header"),
        "{e}"
    );

    let path = dir.write("header.cnf", "[mysqld\n");
    let e = parse_defaults_file(&path).unwrap_err();
    assert!(
        e.to_string()
            .contains(":1: section header without a closing ']'"),
        "{e}"
    );

    let path = dir.write("directive.cnf", "!source x.cnf\n");
    let e = parse_defaults_file(&path).unwrap_err();
    assert!(
        e.to_string().contains(":1: unknown directive '!source'"),
        "{e}"
    );

    let e = parse_defaults_file(&dir.path().join("missing.cnf")).unwrap_err();
    assert!(matches!(e, ConfigError::Io { .. }), "{e}");
    assert!(e.to_string().contains("missing.cnf"), "{e}");
}

#[test]
fn defaults_file_errors_surface_through_parse_args() {
    let e = parse(&["--defaults-file=/nonexistent/quire/my.cnf"]).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("cannot read defaults file '/nonexistent/quire/my.cnf'"),
        "{e}"
    );
    let e = parse(&["--keys", "--defaults-file"]).unwrap_err();
    assert_eq!(e.to_string(), "option '--defaults-file': requires a value");
}

#[test]
fn include_and_includedir() {
    let dir = Scratch::new();
    dir.write("extra.cnf", "[mysqld]\ninnodb_io_capacity = 300\n");
    dir.write(
        "conf.d/10-a.cnf",
        "[mysqld]\ninnodb_lock_wait_timeout = 10\ninnodb_flush_neighbors = 1\n",
    );
    dir.write(
        "conf.d/20-b.cnf",
        "[server]\ninnodb_lock_wait_timeout = 20\n",
    );
    dir.write("conf.d/README.txt", "[mysqld]\nnot_a_variable = 1\n");
    let main = dir.write(
        "my.cnf",
        "[mysqld]\ninnodb_io_capacity = 200\n!include extra.cnf\n!includedir conf.d\n\
         [mysqld]\ninnodb_flush_neighbors = 2\n",
    );
    let c = parse_defaults_file(&main).unwrap();
    assert_eq!(
        c.innodb_io_capacity, 300,
        "included after the first setting"
    );
    assert_eq!(
        c.innodb_lock_wait_timeout, 20,
        "files of a directory in name order"
    );
    assert_eq!(c.innodb_flush_neighbors, 2, "later lines win");

    let looping = dir.write("loop.cnf", "!include loop.cnf\n");
    let e = parse_defaults_file(&looping).unwrap_err();
    assert!(e.to_string().contains("nested more than 10 deep"), "{e}");

    let missing = dir.write("missing-include.cnf", "!include nowhere.cnf\n");
    let e = parse_defaults_file(&missing).unwrap_err();
    assert!(e.to_string().contains("nowhere.cnf"), "{e}");
}

#[test]
fn error_numbers_of_file_level_errors() {
    let e = ConfigError::Syntax {
        file: PathBuf::from("x.cnf"),
        line: 1,
        message: "m".into(),
    };
    assert_eq!(e.mysql_errno(), ER_UNKNOWN_ERROR);
    let e = ConfigError::InFile {
        file: PathBuf::from("x.cnf"),
        line: 2,
        error: Box::new(ConfigError::ReadOnly {
            name: "innodb_page_size".into(),
        }),
    };
    assert_eq!(e.mysql_errno(), ER_INCORRECT_GLOBAL_LOCAL_VAR);
    assert_eq!(
        e.mysql_message(),
        "Variable 'innodb_page_size' is a read only variable"
    );
}
