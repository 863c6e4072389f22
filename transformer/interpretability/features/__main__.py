"""python -m transformer.interpretability.features <checkpoint> --check | --train (feature_cli.py says what)."""
from ..feature_cli import main

raise SystemExit(main())
