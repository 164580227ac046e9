//! The book's TUI captures show whole (issue 62): in headless Chromium, at a laptop's and a
//! wide window's width with the sidebar open, no capture block in the guides scrolls sideways
//! (`docs/captures.css` scales them with the column). Needs the book built (`mdbook build
//! docs`, as `.ci/run` does first) and Chromium; screenshots of each page are left in
//! `target/tmp/book-captures/` to look at.

use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> Option<&'static str> {
    ["chromium-headless-shell", "chromium", "chromium-browser"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

fn book() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/book")
}

/// Each capture block of `page` as Chromium lays it out at `width`: (its first line, its
/// scroll width, its client width), read by a page that loads the book's page in a frame.
fn captures(browser: &str, page: &Path, width: u32, out: &Path) -> Vec<(String, u64, u64)> {
    let probe = out.join(format!(
        "probe-{}-{width}.html",
        page.file_stem().unwrap().to_string_lossy()
    ));
    let url = format!("file://{}", page.display());
    std::fs::write(
        &probe,
        format!(
            r#"<!DOCTYPE html><html><body style="margin:0">
<iframe id="f" src="{url}" style="border:0;width:{width}px;height:1200px"></iframe>
<pre id="out">waiting</pre>
<script>
document.getElementById('f').onload = () => {{
  const d = document.getElementById('f').contentDocument;
  d.documentElement.classList.remove('sidebar-hidden');
  d.documentElement.classList.add('sidebar-visible');
  setTimeout(() => {{
    const rows = [...d.querySelectorAll('pre')]
      .filter(p => /[╭┏╰┗]/.test(p.textContent))
      .map(p => {{
        // The scroller is the block's code element (mdbook's hljs), else the pre.
        const c = p.querySelector('code') || p;
        return [p.textContent.split('\n')[0].slice(0, 40),
                Math.max(c.scrollWidth - c.clientWidth, p.scrollWidth - p.clientWidth) + c.clientWidth,
                c.clientWidth];
      }});
    document.getElementById('out').textContent = 'RESULT' + JSON.stringify(rows) + 'END';
  }}, 500);
}};
</script></body></html>"#
        ),
    )
    .unwrap();
    let o = Command::new(browser)
        .args([
            "--no-sandbox",
            "--disable-gpu",
            "--headless",
            "--allow-file-access-from-files",
            "--virtual-time-budget=5000",
            &format!("--window-size={width},1200"),
            "--dump-dom",
        ])
        .arg(format!("file://{}", probe.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&o.stdout);
    let json = dom
        .split("RESULT")
        .nth(1)
        .and_then(|s| s.split("END").next())
        .unwrap_or_else(|| panic!("no result from {}:\n{dom}", page.display()));
    let json = json
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let rows: Vec<(String, u64, u64)> = serde_json::from_str(&json).unwrap();
    // A picture of the page at this width, for people.
    let _ = Command::new(browser)
        .args([
            "--no-sandbox",
            "--disable-gpu",
            "--headless",
            &format!("--window-size={width},2400"),
        ])
        .arg(format!(
            "--screenshot={}",
            out.join(format!(
                "{}-{width}.png",
                page.file_stem().unwrap().to_string_lossy()
            ))
            .display()
        ))
        .arg(&url)
        .output();
    rows
}

#[test]
#[ignore = "needs the book built (mdbook build docs) and headless Chromium: bash .ci/run"]
fn no_capture_in_the_guides_scrolls_sideways() {
    let browser = chromium().expect("headless Chromium (bash .ci/run installs it)");
    assert!(
        book().join("guides/exploring.html").is_file(),
        "build the book first: mdbook build docs"
    );
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("book-captures");
    std::fs::create_dir_all(&out).unwrap();
    let mut seen = 0;
    for page in ["guides/exploring.html", "guides/review-panel.html"] {
        for width in [1280, 1920] {
            let rows = captures(browser, &book().join(page), width, &out);
            assert!(!rows.is_empty(), "{page}: no capture found");
            for (first, scroll, client) in &rows {
                assert!(
                    scroll <= client,
                    "{page} at {width}px: the capture starting {first:?} scrolls ({scroll} > {client})"
                );
                seen += 1;
            }
        }
    }
    assert!(seen >= 10, "{seen} captures checked");
}
