"""The node's assembly (node, broker, controller server), with its parts in sub-packages by concern."""
