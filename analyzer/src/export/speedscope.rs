//! `--to speedscope`: speedscope's JSON file format (`https://www.speedscope.app/file-format-schema.json`),
//! one `sampled` profile over shared frames.
//!
//! A frame is a function: its demangled name, its file and its start line (speedscope
//! groups by frame, so a frame per source line would split every function into pieces).
//! Stacks are written root first, as speedscope reads them; each has its weight in seconds
//! (fractional where a bin was shared). Identical stacks are summed. The format has no place
//! for the unsampled time or the truncated-stack count other than the profile's name, so
//! they are named there when known.

use std::collections::HashMap;
use std::io::Write;

use serde::Serialize;

use super::model::StackProfile;
use crate::Result;

/// The file.
#[derive(Serialize)]
struct File<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    shared: Shared<'a>,
    profiles: Vec<Profile>,
    name: String,
    #[serde(rename = "activeProfileIndex")]
    active_profile_index: u32,
    exporter: String,
}

#[derive(Serialize)]
struct Shared<'a> {
    frames: Vec<Frame<'a>>,
}

#[derive(Serialize)]
struct Frame<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u64>,
}

#[derive(Serialize)]
struct Profile {
    #[serde(rename = "type")]
    kind: &'static str,
    name: String,
    unit: &'static str,
    #[serde(rename = "startValue")]
    start_value: f64,
    #[serde(rename = "endValue")]
    end_value: f64,
    samples: Vec<Vec<usize>>,
    weights: Vec<f64>,
}

/// Write the speedscope file.
pub fn write(p: &StackProfile, out: &mut impl Write) -> Result<()> {
    let frames: Vec<Frame<'_>> = p
        .functions
        .iter()
        .map(|f| Frame {
            name: &f.name,
            file: f.file.as_deref(),
            line: (f.start_line > 0).then_some(f.start_line),
        })
        .collect();
    let mut index: HashMap<Vec<usize>, usize> = HashMap::new();
    let mut samples: Vec<Vec<usize>> = Vec::new();
    let mut weights: Vec<f64> = Vec::new();
    for s in &p.samples {
        if s.samples <= 0.0 {
            continue;
        }
        let mut stack: Vec<usize> = p.frames(s).map(|l| l.function).collect();
        stack.reverse();
        let w = p.seconds(s.samples);
        match index.get(&stack) {
            Some(&i) => weights[i] += w,
            None => {
                index.insert(stack.clone(), samples.len());
                samples.push(stack);
                weights.push(w);
            }
        }
    }
    let total: f64 = weights.iter().sum();
    let mut name = format!(
        "{} ({} samples at {} Hz)",
        p.executable, p.total_samples, p.hz
    );
    if let Some(u) = p.unsampled_seconds {
        name += &format!(", unsampled {u} s");
    }
    if let Some(t) = p.truncated_stacks {
        name += &format!(", {t} truncated stacks");
    }
    let file = File {
        schema: "https://www.speedscope.app/file-format-schema.json",
        shared: Shared { frames },
        profiles: vec![Profile {
            kind: "sampled",
            name: name.clone(),
            unit: "seconds",
            start_value: 0.0,
            end_value: total,
            samples,
            weights,
        }],
        name,
        active_profile_index: 0,
        exporter: format!("profil-report {}", env!("CARGO_PKG_VERSION")),
    };
    serde_json::to_writer(&mut *out, &file)
        .map_err(|e| crate::Error::input(format!("cannot write JSON: {e}")))?;
    writeln!(out)?;
    Ok(())
}
