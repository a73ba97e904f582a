"""`python -m engine`: the command line, whose code lives beside the app, in `cblab/cli/`.

The one import that goes up a layer: the engine package is where people look for the
command, the front end is where it belongs.
"""

import sys

from cblab.cli.main import main

sys.exit(main())
