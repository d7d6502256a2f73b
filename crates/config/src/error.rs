//! [`ConfigError`]: every way a setting can be refused.

use std::path::PathBuf;

/// MySQL `ER_UNKNOWN_ERROR`.
pub const ER_UNKNOWN_ERROR: u16 = 1105;
/// MySQL `ER_UNKNOWN_SYSTEM_VARIABLE`: "Unknown system variable '%s'".
pub const ER_UNKNOWN_SYSTEM_VARIABLE: u16 = 1193;
/// MySQL `ER_WRONG_VALUE_FOR_VAR`: "Variable '%s' can't be set to the value of '%s'".
pub const ER_WRONG_VALUE_FOR_VAR: u16 = 1231;
/// MySQL `ER_WRONG_TYPE_FOR_VAR`: "Incorrect argument type to variable '%s'".
pub const ER_WRONG_TYPE_FOR_VAR: u16 = 1232;
/// MySQL `ER_INCORRECT_GLOBAL_LOCAL_VAR`: "Variable '%s' is a %s variable".
pub const ER_INCORRECT_GLOBAL_LOCAL_VAR: u16 = 1238;

/// A setting that was refused. Every variant names the variable (or the
/// option, or the file and line) and, where it applies, what would have
/// been accepted.
///
/// `Display` gives the full explanation (for startup errors and logs);
/// [`ConfigError::mysql_errno`] and [`ConfigError::mysql_message`] give
/// what a MySQL server would send to a client for the same mistake.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// No such variable. Worded as `mysqld` words it at startup; the SQL
    /// form ("Unknown system variable") is [`ConfigError::mysql_message`].
    #[error("unknown variable '{name}'")]
    UnknownVariable { name: String },

    /// The value has the right type but is out of range, not one of the
    /// allowed values, or conflicts with another variable.
    #[error("Variable '{name}' can't be set to the value of '{value}': {reason}")]
    WrongValue {
        name: String,
        value: String,
        reason: String,
    },

    /// The value is not even of the variable's type (`abc` for a number).
    #[error("Incorrect argument type to variable '{name}': '{value}' is not {expected}")]
    WrongType {
        name: String,
        value: String,
        expected: &'static str,
    },

    /// `SET GLOBAL` on a variable that can only be set at startup.
    #[error("Variable '{name}' is a read only variable")]
    ReadOnly { name: String },

    /// A malformed option: `--skip-` on a non-boolean, a missing value.
    #[error("option '{option}': {message}")]
    BadOption { option: String, message: String },

    /// A defaults file could not be read.
    #[error("cannot read defaults file '{}': {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },

    /// A defaults file is malformed.
    #[error("{}:{line}: {message}", file.display())]
    Syntax {
        file: PathBuf,
        line: usize,
        message: String,
    },

    /// A setting in a defaults file was refused; `error` says why.
    #[error("{}:{line}: {error}", file.display())]
    InFile {
        file: PathBuf,
        line: usize,
        error: Box<ConfigError>,
    },
}

impl ConfigError {
    /// The MySQL error number for this error, for the SQL layer:
    /// 1193 (unknown variable), 1231 (wrong value, including conflicts
    /// with other variables and malformed options), 1232 (wrong type),
    /// 1238 (read-only). Errors that only arise while reading files at
    /// startup report 1105 (`ER_UNKNOWN_ERROR`). An error inside a file
    /// reports the number of the error it wraps.
    pub fn mysql_errno(&self) -> u16 {
        match self {
            ConfigError::UnknownVariable { .. } => ER_UNKNOWN_SYSTEM_VARIABLE,
            ConfigError::WrongValue { .. } | ConfigError::BadOption { .. } => {
                ER_WRONG_VALUE_FOR_VAR
            }
            ConfigError::WrongType { .. } => ER_WRONG_TYPE_FOR_VAR,
            ConfigError::ReadOnly { .. } => ER_INCORRECT_GLOBAL_LOCAL_VAR,
            ConfigError::Io { .. } | ConfigError::Syntax { .. } => ER_UNKNOWN_ERROR,
            ConfigError::InFile { error, .. } => error.mysql_errno(),
        }
    }

    /// The message exactly as MySQL words it for [`mysql_errno`]
    /// (without our explanation of the allowed values), e.g.
    /// `Variable 'innodb_io_capacity' can't be set to the value of '5'`.
    ///
    /// [`mysql_errno`]: ConfigError::mysql_errno
    pub fn mysql_message(&self) -> String {
        match self {
            ConfigError::UnknownVariable { name } => format!("Unknown system variable '{name}'"),
            ConfigError::WrongValue { name, value, .. } => {
                format!("Variable '{name}' can't be set to the value of '{value}'")
            }
            ConfigError::WrongType { name, .. } => {
                format!("Incorrect argument type to variable '{name}'")
            }
            ConfigError::ReadOnly { name } => format!("Variable '{name}' is a read only variable"),
            ConfigError::InFile { error, .. } => error.mysql_message(),
            other => other.to_string(),
        }
    }

    /// The variable this error is about, when there is one.
    pub fn variable(&self) -> Option<&str> {
        match self {
            ConfigError::UnknownVariable { name }
            | ConfigError::WrongValue { name, .. }
            | ConfigError::WrongType { name, .. }
            | ConfigError::ReadOnly { name } => Some(name),
            ConfigError::InFile { error, .. } => error.variable(),
            _ => None,
        }
    }
}
