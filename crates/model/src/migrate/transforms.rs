//! `transforms.*` (`translate/translate_transform_helper.go`): a `url-rewrite` or
//! `host-header-rewrite` with a fixed replacement becomes a `URLRewrite` filter (full path,
//! hostname). A replacement with capture-group references (`$1`) has no Gateway API form: it
//! is left out with upstream's warning.

use crate::model::backend::Transform;

use super::objects::{
    HttpPathModifier, HttpRouteFilter, HttpUrlRewriteFilter, FILTER_URL_REWRITE, FULL_PATH_MODIFIER,
};

/// Whether `s` refers to a capture group (`$` then a digit).
pub fn has_capture_group_ref(s: &str) -> bool {
    let b = s.as_bytes();
    b.windows(2).any(|w| w[0] == b'$' && w[1].is_ascii_digit())
}

/// The one `URLRewrite` filter the transforms make (`None` when none can be written), and the
/// warnings for those left out.
pub fn translate_transforms(transforms: &[Transform]) -> (Option<HttpRouteFilter>, Vec<String>) {
    let mut warnings = Vec::new();
    if transforms.is_empty() {
        return (None, warnings);
    }
    let mut rewrite = HttpUrlRewriteFilter::default();
    let mut any = false;
    for t in transforms {
        match t.transform_type.as_str() {
            "url-rewrite" => {
                let Some(first) = t
                    .url_rewrite_config
                    .as_ref()
                    .and_then(|c| c.rewrites.first())
                else {
                    continue;
                };
                if has_capture_group_ref(&first.replace) {
                    warnings.push(format!(
                        "WARNING: url-rewrite transform with capture group reference {} cannot be represented in Gateway API — skipping.\n",
                        super::go_quote(&first.replace)
                    ));
                    continue;
                }
                rewrite.path = Some(HttpPathModifier {
                    type_: FULL_PATH_MODIFIER.into(),
                    replace_full_path: Some(first.replace.clone()),
                    replace_prefix_match: None,
                });
                any = true;
            }
            "host-header-rewrite" => {
                let Some(first) = t
                    .host_header_rewrite_config
                    .as_ref()
                    .and_then(|c| c.rewrites.first())
                else {
                    continue;
                };
                if has_capture_group_ref(&first.replace) {
                    warnings.push(format!(
                        "WARNING: host-header-rewrite transform with capture group reference {} cannot be represented in Gateway API — skipping.\n",
                        super::go_quote(&first.replace)
                    ));
                    continue;
                }
                rewrite.hostname = Some(first.replace.clone());
                any = true;
            }
            _ => {}
        }
    }
    if !any {
        return (None, warnings);
    }
    (
        Some(HttpRouteFilter {
            type_: FILTER_URL_REWRITE.into(),
            url_rewrite: Some(rewrite),
            ..Default::default()
        }),
        warnings,
    )
}
