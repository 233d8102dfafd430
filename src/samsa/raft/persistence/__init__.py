"""The replicated log and what survives a crash: the RaftLog protocol in memory and on disk, entry and snapshot codecs, the quorum-state file."""
