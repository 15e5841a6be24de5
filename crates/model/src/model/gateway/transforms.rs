//! Rule transforms of an HTTPRoute unit (upstream's `route_rule_transform.go`): URLRewrite
//! path (full path ⇒ `^([^?]*)`, prefix ⇒ a regex over the unit's path match) and hostname
//! (⇒ host-header rewrite of `.*`), and RequestRedirect's `ReplacePrefixMatch` as a path rewrite.

use gateway_api::apis::standard::httproutes::{HttpRouteRules, HttpRouteRulesMatches};

use crate::model::action::{Rewrite, RewriteConfigObject, Transform};

const WHOLE_HOST: &str = ".*";
const WHOLE_PATH_WITHOUT_QUERY: &str = "^([^?]*)";

fn rewrite(kind: &str, regex: String, replace: String) -> Transform {
    let config = Some(RewriteConfigObject {
        rewrites: vec![Rewrite { regex, replace }],
    });
    let (host, url) = if kind == "host-header-rewrite" {
        (config, None)
    } else {
        (None, config)
    };
    Transform {
        transform_type: kind.into(),
        host_header_rewrite_config: host,
        url_rewrite_config: url,
    }
}

/// A path rewrite: `full` replaces the whole path, `prefix` the unit's matched prefix.
fn path_rewrite(
    full: Option<&String>,
    prefix: Option<&String>,
    m: &HttpRouteRulesMatches,
) -> Transform {
    let (regex, replace) = match (full, prefix) {
        (Some(full), _) => (WHOLE_PATH_WITHOUT_QUERY.to_string(), full.clone()),
        (None, Some(prefix)) => {
            let matched = m
                .path
                .as_ref()
                .and_then(|p| p.value.clone())
                .unwrap_or_else(|| "/".into());
            // Keep one `/` for an empty replacement; re-append the optional `/` after the
            // matched prefix unless the replacement ends with one.
            let replace = if prefix.is_empty() {
                "/".to_string()
            } else if !prefix.ends_with('/') {
                format!("{prefix}$2")
            } else {
                prefix.clone()
            };
            (format!("(^{matched}(/)?)"), replace)
        }
        (None, None) => (String::new(), String::new()),
    };
    rewrite("url-rewrite", regex, replace)
}

/// The transforms of one unit, in filter order.
pub fn http_transforms(rule: &HttpRouteRules, m: &HttpRouteRulesMatches) -> Vec<Transform> {
    let mut out = Vec::new();
    for f in rule.filters.iter().flatten() {
        if let Some(u) = &f.url_rewrite {
            if let Some(p) = &u.path {
                out.push(path_rewrite(
                    p.replace_full_path.as_ref(),
                    p.replace_prefix_match.as_ref(),
                    m,
                ));
            }
            if let Some(h) = &u.hostname {
                out.push(rewrite("host-header-rewrite", WHOLE_HOST.into(), h.clone()));
            }
        }
        let redirect_prefix = f
            .request_redirect
            .as_ref()
            .and_then(|r| r.path.as_ref())
            .and_then(|p| p.replace_prefix_match.as_ref());
        if let Some(prefix) = redirect_prefix {
            out.push(path_rewrite(None, Some(prefix), m));
        }
    }
    out
}
