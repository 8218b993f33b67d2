"""python -m benchmarks: see benchmarks/run.py."""
from .run import main

raise SystemExit(main())
