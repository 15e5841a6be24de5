//! Webhook TLS: a rustls server config whose certificate reloads from disk without a restart.
//!
//! Kubernetes rotates a mounted Secret by swapping a symlink, so the files change under a running
//! pod. Each handshake stats both files (cheap) and, when they changed, loads the new pair; a pair
//! that does not parse or whose key does not match keeps the previous certificate in service, so a
//! half-written rotation never fails a connection.

use crate::config::TlsMinVersion;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::ServerConfig;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

/// Errors loading the serving certificate.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} holds no PEM certificate")]
    NoCertificate { path: PathBuf },
    #[error("{path} holds no usable PEM private key: {reason}")]
    BadKey { path: PathBuf, reason: String },
    #[error("certificate {cert} and key {key} do not belong together: {reason}")]
    Mismatch {
        cert: PathBuf,
        key: PathBuf,
        reason: String,
    },
    #[error("TLS configuration: {0}")]
    Config(#[from] rustls::Error),
}

/// The crypto provider used everywhere (aws-lc-rs, as the AWS SDK uses).
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// What identifies one version of the files on disk.
type Stamp = Option<(SystemTime, u64, SystemTime, u64)>;

fn stamp(cert: &Path, key: &Path) -> Stamp {
    let c = std::fs::metadata(cert).ok()?;
    let k = std::fs::metadata(key).ok()?;
    Some((c.modified().ok()?, c.len(), k.modified().ok()?, k.len()))
}

/// Reads and checks a certificate chain and key pair from PEM files.
pub fn load_pair(
    cert: &Path,
    key: &Path,
    provider: &CryptoProvider,
) -> Result<CertifiedKey, TlsError> {
    let cert_pem = std::fs::read(cert).map_err(|source| TlsError::Read {
        path: cert.into(),
        source,
    })?;
    let key_pem = std::fs::read(key).map_err(|source| TlsError::Read {
        path: key.into(),
        source,
    })?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
        .filter_map(Result::ok)
        .collect();
    if chain.is_empty() {
        return Err(TlsError::NoCertificate { path: cert.into() });
    }
    let der = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| TlsError::BadKey {
        path: key.into(),
        reason: e.to_string(),
    })?;
    CertifiedKey::from_der(chain, der, provider).map_err(|e| TlsError::Mismatch {
        cert: cert.into(),
        key: key.into(),
        reason: e.to_string(),
    })
}

struct Current {
    stamp: Stamp,
    key: Arc<CertifiedKey>,
}

/// A certificate resolver that follows the files on disk.
pub struct ReloadingCert {
    cert_path: PathBuf,
    key_path: PathBuf,
    provider: Arc<CryptoProvider>,
    current: RwLock<Current>,
}

impl std::fmt::Debug for ReloadingCert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReloadingCert")
            .field("cert", &self.cert_path)
            .field("key", &self.key_path)
            .finish()
    }
}

impl ReloadingCert {
    /// Loads the pair once; failing here is what makes a bad mount fail the pod at start.
    pub fn new(
        cert_path: PathBuf,
        key_path: PathBuf,
        provider: Arc<CryptoProvider>,
    ) -> Result<Self, TlsError> {
        let stamp = stamp(&cert_path, &key_path);
        let key = Arc::new(load_pair(&cert_path, &key_path, &provider)?);
        Ok(ReloadingCert {
            cert_path,
            key_path,
            provider,
            current: RwLock::new(Current { stamp, key }),
        })
    }

    /// The certificate in service, reloading first if the files changed.
    pub fn current(&self) -> Arc<CertifiedKey> {
        let now = stamp(&self.cert_path, &self.key_path);
        {
            let cur = self.current.read().expect("cert lock");
            if cur.stamp == now || now.is_none() {
                return cur.key.clone();
            }
        }
        let mut cur = self.current.write().expect("cert lock");
        if cur.stamp != now {
            match load_pair(&self.cert_path, &self.key_path, &self.provider) {
                Ok(key) => {
                    tracing::info!(cert = %self.cert_path.display(), "webhook serving certificate reloaded");
                    cur.key = Arc::new(key);
                    cur.stamp = now;
                }
                // Keep serving the old pair; the stamp stays stale so the next handshake retries.
                Err(error) => {
                    tracing::warn!(%error, "new webhook certificate not usable yet; keeping the previous one")
                }
            }
        }
        cur.key.clone()
    }
}

impl ResolvesServerCert for ReloadingCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}

/// Builds the server config: TLS 1.3 only by default; with 1.2 allowed, only rustls's TLS 1.2
/// suites, which are all ECDHE key exchange with AEAD ciphers (no RSA key exchange, no CBC).
pub fn server_config(
    cert: PathBuf,
    key: PathBuf,
    min_version: TlsMinVersion,
) -> Result<(Arc<ServerConfig>, Arc<ReloadingCert>), TlsError> {
    let provider = provider();
    let resolver = Arc::new(ReloadingCert::new(cert, key, provider.clone())?);
    let versions: &[&'static rustls::SupportedProtocolVersion] = match min_version {
        TlsMinVersion::Tls13 => &[&rustls::version::TLS13],
        TlsMinVersion::Tls12 => &[&rustls::version::TLS13, &rustls::version::TLS12],
    };
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)?
        .with_no_client_auth()
        .with_cert_resolver(resolver.clone());
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok((Arc::new(config), resolver))
}
