#!/usr/bin/env bash
# A CI job's regression gate, end to end: serve a model (llama-cpp-python's OpenAI-compatible
# server with the Gemma 3 270M file, as prism's own CI does), run a small PRISM slice against it,
# and gate the run against the baseline committed beside this script. Exit: 0 passed, 1 worse
# beyond noise, 2 could not decide.
#
#   PRISM=target/release/prism PY=.../venv/bin/python GGUF=.../gemma-3-270m-q4_k_m.gguf \
#     bash examples/ci/gate.sh [--save-baseline]
#
# --save-baseline writes examples/ci/baseline.json from the run instead of gating (do it once,
# on the model and settings the gate should hold, and commit the file).
# The slice is rule-scored (IFEval checks and abstention), so no judge model is needed.
# GATE_MAX_TOKENS (default 48) is the answers' length: to see the gate fail, GATE_MAX_TOKENS=6
# cuts every answer short. GATE_EXTRA adds other flags to the `prism run`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
PRISM="${PRISM:-$root/target/release/prism}"
: "${PY:?the python with llama_cpp.server (llama-cpp-python[server])}"
: "${GGUF:?the model file (gemma-3-270m-q4_k_m.gguf)}"
out="${GATE_OUT:-$(mktemp -d)}"
mkdir -p "$out"

port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$PY" -m llama_cpp.server --model "$GGUF" --chat_format gemma --host 127.0.0.1 --port "$port" \
  --n_ctx 4096 >"$out/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 1 240); do
  if "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null; then break; fi
  sleep 0.5
done

export PRISM_CONFIG_DIR="$out" PRISM_DATA_DIR="$out"
cat >"$out/models.toml" <<TOML
[[models]]
name = "gemma"
provider = "openai"
base_url = "http://127.0.0.1:$port/v1"
model = "gemma-3-270m"
max_concurrency = 1
first_byte_timeout_secs = 300
TOML

# Greedy decoding with a fixed seed: the same model gives the same answers, so a change in the
# model, the prompt or the settings is what the gate sees.
run=$("$PRISM" run "$root/tests/fixtures/prism-mini" --models gemma \
  --filter 'IFE-CCL-*,KM-FK-Awards,KM-FK-Biology,KM-FK-Literature' --max-tokens "${GATE_MAX_TOKENS:-48}" --temperature 0 --seed 7 --no-cache --db "$out/prism.db" --json \
  ${GATE_EXTRA:-} |
  tail -1 | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["run_id"])')

if [ "${1:-}" = "--save-baseline" ]; then
  "$PRISM" compare "$run" --save-baseline "$here/baseline.json" --db "$out/prism.db"
  exit 0
fi
set +e
"$PRISM" gate "$here/baseline.json" "$run" --db "$out/prism.db" --by task \
  --junit "$out/junit.xml" >"$out/gate.md"
code=$?
set -e
cat "$out/gate.md"
echo "JUnit: $out/junit.xml (exit $code)"
exit $code
