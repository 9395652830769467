# Sourced by scripts/test and scripts/demo: installs with apt-get whatever the
# build and the tests need and the machine lacks. Nothing is done when all is
# present, so a developer's machine is left alone.

# Debian packages, each with a file or command that shows it is installed.
nmt_deps_check() {
    local missing=()
    command -v cc >/dev/null 2>&1 && command -v make >/dev/null 2>&1 || missing+=(build-essential)
    command -v meson >/dev/null 2>&1 || missing+=(meson)
    command -v ninja >/dev/null 2>&1 || missing+=(ninja-build)
    command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
    pkg-config --exists openblas 2>/dev/null || missing+=(libopenblas-dev)
    pkg-config --exists zlib 2>/dev/null || missing+=(zlib1g-dev)
    pkg-config --exists check 2>/dev/null || missing+=(check)
    # nmt serve, always built in: HTTP and JSON parsing
    pkg-config --exists libmicrohttpd 2>/dev/null || missing+=(libmicrohttpd-dev)
    pkg-config --exists jansson 2>/dev/null || missing+=(libjansson-dev)
    # the serve suites talk to the server with curl
    command -v curl >/dev/null 2>&1 || missing+=(curl)
    # subwords: the SentencePiece library (C++, so a C++ compiler too), and
    # its tools, whose spm_train the tests use to make models
    command -v c++ >/dev/null 2>&1 || missing+=(g++)
    pkg-config --exists sentencepiece 2>/dev/null || missing+=(libsentencepiece-dev)
    command -v spm_train >/dev/null 2>&1 || missing+=(sentencepiece)
    # data-parallel training and its tests: Open MPI's library and mpirun
    command -v mpicc >/dev/null 2>&1 || missing+=(libopenmpi-dev)
    command -v mpirun >/dev/null 2>&1 || missing+=(openmpi-bin)
    if [ "${NMT_NEED_TORCH:-0}" = 1 ]; then
        nmt_find_torch_python >/dev/null || missing+=(python3-torch python3-numpy)
    fi
    # the Bible corpus, which tests/cli/bible.sh makes
    mapfile -t -O ${#missing[@]} missing < <(nmt_bible_deps_check | sed '/^$/d')
    # the browser suite drives Debian's chromium headless
    if [ "${NMT_NEED_CHROMIUM:-0}" = 1 ]; then
        command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 ||
            [ -n "${NMT_CHROMIUM:-}" ] || missing+=(chromium)
    fi
    printf '%s\n' "${missing[@]}"
}

# Prints a python3 that can import torch (Debian's python3-torch lives in the
# system python, which may not be the first python3 on PATH).
nmt_find_torch_python() {
    local p
    for p in "${NMT_PYTHON:-}" /usr/bin/python3 python3; do
        [ -n "$p" ] || continue
        command -v "$p" >/dev/null 2>&1 || continue
        if "$p" -c 'import torch, numpy' >/dev/null 2>&1; then
            command -v "$p"
            return 0
        fi
    done
    return 1
}

# What scripts/data/get-bible needs to make the Bible corpus: the two SWORD
# modules (their Debian packages put their configuration where SWORD looks),
# SWORD's mod2imp that exports them, and python3 that parses them.
nmt_bible_deps_check() {
    local missing=()
    [ -f /usr/share/sword/mods.d/engKJV2006eb.conf ] || missing+=(sword-text-kjv)
    [ -f /usr/share/sword/mods.d/spaRV1909eb.conf ] || missing+=(sword-text-sparv)
    command -v mod2imp >/dev/null 2>&1 || missing+=(libsword-utils)
    command -v python3 >/dev/null 2>&1 || missing+=(python3)
    printf '%s\n' "${missing[@]}"
}

# nmt_apt_install PKG...: installs Debian packages with apt-get, as root or
# with sudo; nothing when none are given.
nmt_apt_install() {
    [ $# -eq 0 ] && return 0
    echo "Installing missing packages: $*" >&2
    local sudo=()
    if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null 2>&1; then sudo=(sudo); else
            echo "error: need root (or sudo) to install: $*" >&2
            return 1
        fi
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq || return 1
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@" >/dev/null || return 1
}

nmt_install_deps() {
    local missing
    mapfile -t missing < <(nmt_deps_check | sed '/^$/d')
    nmt_apt_install "${missing[@]}"
}

# nmt_commit: the commit of this checkout for the figures a script prints:
# `git describe --always --dirty`, or, where git is not installed (a fresh
# machine that was given the clone), the first 7 hex digits of .git's HEAD.
nmt_commit() {
    local d ref h=""
    if d=$(git describe --always --dirty 2>/dev/null); then
        echo "$d"
        return
    fi
    if [ -f .git/HEAD ]; then
        read -r ref <.git/HEAD
        case $ref in
            "ref: "*)
                ref=${ref#ref: }
                if [ -f ".git/$ref" ]; then
                    read -r h <".git/$ref"
                elif [ -f .git/packed-refs ]; then
                    h=$(awk -v r="$ref" '$2 == r { print $1; exit }' .git/packed-refs)
                fi ;;
            *) h=$ref ;;
        esac
    fi
    [[ $h =~ ^[0-9a-f]{7} ]] && echo "${h:0:7} (no git here: HEAD as read from .git)" || echo unknown
}

# nmt_logged WHAT CMD...: runs CMD with its output (stdout and stderr) into a
# log file instead of the terminal; on failure prints the last lines of the
# log, where meson and ninja put their errors (on stdout), and where the
# whole log is. Returns CMD's exit status.
nmt_logged() {
    local what=$1 log rc=0
    shift
    log=$(mktemp "${TMPDIR:-/tmp}/nmt-${what// /-}.XXXXXX.log")
    "$@" >"$log" 2>&1 || rc=$?
    if [ $rc -ne 0 ]; then
        echo "error: $what failed (exit $rc): $*" >&2
        echo "---- the last 40 lines of its output ($log) ----" >&2
        tail -n 40 "$log" >&2
        echo "----" >&2
        return $rc
    fi
    rm -f "$log"
}

# Whether the meson suites asked for ($@; none: all of them) need PyTorch:
# the parity suite and the cli suite (scripts/bench/bench and the Multi30k
# experiment compare with it). The unit suites do not.
nmt_suites_need_torch() {
    [ $# -eq 0 ] && return 0
    local s
    for s in "$@"; do
        case $s in
        parity | cli) return 0 ;;
        esac
    done
    return 1
}

# Whether the meson suites asked for ($@; none: all of them) need chromium:
# the browser suite (tests/browser/).
nmt_suites_need_chromium() {
    [ $# -eq 0 ] && return 0
    local s
    for s in "$@"; do
        [ "$s" = browser ] && return 0
    done
    return 1
}

# nmt_same_kernel NMT: the BLAS kernel nmt runs, for PyTorch too. Debian's
# PyTorch does its products in the same OpenBLAS; where nmt chose a better
# kernel than OpenBLAS's fallback (src/cli/cli_blas.c), this exports
# OPENBLAS_CORETYPE with it, so that every later child runs that kernel and
# a ratio compares like with like (a variable already set is kept). Sets
# nmt_kernel to nmt's kernel line (what a benchmark reports beside its
# figures). Call it as it is, not in $(...), whose subshell would keep the
# export to itself.
nmt_same_kernel() {
    local k
    nmt_kernel=$("$1" info 2>/dev/null | sed -n 's/^kernel  *//p')
    k=$(printf '%s\n' "$nmt_kernel" | sed -n 's/.*nmt set OPENBLAS_CORETYPE=\([A-Za-z0-9_]*\)).*/\1/p')
    # (NMT_TEST_BLAS_FALLBACK=1: the variable stands for OpenBLAS's own choice)
    if [ -n "$k" ] && { [ -z "${OPENBLAS_CORETYPE:-}" ] || [ "${NMT_TEST_BLAS_FALLBACK:-}" = 1 ]; }; then
        export OPENBLAS_CORETYPE=$k
    fi
    nmt_kernel=${nmt_kernel:-unknown}
}
