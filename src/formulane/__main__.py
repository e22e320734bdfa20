"""`python -m formulane`: the same command line as the `formulane` script."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
