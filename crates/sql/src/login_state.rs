//! # What the login left in a session: TLS facts and sandbox mode
//!
//! The server authenticates; the session only needs to know two things
//! about how that went:
//!
//! * the TLS protocol and cipher, shown as the session status variables
//!   `Ssl_version` and `Ssl_cipher` (empty strings on an unencrypted
//!   connection, as in MySQL);
//! * whether the account's password has expired. Then the session is in
//!   MySQL's *sandbox mode*: only `ALTER USER`, `SET PASSWORD` and `SET`
//!   run; everything else is error 1820 until the session sets its own
//!   password, which ends sandbox mode at once (no reconnect needed).

use quire_engine::EngineError;

use crate::account::{AccountCmd, Me, UserSpec};
use crate::parse::Command;
use crate::SqlResult;

#[derive(Debug, Clone, Default)]
pub(crate) struct LoginState {
    /// `(Ssl_version, Ssl_cipher)`.
    pub tls: Option<(String, String)>,
    pub password_expired: bool,
}

impl LoginState {
    /// The status rows plus `Ssl_cipher` / `Ssl_version`, sorted again.
    pub fn with_status(&self, mut rows: Vec<(String, String)>) -> Vec<(String, String)> {
        let (version, cipher) = self.tls.clone().unwrap_or_default();
        rows.retain(|(k, _)| k != "Ssl_cipher" && k != "Ssl_version");
        rows.push(("Ssl_cipher".into(), cipher));
        rows.push(("Ssl_version".into(), version));
        rows.sort_by_key(|a| a.0.to_ascii_lowercase());
        rows
    }
}

/// ER_MUST_CHANGE_PASSWORD.
pub(crate) fn must_change_password() -> EngineError {
    EngineError::new(
        1820,
        "HY000",
        "You must reset your password using ALTER USER statement before executing this statement.",
    )
}

/// In sandbox mode: may `cmd` run?
pub(crate) fn sandbox_check(cmd: &Command) -> SqlResult<()> {
    match cmd {
        Command::Set(_) | Command::Empty => Ok(()),
        Command::Account(a)
            if matches!(
                **a,
                AccountCmd::Alter { .. } | AccountCmd::SetPassword { .. }
            ) =>
        {
            Ok(())
        }
        _ => Err(must_change_password()),
    }
}

/// Whether `cmd` (which succeeded) set the session's own password.
pub(crate) fn resets_own_password(cmd: &AccountCmd, me: &Me) -> bool {
    let own = |u: &UserSpec| match u {
        UserSpec::Current => true,
        UserSpec::Named { user, host } => user == me.user && host.eq_ignore_ascii_case(me.host),
    };
    match cmd {
        AccountCmd::SetPassword { user, .. } => own(user),
        AccountCmd::Alter { users, auth, .. } => users
            .iter()
            .zip(auth)
            .any(|((u, _), a)| a.identified && own(u)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssl_rows_are_added_in_order() {
        let mut s = LoginState::default();
        let rows = s.with_status(vec![
            ("Aborted_clients".into(), "0".into()),
            ("Uptime".into(), "1".into()),
        ]);
        let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(
            names,
            ["Aborted_clients", "Ssl_cipher", "Ssl_version", "Uptime"]
        );
        assert_eq!(rows[1].1, "");
        s.tls = Some(("TLSv1.3".into(), "TLS_AES_256_GCM_SHA384".into()));
        let rows = s.with_status(rows);
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[1].1, "TLS_AES_256_GCM_SHA384");
        assert_eq!(rows[2].1, "TLSv1.3");
    }
}
