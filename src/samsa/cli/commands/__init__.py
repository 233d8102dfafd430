"""One module per ``samsa`` subcommand, loaded by name from ``samsa.cli.main``.

A command too big for one module keeps its parts beside it under its name
(``cluster_status``, ``cluster_voters``, ``cluster_reassign``, ``groups_reset``).
"""
