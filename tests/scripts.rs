//! The install checks of `scripts/lib/tools.sh` (used by `scripts/demo` and `.ci/run`) test the
//! thing that is actually used, not something with a similar name: a machine with only
//! `libclang-cpp.so.14` (pulled in by other packages) lacks the libclang bindgen loads.

use std::path::Path;
use std::process::Command;

/// Runs `snippet` in bash after sourcing tools.sh; returns (exit code, stdout).
fn tools(snippet: &str, env: &[(&str, &str)]) -> (i32, String) {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/lib/tools.sh");
    let mut cmd = Command::new("/bin/bash");
    cmd.arg("-c")
        .arg(format!("source '{}'; {snippet}", lib.display()));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("bash runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn dir_with(files: &[&str]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for f in files {
        std::fs::write(d.path().join(f), b"").unwrap();
    }
    d
}

#[test]
fn libclang_cpp_alone_is_not_libclang() {
    let d = dir_with(&["libclang-cpp.so.14", "libclangBasic.a", "libclang-cpp.so"]);
    let (code, _) = tools(&format!("have_libclang '{}'", d.path().display()), &[]);
    assert_eq!(code, 1, "libclang-cpp must not count as libclang");
}

#[test]
fn the_names_bindgen_loads_count() {
    for name in [
        "libclang.so",
        "libclang.so.1",
        "libclang-14.so",
        "libclang-14.so.1",
        "libclang-14.0.6.so",
        "libclang.so.18.1",
    ] {
        let d = dir_with(&["libclang-cpp.so.14", name]);
        let (code, _) = tools(&format!("have_libclang '{}'", d.path().display()), &[]);
        assert_eq!(code, 0, "{name} is libclang");
    }
    let empty = dir_with(&[]);
    let (code, _) = tools(&format!("have_libclang '{}'", empty.path().display()), &[]);
    assert_eq!(code, 1);
}

