#!/usr/bin/env bash
# A CI job's regression gate, end to end: run a small PRISM slice against a model and gate the
# run against the baseline committed beside this script. Exit: 0 passed, 1 worse beyond noise,
# 2 could not decide. Two ways to get the model:
#
#   bash examples/ci/gate.sh                  # the embedded Gemma 3 270M (`local`): nothing but
#                                             # what the README's first command set up
#   PY=.../venv/bin/python GGUF=.../gemma-3-270m-q4_k_m.gguf bash examples/ci/gate.sh
#                                             # the same file behind llama-cpp-python's
#                                             # OpenAI-compatible server, as a CI job gating an
#                                             # API model does (baseline-server.json)
#
# PRISM (default target/release/prism) is the binary. --save-baseline writes the baseline from
# the run instead of gating (do it once, on the model and settings the gate should hold, and
# commit the file). The slice is rule-scored (IFEval checks and abstention), so no judge model
# is needed. GATE_MAX_TOKENS (default 48) is the answers' length: to see the gate fail,
# GATE_MAX_TOKENS=6 cuts every answer short. GATE_EXTRA adds other flags to the `prism run`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
PRISM="${PRISM:-$root/target/release/prism}"
out="${GATE_OUT:-$(mktemp -d)}"
mkdir -p "$out"
# Where this machine keeps the embedded model (asked before the data dir moves to $out).
local_file="$("$PRISM" model path local)"
export PRISM_CONFIG_DIR="$out" PRISM_DATA_DIR="$out"

if [ -n "${PY:-}" ] && [ -n "${GGUF:-}" ]; then
  baseline="$here/baseline-server.json"
  model=gemma
  port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$PY" -m llama_cpp.server --model "$GGUF" --chat_format gemma --host 127.0.0.1 --port "$port" \
    --n_ctx 4096 >"$out/server.log" 2>&1 &
  server=$!
  trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
  for _ in $(seq 1 240); do
    if "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null; then break; fi
    sleep 0.5
  done
  cat >"$out/models.toml" <<TOML
[[models]]
name = "gemma"
provider = "openai"
base_url = "http://127.0.0.1:$port/v1"
model = "gemma-3-270m"
max_concurrency = 1
first_byte_timeout_secs = 300
TOML
else
  baseline="$here/baseline.json"
  model=local
  # The embedded model's file where the README's setup put it (prism model install), else
  # where CI keeps it.
  [ -e "$local_file" ] || local_file="$HOME/.cache/prism-ci/models/gemma-3-270m-q4_k_m.gguf"
  if [ ! -e "$local_file" ]; then
    echo "gate.sh: no embedded model file (run the README's first command, or prism model install)" >&2
    exit 2
  fi
  mkdir -p "$out/models"
  ln -sfn "$local_file" "$out/models/gemma-3-270m-q4_k_m.gguf"
fi

# Greedy decoding with a fixed seed: the same model gives the same answers, so a change in the
# model, the prompt or the settings is what the gate sees.
run=$("$PRISM" run "$root/tests/fixtures/prism-mini" --models "$model" \
  --filter 'IFE-CCL-*,KM-FK-Awards,KM-FK-Biology,KM-FK-Literature' --max-tokens "${GATE_MAX_TOKENS:-48}" --temperature 0 --seed 7 --no-cache --db "$out/prism.db" --json \
  ${GATE_EXTRA:-} |
  tail -1 | python3 -c 'import json, sys; print(json.load(sys.stdin)["run_id"])')

if [ "${1:-}" = "--save-baseline" ]; then
  "$PRISM" compare "$run" --save-baseline "$baseline" --db "$out/prism.db"
  exit 0
fi
set +e
"$PRISM" gate "$baseline" "$run" --db "$out/prism.db" --by task \
  --junit "$out/junit.xml" >"$out/gate.md"
code=$?
set -e
cat "$out/gate.md"
echo "JUnit: $out/junit.xml (exit $code)"
exit $code
