#!/usr/bin/env python3
"""Markdown table of a bench/pingpong CSV: per object and block, auto's half round-trip next to
every method, floor (a), the target 1.2 x (floor a + pack floor + unpack floor), baseline (b),
and the bus floor: floor (a) + the packed bytes once over each direction of the host bus at the
measured pinned D2H / H2D rates + two launches (what any method on a CUDA-unaware MPI pays).

usage: pingpong_table.py pingpong.csv > table.md"""
import csv
import sys


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) == 2 else 2
    rows = list(csv.DictReader(open(sys.argv[1])))
    cases = {}
    for r in rows:
        cases.setdefault((int(r["object_bytes"]), int(r["block"])), {})[r["method"]] = r
    print("| object | block | auto | oneshot | staged | device(ran) | floor (a) | target | auto/target "
          "| bus floor | auto/bus | (b) | (b)/auto |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (size, block), by in sorted(cases.items()):
        a = by.get("auto")
        if a is None:
            continue
        t = lambda m: f"{float(by[m]['half_rtt_us']):.1f}" if m in by else "-"
        bus = float(a["floor_a_us"])
        if a.get("d2h_gbps"):
            bus += size / (float(a["d2h_gbps"]) * 1e3) + size / (float(a["h2d_gbps"]) * 1e3)
            bus += 2 * float(a["launch_us"])
        label = f"{size // 1048576} MiB" if size >= 1048576 else f"{size // 1024} KiB"
        dev = f"{t('device')} ({by['device']['method_ran']})" if "device" in by else "-"
        half = float(a["half_rtt_us"])
        print(f"| {label} | {block} | {half:.1f} | {t('oneshot')} | {t('staged')} | {dev} "
              f"| {float(a['floor_a_us']):.1f} | {float(a['target_us']):.1f} "
              f"| {float(a['ratio']):.2f} | {bus:.1f} | {half / bus:.2f} "
              f"| {float(a['baseline_b_us']):.1f} | {float(a['speedup_vs_b']):.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
