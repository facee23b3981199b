#!/usr/bin/env python3
"""tracecost.py DIR: what device-work tracing costs, from gpu-check's
tracecost stage (DIR/<traced|unaudited>-<round>/<op>-<kernel>.json).

Per kernel and shape: the median of the traced runs' medians and of the
unaudited runs', their ratio, and the spread of each mode's medians across
rounds (how far the same mode moves on its own). Writes DIR/summary.json
and prints a markdown table."""
import glob
import json
import os
import statistics
import sys


def main():
    root = sys.argv[1]
    runs = {}  # (kernel, shape) -> mode -> [median_s]
    for path in sorted(glob.glob(os.path.join(root, "*-*", "*.json"))):
        mode = os.path.basename(os.path.dirname(path)).split("-")[0]
        try:
            d = json.load(open(path))
        except (OSError, ValueError):
            print(f"unreadable: {path}", file=sys.stderr)
            continue
        kern = os.path.basename(path)[: -len(".json")]
        for sh in d.get("shapes", []):
            t = sh.get("timing")
            if not t or not t.get("median_s"):
                continue
            key = (kern, "x".join(str(v) for v in sh.get("shape", [])))
            runs.setdefault(key, {}).setdefault(mode, []).append(t["median_s"])
    rows = []
    for (kern, shape), m in sorted(runs.items()):
        tr, un = m.get("traced", []), m.get("unaudited", [])
        if not tr or not un:
            continue
        mt, mu = statistics.median(tr), statistics.median(un)
        spread = max((max(v) - min(v)) / min(v) for v in (tr, un))
        rows.append({"kernel": kern, "shape": shape, "traced_s": mt, "unaudited_s": mu,
                     "cost_pct": 100 * (mt / mu - 1), "same_mode_spread_pct": 100 * spread,
                     "rounds": min(len(tr), len(un))})
    json.dump(rows, open(os.path.join(root, "summary.json"), "w"), indent=1)
    print("| kernel | shape | traced | unaudited | tracing costs | same mode moved |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['kernel']} | {r['shape']} | {r['traced_s'] * 1e6:.2f} us | {r['unaudited_s'] * 1e6:.2f} us | "
              f"{r['cost_pct']:+.2f}% | {r['same_mode_spread_pct']:.2f}% ({r['rounds']} rounds) |")
    if rows:
        worst = max(rows, key=lambda r: r["cost_pct"])
        print(f"\nlargest cost: {worst['cost_pct']:+.2f}% ({worst['kernel']} at {worst['shape']}); "
              f"median over rows {statistics.median(r['cost_pct'] for r in rows):+.2f}%")


if __name__ == "__main__":
    main()
