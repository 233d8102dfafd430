"""Share partitions (KIP-932) on the partition leader: acquisition, acknowledgement, sessions."""
