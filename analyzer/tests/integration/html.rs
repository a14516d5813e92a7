//! The interactive HTML report (issue 27) in a real browser: headless Chromium (Debian's
//! `chromium`, which `.ci/run` installs) driven through `headless_chrome`. One browser for
//! the module, one tab per test; the pages are made by the real commands on real runs: the
//! demo (`profil-report html`), a `run --html` of a process tree with sampled stacks (fixtures/
//! tree/chain.c), and a `diff --html`.
//!
//! When Chromium is not installed every test says so on stderr and passes: the browser is the
//! thing under test, and CI installs it.
//!
//! `PROFIL_BLESS=1 cargo test -p profil-report --test integration html::readme_screenshot`
//! rewrites the README's screenshot (fixtures/readme/run-html.png).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use headless_chrome::browser::tab::point::Point;
use headless_chrome::protocol::cdp::types::Event;
use headless_chrome::protocol::cdp::{Emulation, Network, Page};
use headless_chrome::{Browser, LaunchOptions, Tab};
use serde_json::Value;

use crate::golden;
use crate::ux_support::{gcc, install_exec, profil_report_in, root, show, text, TempDir, BIN};

/// Chromium's executable, if installed.
fn chromium() -> Option<PathBuf> {
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

/// The module's one browser (None, with a message, when Chromium is not installed).
fn browser() -> Option<&'static Browser> {
    static BROWSER: OnceLock<Option<Browser>> = OnceLock::new();
    BROWSER
        .get_or_init(|| {
            let Some(path) = chromium() else {
                eprintln!("html: skipped: Chromium is not installed (apt-get install chromium)");
                return None;
            };
            let opts = LaunchOptions::default_builder()
                .path(Some(path))
                .sandbox(false)
                .window_size(Some((1280, 800)))
                .idle_browser_timeout(Duration::from_secs(600))
                .build()
                .expect("launch options");
            Some(Browser::new(opts).expect("Chromium starts"))
        })
        .as_ref()
}

/// A page open in a tab of the browser, with what it logged and requested. The tests take
/// turns (a background tab neither paints nor gets input): the guard is held while it is
/// open, and the tab closes with it.
struct Opened {
    _turn: std::sync::MutexGuard<'static, ()>,
    tab: Arc<Tab>,
    /// Console errors, exceptions and log entries of level error.
    errors: Arc<Mutex<Vec<String>>>,
    /// URLs of network requests other than the page itself.
    requests: Arc<Mutex<Vec<String>>>,
}

impl Opened {
    /// Evaluate `js` (a promise is awaited) and return its value as JSON.
    fn eval(&self, js: &str) -> Value {
        let wrapped = format!("(async () => JSON.stringify(await (async () => {{ {js} }})()))()");
        let r = self.tab.evaluate(&wrapped, true).expect("evaluate");
        match r.value {
            Some(Value::String(s)) => serde_json::from_str(&s).unwrap_or(Value::Null),
            _ => Value::Null,
        }
    }

    /// The page's viewport: `width`×`height` CSS pixels at one device pixel each.
    fn viewport(&self, width: u32, height: u32, mobile: bool) {
        self.tab
            .call_method(Emulation::SetDeviceMetricsOverride {
                width,
                height,
                device_scale_factor: 1.0,
                mobile,
                scale: None,
                screen_width: None,
                screen_height: None,
                position_x: None,
                position_y: None,
                dont_set_visible_size: None,
                screen_orientation: None,
                viewport: None,
                display_feature: None,
                device_posture: None,
            })
            .expect("metrics");
        self.wait_for(&format!("document.documentElement.clientWidth <= {width}"));
    }

    /// Click at page coordinates.
    fn click(&self, x: f64, y: f64) {
        self.tab.click_point(Point { x, y }).expect("click");
    }

    /// Click the middle of the element `selector` (scrolled into view) with the mouse.
    fn click_on(&self, selector: &str) {
        let at = self.eval(&format!(
            "const e = document.querySelector('{selector}'); e.scrollIntoView({{block: 'center'}}); \
             const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2];"
        ));
        let at: Vec<f64> = serde_json::from_value(at).unwrap_or_else(|_| panic!("{selector}"));
        self.click(at[0], at[1]);
    }

