"""`python -m namesake.cli`."""

from namesake.cli import main

main()
