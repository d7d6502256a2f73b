//! Command-line options, and the option grammar shared with `my.cnf`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::registry::{derived_io_capacity_max, normalize_name, var_info, VarInfo};
use crate::{cnf, Config, ConfigError};

/// What an option name (normalized, without `--`) refers to.
pub(crate) enum Resolved {
    /// A variable. `switch` is `Some(on)` for `--skip-`/`--disable-`
    /// (off) and `--enable-` (on) forms.
    Var {
        info: &'static VarInfo,
        switch: Option<bool>,
    },
    /// `loose-` and not a variable we know: ignored, as MySQL does.
    Ignored,
    /// In our namespace (`innodb...`) but unknown: an error.
    Unknown(String),
    /// Not ours at all: left for the caller's parser.
    Foreign,
}

const SWITCHES: [(&str, bool); 3] = [("skip_", false), ("disable_", false), ("enable_", true)];

/// Resolves a normalized option name: `loose_` prefix first, then the
/// variable itself, then `skip_`/`disable_`/`enable_` + a variable.
pub(crate) fn resolve(norm: &str) -> Resolved {
    let (loose, name) = match norm.strip_prefix("loose_") {
        Some(rest) => (true, rest),
        None => (false, norm),
    };
    if let Some(info) = var_info(name) {
        return Resolved::Var { info, switch: None };
    }
    for (prefix, on) in SWITCHES {
        if let Some(info) = name.strip_prefix(prefix).and_then(var_info) {
            return Resolved::Var {
                info,
                switch: Some(on),
            };
        }
    }
    if loose {
        return Resolved::Ignored;
    }
    let base = SWITCHES
        .iter()
        .find_map(|(prefix, _)| name.strip_prefix(prefix))
        .unwrap_or(name);
    if base.starts_with("innodb") {
        Resolved::Unknown(base.to_string())
    } else {
        Resolved::Foreign
    }
}

/// The value a variable gets from one option, or why the option is
/// malformed. `value` is the text after `=`, if any; `None` for a
/// non-boolean means the caller must find the value elsewhere.
pub(crate) fn option_value(
    info: &VarInfo,
    switch: Option<bool>,
    value: Option<&str>,
    option: &str,
) -> Result<Option<String>, ConfigError> {
    match (switch, value) {
        (Some(on), None) => {
            if info.kind.is_boolean_like() {
                Ok(Some(if on { "ON" } else { "OFF" }.to_string()))
            } else {
                Err(ConfigError::BadOption {
                    option: option.to_string(),
                    message: format!(
                        "the skip-/enable-/disable- prefixes apply only to boolean \
                         variables, and '{}' is not one",
                        info.name
                    ),
                })
            }
        }
        (Some(_), Some(_)) => Err(ConfigError::BadOption {
            option: option.to_string(),
            message: "this form does not take a value".to_string(),
        }),
        (None, Some(v)) => Ok(Some(v.to_string())),
        (None, None) if info.kind.is_boolean_like() => Ok(Some("ON".to_string())),
        (None, None) => Ok(None),
    }
}

/// A configuration being assembled, remembering which variables were
/// given explicitly (for defaults that depend on other variables).
pub(crate) struct Loader {
    pub(crate) config: Config,
    explicit: HashSet<&'static str>,
}

impl Loader {
    pub(crate) fn new() -> Self {
        Loader {
            config: Config::default(),
            explicit: HashSet::new(),
        }
    }

    pub(crate) fn apply(&mut self, info: &'static VarInfo, value: &str) -> Result<(), ConfigError> {
        info.apply(&mut self.config, value)?;
        self.explicit.insert(info.name);
        Ok(())
    }

    /// Fills in the defaults that depend on other variables, then
    /// validates. A variable that was not given follows the ones that
    /// were, as MySQL's own startup code makes it follow them:
    ///
    /// * `innodb_io_capacity_max` = `max(2000, 2 * innodb_io_capacity)`;
    /// * `innodb_log_write_ahead_size` is lowered to `innodb_page_size`;
    /// * `innodb_max_dirty_pages_pct_lwm` is lowered to
    ///   `innodb_max_dirty_pages_pct`.
    ///
    /// When both sides of such a rule were given and conflict, validation
    /// refuses them.
    pub(crate) fn finish(mut self) -> Result<Config, ConfigError> {
        let c = &mut self.config;
        if !self.explicit.contains("innodb_io_capacity_max") {
            c.innodb_io_capacity_max = derived_io_capacity_max(c.innodb_io_capacity);
        }
        if !self.explicit.contains("innodb_log_write_ahead_size") {
            c.innodb_log_write_ahead_size = c.innodb_log_write_ahead_size.min(c.innodb_page_size);
        }
        if !self.explicit.contains("innodb_max_dirty_pages_pct_lwm") {
            c.innodb_max_dirty_pages_pct_lwm = c
                .innodb_max_dirty_pages_pct_lwm
                .min(c.innodb_max_dirty_pages_pct);
        }
        self.config.validate()?;
        Ok(self.config)
    }
}

