import sys

from relgrade.cli import main

sys.exit(main())
