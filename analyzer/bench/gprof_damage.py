#!/usr/bin/env python3
"""Single-byte damage to an executable's debug information, gprof against profil-report --gprof.

    analyzer/bench/gprof_damage.py EXE GMON SECTION VALUES [START [END]]

For every byte of SECTION (e.g. .debug_info, .debug_abbrev, .debug_line, .debug_str,
.debug_line_str, .debug_rnglists) from START to END, and every value of VALUES (comma
separated; -1 flips every bit), writes a damaged copy of EXE (a 64-bit little-endian ELF) as
`damaged-SECTION` in the current directory and runs `gprof ARGS damaged GMON` and
`profil-report --gprof ARGS damaged GMON` for ARGS in `-b -l`, `-b -p -l`, `-b -q`, with a
20 s limit each. Prints one line per damage whose exit status or stdout differ (TIMEOUT: a
hang; a negative status: a signal), the first differing ARGS only. PROFIL_REPORT names the
binary (default target/debug/profil-report). Run two at once only with different sections.
"""
import os
import struct
import subprocess
import sys

OURS = os.environ.get("PROFIL_REPORT", "target/debug/profil-report")
MODES = [["-b", "-l"], ["-b", "-p", "-l"], ["-b", "-q"]]


def sections(data):
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = []
    for i in range(shnum):
        name, _typ, _flags, _addr, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        heads.append((name, off, size))
    names = heads[shstrndx][1]
    out = {}
    for name, off, size in heads:
        end = data.index(b"\0", names + name)
        out[data[names + name:end].decode()] = (off, size)
    return out


def run(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, timeout=20)
        return (r.returncode, r.stdout)
    except subprocess.TimeoutExpired:
        return ("TIMEOUT", b"")


def main():
    exe_path, gmon, which, values = sys.argv[1:5]
    exe = open(exe_path, "rb").read()
    off, size = sections(exe)[which]
    start = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    end = min(size, int(sys.argv[6])) if len(sys.argv) > 6 else size
    damaged = "damaged" + which.replace(".", "_")
    for i in range(start, end):
        for v in (int(x, 0) for x in values.split(",")):
            new = exe[off + i] ^ 0xFF if v == -1 else v
            if exe[off + i] == new:
                continue
            d = bytearray(exe)
            d[off + i] = new
            with open(damaged, "wb") as f:
                f.write(d)
            os.chmod(damaged, 0o755)
            for mode in MODES:
                want = run(["gprof"] + mode + [damaged, gmon])
                got = run([OURS, "--gprof"] + mode + [damaged, gmon])
                if want != got:
                    print(f"DIFF {which} +{i} = {new:#x} (was {exe[off + i]:#x}) {mode} "
                          f"gprof={want[0]} ours={got[0]}", flush=True)
                    break


if __name__ == "__main__":
    main()
