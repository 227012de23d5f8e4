"""``gvr-topk`` command line: ``demo``, ``check-config``, ``bench``.

Each subcommand lives in its own module and is imported only when used, so the CLI starts fast and optional
dependencies (matplotlib, tqdm) are needed only by the subcommand that uses them.
"""

import argparse
import importlib
import sys
from typing import List
from typing import Optional

#: subcommand -> (module, help). Each module provides ``add_arguments(parser)`` and ``main(args) -> int``.
SUBCOMMANDS = {
    "demo": ("gvr_topk.demo", "run a small decode demo (GPU if present, else CPU) and check it is exact"),
    "check-config": ("gvr_topk.policy.cli", "validate per-model YAML config files"),
    "bench": ("gvr_topk.bench.cli", "benchmark the op against torch.topk and the read floor (GPU)"),
}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="gvr-topk", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (module, help_text) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text)
        p.set_defaults(_module=module)
        try:
            importlib.import_module(module).add_arguments(p)
        except ModuleNotFoundError as e:
            if e.name is None or not module.startswith(e.name):
                raise
            p.set_defaults(_missing=True)
    args = parser.parse_args(argv)
    if getattr(args, "_missing", False):
        parser.error(f"subcommand '{args.command}' is not available in this installation")
    return int(importlib.import_module(args._module).main(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
