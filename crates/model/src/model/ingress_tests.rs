//! Every JSON annotation decodes the same in upstream's documented camelCase keys and the legacy
//! PascalCase (or otherwise re-cased) keys that Go's case-insensitive decoding accepts.

use super::backend::{
    action_via_annotation, conditions, transforms, Action, ActionInput, ConditionInput,
};
use super::listener::mutual_authentication;
use super::rule::{auth_action, conditions as rule_conditions, jwt_validation};
use crate::annotations::{key, AnnotationMap};

fn anns(pairs: &[(&str, &str)]) -> AnnotationMap {
    pairs.iter().map(|(k, v)| (key(k), v.to_string())).collect()
}

/// Decodes `conditions.svc` and turns it into model conditions (so a dropped entry shows).
fn conds(raw: &str) -> (Vec<ConditionInput>, serde_json::Value) {
    let list = conditions(&anns(&[("conditions.svc", raw)]), "svc").unwrap();
    let model = rule_conditions(None, None, &list).unwrap();
    (list, serde_json::to_value(model).unwrap())
}

#[test]
fn every_condition_kind_decodes_in_both_spellings() {
    let cases = [
        (
            r#"[{"field":"host-header","hostHeaderConfig":{"values":["a.example.com"]}}]"#,
            r#"[{"Field":"host-header","HostHeaderConfig":{"Values":["a.example.com"]}}]"#,
            r#"{"field":"host-header","hostHeaderConfig":{"values":["a.example.com"]}}"#,
        ),
        (
            r#"[{"field":"path-pattern","pathPatternConfig":{"regexValues":["^/a$"]}}]"#,
            r#"[{"Field":"path-pattern","PathPatternConfig":{"RegexValues":["^/a$"]}}]"#,
            r#"{"field":"path-pattern","pathPatternConfig":{"regexValues":["^/a$"]}}"#,
        ),
        (
            r#"[{"field":"http-header","httpHeaderConfig":{"httpHeaderName":"H","values":["v"]}}]"#,
            r#"[{"Field":"http-header","HttpHeaderConfig":{"HttpHeaderName":"H","Values":["v"]}}]"#,
            r#"{"field":"http-header","httpHeaderConfig":{"httpHeaderName":"H","values":["v"]}}"#,
        ),
        (
            r#"[{"field":"http-request-method","httpRequestMethodConfig":{"values":["GET"]}}]"#,
            r#"[{"Field":"http-request-method","HttpRequestMethodConfig":{"Values":["GET"]}}]"#,
            r#"{"field":"http-request-method","httpRequestMethodConfig":{"values":["GET"]}}"#,
        ),
        (
            r#"[{"field":"query-string","queryStringConfig":{"values":[{"key":"k","value":"v"}]}}]"#,
            r#"[{"Field":"query-string","QueryStringConfig":{"Values":[{"Key":"k","Value":"v"}]}}]"#,
            r#"{"field":"query-string","queryStringConfig":{"values":[{"key":"k","value":"v"}]}}"#,
        ),
        (
            r#"[{"field":"source-ip","sourceIpConfig":{"values":["10.0.0.0/8"]}}]"#,
            r#"[{"Field":"source-ip","SourceIpConfig":{"Values":["10.0.0.0/8"]}}]"#,
            r#"{"field":"source-ip","sourceIPConfig":{"values":["10.0.0.0/8"]}}"#,
        ),
    ];
    for (documented, legacy, want) in cases {
        let (a, model_a) = conds(documented);
        let (b, model_b) = conds(legacy);
        assert_eq!(a, b, "{legacy}");
        assert_eq!(model_a, model_b, "{legacy}");
        let want: serde_json::Value = serde_json::from_str(want).unwrap();
        let list = model_b.as_array().unwrap();
        assert!(list.contains(&want), "{legacy} gave {model_b}");
    }
}

fn action(raw: &str) -> ActionInput {
    action_via_annotation(&anns(&[("actions.svc", raw)]), "svc", false).unwrap()
}

#[test]
fn every_action_kind_decodes_in_both_spellings() {
    let cases = [
        (
            r#"{"type":"forward","targetGroupARN":"arn:tg"}"#,
            r#"{"Type":"forward","TargetGroupArn":"arn:tg"}"#,
        ),
        (
            r#"{"type":"forward","targetGroupName":"tg-name"}"#,
            r#"{"Type":"forward","TargetGroupName":"tg-name"}"#,
        ),
        (
            r#"{"type":"forward","forwardConfig":{"targetGroups":[{"serviceName":"s","servicePort":80,"weight":1},{"targetGroupARN":"arn:x","weight":2}],"targetGroupStickinessConfig":{"enabled":true,"durationSeconds":60}}}"#,
            r#"{"Type":"forward","ForwardConfig":{"TargetGroups":[{"ServiceName":"s","ServicePort":80,"Weight":1},{"TargetGroupARN":"arn:x","Weight":2}],"TargetGroupStickinessConfig":{"Enabled":true,"DurationSeconds":60}}}"#,
        ),
        (
            r#"{"type":"redirect","redirectConfig":{"host":"h","path":"/p","port":"443","protocol":"HTTPS","query":"q","statusCode":"HTTP_301"}}"#,
            r#"{"Type":"redirect","RedirectConfig":{"Host":"h","Path":"/p","Port":"443","Protocol":"HTTPS","Query":"q","StatusCode":"HTTP_301"}}"#,
        ),
        (
            r#"{"type":"fixed-response","fixedResponseConfig":{"contentType":"text/plain","messageBody":"m","statusCode":"503"}}"#,
            r#"{"Type":"fixed-response","FixedResponseConfig":{"ContentType":"text/plain","MessageBody":"m","StatusCode":"503"}}"#,
        ),
    ];
    for (documented, legacy) in cases {
        let (a, b) = (action(documented), action(legacy));
        assert_eq!(a, b, "{legacy}");
    }
    let fc = action(cases[2].1).forward_config.unwrap();
    assert_eq!(fc.target_groups.len(), 2);
    assert_eq!(
        fc.target_groups[1].target_group_arn.as_deref(),
        Some("arn:x")
    );
    let stick = fc.target_group_stickiness_config.unwrap();
    assert_eq!(
        (stick.enabled, stick.duration_seconds),
        (Some(true), Some(60))
    );
    let rc = action(cases[3].1).redirect_config.unwrap();
    assert_eq!(
        (rc.status_code.as_str(), rc.host.as_deref()),
        ("HTTP_301", Some("h"))
    );
    let fr = action(cases[4].1).fixed_response_config.unwrap();
    assert_eq!(fr.message_body.as_deref(), Some("m"));
}

