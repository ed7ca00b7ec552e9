"""``python -m ctxmode`` runs the CLI."""

from ctxmode.cli import main

if __name__ == "__main__":
    main(prog_name="ctxmode")
