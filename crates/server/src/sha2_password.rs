//! # `caching_sha2_password`: the stored hash, fast and full authentication
//!
//! MySQL 8.0's default authentication method, as quire implements it.
//!
//! ## What is stored
//!
//! `mysql.user.authentication_string` holds a SHA256-crypt hash (Ulrich
//! Drepper's `$5$` scheme) in MySQL's framing:
//!
//! ```text
//!   $A$005$<20-byte salt><43 characters of hash>        70 bytes
//!    |  |
//!    |  rounds / 1000, three digits (5000 rounds)
//!    digest type A = SHA-256
//! ```
//!
//! MySQL's salt is 20 random bytes with the top bit, NUL and `$` cleared
//! (so it may hold control characters); quire draws 20 *printable* bytes
//! (no `$`), which stay inside that set, so the strings load on either
//! side. The hash is the standard SHA256-crypt with a 20-byte salt (the
//! reference algorithm caps salts at 16; MySQL does not, and neither does
//! [`sha256_crypt`]).
//!
//! ## The exchange
//!
//! ```text
//!   server                                         client
//!     |-- Handshake V10 (20-byte nonce) ------------->|
//!     |<-- XOR(SHA256(pw), SHA256(SHA256(SHA256(pw)) ++ nonce))   (32 bytes)
//!     |   cache has SHA256(SHA256(pw)) for the account?
//!     |     yes, and the scramble matches:
//!     |-- 0x01 0x03 (fast auth success) -------------->|
//!     |-- OK ------------------------------------------>|
//!     |     no:
//!     |-- 0x01 0x04 (perform full authentication) ---->|
//!     |   TLS or Unix socket:
//!     |<-- password NUL (cleartext) --------------------|
//!     |   plain TCP:
//!     |<-- 0x02 (request public key) -------------------|
//!     |-- 0x01 + PEM public key ----------------------->|
//!     |<-- RSA-OAEP(SHA-1)( (password NUL) XOR nonce ) -|
//!     |   verify against the stored SHA256-crypt hash; on success the
//!     |   cache learns SHA256(SHA256(pw)) for the next fast login
//!     |-- OK | ERR 1045 ------------------------------->|
//! ```
//!
//! The cache ([`Sha2Cache`]) lives in memory only: a restart, `FLUSH
//! PRIVILEGES`, a password change or dropping the account empties the
//! account's entry, and its next login takes the full path again, as in
//! MySQL. An empty password is an empty answer (or one NUL byte).
//!
//! ## RSA keys
//!
//! With `caching_sha2_password_auto_generate_rsa_keys` (ON by default) and
//! no `private_key.pem`/`public_key.pem` in the data directory, the server
//! creates a 2048-bit pair there at start (PKCS#8 private key, mode 0600;
//! SubjectPublicKeyInfo public key, the form every client parses). OAEP
//! with SHA-1 is what libmysqlclient, PyMySQL and Connector/Python use.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;
use sha2::{Digest, Sha256};

/// The plugin's name.
pub const PLUGIN: &str = "caching_sha2_password";
/// Rounds of SHA256-crypt MySQL uses (`$A$005$`).
pub const ROUNDS: u32 = 5000;
/// Salt length in the stored string.
pub const SALT_LEN: usize = 20;
/// Length of the stored string.
pub const STORED_LEN: usize = 7 + SALT_LEN + 43;

/// Server → client "more data" statuses.
pub const FAST_AUTH_SUCCESS: u8 = 3;
pub const PERFORM_FULL_AUTH: u8 = 4;
/// Client → server: send me the public key.
pub const REQUEST_PUBLIC_KEY: u8 = 2;

pub fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

