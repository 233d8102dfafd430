"""One log segment and its files: the .log, the offset, time and transaction indexes, byte regions for the network."""
