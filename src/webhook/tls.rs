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
    parse_pair(&cert_pem, &key_pem, (cert, key), provider)
}

struct Current {
    stamp: Stamp,
    key: Arc<CertifiedKey>,
}

/// Where the certificate comes from.
#[derive(Debug)]
enum Source {
    /// PEM files, re-checked on every handshake.
    Files { cert: PathBuf, key: PathBuf },
    /// Set by the controller's own certificate manager (no files, so a read-only root works).
    Memory,
}

/// A certificate resolver that follows the files on disk, or what the certificate manager sets.
pub struct ReloadingCert {
    source: Source,
    provider: Arc<CryptoProvider>,
    current: RwLock<Option<Current>>,
    /// The files' version that last failed to load, and when: a broken rotation is retried at
    /// most once per [`RETRY_REJECTED`], not re-read under the write lock on every handshake.
    rejected: std::sync::Mutex<Option<(Stamp, std::time::Instant)>>,
}

/// How often a version of the files that failed to load is tried again (a pair written in two
/// steps within one mtime tick keeps its stamp, so "never again" would be wrong).
const RETRY_REJECTED: std::time::Duration = std::time::Duration::from_secs(1);

impl std::fmt::Debug for ReloadingCert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReloadingCert")
            .field("source", &self.source)
            .finish()
    }
}

fn parse_pair(
    cert_pem: &[u8],
    key_pem: &[u8],
    names: (&Path, &Path),
    provider: &CryptoProvider,
) -> Result<CertifiedKey, TlsError> {
    let (cert, key) = names;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem)
        .filter_map(Result::ok)
        .collect();
    if chain.is_empty() {
        return Err(TlsError::NoCertificate { path: cert.into() });
    }
    let der = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| TlsError::BadKey {
        path: key.into(),
        reason: e.to_string(),
    })?;
    CertifiedKey::from_der(chain, der, provider).map_err(|e| TlsError::Mismatch {
        cert: cert.into(),
        key: key.into(),
        reason: e.to_string(),
    })
}

impl ReloadingCert {
    /// Loads the pair once; failing here is what makes a bad mount fail the pod at start.
    pub fn from_files(
        cert: PathBuf,
        key: PathBuf,
        provider: Arc<CryptoProvider>,
    ) -> Result<Self, TlsError> {
        let stamp = stamp(&cert, &key);
        let pair = Arc::new(load_pair(&cert, &key, &provider)?);
        let current = RwLock::new(Some(Current { stamp, key: pair }));
        Ok(ReloadingCert {
            source: Source::Files { cert, key },
            provider,
            current,
            rejected: Default::default(),
        })
    }

    /// An empty resolver for the certificate manager to fill with [`ReloadingCert::set_pem`].
    pub fn in_memory(provider: Arc<CryptoProvider>) -> Self {
        ReloadingCert {
            source: Source::Memory,
            provider,
            current: RwLock::new(None),
            rejected: Default::default(),
        }
    }

    /// Replaces the served pair (memory source); a pair that does not parse or match is refused.
    pub fn set_pem(&self, cert_pem: &str, key_pem: &str) -> Result<(), TlsError> {
        let names = (
            Path::new("<managed tls.crt>"),
            Path::new("<managed tls.key>"),
        );
        let pair = parse_pair(
            cert_pem.as_bytes(),
            key_pem.as_bytes(),
            names,
            &self.provider,
        )?;
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = Some(Current {
            stamp: None,
            key: Arc::new(pair),
        });
        Ok(())
    }