const ITOA64: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// SHA256-crypt (Drepper) of `password` with `salt` and `rounds`: the 43
/// characters after the last `$`.
pub fn sha256_crypt(password: &[u8], salt: &[u8], rounds: u32) -> String {
    let p = password;
    let s = salt;
    let b = sha256(&[p, s, p]);
    let mut a = Sha256::new();
    a.update(p);
    a.update(s);
    let mut n = p.len();
    while n > 32 {
        a.update(b);
        n -= 32;
    }
    a.update(&b[..n]);
    let mut n = p.len();
    while n > 0 {
        if n & 1 == 1 {
            a.update(b);
        } else {
            a.update(p);
        }
        n >>= 1;
    }
    let mut a: [u8; 32] = a.finalize().into();
    let mut dp = Sha256::new();
    for _ in 0..p.len() {
        dp.update(p);
    }
    let dp: [u8; 32] = dp.finalize().into();
    let p_seq: Vec<u8> = (0..p.len()).map(|i| dp[i % 32]).collect();
    let mut ds = Sha256::new();
    for _ in 0..16 + a[0] as usize {
        ds.update(s);
    }
    let ds: [u8; 32] = ds.finalize().into();
    let s_seq: Vec<u8> = (0..s.len()).map(|i| ds[i % 32]).collect();
    for i in 0..rounds {
        let mut c = Sha256::new();
        if i & 1 == 1 {
            c.update(&p_seq);
        } else {
            c.update(a);
        }
        if i % 3 != 0 {
            c.update(&s_seq);
        }
        if i % 7 != 0 {
            c.update(&p_seq);
        }
        if i & 1 == 1 {
            c.update(a);
        } else {
            c.update(&p_seq);
        }
        a = c.finalize().into();
    }
    let mut out = String::with_capacity(43);
    let mut b64 = |b2: u8, b1: u8, b0: u8, n: usize| {
        let mut w = (u32::from(b2) << 16) | (u32::from(b1) << 8) | u32::from(b0);
        for _ in 0..n {
            out.push(ITOA64[(w & 0x3f) as usize] as char);
            w >>= 6;
        }
    };
    for (x, y, z) in [
        (0, 10, 20),
        (21, 1, 11),
        (12, 22, 2),
        (3, 13, 23),
        (24, 4, 14),
        (15, 25, 5),
        (6, 16, 26),
        (27, 7, 17),
        (18, 28, 8),
        (9, 19, 29),
    ] {
        b64(a[x], a[y], a[z], 4);
    }
    b64(0, a[31], a[30], 3);
    out
}

/// The stored form for `password` with a new random salt.
pub fn hash_password(password: &[u8]) -> String {
    let salt = crate::auth::new_scramble();
    stored_with_salt(password, &salt)
}

fn stored_with_salt(password: &[u8], salt: &[u8]) -> String {
    let mut s = String::with_capacity(STORED_LEN);
    s.push_str(&format!("$A${:03X}$", ROUNDS / 1000));
    s.push_str(&String::from_utf8_lossy(salt));
    s.push_str(&sha256_crypt(password, salt, ROUNDS));
    s
}

/// Whether `stored` (MySQL's `$A$005$...` form) is well formed.
pub fn is_valid_stored(stored: &str) -> bool {
    parse_stored(stored.as_bytes()).is_some()
}

fn parse_stored(b: &[u8]) -> Option<(u32, &[u8], &[u8])> {
    if b.len() != STORED_LEN || !b.starts_with(b"$A$") || b[6] != b'$' {
        return None;
    }
    let digits = std::str::from_utf8(&b[3..6]).ok()?;
    let rounds = u32::from_str_radix(digits, 16).ok()?.checked_mul(1000)?;
    if rounds == 0 || rounds > 0xFFF * 1000 {
        return None;
    }
    Some((rounds, &b[7..7 + SALT_LEN], &b[7 + SALT_LEN..]))
}

/// Full authentication: does `password` match `stored`?
pub fn check_password(stored: &str, password: &[u8]) -> bool {
    match parse_stored(stored.as_bytes()) {
        Some((rounds, salt, hash)) => sha256_crypt(password, salt, rounds).as_bytes() == hash,
        None => false,
    }
}

/// What the fast path keeps per account: `SHA256(SHA256(password))`.
pub fn fast_digest(password: &[u8]) -> [u8; 32] {
    sha256(&[&sha256(&[password])])
}

/// The client's scramble for `password` and `nonce`.
pub fn scramble(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let s1 = sha256(&[password]);
    let s2 = sha256(&[&s1]);
    let m = sha256(&[&s2, nonce]);
    s1.iter().zip(m.iter()).map(|(a, b)| a ^ b).collect()
}

