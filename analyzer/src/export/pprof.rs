//! `--to pprof`: gzipped `profile.proto`, the format of `go tool pprof`, Pyroscope, Parca,
//! Grafana and Google Cloud Profiler.
//!
//! The messages below are `profile.proto` (github.com/google/pprof, `proto/profile.proto`)
//! written as `prost` derives with the same field numbers and types, so the wire encoding
//! is prost's; only the fields this exporter fills are declared (a reader skips absent
//! fields, and an unknown field number is never written).
//!
//! What goes where:
//!
//! * sample types `samples/count` and `cpu/nanoseconds` (the default), period type
//!   `cpu/nanoseconds` with the sampling period; `time_nanos` from the newest gmon file's
//!   modification time (the end of the run); `duration_nanos` only when known;
//! * one mapping per object (the executable, and the shared libraries of a
//!   `PROFIL_RANGES=all` profile) at its link-time addresses, with its file name and GNU
//!   build-id, flagged as having functions, file names, line numbers and inline frames, so
//!   that a backend shows our symbols and can still re-symbolize server-side by build-id;
//! * one location per sampled piece of code, with its link-time address and its inline
//!   chain as several `line` entries (innermost first, as profile.proto orders them);
//! * functions with their demangled name, raw (system) name, file and start line;
//! * comments for what has no field: where the profile came from, the unsampled time and the
//!   truncated-stack count when known, and that the stacks are one frame deep when the
//!   profile has no call stacks.

use std::collections::HashMap;
use std::io::Write;

use prost::Message;

use super::model::StackProfile;
use crate::Result;

/// `perftools.profiles.Profile`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Profile {
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<Sample>,
    #[prost(message, repeated, tag = "3")]
    pub mapping: Vec<Mapping>,
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<Location>,
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<Function>,
    #[prost(string, repeated, tag = "6")]
    pub string_table: Vec<String>,
    #[prost(int64, tag = "9")]
    pub time_nanos: i64,
    #[prost(int64, tag = "10")]
    pub duration_nanos: i64,
    #[prost(message, optional, tag = "11")]
    pub period_type: Option<ValueType>,
    #[prost(int64, tag = "12")]
    pub period: i64,
    #[prost(int64, repeated, tag = "13")]
    pub comment: Vec<i64>,
    #[prost(int64, tag = "14")]
    pub default_sample_type: i64,
}

/// `ValueType`: a sample type and its unit (string-table indexes).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ValueType {
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

/// `Sample`: a stack (location ids, leaf first) and one value per sample type.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Sample {
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
}

/// `Mapping`: an object's address range, file and build-id.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Mapping {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(uint64, tag = "2")]
    pub memory_start: u64,
    #[prost(uint64, tag = "3")]
    pub memory_limit: u64,
    #[prost(uint64, tag = "4")]
    pub file_offset: u64,
    #[prost(int64, tag = "5")]
    pub filename: i64,
    #[prost(int64, tag = "6")]
    pub build_id: i64,
    #[prost(bool, tag = "7")]
    pub has_functions: bool,
    #[prost(bool, tag = "8")]
    pub has_filenames: bool,
    #[prost(bool, tag = "9")]
    pub has_line_numbers: bool,
    #[prost(bool, tag = "10")]
    pub has_inline_frames: bool,
}

/// `Location`: an address and its inline chain.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Location {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(uint64, tag = "2")]
    pub mapping_id: u64,
    #[prost(uint64, tag = "3")]
    pub address: u64,
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<Line>,
}

/// `Line`: a function and a line.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Line {
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    #[prost(int64, tag = "2")]
    pub line: i64,
}

/// `Function`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Function {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(int64, tag = "2")]
    pub name: i64,
    #[prost(int64, tag = "3")]
    pub system_name: i64,
    #[prost(int64, tag = "4")]
    pub filename: i64,
    #[prost(int64, tag = "5")]
    pub start_line: i64,
}

/// The string table (index 0 is the empty string, as profile.proto requires).
struct Strings {
    table: Vec<String>,
    ids: HashMap<String, i64>,
}

