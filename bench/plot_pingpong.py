#!/usr/bin/env python3
"""Plots bench/pingpong CSV output: half round-trip time against block size, one panel per object
size (1 KiB, 1 MiB, 4 MiB), a line per Strider method, floor (a), the target
1.2 x (floor_a + pack floor + unpack floor) and baseline (b). Usage: plot_pingpong.py CSV PNG"""
import csv
import sys

METHODS = [("auto", "Strider auto", "o-"), ("oneshot", "Strider oneshot", "s-"),
           ("staged", "Strider staged", "^-"), ("device", "Strider device", "D-")]


def main():
    if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) > 1 else 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_pingpong.py: matplotlib is not installed; no plot written")
        return 0
    with open(sys.argv[1], newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        print(f"plot_pingpong.py: no rows in {sys.argv[1]}; no plot written")
        return 0
    sizes = sorted({int(r["object_bytes"]) for r in rows})
    fig, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 4.8), squeeze=False)
    for ax, size in zip(axes[0], sizes):
        sel = [r for r in rows if int(r["object_bytes"]) == size]
        # Per-object columns (floor_a, target, baseline_b) repeat on every row of the object.
        per_block = {}
        for r in sel:
            per_block.setdefault(int(r["block"]), r)
        blocks = sorted(per_block)
        for key, label, style in (("floor_a_us", "floor (a): host ping-pong", "k:"),
                                  ("target_us", "target 1.2 x (a + pack + unpack floors)", "k--"),
                                  ("baseline_b_us", "baseline (b): memcpy2D + host copy", "x-")):
            ax.plot(blocks, [float(per_block[b][key]) for b in blocks], style, label=label)
        for method, label, style in METHODS:
            mine = sorted((int(r["block"]), float(r["half_rtt_us"]), r["method_ran"], r["errors"])
                          for r in sel if r["method"] == method)
            if not mine:
                continue
            ax.plot([m[0] for m in mine], [m[1] for m in mine], style, label=label, markersize=4)
            for block, t, _, errors in mine:
                if errors not in ("", "0"):
                    ax.annotate("wrong", (block, t), color="red", fontsize=7)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("block bytes (stride 512 B)")
        ax.set_ylabel("half round trip (us), median")
        label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
        ax.set_title(f"{label} object")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=7)
    first = rows[0]
    fig.suptitle(f"bench/pingpong on {first['device']} ({first['placement']}, {first['mpi']}), "
                 f"{first['date']}: MPI_Send/MPI_Recv of a vector type on GPU memory")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    print(f"plot_pingpong.py: wrote {sys.argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
