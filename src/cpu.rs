//! A prism built with `target-cpu=native` (on purpose: the default build is portable) uses every
//! instruction set of the machine it was built on. Copied to a machine with fewer, it would die
//! with SIGILL at some random point; this check says so in words before anything runs.

/// The instruction sets this binary was compiled to use that this CPU lacks.
#[cfg(target_arch = "x86_64")]
pub fn missing_features() -> Vec<&'static str> {
    let mut missing = Vec::new();
    macro_rules! check {
        ($($f:tt),* $(,)?) => {$(
            if cfg!(target_feature = $f) && !std::arch::is_x86_feature_detected!($f) {
                missing.push($f);
            }
        )*};
    }
    check!(
        "sse4.2",
        "popcnt",
        "avx",
        "avx2",
        "fma",
        "f16c",
        "bmi1",
        "bmi2",
        "avxvnni",
        "avx512f",
        "avx512bw",
        "avx512cd",
        "avx512dq",
        "avx512vl",
        "avx512vnni",
        "avx512vbmi",
        "avx512bf16",
    );
    missing
}

#[cfg(not(target_arch = "x86_64"))]
pub fn missing_features() -> Vec<&'static str> {
    Vec::new()
}

/// The message for a CPU that cannot run this binary, if it cannot.
pub fn refusal() -> Option<String> {
    let missing = missing_features();
    if missing.is_empty() {
        return None;
    }
    Some(format!(
        "prism: this binary was built for a CPU with {0}, which this one lacks; it would die \
         with an illegal instruction. Build it on this machine (cargo build --release), or \
         build one for any x86-64 machine with AVX2: RUSTFLAGS=\"-C target-cpu=x86-64-v3\" \
         cargo build --release",
        missing.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_binary_runs_where_it_was_built() {
        // Tests run on the machine that built them: every feature compiled in is there.
        assert_eq!(super::missing_features(), Vec::<&str>::new());
        assert_eq!(super::refusal(), None);
    }
}
