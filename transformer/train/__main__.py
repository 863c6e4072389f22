"""`python -m transformer.train` (and `torchrun ... -m transformer.train`): the command line of transformer/cli.py."""
from .cli import main

raise SystemExit(main())
