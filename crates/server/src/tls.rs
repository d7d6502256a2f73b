//! # TLS: certificates, the rustls configuration, the switch mid-handshake
//!
//! ## Certificates (MySQL's `auto_generate_certs`)
//!
//! `ssl_ca`, `ssl_cert`, `ssl_key` name PEM files. When none of the three
//! is set, the server uses `ca.pem`, `server-cert.pem` and
//! `server-key.pem` in the data directory, and on the first start (none of
//! them there yet) creates, as `mysqld` does:
//!
//! ```text
//!   ca.pem / ca-key.pem                  a self-signed CA
//!   server-cert.pem / server-key.pem     the server's certificate, signed by the CA,
//!                                        subject alternative names localhost,
//!                                        127.0.0.1, ::1 and the host name
//!   client-cert.pem / client-key.pem     a client certificate signed by the CA
//!                                        (for accounts with REQUIRE X509)
//! ```
//!
//! Keys are ECDSA P-256 (MySQL makes RSA-2048 ones; every client quire is
//! tested with takes both). The private keys are written with mode 0600.
//! A client that verifies the server (`--ssl-verify-server-cert
//! --ssl-ca=DATADIR/ca.pem`) accepts the certificate for `localhost`,
//! `127.0.0.1` and `::1`.
//!
//! ## The switch
//!
//! The server advertises `CLIENT_SSL` in Handshake V10. A client that
//! wants TLS answers with a 32-byte SSLRequest (the first 32 bytes of a
//! HandshakeResponse41, `CLIENT_SSL` set) and starts the TLS handshake on
//! the same socket at once; the real HandshakeResponse41 (sequence 2)
//! then arrives inside TLS. The bytes of the ClientHello may already sit
//! in the connection's read buffer, so the TLS layer reads through that
//! buffer ([`Transport`]) rather than the bare socket.
//!
//! `tls_version` (default `TLSv1.2,TLSv1.3`) limits the protocol
//! versions; TLSv1 and TLSv1.1 are refused at start-up, as MySQL 8.0.28+
//! does. With `ssl_ca` set, a client certificate is requested (not
//! required) and verified against that CA; `REQUIRE X509` accounts need
//! one.

use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::stream::Stream;

/// The file names `auto_generate_certs` uses in the data directory.
pub const CA_PEM: &str = "ca.pem";
pub const CA_KEY_PEM: &str = "ca-key.pem";
pub const SERVER_CERT_PEM: &str = "server-cert.pem";
pub const SERVER_KEY_PEM: &str = "server-key.pem";
pub const CLIENT_CERT_PEM: &str = "client-cert.pem";
pub const CLIENT_KEY_PEM: &str = "client-key.pem";

/// The TLS side of a server: the rustls configuration built at start.
#[derive(Clone)]
pub struct TlsContext {
    config: Arc<rustls::ServerConfig>,
    /// Whether client certificates are verified (ssl_ca set).
    pub verifies_clients: bool,
}

impl std::fmt::Debug for TlsContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsContext")
            .field("verifies_clients", &self.verifies_clients)
            .finish()
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Where the certificate files are: the variables, or the data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub ca: Option<PathBuf>,
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// Resolves `ssl_ca`/`ssl_cert`/`ssl_key` against the data directory,
/// generating the data directory's files when none is set and they do not
/// exist yet. `Ok(None)` when TLS cannot be offered and that is no error
/// (`auto_generate_certs` off and no files).
pub fn resolve_files(
    datadir: &Path,
    ssl_ca: Option<&Path>,
    ssl_cert: Option<&Path>,
    ssl_key: Option<&Path>,
    auto_generate: bool,
) -> Result<Option<TlsFiles>, String> {
    if ssl_ca.is_some() || ssl_cert.is_some() || ssl_key.is_some() {
        let (Some(cert), Some(key)) = (ssl_cert, ssl_key) else {
            return Err(
                "ssl_cert and ssl_key must be given together (ssl_ca alone is not enough)".into(),
            );
        };
        return Ok(Some(TlsFiles {
            ca: ssl_ca.map(Path::to_path_buf),
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
        }));
    }
    let files = TlsFiles {
        ca: Some(datadir.join(CA_PEM)),
        cert: datadir.join(SERVER_CERT_PEM),
        key: datadir.join(SERVER_KEY_PEM),
    };
    let present = [CA_PEM, SERVER_CERT_PEM, SERVER_KEY_PEM]
        .iter()
        .filter(|f| datadir.join(f).exists())
        .count();
    match present {
        3 => Ok(Some(files)),
        0 if auto_generate => {
            generate_certs(datadir)?;
            Ok(Some(files))
        }
        0 => Ok(None),
        // MySQL also refuses to generate over a partial set.
        _ => Err(format!(
            "{} holds some but not all of {CA_PEM}, {SERVER_CERT_PEM}, {SERVER_KEY_PEM}; \
             remove them to have new ones generated, or set ssl_ca/ssl_cert/ssl_key",
            datadir.display()
        )),
    }
}