/// Reads the `[mysqld]` and `[server]` sections of a `my.cnf`-style file
/// over the defaults, applies MySQL's derived defaults and validates.
pub fn parse_defaults_file(path: &Path) -> Result<Config, ConfigError> {
    let mut loader = Loader::new();
    cnf::load(path, &mut loader)?;
    loader.finish()
}

/// Picks the server variables out of a command line.
///
/// `args` are the arguments after the subcommand, e.g. for
/// `quire bench btree --keys 100 --innodb-buffer-pool-size=256M
/// --defaults-file=my.cnf`, everything from `--keys` on. Returns the
/// configuration and, in their original order, the arguments that are
/// not ours, for the caller's own parser (clap).
///
/// * `--defaults-file=F` or `--defaults-file F` reads F's `[mysqld]` and
///   `[server]` sections first; variables on the command line override
///   the file wherever they appear. If given twice, the last one counts.
/// * `--NAME=VALUE` and `--NAME VALUE` set a variable (`-` or `_`, any
///   case). For booleans (and `innodb_doublewrite`), `--NAME` alone means
///   ON and never takes the next argument as its value; `--skip-NAME`
///   and `--disable-NAME` mean OFF, `--enable-NAME` ON.
/// * `--loose-NAME...` sets NAME if it is a variable and is dropped
///   silently otherwise (an unknown loose option never takes the next
///   argument).
/// * An unknown option in our namespace (`--innodb...`,
///   `--skip-innodb...`) is an error, `unknown variable 'innodb_xyz'`.
///   Any other argument is passed through untouched, as is everything
///   from a bare `--` on (the `--` included).
///
/// Finally, variables that were not given but depend on ones that were
/// follow them as in MySQL (`innodb_io_capacity_max` becomes
/// `max(2000, 2 * innodb_io_capacity)`; `innodb_log_write_ahead_size`
/// and `innodb_max_dirty_pages_pct_lwm` are lowered to
/// `innodb_page_size` and `innodb_max_dirty_pages_pct` if above them),
/// and the result is [validated](Config::validate).
pub fn parse_args<I: IntoIterator<Item = String>>(
    args: I,
) -> Result<(Config, Vec<String>), ConfigError> {
    let mut args = args.into_iter();
    let mut rest = Vec::new();
    let mut defaults_file: Option<PathBuf> = None;
    let mut settings: Vec<(&'static VarInfo, String)> = Vec::new();

    while let Some(arg) = args.next() {
        if arg == "--" {
            rest.push(arg);
            rest.extend(args.by_ref());
            break;
        }
        let Some(body) = arg.strip_prefix("--") else {
            rest.push(arg);
            continue;
        };
        let (raw_name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        let norm = normalize_name(raw_name);
        if norm == "defaults_file" {
            let path = match inline {
                Some(v) => v.to_string(),
                None => args.next().ok_or_else(|| missing_value(&arg))?,
            };
            if path.is_empty() {
                return Err(missing_value(&arg));
            }
            defaults_file = Some(PathBuf::from(path));
            continue;
        }
        match resolve(&norm) {
            Resolved::Var { info, switch } => {
                let value = match option_value(info, switch, inline, &arg)? {
                    Some(v) => v,
                    None => args.next().ok_or_else(|| missing_value(&arg))?,
                };
                settings.push((info, value));
            }
            Resolved::Ignored => {}
            Resolved::Unknown(name) => return Err(ConfigError::UnknownVariable { name }),
            Resolved::Foreign => rest.push(arg),
        }
    }

    let mut loader = Loader::new();
    if let Some(path) = &defaults_file {
        cnf::load(path, &mut loader)?;
    }
    for (info, value) in settings {
        loader.apply(info, &value)?;
    }
    Ok((loader.finish()?, rest))
}

fn missing_value(option: &str) -> ConfigError {
    ConfigError::BadOption {
        option: option.to_string(),
        message: "requires a value".to_string(),
    }
}
