//! Replays `translate/annotation_coverage_test.go` `TestAllIngressAnnotationsCovered` (1): every
//! Ingress annotation suffix the controller knows (read from `annotations.rs`'s `suffix` module,
//! so a suffix added there without a decision here fails this test) is translated, warned about
//! as not translated, or written by the controller; none is left in silence.

use crate::migrate::unsupported::{handling, Handling, NOT_TRANSLATED};

#[test]
fn all_ingress_annotations_covered() {
    let source = include_str!("../../annotations.rs");
    let start = source.find("pub mod suffix {").expect("the suffix module");
    let end = start + source[start..].find("\n}").expect("its end");
    let re = regex::Regex::new(r#"pub const [A-Z0-9_]+: &str =\s*"([^"]+)";"#).unwrap();
    let suffixes: Vec<&str> = re
        .captures_iter(&source[start..end])
        .map(|c| c.get(1).unwrap().as_str())
        .collect();
    assert!(suffixes.len() > 60, "{suffixes:?}");
    let mut unknown = Vec::new();
    let mut not_translated = 0;
    for s in &suffixes {
        // Prefixes name a backend, listener or port after them.
        let h = match handling(s) {
            Handling::Unknown => handling(&format!("{s}.name.80")),
            h => h,
        };
        match h {
            Handling::Unknown => unknown.push(*s),
            Handling::NotTranslated => not_translated += 1,
            Handling::Translated | Handling::ControllerWritten => {}
        }
    }
    assert!(
        unknown.is_empty(),
        "suffixes neither translated nor warned about: {unknown:?}"
    );
    // WAF Classic (2), the frontend NLB (16), ACM certificate creation (2).
    assert_eq!(not_translated, NOT_TRANSLATED.len());
    assert_eq!(NOT_TRANSLATED.len(), 20);
    // The controller-written plan annotation is no input.
    assert_eq!(handling("dry-run-plan"), Handling::ControllerWritten);
}

/// What is not translated is said, once per annotation, with the Ingress's name.
#[test]
fn untranslatable_and_unknown_annotations_are_warned() {
    let ing = super::ingress(
        "shop",
        "web",
        &[
            ("alb.ingress.kubernetes.io/waf-acl-id", "acl-1"),
            ("alb.ingress.kubernetes.io/enable-frontend-nlb", "true"),
            ("alb.ingress.kubernetes.io/no-such-annotation", "x"),
            (
                "alb.ingress.kubernetes.io/healthcheck-interval-seconds",
                "often",
            ),
            ("alb.ingress.kubernetes.io/scheme", "internal"),
            ("example.com/other", "ignored: not ours"),
        ],
        "",
    );
    let w = crate::migrate::unsupported::annotation_warnings(&ing, &Default::default());
    assert_eq!(w.len(), 4, "{w:#?}");
    assert!(w[0].contains(
        "alb.ingress.kubernetes.io/enable-frontend-nlb, which has no Gateway API equivalent"
    ));
    assert!(
        w[1].contains("healthcheck-interval-seconds: often: strconv.ParseInt"),
        "{}",
        w[1]
    );
    assert!(w[2].contains(
        "alb.ingress.kubernetes.io/no-such-annotation, which is no annotation the controller reads"
    ));
    assert!(
        w[3].contains("alb.ingress.kubernetes.io/waf-acl-id, which has no Gateway API equivalent")
    );
    assert!(w
        .iter()
        .all(|l| l.starts_with("WARNING: Ingress \"shop/web\"")));
}