#[test]
fn a_cmake_too_old_or_absent_is_missing() {
    let bin = tempfile::tempdir().unwrap();
    let fake = |version: &str| {
        let p = bin.path().join("cmake");
        std::fs::write(&p, format!("#!/bin/sh\necho 'cmake version {version}'\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    // Only the fake cmake and the tools the check itself uses are on PATH.
    for tool in ["sed", "mktemp", "rm"] {
        let real = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.exists())
            .unwrap();
        std::os::unix::fs::symlink(real, bin.path().join(tool)).unwrap();
    }
    let path = bin.path().display().to_string();
    fake("3.10.2");
    assert_eq!(tools("have_cmake", &[("PATH", &path)]).0, 1);
    fake("3.25.1");
    assert_eq!(tools("have_cmake", &[("PATH", &path)]).0, 0);
    fake("4.0.0");
    assert_eq!(tools("have_cmake", &[("PATH", &path)]).0, 0);
    std::fs::remove_file(bin.path().join("cmake")).unwrap();
    assert_eq!(tools("have_cmake", &[("PATH", &path)]).0, 1);
}

#[test]
fn a_compiler_that_cannot_compile_is_missing() {
    // `c++` named but broken (a dangling link to a removed g++) must not count.
    let (code, _) = tools("have_compilers", &[("CXX", "/nonexistent/g++")]);
    assert_eq!(code, 1);
    let (code, _) = tools("have_compilers", &[("CC", "/bin/false")]);
    assert_eq!(code, 1);
}

#[test]
fn missing_packages_names_debian_packages() {
    // On a machine that lacks libclang the build need names libclang-dev; here we only check
    // the output is package names (one per line) and an unknown need is refused.
    let (code, out) = tools("missing_packages build python tmux chromium", &[]);
    assert_eq!(code, 0);
    for line in out.lines() {
        assert!(
            [
                "build-essential",
                "cmake",
                "libclang-dev",
                "python3",
                "python3-venv",
                "tmux",
                "chromium-headless-shell"
            ]
            .contains(&line),
            "{line}"
        );
    }
    let (code, _) = tools("missing_packages nonsense", &[]);
    assert_eq!(code, 2);
}

/// A fake venv whose `python` says llama_cpp lives in a directory with `lib/libggml-cpu.so`
/// compiled from `body` (a C function body; inline assembly chooses the instructions).
fn fake_llama_cpp_python(body: &str) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let pkg = d.path().join("llama_cpp");
    std::fs::create_dir_all(pkg.join("lib")).unwrap();
    let src = d.path().join("k.c");
    std::fs::write(&src, format!("void kernel(void) {{ {body} }}\n")).unwrap();
    let out = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(pkg.join("lib/libggml-cpu.so"))
        .arg(&src)
        .output()
        .expect("the C compiler runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let py = d.path().join("python");
    std::fs::write(&py, format!("#!/bin/sh\necho '{}'\n", pkg.display())).unwrap();
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_llama_cpp_python_built_with_amx_or_avx512_is_not_the_portable_one() {
    let check = |d: &tempfile::TempDir| {
        tools(
            &format!(
                "set -o pipefail; have_portable_llama_cpp_python '{}/python'",
                d.path().display()
            ),
            &[],
        )
        .0
    };
    let plain = fake_llama_cpp_python(r#"__asm__ volatile("vpaddd %ymm1, %ymm2, %ymm3");"#);
    assert_eq!(check(&plain), 0, "AVX2 only is portable");
    let amx = fake_llama_cpp_python(r#"__asm__ volatile("tilerelease");"#);
    assert_eq!(check(&amx), 1, "an AMX instruction");
    let tile = fake_llama_cpp_python(r#"__asm__ volatile("tileloadd (%rsi,%rax,1), %tmm0");"#);
    assert_eq!(check(&tile), 1, "an AMX tile load");
    let avx512 = fake_llama_cpp_python(r#"__asm__ volatile("vpxorq %zmm0, %zmm0, %zmm0");"#);
    assert_eq!(check(&avx512), 1, "AVX-512");
    // No library at all (llama_cpp not installed) is not a portable build either.
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join("python"), "#!/bin/sh\nexit 1\n").unwrap();
    assert_eq!(check(&empty), 1);
}

/// The CI example runs with what the README installs (the embedded model when no server is
/// given) and its committed baselines hold no path of the machine they were made on.
#[test]
fn the_ci_example_needs_no_server_and_its_baselines_no_local_path() {
    let ci = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/ci");
    for name in ["baseline.json", "baseline-server.json"] {
        let text = std::fs::read_to_string(ci.join(name)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["prism_baseline"], 1, "{name}");
        for local in ["/home/", "/root", "/tmp/", "/work/", "/Users/", "C:\\"] {
            assert!(!text.contains(local), "{name} holds a local path ({local})");
        }
    }
    let script = std::fs::read_to_string(ci.join("gate.sh")).unwrap();
    assert!(
        !script.contains(": \"${PY:?"),
        "gate.sh must not require llama-cpp-python"
    );
    assert!(
        script.contains("model=local"),
        "the embedded model is the default"
    );
}

/// `scripts/demo-judge-trial` rebuilds the demo's labelled answers from the labels file alone:
/// every one of the 100 labels lands on an answer with its item, model and text (the judging,
/// an hour of the embedded models, is left to the script's users: `--no-judge` here).
#[test]
fn the_demo_labels_land_on_their_answers_from_the_file_alone() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("python3")
        .arg(root.join("scripts/demo-judge-trial"))
        .args([
            "--prism",
            env!("CARGO_BIN_EXE_prism"),
            "--no-judge",
            "--keep",
        ])
        .arg(dir.path())
        .env_remove("PRISM_DATA_DIR")
        .env_remove("PRISM_CONFIG_DIR")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("100 labels on their answers"), "{err}");
    let store = prism::store::Store::open(&dir.path().join("prism.db")).unwrap();
    let labels = store.answer_labels(None).unwrap();
    assert_eq!(labels.len(), 100);
    let wanted: Vec<serde_json::Value> =
        std::fs::read_to_string(root.join("tests/fixtures/demo-labels/labels.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    for l in &labels {
        let a = store.response(&l.run_id, l.job_idx).unwrap().unwrap();
        assert_eq!((&a.item_id, &a.model), (&l.item_id, &l.model));
        let orig = l.uid.split('@').next().unwrap();
        let w = wanted.iter().find(|w| w["uid"] == orig).unwrap();
        assert_eq!(a.text.as_deref(), w["answer"].as_str(), "{}", l.uid);
    }
}