    /// Type `s` into the input `selector`.
    fn type_into(&self, selector: &str, s: &str) {
        self.click_on(selector);
        self.tab.type_str(s).expect("type");
    }

    /// Wait (bounded) until `js` is true.
    fn wait_for(&self, js: &str) {
        for _ in 0..400 {
            if self.eval(&format!("return !!({js});")) == Value::Bool(true) {
                return;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("never true: {js}");
    }

    /// The text of the cells of table `id`'s body rows.
    fn rows(&self, id: &str) -> Vec<Vec<String>> {
        let v = self.eval(&format!(
            "return [...document.getElementById('{id}').tBodies[0].rows].map(r => [...r.cells].map(c => c.textContent));"
        ));
        serde_json::from_value(v).unwrap_or_default()
    }
}

impl Drop for Opened {
    fn drop(&mut self) {
        let _ = self.tab.close(false);
    }
}

/// Open `file` in a new tab, in front, and wait until its script has read the data.
fn open(b: &Browser, file: &Path) -> Opened {
    static TURN: Mutex<()> = Mutex::new(());
    let turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let tab = b.new_tab().expect("tab");
    tab.set_default_timeout(Duration::from_secs(15));
    tab.activate().expect("activate");
    let errors = Arc::new(Mutex::new(Vec::new()));
    let requests = Arc::new(Mutex::new(Vec::new()));
    let url = format!("file://{}", file.display());
    {
        let (errors, requests, url) = (errors.clone(), requests.clone(), url.clone());
        tab.add_event_listener(Arc::new(move |e: &Event| match e {
            Event::RuntimeExceptionThrown(x) => errors
                .lock()
                .unwrap()
                .push(format!("exception: {:?}", x.params.exception_details.text)),
            Event::RuntimeConsoleAPICalled(c) => {
                let kind = format!("{:?}", c.params.Type).to_lowercase();
                if kind.contains("error") || kind.contains("warn") || kind.contains("assert") {
                    errors
                        .lock()
                        .unwrap()
                        .push(format!("console {kind}: {:?}", c.params.args));
                }
            }
            Event::LogEntryAdded(l) => {
                let level = format!("{:?}", l.params.entry.level).to_lowercase();
                if level.contains("error") || level.contains("warn") {
                    errors
                        .lock()
                        .unwrap()
                        .push(format!("log: {}", l.params.entry.text));
                }
            }
            Event::NetworkRequestWillBeSent(r) if r.params.request.url != url => {
                requests.lock().unwrap().push(r.params.request.url.clone());
            }
            _ => {}
        }))
        .expect("listener");
    }
    tab.enable_runtime().expect("runtime");
    tab.enable_log().expect("log");
    tab.call_method(Network::Enable {
        max_total_buffer_size: None,
        max_resource_buffer_size: None,
        max_post_data_size: None,
        report_direct_socket_traffic: None,
        enable_durable_messages: None,
    })
    .expect("network");
    tab.navigate_to(&url).expect("navigate");
    tab.wait_until_navigated().expect("navigated");
    let o = Opened {
        _turn: turn,
        tab,
        errors,
        requests,
    };
    o.wait_for("window.profil && window.profil.ready");
    o
}

/// A profile of the demo workload in `dir` (demo, demo.c, gmon.out).
fn demo(dir: &TempDir) {
    let out = Command::new(BIN)
        .args(["demo", "--no-gprof", "--scale", "3", "--dir"])
        .arg(dir.path())
        .env_remove("PROFIL_HZ")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
}

/// `profil-report ARGS` in `dir`; its stdout.
fn ours(dir: &Path, args: &[&str]) -> String {
    let out = profil_report_in(dir).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", show(&out));
    text(&out.stdout)
}

/// The demo's page and its `--json` report.
fn demo_page(dir: &TempDir) -> (PathBuf, Value) {
    demo(dir);
    ours(dir.path(), &["html", "-o", "r.html", "gmon.out", "demo"]);
    let json = ours(dir.path(), &["--json", "gmon.out", "demo"]);
    (dir.join("r.html"), serde_json::from_str(&json).unwrap())
}

/// The demo's page open in the browser (None without one), its directory and `--json` report.
fn demo_opened(tag: &str) -> Option<(TempDir, Opened, Value)> {
    let b = browser()?;
    let dir = TempDir::new(tag);
    let (page, json) = demo_page(&dir);
    let o = open(b, &page);
    Some((dir, o, json))
}

/// `run --html r.html sh -c './a 1; ./b 3'` in `dir`, with chain.c built as `a` and `b`
/// (`gcc -g -o a a.c` in `dir`: the debug information names the source `a.c`, relative);
/// the text report on stderr.
fn tree_page(dir: &TempDir) -> (PathBuf, String) {
    std::fs::copy(root().join("fixtures/tree/chain.c"), dir.join("a.c")).unwrap();
    let cc = Command::new("gcc")
        .args(["-O2", "-g", "-o", "a", "a.c"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(cc.status.success(), "{}", show(&cc));
    // (Not fs::copy: a descriptor open for writing here would make the exec fail.)
    install_exec(&dir.join("a"), &dir.join("b"));
    let out = profil_report_in(dir.path())
        .args(["run", "--html", "r.html", "sh", "-c", "./a 1; ./b 3"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    (dir.join("r.html"), text(&out.stderr))
}

/// Every row of the page's function table is the `--json` report's row, in order, and the
/// totals under it are the report's.
fn assert_table_is_the_reports(o: &Opened, json: &Value) {
    let want = json["rows"].as_array().unwrap();
    let rows = o.rows("functions");
    assert_eq!(rows.len(), want.len(), "{rows:?}");
    let names: Vec<String> = o
        .eval("return [...document.querySelectorAll('#functions tbody tr')].map(r => r._row ? (r._row.name ?? r._row.function) : null);")
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap_or("").to_owned())
        .collect();
    for (i, w) in want.iter().enumerate() {
        let name = w
            .get("name")
            .or(w.get("function"))
            .unwrap()
            .as_str()
            .unwrap();
        assert_eq!(names[i], name, "row {i}");
        assert!(rows[i].iter().any(|c| c == name), "row {i}: {:?}", rows[i]);
        assert!(rows[i].contains(&format!("{:.2}", w["percent"].as_f64().unwrap())));
    }
    let totals = o.eval("const t = document.getElementById('totals').dataset; return [+t.rows, +t.samples, +t.seconds];");
    let t: Vec<f64> = serde_json::from_value(totals).unwrap();
    assert_eq!(t[0] as usize, want.len());
    let samples = json["total_samples"].as_f64().unwrap();
    let seconds = json["total_seconds"].as_f64().unwrap();
    assert!(
        (t[1] - samples).abs() < 1e-6 * samples.max(1.0),
        "{t:?} {json}"
    );
    assert!((t[2] - seconds).abs() < 1e-6 * seconds.max(1.0), "{t:?}");
}

/// The header's figure `label`.
fn figure(o: &Opened, label: &str) -> String {
    o.eval(&format!(
        "const d = document.querySelector('dd[data-figure=\"{label}\"]'); return d ? d.textContent : null;"
    ))
    .as_str()
    .unwrap_or_default()
    .to_owned()
}

#[test]
fn the_demo_page_loads_without_errors_or_requests_and_its_table_is_the_json_reports() {
    let Some((dir, o, json)) = demo_opened("html-demo") else {
        return;
    };
    assert!(o.errors.lock().unwrap().is_empty(), "{:?}", o.errors);
    assert!(o.requests.lock().unwrap().is_empty(), "{:?}", o.requests);
    let resources = o.eval("return performance.getEntriesByType('resource').length;");
    assert_eq!(resources, Value::from(0));
    assert_table_is_the_reports(&o, &json);
    // The header's figures are the text report's.
    let report = ours(dir.path(), &["gmon.out", "demo"]);
    let head = report.lines().next().unwrap();
    for label in ["samples", "rate", "CPU time"] {
        let v = figure(&o, label);
        assert!(
            !v.is_empty() && head.contains(&v),
            "{label} = {v:?}, not in {head}"
        );
    }
}

#[test]
fn sorting_and_filtering_the_table() {
    let Some((_dir, o, json)) = demo_opened("html-sort") else {
        return;
    };
    let mut by_self: Vec<(f64, String)> = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["self_seconds"].as_f64().unwrap(),
                r["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    by_self.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap().then(a.1.cmp(&b.1)));
    let name_column = |o: &Opened| -> Vec<String> {
        serde_json::from_value(o.eval(
            "return [...document.querySelectorAll('#functions tbody tr')].map(r => r._row.name);",
        ))
        .unwrap()
    };
    // By name, ascending, then descending on a second click.
    o.click_on("#functions th[data-key=name] button");
    let mut names: Vec<String> = by_self.iter().map(|r| r.1.clone()).collect();
    names.sort();
    assert_eq!(name_column(&o), names);
    o.click_on("#functions th[data-key=name] button");
    names.reverse();
    assert_eq!(name_column(&o), names);
    // By self time: largest first, then smallest first.
    o.click_on("#functions th[data-key=self] button");
    let selfs: Vec<f64> = serde_json::from_value(o.eval(
        "return [...document.querySelectorAll('#functions tbody tr')].map(r => r._row.self_seconds);",
    ))
    .unwrap();
    assert!(selfs.windows(2).all(|w| w[0] >= w[1]), "{selfs:?}");
    o.click_on("#functions th[data-key=self] button");
    let selfs: Vec<f64> = serde_json::from_value(o.eval(
        "return [...document.querySelectorAll('#functions tbody tr')].map(r => r._row.self_seconds);",
    ))
    .unwrap();
    assert!(selfs.windows(2).all(|w| w[0] <= w[1]), "{selfs:?}");
    // A filter keeps the matching rows only.
    o.type_into("#filter", "hash");
    let left = name_column(&o);
    assert_eq!(left, vec!["hash_keys".to_owned()]);
    let rows = o.eval("return +document.getElementById('totals').dataset.rows;");
    assert_eq!(rows, Value::from(1));
}

#[test]
fn the_flame_graph_search_reports_the_matched_share_and_a_click_zooms() {
    let Some((_dir, o, json)) = demo_opened("html-flame") else {
        return;
    };
    let row = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "parse_records")
        .unwrap();
    let share = row["samples"].as_f64().unwrap() / json["total_samples"].as_f64().unwrap();
    o.type_into("#search", "parse_rec");
    o.wait_for("window.profil.matchShare !== null");
    let got = o.eval("return window.profil.matchShare;").as_f64().unwrap();
    // The stacks count whole samples (a split bin rounded within the bin): within two samples.
    let n = json["total_samples"].as_f64().unwrap();
    assert!((got - share).abs() <= 2.0 / n + 1e-9, "{got} vs {share}");
    let shown = o.eval("return document.getElementById('match').textContent;");
    assert!(
        shown
            .as_str()
            .unwrap()
            .contains(&format!("{:.1}%", 100.0 * got)),
        "{shown}"
    );
    // A click on a frame zooms on it (and selects its function).
    o.eval("document.getElementById('flame').scrollIntoView({block: 'center'}); return 1;");
    let c: Vec<f64> =
        serde_json::from_value(o.eval("return window.profil.frameCenter('sort_batch');")).unwrap();
    o.click(c[0], c[1]);
    o.wait_for("window.profil.zoom === 'sort_batch'");
    let zoom = o.eval("return document.getElementById('zoom').textContent;");
    assert!(zoom.as_str().unwrap().contains("sort_batch"), "{zoom}");
    // Zoomed, the frame fills the width.
    let c2: Vec<f64> =
        serde_json::from_value(o.eval("return window.profil.frameCenter('sort_batch');")).unwrap();
    let mid = o.eval("const r = document.getElementById('flame').getBoundingClientRect(); return r.left + r.width / 2;");
    assert!((c2[0] - mid.as_f64().unwrap()).abs() < 2.0, "{c2:?} {mid}");
    o.click_on("#reset");
    o.wait_for("window.profil.zoom === null");
    // From the keyboard: the widest child of the root (the function with the most samples),
    // then its widest child, then back.
    o.eval("document.getElementById('flame').focus(); return 1;");
    o.tab.press_key("ArrowUp").unwrap();
    o.wait_for("window.profil.zoom !== null");
    let first = o.eval("return window.profil.zoom;");
    let rows = json["rows"].as_array().unwrap();
    let most = rows
        .iter()
        .map(|r| r["samples"].as_f64().unwrap())
        .fold(0.0, f64::max);
    let first_samples = rows
        .iter()
        .find(|r| r["name"] == first)
        .map(|r| r["samples"].as_f64().unwrap());
    assert_eq!(first_samples, Some(most), "{first}");
    o.tab.press_key("ArrowUp").unwrap();
    o.wait_for(&format!(
        "window.profil.zoom !== {first} && window.profil.zoom !== null"
    ));
    o.tab.press_key("ArrowDown").unwrap();
    o.wait_for(&format!(
        "window.profil.zoom === {first} && window.profil.selected === {first}"
    ));
    o.tab.press_key("Escape").unwrap();
    o.wait_for("window.profil.zoom === null");
}

#[test]
fn a_run_of_a_process_tree_shows_callers_callees_source_lines_and_the_processes() {
    let Some(b) = browser() else { return };
    let dir = TempDir::new("html-tree");
    let (page, _) = tree_page(&dir);
    let json_text = ours(dir.path(), &["--json", "gmon.out", "b"]);
    let json: Value = serde_json::from_str(&json_text).unwrap();
    let o = open(b, &page);
    assert!(o.errors.lock().unwrap().is_empty(), "{:?}", o.errors);
    assert_table_is_the_reports(&o, &json);
    // The process tree: both programs, the busiest (b) reported here.
    let procs = o.eval("return document.getElementById('processes').textContent;");
    let procs = procs.as_str().unwrap();
    assert!(
        procs.contains("a (pid") && procs.contains("b (pid"),
        "{procs}"
    );
    assert!(
        o.eval("return document.querySelector('#processes li.reported').textContent;")
            .as_str()
            .unwrap()
            .starts_with("b (pid"),
        "{procs}"
    );
    assert_eq!(figure(&o, "processes"), "2");
    // Select spin from the keyboard: its row focused, Enter.
    o.eval("const r = [...document.querySelectorAll('#functions tbody tr')].find(r => r._row.name === 'spin'); r.focus(); return 1;");
    o.tab.press_key("Enter").unwrap();
    o.wait_for("window.profil.selected === 'spin'");
    let callers = o.rows("callers");
    assert!(callers.iter().any(|r| r[0] == "main"), "{callers:?}");
    let source = o.rows("source");
    let spin_line = source
        .iter()
        .find(|r| r.len() == 4 && r[3].contains("x = x * 6364136223846793005UL"))
        .unwrap_or_else(|| panic!("{source:?}"));
    assert!(
        spin_line[1].parse::<u64>().unwrap_or(0) > 0,
        "{spin_line:?}"
    );
    // main's callees.
    o.eval("window.profil.select('main'); return 1;");
    let callees = o.rows("callees");
    assert!(callees.iter().any(|r| r[0] == "spin"), "{callees:?}");
    drop(o);
    // The same profile reported from another directory: the relative source name is read
    // beside the executable.
    std::fs::create_dir(dir.join("elsewhere")).unwrap();
    ours(
        &dir.join("elsewhere"),
        &["html", "-o", "r2.html", "../gmon.out", "../b"],
    );
    let o = open(b, &dir.join("elsewhere/r2.html"));
    o.eval("window.profil.select('spin'); return 1;");
    let source = o.rows("source");
    assert!(
        source
            .iter()
            .any(|r| r.len() == 4 && r[3].contains("x = x * 6364136223846793005UL")),
        "{source:?}"
    );
}

#[test]
fn a_diff_page_marks_the_changed_rows() {
    let Some(b) = browser() else { return };
    let dir = TempDir::new("html-diff");
    let src = std::fs::read_to_string(root().join("fixtures/tree/chain.c")).unwrap();
    gcc(&src, &dir.join("a"), &[]);
    for (units, out) in [("1", "base.gmon"), ("6", "new.gmon")] {
        ours(
            dir.path(),
            &["run", "--out", out, "--report", "/dev/null", "./a", units],
        );
    }
    ours(
        dir.path(),
        &[
            "diff",
            "--base",
            "base.gmon",
            "--new",
            "new.gmon",
            "--base-exe",
            "a",
            "--html",
            "d.html",
        ],
    );
    let o = open(b, &dir.join("d.html"));
    assert!(o.errors.lock().unwrap().is_empty(), "{:?}", o.errors);
    let rows = o.rows("diff-table");
    let spin = rows
        .iter()
        .find(|r| r[0].ends_with("spin"))
        .unwrap_or_else(|| panic!("{rows:?}"));
    assert!(spin[0].starts_with('▲'), "{spin:?}");
    assert_eq!(spin[5], "yes");
    assert!(spin[3].starts_with('+'), "{spin:?}");
    let changed = o.eval("return [...document.querySelectorAll('#diff-table tbody tr.changed')].map(r => r._row.name);");
    assert!(
        changed.as_array().unwrap().iter().any(|n| n == "spin"),
        "{changed}"
    );
}

/// A PNG screenshot of `o` at 1280×800: the file, and decoded (width, height, distinct
/// colours).
fn screenshot(o: &Opened) -> (Vec<u8>, u32, u32, usize) {
    o.viewport(1280, 800, false);
    // A frame drawn at the new size.
    o.eval(
        "await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))); return 1;",
    );
    let png_bytes = o
        .tab
        .capture_screenshot(Page::CaptureScreenshotFormatOption::Png, None, None, true)
        .expect("screenshot");
    let decoder = png::Decoder::new(std::io::Cursor::new(&png_bytes));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).expect("a frame");
    let px = info.color_type.samples();
    let colours: std::collections::HashSet<&[u8]> = buf[..info.buffer_size()].chunks(px).collect();
    (png_bytes, info.width, info.height, colours.len())
}

#[test]
fn a_screenshot_at_1280x800_is_not_blank_and_the_page_fits_a_phone_in_dark() {
    let Some((_dir, o, _)) = demo_opened("html-shot") else {
        return;
    };
    let (_, w, h, colours) = screenshot(&o);
    assert_eq!((w, h), (1280, 800));
    assert!(colours > 20, "{colours} colours: blank");
    // Phone width, dark: no sideways scrolling of the page, a dark background.
    o.viewport(390, 844, true);
    o.tab
        .call_method(Emulation::SetEmulatedMedia {
            media: None,
            features: Some(vec![Emulation::MediaFeature {
                name: "prefers-color-scheme".into(),
                value: "dark".into(),
            }]),
        })
        .expect("media");
    let wide = o.eval("return document.documentElement.scrollWidth;");
    assert!(wide.as_f64().unwrap() <= 391.0, "page is {wide}px wide");
    let bg = o.eval("return getComputedStyle(document.body).backgroundColor;");
    let rgb: Vec<u32> = bg
        .as_str()
        .unwrap()
        .trim_start_matches("rgb(")
        .trim_end_matches(')')
        .split(',')
        .map(|c| c.trim().parse().unwrap())
        .collect();
    assert!(
        rgb.iter().sum::<u32>() < 3 * 64,
        "background {bg} is not dark"
    );
}

/// The README's screenshot of `run --html`: the guide's own command on the demo program
/// (`cc -O2 -g -o prog demo.c`, then `run --html prog.html sh -c './prog 5; ./prog 10'`), made
/// here, compared as a picture of the same size (the samples differ from run to run),
/// rewritten with `PROFIL_BLESS=1`.
#[test]
fn readme_screenshot() {
    let Some(b) = browser() else { return };
    let dir = TempDir::new("html-readme");
    std::fs::copy(root().join("fixtures/demo/demo.c"), dir.join("demo.c")).unwrap();
    let cc = Command::new("cc")
        .args(["-O2", "-g", "-o", "prog", "demo.c"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(cc.status.success(), "{}", show(&cc));
    let out = profil_report_in(dir.path())
        .args([
            "run",
            "--html",
            "prog.html",
            "sh",
            "-c",
            "./prog 5; ./prog 10",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let o = open(b, &dir.join("prog.html"));
    o.eval("window.profil.select('parse_records'); window.scrollTo(0, 0); return 1;");
    let (png_bytes, w, h, colours) = screenshot(&o);
    assert!(colours > 20, "{colours} colours: blank");
    let path = root().join("fixtures/readme/run-html.png");
    if golden::blessing() {
        std::fs::write(&path, &png_bytes).unwrap();
        return;
    }
    let kept =
        std::fs::read(&path).expect("fixtures/readme/run-html.png (PROFIL_BLESS=1 makes it)");
    let info = png::Decoder::new(std::io::Cursor::new(&kept))
        .read_info()
        .expect("a PNG")
        .info()
        .clone();
    assert_eq!((info.width, info.height), (w, h));
}

/// Time until the page of `PROFIL_HTML_BENCH` (a file) answers in headless Chromium, for
/// BENCHMARKS.md (not a check: run with `--ignored`): the milliseconds from the start of
/// navigation to the end of the first layout, median of five loads.
#[test]
#[ignore]
fn bench_time_to_interactive() {
    let Some(b) = browser() else { return };
    let file = PathBuf::from(std::env::var("PROFIL_HTML_BENCH").expect("PROFIL_HTML_BENCH=FILE"));
    let mut ms: Vec<f64> = (0..5)
        .map(|_| {
            let o = open(b, &file);
            o.eval("return window.profil.readyMs;").as_f64().unwrap()
        })
        .collect();
    ms.sort_by(|a, b| a.partial_cmp(b).unwrap());
    eprintln!("time to interactive: median {:.0} ms (of {ms:?})", ms[2]);
}

/// `run --html` of a stripped program: the report's warnings (no `.symtab`) are printed once,
/// not again for the page, and the page's table is the report across objects.
#[test]
fn run_html_of_a_stripped_program_prints_the_warnings_once_and_shows_the_objects_report() {
    let dir = TempDir::new("html-warn");
    let lines: String = (0..300_000u64)
        .map(|i| format!("{}\n", i.wrapping_mul(2_654_435_761) % 1_000_003))
        .collect();
    std::fs::write(dir.join("in.txt"), lines).unwrap();
    let out = profil_report_in(dir.path())
        .args([
            "run",
            "--html",
            "sort.html",
            "--report",
            "/dev/null",
            "sort",
            "in.txt",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let err = text(&out.stderr);
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning:")).collect();
    let mut unique = warnings.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(warnings.len(), unique.len(), "{err}");
    let page = std::fs::read_to_string(dir.join("sort.html")).unwrap();
    assert!(page.contains("<canvas id=\"flame\""));
    // The report across objects (a stripped program): its rows are the page's table.
    let Some(b) = browser() else { return };
    let json = ours(dir.path(), &["--json", "gmon.out", "/usr/bin/sort"]);
    let json: Value = serde_json::from_str(&json).unwrap();
    let o = open(b, &dir.join("sort.html"));
    assert!(o.errors.lock().unwrap().is_empty(), "{:?}", o.errors);
    assert_table_is_the_reports(&o, &json);
}

/// A page that cannot be written, and a gmon file that is not one: one line naming the file,
/// status 2, and no page left behind.
#[test]
fn bad_inputs_are_one_line_naming_the_file() {
    let dir = TempDir::new("html-bad");
    demo(&dir);
    std::fs::write(dir.join("junk.out"), "junk\n").unwrap();
    for (args, named) in [
        (
            vec!["html", "-o", "missing/r.html", "gmon.out", "demo"],
            "missing/r.html",
        ),
        (vec!["html", "-o", "r.html", "junk.out", "demo"], "junk.out"),
    ] {
        let out = profil_report_in(dir.path()).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", show(&out));
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(named), "{err}");
    }
    assert!(!dir.join("r.html").exists());
}