fn write_file(path: &Path, text: &str, secret: bool) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    o.mode(if secret { 0o600 } else { 0o644 });
    let mut f = o
        .open(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    f.write_all(text.as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Writes a new CA, server and client certificate into `dir`.
pub fn generate_certs(dir: &Path) -> Result<(), String> {
    use rcgen::{
        BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, Issuer, KeyPair,
        KeyUsagePurpose,
    };
    let e = |what: &str, err: rcgen::Error| format!("generating the {what}: {err}");
    let dn = |cn: &str| {
        let mut d = DistinguishedName::new();
        d.push(DnType::CommonName, cn);
        d
    };
    let ca_key = KeyPair::generate().map_err(|x| e("CA key", x))?;
    let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(|x| e("CA", x))?;
    ca.distinguished_name = dn("quire_Auto_Generated_CA_Certificate");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca.self_signed(&ca_key).map_err(|x| e("CA", x))?;
    let issuer = Issuer::from_params(&ca, &ca_key);

    let mut names = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ];
    if let Some(h) = host_name().filter(|h| !names.contains(h)) {
        names.push(h);
    }
    let server_key = KeyPair::generate().map_err(|x| e("server key", x))?;
    let mut sp = CertificateParams::new(names).map_err(|x| e("server certificate", x))?;
    sp.distinguished_name = dn("quire_Auto_Generated_Server_Certificate");
    sp.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let server_cert = sp
        .signed_by(&server_key, &issuer)
        .map_err(|x| e("server certificate", x))?;

    let client_key = KeyPair::generate().map_err(|x| e("client key", x))?;
    let mut cp =
        CertificateParams::new(Vec::<String>::new()).map_err(|x| e("client certificate", x))?;
    cp.distinguished_name = dn("quire_Auto_Generated_Client_Certificate");
    cp.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let client_cert = cp
        .signed_by(&client_key, &issuer)
        .map_err(|x| e("client certificate", x))?;

    std::fs::create_dir_all(dir).map_err(|x| format!("cannot create {}: {x}", dir.display()))?;
    write_file(&dir.join(CA_KEY_PEM), &ca_key.serialize_pem(), true)?;
    write_file(&dir.join(SERVER_KEY_PEM), &server_key.serialize_pem(), true)?;
    write_file(&dir.join(CLIENT_KEY_PEM), &client_key.serialize_pem(), true)?;
    write_file(&dir.join(SERVER_CERT_PEM), &server_cert.pem(), false)?;
    write_file(&dir.join(CLIENT_CERT_PEM), &client_cert.pem(), false)?;
    // ca.pem last: its presence says the set is complete.
    write_file(&dir.join(CA_PEM), &ca_cert.pem(), false)?;
    Ok(())
}

fn host_name() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `len` bytes into our buffer.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return None;
    }
    let n = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let s = std::str::from_utf8(&buf[..n]).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// Parses `tls_version` (`TLSv1.2,TLSv1.3`): the versions rustls offers.
