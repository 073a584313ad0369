"""``python -m strategic_apple_tasting`` runs the ``sat`` command line."""

import sys

from .cli.main import main

sys.exit(main())
