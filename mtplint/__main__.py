import sys

from mtplint.cli import main

sys.exit(main())
