"""``python -m mna`` is the ``mna`` command."""

import sys

from mna.cli import main

sys.exit(main())
