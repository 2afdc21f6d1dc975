"""``python -m dynamo_lite``: the ``dynamo-lite`` command (see ``dynamo_lite.cli``)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
