# Sourced by runtime/bench/cfi-accuracy.sh and cfi-cost.sh (issue 22): the profil-report to use,
# the crates' C sources, and the builds of the programs, each with the runtime object linked in.
# Expects $root (the workspace root) and $work (the work directory, the current directory).

bench=$root/runtime/bench

# $PROFIL_REPORT: an already built profil-report (a relative path names a file from the
# workspace root), else a release build of this tree. Sets $pr and $rt (the runtime object).
cfi_profil_report() {
    if [[ -n ${PROFIL_REPORT:-} ]]; then
        [[ -x $PROFIL_REPORT ]] || { echo "$0: PROFIL_REPORT=$PROFIL_REPORT is not an executable" >&2; exit 2; }
        pr=$(realpath "$PROFIL_REPORT")
    else
        (cd "$root" && cargo build -q --release -p profil-report)
        pr=${CARGO_TARGET_DIR:-$root/target}/release/profil-report
    fi
    rt=$("$pr" runtime-path)
}

# The C sources, as the crates bundle them: a throwaway project, `cargo fetch` (crates.io),
# and the packages' directories from `cargo metadata`. Sets $lua, $sqlite and $zstd.
cfi_sources() {
    if [[ ! -s srcdirs ]]; then
        mkdir -p fetch/src
        echo 'fn main() {}' >fetch/src/main.rs
        cat >fetch/Cargo.toml <<'EOF'
[package]
name = "cfi-sources"
version = "0.0.0"
edition = "2021"
[dependencies]
lua-src = "547"
libsqlite3-sys = { version = "0.30", features = ["bundled"] }
zstd-sys = "2"
EOF
        (cd fetch && cargo fetch -q && cargo metadata -q --format-version 1) | python3 -c '
import json, os, sys
for p in json.load(sys.stdin)["packages"]:
    if p["name"] in ("lua-src", "libsqlite3-sys", "zstd-sys"):
        print(p["name"], p["version"], os.path.dirname(p["manifest_path"]))' >srcdirs
    fi
    lua=$(ls -d "$(cfi_src lua-src)"/lua-5.4* | tail -1)
    sqlite=$(cfi_src libsqlite3-sys)/sqlite3
    zstd=$(cfi_src zstd-sys)/zstd/lib
}
cfi_src() { awk -v n="$1" '$1 == n {print $3}' srcdirs; }
cfi_version() { awk -v n="$1" '$1 == n {print $2}' srcdirs; }

# VARIANT: default = gcc -O2 -g (gcc omits frame pointers), fp = with -fno-omit-frame-pointer.
cfi_flags() { case $1 in default) echo "-O2 -g" ;; fp) echo "-O2 -g -fno-omit-frame-pointer" ;; esac; }

# PROGRAM VARIANT: builds ./PROGRAM-VARIANT unless it exists (a kept work directory reuses it).
cfi_build() {
    local p=$1 v=$2 out=$1-$2 f
    [[ -x $out ]] && return
    read -ra f <<<"$(cfi_flags "$v")"
    case $p in
        lua)
            # shellcheck disable=SC2046
            gcc "${f[@]}" -DLUA_USE_POSIX -I"$lua" -o "$out" \
                $(ls "$lua"/*.c | grep -Ev '/(lua|luac|onelua)\.c$') "$bench/cfi/lua-driver.c" \
                "$rt" -lm -ldl -lpthread ;;
        sqlite)
            gcc "${f[@]}" -I"$sqlite" -o "$out" "$sqlite/sqlite3.c" "$bench/cfi/sqlite-driver.c" \
                "$rt" -lm -ldl -lpthread ;;
        zstd)
            gcc "${f[@]}" -I"$zstd" -I"$zstd/common" -o "$out" "$zstd"/common/*.c \
                "$zstd"/compress/*.c "$zstd"/decompress/*.c "$zstd"/decompress/*.S \
                "$bench/cfi/zstd-driver.c" "$rt" -lpthread ;;
        libm)
            gcc "${f[@]}" -o "$out" "$bench/cfi/libm.c" "$rt" -lm -lpthread ;;
        depth)
            gcc "${f[@]}" -o "$out" "$bench/cfi/depth.c" "$rt" -lpthread ;;
        rust)
            local fp=()
            [[ $v == fp ]] && fp=(-C force-frame-pointers=yes)
            rustc -O -g --edition 2021 "${fp[@]}" -C link-arg="$rt" -o "$out" \
                "$bench/cfi/rust-work.rs" ;;
    esac
}

# PROGRAM -> its arguments (CFI_SCALE_<PROGRAM> overrides the scale).
cfi_args() {
    local s
    case $1 in
        lua) s=${CFI_SCALE_LUA:-60}; echo "$bench/cfi/workload.lua $s" ;;
        sqlite) echo "${CFI_SCALE_SQLITE:-12}" ;;
        zstd) echo "${CFI_SCALE_ZSTD:-8}" ;;
        libm) echo "${CFI_SCALE_LIBM:-150}" ;;
        rust) echo "${CFI_SCALE_RUST:-150}" ;;
    esac
}