pub fn parse_tls_versions(
    spec: &str,
) -> Result<Vec<&'static rustls::SupportedProtocolVersion>, String> {
    let mut out = Vec::new();
    for v in spec.split(',').map(str::trim).filter(|v| !v.is_empty()) {
        let version: &'static rustls::SupportedProtocolVersion =
            match v.to_ascii_lowercase().as_str() {
                "tlsv1.2" => &rustls::version::TLS12,
                "tlsv1.3" => &rustls::version::TLS13,
                "tlsv1" | "tlsv1.1" => {
                    return Err(format!(
                        "tls_version: {v} is not supported (MySQL 8.0.28 and later refuse it too)"
                    ))
                }
                _ => return Err(format!("tls_version: unknown protocol '{v}'")),
            };
        if !out
            .iter()
            .any(|x: &&rustls::SupportedProtocolVersion| std::ptr::eq(*x, version))
        {
            out.push(version);
        }
    }
    Ok(out)
}

impl TlsContext {
    /// Loads the files and builds the configuration. An empty `versions`
    /// list (`tls_version=''`) means no TLS: `Ok(None)`.
    pub fn load(files: &TlsFiles, tls_version: &str) -> Result<Option<TlsContext>, String> {
        let versions = parse_tls_versions(tls_version)?;
        if versions.is_empty() {
            return Ok(None);
        }
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&files.cert)
            .map_err(|e| format!("ssl_cert {}: {e}", files.cert.display()))?
            .collect::<Result<_, _>>()
            .map_err(|e| format!("ssl_cert {}: {e}", files.cert.display()))?;
        if certs.is_empty() {
            return Err(format!(
                "ssl_cert {}: no certificate in the file",
                files.cert.display()
            ));
        }
        let key = PrivateKeyDer::from_pem_file(&files.key)
            .map_err(|e| format!("ssl_key {}: {e}", files.key.display()))?;
        let builder = rustls::ServerConfig::builder_with_provider(provider())
            .with_protocol_versions(&versions)
            .map_err(|e| format!("tls_version: {e}"))?;
        let mut verifies_clients = false;
        let builder = match &files.ca {
            Some(ca) => {
                let mut roots = rustls::RootCertStore::empty();
                for c in CertificateDer::pem_file_iter(ca)
                    .map_err(|e| format!("ssl_ca {}: {e}", ca.display()))?
                {
                    let c = c.map_err(|e| format!("ssl_ca {}: {e}", ca.display()))?;
                    roots
                        .add(c)
                        .map_err(|e| format!("ssl_ca {}: {e}", ca.display()))?;
                }
                let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                    Arc::new(roots),
                    provider(),
                )
                .allow_unauthenticated()
                .build()
                .map_err(|e| format!("ssl_ca {}: {e}", ca.display()))?;
                verifies_clients = true;
                builder.with_client_cert_verifier(verifier)
            }
            None => builder.with_no_client_auth(),
        };
        let config = builder
            .with_single_cert(certs, key)
            .map_err(|e| format!("ssl_cert/ssl_key: {e}"))?;
        Ok(Some(TlsContext {
            config: Arc::new(config),
            verifies_clients,
        }))
    }

    /// Runs the server side of the TLS handshake over `inner` (whose
    /// buffer may already hold the start of the ClientHello).
    pub(crate) fn accept(&self, inner: BufReader<Stream>) -> io::Result<TlsStream> {
        let conn = rustls::ServerConnection::new(self.config.clone())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let mut s = rustls::StreamOwned::new(conn, Transport(inner));
        while s.conn.is_handshaking() {
            s.conn.complete_io(&mut s.sock)?;
        }
        Ok(TlsStream(s))
    }
}

/// The socket under TLS: reads go through the connection's old buffer.
#[derive(Debug)]
pub(crate) struct Transport(pub BufReader<Stream>);

impl Read for Transport {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for Transport {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.get_mut().write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.get_mut().flush()
    }
}

/// A TLS connection over a client socket.
pub struct TlsStream(rustls::StreamOwned<rustls::ServerConnection, Transport>);

impl std::fmt::Debug for TlsStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TlsStream")
    }
}