/// The fast path: does `token` prove the password whose fast digest is
/// `digest`?
pub fn check_scramble(digest: &[u8; 32], nonce: &[u8], token: &[u8]) -> bool {
    if token.len() != 32 {
        return false;
    }
    let m = sha256(&[digest, nonce]);
    let mut s1 = [0u8; 32];
    for i in 0..32 {
        s1[i] = token[i] ^ m[i];
    }
    &sha256(&[&s1]) == digest
}

/// The in-memory cache of fast digests, per `(user, host pattern)`.
#[derive(Debug, Clone, Default)]
pub struct Sha2Cache(Arc<Mutex<DigestMap>>);

/// `(user, host pattern)` → `SHA256(SHA256(password))`.
type DigestMap = HashMap<(String, String), [u8; 32]>;

impl Sha2Cache {
    pub fn get(&self, user: &str, host: &str) -> Option<[u8; 32]> {
        self.0
            .lock()
            .get(&(user.to_string(), host.to_string()))
            .copied()
    }
    pub fn put(&self, user: &str, host: &str, digest: [u8; 32]) {
        self.0
            .lock()
            .insert((user.to_string(), host.to_string()), digest);
    }
    pub fn forget(&self, user: &str, host: &str) {
        self.0.lock().remove(&(user.to_string(), host.to_string()));
    }
    pub fn clear(&self) {
        self.0.lock().clear();
    }
    pub fn len(&self) -> usize {
        self.0.lock().len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The server's RSA pair for the password exchange over plain TCP.
pub struct RsaKeys {
    private: rsa::PrivateKey,
    /// SubjectPublicKeyInfo PEM, sent to clients.
    pub public_pem: String,
}

impl std::fmt::Debug for RsaKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RsaKeys").finish_non_exhaustive()
    }
}

pub const PRIVATE_KEY_PEM: &str = "private_key.pem";
pub const PUBLIC_KEY_PEM: &str = "public_key.pem";

impl RsaKeys {
    /// Loads `private_key.pem`/`public_key.pem` from `dir`, generating
    /// them first when both are missing and `auto_generate` is on.
    /// `Ok(None)`: no keys and none to be made (the RSA exchange is then
    /// refused; TLS still works).
    pub fn load_or_generate(dir: &Path, auto_generate: bool) -> Result<Option<RsaKeys>, String> {
        use rsa::pkcs8::{DecodePrivateKey, EncodePrivateKey, EncodePublicKey, LineEnding};
        let priv_path = dir.join(PRIVATE_KEY_PEM);
        let pub_path = dir.join(PUBLIC_KEY_PEM);
        match (priv_path.exists(), pub_path.exists()) {
            (true, true) => {
                let text = std::fs::read_to_string(&priv_path)
                    .map_err(|e| format!("{}: {e}", priv_path.display()))?;
                let private = rsa::PrivateKey::from_pkcs8_pem(&text)
                    .map_err(|e| format!("{}: {e}", priv_path.display()))?;
                let public_pem = std::fs::read_to_string(&pub_path)
                    .map_err(|e| format!("{}: {e}", pub_path.display()))?;
                Ok(Some(RsaKeys {
                    private,
                    public_pem,
                }))
            }
            (false, false) if auto_generate => {
                use rsa::Generate;
                let private = rsa::PrivateKey::try_generate()
                    .map_err(|e| format!("generating the RSA key pair: {e:?}"))?;
                let priv_text = private
                    .to_pkcs8_pem(LineEnding::LF)
                    .map_err(|e| format!("encoding the RSA private key: {e}"))?;
                let public_pem = private
                    .to_public_key()
                    .to_public_key_pem(LineEnding::LF)
                    .map_err(|e| format!("encoding the RSA public key: {e}"))?;
                write_new(&priv_path, priv_text.as_bytes(), true)?;
                write_new(&pub_path, public_pem.as_bytes(), false)?;
                Ok(Some(RsaKeys {
                    private,
                    public_pem,
                }))
            }
            (false, false) => Ok(None),
            _ => Err(format!(
                "{} holds only one of {PRIVATE_KEY_PEM} and {PUBLIC_KEY_PEM}",
                dir.display()
            )),
        }
    }

