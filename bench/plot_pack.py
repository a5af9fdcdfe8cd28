#!/usr/bin/env python3
"""Plots bench/pack CSV output: time against block size for the 2D cases and against the box's
x extent for the 3D boxes, with the floor and the baselines. Usage: plot_pack.py CSV PNG"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) > 1 else 2
    rows = list(csv.DictReader(open(sys.argv[1])))
    series = [("strider_pack_us", "Strider pack", "o-"), ("strider_unpack_us", "Strider unpack", "s-"),
              ("floor_us", "floor", "k--"), ("naive_pack_us", "naive kernel (pack)", "^:"),
              ("memcpy2d3d_us", "cudaMemcpy2D/3D", "v:"), ("per_block_memcpy_us", "memcpy per block", "x:")]
    panels = [("2d", "1MiB"), ("2d", "4MiB"), ("3d_box", "")]
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5))
    device = rows[0]["device"] if rows else "?"
    date = rows[0]["date"] if rows else "?"
    for ax, (kind, size) in zip(axes, panels):
        sel = [r for r in rows if r["case"].startswith(kind) and size in r["case"]
               and r["construction"] in ("vector", "subarray") and r["count"] == "1"]
        if kind == "2d":
            sel = [r for r in sel if r["construction"] == "vector"]
        sel.sort(key=lambda r: int(r["block"]))
        x = [int(r["block"]) for r in sel]
        for key, label, style in series:
            y = [float(r[key]) for r in sel]
            if any(v > 0 for v in y):
                ax.plot(x, y, style, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("block bytes" if kind == "2d" else "box x extent (bytes); 1 MiB boxes")
        ax.set_ylabel("time (us)")
        ax.set_title(f"{kind} {size} (stride 512 B)" if kind == "2d" else "3D boxes in 1024^3 B")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"bench/pack on {device}, {date}: wall time per call incl. sync, median")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
