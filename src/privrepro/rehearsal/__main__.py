"""``python -m privrepro.rehearsal``: ``make rehearsal`` (see :mod:`privrepro.rehearsal.rehearse`)."""

import sys

from privrepro.rehearsal.rehearse import main

sys.exit(main())
