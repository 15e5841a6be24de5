//! Listeners of the load balancer, paired by port: created, modified when protocol, port, SSL
//! policy, default certificate or (normalised) default actions differ, extra certificates and
//! tags reconciled. Listeners on ports the stack no longer has are deleted in the cleanup phase.
//!
//! An ALPN policy or mutual authentication the model does not set is left as it is on the
//! listener, as upstream does by default; under feature gate `EnhancedDefaultBehavior` (always on
//! for Gateways, as upstream) one still on the listener is reset to AWS's default instead.

use std::collections::{BTreeMap, BTreeSet};

use super::compare;
use super::error::{Context, Error, Result};
use super::resolve::Resolved;
use super::target_group::attribute_changes;
use super::Deployer;
use crate::aws;
use crate::model::{self, Protocol, Token};

/// The model's listener as it goes to AWS: on `lb_arn`, its default actions' target groups
/// as ARNs, mutual authentication (HTTPS only) with its trust store's ARN.
pub fn resolve(l: &model::Listener, lb_arn: &str, r: &Resolved) -> Result<model::Listener> {
    // `Deployer::resolve_certificates` runs before any write; never deploy explicit ones only.
    if !l.certificate_discovery.is_empty() {
        return Err(Error::Invalid(format!(
            "listener {}: its ACM certificates were not discovered",
            l.port
        )));
    }
    if !(1..=65535).contains(&l.port) {
        return Err(Error::Invalid(format!(
            "listen port must be within [1, 65535]: {}",
            l.port
        )));
    }
    Ok(model::Listener {
        load_balancer_arn: Token::Literal(lb_arn.to_string()),
        default_actions: r.actions(&l.default_actions)?,
        mutual_authentication: match &l.mutual_authentication {
            Some(m) if l.protocol == Protocol::Https => {
                Some(super::mtls::desired(m, &r.trust_store_arns)?)
            }
            _ => None,
        },
        ..l.clone()
    })
}

/// An ALPN policy as compared: `None` is AWS's "no policy".
fn alpn(v: &[String]) -> Vec<&String> {
    v.iter().filter(|p| p.as_str() != "None").collect()
}

/// The model's ALPN policy as the list AWS describes.
fn want_alpn(want: &model::Listener) -> Vec<String> {
    want.alpn_policy.iter().cloned().collect()
}

/// True when ModifyListener is needed (extra certificates are handled separately). An ALPN
/// policy or mTLS setting the model does not set is left as it is, as upstream does, unless
/// `enhanced` (gate `EnhancedDefaultBehavior`): then one still on the listener is a difference.
pub fn listener_differs(want: &model::Listener, have: &aws::Listener, enhanced: bool) -> bool {
    want.port != i32::from(have.port)
        || !want.protocol.as_str().eq_ignore_ascii_case(&have.protocol)
        || (want.ssl_policy.is_some() && want.ssl_policy != have.ssl_policy)
        || want.certificates.first() != have.certificates.first()
        || alpn_differs(want, have, enhanced)
        || compare::norm_actions(&want.default_actions)
            != compare::norm_actions(&have.default_actions)
        || super::mtls::differs(
            want.mutual_authentication.as_ref(),
            have.mutual_authentication.as_ref(),
        )
        || (enhanced && mtls_to_reset(want, have))
}

/// Without `enhanced` an unset policy is no difference; with it, unset and `None` both mean
/// "no policy" and anything else on the listener differs.
fn alpn_differs(want: &model::Listener, have: &aws::Listener, enhanced: bool) -> bool {
    let differ = alpn(&want_alpn(want)) != alpn(&have.alpn_policy);
    differ && (enhanced || want.alpn_policy.is_some())
}

/// The model sets no ALPN policy while the listener has one.
fn alpn_to_reset(want: &model::Listener, have: &aws::Listener) -> bool {
    want.alpn_policy.is_none() && !alpn(&have.alpn_policy).is_empty()
}

/// The model sets no mutual authentication while the listener has it on.
fn mtls_to_reset(want: &model::Listener, have: &aws::Listener) -> bool {
    want.mutual_authentication.is_none() && super::mtls::is_on(have.mutual_authentication.as_ref())
}

