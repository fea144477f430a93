"""`python -m softlookup.probes <probe> --out ...`: see softlookup.probes.cli."""

from .cli import main

main()
