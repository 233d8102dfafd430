"""What consumer, streams and share groups share: request errors, member deadlines, groups kept as records.

Kafka calls these the modern groups (KIP-848's protocol, which KIP-932's share
groups and KIP-1071's streams groups reuse): members heartbeat and the
coordinator assigns.  The parts that are the same rule for every type of group
live here, so a fix reaches all of them; what differs (the request checks,
the records, the assignment) stays in each type's own package.  Nothing here
imports ``consumer``, ``streams`` or ``share``.
"""
