"""Tiered storage: remote log manager, remote stores, remote fetch, ``__remote_log_metadata``."""
