//! Listeners and rules through the recorder: placeholder listeners' rules answered from what was
//! recorded, creates and modifies noted field by field.

use super::*;

impl Recorder {
    pub(super) async fn listeners_described(&self, lb_arn: &str) -> Result<Vec<Listener>> {
        let out = if is_placeholder(lb_arn) {
            let s = self.seen();
            s.listeners
                .values()
                .filter(|l| l.load_balancer_arn == lb_arn)
                .cloned()
                .collect()
        } else {
            self.elbv2.describe_listeners(lb_arn).await?
        };
        let mut s = self.seen();
        for l in &out {
            s.listeners.insert(l.arn.clone(), l.clone());
        }
        Ok(out)
    }

    pub(super) fn listener_created(&self, spec: &crate::model::Listener) -> Result<Listener> {
        let lb_arn = literal(&spec.load_balancer_arn, "listener's load balancer")?;
        let arn = self.placeholder(&format!(
            "arn:aws:elasticloadbalancing:::listener/app/{}/{}/",
            lb_arn.rsplit('/').nth(1).unwrap_or(""),
            spec.port
        ));
        let alpn_policy: Vec<String> = spec.alpn_policy.iter().cloned().collect();
        let mut changes = created(&[("port", &spec.port)]);
        changes.extend(created(&[
            ("protocol", &Some(spec.protocol.as_str().to_string())),
            ("sslPolicy", &spec.ssl_policy),
        ]));
        changes.extend(created(&[
            ("certificates", &spec.certificates),
            ("alpnPolicy", &alpn_policy),
        ]));
        changes.extend(created(&[("defaultActions", &spec.default_actions)]));
        changes.extend(created(&[("loadBalancer", &lb_arn)]));
        self.elb("CreateListener", &arn, changes);
        let l = Listener {
            arn: arn.clone(),
            load_balancer_arn: lb_arn.to_string(),
            port: u16::try_from(spec.port).unwrap_or_default(),
            protocol: spec.protocol.as_str().to_string(),
            ssl_policy: spec.ssl_policy.clone(),
            certificates: spec.certificates.clone(),
            alpn_policy,
            default_actions: spec.default_actions.clone(),
            mutual_authentication: spec.mutual_authentication.clone(),
        };
        let mut s = self.seen();
        s.listeners.insert(arn.clone(), l.clone());
        s.tags.insert(arn, spec.tags.clone());
        Ok(l)
    }

    pub(super) fn listener_modified(&self, arn: &str, spec: &crate::model::Listener) -> Listener {
        let protocol = spec.protocol.as_str().to_string();
        let alpn_policy: Vec<String> = spec.alpn_policy.iter().cloned().collect();
        let mut s = self.seen();
        let l = s.listeners.entry(arn.to_string()).or_default();
        let changes: Vec<Change> = [
            change("port", Some(show(&l.port)), Some(show(&spec.port))),
            change("protocol", Some(l.protocol.clone()), Some(protocol.clone())),
            change("sslPolicy", l.ssl_policy.clone(), spec.ssl_policy.clone()),
            change(
                "certificates",
                Some(show(&l.certificates)),
                Some(show(&spec.certificates)),
            ),
            change(
                "alpnPolicy",
                Some(show(&l.alpn_policy)),
                Some(show(&alpn_policy)),
            ),
            change(
                "defaultActions",
                Some(show(&l.default_actions)),
                Some(show(&spec.default_actions)),
            ),
        ]
        .into_iter()
        .flatten()
        .collect();
        l.port = u16::try_from(spec.port).unwrap_or_default();
        l.protocol = protocol;
        l.ssl_policy = spec.ssl_policy.clone();
        l.certificates = spec.certificates.clone();
        l.alpn_policy = alpn_policy;
        l.default_actions = spec.default_actions.clone();
        let l = l.clone();
        drop(s);
        self.elb("ModifyListener", arn, changes);
        l
    }

    pub(super) async fn rules_described(&self, listener_arn: &str) -> Result<Vec<Rule>> {
        let out = if is_placeholder(listener_arn) {
            let s = self.seen();
            s.rules_of
                .get(listener_arn)
                .into_iter()
                .flatten()
                .filter_map(|a| s.rules.get(a).cloned())
                .collect()
        } else {
            self.elbv2.describe_rules(listener_arn).await?
        };
        let mut s = self.seen();
        for r in &out {
            s.rules.insert(r.arn.clone(), r.clone());
        }
        Ok(out)
    }

    pub(super) fn rule_created(&self, spec: &crate::model::ListenerRule) -> Result<Rule> {
        let listener_arn = literal(&spec.listener_arn, "rule's listener")?;
        let arn = self.placeholder(&format!(
            "arn:aws:elasticloadbalancing:::listener-rule/{}/",
            spec.priority
        ));
        let mut changes = created(&[("listener", &listener_arn)]);
        changes.extend(created(&[("priority", &spec.priority)]));
        changes.extend(created(&[("conditions", &spec.conditions)]));
        changes.extend(created(&[("actions", &spec.actions)]));
        if !spec.transforms.is_empty() {
            changes.extend(created(&[("transforms", &spec.transforms)]));
        }
        self.elb("CreateRule", &arn, changes);
        let r = Rule {
            arn: arn.clone(),
            priority: spec.priority.to_string(),
            is_default: false,
            conditions: spec.conditions.clone(),
            actions: spec.actions.clone(),
            transforms: spec.transforms.clone(),
        };
        let mut s = self.seen();
        s.rules.insert(arn.clone(), r.clone());
        s.rules_of
            .entry(listener_arn.to_string())
            .or_default()
            .push(arn.clone());
        s.tags.insert(arn, spec.tags.clone());
        Ok(r)
    }

    pub(super) fn rule_modified(&self, arn: &str, spec: &crate::model::ListenerRule) -> Rule {
        let mut s = self.seen();
        let r = s.rules.entry(arn.to_string()).or_default();
        let changes: Vec<Change> = [
            change(
                "conditions",
                Some(show(&r.conditions)),
                Some(show(&spec.conditions)),
            ),
            change("actions", Some(show(&r.actions)), Some(show(&spec.actions))),
            change(
                "transforms",
                Some(show(&r.transforms)),
                Some(show(&spec.transforms)),
            ),
        ]
        .into_iter()
        .flatten()
        .collect();
        r.conditions = spec.conditions.clone();
        r.actions = spec.actions.clone();
        r.transforms = spec.transforms.clone();
        let r = r.clone();
        drop(s);
        self.elb("ModifyRule", arn, changes);
        r
    }
}