impl TlsStream {
    /// The socket under the TLS layer.
    pub(crate) fn socket(&self) -> &Stream {
        self.0.sock.0.get_ref()
    }
    /// `Ssl_version` as MySQL shows it (`TLSv1.3`).
    pub fn version(&self) -> String {
        match self.0.conn.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3".into(),
            Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2".into(),
            Some(other) => format!("{other:?}"),
            None => String::new(),
        }
    }
    /// `Ssl_cipher` under its OpenSSL name, as MySQL shows it.
    pub fn cipher(&self) -> String {
        self.0
            .conn
            .negotiated_cipher_suite()
            .map(|s| openssl_cipher_name(s.suite()))
            .unwrap_or_default()
    }
    /// Whether the client presented a certificate (verified against
    /// `ssl_ca` by the handshake).
    pub fn has_peer_certificate(&self) -> bool {
        self.0
            .conn
            .peer_certificates()
            .is_some_and(|c| !c.is_empty())
    }
}

impl Read for TlsStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.0.read(buf) {
            // A client that closes the socket without close_notify is an
            // ordinary end of the connection here.
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
            r => r,
        }
    }
}

impl Write for TlsStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// rustls' suite names → OpenSSL's (what `Ssl_cipher` shows in MySQL).
pub fn openssl_cipher_name(s: rustls::CipherSuite) -> String {
    use rustls::CipherSuite as C;
    let name = match s {
        C::TLS13_AES_128_GCM_SHA256 => "TLS_AES_128_GCM_SHA256",
        C::TLS13_AES_256_GCM_SHA384 => "TLS_AES_256_GCM_SHA384",
        C::TLS13_CHACHA20_POLY1305_SHA256 => "TLS_CHACHA20_POLY1305_SHA256",
        C::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => "ECDHE-ECDSA-AES128-GCM-SHA256",
        C::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => "ECDHE-ECDSA-AES256-GCM-SHA384",
        C::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => "ECDHE-ECDSA-CHACHA20-POLY1305",
        C::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => "ECDHE-RSA-AES128-GCM-SHA256",
        C::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => "ECDHE-RSA-AES256-GCM-SHA384",
        C::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => "ECDHE-RSA-CHACHA20-POLY1305",
        other => return format!("{other:?}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse() {
        assert_eq!(parse_tls_versions("TLSv1.2,TLSv1.3").unwrap().len(), 2);
        assert_eq!(parse_tls_versions("tlsv1.3").unwrap().len(), 1);
        assert!(parse_tls_versions("").unwrap().is_empty());
        assert!(parse_tls_versions("TLSv1.1").is_err());
        assert!(parse_tls_versions("SSLv3").is_err());
    }

    #[test]
    fn generated_certs_load_and_partial_sets_are_refused() {
        let dir = std::env::temp_dir().join(format!("quire-tls-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let files = resolve_files(&dir, None, None, None, true)
            .unwrap()
            .unwrap();
        for f in [
            CA_PEM,
            CA_KEY_PEM,
            SERVER_CERT_PEM,
            SERVER_KEY_PEM,
            CLIENT_CERT_PEM,
        ] {
            assert!(dir.join(f).exists(), "{f}");
        }
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join(SERVER_KEY_PEM))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "private key readable by others");
        let ctx = TlsContext::load(&files, "TLSv1.2,TLSv1.3")
            .unwrap()
            .unwrap();
        assert!(ctx.verifies_clients);
        assert!(TlsContext::load(&files, "").unwrap().is_none());
        // Second start: the files are reused, not regenerated.
        let before = std::fs::read(dir.join(CA_PEM)).unwrap();
        resolve_files(&dir, None, None, None, true).unwrap();
        assert_eq!(before, std::fs::read(dir.join(CA_PEM)).unwrap());
        std::fs::remove_file(dir.join(SERVER_KEY_PEM)).unwrap();
        assert!(resolve_files(&dir, None, None, None, true).is_err());
        assert!(resolve_files(&dir, Some(&dir.join(CA_PEM)), None, None, true).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