    /// Decrypts the client's answer and recovers the password (the
    /// plaintext is `password NUL` XOR the nonce, repeated).
    pub fn decrypt_password(&self, cipher: &[u8], nonce: &[u8]) -> Option<Vec<u8>> {
        if nonce.is_empty() {
            return None;
        }
        let plain = self.private.oaep_decrypt::<sha1::Sha1>(cipher).ok()?;
        let mut pw: Vec<u8> = plain
            .iter()
            .enumerate()
            .map(|(i, b)| b ^ nonce[i % nonce.len()])
            .collect();
        if pw.last() == Some(&0) {
            pw.pop();
        }
        Some(pw)
    }

    /// The client's side (tests): encrypts `password` for this key.
    pub fn encrypt_password(public_pem: &str, password: &[u8], nonce: &[u8]) -> Option<Vec<u8>> {
        use rsa::pkcs8::DecodePublicKey;
        if nonce.is_empty() {
            return None;
        }
        let key = rsa::PublicKey::from_public_key_pem(public_pem).ok()?;
        let mut plain = password.to_vec();
        plain.push(0);
        for (i, b) in plain.iter_mut().enumerate() {
            *b ^= nonce[i % nonce.len()];
        }
        key.oaep_encrypt::<sha1::Sha1>(&plain).ok()
    }
}

fn write_new(path: &Path, data: &[u8], secret: bool) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(if secret { 0o600 } else { 0o644 })
        .open(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    f.write_all(data)
        .and_then(|_| f.sync_all())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Vectors from OpenSSL (`openssl passwd -5 -salt ...`), an
    /// independent SHA256-crypt: default rounds, 10000 rounds, a
    /// 16-byte salt, a password longer than two SHA-256 blocks.
    #[test]
    fn sha256_crypt_reference_vectors() {
        assert_eq!(
            sha256_crypt(b"Hello world!", b"saltstring", 5000),
            "5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"
        );
        assert_eq!(
            sha256_crypt(&[b'x'; 70], b"abc", 5000),
            "5ox4QOf8XoCKLSxoCXvmgZ1th6KC4nDv0o9/Fj2v2E/"
        );
        assert_eq!(
            sha256_crypt(b"Hello world!", b"saltstringsaltst", 10000),
            "3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA"
        );
        assert_eq!(
            sha256_crypt(b"This is just a test", b"toolongsaltstrin", 5000),
            "Un/5jzAHMgOGZ5.mWJpuVolil07guHPvOW8mGRcvxa5"
        );
    }

    #[test]
    fn stored_form_round_trips() {
        let s = hash_password(b"secret");
        assert_eq!(s.len(), STORED_LEN);
        assert!(s.starts_with("$A$005$"));
        assert!(is_valid_stored(&s));
        assert!(check_password(&s, b"secret"));
        assert!(!check_password(&s, b"Secret"));
        assert!(!check_password(&s, b""));
        assert_ne!(s, hash_password(b"secret"), "salt must vary");
        assert!(!is_valid_stored("$A$005$short"));
        assert!(!is_valid_stored(&s.replace("$A$005$", "$A$0zz$")));
        assert!(!check_password("", b""));
    }

    #[test]
    fn scramble_checks() {
        let nonce = *b"abcdefghijklmnopqrst";
        let d = fast_digest(b"pw");
        let tok = scramble(b"pw", &nonce);
        assert_eq!(tok.len(), 32);
        assert!(check_scramble(&d, &nonce, &tok));
        assert!(!check_scramble(&d, &nonce, &scramble(b"pW", &nonce)));
        assert!(!check_scramble(&d, b"another nonce 123456", &tok));
        assert!(!check_scramble(&d, &nonce, &tok[..31]));
        let cache = Sha2Cache::default();
        cache.put("u", "%", d);
        assert_eq!(cache.get("u", "%"), Some(d));
        cache.forget("u", "%");
        assert!(cache.is_empty());
    }
}
