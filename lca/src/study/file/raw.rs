//! The study file as written: what TOML gives before any check, with the places of the values
//! an error names (`Spanned`).

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Raw {
    pub(super) name: Spanned<String>,
    pub(super) out: Option<String>,
    pub(super) datafile: Option<String>,
    pub(super) machine: Option<String>,
    pub(super) factors: Spanned<Ordered<Spanned<String>>>,
    pub(super) design: Option<Spanned<String>>,
    pub(super) replicates: Option<Spanned<i64>>,
    pub(super) timeout_s: Option<Spanned<f64>>,
    pub(super) max_failures: Option<Spanned<i64>>,
    pub(super) validate: Option<RawValidate>,
    pub(super) precision: Option<Spanned<RawPrecision>>,
    pub(super) decide: Option<Spanned<RawDecide>>,
    pub(super) dispatch: Option<Spanned<String>>,
    pub(super) slurm: Option<RawSlurm>,
    pub(super) whatif: Option<Spanned<RawWhatif>>,
    pub(super) shapes: Option<Spanned<Ordered<Spanned<RawShapes>>>>,
    #[serde(default)]
    pub(super) implementation: Vec<Spanned<RawImplementation>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWhatif {
    #[serde(rename = "where")]
    pub(super) conditions: String,
    pub(super) demand: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSlurm {
    pub(super) partition: Option<String>,
    pub(super) account: Option<String>,
    pub(super) time: Option<String>,
    pub(super) max_running: Option<Spanned<i64>>,
    #[serde(default)]
    pub(super) options: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDecide {
    pub(super) budget: Spanned<i64>,
    pub(super) per_round: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPrecision {
    pub(super) target: Spanned<f64>,
    pub(super) max_replicates: Spanned<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawValidate {
    pub(super) grid: Option<Spanned<Ordered<Spanned<String>>>>,
    #[serde(default)]
    pub(super) points: Vec<Spanned<BTreeMap<String, f64>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawImplementation {
    pub(super) name: Spanned<String>,
    pub(super) command: Spanned<Vec<Spanned<String>>>,
    pub(super) timeout_s: Option<Spanned<f64>>,
    pub(super) ntasks: Option<Spanned<toml::Value>>,
    pub(super) cpus_per_task: Option<Spanned<toml::Value>>,
    pub(super) nodes: Option<Spanned<toml::Value>>,
    pub(super) mem: Option<Spanned<toml::Value>>,
}

/// A category's entry of `[shapes]`: a table of `factor = "shape"` (each value with its
/// place), or something else, kept so that the check can name the field at fault.
#[derive(Debug)]
pub(super) enum RawShapes {
    /// The factors' entries, in the file's order.
    Table(Vec<(String, Spanned<toml::Value>)>),
    /// Not a table.
    Other,
}

impl<'de> Deserialize<'de> for RawShapes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ShapesVisitor;
        impl<'de> Visitor<'de> for ShapesVisitor {
            type Value = RawShapes;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table of factor = \"shape\"")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawShapes, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Spanned<toml::Value>>()? {
                    entries.push((k, v));
                }
                Ok(RawShapes::Table(entries))
            }
            fn visit_str<E>(self, _: &str) -> Result<RawShapes, E> {
                Ok(RawShapes::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<RawShapes, E> {
                Ok(RawShapes::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<RawShapes, E> {
                Ok(RawShapes::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<RawShapes, E> {
                Ok(RawShapes::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<RawShapes, E> {
                Ok(RawShapes::Other)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<RawShapes, A::Error> {
                while seq.next_element::<toml::Value>()?.is_some() {}
                Ok(RawShapes::Other)
            }
        }
        deserializer.deserialize_any(ShapesVisitor)
    }
}

/// A table whose keys keep the file's order.
#[derive(Debug)]
pub(super) struct Ordered<V>(pub(super) Vec<(String, V)>);

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Ordered<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OrderedVisitor<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for OrderedVisitor<V> {
            type Value = Ordered<V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered<V>, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, V>()? {
                    entries.push((k, v));
                }
                Ok(Ordered(entries))
            }
        }
        deserializer.deserialize_map(OrderedVisitor(std::marker::PhantomData))
    }
}
