#!/usr/bin/env python3
"""Plots bench/validate's CSV (validation.csv): measured against predicted half round trip per
method (log-log, y = x line; irregular cases hollow) and auto's regret per case, sorted (the 10%
goal marked). Usage: plot_validation.py CSV [OUTDIR]   (OUTDIR defaults to the CSV's folder)
Writes OUTDIR/validation_predicted.png and OUTDIR/validation_regret.png."""
import csv
import os
import sys

METHODS = [("oneshot", "tab:blue"), ("staged", "tab:orange"), ("device", "tab:green")]


def number(text):
    """The CSV's float, or None for an empty field (not measured / no prediction)."""
    try:
        return float(text) if text not in ("", None) else None
    except ValueError:
        return None


def plot_predicted(plt, rows, path):
    fig, ax = plt.subplots(figsize=(7, 6.5))
    lo, hi = float("inf"), 0.0
    for method, colour in METHODS:
        for irregular, marker in (("0", "o"), ("1", "s")):
            pairs = [(number(r[f"pred_{method}_us"]), number(r[f"{method}_us"])) for r in rows
                     if r["irregular"] == irregular]
            pairs = [(p, m) for p, m in pairs if p and m]
            if not pairs:
                continue
            lo = min(lo, *(min(p, m) for p, m in pairs))
            hi = max(hi, *(max(p, m) for p, m in pairs))
            label = method + (" (irregular)" if irregular == "1" else "")
            face = colour if irregular == "0" else "none"
            ax.scatter([p for p, _ in pairs], [m for _, m in pairs], s=18, marker=marker,
                       facecolors=face, edgecolors=colour, label=label, alpha=0.8)
    if hi == 0:
        plt.close(fig)
        return False
    ax.plot([lo / 1.5, hi * 1.5], [lo / 1.5, hi * 1.5], "k-", lw=0.8, label="y = x")
    ax.plot([lo / 1.5, hi * 1.5], [lo / 1.5 * 1.25, hi * 1.5 * 1.25], "k:", lw=0.6,
            label="+/- 25%")
    ax.plot([lo / 1.5, hi * 1.5], [lo / 1.5 / 1.25, hi * 1.5 / 1.25], "k:", lw=0.6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("predicted half round trip (us), strider_predict")
    ax.set_ylabel("measured half round trip (us), median")
    source = "perf file" if any(r["pred_measured"] == "1" for r in rows) else "built-in defaults"
    ax.set_title(f"bench/validate: held-back cases, predictions from {source}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return True


def plot_regret(plt, rows, path):
    scored = sorted(((number(r["auto_regret"]), r) for r in rows
                     if number(r["auto_regret"]) is not None), key=lambda t: t[0])
    if not scored:
        return False
    fig, ax = plt.subplots(figsize=(9, 4.5))
    xs = range(len(scored))
    colours = ["tab:red" if v > 0.10 else "tab:blue" for v, _ in scored]
    ax.bar(xs, [v * 100 for v, _ in scored], color=colours, width=1.0)
    ax.axhline(10, color="k", ls="--", lw=0.8, label="goal: within 10%")
    within = sum(1 for v, _ in scored if v <= 0.10)
    ax.set_xlabel("case (sorted by regret)")
    ax.set_ylabel("auto / fastest measured - 1 (%)")
    ax.set_title(f"auto's regret: {within} of {len(scored)} cases within 10% "
                 f"({100.0 * within / len(scored):.1f}%)")
    worst = [f"{v * 100:.0f}%: #{r['case']} {r['shape']} block {r['block']} ratio {r['ratio']} "
             f"{int(r['bytes']) / 1024:.0f} KiB (auto {r['auto_send_choice']}/"
             f"{r['auto_recv_choice']}, fastest {r['fastest_method']})"
             for v, r in reversed(scored[-3:]) if v > 0.10]
    if worst:  # name the worst cases
        ax.text(0.01, 0.97, "worst:\n" + "\n".join(worst), transform=ax.transAxes, fontsize=7,
                va="top", ha="left", bbox={"facecolor": "white", "alpha": 0.8, "lw": 0})
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="center left")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return True


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) > 1 else 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_validation.py: matplotlib is not installed; no plot written")
        return 0
    with open(sys.argv[1], newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        print(f"plot_validation.py: no rows in {sys.argv[1]}; no plot written")
        return 0
    outdir = sys.argv[2] if len(sys.argv) == 3 else (os.path.dirname(sys.argv[1]) or ".")
    os.makedirs(outdir, exist_ok=True)
    for name, plot in (("validation_predicted.png", plot_predicted),
                       ("validation_regret.png", plot_regret)):
        path = os.path.join(outdir, name)
        if plot(plt, rows, path):
            print(f"plot_validation.py: wrote {path}")
        else:
            print(f"plot_validation.py: nothing to plot for {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
