"""`python -m zarrkit` runs the `zarrkit` command line, which lives outside the kernel
(`apps/cli`, imported as `zarrkit.cli`); this is only the program entry, imported by no module."""

import sys

if __name__ == "__main__":
    from zarrkit.cli import main

    sys.exit(main())
