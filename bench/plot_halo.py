#!/usr/bin/env python3
"""Plots bench/halo and bench/transpose CSV output: per-exchange median time (p10-p90 bars) per
problem size N and form, log scale, the computed floor as a black line over each size's bars.
One PNG per CSV and split (halo: per_rank / global) or case (transpose: 2d / 3d), named after the
CSV (halo_per_rank.png, transpose_3d.png, ...).
Usage: plot_halo.py [--out DIR] CSV...      (DIR defaults to each CSV's folder)"""
import csv
import os
import sys

FORM_ORDER = ["isend", "pack", "alltoallw", "alltoall_vector", "expert"]


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def groups(rows):
    """(label, rows) per halo split or transpose case."""
    key = "split" if rows and "split" in rows[0] else "case" if rows and "case" in rows[0] else None
    if key is None:
        return [("", rows)]
    names = sorted({r[key] for r in rows})
    return [(n, [r for r in rows if r[key] == n]) for n in names]


def plot(plt, rows, title, png):
    totals = [r for r in rows if r["phase"] == "total"]
    sizes = sorted({int(r["n"]) for r in totals})
    forms = [f for f in FORM_ORDER if any(r["form"] == f for r in totals)]
    forms += sorted({r["form"] for r in totals} - set(forms) - {"floor"})
    if not sizes or not forms:
        return False
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(sizes) * len(forms) / 2), 4.8))
    width = 0.8 / len(forms)
    for i, form in enumerate(forms):
        xs, ys, lo, hi = [], [], [], []
        for j, n in enumerate(sizes):
            r = next((r for r in totals if r["form"] == form and int(r["n"]) == n), None)
            if r is None:
                continue
            med = float(r["median_us"])
            xs.append(j + (i - (len(forms) - 1) / 2) * width)
            ys.append(med)
            lo.append(med - float(r["p10_us"]))
            hi.append(float(r["p90_us"]) - med)
        bars = ax.bar(xs, ys, width, label=form, yerr=[lo, hi], capsize=2)
        for b, y, n in zip(bars, ys, sizes):
            r = next(r for r in totals if r["form"] == form and int(r["n"]) == n)
            if r.get("ratio_to_floor"):
                ax.annotate(f"{float(r['ratio_to_floor']):.1f}x", (b.get_x() + width / 2, y),
                            ha="center", va="bottom", fontsize=6)
    for j, n in enumerate(sizes):
        fl = next((r for r in totals if r["form"] == "floor" and int(r["n"]) == n), None)
        if fl is not None and float(fl["median_us"]) > 0:
            ax.hlines(float(fl["median_us"]), j - 0.45, j + 0.45, colors="k",
                      label="floor" if j == 0 else None)
    ax.set_xticks(range(len(sizes)))
    ax.set_xticklabels([f"N={n}" for n in sizes])
    ax.set_yscale("log")
    ax.set_ylabel("time per exchange (us), median, p10-p90")
    ax.set_title(title, fontsize=9)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return True


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) > 1 else 2
    out, paths, i = None, [], 1
    while i < len(argv):
        if argv[i] == "--out" and i + 1 < len(argv):
            out = argv[i + 1]
            i += 2
        else:
            paths.append(argv[i])
            i += 1
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_halo.py: matplotlib is not installed (pip install matplotlib); no plot "
              "written", file=sys.stderr)
        return 3
    wrote = 0
    for path in paths:
        if not os.path.isfile(path) or os.path.getsize(path) == 0:
            print(f"plot_halo.py: {path} missing or empty; skipped")
            continue
        rows = load(path)
        if not rows:
            print(f"plot_halo.py: no rows in {path}; skipped")
            continue
        stem = os.path.splitext(os.path.basename(path))[0]
        folder = out or os.path.dirname(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)
        for label, sel in groups(rows):
            first = sel[0]
            png = os.path.join(folder, f"{stem}_{label}.png" if label else f"{stem}.png")
            title = (f"{stem} {label}: {first['device']}, {first['mpi']}, {first['ranks']} ranks, "
                     f"{first['date']} (labels: x floor)")
            if plot(plt, sel, title, png):
                print(f"plot_halo.py: wrote {png}")
                wrote += 1
    return 0 if wrote else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
