"""``gvr-topk check-config FILE...``: validate config files; exit 0 when all are valid, 1 otherwise."""

import argparse
import sys

from .loader import ConfigError
from .loader import load_config
from .loader import shipped_configs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register ``check-config``'s arguments on its subparser."""
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="YAML config files or shipped names (default: every shipped config)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only problems")


def main(args: argparse.Namespace) -> int:
    """Validate each file; print one ``OK`` line per valid file and every problem of an invalid one (stderr).

    Returns
    -------
    int
        0 if every file is valid, 1 otherwise.
    """
    files = list(args.files) or [str(p) for p in shipped_configs()]
    bad = 0
    for f in files:
        try:
            cfg = load_config(f)
        except (ConfigError, FileNotFoundError) as err:
            bad += 1
            print(str(err) if isinstance(err, ConfigError) else f"{f}: {err}", file=sys.stderr)
            continue
        if not args.quiet:
            arena = cfg.arena_bytes()
            print(f"OK {f}: {cfg.model.name}, K={cfg.k}, next_n={cfg.next_n}, "
                  f"{len(cfg.indexer_layers)} indexer layers, mode={cfg.gvr_topk.mode}, "
                  f"arena={'none' if not arena else f'{arena / 2**20:.1f} MiB'}")
    return 1 if bad else 0