impl Strings {
    fn new() -> Strings {
        Strings {
            table: vec![String::new()],
            ids: HashMap::from([(String::new(), 0)]),
        }
    }
    fn id(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.table.len() as i64;
        self.table.push(s.to_owned());
        self.ids.insert(s.to_owned(), i);
        i
    }
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The profile as a `profile.proto` message.
pub fn to_proto(p: &StackProfile) -> Profile {
    let mut s = Strings::new();
    let sample_type = vec![
        ValueType {
            r#type: s.id("samples"),
            unit: s.id("count"),
        },
        ValueType {
            r#type: s.id("cpu"),
            unit: s.id("nanoseconds"),
        },
    ];
    let period_ns = p.period_ns();
    let mapping: Vec<Mapping> = p
        .objects
        .iter()
        .enumerate()
        .map(|(i, o)| Mapping {
            id: i as u64 + 1,
            memory_start: o.start,
            memory_limit: o.limit,
            file_offset: o.offset,
            filename: s.id(&o.path),
            build_id: o.build_id.as_deref().map_or(0, |b| s.id(b)),
            has_functions: true,
            has_filenames: true,
            has_line_numbers: true,
            has_inline_frames: true,
        })
        .collect();
    let function: Vec<Function> = p
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| Function {
            id: i as u64 + 1,
            name: s.id(&f.name),
            // A name of ours (`<sort+0x14550-0x14710>`, `<outside known functions>`) is no
            // symbol: without a system name, pprof keeps it as it is (it strips `<…>` from a
            // name equal to its system name, taking it for C++ template arguments).
            system_name: if f.raw_name.starts_with('<') {
                0
            } else {
                s.id(&f.raw_name)
            },
            filename: f.file.as_deref().map_or(0, |x| s.id(x)),
            start_line: to_i64(f.start_line),
        })
        .collect();
    let location: Vec<Location> = p
        .locations
        .iter()
        .enumerate()
        .map(|(i, l)| Location {
            id: i as u64 + 1,
            mapping_id: l.object.map_or(0, |o| o as u64 + 1),
            address: l.address,
            line: l
                .lines
                .iter()
                .map(|x| Line {
                    function_id: x.function as u64 + 1,
                    line: to_i64(x.line),
                })
                .collect(),
        })
        .collect();
    let sample: Vec<Sample> = p
        .samples
        .iter()
        .map(|x| Sample {
            location_id: x.locations.iter().map(|&l| l as u64 + 1).collect(),
            value: vec![
                to_i64(x.count),
                (x.samples * period_ns as f64).round() as i64,
            ],
        })
        .collect();
    let mut comments = vec![format!(
        "profil-report export of {} from {}: {} samples at {} Hz",
        p.executable,
        p.gmon_files.join(", "),
        p.total_samples,
        p.hz
    )];
    if !p.has_call_stacks {
        comments.push(
            "no call stacks recorded: each sample is the sampled function with its inline chain"
                .into(),
        );
    }
    if let Some(u) = p.unsampled_seconds {
        comments.push(format!("unsampled CPU time: {u} s"));
    }
    if let Some(t) = p.truncated_stacks {
        comments.push(format!("truncated stacks: {t}"));
    }
    let comment = comments.iter().map(|c| s.id(c)).collect();
    let period_type = Some(ValueType {
        r#type: s.id("cpu"),
        unit: s.id("nanoseconds"),
    });
    let default_sample_type = s.id("cpu");
    Profile {
        sample_type,
        sample,
        mapping,
        location,
        function,
        string_table: s.table,
        time_nanos: p.written_ns.map_or(0, to_i64),
        duration_nanos: p.duration_ns.map_or(0, to_i64),
        period_type,
        period: to_i64(period_ns),
        comment,
        default_sample_type,
    }
}

/// Write the gzipped profile.
pub fn write(p: &StackProfile, out: &mut impl Write) -> Result<()> {
    let bytes = to_proto(p).encode_to_vec();
    let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
    gz.write_all(&bytes)?;
    gz.finish()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_table_starts_empty_and_interns() {
        let mut s = Strings::new();
        assert_eq!(s.id(""), 0);
        assert_eq!(s.id("a"), 1);
        assert_eq!(s.id("b"), 2);
        assert_eq!(s.id("a"), 1);
        assert_eq!(s.table, vec!["", "a", "b"]);
    }
}
