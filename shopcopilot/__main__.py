"""`python -m shopcopilot`: the same CLI as the `shopcopilot` command."""

from .cli import main

main(prog_name="shopcopilot")
