//! A client socket: TCP or Unix domain, possibly under TLS (`tls.rs`).

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// One accepted connection's socket.
#[derive(Debug)]
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    /// After an SSLRequest: TLS over one of the two above.
    Tls(Box<crate::tls::TlsStream>),
}

impl Stream {
    pub fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
            // The TLS session cannot be shared: a clone is the socket
            // under it (enough to shut the connection down).
            Stream::Tls(t) => t.socket().try_clone()?,
        })
    }
    pub fn set_read_timeout(&self, d: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(d),
            Stream::Unix(s) => s.set_read_timeout(d),
            Stream::Tls(t) => t.socket().set_read_timeout(d),
        }
    }
    pub fn set_write_timeout(&self, d: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(d),
            Stream::Unix(s) => s.set_write_timeout(d),
            Stream::Tls(t) => t.socket().set_write_timeout(d),
        }
    }
    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_nonblocking(on),
            Stream::Unix(s) => s.set_nonblocking(on),
            Stream::Tls(t) => t.socket().set_nonblocking(on),
        }
    }
    /// Ends both directions: a thread blocked reading this socket wakes up
    /// with end-of-file.
    pub fn shutdown(&self) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(Shutdown::Both),
            Stream::Unix(s) => s.shutdown(Shutdown::Both),
            Stream::Tls(t) => {
                t.socket().shutdown();
                Ok(())
            }
        };
    }
}

impl Stream {
    /// Whether the transport is secure in MySQL's sense (TLS or the Unix
    /// socket): `require_secure_transport` and caching_sha2_password's
    /// cleartext full authentication depend on it.
    pub fn is_secure(&self) -> bool {
        !matches!(self, Stream::Tcp(_))
    }
    /// The TLS session, if any.
    pub fn tls(&self) -> Option<&crate::tls::TlsStream> {
        match self {
            Stream::Tls(t) => Some(t),
            _ => None,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(t) => t.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(t) => t.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
            Stream::Tls(t) => t.flush(),
        }
    }
}