/// The ModifyListener request for `want`. ModifyListener leaves what it is not sent as it is,
/// so with `enhanced` (gate `EnhancedDefaultBehavior`) an ALPN policy and mutual
/// authentication the model no longer sets are sent as AWS's defaults, `None` and mode `off`.
pub fn modify_request(
    want: &model::Listener,
    have: &aws::Listener,
    enhanced: bool,
) -> model::Listener {
    let mut req = want.clone();
    if enhanced && alpn_to_reset(want, have) {
        req.alpn_policy = Some("None".into());
    }
    if enhanced && mtls_to_reset(want, have) {
        req.mutual_authentication = Some(super::mtls::off());
    }
    req
}

/// (to add, to remove) among the extra (SNI) certificates, compared as sets. The default
/// certificate is set by Create/ModifyListener, so it is never added as an extra one (the model
/// repeats it when a second member names it, and `arnA,arnA` is accepted), and an extra entry
/// equal to it is left alone (upstream adds the default to the certificate list as well, and
/// DescribeListenerCertificates then lists it twice, once with IsDefault). Entries with
/// IsDefault are the default, not extras.
pub fn extra_cert_changes(
    want: &[String],
    have: &[aws::ListenerCertificate],
) -> (Vec<String>, Vec<String>) {
    let default = want.first();
    let want_extra: BTreeSet<&String> = want.iter().filter(|c| Some(*c) != default).collect();
    let have_extra: BTreeSet<&String> = have
        .iter()
        .filter(|c| !c.is_default)
        .map(|c| &c.arn)
        .collect();
    let add = want_extra
        .difference(&have_extra)
        .map(|c| c.to_string())
        .collect();
    let remove = have_extra
        .difference(&want_extra)
        .filter(|c| Some(**c) != default)
        .map(|c| c.to_string())
        .collect();
    (add, remove)
}

#[derive(Debug, Default)]
pub(crate) struct ListenerOutcome {
    pub arns: BTreeMap<i32, String>,
    pub leftovers: Vec<String>,
}

impl Deployer {
    /// The listeners of the load balancer `lb_arn`, OIDC client secrets filled in.
    pub(crate) async fn describe_listeners_of(&self, lb_arn: &str) -> Result<Vec<aws::Listener>> {
        let mut have: Vec<aws::Listener> = self
            .elbv2
            .describe_listeners(lb_arn)
            .await
            .ctx(|| format!("describe listeners of {lb_arn}"))?;
        for h in &mut have {
            self.oidc_secrets.fill(&h.arn, &mut h.default_actions);
        }
        Ok(have)
    }

    pub(crate) async fn sync_listeners(
        &self,
        lb_arn: &str,
        want: &[model::Listener],
        r: &Resolved,
    ) -> Result<ListenerOutcome> {
        let have = self.describe_listeners_of(lb_arn).await?;
        self.sync_described_listeners(lb_arn, have, want, r).await
    }

    /// [`Self::sync_listeners`] with the listeners already described (`have`).
    pub(crate) async fn sync_described_listeners(
        &self,
        lb_arn: &str,
        mut have: Vec<aws::Listener>,
        want: &[model::Listener],
        r: &Resolved,
    ) -> Result<ListenerOutcome> {
        let matched_arns: Vec<String> = have
            .iter()
            .filter(|h| want.iter().any(|w| w.port == i32::from(h.port)))
            .map(|h| h.arn.clone())
            .collect();
        let mut tags = if self.listener_rules_tagging && !matched_arns.is_empty() {
            self.elb_tags(&matched_arns).await?
        } else {
            BTreeMap::new()
        };
        let mut out = ListenerOutcome::default();
        for l in want {
            let s = resolve(l, lb_arn, r)?;
            // Create/ModifyListener set the default certificate; the others are extras.
            let default_only = model::Listener {
                certificates: s.certificates.iter().take(1).cloned().collect(),
                ..s.clone()
            };
            let pos = have.iter().position(|h| i32::from(h.port) == s.port);
            let arn = match pos {
                Some(i) => {
                    let h = have.remove(i);
                    if listener_differs(&s, &h, self.enhanced_defaults) {
                        let req = modify_request(&default_only, &h, self.enhanced_defaults);
                        self.elbv2
                            .modify_listener(&h.arn, &req)
                            .await
                            .ctx(|| format!("modify listener {}", s.port))?;
                    }
                    if self.listener_rules_tagging {
                        let actual = tags.remove(&h.arn).unwrap_or_default();
                        self.reconcile_elb_tags(&h.arn, &l.tags, &actual).await?;
                    }
                    h.arn
                }
                None => {
                    let mut create = default_only.clone();
                    if !self.listener_rules_tagging {
                        create.tags.clear();
                    }
                    let c = self
                        .elbv2
                        .create_listener(&create)
                        .await
                        .ctx(|| format!("create listener {}", s.port))?;
                    self.tag_cache.put(&c.arn, create.tags.clone());
                    c.arn
                }
            };
            if matches!(s.protocol, Protocol::Https | Protocol::Tls) {
                let certs = self
                    .elbv2
                    .describe_listener_certificates(&arn)
                    .await
                    .ctx(|| format!("describe certificates of listener {}", s.port))?;
                let (add, remove) = extra_cert_changes(&s.certificates, &certs);
                if !add.is_empty() {
                    self.elbv2
                        .add_listener_certificates(&arn, &add)
                        .await
                        .ctx(|| format!("add certificates to listener {}", s.port))?;
                }
                if !remove.is_empty() {
                    self.elbv2
                        .remove_listener_certificates(&arn, &remove)
                        .await
                        .ctx(|| format!("remove certificates from listener {}", s.port))?;
                }
            }
            // AWS takes no attributes on TLS listeners (upstream skips them; so does the model).
            if !l.attributes.is_empty() && s.protocol != Protocol::Tls {
                self.sync_listener_attributes(&arn, &l.attributes, s.port)
                    .await?;
            }
            self.oidc_secrets.record(&arn, &s.default_actions);
            out.arns.insert(l.port, arn);
        }
        out.leftovers = have.into_iter().map(|h| h.arn).collect();
        Ok(out)
    }
}

