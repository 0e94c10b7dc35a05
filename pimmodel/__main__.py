"""``python -m pimmodel`` runs the CLI."""

from pimmodel.cli import main

main()
