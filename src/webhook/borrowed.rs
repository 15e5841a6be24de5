//! Typed, borrowed reading of AdmissionReview bodies for the webhooks in every pod's path: the
//! envelope fields and the object's few fields a handler reads, as slices of the body, everything
//! else skipped unparsed (no JSON tree, no owned strings).
//!
//! A body is read here only when it is an AdmissionReview the generic decoder ([`super::review`])
//! accepts with the same values: any other shape (a wrong kind, no uid, a field of another type
//! than the view expects, a duplicate key, text that is not UTF-8, ...) gives `None`, and the
//! generic path answers it exactly as before.

use super::review::Operation;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::borrow::Cow;
use std::fmt;

/// A JSON string, borrowed from the body unless it holds escapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Str<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'de> Visitor<'de> for Text {
            type Value = Cow<'de, str>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v))
            }
        }
        d.deserialize_str(Text).map(Str)
    }
}

impl Str<'_> {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A JSON object of strings (labels, annotations) in document order. A key given twice is looked
/// up as its last value, as the generic decoder keeps it.
#[derive(Debug, Default, PartialEq)]
pub struct Strings<'a>(pub Vec<(Str<'a>, Str<'a>)>);

impl<'de: 'a, 'a> Deserialize<'de> for Strings<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Pairs<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Pairs<'a> {
            type Value = Strings<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of strings")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut pairs = Vec::with_capacity(map.size_hint().unwrap_or(4));
                while let Some(pair) = map.next_entry()? {
                    pairs.push(pair);
                }
                Ok(Strings(pairs))
            }
        }
        d.deserialize_map(Pairs(std::marker::PhantomData))
    }
}

impl Strings<'_> {
    /// The value of `key` (its last, if given twice).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k.as_str() == key)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Deserialize)]
struct Envelope<'a, O> {
    #[serde(rename = "apiVersion", borrow)]
    api_version: Option<Str<'a>>,
    #[serde(borrow)]
    kind: Option<Str<'a>>,
    #[serde(borrow)]
    request: Option<Request<'a, O>>,
}

#[derive(Deserialize)]
struct Request<'a, O> {
    #[serde(borrow)]
    uid: Option<Str<'a>>,
    #[serde(borrow)]
    operation: Option<Str<'a>>,
    #[serde(borrow)]
    namespace: Option<Str<'a>>,
    object: Option<O>,
}

/// An AdmissionReview read with its object as the handler's view `O`.
pub struct Review<'a, O> {
    pub uid: Cow<'a, str>,
    pub operation: Operation,
    /// `request.namespace`, when not empty.
    pub namespace: Option<Cow<'a, str>>,
    /// `request.object`, when present and not null.
    pub object: Option<O>,
}

/// Reads `body` as an AdmissionReview v1 whose object is an `O`, or `None` when it is anything
/// the generic decoder might see differently (see the module note). Fields of the body outside
/// the view are skipped, checked for JSON syntax only.
pub fn read<'a, O: Deserialize<'a>>(body: &'a [u8]) -> Option<Review<'a, O>> {
    // Skipped strings are not checked for UTF-8 by the parser; the generic decoder refuses such
    // a body, so it must not be answered here.
    let text = std::str::from_utf8(body).ok()?;
    let envelope: Envelope<'a, O> = serde_json::from_str(text).ok()?;
    let right_kind = envelope.kind?.as_str() == "AdmissionReview"
        && envelope.api_version?.as_str() == "admission.k8s.io/v1";
    let request = envelope.request.filter(|_| right_kind)?;
    let uid = request.uid.map(|u| u.0).filter(|u| !u.is_empty())?;
    Some(Review {
        uid,
        operation: Operation::from_text(request.operation.as_ref().map(Str::as_str)),
        namespace: request.namespace.map(|n| n.0).filter(|n| !n.is_empty()),
        object: request.object,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A view reading only `object.a`.
    #[derive(Deserialize, Debug)]
    struct A<'a> {
        #[serde(borrow)]
        a: Option<Str<'a>>,
    }

    fn review(request: &str) -> String {
        format!(
            r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{request}}}"#
        )
    }

    #[test]
    fn reads_the_envelope_borrowed_and_skips_the_rest() {
        let body = review(
            r#"{"uid":"u-1","operation":"CREATE","namespace":"ns","oldObject":{"deep":[1,{"x":null}]},"object":{"z":[true],"a":"plain"}}"#,
        );
        let r = read::<A>(body.as_bytes()).expect("a review");
        assert_eq!(
            (&*r.uid, r.operation, r.namespace.as_deref()),
            ("u-1", Operation::Create, Some("ns"))
        );
        let a = r.object.and_then(|o| o.a).expect("object.a");
        assert!(matches!(a.0, Cow::Borrowed("plain")), "{a:?}");
        // Escapes are decoded (into an owned string).
        let body = review(r#"{"uid":"u","operation":"CREATE","object":{"a":"w\u0065b"}}"#);
        let r = read::<A>(body.as_bytes()).unwrap();
        assert_eq!(r.object.unwrap().a.unwrap().as_str(), "web");
        assert_eq!(r.namespace, None);
        // Empty namespace and null object read as absent, as the generic decoder has them.
        let body = review(r#"{"uid":"u","operation":"DELETE","namespace":"","object":null}"#);
        let r = read::<A>(body.as_bytes()).unwrap();
        assert_eq!(
            (r.operation, r.namespace, r.object.is_none()),
            (Operation::Delete, None, true)
        );
    }

    #[test]
    fn leaves_every_other_shape_to_the_generic_decoder() {
        let others = [
            String::new(),
            "{not json".into(),
            r#"{"apiVersion":"v1","kind":"Pod","request":{"uid":"x"}}"#.into(),
            r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#.into(),
            review(r#"{"operation":"CREATE"}"#),
            review(r#"{"uid":"","operation":"CREATE"}"#),
            review(r#"{"uid":7,"operation":"CREATE"}"#),
            review(r#"{"uid":"u","operation":5}"#),
            review(r#"{"uid":"u","namespace":["ns"]}"#),
            review(r#"{"uid":"u","object":{"a":1}}"#),
            review(r#"{"uid":"u","object":"a pod"}"#),
            // A duplicate key: the generic decoder keeps the last one.
            review(r#"{"uid":"u","uid":"v"}"#),
            review(r#"{"uid":"u"}"#) + "trailing",
        ];
        for body in &others {
            assert!(read::<A>(body.as_bytes()).is_none(), "{body}");
        }
        // Text that is not UTF-8 in a skipped field: the generic decoder refuses it.
        let mut body = review(r#"{"uid":"u","x":"??"}"#).into_bytes();
        let at = body.iter().position(|&b| b == b'?').unwrap();
        body[at] = 0xff;
        assert!(read::<A>(&body).is_none());
    }

    #[test]
    fn strings_look_up_the_last_value_of_a_key() {
        let s: Strings = serde_json::from_str(r#"{"app":"a","tier":"t","app":"b"}"#).unwrap();
        assert_eq!(
            (s.get("app"), s.get("tier"), s.get("x")),
            (Some("b"), Some("t"), None)
        );
        assert!(serde_json::from_str::<Strings>(r#"{"app":1}"#).is_err());
    }
}