    /// The certificate in service, reloading first if the files changed.
    pub fn current(&self) -> Option<Arc<CertifiedKey>> {
        let Source::Files { cert, key } = &self.source else {
            return self
                .current
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .as_ref()
                .map(|c| c.key.clone());
        };
        let now = stamp(cert, key);
        {
            let cur = self.current.read().unwrap_or_else(|p| p.into_inner());
            if let Some(c) = cur.as_ref() {
                let recently_rejected = self
                    .rejected
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .as_ref()
                    .is_some_and(|(s, at)| *s == now && at.elapsed() < RETRY_REJECTED);
                if c.stamp == now || now.is_none() || recently_rejected {
                    return Some(c.key.clone());
                }
            }
        }
        let mut cur = self.current.write().unwrap_or_else(|p| p.into_inner());
        if cur.as_ref().is_none_or(|c| c.stamp != now) {
            match load_pair(cert, key, &self.provider) {
                Ok(pair) => {
                    tracing::info!(cert = %cert.display(), "webhook serving certificate reloaded");
                    *cur = Some(Current {
                        stamp: now,
                        key: Arc::new(pair),
                    });
                }
                // Keep serving the old pair; the stamp stays stale, so this version is tried
                // again after RETRY_REJECTED (or at once when the files change again).
                Err(error) => {
                    *self.rejected.lock().unwrap_or_else(|p| p.into_inner()) =
                        Some((now, std::time::Instant::now()));
                    tracing::warn!(%error, "new webhook certificate not usable yet; keeping the previous one")
                }
            }
        }
        cur.as_ref().map(|c| c.key.clone())
    }
}

impl ResolvesServerCert for ReloadingCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.current()
    }
}

/// Builds the server config: TLS 1.3 only by default; with 1.2 allowed, only rustls's TLS 1.2
/// suites, which are all ECDHE key exchange with AEAD ciphers (no RSA key exchange, no CBC).
pub fn server_config_with(
    resolver: Arc<ReloadingCert>,
    min_version: TlsMinVersion,
) -> Result<Arc<ServerConfig>, TlsError> {
    let versions: &[&'static rustls::SupportedProtocolVersion] = match min_version {
        TlsMinVersion::Tls13 => &[&rustls::version::TLS13],
        TlsMinVersion::Tls12 => &[&rustls::version::TLS13, &rustls::version::TLS12],
    };
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(versions)?
        .with_no_client_auth()
        .with_cert_resolver(resolver);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Server config serving (and following) the PEM files `cert` and `key`.
pub fn server_config(
    cert: PathBuf,
    key: PathBuf,
    min_version: TlsMinVersion,
) -> Result<(Arc<ServerConfig>, Arc<ReloadingCert>), TlsError> {
    let resolver = Arc::new(ReloadingCert::from_files(cert, key, provider())?);
    Ok((server_config_with(resolver.clone(), min_version)?, resolver))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(dir: &Path, cert: &str, key: &str) {
        std::fs::write(dir.join("tls.crt"), cert).unwrap();
        std::fs::write(dir.join("tls.key"), key).unwrap();
    }

    /// A rotation that leaves a broken pair keeps the old certificate served, is remembered
    /// (not re-read on every handshake), and a good pair written next is picked up at once.
    #[test]
    fn a_broken_rotation_keeps_the_old_pair_and_a_good_one_is_picked_up() {
        let dir = tempfile::tempdir().unwrap();
        let now = time::OffsetDateTime::now_utc();
        let spec = webhook_certs::ServingSpec::new("svc", "ns");
        let ca = webhook_certs::generate_ca(30, now).unwrap();
        let first = webhook_certs::issue_serving(&ca, &spec, now).unwrap();
        pair(dir.path(), &first.cert_pem, &first.key_pem);
        let r = ReloadingCert::from_files(
            dir.path().join("tls.crt"),
            dir.path().join("tls.key"),
            provider(),
        )
        .unwrap();
        let served = r.current().unwrap();

        let second = webhook_certs::issue_serving(&ca, &spec, now).unwrap();
        // Torn: the new certificate beside the old key.
        pair(dir.path(), &second.cert_pem, &first.key_pem);
        assert!(Arc::ptr_eq(&r.current().unwrap(), &served), "old pair kept");
        let rejected = *r.rejected.lock().unwrap();
        assert!(rejected.is_some(), "the broken version is remembered");
        assert!(Arc::ptr_eq(&r.current().unwrap(), &served));
        assert_eq!(
            *r.rejected.lock().unwrap(),
            rejected,
            "not tried again at once"
        );

        std::thread::sleep(std::time::Duration::from_millis(20));
        pair(dir.path(), &second.cert_pem, &second.key_pem);
        let now_served = r.current().unwrap();
        assert!(
            !Arc::ptr_eq(&now_served, &served),
            "the good pair is served"
        );
    }
}
