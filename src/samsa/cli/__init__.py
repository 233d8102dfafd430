"""The ``samsa`` command: argument parsing, the subcommands, their shared output helpers."""
