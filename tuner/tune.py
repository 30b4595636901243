"""`python -m tuner.tune`: see tuner/tune_cli.py."""
import sys

from tuner.tune_cli import main

if __name__ == "__main__":
    sys.exit(main())
