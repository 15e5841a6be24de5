//! Everything of one stack (Ingress or Service) in AWS (ELBv2 and EC2 through our traits), found by the
//! stack tag as a user would look, in a stable order: rules by priority, target groups by name.

use aws_load_balancer_controller::aws::*;

/// Everything of one stack in AWS, found by the stack tag as a user would look.
#[derive(Debug, Default)]
pub struct Inventory {
    pub lbs: Vec<(LoadBalancer, Tags)>,
    pub tgs: Vec<(TargetGroup, Tags)>,
    pub sgs: Vec<SecurityGroup>,
    pub listeners: Vec<Listener>,
    /// Non-default rules, by priority, with tags.
    pub rules: Vec<(Rule, Tags)>,
}

impl Inventory {
    pub fn is_empty(&self) -> bool {
        self.lbs.is_empty() && self.tgs.is_empty() && self.sgs.is_empty()
    }
}

pub async fn inventory(elb: &dyn ElbV2, ec2: &dyn Ec2, stack: &str) -> Inventory {
    inventory_of(elb, ec2, "ingress.k8s.aws/stack", stack).await
}

/// [`inventory`] of the stack whose resources carry `stack_tag` = `stack` (a Service's:
/// `service.k8s.aws/stack` = `ns/name`).
pub async fn inventory_of(
    elb: &dyn ElbV2,
    ec2: &dyn Ec2,
    stack_tag: &str,
    stack: &str,
) -> Inventory {
    let mut inv = Inventory::default();
    let ours = |t: &Tags| t.get(stack_tag).map(String::as_str) == Some(stack);
    let lbs = elb
        .describe_load_balancers(&Default::default())
        .await
        .unwrap();
    let arns: Vec<String> = lbs.iter().map(|l| l.arn.clone()).collect();
    let tags = elb.describe_tags(&arns).await.unwrap();
    for l in lbs {
        let t = tags.get(&l.arn).cloned().unwrap_or_default();
        if !ours(&t) {
            continue;
        }
        for li in elb.describe_listeners(&l.arn).await.unwrap() {
            let rules: Vec<Rule> = elb
                .describe_rules(&li.arn)
                .await
                .unwrap()
                .into_iter()
                .filter(|r| !r.is_default)
                .collect();
            let rarns: Vec<String> = rules.iter().map(|r| r.arn.clone()).collect();
            let rt = elb.describe_tags(&rarns).await.unwrap();
            for r in rules {
                let t = rt.get(&r.arn).cloned().unwrap_or_default();
                inv.rules.push((r, t));
            }
            inv.listeners.push(li);
        }
        inv.lbs.push((l, t));
    }
    let tgs = elb
        .describe_target_groups(&Default::default())
        .await
        .unwrap();
    let arns: Vec<String> = tgs.iter().map(|t| t.arn.clone()).collect();
    let tags = elb.describe_tags(&arns).await.unwrap();
    for tg in tgs {
        let t = tags.get(&tg.arn).cloned().unwrap_or_default();
        if ours(&t) {
            inv.tgs.push((tg, t));
        }
    }
    inv.sgs = ec2
        .describe_security_groups(&Ec2Query::default())
        .await
        .unwrap()
        .into_iter()
        .filter(|g| ours(&g.tags))
        .collect();
    inv.rules
        .sort_by_key(|(r, _)| r.priority.parse::<u32>().unwrap_or(0));
    inv.tgs.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    inv
}
