# shellcheck shell=bash
# What the build, the tests and the demo need, each checked by testing the thing that is actually
# used (not something with a similar name), and the Debian package that provides it.
# Sourced by scripts/demo and .ci/run; tests/scripts.rs runs these checks against fake machines.
#
#   missing_packages            prints the Debian packages to install, one per line
#   have_libclang [DIR ...]     bindgen's libclang (in DIRs, or where clang-sys looks)

# bindgen (through clang-sys) loads `libclang.so`, `libclang-<N>.so` or either with a version
# suffix (`libclang.so.14`, `libclang-14.so.1`). `libclang-cpp.so.14` is a different library (the
# C++ API, pulled in by other packages): it does not count.
_is_libclang_name() {
  [[ "$1" =~ ^libclang(-[0-9]+(\.[0-9]+)*)?\.so(\.[0-9]+)*$ ]]
}

# Directories clang-sys searches on Linux: $LIBCLANG_PATH, `llvm-config --libdir`, the LLVM
# install dirs, the usual lib dirs; then whatever the dynamic linker knows (`ldconfig -p`).
_libclang_dirs() {
  [ -n "${LIBCLANG_PATH:-}" ] && echo "$LIBCLANG_PATH"
  command -v llvm-config >/dev/null 2>&1 && llvm-config --libdir 2>/dev/null
  local d
  for d in /usr/lib/llvm-*/lib /usr/local/llvm*/lib /usr/local/lib /usr/local/lib64 \
    /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib /lib/x86_64-linux-gnu; do
    [ -d "$d" ] && echo "$d"
  done
}

