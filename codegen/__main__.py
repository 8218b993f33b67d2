"""python -m codegen, and the krang-codegen command: codegen.cli behind a check that
the generator's dependencies are installed. `pip install .` installs only the
runtime (NumPy); without the [generate] extra, importing the command line fails
on SymPy, and the user gets one line naming the fix instead of a traceback."""
import sys

# the [generate] extra of pyproject.toml, by import name
GENERATOR_DEPENDENCIES = ("sympy", "jinja2", "tomli_w", "defusedxml", "Cython", "setuptools")


def main(argv=None) -> int:
    try:
        from .cli import main as cli_main
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in GENERATOR_DEPENDENCIES:
            raise
        print(f"error: the generator needs {exc.name}, which is not installed: "
              'pip install ".[generate]" in the source tree (or pip install "krang-kernels[generate]")',
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C while the generator's modules load: one line too
        print("error: interrupted", file=sys.stderr)
        return 130
    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
