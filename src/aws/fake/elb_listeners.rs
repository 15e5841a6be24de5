//! The fake's listeners and listener certificates (rules and tags: `elb_rules.rs`).

use super::elb::invalid;
use super::elb_rules::{described, normalise};
use super::state::{
    hex, lb_not_found, listener_not_found, tg_not_found, ListenerRec, RuleRec, State,
};
use crate::aws::error::{AwsError, Result};
use crate::aws::types::*;
use crate::model::{self, Action, MutualAuthentication};

/// The attributes AWS reports for a new listener of this protocol.
fn default_listener_attrs(protocol: &str) -> Attributes {
    let kv: &[(&str, &str)] = match protocol {
        "TCP" | "TLS" | "TCP_UDP" | "TCP_QUIC" => &[("tcp.idle_timeout.seconds", "350")],
        "UDP" | "QUIC" => &[],
        _ => &[("routing.http.response.server.enabled", "true")],
    };
    kv.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

impl State {
    pub(super) fn check_actions(&self, actions: &[Action]) -> Result<()> {
        if actions.is_empty() {
            return Err(AwsError::validation(
                "At least one action must be specified",
            ));
        }
        for a in actions {
            if let Action::Forward { config: f } = a {
                if f.target_groups.is_empty() {
                    return Err(AwsError::validation(
                        "A forward action must have at least one target group",
                    ));
                }
                if f.target_groups.len() > 5 {
                    return Err(invalid(
                        "TooManyTargetGroups",
                        "A forward action can have at most 5 target groups",
                    ));
                }
                for t in &f.target_groups {
                    let arn = literal(&t.target_group_arn, "forward action")?;
                    if !self.tgs.contains_key(arn) {
                        return Err(tg_not_found(arn));
                    }
                }
            }
        }
        Ok(())
    }

    /// The listener's port as AWS takes it (1 to 65535).
    fn listener_port(l: &model::Listener) -> Result<u16> {
        u16::try_from(l.port)
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| AwsError::validation("Listener port must be between 1 and 65535"))
    }

    fn check_listener_spec(&self, lb_arn: &str, lb_type: &str, l: &model::Listener) -> Result<()> {
        Self::listener_port(l)?;
        let protocol = l.protocol.as_str();
        let allowed: &[&str] = if lb_type == "application" {
            &["HTTP", "HTTPS"]
        } else {
            &["TCP", "TLS", "UDP", "TCP_UDP", "QUIC", "TCP_QUIC"]
        };
        if !allowed.contains(&protocol) {
            return Err(invalid(
                "IncompatibleProtocols",
                format!("Listener protocol '{protocol}' is not supported by this load balancer"),
            ));
        }
        if (protocol == "HTTPS" || protocol == "TLS") && l.certificates.is_empty() {
            return Err(AwsError::validation(format!(
                "A certificate must be specified for {protocol} listeners"
            )));
        }
        if l.alpn_policy.is_some() && protocol != "TLS" {
            return Err(AwsError::validation(
                "An ALPN policy can only be specified for TLS listeners",
            ));
        }
        self.check_actions(&l.default_actions)?;
        if lb_type == "network" {
            self.check_nlb_forward(lb_arn, protocol, &l.default_actions)?;
        }
        Ok(())
    }

    /// AWS: an NLB listener forwards only to target groups of a matching protocol (a TLS
    /// listener to TCP or TLS ones) that no other load balancer uses.
    fn check_nlb_forward(
        &self,
        lb_arn: &str,
        listener_protocol: &str,
        actions: &[Action],
    ) -> Result<()> {
        for a in actions {
            let Action::Forward { config: f } = a else {
                continue;
            };
            for t in &f.target_groups {
                let arn = literal(&t.target_group_arn, "forward action")?;
                let rec = self.tgs.get(arn);
                if let Some(other) = rec.and_then(|r| {
                    r.tg.load_balancer_arns
                        .iter()
                        .find(|lb| lb.as_str() != lb_arn)
                }) {
                    return Err(invalid(
                        "TargetGroupAssociationLimit",
                        format!("The following target groups cannot be associated with more than one load balancer: '{arn}' (in use by '{other}')"),
                    ));
                }
                let tg = rec.and_then(|r| r.tg.protocol.clone()).unwrap_or_default();
                let ok = match listener_protocol {
                    "TLS" => tg == "TCP" || tg == "TLS",
                    p => tg == p,
                };
                if !ok {
                    return Err(invalid("IncompatibleProtocols", format!("Listener protocol '{listener_protocol}' must be compatible with the target group protocol '{tg}'")));
                }
            }
        }
        Ok(())
    }

    pub(crate) fn listener_attrs(&self, arn: &str) -> Result<Attributes> {
        Ok(self
            .listeners
            .get(arn)
            .ok_or_else(|| listener_not_found(arn))?
            .attrs
            .clone())
    }

    pub(crate) fn modify_listener_attrs(
        &mut self,
        arn: &str,
        attrs: &Attributes,
    ) -> Result<Attributes> {
        let rec = self
            .listeners
            .get_mut(arn)
            .ok_or_else(|| listener_not_found(arn))?;
        for k in attrs.keys() {
            if !rec.attrs.contains_key(k) && !k.starts_with("routing.http.") {
                return Err(invalid(
                    "InvalidConfigurationRequest",
                    format!("Listener attribute key '{k}' is not recognized"),
                ));
            }
        }
        rec.attrs.extend(attrs.clone());
        Ok(rec.attrs.clone())
    }

    pub(crate) fn describe_listeners(&self, lb_arn: &str) -> Result<Vec<Listener>> {
        if !self.lbs.contains_key(lb_arn) {
            return Err(lb_not_found(lb_arn));
        }
        let mut v: Vec<Listener> = self
            .listeners
            .values()
            .filter(|l| l.listener.load_balancer_arn == lb_arn)
            .map(|l| Listener {
                default_actions: described(&l.listener.default_actions),
                ..l.listener.clone()
            })
            .collect();
        v.sort_by_key(|l| l.port);
        Ok(v)
    }

    pub(crate) fn create_listener(&mut self, spec: &model::Listener) -> Result<Listener> {
        let lb_arn = literal(&spec.load_balancer_arn, "listener's load balancer")?;
        let protocol = spec.protocol.as_str();
        let lb = self
            .lbs
            .get(lb_arn)
            .ok_or_else(|| lb_not_found(lb_arn))?
            .lb
            .clone();
        let port = Self::listener_port(spec)?;
        if self
            .listeners
            .values()
            .any(|l| l.listener.load_balancer_arn == lb_arn && l.listener.port == port)
        {
            return Err(invalid(
                "DuplicateListener",
                format!("A listener already exists on this port for this load balancer '{lb_arn}'"),
            ));
        }
        self.check_listener_spec(lb_arn, &lb.lb_type, spec)?;
        if spec.tags.len() > 50 {
            return Err(invalid("TooManyTags", "The quota for the number of tags that can be assigned to a listener has been reached"));
        }
        let lb_part = lb_arn
            .split_once(":loadbalancer/")
            .map(|(_, r)| r)
            .unwrap_or_default();
        let arn = self.elb_arn(&format!("listener/{lb_part}/{}", hex(16)));
        let listener = Listener {
            arn: arn.clone(),
            load_balancer_arn: lb_arn.into(),
            port,
            protocol: protocol.into(),
            ssl_policy: spec.ssl_policy.clone().or_else(|| {
                matches!(protocol, "HTTPS" | "TLS").then(|| "ELBSecurityPolicy-2016-08".into())
            }),
            certificates: spec.certificates.iter().take(1).cloned().collect(),
            alpn_policy: spec.alpn_policy.iter().cloned().collect(),
            default_actions: normalise(&spec.default_actions),
            // AWS reports `off` on HTTPS listeners created without it.
            mutual_authentication: spec.mutual_authentication.clone().or_else(|| {
                (protocol == "HTTPS").then(|| MutualAuthentication {
                    mode: "off".into(),
                    ..Default::default()
                })
            }),
        };
        let extra_certs = spec.certificates.iter().skip(1).cloned().collect();
        self.listeners.insert(
            arn.clone(),
            ListenerRec {
                listener: listener.clone(),
                extra_certs,
                attrs: default_listener_attrs(protocol),
            },
        );
        let l_part = arn
            .split_once(":listener/")
            .map(|(_, r)| r)
            .unwrap_or_default()
            .to_string();
        let rule_arn = self.elb_arn(&format!("listener-rule/{l_part}/{}", hex(16)));
        let rule = Rule {
            arn: rule_arn.clone(),
            priority: "default".into(),
            is_default: true,
            conditions: vec![],
            actions: listener.default_actions.clone(),
            transforms: vec![],
        };
        self.rules.insert(
            rule_arn,
            RuleRec {
                listener_arn: arn.clone(),
                rule,
            },
        );
        self.elb_tags.insert(arn, spec.tags.clone());
        self.recompute_tg_usage();
        Ok(listener)
    }

    pub(crate) fn modify_listener(
        &mut self,
        arn: &str,
        spec: &model::Listener,
    ) -> Result<Listener> {
        let protocol = spec.protocol.as_str();
        let current = self
            .listeners
            .get(arn)
            .ok_or_else(|| listener_not_found(arn))?
            .listener
            .clone();
        let port = Self::listener_port(spec)?;
        let lb_type = self
            .lbs
            .get(&current.load_balancer_arn)
            .map(|r| r.lb.lb_type.clone())
            .unwrap_or_default();
        if port != current.port
            && self.listeners.values().any(|l| {
                l.listener.load_balancer_arn == current.load_balancer_arn && l.listener.port == port
            })
        {
            return Err(invalid(
                "DuplicateListener",
                format!(
                    "A listener already exists on this port for this load balancer '{}'",
                    current.load_balancer_arn
                ),
            ));
        }
        self.check_listener_spec(&current.load_balancer_arn, &lb_type, spec)?;
        let actions = normalise(&spec.default_actions);
        let rec = self
            .listeners
            .get_mut(arn)
            .ok_or_else(|| listener_not_found(arn))?;
        rec.listener.port = port;
        rec.listener.protocol = protocol.into();
        rec.listener.ssl_policy = spec.ssl_policy.clone().or(rec.listener.ssl_policy.clone());
        rec.listener.certificates = spec.certificates.iter().take(1).cloned().collect();
        // AWS keeps an ALPN policy ModifyListener does not send (only TLS listeners have one).
        if let Some(policy) = &spec.alpn_policy {
            rec.listener.alpn_policy = vec![policy.clone()];
        } else if protocol != "TLS" {
            rec.listener.alpn_policy.clear();
        }
        rec.listener.default_actions = actions.clone();
        if let Some(m) = &spec.mutual_authentication {
            rec.listener.mutual_authentication = Some(m.clone());
        }
        let out = rec.listener.clone();
        if let Some(r) = self
            .rules
            .values_mut()
            .find(|r| r.listener_arn == arn && r.rule.is_default)
        {
            r.rule.actions = actions;
        }
        self.recompute_tg_usage();
        Ok(out)
    }

    pub(crate) fn drop_listener(&mut self, arn: &str) {
        self.listeners.remove(arn);
        self.elb_tags.remove(arn);
        let rules: Vec<String> = self
            .rules
            .values()
            .filter(|r| r.listener_arn == arn)
            .map(|r| r.rule.arn.clone())
            .collect();
        for r in rules {
            self.rules.remove(&r);
            self.elb_tags.remove(&r);
        }
    }

    pub(crate) fn delete_listener(&mut self, arn: &str) -> Result<()> {
        if !self.listeners.contains_key(arn) {
            return Err(listener_not_found(arn));
        }
        self.drop_listener(arn);
        self.recompute_tg_usage();
        Ok(())
    }

    pub(crate) fn listener_certs(&self, arn: &str) -> Result<Vec<ListenerCertificate>> {
        let rec = self
            .listeners
            .get(arn)
            .ok_or_else(|| listener_not_found(arn))?;
        let default = rec
            .listener
            .certificates
            .iter()
            .map(|c| ListenerCertificate {
                arn: c.clone(),
                is_default: true,
            });
        let extra = rec.extra_certs.iter().map(|c| ListenerCertificate {
            arn: c.clone(),
            is_default: false,
        });
        Ok(default.chain(extra).collect())
    }

    pub(crate) fn add_certs(&mut self, arn: &str, certs: &[String]) -> Result<()> {
        let rec = self
            .listeners
            .get_mut(arn)
            .ok_or_else(|| listener_not_found(arn))?;
        // The default certificate may be added to the certificate list too: AWS then lists it
        // twice, once with IsDefault and once without (DescribeListenerCertificates).
        for c in certs {
            if !rec.extra_certs.contains(c) {
                rec.extra_certs.push(c.clone());
            }
        }
        Ok(())
    }

    pub(crate) fn remove_certs(&mut self, arn: &str, certs: &[String]) -> Result<()> {
        let rec = self
            .listeners
            .get_mut(arn)
            .ok_or_else(|| listener_not_found(arn))?;
        if let Some(c) = certs.iter().find(|c| rec.listener.certificates.contains(c)) {
            return Err(invalid(
                "OperationNotPermitted",
                format!("The default certificate '{c}' cannot be removed from the listener"),
            ));
        }
        rec.extra_certs.retain(|c| !certs.contains(c));
        Ok(())
    }
}
