import sys

try:
    from .cli import main
except KeyboardInterrupt:  # Ctrl-C while the generator's modules load: one line too
    print("error: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
