//! Webhook TLS: a rustls server config whose certificate reloads from disk without a restart.
//!
//! Kubernetes rotates a mounted Secret by swapping a symlink, so the files change under a running
//! pod. Each handshake stats both files (cheap) and, when they changed, loads the new pair; a pair
//! that does not parse or whose key does not match keeps the previous certificate in service, so a
//! half-written rotation never fails a connection.
//!
//! With `--kube-ca-pem-filepath`, as upstream, a client must present a certificate issued by one
//! of the CAs in that file ([`client_verifier`]); without it no client certificate is asked for.

use crate::config::TlsMinVersion;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::danger::ClientCertVerifier;
use rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
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
    /// `--kube-ca-pem-filepath` holds nothing usable as client CAs.
    #[error("{path}: {reason}")]
    ClientCa { path: PathBuf, reason: String },
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

/// Who may connect, from `--kube-ca-pem-filepath`: `None` (no client certificate asked), or
/// only clients presenting a certificate issued by one of the file's CAs (upstream's
/// `RequireAndVerifyClientCert`). An unreadable file or one without a certificate fails the
/// start, as upstream's does.
pub fn client_verifier(
    ca_file: Option<&Path>,
) -> Result<Option<Arc<dyn ClientCertVerifier>>, TlsError> {
    let Some(path) = ca_file else {
        return Ok(None);
    };
    let pem = std::fs::read(path).map_err(|source| TlsError::Read {
        path: path.into(),
        source,
    })?;
    let bad = |reason: String| TlsError::ClientCa {
        path: path.into(),
        reason,
    };
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| bad(format!("not PEM: {e}")))?;
        roots
            .add(cert)
            .map_err(|e| bad(format!("not a usable CA certificate: {e}")))?;
    }
    if roots.is_empty() {
        // Upstream's words for the same failure.
        return Err(bad("Unable to append CA PEM to pool".into()));
    }
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
        .build()
        .map_err(|e| bad(e.to_string()))?;
    Ok(Some(verifier))
}

/// Builds the server config: TLS 1.3 only by default; with 1.2 allowed, only rustls's TLS 1.2
/// suites, which are all ECDHE key exchange with AEAD ciphers (no RSA key exchange, no CBC).
pub fn server_config_with(
    resolver: Arc<ReloadingCert>,
    min_version: TlsMinVersion,
) -> Result<Arc<ServerConfig>, TlsError> {
    server_config_for(resolver, min_version, None)
}

/// [`server_config_with`], asking clients for a certificate when `clients` says so (see
/// [`client_verifier`]).
pub fn server_config_for(
    resolver: Arc<ReloadingCert>,
    min_version: TlsMinVersion,
    clients: Option<Arc<dyn ClientCertVerifier>>,
) -> Result<Arc<ServerConfig>, TlsError> {
    let versions: &[&'static rustls::SupportedProtocolVersion] = match min_version {
        TlsMinVersion::Tls13 => &[&rustls::version::TLS13],
        TlsMinVersion::Tls12 => &[&rustls::version::TLS13, &rustls::version::TLS12],
    };
    let builder =
        ServerConfig::builder_with_provider(provider()).with_protocol_versions(versions)?;
    let builder = match clients {
        Some(verifier) => builder.with_client_cert_verifier(verifier),
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_cert_resolver(resolver);
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

    /// A CA for client certificates (distinct names: each its own issuer) and its PEM.
    fn client_ca(name: &str) -> (String, rcgen::Issuer<'static, rcgen::KeyPair>) {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        let mut dn = rcgen::DistinguishedName::new();
        dn.push(rcgen::DnType::CommonName, name);
        params.distinguished_name = dn;
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).unwrap();
        (cert.pem(), rcgen::Issuer::new(params, key))
    }

    /// A client certificate (clientAuth) issued by `issuer`: (certificate PEM, key PEM).
    fn client_cert(issuer: &rcgen::Issuer<'static, rcgen::KeyPair>) -> (String, String) {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["kube-apiserver".to_string()]).unwrap();
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        let cert = params.signed_by(&key, issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }

    /// One handshake in memory; the server's verdict (a TLS 1.3 client is done before the
    /// server has checked its certificate).
    async fn handshake(
        server: Arc<ServerConfig>,
        server_ca_pem: &str,
        client: Option<&(String, String)>,
    ) -> std::io::Result<()> {
        let mut roots = rustls::RootCertStore::empty();
        for c in CertificateDer::pem_slice_iter(server_ca_pem.as_bytes()) {
            roots.add(c.unwrap()).unwrap();
        }
        let builder = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots);
        let config = match client {
            Some((cert_pem, key_pem)) => builder
                .with_client_auth_cert(
                    CertificateDer::pem_slice_iter(cert_pem.as_bytes())
                        .map(Result::unwrap)
                        .collect(),
                    PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).unwrap(),
                )
                .unwrap(),
            None => builder.with_no_client_auth(),
        };
        let (client_io, server_io) = tokio::io::duplex(64 * 1024);
        let name = rustls::pki_types::ServerName::try_from("svc.ns.svc".to_string()).unwrap();
        let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
        let acceptor = tokio_rustls::TlsAcceptor::from(server);
        let (accepted, _connected) = tokio::join!(
            acceptor.accept(server_io),
            connector.connect(name, client_io)
        );
        accepted.map(|_| ())
    }

    /// `--kube-ca-pem-filepath`: only a client with a certificate from the file's CA gets
    /// through (none, or another CA's, is refused); without the flag no certificate is asked
    /// for; a file without a certificate, or none at all, fails the start.
    #[tokio::test]
    async fn a_client_ca_admits_only_clients_with_its_certificates() {
        let dir = tempfile::tempdir().unwrap();
        let serving =
            webhook_certs::generate(&webhook_certs::ServingSpec::new("svc", "ns"), 30).unwrap();
        pair(dir.path(), &serving.cert_pem, &serving.key_pem);
        let resolver = Arc::new(
            ReloadingCert::from_files(
                dir.path().join("tls.crt"),
                dir.path().join("tls.key"),
                provider(),
            )
            .unwrap(),
        );
        let (ca_pem, issuer) = client_ca("kube client CA");
        let ca_file = dir.path().join("client-ca.pem");
        std::fs::write(&ca_file, &ca_pem).unwrap();
        let (_, other_issuer) = client_ca("another CA");
        let good = client_cert(&issuer);
        let stranger = client_cert(&other_issuer);
        let server_ca = serving.ca.cert_pem.as_str();

        let verifier = client_verifier(Some(&ca_file)).unwrap();
        assert!(verifier.is_some());
        let strict = server_config_for(resolver.clone(), TlsMinVersion::Tls13, verifier).unwrap();
        handshake(strict.clone(), server_ca, Some(&good))
            .await
            .expect("a certificate from the CA gets through");
        assert!(
            handshake(strict.clone(), server_ca, None).await.is_err(),
            "no client certificate"
        );
        assert!(
            handshake(strict, server_ca, Some(&stranger)).await.is_err(),
            "another CA's certificate"
        );

        assert!(client_verifier(None).unwrap().is_none());
        let open = server_config_with(resolver, TlsMinVersion::Tls13).unwrap();
        handshake(open, server_ca, None)
            .await
            .expect("without the flag no certificate is asked for");

        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "").unwrap();
        let err = client_verifier(Some(&empty)).err().unwrap().to_string();
        assert!(err.contains("Unable to append CA PEM to pool"), "{err}");
        let missing = dir.path().join("missing.pem");
        assert!(matches!(
            client_verifier(Some(&missing)),
            Err(TlsError::Read { .. })
        ));
    }
}
