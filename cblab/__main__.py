"""`python -m cblab`: the `cb-lab` command, for where the script is not on the PATH (`python -m cblab app`)."""

import sys

from cblab.cli.main import main

sys.exit(main())