impl Deployer {
    /// Only the attributes the model sets, and only those that differ.
    async fn sync_listener_attributes(
        &self,
        arn: &str,
        want: &BTreeMap<String, String>,
        port: i32,
    ) -> Result<()> {
        let have = self
            .elbv2
            .describe_listener_attributes(arn)
            .await
            .ctx(|| format!("describe attributes of listener {port}"))?;
        let change = attribute_changes(want, &have);
        if !change.is_empty() {
            self.elbv2
                .modify_listener_attributes(arn, &change)
                .await
                .ctx(|| format!("modify attributes of listener {port}"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn have(port: u16, actions: Vec<model::Action>) -> aws::Listener {
        aws::Listener {
            arn: "arn:l".into(),
            load_balancer_arn: "arn:lb".into(),
            port,
            protocol: "HTTP".into(),
            ssl_policy: None,
            certificates: vec![],
            alpn_policy: vec![],
            default_actions: actions,
            mutual_authentication: None,
        }
    }

    fn want(port: i32, protocol: Protocol) -> model::Listener {
        model::Listener {
            load_balancer_arn: Token::Literal("arn:lb".into()),
            ..model::Listener::new(port, protocol, vec![])
        }
    }

    #[test]
    fn echoed_default_action_is_not_a_change() {
        let want = model::Listener {
            default_actions: vec![model::Action::fixed("404", None)],
            ..want(80, Protocol::Http)
        };
        assert!(!listener_differs(
            &want,
            &have(80, want.default_actions.clone()),
            false
        ));
        let other = vec![model::Action::fixed("503", None)];
        assert!(listener_differs(&want, &have(80, other), false));
    }

    #[test]
    fn resolve_places_the_load_balancer_and_target_group_arns_and_drops_mtls_off_https() {
        let mut r = Resolved::default();
        r.target_group_arns.insert("tg".into(), "arn:tg".into());
        let forward = |t: Token| model::Action::Forward {
            config: model::ForwardConfig {
                target_groups: vec![model::TargetGroupTuple {
                    target_group_arn: t,
                    weight: None,
                }],
                target_group_stickiness_config: None,
            },
        };
        let mtls = model::MutualAuthentication {
            mode: "passthrough".into(),
            ..Default::default()
        };
        let l = model::Listener {
            mutual_authentication: Some(mtls.clone()),
            ..model::Listener::new(
                443,
                Protocol::Https,
                vec![forward(Token::TargetGroupArn("tg".into()))],
            )
        };
        let got = resolve(&l, "arn:lb", &r).unwrap();
        assert_eq!(got.load_balancer_arn, Token::Literal("arn:lb".into()));
        assert_eq!(
            got.default_actions,
            vec![forward(Token::Literal("arn:tg".into()))]
        );
        assert_eq!(got.mutual_authentication, Some(mtls.clone()));
        let tls = model::Listener {
            protocol: Protocol::Tls,
            ..l.clone()
        };
        assert_eq!(
            resolve(&tls, "arn:lb", &r).unwrap().mutual_authentication,
            None
        );
        let far = model::Listener { port: 0, ..l };
        assert_eq!(
            resolve(&far, "arn:lb", &r).unwrap_err().to_string(),
            "listen port must be within [1, 65535]: 0"
        );
    }

    #[test]
    fn alpn_policy_is_compared_only_when_the_model_sets_one() {
        let mut have = have(443, vec![]);
        have.protocol = "TLS".into();
        have.alpn_policy = vec!["HTTP2Preferred".into()];
        let mut want = want(443, Protocol::Tls);
        assert!(!listener_differs(&want, &have, false), "unset: left alone");
        want.alpn_policy = Some("HTTP2Preferred".into());
        assert!(!listener_differs(&want, &have, false));
        want.alpn_policy = Some("HTTP1Only".into());
        assert!(listener_differs(&want, &have, false));
        want.alpn_policy = Some("None".into());
        have.alpn_policy = vec![];
        assert!(!listener_differs(&want, &have, false), "None = no policy");
    }

    #[test]
    fn enhanced_defaults_reset_an_alpn_policy_and_mtls_the_model_dropped() {
        let mut tls = have(443, vec![]);
        tls.protocol = "TLS".into();
        tls.alpn_policy = vec!["HTTP2Preferred".into()];
        let want_tls = want(443, Protocol::Tls);
        assert!(
            !listener_differs(&want_tls, &tls, false),
            "gate off: left alone"
        );
        assert!(listener_differs(&want_tls, &tls, true));
        assert_eq!(modify_request(&want_tls, &tls, false).alpn_policy, None);
        assert_eq!(
            modify_request(&want_tls, &tls, true).alpn_policy.as_deref(),
            Some("None")
        );
        // Already without a policy (`None` or absent): nothing to reset.
        for none in [vec!["None".to_string()], vec![]] {
            tls.alpn_policy = none;
            assert!(!listener_differs(&want_tls, &tls, true));
            assert_eq!(modify_request(&want_tls, &tls, true).alpn_policy, None);
        }

        let mut https = have(443, vec![]);
        https.protocol = "HTTPS".into();
        https.mutual_authentication = Some(model::MutualAuthentication {
            mode: "verify".into(),
            trust_store: Some("arn:ts".into()),
            ..Default::default()
        });
        let want = want(443, Protocol::Https);
        assert!(
            !listener_differs(&want, &https, false),
            "gate off: left alone"
        );
        assert!(listener_differs(&want, &https, true));
        assert_eq!(
            modify_request(&want, &https, false).mutual_authentication,
            None
        );
        assert_eq!(
            modify_request(&want, &https, true)
                .mutual_authentication
                .map(|m| m.mode),
            Some("off".to_string())
        );
        https.mutual_authentication = Some(crate::deploy::mtls::off());
        assert!(!listener_differs(&want, &https, true), "already off");
        https.mutual_authentication = None;
        assert!(!listener_differs(&want, &https, true), "never set");
    }

    fn cert(arn: &str, is_default: bool) -> aws::ListenerCertificate {
        aws::ListenerCertificate {
            arn: arn.into(),
            is_default,
        }
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn extra_certificates_diff_keeps_the_default() {
        let want = strings(&["c1", "c2"]);
        let have = vec![cert("c1", true), cert("c3", false), cert("c1", false)];
        let (add, remove) = extra_cert_changes(&want, &have);
        assert_eq!(add, strings(&["c2"]));
        assert_eq!(remove, strings(&["c3"]));
    }

    #[test]
    fn a_repeated_default_certificate_is_not_an_extra_one() {
        // Two members naming the same certificate, `a,b` + `b,a`, or `a,a`: the model repeats
        // the default; AWS lists it once, with IsDefault, and nothing is to change.
        for want in [
            strings(&["a", "a"]),
            strings(&["a", "b", "a"]),
            strings(&["a", "b", "b"]),
        ] {
            let mut have = vec![cert("a", true)];
            if want.contains(&"b".to_string()) {
                have.push(cert("b", false));
            }
            assert_eq!(
                extra_cert_changes(&want, &have),
                (vec![], vec![]),
                "{want:?}"
            );
        }
        // After ModifyListener made `b` the default: the old default becomes an extra, the
        // extra entry equal to the new default stays, one no longer named leaves.
        let have = [cert("b", true), cert("b", false), cert("c", false)];
        assert_eq!(
            extra_cert_changes(&strings(&["b", "a"]), &have),
            (strings(&["a"]), strings(&["c"]))
        );
    }
}
