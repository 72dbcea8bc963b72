#!/usr/bin/env python3
"""A 2D heat run from NumPy: a hot square in a cold plate, 1000 steps on the default device within a
4 MiB device budget (the 2048 x 2048 float32 grid takes 16 MiB, so the cost model plans pyramid
passes), then the field drawn with Matplotlib when it is installed.

    PYTHONPATH=build/release/python python3 examples/python/heat.py [--device cpu] [--png heat.png]
"""

import argparse
import sys

import numpy as np

import ziggurat


def main():
    parser = argparse.ArgumentParser(description="heat on a plate with ziggurat")
    parser.add_argument("--device", default=None, help="device selection, e.g. gpu, cpu, nvidia (default: the first GPU)")
    parser.add_argument("--size", type=int, default=2048)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--png", default="heat.png")
    args = parser.parse_args()

    u0 = np.zeros((args.size, args.size), np.float32)
    quarter = args.size // 4
    u0[quarter:-quarter, quarter:-quarter] = 1.0
    context = ziggurat.Context(device=args.device)

    def show(p):
        print(f"\rpass {p['passes_done']}/{p['passes']}, {p['nodes_per_s'] * 1e-9:.2f} Gnodes/s, "
              f"ETA {p['eta_s']:.1f} s   ", end="", file=sys.stderr, flush=True)

    u, report = ziggurat.heat(u0, args.steps, device_memory="4MiB", progress=show, context=context)
    print(file=sys.stderr)
    plan = report["plan"]
    print(f"{report['device']}: {plan['decomposition']} n = {plan['height']}, {plan['tasks']} tasks x "
          f"{plan['passes']} passes; {report['time_s']:.3f} s measured, {report['predicted_s']:.3f} s predicted")
    print(f"heat left in the plate: {u.sum() / u0.sum():.4f} of the initial; largest value {u.max():.4f}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(Matplotlib is not installed: no picture)")
        return
    plt.imshow(u, cmap="viridis")
    plt.colorbar(label="u")
    plt.title(f"{args.steps} steps, {plan['decomposition']} pyramid n = {plan['height']}")
    plt.savefig(args.png, dpi=120)
    print(f"picture: {args.png}")


if __name__ == "__main__":
    main()
