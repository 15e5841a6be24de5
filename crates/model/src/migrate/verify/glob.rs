//! ALB's condition patterns: `*` matches any run of characters (none included, `/` included),
//! `?` exactly one; host names, header and query values compare without case, paths and
//! methods with it. Regular-expression values (`regexValues`) match anywhere in the value
//! (ALB documents no implicit anchors; both stacks are evaluated alike, so a difference found
//! never comes from the choice). Also the witnesses: texts a pattern or expression matches,
//! from which requests are derived.

/// Whether `text` matches the ALB wildcard `pattern`.
pub fn wildcard_match(pattern: &str, text: &str, case_insensitive: bool) -> bool {
    let fold = |s: &str| -> Vec<char> {
        if case_insensitive {
            s.to_lowercase().chars().collect()
        } else {
            s.chars().collect()
        }
    };
    let p = fold(pattern);
    let t = fold(text);
    // Iterative matching with one backtrack point for the last `*`.
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// Whether the regular expression matches `text` (an expression that does not compile matches
/// nothing).
pub fn regex_match(expr: &str, text: &str, case_insensitive: bool) -> bool {
    let full = if case_insensitive {
        format!("(?i){expr}")
    } else {
        expr.to_string()
    };
    regex::Regex::new(&full).is_ok_and(|re| re.is_match(text))
}

/// A text the wildcard pattern matches: each `*` becomes `star`, each `?` `q`.
pub fn concretize(pattern: &str, star: &str) -> String {
    let mut out = String::new();
    for c in pattern.chars() {
        match c {
            '*' => out.push_str(star),
            '?' => out.push('q'),
            c => out.push(c),
        }
    }
    out
}

/// A text the expression matches, found by reading it as a plain pattern (first alternative,
/// one pass of each repetition, the first member of each class), or `None` when that text does
/// not match it after all.
pub fn regex_witness(expr: &str) -> Option<String> {
    let chars: Vec<char> = expr.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let mut depth = 0usize;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '^' | '$' => {}
            '\\' => {
                i += 1;
                match chars.get(i) {
                    Some('d') => out.push('1'),
                    Some('w') => out.push('a'),
                    Some('s') => out.push(' '),
                    Some(other) => out.push(*other),
                    None => {}
                }
            }
            '.' => out.push('x'),
            '[' => {
                // The first literal member of the class.
                let mut j = i + 1;
                if chars.get(j) == Some(&'^') {
                    // A negated class: a character unlikely to be excluded.
                    out.push('x');
                } else if let Some(m) = chars.get(j) {
                    out.push(*m);
                }
                while j < chars.len() && chars[j] != ']' {
                    j += 1;
                }
                i = j;
            }
            '(' => {
                depth += 1;
                if chars.get(i + 1) == Some(&'?') && chars.get(i + 2) == Some(&':') {
                    i += 2;
                }
            }
            ')' => depth = depth.saturating_sub(1),
            '|' => {
                // Skip the other alternatives up to the group's end (or the expression's).
                let target = depth;
                let mut d = depth;
                let mut j = i + 1;
                while j < chars.len() {
                    match chars[j] {
                        '\\' => j += 1,
                        '(' => d += 1,
                        ')' if d == target => break,
                        ')' => d -= 1,
                        _ => {}
                    }
                    j += 1;
                }
                i = j;
                continue;
            }
            '*' | '+' | '?' => {}
            '{' => {
                while i < chars.len() && chars[i] != '}' {
                    i += 1;
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    regex_match(expr, &out, false).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn star_matches_any_run_including_none_and_slashes() {
        assert!(wildcard_match("/api/*", "/api/", false));
        assert!(wildcard_match("/api/*", "/api/v1/users", false));
        assert!(!wildcard_match("/api/*", "/api", false));
        assert!(wildcard_match("/*", "/", false));
        assert!(wildcard_match("*.example.com", "a.b.example.com", true));
        assert!(!wildcard_match("*.example.com", "example.com", true));
        assert!(wildcard_match("/a*b*c", "/aXbYbc", false));
    }

    #[test]
    fn question_mark_is_exactly_one_character() {
        assert!(wildcard_match("/v?", "/v1", false));
        assert!(!wildcard_match("/v?", "/v", false));
        assert!(!wildcard_match("/v?", "/v12", false));
    }

    #[test]
    fn case_folds_only_when_asked() {
        assert!(!wildcard_match("/API", "/api", false));
        assert!(wildcard_match("App.Example.com", "app.example.COM", true));
    }

    #[test]
    fn witnesses_match_their_expression() {
        assert_eq!(regex_witness("^/api/?(.*)$").as_deref(), Some("/api/x"));
        assert_eq!(
            regex_witness("^/(foo|bar)/\\d+$").as_deref(),
            Some("/foo/1")
        );
        assert_eq!(concretize("*.example.com", "w"), "w.example.com");
        assert_eq!(concretize("/a/?/*", ""), "/a/q/");
    }
}
