//! The build never selects code a machine cannot run (issue 29). `target-cpu=native` on a CPU
//! with AMX (Sapphire Rapids and later) made llama.cpp compile its AMX kernels in, and the first
//! generation died with SIGILL. `.cargo/config.toml` adds `-mno-amx-*` to the C/C++ flags; these
//! tests check the result, on any machine: the flags themselves turn AMX off even for an AMX
//! CPU, and the binary holds no AMX instruction.

use std::process::{Command, Stdio};

/// The flags as cargo gave them to this build (the same `[env]` the cc crate reads when it
/// builds llama.cpp), by name.
const TARGET_FLAGS: [(&str, Option<&str>); 2] = [
    (
        "CFLAGS_x86_64_unknown_linux_gnu",
        option_env!("CFLAGS_x86_64_unknown_linux_gnu"),
    ),
    (
        "CXXFLAGS_x86_64_unknown_linux_gnu",
        option_env!("CXXFLAGS_x86_64_unknown_linux_gnu"),
    ),
];

/// The predefined macros of the C++ compiler for `args` (as `-dM -E` prints them).
fn macros(args: &[&str]) -> String {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let out = Command::new(&cxx)
        .args(args)
        .args(["-dM", "-E", "-x", "c++", "-"])
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{cxx} (the C++ compiler that builds llama.cpp): {e}"));
    assert!(
        out.status.success(),
        "{cxx} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
#[test]
fn the_c_flags_turn_amx_off_even_for_a_cpu_that_has_it() {
    // Without the flags, a Sapphire Rapids target has AMX: the check below can fail.
    let plain = macros(&["-march=sapphirerapids"]);
    assert!(plain.contains("__AMX_INT8__"), "the control: {plain}");
    for (var, flags) in TARGET_FLAGS {
        let flags = flags.unwrap_or_else(|| {
            panic!("{var} is not set: .cargo/config.toml's [env] must keep llama.cpp off AMX")
        });
        let mut args: Vec<&str> = flags.split_whitespace().collect();
        // The flags come first on llama.cpp's command line and -march=native after them; an
        // explicit -mno-* must win in that order.
        args.push("-march=sapphirerapids");
        let m = macros(&args);
        for amx in ["__AMX_TILE__", "__AMX_INT8__", "__AMX_BF16__"] {
            assert!(!m.contains(amx), "{var}={flags:?} leaves {amx} on");
        }
        // ...and takes nothing else away: the AVX-512 VNNI kernels stay.
        assert!(m.contains("__AVX512VNNI__"), "{var}={flags:?}");
    }
}

/// AMX mnemonics as objdump prints them.
fn is_amx(mnemonic: &str) -> bool {
    matches!(mnemonic, "ldtilecfg" | "sttilecfg")
        || mnemonic.starts_with("tileload")
        || mnemonic.starts_with("tilestore")
        || mnemonic.starts_with("tilezero")
        || mnemonic.starts_with("tilerelease")
        || (mnemonic.starts_with("tdp") && mnemonic.ends_with("ps"))
        || matches!(mnemonic, "tdpbssd" | "tdpbsud" | "tdpbusd" | "tdpbuud")
}

#[cfg(target_arch = "x86_64")]
#[test]
fn the_binary_holds_no_amx_instruction() {
    use std::io::{BufRead, BufReader};
    let exe = env!("CARGO_BIN_EXE_prism");
    let mut child = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn", "-j", ".text", exe])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("objdump (binutils, installed with the C toolchain) disassembles the binary");
    let mut lines = 0usize;
    let mut amx = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        lines += 1;
        // "  4a1b2c:\ttileloadd (%rsi,%rax,1),%tmm0"
        let Some(insn) = line.split('\t').nth(1) else {
            continue;
        };
        let mnemonic = insn.split_whitespace().next().unwrap_or("");
        if is_amx(mnemonic) && amx.len() < 5 {
            amx.push(line.trim().to_string());
        }
    }
    assert!(child.wait().unwrap().success(), "objdump failed on {exe}");
    // llama.cpp is linked in: a disassembly this short would mean the check saw nothing.
    assert!(
        lines > 100_000,
        "only {lines} lines disassembled from {exe}"
    );
    assert!(amx.is_empty(), "AMX instructions in {exe}: {amx:#?}");
}

#[test]
fn amx_mnemonics_are_recognised() {
    for m in [
        "tileloadd",
        "tileloaddt1",
        "tilestored",
        "tilezero",
        "ldtilecfg",
        "tdpbssd",
    ] {
        assert!(is_amx(m), "{m}");
    }
    assert!(is_amx("tdpbf16ps"));
    for m in ["vpdpbusd", "vmovdqu8", "test", "tzcnt", "mov"] {
        assert!(!is_amx(m), "{m}");
    }
}
