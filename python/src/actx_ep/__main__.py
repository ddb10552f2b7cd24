"""python -m actx_ep: the package's and the bundled library's version, the ISA the kernels run
on, the NaN rule they follow and the library's path (the one to register with ORT)."""

from __future__ import annotations

import sys

from . import EP_NAME, __version__, info


def main() -> int:
    try:
        facts = info()
    except (OSError, AttributeError) as e:  # missing or foreign library
        print(f"actx-ep {__version__}: cannot read the bundled library: {e}", file=sys.stderr)
        return 1
    print(f"actx-ep {__version__}")
    print(f"EP name:  {EP_NAME}")
    print(f"library:  {facts['library']} (version {facts['version']})")
    print(f"ISA:      {facts['isa']}")
    print(f"NaN rule: {facts['nan_rule']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
