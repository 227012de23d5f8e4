"""Exit 0 when L6 is >= 1.5% faster than defaults at 512 x 131075 (mean of two orders), not slower at 512 x 65536,
level (<= +0.5%) below, every output exact; print the ratios either way."""
import json, sys
runs = [json.load(open(p)) for p in sys.argv[1:]]
ok = True
for i, cell in enumerate(runs[0]["cells"]):
    ratios = [r["cells"][i]["us"]["L6"] / r["cells"][i]["us"]["defaults"] for r in runs]
    exact = all(all(r["cells"][i]["exact"].values()) for r in runs)
    mean = sum(ratios) / len(ratios)
    # the criterion set before the H200 run: -1.5% on the 512 x 131075 cells, not slower at 512 x 65536, level below
    limit = (0.985 if cell["n"] >= 131075 else 1.0) if cell["rows"] >= 512 else 1.005
    good = exact and mean <= limit
    ok &= good
    print(f"{cell['rows']:4d} x {cell['n']:6d} K={cell['k']:4d}: L6/defaults {' '.join(f'{x:.4f}' for x in ratios)}"
          f" mean {mean:.4f} (limit {limit}) {'ok' if good else 'NO'}")
print("ADOPT" if ok else "KEEP")
sys.exit(0 if ok else 1)