have_libclang() {
  local dirs=("$@") from_ldconfig=1 d f
  if [ ${#dirs[@]} -gt 0 ]; then
    from_ldconfig=0
  else
    mapfile -t dirs < <(_libclang_dirs)
  fi
  for d in "${dirs[@]}"; do
    [ -d "$d" ] || continue
    for f in "$d"/libclang*.so*; do
      [ -e "$f" ] && _is_libclang_name "$(basename "$f")" && return 0
    done
  done
  if [ "$from_ldconfig" = 1 ] && command -v ldconfig >/dev/null 2>&1; then
    local name
    while read -r name _; do
      _is_libclang_name "$name" && return 0
    done < <(ldconfig -p 2>/dev/null | sed -n 's/^[[:space:]]*\(libclang[^ ]*\).*/\1/p')
  fi
  return 1
}

# cmake as llama.cpp's build runs it: on PATH, and at least the version its CMakeLists requires.
have_cmake() {
  local v
  v=$(cmake --version 2>/dev/null | sed -n 's/^cmake version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p') || return 1
  [ -n "$v" ] || return 1
  set -- $v
  [ "$1" -gt 3 ] || { [ "$1" -eq 3 ] && [ "$2" -ge 14 ]; }
}

# The C and C++ compilers the cc crate and CMake pick ($CC/$CXX, else cc/c++), proven by
# compiling a program with each: a `c++` symlink to a missing g++ does not count.
have_compilers() {
  local tmp rc=0
  tmp=$(mktemp -d) || return 1
  printf 'int main(void){return 0;}\n' >"$tmp/a.c"
  printf '#include <vector>\nint main(){std::vector<int> v{1};return v[0]-1;}\n' >"$tmp/a.cpp"
  "${CC:-cc}" "$tmp/a.c" -o "$tmp/a" >/dev/null 2>&1 || rc=1
  "${CXX:-c++}" "$tmp/a.cpp" -o "$tmp/b" >/dev/null 2>&1 || rc=1
  rm -rf "$tmp"
  return $rc
}

# `prism model install` falls back to PyPI through `python3 -m venv` and the venv's pip: make one
# (without downloading anything) and ask its pip for its version. Debian's python3 without
# python3-venv imports `venv` fine but cannot bootstrap pip, so importing is not enough.
have_python_venv() {
  local tmp rc=0
  tmp=$(mktemp -d) || return 1
  python3 -m venv "$tmp/v" >/dev/null 2>&1 && "$tmp/v/bin/python" -m pip --version >/dev/null 2>&1 || rc=1
  rm -rf "$tmp"
  return $rc
}

have_tmux() { tmux -V >/dev/null 2>&1; }

# The report test renders HTML with the first of these that runs (tests/report.rs).
have_chromium() {
  local b
  for b in chromium-headless-shell chromium chromium-browser; do
    "$b" --version >/dev/null 2>&1 && return 0
  done
  return 1
}

# PostgreSQL's server binaries, run: the shared review store's tests start their own server
# (tests/common/pg.rs). psql alone (the client) is not enough. As root the server runs as the
# `postgres` user, which the package creates.
have_postgres_server() {
  local b
  for b in /usr/lib/postgresql/*/bin; do
    "$b/postgres" --version >/dev/null 2>&1 && [ -x "$b/initdb" ] && [ -x "$b/pg_ctl" ] || continue
    [ "$(id -u)" -ne 0 ] || id postgres >/dev/null 2>&1 || continue
    return 0
  done
  return 1
}

# The CMake options .ci/run builds llama-cpp-python with: portable (AVX2, FMA, F16C), never
# llama.cpp's native default. A native build on a CPU with AMX compiles AMX kernels in that die
# there with SIGILL on the first chat request (issue 29); on any machine it uses AVX-512 that the
# next machine may lack.
LLAMA_CPP_PYTHON_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"

# Whether llama-cpp-python's CPU library, as the venv's python loads it, is such a portable
# build: objdump finds no AMX instruction and no AVX-512 register in it. (A marker file would
# say how it was meant to be built; this tests the library that runs.)
have_portable_llama_cpp_python() {
  local py=$1 dir f found=0
  command -v objdump >/dev/null 2>&1 || return 1
  dir=$("$py" -c 'import llama_cpp, os; print(os.path.dirname(llama_cpp.__file__))' 2>/dev/null) || return 1
  for f in "$dir"/lib/libggml-cpu*.so* "$dir"/lib/libggml.so*; do
    [ -e "$f" ] || continue
    found=1
    # grep reads to the end (no -q), so objdump never dies of SIGPIPE under pipefail.
    if objdump -d --no-show-raw-insn "$f" 2>/dev/null |
      grep -E $'\t(tile[a-z0-9]+|ldtilecfg|sttilecfg|tdpb[a-z0-9]+)([[:space:]]|$)|%zmm' >/dev/null; then
      return 1
    fi
  done
  [ "$found" = 1 ]
}

# The packages a machine lacks for the given needs (default: the demo's).
#   build   compilers, cmake, libclang (llama.cpp through llama-cpp-2)
#   python  python3 with a working venv (the model's PyPI fallback, llama-cpp-python in CI)
#   tmux    the real-terminal tests
#   chromium  the HTML report test
#   postgres  the PostgreSQL server for the shared store's tests
#   openssl   the openssl tool: the TLS test makes its server's certificates with it
#   node    Node.js and npm: promptfoo, for the import fixtures (scripts/import-fixtures)
missing_packages() {
  local need
  [ $# -gt 0 ] || set -- build python
  for need in "$@"; do
    case "$need" in
      build)
        have_compilers || echo build-essential
        have_cmake || echo cmake
        have_libclang || echo libclang-dev
        ;;
      python)
        command -v python3 >/dev/null 2>&1 || echo python3
        have_python_venv || echo python3-venv
        ;;
      tmux) have_tmux || echo tmux ;;
      chromium) have_chromium || echo chromium-headless-shell ;;
      postgres) have_postgres_server || echo postgresql ;;
      openssl) openssl version >/dev/null 2>&1 || echo openssl ;;
      xmllint) xmllint --version >/dev/null 2>&1 || echo libxml2-utils ;;
      zsh) zsh -fc 'exit 0' >/dev/null 2>&1 || echo zsh ;;
      node)
        node --version >/dev/null 2>&1 || echo nodejs
        npm --version >/dev/null 2>&1 || echo npm
        ;;
      *) echo "missing_packages: unknown need $need" >&2; return 2 ;;
    esac
  done
}

# apt-get install, as root or through sudo.
apt_install() {
  [ $# -gt 0 ] || return 0
  local sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "$@"
}
