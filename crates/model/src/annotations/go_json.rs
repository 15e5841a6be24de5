//! JSON decoding with Go `encoding/json`'s key rules, as upstream decodes every JSON annotation:
//! an object key matches a struct field exactly or, failing that, case-insensitively (Go's
//! fold: ASCII case plus `ſ`/`K`); unknown keys are ignored; repeated keys apply in document
//! order (the last scalar wins, repeated objects merge as Go decodes into the same value); `null`
//! leaves a field at its zero value.
//!
//! The text is parsed into an order- and duplicate-preserving tree first, then fed to serde
//! through a deserializer that learns each struct's field names from `deserialize_struct`, so
//! every derived type gets the rules without per-type code.

use std::fmt;

use serde::de::value::{MapAccessDeserializer, MapDeserializer, SeqDeserializer};
use serde::de::{self, DeserializeOwned, Deserializer, IntoDeserializer, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::{Error, Number};

/// Decodes `raw` into `T` the way Go's `json.Unmarshal` fills the matching struct.
pub fn from_str<T: DeserializeOwned>(raw: &str) -> Result<T, Error> {
    let tree: Json = serde_json::from_str(raw)?;
    T::deserialize(tree)
}

/// A JSON value keeping object entries in document order, duplicates included.
#[derive(Debug, Clone, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl<'de> de::Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TreeVisitor)
    }
}

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json, E> {
        Number::from_f64(v)
            .map(Json::Number)
            .ok_or_else(|| E::custom("number out of range"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Json::Object(entries))
    }
}

/// Go's `foldName` for one character: ASCII upper case, and the two non-ASCII letters whose
/// fold orbit reaches ASCII (long s, Kelvin sign). Other characters stand for themselves, which
/// is enough since every field name here is ASCII.
fn fold(c: char) -> char {
    match c {
        '\u{17F}' => 'S',
        '\u{212A}' => 'K',
        c => c.to_ascii_uppercase(),
    }
}

fn fold_eq(a: &str, b: &str) -> bool {
    a.chars().map(fold).eq(b.chars().map(fold))
}

/// Renames each key to the field it decodes into (exact match first, then folded), applying
/// repeats in order: a later object merges into an earlier one, anything else replaces it,
/// `null` resets the field to its default.
fn match_fields(entries: Vec<(String, Json)>, fields: &[&str]) -> Vec<(String, Json)> {
    let mut out: Vec<(String, Json)> = Vec::new();
    for (key, value) in entries {
        let name = match fields.iter().find(|f| **f == key) {
            Some(_) => key,
            None => fields
                .iter()
                .find(|f| fold_eq(f, &key))
                .map_or(key, |f| f.to_string()),
        };
        let earlier = out.iter().position(|(k, _)| *k == name);
        match (earlier, value) {
            (Some(i), Json::Null) => {
                out.remove(i);
            }
            (None, Json::Null) => {}
            (Some(i), Json::Object(more)) => match &mut out[i].1 {
                Json::Object(have) => have.extend(more),
                slot => *slot = Json::Object(more),
            },
            (Some(i), value) => out[i].1 = value,
            (None, value) => out.push((name, value)),
        }
    }
    out
}

fn visit_map<'de, V: Visitor<'de>>(
    entries: Vec<(String, Json)>,
    visitor: V,
) -> Result<V::Value, Error> {
    let mut access = MapDeserializer::new(entries.into_iter());
    let out = visitor.visit_map(&mut access)?;
    access.end()?;
    Ok(out)
}

impl<'de> IntoDeserializer<'de, Error> for Json {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

impl<'de> Deserializer<'de> for Json {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Json::Null => visitor.visit_unit(),
            Json::Bool(b) => visitor.visit_bool(b),
            Json::Number(n) => n.deserialize_any(visitor),
            Json::String(s) => visitor.visit_string(s),
            Json::Array(items) => {
                let mut access = SeqDeserializer::new(items.into_iter());
                let out = visitor.visit_seq(&mut access)?;
                access.end()?;
                Ok(out)
            }
            Json::Object(entries) => visit_map(entries, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Json::Null => visitor.visit_none(),
            other => visitor.visit_some(other),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self {
            Json::Object(entries) => visit_map(match_fields(entries, fields), visitor),
            other => other.deserialize_any(visitor),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self {
            Json::String(s) => visitor.visit_enum(s.into_deserializer()),
            Json::Object(entries) => {
                MapAccessDeserializer::new(MapDeserializer::new(entries.into_iter()))
                    .deserialize_enum("", &[], visitor)
            }
            other => other.deserialize_any(visitor),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map identifier
    }
}

#[cfg(test)]
#[path = "go_json_tests.rs"]
mod tests;
