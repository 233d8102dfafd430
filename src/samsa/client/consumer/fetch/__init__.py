"""The fetch path: Fetch requests and sessions, decoding fetched bytes into records, ListOffsets position lookups."""