#[test]
fn auth_idp_annotations_decode_in_both_spellings() {
    let cognito = [
        r#"{"userPoolARN":"arn:pool","userPoolClientID":"cid","userPoolDomain":"dom","authenticationRequestExtraParams":{"display":"page"}}"#,
        r#"{"UserPoolArn":"arn:pool","UserPoolClientId":"cid","UserPoolDomain":"dom","AuthenticationRequestExtraParams":{"display":"page"}}"#,
    ]
    .map(|raw| {
        let a = anns(&[("auth-type", "cognito"), ("auth-idp-cognito", raw)]);
        auth_action(&a, "ns").unwrap().unwrap()
    });
    assert_eq!(cognito[0], cognito[1]);
    let Action::AuthenticateCognito { config } = &cognito[1] else {
        panic!("{:?}", cognito[1]);
    };
    assert_eq!(
        (
            config.user_pool_arn.as_str(),
            config.user_pool_client_id.as_str()
        ),
        ("arn:pool", "cid")
    );
    assert_eq!(
        config.authentication_request_extra_params["display"],
        "page"
    );

    let oidc = [
        r#"{"issuer":"https://i","authorizationEndpoint":"https://a","tokenEndpoint":"https://t","userInfoEndpoint":"https://u","secretName":"s"}"#,
        r#"{"Issuer":"https://i","AuthorizationEndpoint":"https://a","TokenEndpoint":"https://t","UserInfoEndpoint":"https://u","SecretName":"s"}"#,
    ]
    .map(|raw| {
        let a = anns(&[("auth-type", "oidc"), ("auth-idp-oidc", raw)]);
        auth_action(&a, "ns").unwrap().unwrap()
    });
    assert_eq!(oidc[0], oidc[1]);
    let Action::AuthenticateOidc { config } = &oidc[1] else {
        panic!("{:?}", oidc[1]);
    };
    assert_eq!(
        (config.secret.as_str(), config.issuer.as_str()),
        ("ns/s", "https://i")
    );
}

#[test]
fn jwt_validation_decodes_in_both_spellings() {
    let got = [
        r#"{"jwksEndpoint":"https://j","issuer":"i","additionalClaims":[{"format":"single-string","name":"n","values":["v"]}]}"#,
        r#"{"JwksEndpoint":"https://j","Issuer":"i","AdditionalClaims":[{"Format":"single-string","Name":"n","Values":["v"]}]}"#,
    ]
    .map(|raw| jwt_validation(&anns(&[("jwt-validation", raw)])).unwrap().unwrap());
    assert_eq!(got[0], got[1]);
    assert_eq!(got[1].jwks_endpoint, "https://j");
    assert_eq!(got[1].additional_claims[0].values, ["v"]);
}

#[test]
fn mutual_authentication_decodes_in_both_spellings() {
    let got = [
        r#"[{"port":443,"mode":"verify","trustStore":"arn:ts","ignoreClientCertificateExpiry":true,"advertiseTrustStoreCaNames":"on"}]"#,
        r#"[{"Port":443,"Mode":"verify","TrustStore":"arn:ts","IgnoreClientCertificateExpiry":true,"AdvertiseTrustStoreCaNames":"on"}]"#,
    ]
    .map(|raw| mutual_authentication(&anns(&[("mutual-authentication", raw)])).unwrap());
    assert_eq!(got[0], got[1]);
    let m = &got[1][&443];
    assert_eq!(
        (m.mode.as_str(), m.trust_store.as_deref()),
        ("verify", Some("arn:ts"))
    );
    assert_eq!(m.ignore_client_certificate_expiry, Some(true));
    assert_eq!(m.advertise_trust_store_ca_names.as_deref(), Some("on"));
}

#[test]
fn transforms_decode_in_both_spellings() {
    let got = [
        r#"[{"type":"host-header-rewrite","hostHeaderRewriteConfig":{"rewrites":[{"regex":"^a$","replace":"b"}]}},{"type":"url-rewrite","urlRewriteConfig":{"rewrites":[{"regex":"^/x$","replace":"/y"}]}}]"#,
        r#"[{"Type":"host-header-rewrite","HostHeaderRewriteConfig":{"Rewrites":[{"Regex":"^a$","Replace":"b"}]}},{"Type":"url-rewrite","UrlRewriteConfig":{"Rewrites":[{"Regex":"^/x$","Replace":"/y"}]}}]"#,
    ]
    .map(|raw| transforms(&anns(&[("transforms.svc", raw)]), "svc").unwrap());
    assert_eq!(got[0], got[1]);
    let url = got[1][1].url_rewrite_config.as_ref().unwrap();
    assert_eq!(url.rewrites[0].replace, "/y");
}
